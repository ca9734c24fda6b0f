"""`ordinance doctor`: check a project's Claude Code install and say what to fix."""

from __future__ import annotations

import click

from ..values import escape

__all__ = ["command"]


@click.command(
    "doctor",
    short_help="Check a Claude Code install: hooks, client, token, owner's directory, sandbox, server.",
    epilog="""\b
Examples:
  ordinance doctor               the project here
  ordinance doctor myproject
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False, exists=True))
@click.option("--claude", default=None, metavar="PATH", help="The Claude Code binary (default: `claude` on PATH).")
def command(directory: str, claude: str | None) -> None:
    """Check the install `ordinance init --claude-code` made in DIRECTORY:
    the hook is present and fails closed, the client honours `onFailure`
    (2.1.295 or later), the token is reachable, the store and tokens are
    outside the project, the sandbox is on, git's pre-push hook asks the
    gate, the server is up. One line per check; exits 1 if any needs fixing."""
    from pathlib import Path

    from ..hosts.doctor import checks

    found = checks(Path(directory), claude=claude)
    for check in found:
        click.echo(escape(f"{'ok ' if check.ok else 'fix'}  {check.name:<9} {check.detail}"))
    if not all(c.ok for c in found):
        raise click.exceptions.Exit(1)
