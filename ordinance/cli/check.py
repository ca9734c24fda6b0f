"""`ordinance check`: ask the gate about one request, log the decision."""

from __future__ import annotations

import click

from ..explain import decision_json, explain_text, model_annotator
from ..gate import Gate, Request
from ..rules import check_declared, parse_facts
from .deadline import limits
from .common import (
    json_option,
    load_policy,
    model_options,
    now_or_clock,
    open_db,
    print_json,
)

__all__ = ["command"]


@click.command(
    "check",
    epilog="""\b
Examples:
  ordinance check 'request("a1", "deploy", "prod", "alice", 1).'
  ordinance check 'request("a1", "write", "job", "alice", 1).' \\
                  'request_scope("a1", "deploy").' --now 2026-08-14T23:00:00Z
  ordinance check --json 'request("a1", "deploy", "prod", "alice", 1).'

\b
Exit status: 0 allowed, 1 blocked, 2 error.
""",
)
@click.argument("facts", nargs=-1, required=True, metavar="REQUEST_FACT...")
@json_option
@model_options
def command(facts: tuple[str, ...], as_json: bool, now: int | None, db: str, policy: str) -> None:
    """Check a request at the gate and log the decision.

    The request is one `request(A, Kind, Target, Agent, Epoch)` fact plus
    any request-side facts about A: `request_scope` (the authority scope,
    default the target), `request_uses` (claims it relies on),
    `request_needs`, `request_route`, `request_requires`,
    `request_irreversible`, `request_key`, `request_lease` (the lease
    epoch, default the epoch), and any request-side relation of the
    policy's own (declared `request_<name>`, first argument A, derived by
    no rule). Prints the decision and, for each reason, the proof that made it.
    """
    program = load_policy(policy)
    parsed = parse_facts(facts, "request fact")
    check_declared(program, parsed)
    request = Request.from_facts(parsed)
    at = now_or_clock(now)
    with open_db(db, program) as store:
        gate = Gate(program, store, limits=limits(), snapshot=True, eager=False, build_deadline=True)
        decision = gate.check(request, at)
        # claim windows from the gate's model (none if the deadline cut it); events only for the leaves shown
        built = not any(e.code == "limit_exceeded" for e in decision.errors)
        model = gate.model(decision.revision, decision.now) if built else None
        annotate = model_annotator(store, decision.revision, model)
        if as_json:
            print_json(decision_json(decision, annotate, program))
        else:
            click.echo(explain_text(decision, annotate, program))
        gate.warm.save_if_due()  # the next check starts from this model (see gate/warm.py)
    if decision.errors:
        raise click.exceptions.Exit(2)
    if not decision.allowed:
        raise click.exceptions.Exit(1)
