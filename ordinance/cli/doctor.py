"""`ordinance doctor`: check a project's install (Claude Code and the other hosts) and say what to fix."""

from __future__ import annotations

import click

from ..values import escape

__all__ = ["command"]


@click.command(
    "doctor",
    short_help="Check an install: hooks, client, tokens, owner's directory, sandbox, pre-push, server.",
    epilog="""\b
Examples:
  ordinance doctor               the project here
  ordinance doctor myproject
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False, exists=True))
@click.option("--claude", default=None, metavar="PATH", help="The Claude Code binary (default: `claude` on PATH).")
def command(directory: str, claude: str | None) -> None:
    """Check the install `ordinance init --HOST` made in DIRECTORY. For
    Claude Code: the hook is present and fails closed, the client honours
    `onFailure` (2.1.295 or later), the token is reachable, the sandbox is
    on; for Codex, Gemini CLI, Cursor and Copilot CLI: the hook is in the
    host's settings (and what is left to do in the host), its token is
    reachable; for all: the store and tokens are outside the project, git's
    pre-push hook asks the gate, the server is up. One line per check;
    exits 1 if any needs fixing."""
    from pathlib import Path

    from ..hosts.doctor import checks

    found = checks(Path(directory), claude=claude)
    for check in found:
        click.echo(escape(f"{'ok ' if check.ok else 'fix'}  {check.name:<9} {check.detail}"))
    if not all(c.ok for c in found):
        raise click.exceptions.Exit(1)
