"""`ordinance query`: the answers to one pattern, as a table or JSON."""

from __future__ import annotations

from typing import Any

import click
from ..diagnostics import OrdinanceError
from ..engine import evaluate
from ..rules import check_declared
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
from ..values import json_value, show_value

__all__ = ["command", "parse_pattern", "answers"]


def parse_pattern(text: str) -> tuple[str, list[tuple[str, Any]]]:
    """`status("svc", A, S)` as (relation, [(kind, value)]) where kind is
    `const`, `var` or `any`."""
    from ..rules import parse
    from ..rules.ast import Const, Rule, Var, Wildcard

    program = parse(text.strip(), file="<query>")
    if len(program.items) != 1 or not isinstance(program.items[0], Rule) or program.items[0].body:
        raise OrdinanceError("a query is one atom such as `current(C)` or `status(\"svc\", A, S)`",
                             code="bad_query")
    head = program.items[0].head
    args: list[tuple[str, Any]] = []
    for term in head.args:
        if isinstance(term, Const):
            args.append(("const", term.value))
        elif isinstance(term, Var):
            args.append(("var", term.name))
        elif isinstance(term, Wildcard):
            args.append(("any", None))
        else:
            raise OrdinanceError("query arguments are constants, variables or `_`", code="bad_query")
    return head.relation, args


def answers(model: Any, relation: str, args: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """One binding (variable -> value) per matching tuple, sorted."""
    pattern = tuple(v if k == "const" else None for k, v in args)
    found: set[tuple[tuple[str, Any], ...]] = set()
    for t in model.query(relation, pattern):
        binding: dict[str, Any] = {}
        if all(binding.setdefault(v, x) == x for (k, v), x in zip(args, t) if k == "var"):
            found.add(tuple(binding.items()))
    return [dict(b) for b in sorted(found, key=lambda b: [(type(v).__name__, v) for _, v in b])]


@click.command(
    "query",
    epilog="""\b
Examples:
  ordinance query 'current(C)'
  ordinance query 'status("svc", A, S)' --now 2026-08-14T23:00:00Z
  ordinance query 'forbid(A, Code, D)' --json
""",
)
@click.argument("pattern")
@json_option
@model_options
def command(pattern: str, as_json: bool, now: int | None, db: str, policy: str) -> None:
    """Answer a pattern over the store's facts and the policy's rules.

    PATTERN is one atom; its variables (capitalised names) become the
    columns of the answer, `_` matches anything. A pattern without
    variables answers yes or no. Exits 1 when there is no answer.
    """
    program = load_policy(policy)
    relation, args = parse_pattern(pattern)
    check_declared(program, [(relation, tuple(args))])
    decl = program.relations[relation]
    at = now_or_clock(now)
    with open_db(db, program) as store:
        model = evaluate(program, store.facts(), now=at, limits=limits())
    rows = answers(model, relation, args)
    types = {v: (decl.types[i] if decl.types else None) for i, (k, v) in enumerate(args) if k == "var"}
    columns = list(types)
    if as_json:
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
