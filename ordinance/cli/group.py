"""The `ordinance` click group: each command lives in its own module of
this package and is registered here (see __init__.py).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any, Sequence

import click

from ..values import escape
from .common import fail
from .deadline import with_deadline

__all__ = ["cli", "COMMANDS", "COMMAND_MODULES"]

# the module of each command: one module per command (or small group of
# commands), each defining `command` (or `commands`, a tuple). Running one
# command imports only its module, so every command name is listed here
# (tests/test_entry_points.py runs each one from the console script).
COMMANDS = {
    "init": ("init",),
    "facts": ("assert", "load"),
    "query": ("query",),
    "check": ("check",),
    "explain": ("why", "why-not"),
    "test": ("test",),
    "lint": ("lint",),
    "log": ("log", "replay"),
    "demo": ("demo",),
    "fuzz": ("fuzz",),
    "export": ("export",),
    "retention": ("purge", "retract"),
    "lease": ("lease",),
    "serve": ("serve",),
    "hook": ("hook",),
    "doctor": ("doctor",),
    "mcp": ("mcp",),
    "run": ("run",),
    "state": ("state",),
    "rehydrate": ("rehydrate",),
    "records": ("records",),
    "audit": ("audit",),
}
COMMAND_MODULES = tuple(COMMANDS)
_MODULE_OF = {name: module for module, names in COMMANDS.items() for name in names}


_show_warning = warnings.showwarning


def _warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    """A warning that carries a diagnostic (an invalid pattern from data) as
    one `warning[CODE]: message` line on stderr, as lint prints it."""
    diagnostic = getattr(message, "diagnostic", None)
    if diagnostic is None:
        _show_warning(message, category, filename, lineno, file, line)
    else:
        click.echo(escape(str(diagnostic)), err=True)


warnings.showwarning = _warning


class OrdinanceGroup(click.Group):
    """A click group whose every error is one line `error[CODE]: message`
    on stderr with exit code 2 (set ORDINANCE_DEBUG=1 for a traceback).

    Running one command imports only its module (`ordinance hook` starts in
    tens of milliseconds); listing the commands imports them all."""

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        _register()
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self._commands and not _registered:
            module = _MODULE_OF.get(cmd_name)
            if module is not None:
                _load(module)
        return self._commands.get(cmd_name)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else 0
        except click.exceptions.Abort:
            click.echo("error[aborted]: interrupted", err=True)
            code = 130
        except Exception as exc:  # every error is one line, never a traceback
            if isinstance(exc, click.UsageError) and type(exc).__name__ == "NoArgsIsHelpError":
                # a bare `ordinance`: the help, on stdout
                click.echo(exc.format_message())
                code = 0
            else:
                code = fail(exc)
        if not standalone_mode:
            return code
        sys.exit(code)


@click.group(cls=OrdinanceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ordinance")
def cli() -> None:
    """ordinance: Datalog policies and a pre-action gate for AI agents.

    Write policy rules, assert facts, check a request before an effect runs,
    and ask why it was blocked.

    \b
    Start here:
      ordinance demo                      the seed scenarios through the gate
      ordinance init myproject            a policy file and an empty store
      ordinance check 'request("a1", "deploy", "prod", "alice", 1).'
    """


_registered = False


def _load(name: str) -> None:
    """Register the commands of one module (a module that fails to import is
    an error, never a command that silently disappears)."""
    module = importlib.import_module(f"{__package__}.{name}")
    for command in getattr(module, "commands", None) or (module.command,):
        if command.name not in COMMANDS[name]:  # a command the table does not name would load only with all the others
            raise RuntimeError(f"command `{command.name}` of module `{name}` is missing from COMMANDS in cli/group.py")
        if command.name not in cli._commands:  # (add_command would read `commands`, registering all)
            cli._commands[str(command.name)] = with_deadline(command)


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    for name in COMMAND_MODULES:
        _load(name)
