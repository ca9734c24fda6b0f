"""`ordinance hook codex|gemini|cursor|copilot`: the other hosts' hooks.

Each reads its host's hook input on stdin, maps it to Claude Code-shaped
calls (ordinance/hosts/), asks the gate about each (a running `ordinance
serve` with --server, or the policy and store in process) and prints the
verdict in its host's shape. Whatever goes wrong is the host's deny, with
exit status 0 (every host reads the answer then; several run the call on
any other status).
"""

from __future__ import annotations

import json
import os
import sys
from types import ModuleType
from typing import Any, Callable

import click

from ..hosts import codex, copilot, cursor, gemini
from ..hosts.shape import escape_reason, verdict
from .hook_client import SERVER_ENV, TIMEOUT_S, TOKEN_ENV, answer

__all__ = ["HOSTS", "register", "respond"]

Local = Callable[[bytes, str, "str | None", int, str, str], Any]

HOSTS: dict[str, tuple[ModuleType, str]] = {
    "codex": (codex, "Codex CLI (Claude-compatible PreToolUse/PostToolUse hooks)"),
    "gemini": (gemini, "Gemini CLI (BeforeTool/AfterTool hooks, a top-level `decision`)"),
    "cursor": (cursor, "Cursor (beforeShellExecution and friends, `permission`)"),
    "copilot": (copilot, "GitHub Copilot CLI (preToolUse, a flat `permissionDecision`)"),
}


def respond(host: ModuleType, body: bytes, ask: Callable[[bytes], Any]) -> dict[str, Any]:
    """The host's answer to its hook input `body`; `ask` is the gate (a
    Claude Code-shaped call in, its answer out)."""
    payload: Any = None
    try:
        payload = json.loads(body)
        return dict(host.reply(verdict([ask(json.dumps(c).encode()) for c in host.requests(payload)]), payload))
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        code = "bad_hook_payload" if isinstance(exc, ValueError) else "hook"
        return dict(host.refuse(escape_reason(f"ordinance: error[{code}]: {exc}"), payload))


def _make(name: str, host: ModuleType, summary: str, local: Local) -> click.Command:
    @click.command(
        name,
        short_help=f"{summary.split(' (')[0]}'s hook.",
        epilog=f"""\b
Examples:
  ordinance hook {name} --server http://127.0.0.1:8377 < payload.json
""",
    )
    @click.option("--server", envvar=SERVER_ENV, default=None, metavar="URL", help="A running `ordinance serve`.")
    @click.option("--token-env", default=TOKEN_ENV, show_default=True, metavar="VAR", help="The token's variable.")
    @click.option("--timeout", default=TIMEOUT_S, show_default=True, help="Seconds to wait for the server.")
    @click.option("--fail-open", is_flag=True, help="Leave the call to the host when the server cannot be reached.")
    @click.option("--agent", default=name, show_default=True, help="Without --server: the agent of requests.")
    @click.option(
        "--project",
        default=None,
        metavar="DIR",
        type=click.Path(file_okay=False, resolve_path=True),
        help="Without --server: the project directory (default: the call's cwd).",
    )
    @click.option("--epoch", default=1, show_default=True, type=int, help="Without --server: the grant epoch.")
    @click.option("--db", envvar="ORDINANCE_DB", default="./ordinance.db", show_default=True, metavar="PATH|URL")
    @click.option("--policy", envvar="ORDINANCE_POLICY", default="./policy.rules", show_default=True, metavar="FILE")
    def run(
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
        body = sys.stdin.buffer.read()
        if server:
            token = os.environ.get(token_env)
            out = respond(host, body, lambda call: answer(server, call, token, timeout, fail_open))
        else:
            out = respond(host, body, lambda call: local(call, agent, project, epoch, db, policy))
        sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode() + b"\n")

    run.help = f"""Answer one {summary} hook call: its JSON on stdin, the
    decision in its shape on stdout. A call the policy permits is left to
    the host's own permission flow; every failure denies (exit status 0)."""
    return run


def register(group: click.Group, local: Local) -> None:
    """Add the hosts' subcommands to `group`; `local` answers a Claude
    Code-shaped call in process (body, agent, project, epoch, db, policy)."""
    for name, (host, summary) in HOSTS.items():
        group.add_command(_make(name, host, summary, local))
