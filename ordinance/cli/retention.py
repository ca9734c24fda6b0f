"""`ordinance purge` and `ordinance retract`: the only ways a fact leaves
the model, both logged events (see facts/store.py, Purge)."""

from __future__ import annotations

import click

from ..diagnostics import StoreError
from ..rules import parse_facts
from .common import db_option, default_author, open_db

__all__ = ["commands", "purge_command", "retract_command"]

_reason = click.option("--reason", required=True, help="Why (recorded on the purge event; required).")
_author = click.option(
    "--author", default=default_author, show_default="your login name", help="Who purges (recorded on the event)."
)


@click.command(
    "purge",
    epilog="""\b
Examples:
  ordinance purge 12 13 --reason "retention: 90 days"
  ordinance log --json | jq '.[].seq' | xargs ordinance purge --reason "gdpr request 7"
""",
)
@click.argument("seqs", nargs=-1, required=True, type=click.IntRange(min=1), metavar="SEQ...")
@_reason
@_author
@db_option
def purge_command(seqs: tuple[int, ...], reason: str, author: str, db: str) -> None:
    """Purge the events SEQ... for retention, logging why.

    Replay at any later revision leaves them out (facts and decisions);
    replay at an earlier revision still shows them: the purge is itself an
    event, nothing is updated or deleted.
    """
    with open_db(db) as store:
        seq = store.purge(seqs, reason, source="cli", author=author)
    click.echo(f"purged {len(set(seqs))} events at seq {seq}")


@click.command(
    "retract",
    epilog="""\b
Examples:
  ordinance retract 'grant("bob", "prod", 1).' --reason "granted to the wrong agent"
""",
)
@click.argument("facts", nargs=-1, required=True, metavar="FACT...")
@_reason
@_author
@db_option
def retract_command(facts: tuple[str, ...], reason: str, author: str, db: str) -> None:
    """Retract mistaken facts, written in the rule language.

    Every live event carrying exactly one of the FACTs is purged as a
    retraction (a logged event with the reason): the model leaves the fact
    out from now on, while `--revision` views and replays before it still
    show what was known then.
    """
    wanted = parse_facts(facts)
    with open_db(db) as store:
        seqs: list[int] = []
        for rel, args in wanted:
            found = store.seqs_of(rel, args)
            if not found:
                shown = f"{rel}({', '.join(map(repr, args))})".replace("'", '"')
                raise StoreError(f"no live `{shown}` fact in the store", code="no_such_fact")
            seqs.extend(found)
        seq = store.purge(seqs, reason, source="cli", author=author, retract=True)
    noun = "fact" if len(wanted) == 1 else "facts"
    click.echo(f"retracted {len(wanted)} {noun} ({len(seqs)} events) at seq {seq}")


commands = (purge_command, retract_command)
