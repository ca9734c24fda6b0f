"""`ordinance init`: a project directory with a policy file and an empty store."""

from __future__ import annotations

import hashlib
import os
import shlex
from pathlib import Path
from typing import Any

import click

from ..diagnostics import OrdinanceError, StoreError
from ..gate import Layers
from ..values import escape
from ..hosts.setup import SETUPS, Setup, command_for, merged, settings_for
from .common import load_policy, open_db

__all__ = [
    "command",
    "POLICY_TEMPLATE",
    "CLAUDE_CODE_POLICY",
    "settings_for",
    "merged",
    "owner_home",
    "project_port",
    "install_pre_push",
]

POLICY_TEMPLATE = """\
// policy.rules: the rules the gate applies before any action runs.
// `ordinance lint` checks this file; `ordinance test` runs its test blocks.

// the continuity library: claims, grants, epochs, leases, owner stops,
// receipts, tombstones, and the gate's `permit` / `forbid` relations
.include "continuity"

// an example rule of your own: while a scope is frozen, nothing acts in it.
// A request is allowed iff some permit(A) holds and no forbid(A, Code, Detail) does.
.decl freeze(scope: symbol, until: time)
forbid(A, "frozen", S) :- request_scope(A, S), freeze(S, Until), $now < Until.

test "a freeze blocks actions in its scope until it ends" {
  grant("alice", "prod", 1).
  freeze("prod", 2026-12-27T00:00:00Z).
  request("a1", "deploy", "prod", "alice", 1). request_scope("a1", "prod").
  now 2026-12-24T12:00:00Z.
  expect permit("a1").
  expect forbid("a1", "frozen", "prod").
}
"""


CLAUDE_CODE_POLICY = """\
// policy.rules: the gate between Claude Code and what its tools do.
// `ordinance serve` answers Claude Code's hooks with this policy; every tool
// call is a request (see the stdlib module "tools" for the facts it carries).
// A permitted call goes on to Claude Code's own permissions (its prompt, its
// rules, its sandbox); `auto_allow(A)` would skip them, and this policy has none.
.include "continuity"
.include "tools"

// the agent acts under a grant on the project directory (`ordinance init
// --claude-code` stores it); the owner revokes or stops it there.

// the owner's directory: the store, the tokens, this policy (`ordinance init`
// appends `owner_home("...")`); nothing the agent runs reads or writes there
.decl owner_home(dir: symbol)
forbid(A, "owner-controls", P) :- request_path(A, P), owner_home(H), (P = H ; starts_with(cat(H, "/"), P)).
forbid(A, "owner-controls", P) :- request_write(A, P), hook_settings(P).
forbid(A, "owner-controls", C) :- request_word(A, N, 0, W), match("(.*/)?ordinance", W), request_command(A, N, C).
forbid(A, "owner-controls", C) :- request_word(A, N, 0, W), match("(.*/)?python[0-9.]*", W),
                                  request_word(A, N, _, "-m"), request_word(A, N, _, M),
                                  match("ordinance([.].*)?", M), request_command(A, N, C).

// the hosts' hook settings (`ordinance init --HOST` writes them): an agent editing
// them would switch the gate off
.decl hook_settings(path: symbol)
hook_settings(P) :- request_write(_, P), match(".*/[.]claude/settings([.]local)?[.]json", P).
hook_settings(P) :- request_write(_, P), match(".*/[.](codex/(hooks[.]json|config[.]toml)|gemini/settings[.]json)", P).
hook_settings(P) :- request_write(_, P), match(".*/[.](cursor/hooks[.]json|github/hooks/.*)", P).

// no force push to main, however it is spelled (`--force-w`, `-uf`, `+main`,
// `HEAD:main`, `heads/main`, `:main`, behind `cd`, `bash -c`, `env -S`,
// `$(...)`): the shell's early, explained layer. A forced push whose branch
// the shell cannot name (`HEAD`, `@`, `--all`, `--mirror`, no refspec) asks.
// The git pre-push hook `init` installs refuses it at the effect, with the refs
// git really pushes.
.decl protected(branch: symbol)
protected("main"). protected("master").
forbid(A, "force-push-main", C) :- request_push(A, N, B, 1), protected(B), request_command(A, N, C).
flag(A, "force-push", C) :- request_push(A, N, B, 1), (B = "HEAD" ; B = "*"), request_command(A, N, C).
ask_code("force-push").

// nothing that would switch that guard off: `--no-verify`, `git -c`,
// hooks or push config set, the hooks or the config edited
forbid(A, "effect-guard", C) :- request_git_option(A, N, "no-verify"), request_command(A, N, C).
forbid(A, "effect-guard", C) :- request_git_global(A, N, O), (O = "-c" ; O = "--config-env"), request_command(A, N, C).
forbid(A, "effect-guard", K) :- request_git_config(A, _, K),
                                match("core[.]hookspath|alias[.].*|remote[.].*[.](push|mirror)|push[.].*", K).
forbid(A, "effect-guard", P) :- request_write(A, P), match("(.*/)?[.]git/(hooks(/.*)?|config)", P).

// no writes outside the project: Write, Edit, and the shell's redirections,
// `cp`, `mv`, `tee`, `sed -i`, `dd of=`, `rm`, `ln`, ... (symlinks followed)
.decl sink(path: symbol)
sink("/dev/null"). sink("/dev/stdout"). sink("/dev/stderr"). sink("/dev/tty").
forbid(A, "outside-project", P) :- request_write(A, P), outside_project(A, P), !sink(P).

// what the shell reading cannot resolve asks the user: an expansion where a
// command or a file written is named, a launcher, inline code, `| sh`, `eval`,
// an unknown program given git push's words with a force (a copy of git?)
flag(A, "unresolved", cat(W, ": ", C)) :- request_unresolved(A, N, W), request_command(A, N, C).
flag(A, "unresolved", W) :- request_unresolved(A, -1, W).
ask_code("unresolved").

// the owner's stop halts everything, until a resume at a newer epoch:
//   ordinance assert 'stop("everything", 2026-12-01T00:00:00Z).'
//   ordinance assert 'resume("everything", 2).' 'grant("claude-code", "/p", 2).'   (serve --epoch 2)
.decl resumed_everything(a: symbol)
resumed_everything(A) :- request(A, _, _, _, E), first_resume("everything", M), E >= M.
forbid(A, "owner-stop", "everything") :- request(A, _, _, _, _), stop("everything", At), At <= $now,
                                         !resumed_everything(A).

// fetching from the web asks the user first
flag(A, "web-fetch", U) :- request_tool(A, "WebFetch"), request_input(A, "url", U).
ask_code("web-fetch").

// so does writing a secret: an .env file or a key, anywhere in the project
flag(A, "secret-file", P) :- request_write(A, P), (glob("**/.env*", P) ; glob("**/*.pem", P)).
ask_code("secret-file").

test "a force push to main is refused, however it is wrapped" {
  grant("claude-code", "/p", 1).
  request("a1", "Bash", "/p", "claude-code", 1). request_scope("a1", "/p").
  request_command("a1", 1, "git push -f origin main"). request_push("a1", 1, "main", 1).
  request("a2", "Bash", "/p", "claude-code", 1). request_scope("a2", "/p").
  request_command("a2", 0, "git push origin feature"). request_push("a2", 0, "feature", 0).
  request("a3", "Bash", "/p", "claude-code", 1). request_scope("a3", "/p").
  request_command("a3", 0, "git push -f origin feature"). request_push("a3", 0, "feature", 1).
  now 2026-12-01T12:00:00Z.
  expect forbid("a1", "force-push-main", "git push -f origin main").
  expect permit("a2").
  expect not forbid("a2", "force-push-main", "git push origin feature").
  expect not forbid("a3", "force-push-main", "git push -f origin feature").
}

test "writing a secret asks first" {
  grant("claude-code", "/p", 1).
  request("a1", "Edit", "/p/src/.env.local", "claude-code", 1). request_scope("a1", "/p").
  request_tool("a1", "Edit"). request_write("a1", "/p/src/.env.local"). request_project("a1", "/p").
  request("a2", "Write", "/p/src/env.py", "claude-code", 1). request_scope("a2", "/p").
  request_tool("a2", "Write"). request_write("a2", "/p/src/env.py"). request_project("a2", "/p").
  now 2026-12-01T12:00:00Z.
  expect permit("a1").
  expect flag("a1", "secret-file", "/p/src/.env.local").
  expect not flag("a2", "secret-file", "/p/src/env.py").
}

test "the owner's stop halts everything until a resume at a newer epoch" {
  grant("claude-code", "/p", 1). grant("claude-code", "/p", 2).
  stop("everything", 2026-12-01T00:00:00Z). resume("everything", 2).
  request("a1", "Read", "/p/x", "claude-code", 1). request_scope("a1", "/p"). request_tool("a1", "Read").
  request("a2", "Read", "/p/x", "claude-code", 2). request_scope("a2", "/p"). request_tool("a2", "Read").
  now 2026-12-01T12:00:00Z.
  expect forbid("a1", "owner-stop", "everything").
  expect not forbid("a2", "owner-stop", "everything").
}

test "the owner's directory is out of reach" {
  grant("claude-code", "/p", 1). owner_home("/home/me/.local/state/ordinance/p").
  request("a1", "Bash", "/p", "claude-code", 1). request_scope("a1", "/p").
  request_path("a1", "/home/me/.local/state/ordinance/p/tokens.toml").
  request("a2", "Bash", "/p", "claude-code", 1). request_scope("a2", "/p").
  request_command("a2", 0, "ordinance assert x"). request_word("a2", 0, 0, "ordinance").
  now 2026-12-01T12:00:00Z.
  expect forbid("a1", "owner-controls", "/home/me/.local/state/ordinance/p/tokens.toml").
  expect forbid("a2", "owner-controls", "ordinance assert x").
}
"""


def owner_home(project: Path) -> Path:
    """The owner's directory of a project: $XDG_STATE_HOME (or
    ~/.local/state)/ordinance/NAME-HASH, outside the project."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "ordinance" / f"{project.name}-{_hash(project)[:8]}"


def _hash(project: Path) -> str:
    return hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()


def project_port(project: Path) -> int:
    """A port of the project's own (20000-39999, from its path): another
    project's gate never answers this one's hooks."""
    return 20000 + int(_hash(project)[:8], 16) % 20000


def _private(path: Path, text: str) -> None:
    """`text` into `path`, readable by its owner only from the start."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    path.chmod(0o600)


PRE_PUSH = """#!/bin/sh
# ordinance: git asks the gate about the refs it pushes (installed by `ordinance init`)
input=$(cat)
printf '%s\\n' "$input" | {command} "$@" || exit 1
if [ -x "$0.local" ]; then printf '%s\\n' "$input" | "$0.local" "$@"; fi
"""


def install_pre_push(root: Path, command: str) -> str:
    """git's pre-push hook in the repository at `root`, asking the gate with
    `command` (an existing hook of the user's moves to pre-push.local and
    runs after ours); what was done, for the user."""
    hooks = root / ".git" / "hooks"
    if not (root / ".git").is_dir():
        return f"no git repository in {root}: run `git init` and this command again to install the pre-push hook"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "pre-push"
    note = ""
    if hook.exists() and "ordinance: git asks the gate" not in hook.read_text(errors="replace"):
        hook.replace(hooks / "pre-push.local")
        note = " (your own hook moved to pre-push.local and runs after it)"
    hook.write_text(PRE_PUSH.format(command=command), encoding="utf-8")
    hook.chmod(0o755)
    return f"installed {hook}: every push asks the gate with the refs git really pushes{note}"


def _principals(tokens: Path, hosts: list[str]) -> dict[str, str]:
    """The names and tokens of an existing tokens.toml; a host's principal
    there must be an agent's (not an owner's) with a token."""
    import tomllib

    try:
        data = tomllib.loads(tokens.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise OrdinanceError(
            f"`{tokens}` is not a tokens file: fix or remove it, then run this again", code="bad_tokens"
        ) from None
    found = [p for p in data.get("principal", []) if isinstance(p, dict) and "name" in p]
    for p in found:
        if p["name"] in hosts and (p.get("owner") or not p.get("token")):
            raise OrdinanceError(
                f"principal `{p['name']}` in `{tokens}` is an owner or has no token: the agent's token "
                "cannot be its; rename it, then run this again",
                code="bad_tokens",
            )
    return {str(p["name"]): str(p["token"]) for p in found if p.get("token")}


def _settings(root: Path, setup: Setup, ours: dict[str, Any]) -> str:
    """`ours` merged into the host's settings file under `root` (an existing
    one backed up first, never replaced); what was done, for the user."""
    import json

    settings = root / setup.path
    settings.parent.mkdir(parents=True, exist_ok=True)
    existing: Any = {}
    backup = None
    if settings.exists():
        text = settings.read_text(encoding="utf-8")
        existing = json.loads(text)  # _agents read every file before writing any
        backup = settings.with_name(settings.name + ".bak")
        n = 1
        while backup.exists():
            backup, n = settings.with_name(f"{settings.name}.bak{n}"), n + 1
        backup.write_text(text, encoding="utf-8")
    settings.write_text(json.dumps(merged(existing, ours, setup.host), indent=2) + "\n", encoding="utf-8")
    events = ", ".join(ours["hooks"])
    return (f"merged into {settings} (yours kept in {backup.name})" if backup else f"created {settings}") + (
        f": hooks {events} run `ordinance hook {setup.host}`"
    )


def _agents(root: Path, hosts: list[str], force: bool, home_dir: str | None, port: int | None) -> None:
    """The owner's directory (policy, tokens, each agent's token file, the
    store) outside the project, each host's agent granted the project, each
    host's hook settings merged into its file, git's pre-push hook. An
    existing owner's directory is added to: its policy kept (unless
    --force), its principals and tokens kept, the new hosts' added."""
    import json
    import secrets

    from .common import default_author

    root.mkdir(parents=True, exist_ok=True)
    project = root.resolve()
    home = Path(home_dir).expanduser() if home_dir else owner_home(project)
    home = home.resolve()
    if home == project or str(home).startswith(str(project) + os.sep):
        raise OrdinanceError(
            f"the owner's directory `{home}` is inside the project: the agent would reach it", code="home_in_project"
        )
    port = project_port(project) if port is None else port
    policy, tokens = home / "policy.rules", home / "tokens.toml"
    settings = [SETUPS[h] for h in hosts]
    for s in settings:  # every settings file readable before anything is written
        path = root / s.path
        if path.exists():
            try:
                json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                raise OrdinanceError(
                    f"`{path}` is not JSON: fix it, then run this again", code="bad_settings"
                ) from None
    existed = tokens.exists()
    have = _principals(tokens, hosts) if existed else {}
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    echo = lambda text: click.echo(escape(text))  # noqa: E731 - paths are the user's: escaped
    echo(f"the owner's directory {home} (mode 0700), outside the project:")
    if policy.exists() and not force:
        echo(f"  {policy}: kept (--force writes the example policy over it)")
    else:
        policy.write_text(CLAUDE_CODE_POLICY + f"\nowner_home({json.dumps(str(home))}).\n", encoding="utf-8")
        echo(
            f"  {policy}: no force push to main, no writes outside the project, the owner's controls and the "
            "hosts' settings out of reach, unresolved shell commands ask, the owner's stop halts everything"
        )
    owner = default_author() or "owner"
    owner = owner if owner not in HOST_FLAGS else "owner"  # the owner is never an agent's principal
    text = (
        tokens.read_text(encoding="utf-8") if existed else "# principals of `ordinance serve`: keep this file private\n"
    )
    if not existed:
        text += f'[[principal]]\nname = {json.dumps(owner)}\nowner = true\ntoken = "{secrets.token_urlsafe(24)}"\n'
    added = [h for h in hosts if not have.get(h)]
    for h in added:
        have[h] = secrets.token_urlsafe(24)
        text += f'\n[[principal]]\nname = "{h}"\ntoken = "{have[h]}"\n'
    _private(tokens, text)
    token_files = {h: home / f"{h}.token" for h in hosts}
    for h, path in token_files.items():
        _private(path, have[h] + "\n")
    echo(
        f"  {tokens}: "
        + (f"principals {', '.join(f'`{h}`' for h in added)} added" if added else "kept")
        + f"; {', '.join(p.name for p in token_files.values())}: each agent's token (0600)"
    )
    program = load_policy(str(policy))
    with open_db(str(home / "ordinance.db"), program, create=True) as store:
        revision = store.assert_facts(
            [("grant", (h, str(project), 1)) for h in hosts],
            source="init",
            author=owner,
            layer=Layers.of(program).default,
        )
    echo(
        f"  {home / 'ordinance.db'}: granted {', '.join(f'`{h}`' for h in hosts)} the project {project} at epoch 1 "
        f"(revision {revision})"
    )
    for s in settings:
        echo(_settings(root, s, settings_for(port, str(token_files[s.host]), str(home), str(project), s.host)))
        if s.host == "claude-code":
            echo("  permissions.deny and the sandbox keep Claude Code out of the owner's directory")
        if s.note:
            echo(f"  {s.note}")
    echo(install_pre_push(root, command_for("pre-push", port, str(token_files[hosts[0]]))))
    echo(
        f"next: ordinance serve --tokens {shlex.quote(str(tokens))} --db {shlex.quote(str(home / 'ordinance.db'))} "
        f"--policy {shlex.quote(str(policy))} --project {shlex.quote(str(project))} --port {port}"
    )
    echo(f"then: ordinance doctor {shlex.quote(str(root))}   (checks the install and says what to fix)")


HOST_FLAGS = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "cursor": "Cursor",
    "copilot": "GitHub Copilot CLI",
}


def _host_options(f: Any) -> Any:
    for host, title in reversed(HOST_FLAGS.items()):
        f = click.option(
            f"--{host}",
            host.replace("-", "_"),
            is_flag=True,
            help=f"A gate for {title}: the owner's directory, {SETUPS[host].path}, git's pre-push hook.",
        )(f)
    return f


@click.command(
    "init",
    short_help="Create a project: policy.rules and an empty store.",
    epilog="""\b
Examples:
  ordinance init myproject && cd myproject
  ordinance init .                    here
  ordinance init --claude-code .      a gate for Claude Code's hooks
  ordinance init --codex --gemini .   one gate for Codex CLI and Gemini CLI
  ordinance init --claude-code . --home ~/gates/p --port 9000
  ordinance init . --db postgresql://gate@db/ordinance   the store's tables there
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing policy.rules (an existing store is kept).")
@_host_options
@click.option(
    "--db",
    default=None,
    metavar="PATH|URL",
    help="Make the store here (a SQLite path or a postgresql:// URL) instead of DIRECTORY/ordinance.db.",
)
@click.option(
    "--home",
    default=None,
    metavar="DIR",
    help="With a host: the owner's directory (default: $XDG_STATE_HOME/ordinance/NAME-HASH).",
)
@click.option("--port", default=None, type=int, help="With a host: the gate's port (default: from the path).")
def command(directory: str, force: bool, db: str | None, home: str | None, port: int | None, **hosts: bool) -> None:
    """Create DIRECTORY with policy.rules (the stdlib, an example rule and a
    test block) and an empty SQLite store, ordinance.db.

    Commands run inside DIRECTORY find both by default (--policy and --db).
    With a host (--claude-code, --codex, --gemini, --cursor, --copilot, one
    or several) the policy, the tokens and the store go to the owner's
    directory outside the project (--home), the policy reads the host's
    tool calls (no force push to main, no writes outside the project, the
    owner's controls out of reach, the owner's stop halts everything), the
    host's hooks are merged into its settings file in the project (the old
    file backed up; for Claude Code also permission rules and its sandbox),
    each host's agent gets its own principal, token file (0600) and grant on
    the project directory, and git's pre-push hook asks the gate. Run again
    with another host, it adds that host to the same owner's directory.
    """
    root = Path(directory)
    chosen = [h for h in HOST_FLAGS if hosts.get(h.replace("-", "_"))]
    if chosen:
        if db is not None:
            raise click.UsageError("--db is not for a host's gate, whose store is in the owner's directory")
        _agents(root, chosen, force, home, port)
        return
    if home is not None or port is not None:
        raise click.UsageError("--home and --port are for a host's gate (--claude-code, --codex, ...)")
    policy = root / "policy.rules"
    if policy.exists() and not force:
        raise OrdinanceError(f"`{policy}` already exists (use --force to overwrite it)", code="exists")
    root.mkdir(parents=True, exist_ok=True)
    replaced = policy.exists()
    policy.write_text(POLICY_TEMPLATE, encoding="utf-8")
    program = load_policy(str(policy))
    url = str(root / "ordinance.db") if db is None else db
    shown = url if "://" not in url else "the --db store"  # a URL may hold a password
    try:  # an existing store has its tables (a file or a database that does not is no store yet)
        open_db(url, None, create=False).close()
        existed = True
    except StoreError as err:
        if err.code != "no_store":
            raise
        existed = False
    with open_db(url, program, create=True) as store:
        revision = store.revision()
    what = "overwrote" if replaced else "created"
    click.echo(escape(f"{what} {policy}: the continuity stdlib, an example rule and a test block"))
    if existed:
        click.echo(escape(f"kept {shown}: the existing store, untouched (revision {revision})"))
    else:
        click.echo(escape(f"created {shown}: an empty store (revision {revision})"))
    if db is not None:
        click.echo("other commands find it with the same --db, or ORDINANCE_DB")
    if root.resolve() != Path.cwd().resolve():
        click.echo(escape(f"next: cd {directory} && ordinance test"))
    else:
        click.echo("next: ordinance test")
