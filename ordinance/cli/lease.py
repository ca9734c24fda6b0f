"""`ordinance lease take|release`: a lease through the gated action, as the local owner."""

from __future__ import annotations

import click

from ..values import format_instant
from .common import Instant, load_policy, model_options, now_or_clock, open_db

__all__ = ["command"]


@click.group(
    "lease",
    short_help="Take or release a lease of a work, decided by the policy.",
    epilog="""\b
Examples:
  ordinance lease take job-7 --agent alice --epoch 1 --until 2026-12-01T13:00:00Z
  ordinance lease release job-7 --agent alice
""",
)
def command() -> None:
    """Take or release a lease of a work. A lease is authority: no one
    asserts it; it is taken through the gate, which refuses it while another
    agent's lease is live or without a current grant holding the work, and
    written with compare-and-set (two takes racing get one lease). The
    decision is logged like any other."""


@command.command("take")
@click.argument("work")
@click.option("--agent", required=True, help="The agent the lease is for.")
@click.option("--epoch", required=True, type=int, help="The epoch of the grant it is taken under.")
@click.option("--until", required=True, type=Instant(), help="When the lease expires (ISO-8601).")
@click.option("--scope", default=None, help="Narrow the authority to this scope.")
@model_options
def take_command(
    work: str, agent: str, epoch: int, until: int, scope: str | None, now: int | None, db: str, policy: str
) -> None:
    """Take the lease of WORK for an agent; exit 1 if the policy refuses it."""
    from ..gate import Gate
    from ..gate.lease import take

    program = load_policy(policy)
    with open_db(db, program, create=True) as store:
        leased = take(Gate(program, store, eager=False), agent, work, epoch, until, now_or_clock(now))
    if leased.taken:
        click.echo(
            f"took the lease of `{work}` for `{agent}` at epoch {leased.epoch} until {format_instant(until)} "
            f"(revision {leased.revision})"
        )
        return
    codes = ", ".join(leased.decision.codes) or "not taken"
    click.echo(f"refused the lease of `{work}` for `{agent}`: {codes}")
    raise click.exceptions.Exit(1)


@command.command("release")
@click.argument("work")
@click.option("--agent", required=True, help="The agent whose lease ends.")
@model_options
def release_command(work: str, agent: str, now: int | None, db: str, policy: str) -> None:
    """End an agent's lease of WORK now (its epoch stays spent)."""
    from ..gate import Gate
    from ..gate.lease import release

    program = load_policy(policy)
    with open_db(db, program, create=True) as store:
        revision = release(Gate(program, store, eager=False), agent, work, now_or_clock(now))
    click.echo(f"released the lease of `{work}` for `{agent}` (revision {revision})")
