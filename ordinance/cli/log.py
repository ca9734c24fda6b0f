"""`ordinance log` and `ordinance replay`: the decision log, and re-checking it."""

from __future__ import annotations

from typing import Any

import click
from ..explain import decision_json
from ..facts import Event
from ..gate import Decision, Gate, Request
from ..values import format_instant
from .common import (
    db_option,
    json_option,
    load_policy,
    new_table,
    open_db,
    policy_option,
    print_json,
    print_table,
)

__all__ = ["commands", "log_command", "replay_command"]


def _codes(payload: Any) -> list[str]:
    return sorted({r["code"] for r in payload.get("reasons", [])})


@click.command(
    "log",
    epilog="""\b
Examples:
  ordinance log
  ordinance log --last 5
  ordinance log --json | jq '.[] | select(.allowed == false)'
""",
)
@click.option("--last", type=click.IntRange(min=1), default=None, help="Only the newest N decisions.")
@json_option
@db_option
def log_command(last: int | None, as_json: bool, db: str) -> None:
    """Show the decision log, newest last.

    Every `ordinance check` (and every Gate.check of a program) appends one
    decision: the request, allowed or not, the reason codes, and the store
    revision, policy hash and `now` it was made at.
    """
    with open_db(db) as store:
        decisions = store.decisions()
    if last is not None:
        decisions = decisions[-last:]
    if as_json:
        print_json([{**decision_json(Decision.from_payload(e.payload or {}, e.seq), proofs=False), "time": e.time}
                    for e in decisions])
        return
    if not decisions:
        click.echo("the decision log is empty")
        return
    table = new_table("seq", "request", "action", "decision", "reasons", "now", "revision")
    for e in decisions:
        d = Decision.from_payload(e.payload or {}, e.seq)
        r = d.request
        table.add_row(
            str(e.seq), r.id, f"{r.agent} {r.kind} {r.target}",
            "allowed" if d.allowed else "DENIED", ", ".join(d.codes) or "-",
            format_instant(d.now), str(d.revision),
        )
    print_table(table)


def _recheck(gate: Gate, event: Event, revision: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the logged payload, the payload of the decision made again)."""
    payload = dict(event.payload or {})
    request = Request.from_json(payload["request"])
    at = int(payload["revision"]) if revision is None else revision
    again = gate.decide(request, int(payload["now"]), revision=at)
    return payload, again.payload()


def _summary(p: dict[str, Any]) -> str:
    return ("allowed" if p["allowed"] else "denied") + (f" ({', '.join(p['codes'])})" if p["codes"] else "")


@click.command(
    "replay",
    short_help="Re-check logged decisions; report any that differ.",
    epilog="""\b
Examples:
  ordinance replay                    every decision at its own revision
  ordinance replay --revision 42      every decision against the store at revision 42
  ordinance replay --policy new.rules what a changed policy would have decided
""",
)
@click.option("--revision", type=click.IntRange(min=0), default=None,
              help="Re-check against the store at this revision instead of each decision's own.")
@json_option
@db_option
@policy_option
def replay_command(revision: int | None, as_json: bool, db: str, policy: str) -> None:
    """Re-check every logged decision and report those that would now differ.

    Each decision is made again from its request and `now`, by the current
    policy, over the store rebuilt at the decision's revision (or at
    --revision). Same policy and revision must give the same decision; a
    changed policy or a later revision shows what would change. Exits 1 if
    any decision differs. Nothing is logged.
    """
    program = load_policy(policy)
    rows: list[dict[str, Any]] = []
    with open_db(db, program) as store:
        if revision is not None:
            store.as_of(revision)  # refuses a revision not in the log
        gate = Gate(program, store)
        decisions = store.decisions()
        for event in decisions:
            before, after = _recheck(gate, event, revision)
            same = {k: before.get(k) for k in ("allowed", "reasons", "errors")} == {
                k: after.get(k) for k in ("allowed", "reasons", "errors")
            }
            rows.append({
                "seq": event.seq,
                "request": before["request"]["id"],
                "same": same,
                "was": {"allowed": before.get("allowed"), "codes": _codes(before),
                        "policy_hash": before.get("policy_hash"), "revision": before.get("revision")},
                "now": {"allowed": after["allowed"], "codes": _codes(after),
                        "policy_hash": after["policy_hash"], "revision": after["revision"]},
            })
    differ = [r for r in rows if not r["same"]]
    if as_json:
        print_json(rows)
    elif not rows:
        click.echo("the decision log is empty")
    else:
        if differ:
            table = new_table("seq", "request", "was", "now")
            for r in differ:
                table.add_row(str(r["seq"]), r["request"], _summary(r["was"]), _summary(r["now"]))
            print_table(table)
        changed = sum(r["was"]["policy_hash"] != r["now"]["policy_hash"] for r in rows)
        note = f"; {changed} were made under another policy" if changed else ""
        click.echo(f"{len(rows)} decisions re-checked, {len(differ)} differ{note}")
    if differ:
        raise click.exceptions.Exit(1)


commands = (log_command, replay_command)
