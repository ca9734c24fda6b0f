"""Claude Code transcripts -> tool calls, each joined with what happened to it.

Claude Code keeps a session as JSON Lines (`~/.claude/projects/<project>/
<session>.jsonl`, a subagent's under `<session>/subagents/`). A tool call is
a `tool_use` block (`id`, `name`, `input`) of an `assistant` record; what
became of it is the `tool_result` block (`tool_use_id`, `is_error`) of a
later `user` record, beside the record's `toolUseResult`,
`permissionDecision` (`decision`, `source`) and `toolDenialKind`. Seen in a
real transcript (Claude Code 2.1.332, tests/fixtures/transcripts): a call a
hook let through has `{"decision": "accept", "source": "hook", "reasonType":
"hook"}` and no `toolDenialKind`. The denial spellings read here (`deny`,
`reject` and their participles; a `toolDenialKind`; a `source` naming a
hook) are not yet seen in one.

`read_calls(paths)` reads files and directories (every `*.jsonl` under a
directory, subagents included), keeps each call once (by its id: a call
seen in two files or twice in one is one call), joins it with its result
wherever that is, and sorts the calls by time. A line that is not a JSON
object (malformed, truncated) is reported with its file and line and
skipped; records of other types are skipped; nothing here raises for what
a transcript holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

__all__ = [
    "ToolCall",
    "Problem",
    "Read",
    "read_calls",
    "transcript_files",
    "RAN",
    "FAILED",
    "HOST_REFUSED",
    "HOOK_REFUSED",
    "NO_RESULT",
]

# what actually happened to a call
RAN, FAILED, HOST_REFUSED, HOOK_REFUSED, NO_RESULT = "ran", "failed", "refused-by-host", "refused-by-hook", "no-result"


@dataclass(frozen=True, slots=True)
class Problem:
    """A line skipped: `file`, `line` (1-based) and why."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(slots=True)
class ToolCall:
    """One tool call: `id`, `tool`, `input`, its `session`, `cwd`, `time`
    (seconds, UTC; None if the record had none), where it was read
    (`file`, `line`), and `happened` (ran, failed, refused-by-host,
    refused-by-hook, no-result) with the host's `denial` (its reason, if any)."""

    id: str
    tool: str
    input: Mapping[str, Any]
    session: str
    cwd: str
    time: int | None
    file: str
    line: int
    happened: str = NO_RESULT
    denial: str = ""

    def payload(self) -> dict[str, Any]:
        """The call as the PreToolUse hook payload Claude Code would have sent for it."""
        return {
            "hook_event_name": "PreToolUse",
            "session_id": self.session,
            "cwd": self.cwd,
            "tool_name": self.tool,
            "tool_input": dict(self.input),
            "tool_use_id": self.id,
        }


@dataclass
class Read:
    """The calls read (sorted by time), and the lines skipped."""

    calls: list[ToolCall] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def transcript_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Each path that is a file, and every `*.jsonl` below each directory, in a stable order."""
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(p.rglob("*.jsonl"))
        else:
            yield p


def instant(text: Any) -> int | None:
    """An ISO-8601 timestamp (with `Z` or an offset, fractions dropped) as UTC seconds."""
    if not isinstance(text, str) or not text:
        return None
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return int(at.timestamp())


def _blocks(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = record.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _happened(block: Mapping[str, Any], record: Mapping[str, Any]) -> tuple[str, str]:
    """What became of a call, from its tool_result block and the record around it."""
    asked = record.get("permissionDecision")
    decision = asked.get("decision") if isinstance(asked, Mapping) else asked
    source = str(asked.get("source", "")) if isinstance(asked, Mapping) else ""
    kind = record.get("toolDenialKind")
    result = record.get("toolUseResult")
    if decision in ("deny", "denied", "reject", "rejected") or kind:
        reason = result if isinstance(result, str) else str(kind or source or "denied")
        by_hook = "hook" in source.lower() or "hook" in str(kind or "").lower()
        return (HOOK_REFUSED if by_hook else HOST_REFUSED), reason[:500]
    if block.get("is_error") is True:
        return FAILED, (result if isinstance(result, str) else "")[:500]
    return RAN, ""


def read_calls(paths: Iterable[str | Path]) -> Read:
    """The tool calls of the transcripts at `paths` (see the module docstring)."""
    out = Read()
    calls: dict[str, ToolCall] = {}
    results: dict[str, tuple[str, str]] = {}
    for path in transcript_files(paths):
        try:
            handle = path.open("rb")
        except OSError as exc:
            out.problems.append(Problem(str(path), 0, f"cannot read: {exc.strerror or exc}"))
            continue
        with handle:
            for n, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    out.problems.append(Problem(str(path), n, "not a JSON record (malformed or truncated)"))
                    continue
                if not isinstance(record, dict):
                    out.problems.append(Problem(str(path), n, "not a JSON object"))
                    continue
                kind = record.get("type")
                if kind == "assistant":
                    for block in _blocks(record):
                        use, name = block.get("id"), block.get("name")
                        if block.get("type") != "tool_use" or not isinstance(use, str) or use in calls:
                            continue
                        if not isinstance(name, str) or not name:
                            out.problems.append(Problem(str(path), n, f"tool call `{use}` has no name"))
                            continue
                        given = block.get("input")
                        calls[use] = ToolCall(
                            use,
                            name,
                            given if isinstance(given, Mapping) else {},
                            str(record.get("sessionId") or path.stem),
                            str(record.get("cwd") or ""),
                            instant(record.get("timestamp")),
                            str(path),
                            n,
                        )
                elif kind == "user":
                    for block in _blocks(record):
                        use = block.get("tool_use_id")
                        if block.get("type") == "tool_result" and isinstance(use, str) and use not in results:
                            results[use] = _happened(block, record)
    for use, call in calls.items():
        if use in results:
            call.happened, call.denial = results[use]
    out.calls = sorted(calls.values(), key=lambda c: (c.time is None, c.time or 0, c.file, c.line))
    return out
