"""`ordinance lint FILE...`: parse and check rule files, report every problem.

Exit status: 0 when every file is clean, 1 when any has an error, 2 when a
file cannot be read (or ordinance itself fails). Never shows a traceback.
"""

from __future__ import annotations


import click

from ..diagnostics import Diagnostic, OrdinanceError, Span
from ..rules import ast, check, format_program, parse, read_source, render_diagnostics, sort_diagnostics
from ..rules.loader import decode, flatten, read_bytes
from .common import allowed_includes
from ..values import escape

__all__ = ["command", "lint_file", "expanded_text", "MAX_BYTES", "MAX_SHOWN"]

# Fact lines parse at about half a second per megabyte, rules at about five,
# and the AST takes some 30 bytes of memory per byte of source: the default
# bounds lint to about a gigabyte. --max-bytes raises the limit.
MAX_BYTES = 32_000_000
MAX_SHOWN = 50  # errors printed by default; the count of the rest follows


def _policy_sources(sources: dict[str, str], top: str) -> dict[str, str]:
    """The sources whose lines an error may print: the file linted, the
    stdlib and `.rules` files, never another file an include named."""
    return {f: t for f, t in sources.items() if f == top or f.endswith(".rules")}


def lint_file(
    name: str,
    existential_negation: bool = False,
    max_bytes: int = MAX_BYTES,
    allow_includes: tuple[str, ...] = (),
) -> tuple[list[Diagnostic], dict[str, str]]:
    """Diagnostics of one file and the sources they point into.

    Raises OSError when the file cannot be read."""
    try:  # a bounded read: an endless file (`/dev/zero`) is too large, not read until memory runs out
        data = read_bytes(name, max_bytes)
    except OrdinanceError as exc:
        message = exc.diagnostics[0].message.replace("; the limit is", "; lint reads at most") + " (see --max-bytes)"
        return [Diagnostic("too_large", message, Span(1, 1, 1, 2, name))], {}
    sources = {name: data.decode("utf-8", errors="replace")}
    try:
        text = decode(data, name)
        sources[name] = text
        program = check(parse(text, name), existential_negation=existential_negation, allow_includes=allow_includes)
        found = list(program.warnings)
    except OrdinanceError as e:
        found = list(e.diagnostics)
    except RecursionError:
        found = [Diagnostic("too_deep", "program nests too deeply to analyse", Span(1, 1, 1, 2, name))]
    for file in {d.span.file for d in found if d.span.file} - set(sources):
        text_of = read_source(file)
        if text_of is not None:
            sources[file] = text_of
    return sort_diagnostics(found), sources


def expanded_text(name: str, text: str) -> str:
    """A clean file as the checks read it: includes, components, disjunctions
    and several heads expanded (Soufflé's `--show=transformed-datalog`)."""
    flat = flatten(parse(text, name), allow=allowed_includes())
    return format_program(ast.Program(flat.items))


@click.command(
    "lint",
    epilog="""\b
Examples:
  ordinance lint policy.rules
  ordinance lint rules/*.rules
  ordinance lint big.rules --max-errors 0     every error, not the first 50
  ordinance lint --expanded policy.rules      print it with components expanded
""",
)
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--existential-negation",
    is_flag=True,
    help="Read a variable that occurs in one negated literal only as `some value`.",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=0),
    default=MAX_BYTES,
    show_default=True,
    help="Refuse files larger than this (0: no limit).",
)
@click.option(
    "--max-errors",
    type=click.IntRange(min=0),
    default=MAX_SHOWN,
    show_default=True,
    help="Print at most this many errors, then how many more there are (0: all).",
)
@click.option(
    "--expanded",
    is_flag=True,
    help="Print each clean file as the checks read it: includes, components (`.init`), "
    "disjunctions and several heads expanded into plain declarations and rules.",
)
@click.pass_context
def command(
    ctx: click.Context,
    files: tuple[str, ...],
    existential_negation: bool,
    max_bytes: int,
    max_errors: int,
    expanded: bool,
) -> None:
    """Check rule FILES and report every error, with its source line."""
    status, errors, shown = 0, 0, 0
    for name in files:
        try:
            found, sources = lint_file(name, existential_negation, max_bytes, allowed_includes())
        except OSError as e:
            click.echo(escape(f"error: cannot read `{name}`: {e.strerror or e}"), err=True)
            status = 2
            continue
        except Exception as e:  # a bug in ordinance: one line, never a traceback
            detail = str(e).splitlines()[0] if str(e) else ""
            click.echo(escape(f"error: internal error while linting `{name}`: {type(e).__name__} {detail}"), err=True)
            status = 2
            continue
        count = sum(d.severity != "warning" for d in found)
        if found:
            room = len(found) if not max_errors else max(max_errors - shown, 0)
            if room:
                click.echo(render_diagnostics(found[:room], _policy_sources(sources, name)), nl=False)
            shown += min(room, len(found))
            errors += count
            status = max(status, 1 if count else 0)
        if not count and expanded:
            click.echo(expanded_text(name, sources[name]), nl=False)
    if errors:
        rest = f" ({errors - shown} not shown: --max-errors 0 shows all)" if shown < errors else ""
        click.echo(f"found {errors} error{'s' if errors != 1 else ''}{rest}")
    ctx.exit(status)
