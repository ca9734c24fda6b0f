"""The `ordinance` command: a thin layer over the library.

Each command lives in its own module below this package and is registered
here. Commands never print tracebacks: library errors become one line on
stderr and an exit code (0 ok, 1 a finding such as a blocked request or a
lint error, 2 a usage or runtime error).
"""

from __future__ import annotations

import click

__all__ = ["main", "cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ordinance")
def cli() -> None:
    """ordinance: Datalog policies and a pre-action gate for AI agents.

    Write policy rules, assert facts, check a request before an effect runs,
    and ask why it was blocked.
    """


def _register() -> None:
    # one line per command module; each module defines `command`
    from . import lint

    for module in (lint,):
        cli.add_command(module.command)


def main() -> None:
    _register()
    cli()
