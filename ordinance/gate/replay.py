"""Replaying the decision log: every logged decision decided again.

    for r in replay_log(Gate(new_policy, store), what_if=True):
        if not r.same:
            print(r.seq, r.logged["allowed"], r.again.allowed)

Each decision is made again by `Gate.replay`, from its request and `now`,
over the store at its own revision (or at one `revision` for all). Under
the gate's policy: the one the decisions were made under (a check of the
log: each must come out the same), or, with `what_if`, another one (what
that policy would have decided). Decisions are read a page at a time; those
logged between the same two fact changes share the gate's warm model per
`now`. Nothing is logged. `ordinance replay` prints what this yields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from .core import Gate
from .decision import Decision

__all__ = ["Replayed", "replay_log"]

PAGE = 1000  # decisions read from the store at a time
_COMPARED = ("allowed", "reasons", "errors")


@dataclass(frozen=True, slots=True)
class Replayed:
    """A logged decision (`seq`, its payload `logged`) and the decision
    made again (`again`); `same` if both allow or deny alike, for the same
    reasons and errors."""

    seq: int
    logged: Mapping[str, Any]
    again: Decision
    same: bool


def replay_log(gate: Gate, *, revision: int | None = None, what_if: bool = False) -> Iterator[Replayed]:
    """Every logged decision, oldest first, decided again by `gate` (see
    the module docstring); streamed, so a long log is never held whole."""
    store = gate.store
    if revision is not None:
        store.as_of(revision)  # refuses a revision not in the log before the first page
    after = 0
    while page := store.decision_page(after=after, limit=PAGE):
        for event in page:
            logged = event.payload or {}
            again = gate.replay(logged, revision=revision, what_if=what_if)
            payload = again.payload()
            same = all(logged.get(k) == payload.get(k) for k in _COMPARED)
            yield Replayed(event.seq, logged, again, same)
        after = page[-1].seq
