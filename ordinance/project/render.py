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
keeps a priority prefix and never cuts a line. The file then prints in
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

__all__ = ["Line", "Projection", "render_projection", "escape", "write_atomically", "DEFAULT_CAP"]

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
        return {"section": self.section, "key": self.key, "text": self.text, "notes": list(self.notes),
                "stamp": self.stamp, "events": list(self.events)}


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
        return {"projection": self.name, "revision": self.revision, "policy_hash": self.policy_hash,
                "now": format_instant(self.now), "audience": self.audience, "agent": self.agent,
                "cap": self.cap, "lines": [line.to_json() for line in self.lines],
                "left_out": dict(self.left_out)}


def _sections(model: Any, name: str) -> dict[str, tuple[int, int]]:
    return {str(s): (int(order), int(keep)) for p, s, order, keep in model.tuples("projection_section")
            if p == name}


def _prove(model: Any, relation: str, t: tuple[Any, ...]) -> list[tuple[str, tuple[Any, ...], bool]]:
    proof = why(model, relation, t)
    return [] if proof is None else list(fact_leaves(proof))


def lines_of(model: Any, sources: Sources, name: str, agent: str | None) -> list[Line]:
    """Every line of projection `name` in `model`, stamped, in no set order."""
    notes: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for t in model.query("projection_note", (name, None, None, None)):
        notes.setdefault((str(t[1]), str(t[2])), []).append(t)
    windows: dict[Any, int] = {}

    def valid_from(c: Any) -> int | None:
        if c not in windows:
            found = sorted(model.query("claim_valid", (c, None, None)))
            windows[c] = found[0][1] if found else -1
        return None if windows[c] < 0 else windows[c]

    out = []
    for t in model.query("projection_line", (name, None, None, None)):
        section, key, text = str(t[1]), str(t[2]), str(t[3])
        leaves = _prove(model, "projection_line", t)
        mine = sorted(notes.get((section, key), []))
        for n in mine:
            leaves += _prove(model, "projection_note", n)
        events: dict[int, Event] = {}
        for relation, args, _ in leaves:
            found = [sources.first(relation, args)]
            if relation.startswith("claim") and args:  # the window the stamp's time comes from
                found += [sources.first("claim_valid", w)
                          for w in sorted(model.query("claim_valid", (args[0], None, None)))[:1]]
            events.update((e.seq, e) for e in found if e is not None)
        out.append(Line(section, key, text, tuple(str(n[3]) for n in mine),
                        stamp(leaves, valid_from, list(events.values()), agent, model.now),
                        tuple(sorted(events))))
    return out


def render_projection(
    model: Any,
    sources: Sources,
    policy: CheckedProgram,
    name: str,
    *,
    audience: str | None = None,
    agent: str | None = None,
    cap: int | None = DEFAULT_CAP,
) -> Projection:
    """Projection `name` of `model` (built from `sources`), as text under `cap` bytes."""
    sections = _sections(model, name)
    if not sections:
        raise ProjectionError(f"the policy declares no projection `{name}` (no `projection_section` for it)",
                              code="unknown_projection")
    if agent is None:
        agents = sorted(str(a) for (a,) in model.tuples("standing_agent"))
        agent = agents[0] if len(agents) == 1 else None
    every = lines_of(model, sources, name, agent)
    for line in every:
        if line.section not in sections:
            raise ProjectionError(f"line `{line.key}` is in section `{line.section}`, which `{name}` does not declare",
                                  code="unknown_section")
    who = f" of {escape(agent)}" if agent else ""
    header = (f"# {escape(name)}{who} · revision {sources.revision} · now {format_instant(model.now)} · "
              f"audience {escape(audience or 'all')} · policy {policy.source_hash[:12]}")
    by_order = sorted(every, key=lambda ln: (sections[ln.section][0], ln.section, ln.key, ln.text))
    by_keep = sorted(every, key=lambda ln: (sections[ln.section][1], sections[ln.section][0], ln.section,
                                            ln.key, ln.text))
    rendered = {id(ln): ln.render() for ln in every}

    def assemble(kept: list[Line], left_out: list[tuple[str, int]]) -> str:
        out, section = [header], None
        for line in kept:
            if line.section != section:
                section = line.section
                out.append(f"## {escape(section)}")
            out.append(rendered[id(line)])
        if left_out:
            out.append(_trailer(cap or 0, left_out))
        return "\n".join(out) + "\n"

    kept, left_out = by_order, []
    text = assemble(kept, [])
    if cap is not None and len(text.encode()) > cap:
        used = len(header.encode()) + 1 + len(_trailer(cap, [(s, len(every)) for s in sections]).encode()) + 1
        if used > cap:
            raise ProjectionError(f"a cap of {cap} bytes cannot hold the heading of `{name}`", code="bad_cap")
        admitted, opened = set(), set()
        for line in by_keep:
            need = len(rendered[id(line)].encode()) + 1
            if line.section not in opened:
                need += len(f"## {escape(line.section)}".encode()) + 1
            if used + need > cap:
                break
            admitted.add(id(line))
            opened.add(line.section)
            used += need
        kept = [ln for ln in by_order if id(ln) in admitted]
        counts: dict[str, int] = {}
        for line in by_order:
            if id(line) not in admitted:
                counts[line.section] = counts.get(line.section, 0) + 1
        left_out = sorted(counts.items(), key=lambda kv: (sections[kv[0]][0], kv[0]))
        text = assemble(kept, left_out)
    return Projection(name, sources.revision, policy.source_hash, model.now, audience, agent, cap,
                      tuple(kept), tuple(left_out), text)


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
