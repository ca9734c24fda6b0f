"""`ordinance check`: ask the gate about one request, log the decision."""

from __future__ import annotations

from typing import Any

import click

from ..diagnostics import GateError
from ..explain_render import annotator, explain_json, explain_text
from ..gate import Decision, Gate, Request
from ..timepoints import format_instant
from .common import (
    check_declared,
    db_option,
    ground_facts,
    json_option,
    load_policy,
    now_option,
    now_or_clock,
    open_db,
    policy_option,
    print_json,
)

__all__ = ["command", "request_from_facts", "decision_json"]

# request-side relation -> the Request field it fills (after the action id)
_FIELDS = {
    "request_scope": "scope",
    "request_uses": "uses",
    "request_needs": "needs",
    "request_route": "routes",
    "request_requires": "requires",
    "request_irreversible": "irreversible",
    "request_key": "key",
}


def request_from_facts(facts: list[tuple[str, tuple[Any, ...]]]) -> Request:
    """The Request whose overlay facts (`Request.facts`) are exactly `facts`:
    one `request(A, Kind, Target, Agent, Epoch)` plus `request_*` facts of A."""
    heads = [args for rel, args in facts if rel == "request"]
    if len(heads) != 1 or len(heads[0]) != 5:
        raise GateError("give exactly one `request(A, Kind, Target, Agent, Epoch)` fact")
    a, kind, target, agent, epoch = heads[0]
    fields: dict[str, Any] = {"id": a, "kind": kind, "target": target, "agent": agent, "epoch": epoch}
    for rel, args in facts:
        name = _FIELDS.get(rel)
        if rel == "request":
            continue
        if name is None:
            raise GateError(f"`{rel}` is not a request-side relation; store it with `ordinance assert`")
        if not args or args[0] != a:
            raise GateError(f"`{rel}` must name the request `{a}` as its first argument")
        if name == "irreversible":
            fields[name] = True
        elif name in ("scope", "key"):
            fields[name] = args[1]
        elif name == "needs":
            fields.setdefault(name, []).append(list(args[1:]))
        else:
            fields.setdefault(name, []).append(args[1])
    request = Request.from_json(fields)
    given = {(rel, tuple(args)) for rel, args in facts}
    made = {(rel, t) for rel, ts in request.facts().items() for t in ts}
    extra = sorted(given - made, key=str)
    if extra:
        raise GateError(f"`{extra[0][0]}` does not fit the request (one scope; routes in that scope)")
    return request


def decision_json(d: Decision, annotate: Any = None) -> dict[str, Any]:
    """The `--json` shape: allowed, reasons (code, detail, proof), revision,
    policy_hash, now (ISO-8601)."""
    full = explain_json(d, annotate)
    return {
        "allowed": d.allowed,
        "reasons": [
            {"code": r["code"], "detail": r["detail"], "proof": r.get("proof")} for r in full["reasons"]
        ],
        "revision": d.revision,
        "policy_hash": d.policy_hash,
        "now": format_instant(d.now),
    }


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
@now_option
@db_option
@policy_option
def command(facts: tuple[str, ...], as_json: bool, now: int | None, db: str, policy: str) -> None:
    """Check a request at the gate and log the decision.

    The request is one `request(A, Kind, Target, Agent, Epoch)` fact plus
    any request-side facts about A: `request_scope` (the authority scope,
    default the target), `request_uses` (claims it relies on),
    `request_needs`, `request_route`, `request_requires`,
    `request_irreversible`, `request_key`. Prints the decision and, for
    each reason, the proof that made it.
    """
    program = load_policy(policy)
    parsed = ground_facts(facts, "request fact")
    check_declared(program, parsed)
    request = request_from_facts(parsed)
    at = now_or_clock(now)
    with open_db(db, program) as store:
        decision = Gate(program, store).check(request, at)
        annotate = annotator(store, decision.revision)
        if as_json:
            print_json(decision_json(decision, annotate))
        else:
            click.echo(explain_text(decision, annotate))
    if decision.errors:
        raise click.exceptions.Exit(2)
    if not decision.allowed:
        raise click.exceptions.Exit(1)
