"""Codex CLI's hooks (Claude Code's contract).

Codex CLI's hooks (`~/.codex/hooks.json`, `<repo>/.codex/hooks.json`, or
`[[hooks.PreToolUse]]` in config.toml; developers.openai.com/codex/hooks)
take Claude Code's contract: stdin `{session_id, transcript_path, cwd,
hook_event_name, model, turn_id, tool_name, tool_use_id, tool_input}`, and
`hookSpecificOutput.permissionDecision` on stdout. Its shell tool is
`Bash` (`tool_input.command`); `apply_patch` carries the patch as
`tool_input.command`, and is one `Edit` call that writes every file the
patch adds, updates, deletes or moves to (refused if any one is); a
patch given to `apply_patch` in a shell command (`apply_patch <<'EOF'`,
which Codex 0.169 applies itself and reports as a `Bash` call) is a Bash
call that also writes those files (after a leading `cd DIR &&`, there). Codex
honours only `deny` from PreToolUse (allow and ask are not supported and
let the call through), so an ask is answered as a deny whose reason says so:
the owner's "ask first" holds. Failing closed: every failure is a `deny`
with exit status 0; after the tool ran, a `systemMessage`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from . import OTHER, POST, PRE, Call, Verdict
from .claude_code import call_id, short, tool_call

__all__ = ["NAME", "call", "render", "failure", "patch_files", "EVENTS"]

NAME = "codex"
EVENTS = {"PreToolUse": PRE, "PostToolUse": POST}
_APPLY = re.compile(r"(^|[\s;&|(])(apply_patch|applypatch)\b")
_CD = re.compile(r"\s*cd\s+(\S+)\s*&&\s*(apply_patch|applypatch)\b")
_PATCH_HEADS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def patch_files(patch: str) -> tuple[str, ...]:
    """The files an apply_patch patch touches, in order, each once."""
    seen: dict[str, None] = {}
    for line in patch.splitlines():
        for head in _PATCH_HEADS:
            if line.startswith(head) and line[len(head) :].strip():
                seen[line[len(head) :].strip()] = None
    return tuple(seen)


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    event = str(payload.get("hook_event_name", "PreToolUse"))
    tool, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
    if not isinstance(tool, str) or not tool or not isinstance(inputs, Mapping):
        raise OrdinanceError(
            "the hook input has no `tool_name` or its `tool_input` is not an object", code="bad_hook_payload"
        )
    session = payload.get("session_id")
    common: dict[str, Any] = {
        "id": call_id(NAME, payload.get("tool_use_id"), session, tool, inputs),
        "cwd": payload.get("cwd"),
        "project": project,
        "session": session,
    }
    if tool == "apply_patch":
        patch = inputs.get("command") or inputs.get("patch") or inputs.get("input")
        if not isinstance(patch, str):
            raise OrdinanceError("the apply_patch call carries no patch text", code="bad_hook_payload")
        files = patch_files(patch)
        if not files:
            raise OrdinanceError("the patch names no file", code="bad_hook_payload")
        return tool_call(EVENTS.get(event, OTHER), event, "Edit", {"patch": patch}, writes=files, **common)
    command = inputs.get("command")
    if tool == "Bash" and isinstance(command, str) and _APPLY.search(command):
        # Codex applies a patch given to `apply_patch` in a shell command itself: the shell text is read
        # as any other, and the files the patch touches are written (relative to a leading `cd DIR &&`)
        cd = _CD.match(command)
        base = cd.group(1).strip("'\"") if cd else ""
        files = tuple(posixpath.join(base, f) for f in patch_files(command))
        return tool_call(EVENTS.get(event, OTHER), event, tool, inputs, writes=files, **common)
    return tool_call(EVENTS.get(event, OTHER), event, tool, inputs, **common)


def render(verdict: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if verdict.kind in ("deny", "ask"):
        reason = short(verdict.reason)
        if verdict.kind == "ask":
            reason += " (Codex cannot ask from a hook: refused)"
        out["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    if verdict.note:
        out["systemMessage"] = short(verdict.note)
    return out


def failure(event: Any, reason: str) -> dict[str, Any]:
    if event == "PostToolUse":  # after the fact there is nothing to refuse
        return {"systemMessage": short(reason)}
    return render(Verdict("deny", reason))
