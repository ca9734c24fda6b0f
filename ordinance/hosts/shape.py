"""The Claude Code shape the gate reads, both ways, for the other hosts.

The hosts other than Claude Code map their payload to one or more Claude
Code-shaped hook calls (the one request shape the gate reads) and answer
with the verdict of all of them: a deny if any denies, else an ask if any
asks, else an allow only if every one allows (the policy said so), else
nothing: the host's own permission flow decides (a hook never widens it).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["Verdict", "verdict", "escape_reason", "call", "BadPayload"]

_REASON = 300  # characters of a reason a host shows


class BadPayload(ValueError):
    """A host's hook input the mapping cannot read (the hook denies it)."""


def call(
    event: str,
    tool: str,
    inputs: Mapping[str, Any],
    *,
    cwd: Any = None,
    session: Any = None,
    use_id: Any = None,
) -> dict[str, Any]:
    """A Claude Code-shaped hook call: what the gate's hook endpoint reads
    (request facts: tool, inputs, command, paths, project, cwd, session)."""
    out: dict[str, Any] = {"hook_event_name": event, "tool_name": tool, "tool_input": dict(inputs)}
    if isinstance(cwd, str) and cwd:
        out["cwd"] = cwd
    if isinstance(session, str) and session:
        out["session_id"] = session
    if isinstance(use_id, str) and use_id:
        out["tool_use_id"] = use_id
    return out


class Verdict:
    """`decision` is "deny", "ask", "allow" or None (defer to the host)."""

    __slots__ = ("decision", "reason", "notice")

    def __init__(self, decision: str | None, reason: str = "", notice: str = "") -> None:
        self.decision, self.reason, self.notice = decision, reason, notice

    def __repr__(self) -> str:
        return f"Verdict({self.decision!r}, {self.reason!r})"


def escape_reason(text: str) -> str:
    """`text` safe for a terminal (no control character) and short."""
    clean = "".join(c if c >= " " and c != "\x7f" else f"\\x{ord(c):02x}" for c in text)
    return clean if len(clean) <= _REASON else clean[: _REASON - 1] + "…"


def _one(answer: Any) -> tuple[str | None, str, str]:
    if answer is None:  # --fail-open and the gate unreachable: the host decides
        return None, "", ""
    if not isinstance(answer, Mapping):
        return "deny", "ordinance: error[hook]: the gate's answer is not an object", ""
    notice = answer.get("systemMessage")
    out = answer.get("hookSpecificOutput")
    if not isinstance(out, Mapping):
        return None, "", str(notice or "")
    decision = out.get("permissionDecision")
    reason = str(out.get("permissionDecisionReason") or "")
    if decision in ("deny", "ask", "allow"):
        return str(decision), reason, str(notice or "")
    if decision is None:
        return None, reason, str(notice or "")
    return "deny", f"ordinance: error[hook]: unknown decision {decision!r}", ""  # fail closed


def verdict(answers: Sequence[Any]) -> Verdict:
    """The verdict of the gate's (Claude Code-shaped) answers; no answers defer."""
    ones = [_one(a) for a in answers]
    notice = "; ".join(n for _, _, n in ones if n)
    for wanted in ("deny", "ask"):
        reasons = [r for d, r, _ in ones if d == wanted]
        if reasons:
            return Verdict(wanted, escape_reason("; ".join(reasons)), escape_reason(notice))
    if ones and all(d == "allow" for d, _, _ in ones):
        return Verdict("allow", escape_reason(ones[0][1]), escape_reason(notice))
    return Verdict(None, "", escape_reason(notice))
