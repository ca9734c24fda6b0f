"""Claude Code: its hook payloads read, its answers written.

Events: PreToolUse (PRE), PostToolUse (POST), PostToolUseFailure (FAILED),
PermissionDenied (DENIED). The tool's files: `file_path`, `notebook_path`,
`path` (named; written by Write, Edit, MultiEdit, NotebookEdit); shell text:
`command` of Bash, Monitor and PowerShell (and of any tool the policy
declares a `shell_tool`); contents: `content`, `new_string`, `old_string`,
`edits`, `new_source`.

The answer to PreToolUse is `hookSpecificOutput` with `permissionDecision`
`deny` or `ask` and a reason, `allow` only when the policy auto-allows the
call; a permitted call gets no decision (`additionalContext` only), so that
Claude Code's own permission rules and prompt decide as they would without
the hook. Claude Code reads an answer from a 2xx body and treats anything
else as a non-blocking error: a server's failures are a 200 with a deny.
After the tool ran there is nothing to deny: a failure is a `systemMessage`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from ..values import escape
from ..gate import Request
from . import DENIED, FAILED, OTHER, POST, PRE, Call, Verdict
from .request import request_of

__all__ = ["NAME", "call", "render", "failure", "tool_request", "EVENTS", "WRITERS"]

NAME = "claude-code"
EVENTS = {"PreToolUse": PRE, "PostToolUse": POST, "PostToolUseFailure": FAILED, "PermissionDenied": DENIED}
WRITERS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
PATH_FIELDS = ("file_path", "notebook_path", "path")
TARGET_FIELDS = ("url", "pattern")
CONTENT_FIELDS = ("content", "new_string", "old_string", "edits", "new_source")
SHELLS = frozenset({"Bash", "Monitor", "PowerShell"})
_REASON = 300  # characters of a reason Claude Code shows


def call_id(payload: Mapping[str, Any]) -> str:
    """The same id for a call's PreToolUse and PostToolUse."""
    use = payload.get("tool_use_id")
    if isinstance(use, str) and use:
        return f"cc-{use}"
    seen = json.dumps(
        [payload.get("session_id"), payload.get("tool_name"), payload.get("tool_input")], sort_keys=True, default=str
    )
    return "cc-" + hashlib.sha256(seen.encode()).hexdigest()[:16]


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    event = payload.get("hook_event_name", "PreToolUse")
    event = event if isinstance(event, str) else "PreToolUse"
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise OrdinanceError("the hook payload has no `tool_name`", code="bad_hook_payload")
    inputs = payload.get("tool_input") or {}
    if not isinstance(inputs, Mapping):
        raise OrdinanceError("the hook payload's `tool_input` is not an object", code="bad_hook_payload")
    named = tuple(inputs[f] for f in PATH_FIELDS if isinstance(inputs.get(f), str) and inputs[f])
    command = inputs.get("command")
    session = payload.get("session_id")
    return Call(
        phase=EVENTS.get(event, OTHER),
        event=event,
        id=call_id(payload),
        tool=tool,
        inputs=inputs,
        cwd=str(payload.get("cwd") or project or "/"),
        project=project or str(payload.get("cwd") or "/"),
        session=session if isinstance(session, str) else None,
        shell=command if tool in SHELLS and isinstance(command, str) else None,
        paths=named,
        writes=named if tool in WRITERS else (),
        target=next((str(inputs[f]) for f in TARGET_FIELDS if inputs.get(f)), None),
        contents=tuple(f for f in CONTENT_FIELDS if f in inputs),
    )


def _short(reason: str) -> str:
    reason = escape(reason)  # Claude Code shows it: no control character an agent wrote reaches the terminal
    return reason if len(reason) <= _REASON else reason[: _REASON - 1] + "…"


def render(verdict: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if verdict.kind in ("allow", "ask", "deny"):
        out["hookSpecificOutput"] = {
            "hookEventName": verdict.event,
            "permissionDecision": verdict.kind,
            "permissionDecisionReason": _short(verdict.reason),
        }
    elif verdict.kind == "defer" and verdict.reason:
        out["hookSpecificOutput"] = {"hookEventName": verdict.event, "additionalContext": _short(verdict.reason)}
    if verdict.note:
        out["systemMessage"] = escape(verdict.note)
    return out


def failure(event: Any, reason: str) -> dict[str, Any]:
    """No verdict could be had: a deny before the tool runs; after it (or on
    any other event) a `systemMessage` saying its receipt was not recorded."""
    if event in (None, "PreToolUse"):
        return render(Verdict("deny", reason))
    return {"systemMessage": escape(f"{reason} (the outcome receipt was not recorded)")}


def tool_request(
    payload: Mapping[str, Any], agent: str, declared: Mapping[str, int], *, project: str | None = None, epoch: int = 1
) -> Request:
    """The Request of a Claude Code hook payload."""
    return request_of(call(payload, project), agent, declared, epoch=epoch)
