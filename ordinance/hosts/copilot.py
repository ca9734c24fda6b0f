"""GitHub Copilot CLI's hooks in the gate's terms.

Copilot CLI (`.github/hooks/*.json`, `"version": 1`, a `preToolUse` entry
`{"type": "command", "bash": ...}`; docs.github.com/en/copilot/reference/
hooks-configuration) posts `{timestamp, cwd, toolName, toolArgs}` with
`toolArgs` a JSON text, and reads a flat `{"permissionDecision",
"permissionDecisionReason"}`; only "deny" is processed, so an ask is
answered as a deny whose reason says so. `postToolUse` adds `toolResult`
(there is no event name in the payload). Its tools become Claude Code's:
bash -> Bash, create -> Write (`path`, `file_text`), edit -> Edit,
view -> Read. Failing closed: every failure is a deny, exit 0.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from .shape import BadPayload, Verdict, call

__all__ = ["requests", "reply", "refuse", "TOOLS"]

TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "bash": ("Bash", {}),
    "create": ("Write", {"path": "file_path", "file_text": "content"}),
    "edit": ("Edit", {"path": "file_path", "old_str": "old_string", "new_str": "new_string"}),
    "str_replace_editor": ("Edit", {"path": "file_path"}),
    "view": ("Read", {"path": "file_path"}),
}


def requests(payload: Any) -> list[dict[str, Any]]:
    if not isinstance(payload, Mapping):
        raise BadPayload("the hook input is not a JSON object")
    name, args = payload.get("toolName"), payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args else {}
        except ValueError:
            raise BadPayload("the hook input's `toolArgs` is not JSON") from None
    if not isinstance(name, str) or not name or not isinstance(args, Mapping):
        raise BadPayload("the hook input has no `toolName` or its `toolArgs` is not an object")
    event = "PostToolUse" if "toolResult" in payload else "PreToolUse"
    tool, renamed = TOOLS.get(name, (name, {}))
    fields = {renamed.get(str(k), str(k)): v for k, v in args.items()}
    return [call(event, tool, fields, cwd=payload.get("cwd"))]


def reply(v: Verdict, payload: Any) -> dict[str, Any]:
    if v.decision == "deny" or v.decision == "ask":
        reason = v.reason if v.decision == "deny" else f"{v.reason} (Copilot CLI cannot ask from a hook: refused)"
        return {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return {"permissionDecision": "allow"} if v.decision == "allow" else {}


def refuse(reason: str, payload: Any) -> dict[str, Any]:
    if isinstance(payload, Mapping) and "toolResult" in payload:
        return {}
    return reply(Verdict("deny", reason), payload)
