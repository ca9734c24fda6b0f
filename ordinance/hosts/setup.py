"""Each host's hook settings: where they live in a project and what
`ordinance init --HOST` merges into them (`doctor` reads them back).

    host         file (in the project)          events hooked
    claude-code  .claude/settings.json          PreToolUse (onFailure: block), PostToolUse,
                                                PostToolUseFailure, PermissionDenied; with
                                                permissions.deny and the sandbox
    codex        .codex/hooks.json              PreToolUse, PostToolUse (timeouts in seconds;
                                                the command exits 2 if it cannot run: `blocking`)
    gemini       .gemini/settings.json          BeforeTool, AfterTool (milliseconds; `blocking`)
    cursor       .cursor/hooks.json             beforeShellExecution, beforeReadFile,
                                                beforeMCPExecution, afterShellExecution,
                                                afterMCPExecution ("version": 1)
    copilot      .github/hooks/ordinance.json   preToolUse, postToolUse ("version": 1, `bash`)

Every file is JSON; `merged` keeps the user's keys, hooks and rules, and
replaces only our own earlier entries (those running `ordinance hook HOST`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Setup", "SETUPS", "settings_for", "command_for", "blocking", "merged", "ours", "CLAUDE_CODE_EVENTS"]

TIMEOUT_S = 10  # a hook's timeout: generous for a loaded machine, the server answers in milliseconds
CLAUDE_CODE_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied")


@dataclass(frozen=True)
class Setup:
    host: str  # `ordinance hook HOST`, and the agent's principal
    path: str  # the settings file, relative to the project
    pre: tuple[str, ...]  # the events a call is decided at (a hook there must be ours)
    settings: Callable[[str, str, str], dict[str, Any]]  # (hook command, owner's dir, project) -> ours
    note: str = ""  # what the owner still has to do in the host, said by init and doctor


# what an agent editing would switch the gate off: every host's hook settings, git's hooks
# (the example policy's `hook_settings` and `effect-guard` rules say the same for every host)
GUARDED = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/hooks.json",
    ".github/hooks/**",
    ".git/hooks/**",
)


def _claude_hook(event: str, command: str) -> dict[str, object]:
    """One hook entry of Claude Code's settings. PreToolUse fails closed in
    Claude Code too (`onFailure: block`, 2.1.295 or later): a hook that
    cannot start (no `ordinance` on PATH) or times out blocks the call
    instead of letting it through; the hook itself denies when the server
    cannot be reached."""
    hook: dict[str, object] = {"type": "command", "timeout": TIMEOUT_S, "command": command}
    if event == "PreToolUse":
        hook["onFailure"] = "block"
    return {"matcher": "*", "hooks": [hook]}


def _claude_code(command: str, home: str, project: str) -> dict[str, Any]:
    """Claude Code's hooks, and the permission rules and sandbox settings
    that keep the agent out of the owner's directory, the settings and git's
    hooks (`//` starts an absolute path in both Claude Code's permission
    rules and its sandbox paths)."""
    owner = f"/{home}/**"
    guarded = [f"/{project}/{p}" for p in GUARDED]
    return {
        "hooks": {event: [_claude_hook(event, command)] for event in CLAUDE_CODE_EVENTS},
        "permissions": {
            "deny": [f"Read({owner})", f"Edit({owner})", "Bash(ordinance *)"] + [f"Edit({p})" for p in guarded]
        },
        "sandbox": {
            "enabled": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyRead": [f"/{home}"], "denyWrite": [f"/{home}"] + guarded},
        },
    }


def blocking(command: str) -> str:
    """`command`, exiting 2 if it fails to run: Codex and Gemini CLI refuse
    the call on a hook's exit status 2, but run it when the hook cannot start
    (`ordinance` not on the hook's PATH: 127), crashes or prints no JSON
    (Codex 0.169.0, tried). `ordinance hook` itself always answers, exit 0."""
    return f"{command} || {{ echo 'ordinance: the hook did not run: refused' >&2; exit 2; }}"


def _codex(command: str, home: str, project: str) -> dict[str, Any]:
    """Claude Code's shape without a matcher (every tool); seconds."""
    hook = {"type": "command", "command": blocking(command), "timeout": TIMEOUT_S}
    hook["statusMessage"] = "ordinance: asking the gate"
    return {"hooks": {event: [{"hooks": [hook]}] for event in ("PreToolUse", "PostToolUse")}}


def _gemini(command: str, home: str, project: str) -> dict[str, Any]:
    hook = {"type": "command", "command": blocking(command), "timeout": TIMEOUT_S * 1000}
    return {"hooks": {event: [{"matcher": ".*", "hooks": [hook]}] for event in ("BeforeTool", "AfterTool")}}


CURSOR_EVENTS = (
    "beforeShellExecution",
    "beforeReadFile",
    "beforeMCPExecution",
    "afterShellExecution",
    "afterMCPExecution",
)


def _cursor(command: str, home: str, project: str) -> dict[str, Any]:
    return {"version": 1, "hooks": {event: [{"command": command}] for event in CURSOR_EVENTS}}


def _copilot(command: str, home: str, project: str) -> dict[str, Any]:
    hook = {"type": "command", "bash": command, "timeoutSec": TIMEOUT_S}
    return {"version": 1, "hooks": {event: [dict(hook)] for event in ("preToolUse", "postToolUse")}}


SETUPS: dict[str, Setup] = {
    s.host: s
    for s in (
        Setup("claude-code", ".claude/settings.json", ("PreToolUse",), _claude_code),
        Setup(
            "codex",
            ".codex/hooks.json",
            ("PreToolUse",),
            _codex,
            note="Codex runs a project's hooks only once you trust the project and review the hooks: "
            "start `codex` in the project and accept them in /hooks (an untrusted hook is skipped, not refused)",
        ),
        Setup(
            "gemini",
            ".gemini/settings.json",
            ("BeforeTool",),
            _gemini,
            note="Gemini CLI reads a project's settings only in a trusted folder: trust the project when it asks",
        ),
        Setup(
            "cursor",
            ".cursor/hooks.json",
            ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution"),
            _cursor,
            note="Cursor's file edits have no before-hook: its own allow list and prompts decide them",
        ),
        Setup("copilot", ".github/hooks/ordinance.json", ("preToolUse",), _copilot),
    )
}


def settings_for(port: int, token_file: str, home: str, project: str, host: str = "claude-code") -> dict[str, Any]:
    """What `init --HOST` merges into the host's settings file: its hooks,
    each running `ordinance hook HOST` against the gate on `port`."""
    return SETUPS[host].settings(command_for(host, port, token_file), home, project)


def command_for(host: str, port: int, token_file: str) -> str:
    import shlex

    return f"ordinance hook {host} --server http://127.0.0.1:{port} --token-file {shlex.quote(token_file)}"


def ours(entry: Any, host: str) -> bool:
    """An entry of the settings that runs `ordinance hook HOST`, whatever the host's shape."""
    return f"ordinance hook {host} " in json.dumps(entry)


def merged(existing: Any, mine: dict[str, Any], host: str = "claude-code") -> dict[str, Any]:
    """`mine` merged into the user's settings: their keys, hooks and rules
    kept; our hook entries replace our earlier ones; lists unioned."""
    out = dict(existing) if isinstance(existing, dict) else {}
    for key, value in mine.items():
        have = out.get(key)
        if key == "hooks":
            hooks = dict(have) if isinstance(have, dict) else {}
            for event, entries in value.items():
                theirs = hooks.get(event)
                kept = [e for e in theirs if not ours(e, host)] if isinstance(theirs, list) else []
                hooks[event] = kept + entries
            out[key] = hooks
        elif isinstance(value, dict):
            out[key] = merged(have, value, host)
        elif isinstance(value, list):
            old = have if isinstance(have, list) else []
            out[key] = old + [v for v in value if v not in old]
        else:
            out[key] = value
    return out
