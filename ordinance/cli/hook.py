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

from ..values import escape
from .hook_client import SERVER_ENV, TIMEOUT_S, TOKEN_ENV, answer, ask_server, deny, token_of

__all__ = ["command"]


def _local(
    body: bytes, agent: str, project: str | None, epoch: int, db: str, policy: str, name: str = "claude-code"
) -> Any:
    from ..hosts import host
    from ..hosts.flow import handle
    from ..serve import Principal, Service
    from .common import load_policy, open_db

    program = load_policy(policy)
    with open_db(db, program) as store:
        service = Service(program, store)
        return handle(host(name), service, Principal(agent), json.loads(body), project=project, epoch=epoch)


@click.group(
    "hook",
    short_help="Agent runtime hooks (Claude Code, Codex, Gemini CLI, Cursor, Copilot).",
    epilog="""\b
Examples:
  ordinance hook claude-code --server http://127.0.0.1:8377 < payload.json
""",
)
def command() -> None:
    """Hooks that agent runtimes call before and after a tool runs.

    See `ordinance hook claude-code --help`, and README "Use with Claude Code".
    """


def _hosts() -> None:  # the other hosts' subcommands (hook_hosts.py)
    from .hook_hosts import register

    register(command, _local)


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
@click.option(
    "--token-file",
    default=None,
    metavar="FILE",
    help="A file holding the bearer token (mode 0600), instead of the environment.",
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
    token_file: str | None,
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
        try:
            token = token_of(token_file, token_env)
        except ValueError as exc:
            click.echo(json.dumps(deny(f"ordinance: error[unauthorized]: {exc}", body), ensure_ascii=False))
            return
        out = answer(server, body, token, timeout, fail_open, token_env)
        if out is not None:
            click.echo(json.dumps(out, ensure_ascii=False))
        return
    try:
        out = _local(body, agent, project, epoch, db, policy)
    except Exception as exc:  # fail closed: a broken hook never lets a call through
        out = deny(f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)
    click.echo(json.dumps(out, ensure_ascii=False))


@command.command(
    "pre-push",
    epilog="""\b
Examples (git runs it: .git/hooks/pre-push, installed by `ordinance init`):
  ordinance hook pre-push --server http://127.0.0.1:8377 --token-file ~/.local/state/ordinance/p/agent.token origin URL
  ordinance hook pre-push --db ordinance.db --policy policy.rules origin URL     in-process
""",
)
@click.argument("remote", default="")
@click.argument("url", default="")
@click.option("--server", envvar=SERVER_ENV, default=None, metavar="URL", help="A running `ordinance serve`.")
@click.option("--token-env", default=TOKEN_ENV, show_default=True, metavar="VAR", help="The token's variable.")
@click.option("--token-file", default=None, metavar="FILE", help="A file holding the bearer token.")
@click.option("--timeout", default=TIMEOUT_S, show_default=True, help="Seconds to wait for the server.")
@click.option("--agent", default="claude-code", show_default=True, help="Without --server: the agent.")
@click.option(
    "--project",
    default=None,
    metavar="DIR",
    type=click.Path(file_okay=False, resolve_path=True),
    help="Without --server: the project directory (default: the repository's top level).",
)
@click.option("--epoch", default=1, show_default=True, type=int, help="Without --server: the grant epoch.")
@click.option("--db", envvar="ORDINANCE_DB", default="./ordinance.db", metavar="PATH|URL", help="Without --server.")
@click.option("--policy", envvar="ORDINANCE_POLICY", default="./policy.rules", metavar="FILE", help="Without --server.")
def pre_push(
    remote: str,
    url: str,
    server: str | None,
    token_env: str,
    token_file: str | None,
    timeout: float,
    agent: str,
    project: str | None,
    epoch: int,
    db: str,
    policy: str,
) -> None:
    """git's pre-push hook: ask the gate about the refs git is about to push
    (read from stdin, each with whether it is forced: the remote's old
    commit is not an ancestor of the new one). Exit status 1 refuses the
    push, with the reason on stderr; every failure refuses it."""
    from ..hosts.pre_push import updates

    cwd = os.getcwd()
    body = json.dumps(
        {
            "hook_event_name": "pre-push",
            "remote": remote,
            "url": url,
            "cwd": cwd,
            "updates": updates(sys.stdin.read(), cwd),
        }
    ).encode()
    try:
        if server:
            out: Any = ask_server(server, body, token_of(token_file, token_env), timeout, "/hooks/pre-push")
        else:
            out = _local(body, agent, project or cwd, epoch, db, policy, "pre-push")
    except Exception as exc:  # fail closed: a broken hook never lets a push through
        out = {"decision": "deny", "reason": f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}"}
    if not isinstance(out, dict) or out.get("decision") != "allow":
        reason = out.get("reason") if isinstance(out, dict) else "no answer"
        click.echo(escape(f"ordinance refused this push: {reason}"), err=True)  # ref names are anyone's
        raise click.exceptions.Exit(1)


_hosts()
