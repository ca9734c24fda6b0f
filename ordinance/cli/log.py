"""`ordinance log` and `ordinance replay`: the decision log, and re-checking it."""

from __future__ import annotations

from typing import Any

import click

from ..explain import action_text, annotator, decision_json, logged_asked, outcome_word, rebuild, rebuilt_json
from ..gate import Decision, Gate, Replayed, replay_log
from ..values import format_instant
from .deadline import limits
from .explain import show_decision
from .common import (
    Instant,
    db_option,
    json_option,
    load_policy,
    new_table,
    open_db,
    policy_option,
    print_json,
    print_table,
    progress,
)

__all__ = ["commands", "log_command", "replay_command"]


def _codes(payload: Any) -> list[str]:
    return sorted({str(r.get("code")) for r in payload.get("reasons", []) if isinstance(r, dict)})


@click.command(
    "log",
    epilog="""\b
Examples:
  ordinance log                           the newest 50 decisions
  ordinance log --denied --agent alice    alice's denied requests
  ordinance log --since 2026-08-14T00:00:00Z --limit 200
  ordinance log --after 1200              the page after seq 1200, oldest first
  ordinance log --request d1 --json
  ordinance log --request cc-toolu_H4 --explain   its proof, rebuilt
""",
)
@click.option("--denied", is_flag=True, help="Only denied decisions.")
@click.option("--agent", default=None, help="Only requests of this agent.")
@click.option("--request", "request_id", default=None, metavar="ID", help="Only the request with this id.")
@click.option("--since", type=Instant(), default=None, help="Only decisions logged at or after this instant.")
@click.option(
    "--after",
    type=click.IntRange(min=0),
    default=None,
    metavar="SEQ",
    help="Page forward: the decisions after this seq, oldest first.",
)
@click.option(
    "--limit",
    "--last",
    "limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="At most this many decisions (the newest, unless --after).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Instead of the table, each decision with its proof, rebuilt (as `why --decision` shows it).",
)
@json_option
@db_option
@policy_option
def log_command(
    denied: bool,
    agent: str | None,
    request_id: str | None,
    since: int | None,
    after: int | None,
    limit: int,
    explain: bool,
    as_json: bool,
    db: str,
    policy: str,
) -> None:
    """Show the decision log, oldest first, filtered and paged in the store.

    Every `ordinance check` (and every Gate.check of a program) appends one
    decision: the request, allowed or not, the reason codes, and the store
    revision, policy hash and `now` it was made at. Without --after the
    newest --limit decisions are shown; a full page ends with the command
    for the next one. A Bash call shows its command; a call a host's hook
    asked the user about (logged with `asked`) shows as `ask`.
    """
    program = load_policy(policy) if explain else None
    since_text = None if since is None else format_instant(since).removesuffix("Z") + ".000000Z"
    with open_db(db, program if explain else None) as store:
        decisions = store.decision_page(
            after=after or 0,
            limit=limit,
            newest=after is None,
            denied=denied,
            agent=agent,
            request=request_id,
            since=since_text,
        )
        if explain and decisions and program is not None:
            _explain(decisions, store, program, "json" if as_json else None)
            return
    if as_json:
        print_json(
            [
                {
                    **decision_json(d, proofs=False),
                    "answer": outcome_word(d, asked=logged_asked(e.payload)),
                    "time": e.time,
                }
                for d, e in ((Decision.from_payload(e.payload or {}, e.seq), e) for e in decisions)
            ]
        )
        return
    if not decisions:
        click.echo(
            "no decisions match" if denied or agent or request_id or since or after else "the decision log is empty"
        )
        return
    table = new_table("seq", "request", "action", "decision", "reasons", "now", "revision")
    for e in decisions:
        d = Decision.from_payload(e.payload or {}, e.seq)
        r = d.request
        table.add_row(  # plain strings: new_table shows them escaped, never as markup
            str(e.seq),
            r.id,
            action_text(r),
            outcome_word(d, asked=logged_asked(e.payload)),
            ", ".join(d.codes) or "-",
            format_instant(d.now),
            str(d.revision),
        )
    print_table(table)
    if len(decisions) == limit:
        click.echo(
            f"{limit} shown; next page: ordinance log --after {decisions[-1].seq}"
            if after is not None
            else f"the newest {limit} shown; older ones: --limit, or --after SEQ"
        )


def _explain(decisions: list[Any], store: Any, program: Any, fmt: str | None) -> None:
    """Each decision rebuilt with its proofs: text blocks, or one JSON list."""
    gate = Gate(program, store, limits=limits(), eager=False)
    rebuilt = [rebuild(gate, e.seq) for e in decisions]
    if fmt == "json":
        print_json([rebuilt_json(r, annotator(store, r.again.revision), program) for r in rebuilt])
        return
    for n, r in enumerate(rebuilt):
        if n:
            click.echo("")
        show_decision(r, None, store, program)


def _row(r: Replayed) -> dict[str, Any]:
    """The JSON row of a replayed decision."""
    was, again = r.logged, r.again
    return {
        "seq": r.seq,
        "request": was["request"]["id"],
        "same": r.same,
        "was": {
            "allowed": was.get("allowed"),
            "codes": _codes(was),
            "policy_hash": was.get("policy_hash"),
            "revision": was.get("revision"),
        },
        "now": {
            "allowed": again.allowed,
            "codes": list(again.codes),
            "policy_hash": again.policy_hash,
            "revision": again.revision,
        },
    }


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
@click.option(
    "--revision",
    type=click.IntRange(min=0),
    default=None,
    help="Re-check against the store at this revision instead of each decision's own.",
)
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
        gate = Gate(program, store, limits=limits())
        with progress(store.count("decision"), "replaying") as tick:
            for replayed in replay_log(gate, revision=revision, what_if=True):
                rows.append(_row(replayed))
                tick()
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
