"""The rehydration bundle (seed 003): the one bounded read after a cold turn.

    bundle = rehydrate(store, policy, now, audience=None, bound=16384)
    print(bundle.text)

Three parts, `===`-delimited, in one string: the state file (under its own
cap), the open decisions (projection "decisions": questions no settlement
answers), and the newest log lines, as many as fit in what `bound` leaves,
newest last. A log line is one event: `r12 18:03:07 assert
claim("c1", "db", "role", "primary") by prime via cli [public]`; gate
decisions show the request and its outcome. For an audience, the log shows
only fact events of the layers it sees (gate decisions and purges are made
over every layer, so they appear only in the full view). Trust the
compaction summary for flavor, the bundle for facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import ProjectionError
from ..facts import FACT_KINDS, Event, Store
from ..gate import Gate
from ..rules.checked import CheckedProgram
from .projector import Projector
from ..values import format_duration, format_instant, json_text
from .escape import escape
from .render import DEFAULT_CAP, Projection

__all__ = ["Bundle", "rehydrate", "log_line", "DEFAULT_BOUND"]

DEFAULT_BOUND = 16384
_CHUNK = 256


def _arg(value: Any, type_: str | None) -> str:
    if type_ == "time" and isinstance(value, int):
        return format_instant(value)
    if type_ == "duration" and isinstance(value, int):
        return format_duration(value)
    return json_text(value)


def log_line(e: Event, policy: CheckedProgram | None = None) -> str:
    """One event as one line: values by the policy's declared types (instants
    in ISO-8601), and what a user or agent wrote JSON-escaped."""
    clock = e.time[11:19] if len(e.time) >= 19 else "--:--:--"
    if e.kind == "decision":
        p = dict(e.payload or {})
        r = p.get("request", {})
        codes = sorted({str(x.get("code")) for x in p.get("reasons", [])})
        outcome = "allowed" if p.get("allowed") else "DENIED"
        what = " ".join(json_text(str(r.get(k))) for k in ("id", "agent", "kind", "target"))
        return f"r{e.seq} {clock} decision {what} {outcome}" + (f" ({', '.join(codes)})" if codes else "")
    decl = policy.relations.get(e.relation) if policy is not None else None
    types = decl.types if decl is not None and decl.types and len(decl.types) == len(e.args) else None
    args = ", ".join(_arg(a, types[i] if types else None) for i, a in enumerate(e.args))
    return (
        f"r{e.seq} {clock} {escape(e.kind)} {escape(e.relation)}({args}) by "
        f"{json_text(e.author)} via {json_text(e.source)} "
        f"[{escape(e.layer)}]"
    )


@dataclass(frozen=True)
class Bundle:
    state: Projection
    decisions: Projection
    log: tuple[str, ...]  # the newest log lines that fit, oldest first
    text: str


def rehydrate(
    source: Gate | Store | Projector,
    policy: CheckedProgram,
    now: int,
    audience: str | None = None,
    bound: int = DEFAULT_BOUND,
    *,
    cap: int = DEFAULT_CAP,
    agent: str | None = None,
) -> Bundle:
    """The state, the open decisions and the newest log lines, in at most `bound` bytes."""
    projector = Projector.of(source, policy)
    too_small = ProjectionError(
        f"a bound of {bound} bytes cannot hold the state and the open decisions", code="bad_bound"
    )
    try:
        state = projector.render("state", now, audience=audience, cap=min(cap, bound), agent=agent)
    except ProjectionError as err:
        if err.code == "bad_cap" and bound < cap:  # the bound, not the cap, left no room for the heading
            raise too_small from None
        raise
    head = f"=== state ===\n{state.text}"
    room = bound - len(head.encode())
    label = "=== open decisions ===\n"
    if room <= len(label):
        raise too_small
    decisions = projector.render("decisions", now, audience=audience, cap=room - len(label), agent=agent)
    part = label + decisions.text
    room -= len(part.encode())
    visible = projector.layers.visible(audience)
    store = projector.store
    revision = state.revision
    lines: list[str] = []
    label_room = room - len("=== log: the newest 0000000000 of 0000000000 events ===\n".encode())
    used, upto, full = 0, revision, False
    while upto > 0 and not full:
        chunk = store.events(max(0, upto - _CHUNK), upto)
        for e in reversed(chunk):
            if visible is not None and (e.kind not in FACT_KINDS or e.layer not in visible):
                continue
            line = log_line(e, policy)
            size = len(line.encode()) + 1
            if used + size > label_room:
                full = True
                break
            lines.append(line)
            used += size
        upto -= _CHUNK
    lines.reverse()
    log = "".join(f"{line}\n" for line in lines)
    text = f"{head}{part}=== log: the newest {len(lines)} of {revision} events ===\n{log}"
    return Bundle(state, decisions, tuple(lines), text)
