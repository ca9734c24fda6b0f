"""`ordinance assert` and `ordinance load`: facts into the store."""

from __future__ import annotations

import json
from typing import IO, Any, Iterable

import click

from ..diagnostics import Diagnostic, OrdinanceError, StoreError
from ..facts import Event, import_jsonl
from ..facts import kind_of
from ..gate.request import is_request_side
from ..project import Layers, record_facts
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
  ordinance assert 'open_item("rc-3", "private review").' --layer sovereign
""",
)
@click.argument("facts", nargs=-1, required=True, metavar="FACT...")
@click.option("--source", default="cli", show_default=True, help="Where the facts come from (recorded on each event).")
@click.option("--author", default=default_author, show_default="your login name",
              help="Who asserts them (recorded on each event).")
@click.option("--layer", default=None, metavar="LAYER",
              help="The privacy layer of the facts (public, federation, sovereign, architect, or the "
                   "policy's own); default: the policy's `default_layer`, else public.")
@db_option
@policy_option
def assert_command(facts: tuple[str, ...], source: str, author: str, layer: str | None, db: str,
                   policy: str) -> None:
    """Append facts, written in the rule language, to the store.

    Every fact is checked against the policy's declarations (relation,
    arity, argument types) before anything is written; the batch is written
    as one transaction. `supersedes`, `correction`, tombstone, `receipt` and
    `observation` facts are logged under their own event kinds. Each fact
    carries a privacy layer: an audience sees only the layers it may.
    """
    program = load_policy(policy)
    parsed = ground_facts(facts)
    check_declared(program, parsed)
    _not_request(rel for rel, _ in parsed)
    layers = Layers.of(program)
    chosen = layers.default if layer is None else layers.check(layer)
    events = [Event(kind_of(rel), rel, args, source, author, layer=chosen) for rel, args in parsed]
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
    `author`, `layer`) as events; times may be ISO-8601 strings."""
    layers = Layers.of(program)
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
            layer = layers.check(str(obj["layer"])) if "layer" in obj else layers.default
            events.append(
                Event(kind_of(rel), rel, values, str(obj.get("source", source)), str(obj.get("author", author)),
                      layer=layer)
            )
        except (ValueError, KeyError, TypeError, AttributeError, StoreError, OrdinanceError) as err:
            what = (f"missing field {err}" if isinstance(err, KeyError)
                    else err.diagnostics[0].message if isinstance(err, OrdinanceError) else str(err))
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
  ordinance load prime-records.md      # Markdown records: their facts
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
    "deploy", 1]}` (optional "source", "author" and "layer"; times as
    ISO-8601 strings), or an event exported from a store (it has a "seq"), which is
    imported unchanged and must continue the log. A file of Markdown
    records (`ordinance records`) loads the facts of its `jsonl` blocks.
    The whole file is validated against the policy first and written in
    one transaction.
    """
    program = load_policy(policy)
    lines = file.readlines()
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        click.echo("nothing to load")
        return
    if first.rstrip("\n") == "---":  # Markdown records (`ordinance records`): their fact blocks
        lines = [line + "\n" for line in record_facts("".join(lines))]
        first = lines[0] if lines else "{}"
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
