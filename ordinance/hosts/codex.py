"""Codex CLI's hooks in the gate's terms.

Codex CLI's hooks (`~/.codex/hooks.json`, `<repo>/.codex/hooks.json`, or
`[[hooks.PreToolUse]]` in config.toml; developers.openai.com/codex/hooks)
take Claude Code's contract: stdin `{session_id, transcript_path, cwd,
hook_event_name, model, turn_id, tool_name, tool_use_id, tool_input}`, and
`hookSpecificOutput.permissionDecision` on stdout. Its shell tool is
`Bash` (`tool_input.command`); `apply_patch` carries the patch as
`tool_input.command`, and each file it adds, updates, deletes or moves to
is asked about as an `Edit` of that file. Codex honours only `deny` from
PreToolUse (allow and ask are not supported and let the call through), so
an ask is answered as a deny whose reason says so: the owner's "ask first"
holds. Failing closed: every failure is a `deny` with exit status 0.
"""

from __future__ import annotations

from typing import Any, Mapping

from .shape import BadPayload, Verdict, call

__all__ = ["requests", "reply", "refuse", "patch_files"]

EVENTS = ("PreToolUse", "PostToolUse")
_PATCH_HEADS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def patch_files(patch: str) -> list[str]:
    """The files an apply_patch patch touches, in order, each once."""
    seen: list[str] = []
    for line in patch.splitlines():
        for head in _PATCH_HEADS:
            if line.startswith(head) and line[len(head) :].strip() not in seen:
                seen.append(line[len(head) :].strip())
    return seen


def requests(payload: Any) -> list[dict[str, Any]]:
    if not isinstance(payload, Mapping):
        raise BadPayload("the hook input is not a JSON object")
    event = str(payload.get("hook_event_name", "PreToolUse"))
    if event not in EVENTS:
        return []
    tool, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
    if not isinstance(tool, str) or not tool or not isinstance(inputs, Mapping):
        raise BadPayload("the hook input has no `tool_name` or its `tool_input` is not an object")
    common = {"cwd": payload.get("cwd"), "session": payload.get("session_id")}
    use = payload.get("tool_use_id")
    if tool == "apply_patch":
        patch = inputs.get("command") or inputs.get("patch") or inputs.get("input")
        if not isinstance(patch, str):
            raise BadPayload("the apply_patch call carries no patch text")
        files = patch_files(patch)
        if not files:
            raise BadPayload("the patch names no file")
        return [
            call(event, "Edit", {"file_path": f, "patch": patch}, use_id=f"{use}#{n}" if use else None, **common)
            for n, f in enumerate(files)
        ]
    return [call(event, tool, inputs, use_id=use, **common)]


def reply(v: Verdict, payload: Any) -> dict[str, Any]:
    if v.decision == "deny" or v.decision == "ask":
        reason = v.reason if v.decision == "deny" else f"{v.reason} (Codex cannot ask from a hook: refused)"
        out: dict[str, Any] = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
        return out
    return {"systemMessage": v.notice} if v.notice else {}


def refuse(reason: str, payload: Any) -> dict[str, Any]:
    if isinstance(payload, Mapping) and payload.get("hook_event_name") == "PostToolUse":
        return {"systemMessage": reason}  # after the fact there is nothing to refuse
    return reply(Verdict("deny", reason), payload)
