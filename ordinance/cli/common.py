"""What every command shares: options, policy and store opening, facts
written in the rule language, and one-line errors.

`--db` (envvar ORDINANCE_DB, default `./ordinance.db`) is a SQLite path or a
`postgresql://` URL; `--policy` (envvar ORDINANCE_POLICY, default
`./policy.rules`) is the policy file; `--now` is an ISO-8601 instant.
"""

from __future__ import annotations

import contextlib
import os
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

import click

from ..diagnostics import OrdinanceError, diagnostic_of
from ..values import MAX_INSTANT, escape, json_text, parse_instant

if TYPE_CHECKING:  # (imported when used: a command loads only what it needs)
    from rich.table import Table

    from ..facts import Store
    from ..rules.checked import CheckedProgram

__all__ = [
    "DB_ENV",
    "POLICY_ENV",
    "DEFAULT_POLICY",
    "Instant",
    "db_option",
    "policy_option",
    "now_option",
    "json_option",
    "model_options",
    "path_option",
    "load_policy",
    "allowed_includes",
    "INCLUDE_ENV",
    "open_db",
    "now_or_clock",
    "error_line",
    "fail",
    "print_json",
    "print_table",
    "new_table",
    "default_author",
    "progress",
]

DB_ENV = "ORDINANCE_DB"
POLICY_ENV = "ORDINANCE_POLICY"
DEFAULT_DB = "./ordinance.db"
DEFAULT_POLICY = "./policy.rules"

F = TypeVar("F", bound=Callable[..., Any])


class Instant(click.ParamType):
    """An ISO-8601 instant (`2026-08-14T23:00:00Z`; an offset or a bare date
    also work, a time without a zone is read as UTC) to seconds; digits alone
    are seconds since the epoch, as `export` writes a time argument."""

    name = "instant"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if text.isascii() and text.isdigit():
            if int(text) > MAX_INSTANT:
                self.fail(f"`{text:.40}` seconds is past the year 9999", param, ctx)
            return int(text)
        try:
            return parse_instant(text)
        except ValueError:
            pass
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            self.fail(f"`{text}` is not an ISO-8601 instant such as 2026-08-14T23:00:00Z", param, ctx)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return int(dt.timestamp())


def path_option(flag: str, envvar: str, default: str, metavar: str, help: str) -> Callable[[F], F]:
    """An option naming a file or URL, defaulting from `envvar`."""
    return click.option(
        flag, envvar=envvar, default=default, show_default=True, show_envvar=True, metavar=metavar, help=help
    )


db_option = path_option(
    "--db", DB_ENV, DEFAULT_DB, "PATH|URL", "The fact store: a SQLite file path or a postgresql:// URL."
)
policy_option = path_option(
    "--policy", POLICY_ENV, DEFAULT_POLICY, "FILE", "The policy file (rules in the ordinance language)."
)


def now_option(f: F) -> F:
    return click.option(
        "--now",
        type=Instant(),
        default=None,
        help="Evaluation time, ISO-8601 (e.g. 2026-08-14T23:00:00Z) or seconds since the epoch; "
        "default: the current time.",
    )(f)


def model_options(f: F) -> F:
    """`--now`, `--db` and `--policy`: the options of a command that
    evaluates the policy over the store."""
    return now_option(db_option(policy_option(f)))


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def now_or_clock(now: int | None) -> int:
    """`--now`, or the wall clock in whole seconds."""
    return now if now is not None else int(datetime.now(timezone.utc).timestamp())


def load_policy(path: str) -> CheckedProgram:
    """The checked policy at `path`."""
    from ..rules import load
    from ..rules.cache import cached_load

    if not os.path.exists(path):
        raise OrdinanceError(
            f"policy file `{path}` not found (run `ordinance init`, or pass --policy / set {POLICY_ENV})",
            code="no_policy",
        )
    return cached_load(path, load, allow_includes=allowed_includes())


INCLUDE_ENV = "ORDINANCE_INCLUDE_PATH"


def allowed_includes() -> tuple[str, ...]:
    """Directories outside a policy's own tree that its `.include`s may
    name: ORDINANCE_INCLUDE_PATH, separated like PATH."""
    return tuple(d for d in os.environ.get(INCLUDE_ENV, "").split(os.pathsep) if d)


def open_db(url: str, policy: CheckedProgram | None = None, *, create: bool = False) -> Store:
    """The store at `url`, validating writes against `policy`'s schema.
    Only `create=True` (init, assert, load, serve, mcp: the commands that write)
    makes a store that is not there."""
    from ..facts import open_store, schema_of

    return open_store(url, schema_of(policy) if policy is not None else None, create=create)


def print_table(table: Table) -> None:
    """A rich table on stdout; unbounded width when not on a terminal."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(highlight=False, soft_wrap=True, width=1000)
    console.print(table)


def new_table(*columns: str) -> Table:
    """A rich table whose cells are plain text: `add_row` takes strings and
    shows them escaped, never as rich markup (a cell `[/x]` is just that)."""
    from rich.table import Table
    from rich.text import Text

    class PlainTable(Table):
        def add_row(self, *cells: Any, **kw: Any) -> None:
            super().add_row(*(Text(escape(c)) if isinstance(c, str) else c for c in cells), **kw)

    return PlainTable(*columns, show_edge=False, header_style="bold")


def default_author() -> str:
    """The login name, recorded as the author of facts when none is given."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return ""


def print_json(data: Any) -> None:
    click.echo(json_text(data, indent=2))


def _database_error(exc: BaseException) -> bool:
    """An error of a store backend's driver (sqlite3, psycopg)."""
    return any(c.__module__.split(".")[0] in ("sqlite3", "psycopg") for c in type(exc).__mro__)


def error_line(exc: BaseException) -> str:
    """`error[CODE]: message` for any exception, escaped (a message quotes
    what a user wrote): one line, or one per diagnostic of an error that has
    several (a file with two bad lines reports both)."""
    return "\n".join(escape(line) for line in _error_lines(exc))


def _error_lines(exc: BaseException) -> list[str]:
    """A line per diagnostic of an OrdinanceError (`diagnostic_of` for the
    first: the one mapping); the CLI's own words for what else can reach it."""
    if isinstance(exc, OrdinanceError):
        found = (diagnostic_of(exc), *exc.diagnostics[1:])
        return [f"error[{d.code}]: {f'{d.span}: ' if d.span.line else ''}{d.line()}" for d in found]
    return [_error_line(exc)]


def _error_line(exc: BaseException) -> str:
    if isinstance(exc, click.ClickException):
        message = (exc.format_message().splitlines() or [""])[0].rstrip(".")
        message = message[:1].lower() + message[1:]
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        return f"error[usage]: {message}{hint}"
    if _database_error(exc):
        return f"error[store]: {(str(exc).splitlines() or [type(exc).__name__])[0]}"
    if isinstance(exc, OSError):
        name = f" `{exc.filename}`" if exc.filename else ""
        return f"error[io]: {(exc.strerror or str(exc)).lower()}{name}"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"error[internal]: {type(exc).__name__}: {text}".rstrip(": ")


def fail(exc: BaseException) -> int:
    """Print `exc` on stderr (a line per diagnostic); return the exit code (2)."""
    click.echo(error_line(exc), err=True)
    if os.environ.get("ORDINANCE_DEBUG"):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    return 2


@contextlib.contextmanager
def progress(total: int, label: str, least: int = 200) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for a run of `total` steps (at least
    `least`) when stderr is a terminal; yields the function a step calls.
    A run that takes more steps than `total` (shrinking) stops at the total."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if total < least or not console.is_terminal:
        yield lambda: None
        return
    with Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console, transient=True
    ) as bar:
        task = bar.add_task(label, total=total)
        done = 0

        def tick() -> None:
            nonlocal done
            done += 1
            if done <= total:
                bar.advance(task)

        yield tick
