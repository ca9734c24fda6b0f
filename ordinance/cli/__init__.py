"""The `ordinance` command: a thin layer over the library.

Each command lives in its own module below this package and is registered
by group.py. Commands never print tracebacks: library errors become one
line on stderr and an exit code (0 ok, 1 a finding such as a blocked request
or a lint error, 2 a usage or runtime error).

Importing this package loads nothing else: `ordinance hook HOST --server
URL` (claude-code, codex, gemini, cursor, copilot), which the host runs once
per tool call, asks the server with the standard library alone
(hook_client.py) and never imports click or the library; every other
command line goes to the click group.
"""

from __future__ import annotations

import sys

__all__ = ["main", "cli", "COMMAND_MODULES"]


def main() -> None:
    if sys.argv[1:2] == ["hook"] and len(sys.argv) > 2:
        from .hook_client import HOSTS, fast

        if sys.argv[2] in HOSTS:
            fast(sys.argv[2], sys.argv[3:])  # exits, unless the command line needs click (no server, other options)
    from .group import cli

    cli()


def __getattr__(name: str) -> object:  # `cli`, `COMMAND_MODULES`: the click group, loaded when first asked for
    if name in ("cli", "COMMAND_MODULES"):
        from . import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
