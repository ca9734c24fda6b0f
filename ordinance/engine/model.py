"""The model: what evaluation derived, with a provenance note per tuple."""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakSet
from typing import Any

from .prepare import Prepared
from .limits import Limits
from .relation import Rel

__all__ = ["Model", "Note"]


@dataclass(frozen=True, slots=True)
class Note:
    """How a tuple got into the model: `rule` is None for a given fact (height 0)."""

    rule: int | None
    height: int
    stratum: int = -1  # -1 for a given fact

    @property
    def rank(self) -> tuple[int, int]:
        """Premises of the deriving rule instance always rank lower."""
        return (self.stratum + 1, self.height)


class Model:
    """Relation name -> set of tuples, for one `now`.

    incremental.py changes one: `extend` adds facts in place and derives
    their consequences, `overlay` returns a scratch model over it, `retract`
    removes facts; clock.py moves it to another `now`.
    """

    def __init__(self, prepared: Prepared, rels: dict[str, Rel], now: int, limits: Limits | None):
        self.prepared = prepared
        self.rels = rels
        self.now = now
        self.limits = limits
        self.rounds: dict[int, int] = {}  # stratum index -> its last round (height)
        self.inexact: set[int] = set()  # recursive strata grown by a seed run (see renumber)
        self.base: Model | None = None  # set on overlays
        self.horizon: Any = None  # clock.Horizon, computed when first asked for
        self.borrowed: set[str] = set()  # relations shared with the model this one was moved from
        self.overlays: WeakSet[Model] = WeakSet()  # live overlays over this model (clock.advance)
        self.tickets: dict[int, tuple[int, Any]] = {}  # `autoinc()` number -> (rule id, binding), qualify.py

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(self.rels)

    def tuples(self, relation: str) -> Any:
        """The set of tuples of `relation` (read-only; empty if unknown)."""
        rel = self.rels.get(relation)
        return rel.stable if rel is not None else frozenset()

    def contains(self, relation: str, t: tuple[Any, ...]) -> bool:
        rel = self.rels.get(relation)
        return rel is not None and tuple(t) in rel.stable

    def query(self, relation: str, pattern: tuple[Any, ...] | None = None) -> list[tuple[Any, ...]]:
        """Tuples matching `pattern` (None matches anything), using an index."""
        rel = self.rels.get(relation)
        if rel is None:
            return []
        if pattern is None:
            return list(rel.stable)
        cols: tuple[int, ...] = ()
        for i, v in enumerate(pattern):
            if v is not None:
                cols += (i,)
        if not cols:
            return list(rel.stable)
        if len(cols) == len(pattern):
            return [tuple(pattern)] if tuple(pattern) in rel.stable else []
        key = pattern[cols[0]] if len(cols) == 1 else tuple(pattern[c] for c in cols)
        return list(rel.index(cols).get(key, ()))

    def note(self, relation: str, t: tuple[Any, ...]) -> Note | None:
        """The provenance note of a tuple in the model, None if it is not in it.

        `height` is the round of the relation's stratum that derived it."""
        rel = self.rels.get(relation)
        if rel is None or tuple(t) not in rel.stable:
            return None
        if tuple(t) in rel.edb:
            return Note(None, 0)
        found = rel.note(tuple(t))
        assert found is not None, "every derived tuple has a note"
        return Note(found[1], found[0], self.prepared.stratum_index[relation])

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}: {len(r.stable)}" for n, r in self.rels.items())
        return f"Model(now={self.now}, {{{sizes}}})"
