"""The log as one audience sees it: the facts to evaluate, and their events.

`Sources(store, revision, layers)` replays the fact events with seq <=
revision whose layer is among `layers` (every layer if None), minus purged
events: the facts an audience's model is built from, so a projection never
sees a fact its audience may not (filtered before evaluation, never after).
It also knows, for every fact, the seqs of the events that wrote it, which
is how a rendered line names the events behind its proof (the events
themselves are read back when asked for). Both are read when first asked
for: the facts by one pass over the log (an audience's model is evaluated
from them), a fact's events by one indexed read until then (a projection
from the gate's warm model, restored from its snapshot, reads only the
events behind the lines it renders). `advance` follows the store.
"""

from __future__ import annotations

import json
from typing import Any

from ..facts import FACT_KINDS, Event, Store
from ..facts.events import decode_row, encode_args

__all__ = ["Sources"]

Fact = tuple[str, tuple[Any, ...]]


class Sources:
    def __init__(self, store: Store, revision: int | None = None, layers: frozenset[str] | None = None) -> None:
        self.store = store
        self.layers = layers
        self.revision = store.revision() if revision is None else revision
        self.changed = self.revision  # the newest revision that changed `facts` (log events change none)
        self._facts: dict[str, set[tuple[Any, ...]]] | None = None
        self.origin: dict[Fact, list[int]] = {}  # every fact's once `facts` is read, else those asked for
        self._events: dict[int, Event] = {}
        self._purged: set[int] | None = None

    @property
    def facts(self) -> dict[str, set[tuple[Any, ...]]]:
        """The facts (read from the log when first asked for: a model from a
        gate snapshot needs only the events behind the lines it renders)."""
        if self._facts is None:
            self._facts, self.origin = {}, {}
            self._purged = self.store.purged(self.revision)
            self._add(0, self.revision)
        return self._facts

    def _add(self, since: int, until: int) -> None:
        # the raw rows (seq 0, relation 2, args 3, layer 10: facts.store.COLUMNS): decoding
        # only the arguments keeps a replay of 100k events cheap
        rows = self.store._rows(since, until, FACT_KINDS)
        layers, purged, facts, origin = self.layers, self._purged, self._facts, self.origin
        assert facts is not None and purged is not None
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
        if self._facts is None:  # nothing read yet but the origins asked for: forget those if facts changed
            news = store.events(self.revision, rev, (*FACT_KINDS, "purge"))
            self.revision = rev
            if not any(e.kind == "purge" or self.layers is None or e.layer in self.layers for e in news):
                return False
            self.origin, self.changed, self._purged = {}, rev, None
            return True
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

    def _origin(self, relation: str, t: tuple[Any, ...]) -> list[int]:
        """The seqs of the visible events that wrote `relation(t)`, oldest first."""
        key = (relation, tuple(t))
        found = self.origin.get(key)
        if found is None and self._facts is None:  # one indexed read (the purged seqs: one, once)
            if self._purged is None:
                self._purged = self.store.purged(self.revision)
            rows = self.store._rows_of(relation, encode_args(key[1]), self.revision)
            events = [decode_row(r) for r in rows if r[0] not in self._purged]
            visible = [e for e in events if self.layers is None or e.layer in self.layers]
            self._events.update((e.seq, e) for e in visible)
            found = self.origin[key] = [e.seq for e in visible]
        return found or []

    def event(self, seq: int) -> Event:
        hit = self._events.get(seq)
        if hit is None:
            hit = self._events[seq] = self.store.events(seq - 1, seq)[0]
        return hit

    def events(self, since: int = 0, until: int | None = None, kinds: Any = None) -> list[Event]:
        """The visible fact events with since < seq <= until, in order (the
        reading side of `Store.events`, for renderers that annotate facts)."""
        _ = self.facts  # every fact's origin
        visible = {s for found in self.origin.values() for s in found}
        last = self.revision if until is None else min(until, self.revision)
        return [e for e in self.store.events(since, last, kinds or FACT_KINDS) if e.seq in visible]

    def first(self, relation: str, t: tuple[Any, ...]) -> Event | None:
        """The oldest visible event that wrote `relation(t)`."""
        found = self._origin(relation, t)
        return self.event(found[0]) if found else None

    def events_of(self, relation: str, t: tuple[Any, ...]) -> list[Event]:
        """The visible events that wrote `relation(t)`, oldest first."""
        return [self.event(s) for s in self._origin(relation, t)]
