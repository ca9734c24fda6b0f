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
forbid(A, "owner-controls", P) :- request_write(A, P), match(".*/[.]claude/settings([.]local)?[.]json", P).
forbid(A, "owner-controls", C) :- request_word(A, N, 0, W), match("(.*/)?ordinance", W), request_command(A, N, C).
forbid(A, "owner-controls", C) :- request_word(A, N, 0, W), match("(.*/)?python[0-9.]*", W),
                                  request_word(A, N, _, "-m"), request_word(A, N, _, M),
                                  match("ordinance([.].*)?", M), request_command(A, N, C).

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
// command or a file written is named, a launcher, inline code, `| sh`, `eval`
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


HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied")


def _hook(event: str, command: str) -> dict[str, object]:
    """One hook entry of the settings: the command hook asking the server.
    PreToolUse fails closed in Claude Code too (`onFailure: block`, 2.1.295
    or later): a hook that cannot start (no `ordinance` on PATH) or times out
    blocks the call instead of letting it through; the hook itself denies
    when the server cannot be reached."""
    hook: dict[str, object] = {"type": "command", "timeout": 10, "command": command}
    if event == "PreToolUse":
        hook["onFailure"] = "block"
    return {"matcher": "*", "hooks": [hook]}


def settings_for(port: int, token_file: str, home: str, project: str) -> dict[str, Any]:
    """What `init --claude-code` puts into .claude/settings.json: the hooks,
    permission rules and sandbox settings that keep the agent out of the
    owner's directory, the settings and git's hooks (`//` starts an absolute
    path in both Claude Code's permission rules and its sandbox paths)."""
    command = f"ordinance hook claude-code --server http://127.0.0.1:{port} --token-file {shlex.quote(token_file)}"
    owner = f"/{home}/**"
    guarded = [
        f"/{project}/.claude/settings.json",
        f"/{project}/.claude/settings.local.json",
        f"/{project}/.git/hooks/**",
    ]
    return {
        "hooks": {event: [_hook(event, command)] for event in HOOK_EVENTS},
        "permissions": {
            "deny": [f"Read({owner})", f"Edit({owner})", "Bash(ordinance *)"] + [f"Edit({p})" for p in guarded]
        },
        "sandbox": {
            "enabled": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyRead": [f"/{home}"], "denyWrite": [f"/{home}"] + guarded},
        },
    }


def _ours(entry: Any) -> bool:
    return isinstance(entry, dict) and any(
        isinstance(h, dict) and "ordinance hook claude-code" in str(h.get("command", ""))
        for h in entry.get("hooks", [])
    )


def merged(existing: Any, ours: dict[str, Any]) -> dict[str, Any]:
    """`ours` merged into the user's settings: their keys, hooks and rules
    kept; our hook entries replace our earlier ones; lists unioned."""
    out = dict(existing) if isinstance(existing, dict) else {}
    for key, value in ours.items():
        have = out.get(key)
        if key == "hooks":
            hooks = dict(have) if isinstance(have, dict) else {}
            for event, entries in value.items():
                kept = [e for e in hooks.get(event, []) if not _ours(e)] if isinstance(hooks.get(event), list) else []
                hooks[event] = kept + entries
            out[key] = hooks
        elif isinstance(value, dict):
            out[key] = merged(have, value)
        elif isinstance(value, list):
            old = have if isinstance(have, list) else []
            out[key] = old + [v for v in value if v not in old]
        else:
            out[key] = value
    return out


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


def _claude_code(root: Path, force: bool, home_dir: str | None, port: int | None) -> None:
    """The owner's directory (policy, tokens, the agent's token file, the
    store) outside the project, the agent's grant on the project, Claude
    Code's settings merged into .claude/settings.json, git's pre-push hook."""
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
    policy, tokens, token_file = home / "policy.rules", home / "tokens.toml", home / "agent.token"
    for path in (policy, tokens):
        if path.exists() and not force:
            raise OrdinanceError(f"`{path}` already exists (use --force to overwrite it)", code="exists")
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o700)
    policy.write_text(CLAUDE_CODE_POLICY + f"\nowner_home({json.dumps(str(home))}).\n", encoding="utf-8")
    owner = default_author() or "owner"
    agent_token = secrets.token_urlsafe(24)
    _private(
        tokens,
        "# principals of `ordinance serve`: keep this file private\n"
        f'[[principal]]\nname = "{owner}"\nowner = true\ntoken = "{secrets.token_urlsafe(24)}"\n\n'
        f'[[principal]]\nname = "claude-code"\ntoken = "{agent_token}"\n',
    )
    _private(token_file, agent_token + "\n")
    program = load_policy(str(policy))
    with open_db(str(home / "ordinance.db"), program, create=True) as store:
        revision = store.assert_facts(
            [("grant", ("claude-code", str(project), 1))],
            source="init",
            author=owner,
            layer=Layers.of(program).default,
        )
    settings = root / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    existing: Any = {}
    backup = None
    if settings.exists():
        text = settings.read_text(encoding="utf-8")
        try:
            existing = json.loads(text)
        except ValueError:
            raise OrdinanceError(
                f"`{settings}` is not JSON: fix it, then run this again", code="bad_settings"
            ) from None
        backup = settings.with_name("settings.json.bak")
        n = 1
        while backup.exists():
            backup, n = settings.with_name(f"settings.json.bak{n}"), n + 1
        backup.write_text(text, encoding="utf-8")
    ours = settings_for(port, str(token_file), str(home), str(project))
    settings.write_text(json.dumps(merged(existing, ours), indent=2) + "\n", encoding="utf-8")
    gate = f"ordinance hook pre-push --server http://127.0.0.1:{port} --token-file {shlex.quote(str(token_file))}"
    pushed = install_pre_push(root, gate)
    echo = lambda text: click.echo(escape(text))  # noqa: E731 - paths are the user's: escaped
    echo(f"created {home}: the owner's directory (mode 0700), outside the project")
    echo(
        f"  {policy}: no force push to main, no writes outside the project, the owner's controls and git's hooks "
        "out of reach, unresolved shell commands ask, the owner's stop halts everything"
    )
    echo(f"  {tokens}: principals `{owner}` (owner) and `claude-code`; {token_file}: the agent's token (0600)")
    echo(f"  {home / 'ordinance.db'}: granted `claude-code` the project {project} at epoch 1 (revision {revision})")
    what = f"merged into {settings} (yours kept in {backup.name})" if backup else f"created {settings}"
    echo(
        f"{what}: hooks {', '.join(HOOK_EVENTS)} ask the gate on port {port}; permissions.deny and the sandbox "
        "keep the agent out of the owner's directory"
    )
    echo(pushed)
    echo(
        f"next: ordinance serve --tokens {shlex.quote(str(tokens))} --db {shlex.quote(str(home / 'ordinance.db'))} "
        f"--policy {shlex.quote(str(policy))} --project {shlex.quote(str(project))} --port {port}"
    )
    echo(f"then: ordinance doctor {shlex.quote(str(root))}   (checks the install and says what to fix)")


@click.command(
    "init",
    short_help="Create a project: policy.rules and an empty store.",
    epilog="""\b
Examples:
  ordinance init myproject && cd myproject
  ordinance init .                    here
  ordinance init --claude-code .      a gate for Claude Code's hooks
  ordinance init --claude-code . --home ~/gates/p --port 9000
  ordinance init . --db postgresql://gate@db/ordinance   the store's tables there
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing policy.rules (an existing store is kept).")
@click.option(
    "--claude-code",
    "claude_code",
    is_flag=True,
    help="A gate for Claude Code: the owner's directory, .claude/settings.json, git's pre-push hook.",
)
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
    help="With --claude-code: the owner's directory (default: $XDG_STATE_HOME/ordinance/NAME-HASH).",
)
@click.option("--port", default=None, type=int, help="With --claude-code: the gate's port (default: from the path).")
def command(directory: str, force: bool, claude_code: bool, db: str | None, home: str | None, port: int | None) -> None:
    """Create DIRECTORY with policy.rules (the stdlib, an example rule and a
    test block) and an empty SQLite store, ordinance.db.

    Commands run inside DIRECTORY find both by default (--policy and --db).
    With --claude-code the policy, the tokens and the store go to the
    owner's directory outside the project (--home), the policy reads Claude
    Code's tool calls (no force push to main, no writes outside the project,
    the owner's controls out of reach, the owner's stop halts everything),
    Claude Code's hooks, permission rules and sandbox are merged into
    .claude/settings.json (the old file backed up), git's pre-push hook asks
    the gate, and the agent is granted the project directory.
    """
    root = Path(directory)
    if claude_code:
        if db is not None:
            raise click.UsageError("--db is not for --claude-code, whose hooks find the store in DIRECTORY")
        _claude_code(root, force, home, port)
        return
    if home is not None or port is not None:
        raise click.UsageError("--home and --port are for --claude-code")
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
