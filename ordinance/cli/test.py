"""`ordinance test`: run the `test` blocks of policy files, pytest-like.

A block passes when every `expect` holds (every `expect not` does not) in
the model of the policy over the block's facts at the block's `now`, and no
`.invariant` of the policy is broken there. A failed expectation is shown
with its explanation: why-not for a missing fact, why for an unwanted one.
"""

from __future__ import annotations


import click

from ..testing.blocks import BlockResult, run_blocks
from ..testing.report import failure_lines, where
from ..values import escape
from .common import DEFAULT_POLICY, POLICY_ENV, Instant, path_option

__all__ = ["command"]


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
@click.option(
    "--now",
    type=Instant(),
    default=0,
    help="Time for blocks without a `now` line (default 1970-01-01T00:00:00Z, so runs repeat).",
)
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
        click.echo(f"{'PASS' if r.passed else 'FAIL'}  {where(r)}  {escape(r.block.name)}")
    failed = [r for r in results if not r.passed]
    for r in failed:
        click.echo(f"\n___ {escape(r.block.name)} ___ ({where(r)})")
        for line in failure_lines(r):
            click.echo(line)
    passed = len(results) - len(failed)
    summary = f"{passed} passed, {len(failed)} failed"
    if not results:
        summary = "no test blocks found"
    click.echo(("\n" if failed else "") + summary)
    if failed:
        raise click.exceptions.Exit(1)
