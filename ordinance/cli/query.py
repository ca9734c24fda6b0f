"""`ordinance query`: the answers to one pattern, as a table or JSON."""

from __future__ import annotations

import click

from ..engine import answers, parse_pattern
from ..values import json_value, show_value
from ..project import Projector
from .deadline import limits
from .common import (
    json_option,
    load_policy,
    model_options,
    new_table,
    now_or_clock,
    open_db,
    print_json,
    print_table,
)
from .state import audience_option

__all__ = ["command"]


@click.command(
    "query",
    epilog="""\b
Examples:
  ordinance query 'current(C)'
  ordinance query 'status("svc", A, S)' --now 2026-08-14T23:00:00Z
  ordinance query 'forbid(A, Code, D)' --json
  ordinance query 'current(C)' --audience public
""",
)
@click.argument("pattern")
@json_option
@audience_option
@model_options
def command(pattern: str, as_json: bool, audience: str | None, now: int | None, db: str, policy: str) -> None:
    """Answer a pattern over the store's facts and the policy's rules.

    PATTERN is one atom; its variables (capitalised names) become the
    columns of the answer, `_` matches anything. A pattern without
    variables answers yes or no. A pattern with a constant is evaluated
    on demand: only what its bound arguments need, unless the gate's
    snapshot of the whole model matches the store (written by `check`,
    `state` and `serve`): then it is read from that. Exits 1 when there is
    no answer. With --audience, only the facts of the layers that audience
    may see are evaluated.
    """
    program = load_policy(policy)
    asked = parse_pattern(pattern, program)
    declared = program.relation_types(asked.relation)
    at = now_or_clock(now)
    with open_db(db, program) as store:
        # every layer: the gate's warm model when a snapshot of it matches the store, else on demand
        found = Projector.asking(program, store, limits()).model_for(
            at, audience=audience, asked=asked, proofs=False, limits=limits()
        )
    model = found.model
    rows = answers(model, asked)
    types = {v: (declared[i] if declared else None) for i, (k, v) in enumerate(asked.args) if k == "var"}
    columns = list(types)
    if as_json and not columns:  # a yes-or-no question: answered as the server's and MCP's `holds`
        print_json({"holds": bool(rows)})
    elif as_json:
        print_json([{c: json_value(row[c], types[c]) for c in row} for row in rows])
    elif not columns:
        click.echo("yes" if rows else "no")
    elif not rows:
        click.echo("no answers")
    else:
        table = new_table(*columns)
        for row in rows:
            table.add_row(*(show_value(row[c], types[c]) for c in columns))
        print_table(table)
        click.echo(f"{len(rows)} answer{'s' if len(rows) != 1 else ''}")
    if not rows:
        raise click.exceptions.Exit(1)
