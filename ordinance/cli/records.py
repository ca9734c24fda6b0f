"""`ordinance records`: a projection as Markdown records with YAML front matter."""

from __future__ import annotations

import click

from ..project import Projector, records, write_atomically
from .common import load_policy, model_options, now_or_clock, open_db
from .state import audience_option

__all__ = ["command"]


@click.command(
    "records",
    epilog="""\b
Examples:
  ordinance records --now 2026-08-14T23:45:00Z --out prime-records.md
  ordinance records --projection decisions --audience public
  ordinance load prime-records.md --db copy.db     # the facts come back
""",
)
@click.option("--projection", "name", default="state", show_default=True, help="The projection to render.")
@click.option("--agent", default=None, help="The standing agent (default: the `standing_agent` fact).")
@audience_option
@click.option("--out", default=None, metavar="FILE", help="Write the records here (temp file + rename).")
@model_options
def command(
    name: str, agent: str | None, audience: str | None, out: str | None, now: int | None, db: str, policy: str
) -> None:
    """Render a projection as Markdown records (seed 001's encoding).

    One record per line of the projection: YAML front matter (type, date,
    truth_class, author, layer, section, key, events), the line, and the
    facts of the events behind it as a `jsonl` block, so `ordinance load`
    of the file writes those facts back.
    """
    program = load_policy(policy)
    with open_db(db, program) as store:
        text = records(Projector(program, store), name, now_or_clock(now), audience=audience, agent=agent)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomically(out, text)
        count = sum(line.startswith("type: ") for line in text.splitlines())
        click.echo(f"wrote {count} records to {out}")
