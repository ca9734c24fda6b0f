"""`ordinance why` and `ordinance why-not`: a fact's proof, or what is missing."""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator

import click

from ..engine import Model, ProofNode, WhyNot, parse_pattern, why, why_not
from ..explain import (
    Annotate,
    Rebuilt,
    annotator,
    rebuild,
    rebuilt_dot,
    rebuilt_json,
    rebuilt_text,
    to_dot,
    to_json,
    to_text,
    unblock,
)
from ..gate import Gate, Request, is_request_side
from ..project import Projector
from ..rules.checked import CheckedProgram
from ..rules import check_declared, parse_facts
from ..values import Facts, escape
from .deadline import limits
from .common import (
    load_policy,
    model_options,
    now_or_clock,
    open_db,
    print_json,
)
from .state import audience_option

__all__ = ["commands", "show_decision", "why_command", "why_not_command"]


def _options(f: Callable[..., Any], fact_required: bool = True) -> Callable[..., Any]:
    for option in (
        click.argument("fact", required=fact_required),
        click.option(
            "--given",
            "-g",
            multiple=True,
            metavar="FACT",
            help="A fact added for this question only, e.g. a request (repeatable).",
        ),
        click.option("--json", "fmt", flag_value="json", help="Print the tree as JSON."),
        click.option("--dot", "fmt", flag_value="dot", help="Print the tree as a Graphviz DOT graph."),
        audience_option,
        model_options,
    ):
        f = option(f)
    return f


@contextmanager
def _model(
    policy: str, db: str, now: int | None, given: tuple[str, ...], fact: str, partial: bool, audience: str | None = None
) -> Iterator[tuple[CheckedProgram, str, tuple[Any, ...], Model, Annotate]]:
    """The policy, the asked fact, the model it is asked of, and an annotator
    over the same events, while the store is open (the annotator reads only
    the events behind the leaves it is asked about). Given request-side
    facts, the model is the gate's: its warm model (or snapshot) with the
    request added as the gate adds one (its scope defaults to its target)
    and the other given facts as if stored, so the proof is the one the
    decision shows. Otherwise it is also the gate's model when its snapshot
    matches the store; else what `fact` needs of the store (the layers
    `audience` may see) plus `given` at `now`, evaluated on demand: the
    choice is `Projector.model_for`'s."""
    program = load_policy(policy)
    pattern = parse_pattern(fact, program, ground=not partial)
    extra = parse_facts(given, "given fact")
    check_declared(program, extra)
    asked = [(rel, args) for rel, args in extra if is_request_side(rel, program.relations.get(rel))]
    request = Request.from_facts(asked) if asked else None
    added: Facts = {}
    for rel, args in extra:
        if (rel, args) not in asked:
            added.setdefault(rel, set()).add(args)
    at = now_or_clock(now)
    with open_db(db, program) as store:
        found = Projector.asking(program, store, limits()).model_for(
            at, request=request, given=added, audience=audience, asked=pattern, why_not=partial, limits=limits()
        )
        yield program, pattern.relation, pattern.values, found.model, found.annotate


def _show(tree: ProofNode | WhyNot, fmt: str | None, annotate: Annotate, program: CheckedProgram) -> None:
    if fmt == "json":
        print_json(to_json(tree, annotate, program))
    elif fmt == "dot":
        click.echo(to_dot(tree, program, annotate))
    else:
        click.echo(to_text(tree, annotate=annotate, program=program))
        changes = unblock(tree, program) if isinstance(tree, WhyNot) and not tree.holds else ()
        if changes:
            click.echo("to make it hold, one of:")
            click.echo("\n".join(f"  - {c.text}" for c in changes))


def show_decision(rebuilt: Rebuilt, fmt: str | None, store: Any, program: CheckedProgram) -> None:
    """A rebuilt logged decision in text, JSON or DOT (`why --decision`, `log --explain`)."""
    annotate = annotator(store, rebuilt.again.revision)
    if fmt == "json":
        print_json(rebuilt_json(rebuilt, annotate, program))
    elif fmt == "dot":
        click.echo(rebuilt_dot(rebuilt, annotate, program))
    else:
        click.echo(rebuilt_text(rebuilt, annotate, program))


def _why_decision(seq: int, fmt: str | None, db: str, policy: str) -> None:
    program = load_policy(policy)
    with open_db(db, program) as store:
        show_decision(rebuild(Gate(program, store, limits=limits(), eager=False), seq), fmt, store, program)


@click.command(
    "why",
    epilog="""\b
Examples:
  ordinance why 'superseded("c1")'
  ordinance why --decision 42             the proof of the decision logged at seq 42
  ordinance why 'forbid("a1", "stale-epoch", "job")' \\
                --given 'request("a1", "write", "job", "alice", 1).' --now 2026-08-14T23:00:00Z
  ordinance why 'current("c2")' --dot | dot -Tsvg > proof.svg
  ordinance why 'current("c2")' --audience public
""",
)
@click.option(
    "--decision",
    type=click.IntRange(min=0),
    default=None,
    metavar="SEQ",
    help="Instead of FACT: the proof of the decision logged at SEQ (see `ordinance log`).",
)
@partial(_options, fact_required=False)
def why_command(
    decision: int | None,
    fact: str | None,
    given: tuple[str, ...],
    fmt: str | None,
    audience: str | None,
    now: int | None,
    db: str,
    policy: str,
) -> None:
    """Show why FACT holds: the proof tree of rules and stored facts.

    Each rule node shows the rule and its bindings; each stored fact shows
    the revision, author and source that put it there. Exits 1 if FACT does
    not hold (then try `ordinance why-not`).

    With --decision SEQ, the logged decision's proof, rebuilt from its
    request at its revision and `now` under the policy (which says so, and
    shows the logged answer too, if the policy changed since).
    """
    if decision is not None:
        if fact is not None or given or audience is not None or now is not None:
            raise click.UsageError("--decision takes no FACT, --given, --audience or --now")
        _why_decision(decision, fmt, db, policy)
        return
    if fact is None:
        raise click.UsageError("give a FACT, or --decision SEQ")
    with _model(policy, db, now, given, fact, False, audience) as (program, relation, t, model, annotate):
        proof = why(model, relation, t)
        if proof is not None:
            _show(proof, fmt, annotate, program)
    if proof is None:
        click.echo(f"{escape(fact.strip().rstrip('.'))} does not hold; `ordinance why-not` says what is missing")
        raise click.exceptions.Exit(1)


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
def why_not_command(
    fact: str, given: tuple[str, ...], fmt: str | None, audience: str | None, now: int | None, db: str, policy: str
) -> None:
    """Show why FACT does not hold: for each rule that could derive it, the
    first condition that failed and the facts that would make it hold.

    FACT may leave arguments open with `_`. Exits 1 if FACT holds.
    """
    with _model(policy, db, now, given, fact, True, audience) as (program, relation, t, model, annotate):
        answer = why_not(model, relation, t)
        _show(answer, fmt, annotate, program)
    if answer.holds:
        raise click.exceptions.Exit(1)


commands = (why_command, why_not_command)
