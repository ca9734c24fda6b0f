"""The log as one audience sees it: the facts to evaluate, and their events.

`Sources(store, revision, layers)` replays the fact events with seq <=
revision whose layer is among `layers` (every layer if None), minus purged
events: the facts an audience's model is built from, so a projection never
sees a fact its audience may not (filtered before evaluation, never after).
It also indexes, for every fact, the seqs of the events that wrote it, which
is how a rendered line names the events behind its proof (the events
themselves are read back when asked for). `advance` follows the store.
"""

from __future__ import annotations

import json
from typing import Any

from ..facts import FACT_KINDS, Event, Store

__all__ = ["Sources"]

Fact = tuple[str, tuple[Any, ...]]


class Sources:
    def __init__(self, store: Store, revision: int | None = None, layers: frozenset[str] | None = None) -> None:
        self.store = store
        self.layers = layers
        self.revision = store.revision() if revision is None else revision
        self.changed = self.revision  # the newest revision that changed `facts` (log events change none)
        self.facts: dict[str, set[tuple[Any, ...]]] = {}
        self.origin: dict[Fact, list[int]] = {}
        self._events: dict[int, Event] = {}
        self._purged = store.purged(self.revision)
        self._add(0, self.revision)

    def _add(self, since: int, until: int) -> None:
        # the raw rows (seq 0, relation 2, args 3, layer 10: facts.store.COLUMNS): decoding
        # only the arguments keeps a replay of 100k events cheap
        rows = self.store._rows(since, until, FACT_KINDS)
        layers, purged, facts, origin = self.layers, self._purged, self.facts, self.origin
        for row in rows:
            seq: int = row[0]
            if seq in purged or (layers is not None and row[10] not in layers):
                continue
            relation: str = row[2]
            args = tuple(json.loads(row[3]))
            facts.setdefault(relation, set()).add(args)
            origin.setdefault((relation, args), []).append(seq)

    def advance(self, store: Store) -> bool:
        """Follow the store to its newest revision; True if anything was added.
        A purge since the last look rebuilds from the log."""
        rev = store.revision()
        if rev == self.revision:
            return False
        if store.events(self.revision, rev, ("purge",)):
            self.__init__(store, rev, self.layers)  # type: ignore[misc]
            return True
        before = sum(map(len, self.origin.values()))
        self._add(self.revision, rev)
        self.revision = rev
        if sum(map(len, self.origin.values())) == before:
            return False
        self.changed = rev
        return True

    def event(self, seq: int) -> Event:
        hit = self._events.get(seq)
        if hit is None:
            hit = self._events[seq] = self.store.events(seq - 1, seq)[0]
        return hit

    def events(self, since: int = 0, until: int | None = None, kinds: Any = None) -> list[Event]:
        """The visible fact events with since < seq <= until, in order (the
        reading side of `Store.events`, for renderers that annotate facts)."""
        visible = {s for found in self.origin.values() for s in found}
        last = self.revision if until is None else min(until, self.revision)
        return [e for e in self.store.events(since, last, kinds or FACT_KINDS) if e.seq in visible]

    def first(self, relation: str, t: tuple[Any, ...]) -> Event | None:
        """The oldest visible event that wrote `relation(t)`."""
        found = self.origin.get((relation, tuple(t)))
        return self.event(found[0]) if found else None

    def events_of(self, relation: str, t: tuple[Any, ...]) -> list[Event]:
        """The visible events that wrote `relation(t)`, oldest first."""
        return [self.event(s) for s in self.origin.get((relation, tuple(t)), [])]
