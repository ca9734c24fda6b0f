"""`ordinance hook claude-code`: Claude Code's `command` hook.

Reads the hook input (JSON) on stdin and prints the answer Claude Code
reads (`hookSpecificOutput.permissionDecision` allow / deny / ask with a
short reason). With --server (or ORDINANCE_SERVER) it asks a running
`ordinance serve` (fast: this module imports only the standard library);
without, it opens the policy and store itself (slow on a large store). If
the server cannot be reached the call is denied, unless --fail-open.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
from typing import Any
from urllib.parse import urlsplit

import click

__all__ = ["command", "ask_server"]


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def ask_server(server: str, body: bytes, token: str | None, timeout: float) -> Any:
    """POST the hook input to `server`'s /hooks/claude-code; the JSON answer.
    `server` is http://host:port or unix:/path/to.sock."""
    if server.startswith("unix:"):
        conn: http.client.HTTPConnection = _UnixConnection(server[5:], timeout)
        path = "/hooks/claude-code"
    else:
        url = urlsplit(server)
        cls = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        conn = cls(url.hostname or "127.0.0.1", url.port, timeout=timeout)
        path = url.path.rstrip("/") + "/hooks/claude-code"
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request("POST", path, body, headers)
        reply = conn.getresponse()
        data = reply.read()
        if reply.status != 200:
            raise OSError(f"the server answered {reply.status}")
        return json.loads(data)
    finally:
        conn.close()


def _deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _local(body: bytes, agent: str, project: str | None, epoch: int, db: str, policy: str) -> Any:
    from ..serve import Principal, Service
    from ..serve.claude_code import handle
    from .common import load_policy, open_db

    program = load_policy(policy)
    with open_db(db, program) as store:
        root = None if project is None else os.path.realpath(project)
        return handle(Service(program, store), Principal(agent), json.loads(body), project=root, epoch=epoch)


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
    envvar="ORDINANCE_SERVER",
    default=None,
    metavar="URL",
    help="A running `ordinance serve`: http://host:port or unix:PATH.",
)
@click.option(
    "--token-env",
    default="ORDINANCE_TOKEN",
    show_default=True,
    metavar="VAR",
    help="The environment variable holding the bearer token.",
)
@click.option("--timeout", default=5.0, show_default=True, help="Seconds to wait for the server.")
@click.option("--fail-open", is_flag=True, help="Let the call through when the server cannot be reached.")
@click.option("--agent", default="claude-code", show_default=True, help="Without --server: the agent of requests.")
@click.option(
    "--project",
    default=None,
    envvar="CLAUDE_PROJECT_DIR",
    metavar="DIR",
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
    try:
        if server:
            try:
                out = ask_server(server, body, os.environ.get(token_env), timeout)
            except (OSError, ValueError, http.client.HTTPException) as exc:
                if fail_open:
                    return
                out = _deny(f"ordinance: error[unreachable]: the gate at {server} did not answer ({exc})")
        else:
            out = _local(body, agent, project, epoch, db, policy)
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        out = _deny(f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}")
    click.echo(json.dumps(out, ensure_ascii=False))
