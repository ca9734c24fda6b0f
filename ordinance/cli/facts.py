"""`ordinance assert` and `ordinance load`: facts into the store."""

from __future__ import annotations

import json
from typing import IO, Any, Iterable

import click

from ..diagnostics import Diagnostic, StoreError
from ..facts import Event, import_jsonl
from ..facts import kind_of
from ..gate.request import is_request_side
from ..values import to_value
from .common import check_declared, db_option, default_author, ground_facts, load_policy, open_db, policy_option

__all__ = ["commands", "assert_command", "load_command"]


@click.command(
    "assert",
    epilog="""\b
Examples:
  ordinance assert 'grant("alice", "deploy", 1).' --source owner --author jw
  ordinance assert 'claim("c1", "db", "role", "primary").' \\
                   'claim_valid("c1", 2026-08-14T12:00:00Z, forever).'
""",
)
@click.argument("facts", nargs=-1, required=True, metavar="FACT...")
@click.option("--source", default="cli", show_default=True, help="Where the facts come from (recorded on each event).")
@click.option("--author", default=default_author, show_default="your login name",
              help="Who asserts them (recorded on each event).")
@db_option
@policy_option
def assert_command(facts: tuple[str, ...], source: str, author: str, db: str, policy: str) -> None:
    """Append facts, written in the rule language, to the store.

    Every fact is checked against the policy's declarations (relation,
    arity, argument types) before anything is written; the batch is written
    as one transaction. `supersedes`, `correction`, tombstone, `receipt` and
    `observation` facts are logged under their own event kinds.
    """
    program = load_policy(policy)
    parsed = ground_facts(facts)
    check_declared(program, parsed)
    _not_request(rel for rel, _ in parsed)
    events = [Event(kind_of(rel), rel, args, source, author) for rel, args in parsed]
    with open_db(db, program) as store:
        revision = store.append(events)
    noun = "fact" if len(events) == 1 else "facts"
    click.echo(f"asserted {len(events)} {noun}; store at revision {revision}")


def _not_request(relations: Iterable[str]) -> None:
    """Request facts live in the gate's overlay, never in the store."""
    for rel in relations:
        if is_request_side(rel):
            raise StoreError(f"`{rel}` facts describe a request: pass them to `ordinance check`, not the store",
                             code="request_fact")


def _fact_events(fp: Iterable[str], program: Any, source: str, author: str) -> list[Event]:
    """Lines `{"relation": ..., "args": [...]}` (optional `source`,
    `author`) as events; times may be ISO-8601 strings."""
    events: list[Event] = []
    problems: list[Diagnostic] = []
    for lineno, line in enumerate(fp, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            rel, args = obj["relation"], obj["args"]
            _not_request([rel])
            decl = program.relations.get(rel)
            if decl is None:
                raise ValueError(f"relation `{rel}` is not declared by the policy")
            if not isinstance(args, list) or len(args) != decl.arity:
                raise ValueError(f"relation `{rel}` takes {decl.arity} arguments")
            types = decl.types or ("any",) * decl.arity
            values = tuple(to_value(v, t) for v, t in zip(args, types))
            events.append(
                Event(kind_of(rel), rel, values, str(obj.get("source", source)), str(obj.get("author", author)))
            )
        except (ValueError, KeyError, TypeError, AttributeError, StoreError) as err:
            what = (f"missing field {err}" if isinstance(err, KeyError)
                    else err.diagnostics[0].message if isinstance(err, StoreError) else str(err))
            problems.append(Diagnostic("bad_jsonl", f"line {lineno}: {what}".replace("\n", " ")))
    if problems:
        raise StoreError(problems)
    return events


@click.command(
    "load",
    epilog="""\b
Examples:
  ordinance load facts.jsonl
  echo '{"relation": "grant", "args": ["alice", "deploy", 1]}' | ordinance load -
  ordinance load backup.jsonl          # an export: lines with "seq" keep it
""",
)
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--source", default="load", show_default=True, help="Source recorded on facts that name none.")
@click.option("--author", default=default_author, show_default="your login name",
              help="Author recorded on facts that name none.")
@db_option
@policy_option
def load_command(file: IO[str], source: str, author: str, db: str, policy: str) -> None:
    """Append JSON Lines to the store (FILE, or - for stdin).

    Each line is either a fact, `{"relation": "grant", "args": ["alice",
    "deploy", 1]}` (optional "source" and "author"; times as ISO-8601
    strings), or an event exported from a store (it has a "seq"), which is
    imported unchanged and must continue the log. The whole file is
    validated against the policy first and written in one transaction.
    """
    program = load_policy(policy)
    lines = file.readlines()
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        click.echo("nothing to load")
        return
    exported = _is_export(first)
    with open_db(db, program) as store:
        before = store.revision()
        if exported:
            import io

            revision = import_jsonl(store, io.StringIO("".join(lines)))
        else:
            revision = store.append(_fact_events(iter(lines), program, source, author))
    click.echo(f"loaded {revision - before} events; store at revision {revision}")


def _is_export(line: str) -> bool:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict) and "seq" in obj


commands = (assert_command, load_command)
