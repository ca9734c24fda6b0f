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

__all__ = ["NAME", "call", "render", "failure", "tool_request", "tool_call", "call_id", "short", "EVENTS", "WRITERS"]

NAME = "claude-code"
EVENTS = {"PreToolUse": PRE, "PostToolUse": POST, "PostToolUseFailure": FAILED, "PermissionDenied": DENIED}
WRITERS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
PATH_FIELDS = ("file_path", "notebook_path", "path")
TARGET_FIELDS = ("url", "pattern")
CONTENT_FIELDS = ("content", "new_string", "old_string", "edits", "new_source", "patch")  # patch: a Codex apply_patch
SHELLS = frozenset({"Bash", "Monitor", "PowerShell"})
_REASON = 300  # characters of a reason Claude Code shows


def call_id(prefix: str, use: Any, *seen: Any) -> str:
    """The same id for a call before and after it runs: `PREFIX-USE` for the
    host's own id of the call, else a digest of what it runs (`seen`)."""
    if isinstance(use, str) and use:
        return f"{prefix}-{use}"
    return f"{prefix}-" + hashlib.sha256(json.dumps(list(seen), sort_keys=True, default=str).encode()).hexdigest()[:16]


def tool_call(
    phase: str,
    event: str,
    tool: str,
    inputs: Mapping[str, Any],
    *,
    id: str,
    cwd: Any,
    project: str | None,
    session: Any = None,
    writes: tuple[str, ...] | None = None,
    content_id: bool = False,
) -> Call:
    """The Call of Claude Code's tool `tool` with `inputs`: its files, shell
    text and contents read from Claude Code's fields. The other hosts name
    their tools as Claude Code's (Bash, Write, Edit, Read, ...) and call it,
    so one policy reads every host; `writes`: the files, when the host names
    them itself (every file of a Codex patch)."""
    named = tuple(inputs[f] for f in PATH_FIELDS if isinstance(inputs.get(f), str) and inputs[f])
    command = inputs.get("command")
    cwd = cwd if isinstance(cwd, str) and cwd else None
    return Call(
        phase=phase,
        event=event,
        id=id,
        tool=tool,
        inputs=inputs,
        cwd=str(cwd or project or "/"),
        project=project or str(cwd or "/"),
        session=session if isinstance(session, str) and session else None,
        shell=command if tool in SHELLS and isinstance(command, str) else None,
        paths=named if writes is None else writes,
        writes=(named if tool in WRITERS else ()) if writes is None else writes,
        target=next((str(inputs[f]) for f in TARGET_FIELDS if inputs.get(f)), None),
        contents=tuple(f for f in CONTENT_FIELDS if f in inputs),
        content_id=content_id,
    )


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    event = payload.get("hook_event_name", "PreToolUse")
    event = event if isinstance(event, str) else "PreToolUse"
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise OrdinanceError("the hook payload has no `tool_name`", code="bad_hook_payload")
    inputs = payload.get("tool_input") or {}
    if not isinstance(inputs, Mapping):
        raise OrdinanceError("the hook payload's `tool_input` is not an object", code="bad_hook_payload")
    session = payload.get("session_id")
    return tool_call(
        EVENTS.get(event, OTHER),
        event,
        tool,
        inputs,
        id=call_id("cc", payload.get("tool_use_id"), session, tool, payload.get("tool_input")),
        cwd=payload.get("cwd"),
        project=project,
        session=session,
    )


def short(reason: str) -> str:
    """`reason` as a host shows it: escaped (no control character an agent
    wrote reaches the terminal) and at most 300 characters."""
    reason = escape(reason)  # the host shows it: no control character an agent wrote reaches the terminal
    return reason if len(reason) <= _REASON else reason[: _REASON - 1] + "…"


def render(verdict: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if verdict.kind in ("allow", "ask", "deny"):
        out["hookSpecificOutput"] = {
            "hookEventName": verdict.event,
            "permissionDecision": verdict.kind,
            "permissionDecisionReason": short(verdict.reason),
        }
    elif verdict.kind == "defer" and verdict.reason:
        out["hookSpecificOutput"] = {"hookEventName": verdict.event, "additionalContext": short(verdict.reason)}
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
