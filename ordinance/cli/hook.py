"""`ordinance hook HOST`: an agent host's `command` hook (claude-code, codex,
gemini, cursor, copilot), and git's `pre-push`.

Reads the hook input (JSON) on stdin and prints the answer in the host's
shape (ordinance/hosts/HOST.py). With --server (or ORDINANCE_SERVER) it asks
a running `ordinance serve` at /hooks/HOST (hook_client.py, which answers
such a command line without loading click or this module); without, it
opens the policy and store itself (slow on a large store). Every failure is
the host's fail-closed answer (a deny), with exit status 0 so that the host
reads it, unless --fail-open and the server cannot be reached.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ..diagnostics import OrdinanceError
from ..values import escape
from .hook_client import HOSTS, SERVER_ENV, TIMEOUT_S, TOKEN_ENV, answer, ask_server, failure, token_of

__all__ = ["command"]


def _local(
    body: bytes, agent: str, project: str | None, epoch: int, db: str, policy: str, name: str = "claude-code"
) -> Any:
    from ..hosts import host
    from ..hosts.flow import handle
    from ..serve import Principal, Service
    from .common import load_policy, open_db

    from ..facts import parse_json

    try:  # bounded nesting and integers, as the server reads it
        payload = parse_json(body, "the hook input", malformed="bad_hook_payload")
    except OrdinanceError as exc:
        return host(name).failure(None, f"ordinance: {str(exc)[:300]}")
    program = load_policy(policy)
    with open_db(db, program) as store:
        service = Service(program, store, settle=False)  # one call, then the process exits
        return handle(host(name), service, Principal(agent), payload, project=project, epoch=epoch)


@click.group(
    "hook",
    short_help="Agent runtime hooks (Claude Code, Codex, Gemini CLI, Cursor, Copilot, git pre-push).",
    epilog="""\b
Examples:
  ordinance hook claude-code --server http://127.0.0.1:8377 < payload.json
  ordinance hook gemini --server http://127.0.0.1:8377 --token-file ~/.local/state/ordinance/p/agent.token
""",
)
def command() -> None:
    """Hooks that agent runtimes call before and after a tool runs.

    See `ordinance hook claude-code --help`, and README "Use with Claude Code".
    """


def _host_command(name: str) -> click.Command:
    summary = HOSTS[name]

    @click.command(
        name,
        short_help=f"{summary.split(' (')[0]}'s hook.",
        epilog=f"""\b
Examples:
  ordinance hook {name} --server http://127.0.0.1:8377 < payload.json
  ordinance hook {name} --server unix:/tmp/ordinance.sock --token-file agent.token
  ordinance hook {name} --db ordinance.db --policy policy.rules    in-process, no server
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
    @click.option("--agent", default=name, show_default=True, help="Without --server: the agent of requests.")
    @click.option(
        "--project",
        default=None,
        envvar="CLAUDE_PROJECT_DIR" if name == "claude-code" else None,
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
    def run(
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
        body = sys.stdin.buffer.read()
        if server:
            try:
                token = token_of(token_file, token_env)
            except ValueError as exc:
                out: Any = failure(name, f"ordinance: error[unauthorized]: {exc}", body)
            else:
                out = answer(server, body, token, timeout, fail_open, token_env, name)
        else:
            try:
                out = _local(body, agent, project, epoch, db, policy, name)
            except Exception as exc:  # fail closed: a broken hook never lets a call through
                out = failure(name, f"ordinance: error[hook]: {type(exc).__name__}: {str(exc)[:200]}", body)
        if out is not None:  # None: --fail-open and no server, the host decides
            sys.stdout.buffer.write(json.dumps(out, ensure_ascii=False).encode() + b"\n")

    run.help = f"""Answer one {summary} hook call: its JSON on stdin, the
    answer in its shape on stdout. Before the tool runs: a deny or an ask
    when the policy forbids or flags the call, an allow only when it
    auto-allows it, else no decision (the host's own permission flow
    decides); after: records the call's outcome receipt. Every failure
    denies, with exit status 0 so that the host reads the reason."""
    return run


for _name in HOSTS:
    command.add_command(_host_command(_name))


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
