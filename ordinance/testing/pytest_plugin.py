"""pytest plugin: the `test` blocks and `.invariant`s of policy files as test items.

Collects only the `.rules` files under the paths of the ini option
`ordinance_paths` (files or directories, relative to the ini file) and
`.rules` files named on the command line; a bare `pytest` run adds the
configured paths to its `testpaths`. Items are named
`policy.rules::test "an older epoch is refused"` and
`policy.rules::invariant "superseded is never current"`.

A test block passes when every `expect` holds (`expect not`: does not) in
the model of the policy over the block's facts at its `now` (default
1970-01-01, like `ordinance test`) and no invariant is broken there. An
invariant item fuzzes the invariant with `ordinance_fuzz_examples`
histories (default 50) and `ordinance_fuzz_seed` (default 0), so runs are
deterministic. Stdlib modules (ordinance/rules/stdlib/*.rules) are fragments
of `continuity` and run as part of it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Iterator

import pytest

from ..diagnostics import OrdinanceError
from ..rules.ast import TestBlock
from ..rules.invariants import Harness
from ..rules.loader import STDLIB_PREFIX
from ..values import escape, format_value
from .blocks import run_block
from .report import failure_lines

__all__ = ["RulesFile", "BlockItem", "InvariantItem"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        "ordinance_paths",
        "policy files and directories whose test blocks and invariants pytest collects",
        type="paths",
        default=[],
    )
    parser.addini("ordinance_fuzz_examples", "histories generated per invariant item", default="50")
    parser.addini("ordinance_fuzz_seed", "random seed of the invariant items", default="0")


def pytest_configure(config: pytest.Config) -> None:
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        config.args = list(config.args) + [str(p) for p in _configured(config) if p.exists()]


def _configured(config: pytest.Config) -> list[Path]:
    return [Path(p) for p in config.getini("ordinance_paths")]


def _explicit(config: pytest.Config) -> set[str]:
    return {os.path.realpath(a.split("::")[0]) for a in config.invocation_params.args if not a.startswith("-")}


def _wanted(config: pytest.Config, path: Path) -> bool:
    real = os.path.realpath(path)
    if real in _explicit(config):
        return True
    for root in _configured(config):
        top = os.path.realpath(root)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            return True
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> RulesFile | None:
    if file_path.suffix == ".rules" and _wanted(parent.config, file_path):
        return RulesFile.from_parent(parent, path=file_path)  # type: ignore[no-any-return]
    return None


# ---------------------------------------------------------------- collection


_STDLIB = Path(str(files("ordinance.rules") / "stdlib"))


@lru_cache(maxsize=1)
def _stdlib() -> Harness:
    return Harness.from_text('.include "continuity"\n.include "calendar"\n')  # calendar: not in continuity


class RulesFile(pytest.File):
    """One policy file: compiled once, an item per test block and invariant
    written in it."""

    harness: Harness

    def _origin(self) -> tuple[Harness, Any]:
        if os.path.realpath(self.path.parent) == os.path.realpath(_STDLIB):
            name = STDLIB_PREFIX + self.path.name
            return _stdlib(), lambda file: file == name
        real = os.path.realpath(self.path)
        return Harness.from_path(self.path), lambda file: file is not None and os.path.realpath(file) == real

    def collect(self) -> Iterator[pytest.Item]:
        try:
            self.harness, mine = self._origin()
        except OrdinanceError as err:
            lines = [str(d) for d in err.diagnostics] or [str(err)]
            raise self.CollectError(f"{self.path.name} does not compile:\n" + "\n".join(lines)) from None
        for block in self.harness.program.tests:
            if mine(block.span.file):
                yield BlockItem.from_parent(self, name=f"test {format_value(block.name)}", block=block)
        for target in self.harness.targets:
            if mine(target.invariant.span.file):
                yield InvariantItem.from_parent(self, name=f"invariant {format_value(target.name)}", target=target)


class Failed(Exception):
    """A failed item; the message is the whole report."""


class _Item(pytest.Item):
    line = 0

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, Failed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, max(self.line - 1, 0), self.name


class BlockItem(_Item):
    def __init__(self, *, block: TestBlock, **kw: Any) -> None:
        super().__init__(**kw)
        self.block = block
        self.line = block.span.line

    def runtest(self) -> None:
        assert isinstance(self.parent, RulesFile)
        failures = _failures(self.parent.harness, self.block)
        if failures:
            where = escape(f"{self.block.span.file}:{self.block.span.line}")
            raise Failed(f"test {format_value(self.block.name)} failed ({where})\n" + "\n".join(failures))


class InvariantItem(_Item):
    def __init__(self, *, target: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.target = target
        self.line = target.invariant.span.line

    def runtest(self) -> None:
        assert isinstance(self.parent, RulesFile)
        examples = int(self.config.getini("ordinance_fuzz_examples"))
        seed = int(self.config.getini("ordinance_fuzz_seed"))
        from ..fuzz import report, search  # hypothesis only when an invariant is fuzzed

        found = search(self.parent.harness, self.target, examples=examples, seed=seed)
        if found is not None:
            raise Failed(report(self.parent.harness, found.history, found.breach))


# ---------------------------------------------------------------- running a block


def _failures(harness: Harness, block: TestBlock) -> list[str]:
    """The failures of one test block, each a few lines (empty: it passes)."""
    result = run_block(harness, block)
    if result.error is not None:
        raise result.error
    return failure_lines(result)
