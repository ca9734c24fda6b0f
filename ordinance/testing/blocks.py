"""Run the `test` blocks of policy files (for `ordinance test` and the pytest plugin).

A block passes when every `expect` holds (every `expect not` does not) in
the model of the policy over the block's facts at the block's `now` (or
`default_now`), and no `.invariant` of the policy is broken there. The
result is data; callers render it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import OrdinanceError
from ..engine import ProofNode, evaluate, why
from ..gate.request import with_defaults
from ..rules.invariants import Harness, InvariantRule
from ..rules.ast import Atom, Branch, Const, Expect, Record, TestBlock
from ..rules.functors import evaluate as value_of
from ..rules.functors import match

__all__ = ["FailedExpect", "Broken", "BlockResult", "ground", "run_block", "run_blocks"]


@dataclass(frozen=True, slots=True)
class FailedExpect:
    """An expectation that failed; `pattern` has None for `_`, `matches` are
    the model's tuples that fit it (non-empty for a failed `expect not`)."""

    expect: Expect
    relation: str
    pattern: tuple[Any, ...]
    matches: list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Broken:
    """An invariant broken in the block's model: its first breaking binding."""

    target: InvariantRule
    binding: tuple[Any, ...]
    proof: ProofNode | None


@dataclass
class BlockResult:
    block: TestBlock
    model: Any = None  # None when evaluation failed
    failed: list[FailedExpect] = field(default_factory=list)
    broken: list[Broken] = field(default_factory=list)
    error: OrdinanceError | None = None

    @property
    def passed(self) -> bool:
        return not (self.failed or self.broken or self.error)


def ground(atom: Atom) -> tuple[Any, ...]:
    """The atom's arguments, None for anything not a constant (a record or
    constructor is one when it has no `_` inside)."""
    return tuple(a.value if isinstance(a, Const) else _structured(a) for a in atom.args)


def _structured(term: Any) -> Any:
    try:
        return value_of(term, {}, 0) if isinstance(term, (Record, Branch)) else None
    except KeyError:  # `_` inside: matched by `_fits`
        return None


def _fits(atom: Atom, t: tuple[Any, ...]) -> bool:
    """`t` matches the records and constructors with `_` inside of `atom`."""
    return all(match(a, v, {}, 0) is not None for a, v in zip(atom.args, t) if isinstance(a, (Record, Branch)))


def run_block(harness: Harness, block: TestBlock, default_now: int = 0) -> BlockResult:
    """Evaluate one block; an evaluation error is kept in the result."""
    result = BlockResult(block)
    facts: dict[str, set[tuple[Any, ...]]] = {}
    for rule in block.facts:
        facts.setdefault(rule.head.relation, set()).add(ground(rule.head))
    declared = harness.program.relations  # request_scope and request_lease, as the gate fills them
    facts = {rel: ts for rel, ts in with_defaults(facts).items() if rel in facts or rel in declared}
    try:
        model = result.model = evaluate(harness.program, facts, now=default_now if block.now is None else block.now)
        for expect in block.expects:
            rel, pattern = expect.atom.relation, ground(expect.atom)
            matches = [t for t in model.query(rel, pattern) if _fits(expect.atom, t)]
            if bool(matches) == expect.negated:
                result.failed.append(FailedExpect(expect, rel, pattern, matches))
        for target in harness.targets:
            found = sorted(model.tuples(target.relation), key=repr)
            if found:
                result.broken.append(Broken(target, found[0], why(model, target.relation, found[0])))
    except OrdinanceError as exc:
        result.error = exc
    return result


def run_blocks(path: str, include_all: bool = False, default_now: int = 0) -> list[BlockResult]:
    """Run the test blocks written in `path` (with `include_all`, also those
    of every file it includes, the stdlib's too)."""
    harness = Harness.from_path(path)
    blocks = [b for b in harness.program.tests if include_all or b.span.file == path]
    return [run_block(harness, b, default_now) for b in blocks]
