"""A relation during evaluation, in datafrog's vocabulary.

`stable` holds every tuple known so far (the frontier included, so joins
probe one structure; unlike datafrog's, see evaluate.py), `recent` is the
frontier (the tuples the last round made known, which the delta variants
join from).
`edb` holds the given facts; a relation without rules shares one set for both.

Indexes are dicts from the bound-column key (the value itself for one
column, a tuple otherwise: `operator.itemgetter`'s convention) to the bucket
of tuples with that key, in insertion order: a list (appending costs no
hash), until a tuple is removed from one longer than `SMALL`: it then
becomes a dict from tuple to None, which drops a tuple in O(1) (and keeps
the order). So removing tuples costs what is removed, not what the buckets
hold, and evaluation, which only adds, fills lists. Indexes are built on
first use and kept up to date by `insert` and `remove`.

`Layer` is a copy-on-write view over a base relation for overlays: its own
additions live beside the untouched base, and sets and indexes are merged on
read, so an overlay costs what it adds, not what the base holds.

`Empty` is a derived relation that holds nothing and never will (its sets
are frozen, and writing it fails): one can be shared by many read-only
models (the demanded ones of a gate's jumps), made once.
"""

from __future__ import annotations

from collections.abc import Set
from itertools import chain
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator

__all__ = ["Rel", "Layer", "Empty", "LayeredSet", "LayeredIndex", "Batch", "key_getter"]

Tuple = tuple[Any, ...]
Index = dict[Any, Any]  # key -> list[Tuple] | dict[Tuple, None]
SMALL = 16  # the longest bucket a tuple is removed from as a list
# (height, rule id, the tuples first derived in that round by that rule)
Batch = tuple[int, int, "tuple[Tuple, ...]"]


def key_getter(cols: tuple[int, ...]) -> Callable[[Tuple], Any]:
    return itemgetter(*cols)


class LayeredSet(Set[Any]):
    """Read-only union of a base set and a disjoint set of additions."""

    __slots__ = ("base", "own")

    def __init__(self, base: Any, own: set[Tuple]):
        self.base = base
        self.own = own

    @classmethod
    def _from_iterable(cls, it: Iterable[Any]) -> set[Any]:
        return set(it)

    def __contains__(self, item: object) -> bool:
        return item in self.own or item in self.base

    def __iter__(self) -> Iterator[Tuple]:
        return chain(self.base, self.own)

    def __len__(self) -> int:
        return len(self.base) + len(self.own)

    def __bool__(self) -> bool:
        return bool(self.own) or bool(self.base)

    def missing(self, candidates: set[Tuple]) -> set[Tuple]:
        """The candidates not in this set (C-speed set differences)."""
        rest = candidates - self.own
        if isinstance(self.base, LayeredSet):
            return self.base.missing(rest)
        return rest - self.base


class LayeredIndex:
    """Read-only union of a base index and an index over the additions."""

    __slots__ = ("base", "own")

    def __init__(self, base: Any, own: Index):
        self.base = base
        self.own = own

    def get(self, key: Any, default: Any = None) -> Any:
        b = self.own.get(key)
        a = self.base.get(key)
        if b is None:
            return default if a is None else a
        return b if a is None else [*a, *b]

    def __contains__(self, key: object) -> bool:
        return key in self.own or key in self.base


class Rel:
    __slots__ = ("name", "arity", "stable", "recent", "edb", "indexes", "batches", "_notes", "_seen")

    def __init__(self, name: str, arity: int, derived: bool, edb: Iterable[Tuple] = ()):
        self.name = name
        self.arity = arity
        self.edb: Any = set(edb)
        self.stable: Any = set(self.edb) if derived else self.edb
        self.recent: Any = ()
        self.indexes: dict[tuple[int, ...], Any] = {}
        self.batches: list[Batch] = []
        self._notes: dict[Tuple, tuple[int, int]] = {}
        self._seen = 0

    @property
    def derived(self) -> bool:
        return self.stable is not self.edb

    def index(self, cols: tuple[int, ...]) -> Any:
        idx = self.indexes.get(cols)
        if idx is None:
            idx = self.indexes[cols] = build_index(self.stable, cols)
        return idx

    def missing(self, candidates: set[Tuple]) -> set[Tuple]:
        return candidates - self.stable

    def note(self, t: Tuple) -> tuple[int, int] | None:
        """(height, rule id) of a derived tuple (the first batch that holds
        it); the lookup is built on first use, and kept up to date."""
        fresh = self.batches[self._seen :]
        if fresh:
            notes = self._notes
            if not notes:  # at C speed: the later batches first, so the first one wins
                for height, rid, tuples in reversed(fresh):
                    notes.update(dict.fromkeys(tuples, (height, rid)))
            else:
                for height, rid, tuples in fresh:
                    for u in tuples:
                        notes.setdefault(u, (height, rid))
            self._seen = len(self.batches)
        return self._notes.get(t)

    def insert(self, batch: set[Tuple]) -> None:
        """Add tuples known not to be in `stable` yet."""
        self.stable |= batch
        for cols, idx in self.indexes.items():
            extend_index(idx, batch, cols)

    def copy(self) -> "Rel":
        """The same tuples and notes in new sets (indexes are rebuilt on use)."""
        twin = Rel(self.name, self.arity, False, self.edb)
        if self.derived:
            twin.stable = set(self.stable)
        twin.batches = list(self.batches)
        return twin

    def remove(self, gone: set[Tuple]) -> None:
        """Drop tuples known to be in `stable` (given facts too, for a
        relation without rules); indexes follow."""
        self.stable -= gone
        if self.stable is not self.edb:
            self.edb -= gone
        for cols, idx in self.indexes.items():
            key = key_getter(cols)
            for t in gone:
                k = key(t)
                bucket = idx[k]
                if len(bucket) == 1:
                    del idx[k]
                elif bucket.__class__ is not list:
                    del bucket[t]
                elif len(bucket) <= SMALL:
                    bucket.remove(t)
                else:  # once: later removals from it cost O(1)
                    bucket = idx[k] = dict.fromkeys(bucket)
                    del bucket[t]

    def add_facts(self, facts: set[Tuple]) -> set[Tuple]:
        """Add EDB facts; returns what `stable` grew by."""
        grew = facts - self.edb
        self.edb |= grew
        if self.derived:
            grew = self.missing(grew)
            self.insert(grew)
        else:
            for cols, idx in self.indexes.items():
                extend_index(idx, grew, cols)
        return grew

    def reset(self) -> None:
        """Forget derived tuples (before a stratum is recomputed)."""
        self.stable = set(self.edb) if self.derived else self.edb
        self.indexes = {}
        self.batches = []
        self.recent = ()
        self._notes = {}
        self._seen = 0


class Layer(Rel):
    """An overlay's copy-on-write view of a base relation."""

    __slots__ = ("base",)

    def __init__(self, base: Rel):
        self.name = base.name
        self.arity = base.arity
        self.base = base
        self.edb = LayeredSet(base.edb, set())
        self.stable = self.edb if base.stable is base.edb else LayeredSet(base.stable, set())
        self.recent = ()
        self.indexes = {}
        self.batches = []
        self._notes = {}
        self._seen = 0

    def index(self, cols: tuple[int, ...]) -> Any:
        idx = self.indexes.get(cols)
        if idx is None:
            own = build_index(self.stable.own, cols) if self.stable.own else {}
            idx = self.indexes[cols] = LayeredIndex(self.base.index(cols), own)
        return idx

    def missing(self, candidates: set[Tuple]) -> set[Tuple]:
        return self.stable.missing(candidates)  # type: ignore[no-any-return]

    def note(self, t: Tuple) -> tuple[int, int] | None:
        return Rel.note(self, t) or self.base.note(t)

    def insert(self, batch: set[Tuple]) -> None:
        self.stable.own |= batch
        for cols, idx in self.indexes.items():
            extend_index(idx.own, batch, cols)

    def add_facts(self, facts: set[Tuple]) -> set[Tuple]:
        grew = self.edb.missing(facts)
        if self.stable is not self.edb:  # derived
            self.edb.own |= grew
            grew = self.missing(grew)
        self.insert(grew)
        return grew

    def reset(self) -> None:
        raise AssertionError("overlays replace a recomputed relation, never reset it")


class _Frozen(frozenset[Tuple]):
    """An empty frozen set that is not the empty frozenset (an `Empty`'s
    `stable` must not be its `edb`: it is derived)."""


class Empty(Rel):
    """A derived relation without tuples, shared read-only."""

    __slots__ = ()

    def __init__(self, name: str, arity: int):
        super().__init__(name, arity, False)
        self.edb, self.stable = _Frozen(), _Frozen()
        self.batches = []

    def insert(self, batch: set[Tuple]) -> None:
        raise AssertionError("a shared empty relation is never written")

    def remove(self, gone: set[Tuple]) -> None:
        raise AssertionError("a shared empty relation is never written")

    def add_facts(self, facts: set[Tuple]) -> set[Tuple]:
        raise AssertionError("a shared empty relation is never written")

    def reset(self) -> None:
        raise AssertionError("a shared empty relation is never written")


def build_index(tuples: Iterable[Tuple], cols: tuple[int, ...]) -> Index:
    idx: Index = {}
    extend_index(idx, tuples, cols)
    return idx


def extend_index(idx: Index, tuples: Iterable[Tuple], cols: tuple[int, ...]) -> None:
    key = key_getter(cols)
    for t in tuples:
        k = key(t)
        bucket = idx.get(k)
        if bucket is None:
            idx[k] = [t]
        elif bucket.__class__ is list:
            bucket.append(t)
        else:
            bucket[t] = None
