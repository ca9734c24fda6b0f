"""`ordinance hook claude-code`: Claude Code's `command` hook.

Reads the hook input (JSON) on stdin and prints the answer Claude Code
reads (`hookSpecificOutput.permissionDecision` allow / deny / ask with a
short reason). With --server (or ORDINANCE_SERVER) it asks a running
`ordinance serve` (hook_client.py, which answers such a command line
without loading click or this module); without, it opens the policy and
store itself (slow on a large store). If the server cannot be reached the
call is denied, unless --fail-open.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ..diagnostics import OrdinanceError
from .hook_client import SERVER_ENV, TIMEOUT_S, TOKEN_ENV, answer, deny

__all__ = ["command"]


def _local(body: bytes, agent: str, project: str | None, epoch: int, db: str, policy: str) -> Any:
    from ..facts import parse_json
    from ..serve import Principal, Service
    from ..serve.claude_code import handle
    from .common import load_policy, open_db

    data = parse_json(body, "the hook input")  # bounded nesting and integers, as the server reads it
    program = load_policy(policy)
    with open_db(db, program) as store:
        return handle(Service(program, store), Principal(agent), data, project=project, epoch=epoch)


@click.group(
    "hook",
    short_help="Agent runtime hooks (Claude Code).",
    epilog="""\b
Examples:
  ordinance hook claude-code --server http://127.0.0.1:8377 < payload.json
""",
)
def command() -> None:
    """Hooks that agent runtimes call before and after a tool runs.

    See `ordinance hook claude-code --help`, and README "Use with Claude Code".
    """


@command.command(
    "claude-code",
    epilog="""\b
Examples:
  ordinance hook claude-code --server http://127.0.0.1:8377 < payload.json
  ordinance hook claude-code --server unix:/tmp/ordinance.sock
  ordinance hook claude-code --agent claude-code       in-process, no server
""",
)
@click.option(
    "--server",
    envvar=SERVER_ENV,
    default=None,
    metavar="URL",
    help="A running `ordinance serve`: http://host:port or unix:PATH.",
)
@click.option(
    "--token-env",
    default=TOKEN_ENV,
    show_default=True,
    metavar="VAR",
    help="The environment variable holding the bearer token.",
)
@click.option("--timeout", default=TIMEOUT_S, show_default=True, help="Seconds to wait for the server.")
@click.option("--fail-open", is_flag=True, help="Let the call through when the server cannot be reached.")
@click.option("--agent", default="claude-code", show_default=True, help="Without --server: the agent of requests.")
@click.option(
    "--project",
    default=None,
    envvar="CLAUDE_PROJECT_DIR",
    metavar="DIR",
    type=click.Path(file_okay=False, resolve_path=True),  # one real path: as `init` grants it
    help="Without --server: the project directory (default: the call's cwd).",
)
@click.option("--epoch", default=1, show_default=True, type=int, help="Without --server: the grant epoch.")
@click.option(
    "--db",
    envvar="ORDINANCE_DB",
    default="./ordinance.db",
    show_default=True,
    metavar="PATH|URL",
    help="Without --server: the fact store.",
)
@click.option(
    "--policy",
    envvar="ORDINANCE_POLICY",
    default="./policy.rules",
    show_default=True,
    metavar="FILE",
    help="Without --server: the policy file.",
)
def claude_code(
    server: str | None,
    token_env: str,
    timeout: float,
    fail_open: bool,
    agent: str,
    project: str | None,
    epoch: int,
    db: str,
    policy: str,
) -> None:
    """Answer one Claude Code hook call: its JSON on stdin, the decision on
    stdout (PreToolUse: allow, deny or ask; PostToolUse: records the
    outcome receipt). Every failure denies, with exit status 0 so that
    Claude Code reads the reason."""
    body = sys.stdin.buffer.read()
    if server:
        out = answer(server, body, os.environ.get(token_env), timeout, fail_open)
        if out is not None:
            click.echo(json.dumps(out, ensure_ascii=False))
        return
    try:
        out = _local(body, agent, project, epoch, db, policy)
    except OrdinanceError as exc:  # fail closed, with the error's own code
        out = deny(f"ordinance: {str(exc)[:300]}", body)
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        out = deny(f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)
    click.echo(json.dumps(out, ensure_ascii=False))
