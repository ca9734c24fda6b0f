"""Gemini CLI's hooks (`BeforeTool`, `AfterTool`) in the gate's terms.

Gemini CLI (0.61.0, read in its bundle and captured in
tests/hosts_fixtures/gemini/) posts `{session_id, transcript_path, cwd,
hook_event_name, timestamp, tool_name, tool_input}` (AfterTool adds
`tool_response`) and reads a top-level `decision`: "deny" or "block"
refuses the call with `reason`, "ask" forces its confirmation; any other
answer leaves the call to its own policy and approval mode. Its tools are
mapped to Claude Code's (run_shell_command -> Bash, write_file -> Write,
replace -> Edit, read_file -> Read, web_fetch -> WebFetch), so one policy
reads every host; other tools keep their name.

Failing closed: Gemini CLI treats a hook's exit status other than 0 and 2,
and a hook that cannot start or times out, as a warning and runs the call,
so the hook always exits 0 with a `deny` when anything goes wrong.
"""

from __future__ import annotations

import posixpath
from typing import Any, Mapping

from .shape import BadPayload, Verdict, call

__all__ = ["requests", "reply", "refuse", "TOOLS"]

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
EVENTS = {"BeforeTool": "PreToolUse", "AfterTool": "PostToolUse"}


def requests(payload: Any) -> list[dict[str, Any]]:
    """The gate's calls for one Gemini CLI hook input (none for an event
    the gate does not read)."""
    if not isinstance(payload, Mapping):
        raise BadPayload("the hook input is not a JSON object")
    event = EVENTS.get(str(payload.get("hook_event_name", "BeforeTool")))
    if event is None:
        return []
    name, inputs = payload.get("tool_name"), payload.get("tool_input") or {}
    if not isinstance(name, str) or not name or not isinstance(inputs, Mapping):
        raise BadPayload("the hook input has no `tool_name` or its `tool_input` is not an object")
    tool, renamed = TOOLS.get(name, (name, {}))
    fields = {renamed.get(str(k), str(k)): v for k, v in inputs.items()}
    cwd = payload.get("cwd")
    if tool == "Bash" and isinstance(inputs.get("dir_path"), str) and isinstance(cwd, str):
        cwd = posixpath.normpath(posixpath.join(cwd, inputs["dir_path"]))  # the command runs there
    return [call(event, tool, fields, cwd=cwd, session=payload.get("session_id"))]


def reply(v: Verdict, payload: Any) -> dict[str, Any]:
    if v.decision in ("deny", "ask"):
        out: dict[str, Any] = {"decision": v.decision, "reason": v.reason}
        if v.decision == "ask":
            out["systemMessage"] = v.reason
        return out
    out = {"decision": "allow", "reason": v.reason} if v.decision == "allow" else {}
    if v.notice:
        out["systemMessage"] = v.notice
    return out


def refuse(reason: str, payload: Any) -> dict[str, Any]:
    if isinstance(payload, Mapping) and payload.get("hook_event_name") == "AfterTool":
        return {"systemMessage": reason}  # after the fact there is nothing to refuse
    return reply(Verdict("deny", reason), payload)
