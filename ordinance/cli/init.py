"""`ordinance init`: a project directory with a policy file and an empty store."""

from __future__ import annotations

from pathlib import Path

import click

from ..diagnostics import OrdinanceError, StoreError
from ..gate import Layers
from ..values import escape
from .common import load_policy, open_db

__all__ = ["command", "POLICY_TEMPLATE", "CLAUDE_CODE_POLICY", "SETTINGS"]

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
// `HEAD`, `@`, `heads/main`, `--all`, `--mirror`, `:main`, no refspec at all,
// behind `cd`, `bash -c`, `env -S`, `$(...)`): the shell's early, explained
// layer. The git pre-push hook `init` installs refuses it at the effect.
.decl protected(branch: symbol)
protected("main"). protected("master"). protected("HEAD"). protected("*").
forbid(A, "force-push-main", C) :- request_push(A, N, B, 1), protected(B), request_command(A, N, C).

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


def _hook(event: str) -> dict[str, object]:
    """One hook entry of the settings: the command hook asking the server.
    PreToolUse fails closed in Claude Code too (`onFailure: block`): a hook
    that cannot start (no `ordinance` on PATH) or times out blocks the call
    instead of letting it through; the hook itself denies when the server
    cannot be reached."""
    hook: dict[str, object] = {
        "type": "command",
        "timeout": 10,
        "command": "ordinance hook claude-code --server http://127.0.0.1:8377",
    }
    if event == "PreToolUse":
        hook["onFailure"] = "block"
    return {"matcher": "*", "hooks": [hook]}


SETTINGS = {"hooks": {event: [_hook(event)] for event in ("PreToolUse", "PostToolUse")}}


def _claude_code(root: Path, force: bool) -> None:
    """policy.rules for Claude Code, .claude/settings.json, tokens.toml and
    the agent's grant on the project directory."""
    import json
    import secrets
    import shlex

    from .common import default_author

    settings = root / ".claude" / "settings.json"
    tokens = root / "tokens.toml"
    for path in (root / "policy.rules", settings, tokens):
        if path.exists() and not force:
            raise OrdinanceError(f"`{path}` already exists (use --force to overwrite it)", code="exists")
    root.mkdir(parents=True, exist_ok=True)
    (root / "policy.rules").write_text(CLAUDE_CODE_POLICY, encoding="utf-8")
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps(SETTINGS, indent=2) + "\n", encoding="utf-8")
    owner = default_author() or "owner"
    tokens.write_text(
        "# principals of `ordinance serve`: keep this file private\n"
        f'[[principal]]\nname = "{owner}"\nowner = true\ntoken = "{secrets.token_urlsafe(24)}"\n\n'
        f'[[principal]]\nname = "claude-code"\ntoken = "{secrets.token_urlsafe(24)}"\n',
        encoding="utf-8",
    )
    tokens.chmod(0o600)
    program = load_policy(str(root / "policy.rules"))
    project = str(root.resolve())
    with open_db(str(root / "ordinance.db"), program, create=True) as store:
        revision = store.assert_facts(
            [("grant", ("claude-code", project, 1))], source="init", author=owner, layer=Layers.of(program).default
        )
    click.echo(
        f"created {root / 'policy.rules'}: no force push to main, no writes outside the project, "
        "the owner's stop halts everything"
    )
    click.echo(f"created {settings}: Claude Code's PreToolUse and PostToolUse hooks ask the gate")
    click.echo(f"created {tokens}: principals `{owner}` (owner) and `claude-code`; keep it private")
    click.echo(f"granted `claude-code` the project {project} at epoch 1 (store revision {revision})")
    click.echo(
        escape(
            f"next: ordinance serve --tokens tokens.toml --project {shlex.quote(project)}"
            "   (and export ORDINANCE_TOKEN=<claude-code's token>)"
        )
    )


@click.command(
    "init",
    short_help="Create a project: policy.rules and an empty store.",
    epilog="""\b
Examples:
  ordinance init myproject && cd myproject
  ordinance init .                    here
  ordinance init --claude-code .      a gate for Claude Code's hooks
  ordinance init . --db postgresql://gate@db/ordinance   the store's tables there
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing policy.rules (an existing store is kept).")
@click.option(
    "--claude-code",
    "claude_code",
    is_flag=True,
    help="Also write .claude/settings.json, tokens.toml and a policy for Claude Code's tool calls.",
)
@click.option(
    "--db",
    default=None,
    metavar="PATH|URL",
    help="Make the store here (a SQLite path or a postgresql:// URL) instead of DIRECTORY/ordinance.db.",
)
def command(directory: str, force: bool, claude_code: bool, db: str | None) -> None:
    """Create DIRECTORY with policy.rules (the stdlib, an example rule and a
    test block) and an empty SQLite store, ordinance.db.

    Commands run inside DIRECTORY find both by default (--policy and --db).
    With --claude-code the policy reads Claude Code's tool calls (no force
    push to main, no writes outside the project, the owner's stop halts
    everything), the hooks ask `ordinance serve`, and the agent is granted
    the project directory.
    """
    root = Path(directory)
    if claude_code:
        if db is not None:
            raise click.UsageError("--db is not for --claude-code, whose hooks find the store in DIRECTORY")
        _claude_code(root, force)
        return
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
