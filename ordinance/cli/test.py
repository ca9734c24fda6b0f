"""`ordinance test`: run the `test` blocks of policy files, pytest-like.

A block passes when every `expect` holds (every `expect not` does not) in
the model of the policy over the block's facts at the block's `now`, and no
`.invariant` of the policy is broken there. A failed expectation is shown
with its explanation: why-not for a missing fact, why for an unwanted one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from ..diagnostics import OrdinanceError
from ..engine import evaluate, to_text, why, why_not
from ..rules.ast import Atom, Const, TestBlock
from ..scenario import BROKEN, broken_invariants, compile_policy
from .common import Instant, POLICY_ENV, DEFAULT_POLICY

__all__ = ["command", "BlockResult", "run_blocks"]


@dataclass
class BlockResult:
    name: str
    file: str
    line: int
    failures: list[tuple[str, str]] = field(default_factory=list)  # (what failed, explanation)

    @property
    def passed(self) -> bool:
        return not self.failures


def _ground(atom: Atom) -> tuple[Any, ...]:
    return tuple(a.value if isinstance(a, Const) else None for a in atom.args)


def _run(program: Any, block: TestBlock, default_now: int) -> BlockResult:
    result = BlockResult(block.name, block.span.file or "<input>", block.span.line)
    facts: dict[str, set[tuple[Any, ...]]] = {}
    for rule in block.facts:
        facts.setdefault(rule.head.relation, set()).add(_ground(rule.head))
    try:
        model = evaluate(program, facts, now=default_now if block.now is None else block.now)
        for expect in block.expects:
            rel, t = expect.atom.relation, _ground(expect.atom)
            shown = f"expect {'not ' if expect.negated else ''}{rel}({', '.join(map(_show, t))})"
            if model.contains(rel, t) == expect.negated:
                if expect.negated:
                    proof = why(model, rel, t)
                    result.failures.append((f"{shown}: it holds", to_text(proof) if proof else ""))
                else:
                    result.failures.append((f"{shown}: it does not hold", to_text(why_not(model, rel, t))))
        for name in broken_invariants(model):
            proof = why(model, BROKEN, (name,))
            result.failures.append((f"invariant `{name}` is broken", to_text(proof) if proof else ""))
    except OrdinanceError as exc:
        result.failures.append((f"error[{exc.code}]: {str(exc).splitlines()[0]}", ""))
    return result


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def run_blocks(path: str, include_all: bool = False, default_now: int = 0) -> list[BlockResult]:
    """Run the test blocks written in `path` (with `include_all`, also those
    of every file it includes, the stdlib's too)."""
    from ..rules.loader import decode

    text = decode(Path(path).read_bytes(), path)
    program = compile_policy(text, file=path)
    blocks = [b for b in program.tests if include_all or b.span.file == path]
    return [_run(program, b, default_now) for b in blocks]


@click.command(
    "test",
    short_help="Run the test blocks of policy files.",
    epilog="""\b
Examples:
  ordinance test                      the blocks in ./policy.rules
  ordinance test policy.rules more.rules
  ordinance test --all                the included stdlib's blocks too
""",
)
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("--all", "include_all", is_flag=True, help="Also run the blocks of included files (stdlib too).")
@click.option("--now", type=Instant(), default=0,
              help="Time for blocks without a `now` line (default 1970-01-01T00:00:00Z, so runs repeat).")
@click.option("--policy", envvar=POLICY_ENV, default=DEFAULT_POLICY, show_default=True, show_envvar=True,
              metavar="FILE", help="The policy file, when no FILE is given.")
def command(files: tuple[str, ...], include_all: bool, now: int, policy: str) -> None:
    """Run the `test "name" { facts... expect ... }` blocks of policy files.

    Prints one line per block, then each failure with its explanation,
    then `N passed, M failed`. Exits 1 if any block fails.
    """
    results: list[BlockResult] = []
    for path in files or (policy,):
        results.extend(run_blocks(path, include_all, now))
    for r in results:
        click.echo(f"{'PASS' if r.passed else 'FAIL'}  {r.file}:{r.line}  {r.name}")
    failed = [r for r in results if not r.passed]
    for r in failed:
        click.echo(f"\n___ {r.name} ___ ({r.file}:{r.line})")
        for what, explanation in r.failures:
            click.echo(f"  {what}")
            for line in explanation.splitlines():
                click.echo(f"      {line}")
    passed = len(results) - len(failed)
    summary = f"{passed} passed, {len(failed)} failed"
    if not results:
        summary = "no test blocks found"
    click.echo(("\n" if failed else "") + summary)
    if failed:
        raise click.exceptions.Exit(1)
