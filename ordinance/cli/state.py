"""`ordinance state`: the standing agent's state file (seed 003)."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..engine import Limits
from ..gate import Gate
from ..project import DEFAULT_CAP, render_state, write_atomically
from .common import json_option, load_policy, model_options, now_or_clock, open_db, print_json

__all__ = ["command", "audience_option", "cap_option"]


def audience_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--audience",
        default=None,
        metavar="AUDIENCE",
        help="Ask as this audience (e.g. public): only the facts of the layers it may see are "
        "evaluated. Default: every layer.",
    )(f)


def cap_option(default: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--cap",
        type=click.IntRange(min=1),
        default=default,
        show_default=True,
        metavar="BYTES",
        help="Hard byte cap; lines are kept by priority, never cut.",
    )


@click.command(
    "state",
    epilog="""\b
Examples:
  ordinance state --now 2026-08-14T23:30:00Z
  ordinance state --audience public --cap 2048
  ordinance state --out prime-state.md           # written atomically
""",
)
@click.option("--agent", default=None, help="The standing agent (default: the `standing_agent` fact).")
@audience_option
@cap_option(DEFAULT_CAP)
@click.option("--out", "out", default=None, metavar="FILE", help="Write the file here (temp file + rename).")
@json_option
@model_options
def command(
    agent: str | None,
    audience: str | None,
    cap: int,
    out: str | None,
    as_json: bool,
    now: int | None,
    db: str,
    policy: str,
) -> None:
    """Render the standing agent's state file: what is true right now.

    Sections Open, Delegates, Armed, Claims and Settled, derived by the
    stdlib `state` rules from leases, receipts, claims, observations and
    settled decisions. Every line carries a provenance stamp read from its
    proof ([verified OBSERVER HH:MM], [asserted AUTHOR HH:MM], [self,
    unverified], [corrected HH:MM]) and the events behind it (r12 r15).
    Under the byte cap, lines are kept by section priority (Claims,
    Settled, Armed, Delegates, Open) and the rest are counted. The same
    store revision, policy, --now and --audience give the same bytes.
    """
    program = load_policy(policy)
    with open_db(db, program) as store:
        if audience is not None:  # the audience's own facts and model
            state = render_state(store, program, now_or_clock(now), audience, cap, agent=agent)
        else:  # every layer: the gate's model, from its snapshot when that matches (see gate/snapshot.py)
            gate = Gate(program, store, limits=Limits(), snapshot=True, eager=False)
            state = render_state(gate, program, now_or_clock(now), audience, cap, agent=agent)
            gate.warm.save_if_due()  # the next state or check starts from this model
    if as_json:
        print_json(state.to_json())
    elif out is not None:
        write_atomically(out, state.text)
        click.echo(f"wrote {len(state.text.encode())} bytes, {len(state.lines)} lines, to {out}")
    else:
        click.echo(state.text, nl=False)
