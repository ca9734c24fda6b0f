"""The log as one audience sees it: the facts to evaluate, and their events.

`Sources(store, revision, layers)` replays the fact events with seq <=
revision whose layer is among `layers` (every layer if None), minus purged
events: the facts an audience's model is built from, so a projection never
sees a fact its audience may not (filtered before evaluation, never after).
It also indexes, for every fact, the events that wrote it, which is how a
rendered line names the events behind its proof. `advance` follows the store.
"""

from __future__ import annotations

from typing import Any

from ..facts import FACT_KINDS, Event, Store

__all__ = ["Sources"]

Fact = tuple[str, tuple[Any, ...]]


class Sources:
    def __init__(self, store: Store, revision: int | None = None, layers: frozenset[str] | None = None) -> None:
        self.layers = layers
        self.revision = 0
        self.facts: dict[str, set[tuple[Any, ...]]] = {}
        self.origin: dict[Fact, list[Event]] = {}
        self._purged: set[int] = set()
        self._add(store.events(0, revision))
        self.revision = store.revision() if revision is None else revision

    def _visible(self, e: Event) -> bool:
        return self.layers is None or e.layer in self.layers

    def _add(self, events: list[Event]) -> bool:
        """Add `events`; False if one is a purge (the caller rebuilds)."""
        purges = {int(s) for e in events if e.kind == "purge" for s in e.args}
        if purges and self.origin:
            return False
        self._purged |= purges
        for e in events:
            if e.kind in FACT_KINDS and e.seq not in self._purged and self._visible(e):
                args = tuple(e.args)
                self.facts.setdefault(e.relation, set()).add(args)
                self.origin.setdefault((e.relation, args), []).append(e)
        return True

    def advance(self, store: Store) -> bool:
        """Follow the store to its newest revision; True if anything changed.
        A purge since the last look rebuilds from the log."""
        rev = store.revision()
        if rev == self.revision:
            return False
        if not self._add(store.events(self.revision, rev)):
            self.__init__(store, rev, self.layers)  # type: ignore[misc]
        self.revision = rev
        return True

    def events(self, since: int = 0, until: int | None = None, kinds: Any = None) -> list[Event]:
        """The visible fact events with since < seq <= until, in order (the
        reading side of `Store.events`, for renderers that annotate facts)."""
        found = [e for evs in self.origin.values() for e in evs
                 if e.seq > since and (until is None or e.seq <= until) and (kinds is None or e.kind in kinds)]
        return sorted(found, key=lambda e: e.seq)

    def events_of(self, relation: str, t: tuple[Any, ...]) -> list[Event]:
        """The visible events that wrote `relation(t)`, oldest first."""
        return self.origin.get((relation, tuple(t)), [])
