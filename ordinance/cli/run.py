"""`ordinance run PROGRAM -F FACTS_DIR -D OUT_DIR`: a Soufflé program and its
data, as `souffle -F FACTS_DIR -D OUT_DIR PROGRAM` runs them."""

from __future__ import annotations

import click

from ..engine import evaluate
from ..facts.factfiles import format_fields, read_inputs, write_output
from ..rules import load
from ..values import escape
from .common import now_option, now_or_clock

__all__ = ["command"]


@click.command(
    "run",
    epilog="""\b
Examples:
  ordinance run reach.dl -F facts -D out
  ordinance run reach.dl -F facts -D -
""",
)
@click.argument("program", type=click.Path(dir_okay=False))
@click.option(
    "-F", "--facts", "facts_dir", default=".", show_default=True, help="Directory of the `.input` fact files."
)
@click.option(
    "-D",
    "--output",
    "out_dir",
    default=".",
    show_default=True,
    help="Directory for the `.output` files; `-` prints them.",
)
@now_option
def command(program: str, facts_dir: str, out_dir: str, now: int | None) -> None:
    """Evaluate a rule PROGRAM over its `.input` fact files and write its
    `.output` relations.

    Each `.input rel` reads `FACTS_DIR/rel.facts` (tab-separated, or as its
    `filename=`, `delimiter=` and `headers=` say); each `.output rel` writes
    `OUT_DIR/rel.csv`, one tab-separated line per tuple, sorted; `.printsize
    rel` prints `rel` and its number of tuples. With `rfc4180=true` fields
    may be quoted, as Soufflé's; a symbol holding a tab or a line break is
    written quoted either way. A fact file that cannot be read, or a
    malformed line, is an error naming the file and line.
    """
    checked = load(program)
    facts = read_inputs(checked, facts_dir)
    model = evaluate(checked, facts, now=now_or_clock(now))
    for d in checked.io:
        if d.kind == "input":
            continue
        rows = set(model.tuples(d.relation))
        if d.kind == "printsize":
            click.echo(f"{d.relation}\t{len(rows)}")
        elif out_dir == "-" or dict(d.params).get("IO") == "stdout":
            click.echo(d.relation)
            types = checked.relations[d.relation].types
            for t in sorted(rows, key=lambda t: tuple((isinstance(v, str), v) for v in t)):
                click.echo("\t".join(escape(field) for field in format_fields(t, types)))
        else:
            write_output(checked, d, rows, out_dir)
