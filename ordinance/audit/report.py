"""An audit's results for people (a summary) and programs (JSON Lines rows).

summary = Summary(); for row in rows: summary.add(row)
print(summary.text())
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..explain import action_text
from ..values import escape, format_instant
from .replay import ANSWERS, Audited

__all__ = ["Summary", "row_json"]

FLIPS_SHOWN = 20  # calls listed per flip in the text summary


def row_json(a: Audited) -> dict[str, Any]:
    """One JSON Lines row: the call, what happened, the answer and its reasons (and the earlier policy's)."""
    s, d = a.subject, a.decision
    out: dict[str, Any] = {
        "id": s.id,
        "tool": s.tool,
        "session": s.session,
        "source": s.source,
        "now": format_instant(s.now),
        "action": action_text(s.request),
        "happened": s.happened,
        "answer": a.answer,
        "reasons": [r.to_json() for r in d.reasons],
        "flags": [f.to_json() for f in d.flags],
        "errors": [e.to_json() for e in d.errors],
        "revision": d.revision,
        "policy_hash": d.policy_hash,
    }
    if a.was is not None:
        out["was"] = {"answer": a.was_answer, "reasons": [r.to_json() for r in a.was.reasons]}
        out["flip"] = a.flip
    return out


def _reasons(a: Audited) -> list[str]:
    """The codes an answer rests on: a deny's reasons (errors included), an ask's flags."""
    d = a.decision
    if a.answer == "deny":
        return [r.code for r in d.reasons] or [e.code for e in d.errors]
    if a.answer == "ask":
        return [f.code for f in d.flags]
    return []


@dataclass
class Summary:
    """Counts by answer, reason, tool, session, what happened; the flips."""

    calls: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    tools: Counter[tuple[str, str]] = field(default_factory=Counter)
    sessions: Counter[tuple[str, str]] = field(default_factory=Counter)
    happened: Counter[tuple[str, str]] = field(default_factory=Counter)
    # flip -> (id, was, answer, reasons, action) of each call that flipped (no decision kept)
    flips: dict[str, list[tuple[str, str, str, str, str]]] = field(default_factory=dict)
    compared: bool = False

    def add(self, a: Audited) -> None:
        self.calls += 1
        self.answers[a.answer] += 1
        self.reasons.update(f"{a.answer} {code}" for code in _reasons(a))
        self.tools[(a.subject.tool, a.answer)] += 1
        self.sessions[(a.subject.session, a.answer)] += 1
        self.happened[(a.subject.happened, a.answer)] += 1
        if a.was is not None:
            self.compared = True
            if a.flip is not None:
                shown = (
                    a.subject.id,
                    str(a.was_answer),
                    a.answer,
                    ", ".join(_reasons(a)) or "-",
                    action_text(a.subject.request),
                )
                self.flips.setdefault(a.flip, []).append(shown)

    def json(self) -> dict[str, Any]:
        def pairs(c: Counter[tuple[str, str]]) -> dict[str, dict[str, int]]:
            out: dict[str, dict[str, int]] = {}
            for (k, answer), n in sorted(c.items()):
                out.setdefault(k, {})[answer] = n
            return out

        return {
            "calls": self.calls,
            "answers": dict(sorted(self.answers.items())),
            "reasons": dict(self.reasons.most_common()),
            "tools": pairs(self.tools),
            "sessions": pairs(self.sessions),
            "happened": pairs(self.happened),
            "flips": {k: [f[0] for f in v] for k, v in sorted(self.flips.items())},
        }

    def text(self) -> str:
        """The summary a person reads first (everything a transcript wrote is escaped)."""
        lines = [f"{self.calls} tool calls: " + ", ".join(f"{self.answers[k]} {k}" for k in ANSWERS if self.answers[k])]
        for title, counter in (("by reason", self.reasons),):
            if counter:
                lines.append(f"{title}:")
                lines.extend(f"  {n:>7}  {escape(k)}" for k, n in counter.most_common())
        for title, pairs in (("by tool", self.tools), ("by session", self.sessions), ("what happened", self.happened)):
            grouped: dict[str, Counter[str]] = {}
            for (k, answer), n in pairs.items():
                grouped.setdefault(k, Counter())[answer] = n
            lines.append(f"{title}:")
            for k, c in sorted(grouped.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
                parts = ", ".join(f"{c[a]} {a}" for a in ANSWERS if c[a])
                lines.append(f"  {sum(c.values()):>7}  {escape(k)} ({parts})")
        if self.compared:
            for flip in ("newly-blocked", "newly-allowed", "changed"):
                rows = self.flips.get(flip, [])
                lines.append(f"{flip}: {len(rows)}")
                for use, was, now, why, action in rows[:FLIPS_SHOWN]:
                    lines.append(f"  {escape(use)}  {was} -> {now} ({escape(why)})  {escape(action)}")
                if len(rows) > FLIPS_SHOWN:
                    lines.append(f"  ... {len(rows) - FLIPS_SHOWN} more (--jsonl lists every call)")
        return "\n".join(lines)
