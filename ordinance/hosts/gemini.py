"""Gemini CLI's hooks (`BeforeTool`, `AfterTool`).

Gemini CLI (0.61.0, read in its bundle and captured in
tests/hosts_fixtures/gemini/) posts `{session_id, transcript_path, cwd,
hook_event_name, timestamp, tool_name, tool_input}` (AfterTool adds
`tool_response`) and reads a top-level `decision`: "deny" or "block"
refuses the call with `reason`, "ask" forces its confirmation, "allow"
skips it; no decision leaves the call to its own policy and approval mode.
Its tools are named as Claude Code's (run_shell_command -> Bash,
write_file -> Write, replace -> Edit, read_file -> Read, web_fetch ->
WebFetch), so one policy reads every host; other tools keep their name. It
gives no call id: a call is named by its session, tool and inputs (the same
in its BeforeTool and AfterTool; each BeforeTool gets a suffix of its own,
and an AfterTool closes the oldest open call of that name: flow.py). An
AfterTool whose `tool_response` has an `error`, or a shell command's whose
last `Exit Code:` is not 0, is the call's failure (its `failed` receipt).

Failing closed: Gemini CLI treats a hook's exit status other than 0 and 2,
and a hook that cannot start or times out, as a warning and runs the call,
so every failure is a `deny` with exit status 0. After the tool ran there is
nothing to refuse: a failure is a `systemMessage`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from . import FAILED, OTHER, POST, PRE, Call, Verdict
from .claude_code import call_id, short, tool_call

__all__ = ["NAME", "call", "render", "failure", "failed", "TOOLS", "EVENTS"]

NAME = "gemini"
EVENTS = {"BeforeTool": PRE, "AfterTool": POST}
# Gemini CLI tool -> (Claude Code tool, {Gemini field: Claude field})
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "run_shell_command": ("Bash", {}),
    "write_file": ("Write", {}),
    "replace": ("Edit", {}),
    "read_file": ("Read", {"absolute_path": "file_path"}),
    "read_many_files": ("Read", {}),
    "web_fetch": ("WebFetch", {}),
    "list_directory": ("LS", {"dir_path": "path"}),
    "glob": ("Glob", {"dir_path": "path"}),
    "search_file_content": ("Grep", {"dir_path": "path"}),
}


def call(payload: Mapping[str, Any], project: str | None) -> Call:
    event = str(payload.get("hook_event_name", "BeforeTool"))
    name, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
    if not isinstance(name, str) or not name or not isinstance(inputs, Mapping):
        raise OrdinanceError(
            "the hook input has no `tool_name` or its `tool_input` is not an object", code="bad_hook_payload"
        )
    tool, renamed = TOOLS.get(name, (name, {}))
    fields = {renamed.get(str(k), str(k)): v for k, v in inputs.items()}
    cwd = payload.get("cwd")
    if tool == "Bash" and isinstance(inputs.get("dir_path"), str) and isinstance(cwd, str):
        cwd = posixpath.normpath(posixpath.join(cwd, inputs["dir_path"]))  # the command runs there
    session = payload.get("session_id")
    phase = EVENTS.get(event, OTHER)
    if phase == POST and failed(payload.get("tool_response")):
        phase = FAILED
    return tool_call(
        phase,
        event,
        tool,
        fields,
        id=call_id(NAME, None, session, tool, fields),
        cwd=cwd,
        project=project,
        session=session,
        content_id=True,
    )


_EXIT = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)


def failed(response: Any) -> bool:
    """An AfterTool's `tool_response` of a tool that failed: its `error` set,
    or a shell command's last `Exit Code: N` not 0 (Gemini CLI reports a
    command that exited non-zero that way, not as an error)."""
    if not isinstance(response, Mapping):
        return False
    if response.get("error"):
        return True
    codes = _EXIT.findall(str(response.get("llmContent") or ""))
    return bool(codes) and codes[-1] != "0"


def render(verdict: Verdict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if verdict.kind in ("deny", "ask", "allow"):
        out = {"decision": verdict.kind, "reason": short(verdict.reason)}
        if verdict.kind == "ask":
            out["systemMessage"] = out["reason"]
    if verdict.note:
        out["systemMessage"] = short(verdict.note)
    return out


def failure(event: Any, reason: str) -> dict[str, Any]:
    if event == "AfterTool":  # after the fact there is nothing to refuse
        return {"systemMessage": short(reason)}
    return render(Verdict("deny", reason))
