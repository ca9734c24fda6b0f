"""Records (seed 001's encoding): a projection as Markdown with YAML front matter.

    text = records(projector, "state", now, audience="public")
    facts = record_facts(text)      # the JSON Lines `ordinance load` takes

One record per line of the projection:

    ---
    type: "state"
    date: "2026-08-14"
    truth_class: "FACT"
    author: "gh"
    layer: "public"
    section: "Claims"
    key: "rc1-state"
    events: [65, 66, 67]
    ---
    - rc1-state: RC 1 is approved on GitHub [verified gh 23:41] (r65 r66 r67)

    ```jsonl
    {"relation": "claim_source", "args": ["rc1-state", "gh", "observed"], "source": ..., "layer": "public"}
    ```

The front matter's scalars are JSON strings (valid YAML), so nothing a user
wrote can break it. `truth_class` follows the stamp: FACT when verified or
corrected, SPECULATION when the proof rests on a speculation or hearsay,
INFERENCE otherwise. `author` is who the stamp names (or the newest event's
author); `layer` is the most private layer among the events behind the line,
so a record never claims to be more public than what it carries. The
`jsonl` block holds those events as facts, so loading the records back
(`ordinance load records.md`) keeps the facts.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..diagnostics import ProjectionError
from ..values import format_instant, json_text
from .projector import Projector
from .render import Line

__all__ = ["records", "record_facts", "truth_class"]

_FENCE = re.compile(r"^```jsonl\n(.*?)^```$", re.M | re.S)


def truth_class(line: Line, leaves_kinds: set[str]) -> str:
    if line.stamp.startswith(("verified", "corrected")):
        return "FACT"
    if leaves_kinds & {"speculation", "hearsay"}:
        return "SPECULATION"
    return "INFERENCE"


def _scalar(value: Any) -> str:
    return json_text(value)


def records(projector: Projector, name: str, now: int, *, audience: str | None = None, agent: str | None = None) -> str:
    """Projection `name` as Markdown records, one per line, uncapped."""
    projection = projector.render(name, now, audience=audience, cap=None, agent=agent)
    sources = projector.sources(audience)
    ranks = projector.layers.ranks
    out: list[str] = []
    for line in projection.lines:
        events = [sources.event(s) for s in line.events]
        kinds = {str(e.args[2]) for e in events if e.relation == "claim_source" and len(e.args) == 3}
        layer = max((e.layer for e in events), key=lambda la: (ranks.get(la, len(ranks)), la), default="public")
        who = (
            line.stamp.split(" ")[1]
            if line.stamp.startswith(("verified ", "asserted "))
            else (agent or projection.agent or (max(events, key=lambda e: e.seq).author if events else ""))
        )
        front = [
            "---",
            f"type: {_scalar(name)}",
            f"date: {_scalar(format_instant(now)[:10])}",
            f"truth_class: {_scalar(truth_class(line, kinds))}",
            f"author: {_scalar(who)}",
            f"layer: {_scalar(layer)}",
            f"section: {_scalar(line.section)}",
            f"key: {_scalar(line.key)}",
            f"events: {json.dumps(list(line.events))}",
            "---",
        ]
        facts = [
            json_text(
                {
                    "relation": e.relation,
                    "args": list(e.args),
                    "source": e.source,
                    "author": e.author,
                    "layer": e.layer,
                },
            ).replace("`", "\\u0060")
            for e in events
        ]
        out.append("\n".join(front + [line.render(), "", "```jsonl", *facts, "```", ""]))
    return "\n".join(out)


def record_facts(text: str) -> list[str]:
    """The fact lines (JSON) of Markdown records, each fact once, in order."""
    if not text.startswith("---\n"):
        raise ProjectionError("records start with a `---` front matter line", code="bad_records")
    seen: dict[str, None] = {}
    for block in _FENCE.findall(text):
        for line in block.splitlines():
            if line.strip():
                seen.setdefault(line, None)
    return list(seen)
