"""Cursor's hooks in the gate's terms.

Cursor (`.cursor/hooks.json` or `~/.cursor/hooks.json`, `"version": 1`;
cursor.com/docs/agent/hooks) runs `beforeShellExecution` with
`{hook_event_name, conversation_id, generation_id, workspace_roots,
command, cwd}`, `beforeReadFile` with `{file_path, content}` and
`beforeMCPExecution` with `{tool_name, tool_input}`, and reads
`{"permission": "allow"|"deny"|"ask", "user_message", "agent_message"}`.
They become Bash, Read and MCP-named requests (`mcp__cursor__TOOL`).
A call the policy permits answers `{}`: Cursor's own allow list and
prompts decide. Failing closed: every failure is `permission: deny`, exit 0.
`after*` events are recorded as PostToolUse and answered `{}`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from .shape import BadPayload, Verdict, call

__all__ = ["requests", "reply", "refuse"]

_BEFORE = {"beforeShellExecution", "beforeReadFile", "beforeMCPExecution"}


def _use_id(payload: Mapping[str, Any], what: Any) -> str | None:
    gen = payload.get("generation_id")
    if not isinstance(gen, str) or not gen:
        return None
    digest = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"{gen}-{digest}"  # Cursor has no call id: the generation and what it runs


def requests(payload: Any) -> list[dict[str, Any]]:
    if not isinstance(payload, Mapping):
        raise BadPayload("the hook input is not a JSON object")
    name = str(payload.get("hook_event_name", ""))
    event = "PreToolUse" if name in _BEFORE else "PostToolUse"
    roots = payload.get("workspace_roots")
    cwd = payload.get("cwd") or (roots[0] if isinstance(roots, list) and roots else None)
    common = {"cwd": cwd, "session": payload.get("conversation_id")}
    if name in ("beforeShellExecution", "afterShellExecution"):
        command = payload.get("command")
        if not isinstance(command, str):
            raise BadPayload("the hook input has no `command`")
        return [call(event, "Bash", {"command": command}, use_id=_use_id(payload, command), **common)]
    if name == "beforeReadFile":
        path = payload.get("file_path")
        if not isinstance(path, str) or not path:
            raise BadPayload("the hook input has no `file_path`")
        return [call(event, "Read", {"file_path": path}, use_id=_use_id(payload, path), **common)]
    if name in ("beforeMCPExecution", "afterMCPExecution"):
        tool, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
        if isinstance(inputs, str):  # some versions send the arguments as JSON text
            try:
                inputs = json.loads(inputs)
            except ValueError:
                raise BadPayload("the hook input's `tool_input` is not JSON") from None
        if not isinstance(tool, str) or not tool or not isinstance(inputs, Mapping):
            raise BadPayload("the hook input has no `tool_name` or its `tool_input` is not an object")
        return [call(event, f"mcp__cursor__{tool}", inputs, use_id=_use_id(payload, [tool, inputs]), **common)]
    return []


def reply(v: Verdict, payload: Any) -> dict[str, Any]:
    if v.decision is None:
        return {}
    out: dict[str, Any] = {"permission": v.decision}
    if v.reason:
        out["user_message"] = out["agent_message"] = v.reason
    return out


def refuse(reason: str, payload: Any) -> dict[str, Any]:
    if isinstance(payload, Mapping) and str(payload.get("hook_event_name", "")).startswith("after"):
        return {}
    return reply(Verdict("deny", reason), payload)
