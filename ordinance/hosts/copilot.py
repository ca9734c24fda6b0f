"""GitHub Copilot CLI's hooks.

Copilot CLI (`.github/hooks/*.json`, `"version": 1`, a `preToolUse` entry
`{"type": "command", "bash": ...}`; docs.github.com/en/copilot/reference/
hooks-configuration) posts `{timestamp, cwd, toolName, toolArgs}` with
`toolArgs` a JSON text, and reads a flat `{"permissionDecision",
"permissionDecisionReason"}`; only "deny" is processed, so an ask is
answered as a deny whose reason says so. `postToolUse` adds `toolResult`
(its `resultType` "failure" or "denied" is the call's failure). There is no
event name in the payload, nor a call id (a `toolCallId`, where sent, is
the id): a call is named by its session (`sessionId`, where sent), cwd,
tool and arguments; each preToolUse gets a suffix of its own, and a
postToolUse closes the oldest open call of that name (flow.py). Its tools
are named as Claude Code's: bash -> Bash, create -> Write (`path`,
`file_text`), edit -> Edit, view -> Read.
Failing closed: every failure is a deny, exit 0 (after the tool ran, `{}`).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from . import DENIED, FAILED, POST, PRE, Call, Verdict
from .claude_code import call_id, short, tool_call

__all__ = ["NAME", "call", "render", "failure", "event", "TOOLS"]

NAME = "copilot"
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "bash": ("Bash", {}),
    "create": ("Write", {"path": "file_path", "file_text": "content"}),
    "edit": ("Edit", {"path": "file_path", "old_str": "old_string", "new_str": "new_string"}),
    "str_replace_editor": ("Edit", {"path": "file_path"}),
    "view": ("Read", {"path": "file_path"}),
}


def event(payload: Any) -> str | None:
    """`postToolUse` if the payload holds the tool's result, else `preToolUse`."""
    if not isinstance(payload, Mapping):
        return None
    return "postToolUse" if "toolResult" in payload else "preToolUse"


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    name, args = payload.get("toolName"), payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args else {}
        except ValueError:
            raise OrdinanceError("the hook input's `toolArgs` is not JSON", code="bad_hook_payload") from None
    if not isinstance(name, str) or not name or not isinstance(args, Mapping):
        raise OrdinanceError(
            "the hook input has no `toolName` or its `toolArgs` is not an object", code="bad_hook_payload"
        )
    tool, renamed = TOOLS.get(name, (name, {}))
    fields = {renamed.get(str(k), str(k)): v for k, v in args.items()}
    kind = event(payload) or "preToolUse"
    own = payload.get("toolCallId")
    own = own if isinstance(own, str) and own else None
    session = payload.get("sessionId")
    result = payload.get("toolResult")
    outcome = result.get("resultType") if isinstance(result, Mapping) else None
    phase = PRE if kind == "preToolUse" else {"failure": FAILED, "denied": DENIED}.get(str(outcome), POST)
    return tool_call(
        phase,
        kind,
        tool,
        fields,
        id=call_id(NAME, own, session, payload.get("cwd"), tool, fields),
        cwd=payload.get("cwd"),
        project=project,
        session=session,
        content_id=own is None,
    )


def render(verdict: Verdict) -> dict[str, Any]:
    if verdict.kind in ("deny", "ask"):
        reason = short(verdict.reason)
        if verdict.kind == "ask":
            reason += " (Copilot CLI cannot ask from a hook: refused)"
        return {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return {"permissionDecision": "allow"} if verdict.kind == "allow" else {}


def failure(event: Any, reason: str) -> dict[str, Any]:
    if event == "postToolUse":  # after the fact there is nothing to refuse
        return {}
    return render(Verdict("deny", reason))
