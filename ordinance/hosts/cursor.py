"""Cursor's hooks.

Cursor (`.cursor/hooks.json` or `~/.cursor/hooks.json`, `"version": 1`;
cursor.com/docs/agent/hooks) runs `beforeShellExecution` with
`{hook_event_name, conversation_id, generation_id, workspace_roots,
command, cwd}`, `beforeReadFile` with `{file_path, content}` and
`beforeMCPExecution` with `{tool_name, tool_input}`, and reads
`{"permission": "allow"|"deny"|"ask", "user_message", "agent_message"}`.
They become Bash, Read and MCP-named calls (`mcp__cursor__TOOL`);
`afterShellExecution` and `afterMCPExecution` are their POST (answered
`{}`). A call is named by its own id where the payload has one
(`tool_use_id`, `tool_call_id`, `execution_id`), else by its generation and
what it runs: each before-event then gets a suffix of its own, and an
after-event closes the oldest open call of that name (flow.py), so
identical calls keep receipts of their own. A call the policy permits answers `{}`: Cursor's own allow list
and prompts decide. Failing closed: every failure is `permission: deny`,
exit 0 (after the tool ran, `{}`).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from . import OTHER, POST, PRE, Call, Verdict
from .claude_code import call_id, short, tool_call

__all__ = ["NAME", "call", "render", "failure", "EVENTS"]

NAME = "cursor"
OWN_IDS = ("tool_use_id", "tool_call_id", "execution_id")  # a call id, in the versions that send one
EVENTS = {
    "beforeShellExecution": PRE,
    "beforeReadFile": PRE,
    "beforeMCPExecution": PRE,
    "afterShellExecution": POST,
    "afterMCPExecution": POST,
}


def _bad(message: str) -> OrdinanceError:
    return OrdinanceError(message, code="bad_hook_payload")


def _tool(name: str, payload: Mapping[str, Any]) -> tuple[str, Mapping[str, Any], Any]:
    """The Claude Code tool, its inputs, and what names the call in its generation."""
    if name in ("beforeShellExecution", "afterShellExecution"):
        command = payload.get("command")
        if not isinstance(command, str):
            raise _bad("the hook input has no `command`")
        return "Bash", {"command": command}, command
    if name == "beforeReadFile":
        path = payload.get("file_path")
        if not isinstance(path, str) or not path:
            raise _bad("the hook input has no `file_path`")
        return "Read", {"file_path": path}, path
    tool, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
    if isinstance(inputs, str):  # some versions send the arguments as JSON text
        try:
            inputs = json.loads(inputs)
        except ValueError:
            raise _bad("the hook input's `tool_input` is not JSON") from None
    if not isinstance(tool, str) or not tool or not isinstance(inputs, Mapping):
        raise _bad("the hook input has no `tool_name` or its `tool_input` is not an object")
    return f"mcp__cursor__{tool}", inputs, [tool, inputs]


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    name = str(payload.get("hook_event_name", ""))
    roots = payload.get("workspace_roots")
    cwd = payload.get("cwd") or (roots[0] if isinstance(roots, list) and roots else None)
    session = payload.get("conversation_id")
    if name not in EVENTS:
        return Call(phase=OTHER, event=name, id="", tool="", inputs={}, cwd=str(cwd or "/"), project=project or "/")
    tool, inputs, what = _tool(name, payload)
    own = next((payload[f] for f in OWN_IDS if isinstance(payload.get(f), str) and payload[f]), None)
    gen = payload.get("generation_id")
    named = [gen, what] if isinstance(gen, str) and gen else [session, tool, inputs]
    return tool_call(
        EVENTS[name],
        name,
        tool,
        inputs,
        id=call_id(NAME, own, *named),
        cwd=cwd,
        project=project,
        session=session,
        content_id=own is None,
    )


def render(verdict: Verdict) -> dict[str, Any]:
    if verdict.kind not in ("allow", "ask", "deny"):
        return {}
    out: dict[str, Any] = {"permission": verdict.kind}
    if verdict.reason:
        out["user_message"] = out["agent_message"] = short(verdict.reason)
    return out


def failure(event: Any, reason: str) -> dict[str, Any]:
    if isinstance(event, str) and event.startswith("after"):  # after the fact there is nothing to refuse
        return {}
    return render(Verdict("deny", reason))
