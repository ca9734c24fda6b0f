"""`ordinance run PROGRAM -F FACTS_DIR -D OUT_DIR`: a Soufflé program and its
data, as `souffle -F FACTS_DIR -D OUT_DIR PROGRAM` runs them."""

from __future__ import annotations

from typing import Any

import click

from ..engine import Limits, evaluate
from ..engine.demand import outputs
from ..engine.sql import ENGINES, evaluate_sql
from ..rules.checked import CheckedProgram
from ..facts.factfiles import format_fields, read_inputs, write_output
from ..rules import load
from ..values import escape
from .common import now_option, now_or_clock

__all__ = ["command"]


# a user's own program runs as Soufflé's does: no bound on a stratum's rounds
# (Soufflé's independent_body3 takes ~10^6); the tuple and match limits hold,
# and the gate keeps every limit (`Limits()`)
_RUN_LIMITS = Limits(max_iterations=None)


@click.command(
    "run",
    epilog="""\b
Examples:
  ordinance run reach.dl -F facts -D out
  ordinance run reach.dl -F facts -D -
  ordinance run reach.dl -F facts -D out --engine duckdb
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
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="python",
    show_default=True,
    help="Who evaluates: the tuple-at-a-time engine, or the program compiled to SQL on DuckDB, PostgreSQL or Spark.",
)
@click.option(
    "--engine-url",
    metavar="URL",
    envvar="ORDINANCE_ENGINE_URL",
    help="The `postgresql://` server the `postgresql` engine runs on.",
)
@now_option
def command(program: str, facts_dir: str, out_dir: str, engine: str, engine_url: str | None, now: int | None) -> None:
    """Evaluate a rule PROGRAM over its `.input` fact files and write its
    `.output` relations.

    Each `.input rel` reads `FACTS_DIR/rel.facts` (tab-separated, or as its
    `filename=`, `delimiter=` and `headers=` say); each `.output rel` writes
    `OUT_DIR/rel.csv`, one tab-separated line per tuple, sorted; `.printsize
    rel` prints `rel` and its number of tuples. With `rfc4180=true` fields
    may be quoted, as Soufflé's; a symbol holding a tab or a line break is
    written quoted either way. A fact file that cannot be read, or a
    malformed line, is an error naming the file and line.

    `--engine duckdb` (or `postgresql`, on `--engine-url`, or `spark`, in
    local mode) evaluates the same program set-at-a-time, compiled to SQL:
    the same answers, faster on bulk data; a construct it does not compile
    is refused (`unsupported_on_backend`) before anything runs.

    With `.pragma "magic-transform" "*"` (any value) the outputs are
    evaluated on demand: the constants of the rules reading them pass down
    as demand, so only what the outputs need is computed (python engine).
    """
    checked = load(program)
    facts = read_inputs(checked, facts_dir)
    if engine == "python":
        if any(p.key == "magic-transform" for p in checked.pragmas):
            wanted = list(dict.fromkeys(d.relation for d in checked.io if d.kind != "input"))
            _write(checked, outputs(checked, facts, wanted, now=now_or_clock(now), limits=_RUN_LIMITS), out_dir)
        else:
            _write(checked, evaluate(checked, facts, now=now_or_clock(now), limits=_RUN_LIMITS), out_dir)
        return
    options = {"url": engine_url} if engine == "postgresql" else {}
    with evaluate_sql(checked, facts, now=now_or_clock(now), engine=engine, **options) as model:
        _write(checked, model, out_dir)


def _write(checked: CheckedProgram, model: Any, out_dir: str) -> None:
    """The program's `.output` and `.printsize` relations of `model`."""
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
                click.echo("\t".join(escape(field) for field in format_fields(t, types)) if t else "()")
        else:
            write_output(checked, d, rows, out_dir)
