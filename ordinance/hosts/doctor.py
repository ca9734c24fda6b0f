"""`ordinance doctor`: is a project's install (`ordinance init --HOST`) one that holds?

Each check is (name, ok, what was found or what to fix); Claude Code's:

    hook        .claude/settings.json runs `ordinance hook claude-code` on PreToolUse, failing closed
    client      `claude --version` is 2.1.295 or later (older clients ignore `onFailure` and fail open)
    token       the hook's --token-file is readable and private (0600), or its variable is set
    owner       the token file, tokens.toml, the policy and the store are outside the project
    sandbox     the settings turn Claude Code's sandbox on, unsandboxed commands off
    pre-push    git's pre-push hook asks the gate (when the project is a git repository)
    server      the hook's server answers /health

and for each other host whose settings file (hosts/setup.py) runs
`ordinance hook HOST` on its before-events: HOST (the hook is there, and
what the owner still has to do in the host; for Codex, its config.toml
trusts the project, without which it loads no project hook) and HOST-token.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .paths import within
from .setup import SETUPS, Setup

__all__ = ["Check", "checks", "MIN_CLIENT"]

MIN_CLIENT = (2, 1, 295)  # the first Claude Code that honours a hook's `onFailure: block`


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _settings(project: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("settings.json", "settings.local.json"):
        path = project / ".claude" / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, dict) and isinstance(out.get(key), dict):
                    out[key] = {**out[key], **value}
                else:
                    out[key] = value
    return out


def _hook(settings: dict[str, Any]) -> dict[str, Any] | None:
    hooks = settings.get("hooks")
    entries = hooks.get("PreToolUse", []) if isinstance(hooks, dict) else []
    for entry in entries if isinstance(entries, list) else []:
        for hook in entry.get("hooks", []) if isinstance(entry, dict) else []:
            if isinstance(hook, dict) and "ordinance hook claude-code" in str(hook.get("command", "")):
                return hook
    return None


def _option(command: str, name: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for k, w in enumerate(words):
        if w == name and k + 1 < len(words):
            return words[k + 1]
        if w.startswith(name + "="):
            return w.partition("=")[2]
    return None


def _client(claude: str | None) -> Check:
    try:
        done = subprocess.run([claude or "claude", "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return Check("client", False, "no `claude` on PATH: install Claude Code 2.1.295 or later")
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout)
    if found is None:
        return Check("client", False, f"`claude --version` said {done.stdout.strip()[:60]!r}: cannot tell its version")
    version = tuple(int(x) for x in found.groups())
    text = ".".join(map(str, version))
    if version < MIN_CLIENT:
        return Check("client", False, f"Claude Code {text} ignores `onFailure` and fails open: update to 2.1.295+")
    return Check("client", True, f"Claude Code {text} honours `onFailure: block`")


def _health(server: str) -> Check:
    if not server.startswith(("http://", "https://")):
        return Check("server", False, f"cannot check {server} here: ask it with `curl --unix-socket`")
    try:
        with urllib.request.urlopen(server.rstrip("/") + "/health", timeout=5) as reply:
            ok = reply.status == 200
    except OSError as exc:
        return Check("server", False, f"{server} does not answer ({exc}): start `ordinance serve` (see `init`)")
    return Check("server", ok, f"{server} answers" if ok else f"{server} answered {reply.status}")


def _command(data: Any, setup: Setup) -> str | None:
    """The first hook command of ours on one of the host's before-events, whatever its shape."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    for event in setup.pre:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            inner = entry.get("hooks", [entry]) if isinstance(entry, dict) else []
            for hook in inner if isinstance(inner, list) else []:
                text = (hook.get("command") or hook.get("bash")) if isinstance(hook, dict) else None
                if isinstance(text, str) and f"ordinance hook {setup.host} " in text:
                    return text
    return None


def _codex_trusts(project: Path, env: Any) -> bool:
    """Codex's user config ($CODEX_HOME/config.toml, default ~/.codex) marks
    the project (or a directory above it) trusted: else Codex loads none of
    the project's hooks (0.169.0, tried)."""
    import tomllib

    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME") or Path.home()) / ".codex")
    try:
        projects = tomllib.loads((home / "config.toml").read_text(encoding="utf-8")).get("projects", {})
    except (OSError, ValueError):
        return False
    for place in (project, *project.parents):
        entry = projects.get(str(place)) if isinstance(projects, dict) else None
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def _token(command: str, env: Any, name: str) -> tuple[Check, Path | None]:
    token_file = _option(command, "--token-file")
    if token_file:
        path = Path(token_file).expanduser()
        try:
            private = path.stat().st_mode & 0o077 == 0 and bool(path.read_text(encoding="utf-8").strip())
            detail = f"{path} is readable and private" if private else f"{path} is empty or not 0600: chmod 600 it"
        except OSError as exc:
            private, detail = False, f"{path} cannot be read ({exc.strerror}): run `ordinance init` for the host again"
        return Check(name, private, detail), path
    var = _option(command, "--token-env") or "ORDINANCE_TOKEN"
    has = bool(env.get(var))
    return (
        Check(
            name,
            has,
            f"${var} is set (a host that scrubs its hooks' environment would strip it: prefer --token-file)"
            if has
            else f"${var} is not set and the hook has no --token-file: every call is denied `unauthorized`",
        ),
        None,
    )


def checks(project: Path, *, claude: str | None = None, env: Any = None) -> list[Check]:
    """Every check of the install in `project`, in order: Claude Code's,
    then each other host whose settings run `ordinance hook HOST`, then
    what they share (the owner's directory, git's pre-push hook, the server)."""
    env = os.environ if env is None else env
    project = project.resolve()
    settings = _settings(project)
    hook = _hook(settings)
    others: list[tuple[Setup, str]] = []
    for setup in SETUPS.values():
        if setup.host == "claude-code":
            continue
        try:
            data = json.loads((project / setup.path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        command = _command(data, setup)
        if command is not None:
            others.append((setup, command))
    out: list[Check] = []
    if hook is None and not others:
        out.append(
            Check(
                "hook",
                False,
                "no `ordinance hook` in any host's settings: run `ordinance init --claude-code` "
                "(or --codex, --gemini, --cursor, --copilot)",
            )
        )
        return out
    owned: list[Path] = []
    commands: list[str] = []
    if hook is not None:
        blocks = hook.get("onFailure") == "block"
        out.append(
            Check(
                "hook",
                blocks,
                "the PreToolUse hook asks the gate and fails closed"
                if blocks
                else 'the PreToolUse hook lacks `"onFailure": "block"`: add it, or a failing hook lets calls through',
            )
        )
        out.append(_client(claude))
        commands.append(str(hook.get("command", "")))
        check, path = _token(commands[-1], env, "token")
        out.append(check)
        owned += [path] if path else []
    for setup, command in others:
        detail = f"{setup.path} runs `ordinance hook {setup.host}` on {', '.join(setup.pre)}"
        ok = True
        if setup.host == "codex" and not _codex_trusts(project, env):
            ok, detail = (
                False,
                (
                    f"{detail}, but Codex does not trust the project, so it skips them: accept the project when "
                    f'`codex` asks, or add [projects."{project}"] trust_level = "trusted" to ~/.codex/config.toml'
                ),
            )
        out.append(Check(setup.host, ok, detail + (f" ({setup.note})" if setup.note else "")))
        commands.append(command)
        check, path = _token(command, env, f"{setup.host}-token")
        out.append(check)
        owned += [path] if path else []
    owned += [p.parent / n for p in owned for n in ("tokens.toml", "policy.rules", "ordinance.db")]
    owned += [project / n for n in ("tokens.toml", "policy.rules", "ordinance.db")]
    inside = list(dict.fromkeys(str(p) for p in owned if p.exists() and within(os.path.realpath(p), str(project))))
    out.append(
        Check(
            "owner",
            not inside,
            "the store, tokens and policy are outside the project"
            if not inside
            else f"within the agent's reach: {', '.join(inside)}: move them out (`init --HOST --home`)",
        )
    )
    if hook is not None:
        found = settings.get("sandbox")
        sandbox: dict[str, Any] = found if isinstance(found, dict) else {}
        on = sandbox.get("enabled") is True and sandbox.get("allowUnsandboxedCommands") is False
        out.append(
            Check(
                "sandbox",
                on,
                "Claude Code's sandbox is on, unsandboxed commands off"
                if on
                else 'set "sandbox": {"enabled": true, "allowUnsandboxedCommands": false}: without it an agent '
                "with a shell reaches what the hook cannot see",
            )
        )
    if (project / ".git").is_dir():
        hook_file = project / ".git" / "hooks" / "pre-push"
        ours = hook_file.exists() and "ordinance hook pre-push" in hook_file.read_text(errors="replace")
        out.append(
            Check(
                "pre-push",
                ours and os.access(hook_file, os.X_OK),
                "git's pre-push hook asks the gate" if ours else "no pre-push hook: run `ordinance init --HOST`",
            )
        )
    for server in dict.fromkeys(_option(c, "--server") for c in commands):
        out.append(_health(server) if server else Check("server", False, "a hook names no --server"))
    return out
