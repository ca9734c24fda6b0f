"""`ordinance test`: run the `test` blocks of policy files, pytest-like.

A block passes when every `expect` holds (every `expect not` does not) in
the model of the policy over the block's facts at the block's `now`, and no
`.invariant` of the policy is broken there. A failed expectation is shown
with its explanation: why-not for a missing fact, why for an unwanted one.
"""

from __future__ import annotations

from typing import Any

import click

from ..engine import to_text, why, why_not
from ..testing.blocks import BlockResult, run_blocks
from .common import DEFAULT_POLICY, POLICY_ENV, Instant, path_option

__all__ = ["command", "failures"]


def _show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _where(result: BlockResult) -> str:
    return f"{result.block.span.file or '<input>'}:{result.block.span.line}"


def failures(result: BlockResult) -> list[tuple[str, str]]:
    """(what failed, explanation) for each failure of a block."""
    if result.error is not None:
        return [(f"error[{result.error.code}]: {str(result.error).splitlines()[0]}", "")]
    out: list[tuple[str, str]] = []
    program = result.model.prepared.program if result.model is not None else None
    for f in result.failed:
        shown = f"expect {'not ' if f.expect.negated else ''}{f.relation}({', '.join(map(_show, f.pattern))})"
        if f.expect.negated:
            proof = why(result.model, f.relation, f.matches[0])
            out.append((f"{shown}: it holds", to_text(proof, program=program) if proof else ""))
        else:
            out.append((f"{shown}: it does not hold", to_text(why_not(result.model, f.relation, f.pattern), program=program)))
    for b in result.broken:
        out.append((f"invariant `{b.target.name}` is broken", to_text(b.proof, program=program) if b.proof else ""))
    return out


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
@path_option("--policy", POLICY_ENV, DEFAULT_POLICY, "FILE", "The policy file, when no FILE is given.")
def command(files: tuple[str, ...], include_all: bool, now: int, policy: str) -> None:
    """Run the `test "name" { facts... expect ... }` blocks of policy files.

    Prints one line per block, then each failure with its explanation,
    then `N passed, M failed`. Exits 1 if any block fails.
    """
    results: list[BlockResult] = []
    for path in files or (policy,):
        results.extend(run_blocks(path, include_all, now))
    for r in results:
        click.echo(f"{'PASS' if r.passed else 'FAIL'}  {_where(r)}  {r.block.name}")
    failed = [r for r in results if not r.passed]
    for r in failed:
        click.echo(f"\n___ {r.block.name} ___ ({_where(r)})")
        for what, explanation in failures(r):
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
