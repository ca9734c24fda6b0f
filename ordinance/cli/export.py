"""`ordinance export`: the log as JSON Lines, for backups and moving stores."""

from __future__ import annotations

from typing import IO

import click

from ..facts import export_jsonl
from .common import db_option, open_db

__all__ = ["command"]


@click.command(
    "export",
    epilog="""\b
Examples:
  ordinance export > backup.jsonl
  ordinance export backup.jsonl --since 100
  ordinance export - --db postgresql://db/ordinance | ordinance load - --db copy.db
""",
)
@click.argument("file", type=click.File("w", encoding="utf-8", lazy=True), default="-")
@click.option(
    "--since",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Only events after this revision: `--since 3` starts at revision 4, so the last revision "
    "a backup holds continues it.",
)
@click.option(
    "--until", type=click.IntRange(min=0), default=None, help="Only events up to this revision, itself included."
)
@db_option
def command(file: IO[str], since: int, until: int | None, db: str) -> None:
    """Write the store's events to FILE (default stdout) as JSON Lines.

    One event per line, every field kept (seq, kind, relation, args,
    source, author, time, fence, payload): `ordinance load` of the file
    into an empty store reproduces the log exactly.
    """
    with open_db(db) as store:
        count = export_jsonl(store, file, since, until)
    if file.name not in ("-", "<stdout>"):
        click.echo(f"exported {count} event{'' if count == 1 else 's'} to {file.name}", err=True)
