"""`ordinance rehydrate`: the one bounded read after a cold turn (seed 003)."""

from __future__ import annotations

import click

from ..project import DEFAULT_BOUND, DEFAULT_CAP, rehydrate
from .common import load_policy, model_options, now_or_clock, open_db
from .state import audience_option, cap_option

__all__ = ["command"]


@click.command(
    "rehydrate",
    epilog="""\b
Examples:
  ordinance rehydrate --now 2026-08-14T23:45:00Z
  ordinance rehydrate --bound 8192 --audience federation
""",
)
@click.option("--agent", default=None, help="The standing agent (default: the `standing_agent` fact).")
@audience_option
@click.option(
    "--bound",
    type=click.IntRange(min=1),
    default=DEFAULT_BOUND,
    show_default=True,
    metavar="BYTES",
    help="Byte bound of the whole bundle; the log keeps its newest lines.",
)
@cap_option(DEFAULT_CAP)
@model_options
def command(
    agent: str | None, audience: str | None, bound: int, cap: int, now: int | None, db: str, policy: str
) -> None:
    """Print the rehydration bundle: state, open decisions, newest log lines.

    One call, one bounded read: the state file (as `ordinance state`, under
    --cap), the questions no settlement answers yet, then as many of the
    newest log events as fit in --bound, newest last, `===`-delimited.
    Trust a compaction summary for flavor, this bundle for facts.
    """
    program = load_policy(policy)
    with open_db(db, program) as store:
        bundle = rehydrate(store, program, now_or_clock(now), audience, bound, cap=cap, agent=agent)
    click.echo(bundle.text, nl=False)
