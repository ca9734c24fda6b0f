"""`ordinance why` and `ordinance why-not`: a fact's proof, or what is missing."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import click

from ..diagnostics import OrdinanceError
from ..engine import evaluate, overlay, why, why_not
from ..explain import annotator, to_dot, to_json, to_text
from ..gate import Request, is_request_side
from ..rules import check_declared, parse_facts
from ..values import escape
from .deadline import limits
from .common import (
    load_policy,
    model_options,
    now_or_clock,
    open_db,
    print_json,
)
from .query import parse_pattern

__all__ = ["commands", "why_command", "why_not_command"]


def _options(f: Callable[..., Any]) -> Callable[..., Any]:
    for option in (
        click.argument("fact"),
        click.option("--given", "-g", multiple=True, metavar="FACT",
                     help="A fact added for this question only, e.g. a request (repeatable)."),
        click.option("--json", "fmt", flag_value="json", help="Print the tree as JSON."),
        click.option("--dot", "fmt", flag_value="dot", help="Print the tree as a Graphviz DOT graph."),
        model_options,
    ):
        f = option(f)
    return f


@contextmanager
def _model(policy: str, db: str, now: int | None, given: tuple[str, ...]) -> Iterator[tuple[Any, Any, Any]]:
    """The policy, the model of the store plus `given` at `now` (as the gate
    sees a request: an overlay of the store's model), and an annotator that
    reads only the events behind the facts it shows (the store stays open)."""
    program = load_policy(policy)
    extra = parse_facts(given, "given fact")
    check_declared(program, extra)
    asked = [(rel, args) for rel, args in extra if is_request_side(rel, program.relations.get(rel))]
    if asked:  # a request as the gate sees it (its scope defaults to its target)
        overlay_facts = Request.from_facts(asked).facts()
        extra = [f for f in extra if f not in asked] + [(r, t) for r, ts in overlay_facts.items() for t in ts]
    grouped: dict[str, set[tuple[Any, ...]]] = {}
    for rel, args in extra:
        grouped.setdefault(rel, set()).add(args)
    at = now_or_clock(now)
    with open_db(db, program) as store:
        rev = store.revision()
        model = overlay(evaluate(program, store.facts(rev), now=at, limits=limits()), grouped, now=at)
        yield program, model, annotator(store, rev, {"claim_valid": model.tuples("claim_valid")})


def _target(program: Any, text: str, partial: bool) -> tuple[str, tuple[Any, ...]]:
    relation, args = parse_pattern(text.rstrip().rstrip("."))
    check_declared(program, [(relation, tuple(args))])
    if not partial and any(kind != "const" for kind, _ in args):
        raise OrdinanceError(f"`{relation}` has a variable; `why` takes a fact such as `current(\"c1\")`",
                             code="not_ground")
    return relation, tuple(value if kind == "const" else None for kind, value in args)


def _show(tree: Any, fmt: str | None, annotate: Any, program: Any) -> None:
    if fmt == "json":
        print_json(to_json(tree, annotate, program))
    elif fmt == "dot":
        click.echo(to_dot(tree, program, annotate))
    else:
        click.echo(to_text(tree, annotate=annotate, program=program))


@click.command(
    "why",
    epilog="""\b
Examples:
  ordinance why 'superseded("c1")'
  ordinance why 'forbid("a1", "stale-epoch", "job")' \\
                --given 'request("a1", "write", "job", "alice", 1).' --now 2026-08-14T23:00:00Z
  ordinance why 'current("c2")' --dot | dot -Tsvg > proof.svg
""",
)
@_options
def why_command(fact: str, given: tuple[str, ...], fmt: str | None, now: int | None, db: str, policy: str) -> None:
    """Show why FACT holds: the proof tree of rules and stored facts.

    Each rule node shows the rule and its bindings; each stored fact shows
    the revision, author and source that put it there. Exits 1 if FACT does
    not hold (then try `ordinance why-not`).
    """
    with _model(policy, db, now, given) as (program, model, annotate):
        relation, t = _target(program, fact, partial=False)
        proof = why(model, relation, t)
        if proof is None:
            click.echo(f"{escape(fact.strip().rstrip('.'))} does not hold; `ordinance why-not` says what is missing")
            raise click.exceptions.Exit(1)
        _show(proof, fmt, annotate, program)


@click.command(
    "why-not",
    short_help="Show why FACT does not hold and what would make it.",
    epilog="""\b
Examples:
  ordinance why-not 'permit("a1")' --given 'request("a1", "deploy", "prod", "bob", 1).'
  ordinance why-not 'verified("deploy-1")' --json
""",
)
@_options
def why_not_command(fact: str, given: tuple[str, ...], fmt: str | None, now: int | None, db: str, policy: str) -> None:
    """Show why FACT does not hold: for each rule that could derive it, the
    first condition that failed and the facts that would make it hold.

    FACT may leave arguments open with `_`. Exits 1 if FACT holds.
    """
    with _model(policy, db, now, given) as (program, model, annotate):
        relation, t = _target(program, fact, partial=True)
        answer = why_not(model, relation, t)
        _show(answer, fmt, annotate, program)
    if answer.holds:
        raise click.exceptions.Exit(1)


commands = (why_command, why_not_command)
