"""Every command runs under a deadline: `--deadline SECONDS` (envvar
ORDINANCE_DEADLINE, default 10; 0 for none).

A one-shot command (check, query, why, log, ...) gets a watchdog for the
whole run: a little past the deadline (`backstop`) it stops with
`error[limit_exceeded]`, and a
write it was in the middle of rolls back (the store's transaction never
commits half a batch). Every evaluation a command starts is also bounded by
the time left, inside the engine, so the gate denies with `limit_exceeded`
as data instead of being cut off. Commands that walk many items (replay,
fuzz, test, demo, load, export, lint) bound each evaluation by the deadline
and have no watchdog unless `--deadline` / ORDINANCE_DEADLINE is given; the
servers (serve, mcp) never have one, `--deadline` bounds their evaluations.
`run` evaluates the user's own program as Soufflé does: no deadline unless
one is given (its tuple limit still holds).
"""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import threading
import time
from typing import TYPE_CHECKING, Any, Iterator

import click

from ..diagnostics import Diagnostic, LimitExceeded

if TYPE_CHECKING:
    from ..engine import Limits

__all__ = [
    "DEADLINE_ENV",
    "DEFAULT_DEADLINE_S",
    "MAX_DEADLINE_S",
    "Seconds",
    "backstop",
    "BATCH_COMMANDS",
    "SERVERS",
    "UNBOUNDED",
    "with_deadline",
    "limits",
    "served_limits",
]

DEADLINE_ENV = "ORDINANCE_DEADLINE"
DEFAULT_DEADLINE_S = 10.0
MAX_DEADLINE_S = 1e7  # about four months: longer is no deadline, which is 0
BATCH_COMMANDS = frozenset({"replay", "fuzz", "test", "demo", "load", "export", "lint"})
# long-running services: never a whole-run deadline (`--deadline` bounds each evaluation)
SERVERS = frozenset({"serve", "mcp"})
# a program's own evaluation, not a decision: no deadline unless given
UNBOUNDED = frozenset({"run"})

_state = threading.local()  # the running command's deadline (monotonic) and per-evaluation seconds


def limits() -> Limits:
    """The engine limits of an evaluation started now: its deadline is the
    time left (or, for batch commands, the per-evaluation deadline)."""
    from ..engine import Limits  # here: importing the engine costs a hook's start-up

    ends_at: float | None = getattr(_state, "ends_at", None)
    each: float | None = getattr(_state, "each", DEFAULT_DEADLINE_S)
    if ends_at is not None:
        return Limits(deadline=max(ends_at - time.monotonic(), 0.001))
    return Limits(deadline=each)


def served_limits() -> Limits | None:
    """The limits of each request a server (`serve`, `mcp`) evaluates: the
    per-evaluation deadline its --deadline gave, else None (the gate's own)."""
    from ..engine import Limits

    return Limits(deadline=_state.each) if getattr(_state, "served", False) else None


def backstop(seconds: float) -> float:
    """When the watchdog of a `seconds` deadline rings: a quarter later, at
    least a second (a denial still has to be logged and printed)."""
    return seconds + max(seconds / 4, 1.0)


def _expired(seconds: float) -> LimitExceeded:
    return LimitExceeded(
        [
            Diagnostic(
                "limit_exceeded",
                f"limit exceeded: deadline of {seconds:g} seconds passed "
                f"(set --deadline or {DEADLINE_ENV}; 0 for none)",
            )
        ]
    )


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    """Raise LimitExceeded in the main thread after `seconds` (no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise _expired(seconds)

    previous = signal.signal(signal.SIGALRM, ring)
    # a backstop: the engine stops itself at the deadline; the watchdog
    # rings later, for what no limit inside the engine covers, leaving the
    # command time to log and print the decision the deadline cut short
    signal.setitimer(signal.ITIMER_REAL, backstop(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Seconds(click.ParamType):
    """A deadline: finite seconds from 0 to MAX_DEADLINE_S (`nan`, `inf` and
    `1e309` are usage errors, not a timer the platform cannot set)."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or not 0 <= seconds <= MAX_DEADLINE_S:
            self.fail(f"{value!r} is not a number of seconds from 0 to {MAX_DEADLINE_S:g}", param, ctx)
        return seconds


def _reset() -> None:
    _state.served = False
    _state.ends_at = None
    _state.each = DEFAULT_DEADLINE_S


def with_deadline(command: click.Command) -> click.Command:
    """Add `--deadline` to `command` and run its callback under it."""
    batch = command.name in BATCH_COMMANDS
    default_text = "none for the whole run; 10 per evaluation" if batch or command.name in SERVERS else "10"
    if command.name in UNBOUNDED:
        default_text = "none"
    command.params.append(
        click.Option(
            ["--deadline"],
            type=Seconds(),
            default=None,
            envvar=DEADLINE_ENV,
            show_envvar=True,
            metavar="SECONDS",
            show_default=default_text,
            help="Stop with error[limit_exceeded] after this many seconds (0: no deadline).",
        )
    )
    callback = command.callback
    if callback is None:
        return command

    @functools.wraps(callback)
    def run(*args: Any, deadline: float | None = None, **kwargs: Any) -> Any:
        if command.name in SERVERS:
            _state.each = (deadline or None) if deadline is not None else DEFAULT_DEADLINE_S
            _state.served = deadline is not None
            return callback(*args, **kwargs)
        if command.name in UNBOUNDED and deadline is None:
            _state.each = None
            try:
                return callback(*args, **kwargs)
            finally:
                _reset()
        seconds = deadline if deadline is not None or batch else DEFAULT_DEADLINE_S
        _state.each = (seconds or None) if deadline is not None else DEFAULT_DEADLINE_S
        _state.ends_at = None if not seconds else time.monotonic() + seconds
        if isinstance(command, click.Group):  # its subcommand runs after this callback: bound it until the end
            context = click.get_current_context()
            if seconds:
                context.with_resource(_watchdog(seconds))
            context.call_on_close(_reset)
            return callback(*args, **kwargs)
        try:
            with _watchdog(seconds) if seconds else contextlib.nullcontext():
                return callback(*args, **kwargs)
        finally:
            _reset()

    command.callback = run
    return command
