"""Render a projection the policy declares, deterministically, under a byte cap.

A projection P is what the rules derive into `projection_line(P, Section,
Key, Text)` (with `projection_note`s and `projection_section(P, Section,
Order, Keep)`, see stdlib projection.rules). Rendering reads those tuples
from a model, proves each line (`ordinance.engine.why`), maps the proof's
fact leaves to the events that wrote them, and stamps it (stamps.py). The
text is a function of (revision, policy hash, `now`, audience): rendering
again gives the same bytes.

    # state of prime · revision 12 · now 2026-08-14T23:16:00Z · audience all · policy 1a2b3c4d5e6f
    ## Claims
    - mon-sc: the monitor self-corrects · contradicted [verified peer 22:53] (r3 r9)

The cap: lines are admitted by section `Keep` rank, then by key, until the
next one (with its section heading, and the note of what was left out)
would pass `cap` bytes of UTF-8; every later line is left out too, so the cap
keeps a priority prefix and never cuts a line. Lines are proved as they are
admitted, so the tail the cap leaves out is counted, never proved: a long
backlog costs about a cap's worth of proofs. The file then prints in
section `Order`, a section only if it has lines, and ends with one line
counting what the cap left out, per section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import ProjectionError
from ..engine import why
from ..facts import Event
from ..rules.checked import CheckedProgram
from ..values import format_instant
from .sources import Sources
from .escape import escape
from .stamps import fact_leaves, stamp

EVERY_LAYER = "all"  # how a projection names the audience that sees every layer (no --audience)

__all__ = ["EVERY_LAYER", "Line", "Projection", "render_projection", "escape", "write_atomically", "DEFAULT_CAP"]

DEFAULT_CAP = 4096


@dataclass(frozen=True)
class Line:
    section: str
    key: str
    text: str
    notes: tuple[str, ...]
    stamp: str
    events: tuple[int, ...]  # the seqs of the events behind the line's proofs

    def render(self) -> str:
        head = escape(self.key) if self.text == self.key else f"{escape(self.key)}: {escape(self.text)}"
        notes = "".join(f" · {escape(n)}" for n in self.notes)
        seqs = f" ({' '.join(f'r{s}' for s in self.events)})" if self.events else ""
        return f"- {head}{notes} [{self.stamp}]{seqs}"

    def to_json(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "key": self.key,
            "text": self.text,
            "notes": list(self.notes),
            "stamp": self.stamp,
            "events": list(self.events),
        }


@dataclass(frozen=True)
class Projection:
    """A rendered projection: its lines (those the cap kept) and its text."""

    name: str
    revision: int
    policy_hash: str
    now: int
    audience: str | None
    agent: str | None
    cap: int | None
    lines: tuple[Line, ...]
    left_out: tuple[tuple[str, int], ...]  # (section, lines the cap left out)
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "projection": self.name,
            "revision": self.revision,
            "policy_hash": self.policy_hash,
            "now": format_instant(self.now),
            "audience": self.audience or EVERY_LAYER,
            "agent": self.agent,
            "cap": self.cap,
            "lines": [line.to_json() for line in self.lines],
            "left_out": dict(self.left_out),
        }


def _sections(model: Any, name: str) -> dict[str, tuple[int, int]]:
    return {str(s): (int(order), int(keep)) for p, s, order, keep in model.tuples("projection_section") if p == name}


def _prove(model: Any, relation: str, t: tuple[Any, ...]) -> list[tuple[str, tuple[Any, ...], bool]]:
    proof = why(model, relation, t)
    return [] if proof is None else list(fact_leaves(proof))


class _Prover:
    """Proves and stamps the lines of projection `name` one at a time, as the
    cap admits them."""

    def __init__(self, model: Any, sources: Sources, name: str, agent: str | None, now: int) -> None:
        self.model, self.sources, self.agent, self.now = model, sources, agent, now
        self.notes: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for t in model.query("projection_note", (name, None, None, None)):
            self.notes.setdefault((str(t[1]), str(t[2])), []).append(t)
        self.windows: dict[Any, int] = {}
        self.done: dict[tuple[Any, ...], Line] = {}
        self.domains = {d for _, d in model.query("failure_domain", (agent, None))} if agent else set()

    def shares_domain(self, who: Any) -> bool:
        return any(d in self.domains for _, d in self.model.query("failure_domain", (who, None)))

    def valid_from(self, c: Any) -> int | None:
        if c not in self.windows:
            found = sorted(self.model.query("claim_valid", (c, None, None)))
            self.windows[c] = found[0][1] if found else -1
        return None if self.windows[c] < 0 else self.windows[c]

    def line(self, t: tuple[Any, ...]) -> Line:
        hit = self.done.get(t)
        if hit is not None:
            return hit
        model, sources = self.model, self.sources
        section, key, text = str(t[1]), str(t[2]), str(t[3])
        leaves = _prove(model, "projection_line", t)
        mine = sorted(self.notes.get((section, key), []))
        for n in mine:
            leaves += _prove(model, "projection_note", n)
        events: dict[int, Event] = {}
        for relation, args, _ in leaves:
            found = [sources.first(relation, args)]
            if relation.startswith("claim") and args:  # the window the stamp's time comes from
                found += [
                    sources.first("claim_valid", w)
                    for w in sorted(model.query("claim_valid", (args[0], None, None)))[:1]
                ]
            events.update((e.seq, e) for e in found if e is not None)
        line = self.done[t] = Line(
            section,
            key,
            text,
            tuple(str(n[3]) for n in mine),
            stamp(leaves, self.valid_from, list(events.values()), self.agent, self.now, self.shares_domain),
            tuple(sorted(events)),
        )
        return line


def render_projection(
    model: Any,
    sources: Sources,
    policy: CheckedProgram,
    name: str,
    *,
    audience: str | None = None,
    agent: str | None = None,
    cap: int | None = DEFAULT_CAP,
    now: int | None = None,
) -> Projection:
    """Projection `name` of `model` (built from `sources`), as text under
    `cap` bytes, at `now` (default: the model's; a warm model holds at every
    `now` within its horizon, engine/clock.py, but keeps its own)."""
    at = model.now if now is None else now
    sections = _sections(model, name)
    if not sections:
        raise ProjectionError(
            f"the policy declares no projection `{name}` (no `projection_section` for it)", code="unknown_projection"
        )
    if agent is None:
        agents = sorted(str(a) for (a,) in model.tuples("standing_agent"))
        agent = agents[0] if len(agents) == 1 else None
    raw = model.query("projection_line", (name, None, None, None))
    for t in raw:
        if str(t[1]) not in sections:
            raise ProjectionError(
                f"line `{t[2]}` is in section `{t[1]}`, which `{name}` does not declare", code="unknown_section"
            )
    who = f" of {escape(agent)}" if agent else ""
    header = (
        f"# {escape(name)}{who} · revision {sources.revision} · now {format_instant(at)} · "
        f"audience {escape(audience or EVERY_LAYER)} · policy {policy.source_hash[:12]}"
    )

    def order(t: tuple[Any, ...]) -> tuple[Any, ...]:
        return (sections[str(t[1])][0], str(t[1]), str(t[2]), str(t[3]))

    def keep(t: tuple[Any, ...]) -> tuple[Any, ...]:
        return (sections[str(t[1])][1],) + order(t)

    prover = _Prover(model, sources, name, agent, at)
    by_keep = sorted(raw, key=keep)

    def admit(used: int) -> list[tuple[Any, ...]]:
        """The longest prefix (in keep order) of the lines that fits from `used` bytes."""
        admitted: list[tuple[Any, ...]] = []
        opened: set[str] = set()
        for t in by_keep:
            need = len(prover.line(t).render().encode()) + 1
            if str(t[1]) not in opened:
                need += len(f"## {escape(str(t[1]))}".encode()) + 1
            if cap is not None and used + need > cap:
                break
            admitted.append(t)
            opened.add(str(t[1]))
            used += need
        return admitted

    base = len(header.encode()) + 1
    if cap is not None and base > cap:
        raise ProjectionError(f"a cap of {cap} bytes cannot hold the heading of `{name}`", code="bad_cap")
    admitted = admit(base)
    if len(admitted) < len(by_keep):  # something is left out: make room for the line saying so
        assert cap is not None
        reserve = len(_trailer(cap, [(s, len(by_keep)) for s in sections]).encode()) + 1
        if base + reserve > cap:
            raise ProjectionError(f"a cap of {cap} bytes cannot hold the heading of `{name}`", code="bad_cap")
        admitted = admit(base + reserve)
    chosen = set(admitted)
    counts: dict[str, int] = {}
    for t in by_keep:
        if t not in chosen:
            counts[str(t[1])] = counts.get(str(t[1]), 0) + 1
    left_out = sorted(counts.items(), key=lambda kv: (sections[kv[0]][0], kv[0]))
    kept = [prover.line(t) for t in sorted(admitted, key=order)]
    out, section = [header], None
    for line in kept:
        if line.section != section:
            section = line.section
            out.append(f"## {escape(section)}")
        out.append(line.render())
    if left_out:
        out.append(_trailer(cap or 0, left_out))
    text = "\n".join(out) + "\n"
    return Projection(
        name, sources.revision, policy.source_hash, at, audience, agent, cap, tuple(kept), tuple(left_out), text
    )


def _trailer(cap: int, left: list[tuple[str, int]]) -> str:
    n = sum(k for _, k in left)
    parts = ", ".join(f"{escape(s)} {k}" for s, k in left)
    return f"({n} line{'s' if n != 1 else ''} left out by the {cap}-byte cap: {parts})"


def write_atomically(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory
    and a rename: a reader sees the old file or the new one, never a part."""
    import os
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ordinance-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
