"""`ordinance assert` and `ordinance load`: facts into the store."""

from __future__ import annotations

import io
from typing import IO

import click

from ..facts import import_jsonl, is_export, read_facts, read_lines
from ..rules import parse_facts, typed_fact
from ..project import Layers, record_facts
from .common import db_option, default_author, load_policy, open_db, policy_option

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
@click.option(
    "--author",
    default=default_author,
    show_default="your login name",
    help="Who asserts them (recorded on each event).",
)
@click.option(
    "--layer",
    default=None,
    metavar="LAYER",
    help="The privacy layer of the facts (public, federation, sovereign, architect, or the "
    "policy's own); default: the policy's `default_layer`, else public.",
)
@db_option
@policy_option
def assert_command(facts: tuple[str, ...], source: str, author: str, layer: str | None, db: str, policy: str) -> None:
    """Append facts, written in the rule language, to the store.

    The store checks every fact against the policy (a declared relation,
    its arity and argument types; never a derived relation such as
    `permit`, never a request fact) before anything is written; the batch
    is written as one transaction. `supersedes`, `correction`, tombstone,
    `receipt` and `observation` facts are logged under their own event kinds.
    Each fact carries a privacy layer: an audience sees only the layers it may.
    """
    program = load_policy(policy)
    parsed = parse_facts(facts)
    for n, (relation, args) in enumerate(parsed, 1):  # a misspelt relation named before the store opens
        typed_fact(program, relation, args, where=f"fact {n}: ", stored=True)
    layers = Layers.of(program)
    chosen = layers.default if layer is None else layers.require(layer)
    with open_db(db, program, create=True) as store:
        revision = store.assert_facts(parsed, source=source, author=author, layer=chosen)
    noun = "fact" if len(parsed) == 1 else "facts"
    click.echo(f"asserted {len(parsed)} {noun}; store at revision {revision}")


@click.command(
    "load",
    epilog="""\b
Examples:
  ordinance load facts.jsonl
  echo '{"relation": "grant", "args": ["alice", "deploy", 1]}' | ordinance load -
  ordinance load backup.jsonl          # an export: lines with "seq" keep it
  ordinance load --decisions backup.jsonl   # a restore: its decision events too
  ordinance load prime-records.md      # Markdown records: their facts
""",
)
@click.argument("file", type=click.File("rb"))
@click.option("--source", default="load", show_default=True, help="Source recorded on facts that name none.")
@click.option(
    "--author", default=default_author, show_default="your login name", help="Author recorded on facts that name none."
)
@click.option(
    "--decisions",
    is_flag=True,
    help="Keep the decision events of an export (a restore of a store you trust); refused otherwise.",
)
@db_option
@policy_option
def load_command(file: IO[bytes], source: str, author: str, decisions: bool, db: str, policy: str) -> None:
    """Append JSON Lines to the store (FILE, or - for stdin).

    Each line is either a fact, `{"relation": "grant", "args": ["alice",
    "deploy", 1]}` (optional "source", "author" and "layer"; times as
    ISO-8601 strings), or an event exported from a store (it has a "seq"),
    which is imported unchanged and must continue the log (its decision
    events only with --decisions: this store's gate did not make them). A file of
    Markdown records (`ordinance records`) loads the facts of its `jsonl`
    blocks. The whole file is validated against the policy first and written
    in one transaction.
    """
    program = load_policy(policy)
    name = str(getattr(file, "name", None) or "<stdin>")
    name = "<stdin>" if name in ("-", "<stdin>") else name
    lines = read_lines(file, name)  # line by line, bounded (an endless file stops at a bound)
    if lines and lines[0].rstrip("\r\n") == "---":  # Markdown records: their fact blocks
        lines = [line + "\n" for line in record_facts("".join(lines))]
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        click.echo("nothing to load")
        return
    with open_db(db, program, create=True) as store:
        if is_export(first):  # a batch is gapless: what it wrote is its own line count
            revision = import_jsonl(store, io.StringIO("".join(lines)), name, decisions=decisions)
            count = sum(1 for line in lines if line.strip())
        else:
            layers = Layers.of(program)
            events = read_facts(lines, store.schema, source, author, name=name, layer=layers.default)
            for event in events:
                layers.require(event.layer)
            revision, count = store.append(events), len(events)
    click.echo(f"loaded {count} event{'' if count == 1 else 's'}; store at revision {revision}")


commands = (assert_command, load_command)
