"""A model as plain data and back: what a gate snapshot holds (gate/snapshot.py).

`dump_model(model)` writes a base model (not an overlay) as marshal bytes of
plain tuples, sets, lists and dicts: per relation its given facts, its
tuples and its provenance batches (so proofs are the same as from the
model it was written from), the strata's round counts, and the clock's
horizon (clock.py: the instants at which a `$now` comparison may flip), so
a loaded model moves to another `now` as the model it was written from
would. Indexes are not written: they are rebuilt when first probed. Records
and branches (values.Record, values.Branch: tuple subclasses, which marshal
refuses) are written, when the model holds any, as lists (a value is never
a list otherwise): `[0, field, ...]` and `[1, name, arg, ...]`.

`load_model(prepared, data, limits)` is the inverse; it trusts `data` to be
what `dump_model` wrote for the same program (the caller checks that: see
gate/snapshot.py, which reads only sealed files), and raises ValueError if
its shape is wrong.
"""

from __future__ import annotations

import marshal
from fractions import Fraction
from typing import Any

from .clock import Horizon
from .heap import paused
from .limits import Limits
from .model import Model
from .prepare import Prepared
from ..values import Branch, Record
from .relation import Layer, Rel

__all__ = ["FORMAT", "dump_model", "load_model"]

FORMAT = 2  # 2: records and branches as lists


def dump_model(model: Model) -> bytes:
    """The model as bytes (ValueError for an overlay, or for values that are
    neither strings, numbers nor records and branches of them)."""
    with paused():  # hundreds of thousands of lists and tuples: no cyclic collections meanwhile
        try:
            return marshal.dumps(_data(model, _same))
        except ValueError:  # records or branches: written as lists
            return marshal.dumps(_data(model, _encoded))


def _same(tuples: Any) -> list[Any]:
    return list(tuples)


def _encoded(tuples: Any) -> list[Any]:
    return [tuple(map(_encode, t)) for t in tuples]


def _encode(v: Any) -> Any:
    if isinstance(v, tuple):
        if isinstance(v, Record):
            return [0, *map(_encode, v)]
        if isinstance(v, Branch):
            return [1, *map(_encode, v)]
        return tuple(map(_encode, v))
    return v


def _decode(v: Any) -> Any:
    if type(v) is list:
        fields = tuple(map(_decode, v[1:]))
        if v[0] == 0:
            return Record(fields)
        if v[0] == 1:
            return Branch(fields)
        raise ValueError("structured value")
    if type(v) is tuple:
        return tuple(map(_decode, v))
    return v


def _as_read(tuples: Any) -> Any:
    return tuples


def _decoded(tuples: Any) -> list[Any]:
    return [tuple(map(_decode, t)) for t in tuples]


def _data(model: Model, put: Any) -> Any:
    """The model as marshal data, its tuples written by `put`."""
    if model.base is not None:
        raise ValueError("an overlay is not a snapshot")
    rels: dict[str, Any] = {}
    for name, rel in model.rels.items():
        if isinstance(rel, Layer) or type(rel.stable) is not set or type(rel.edb) is not set:
            raise ValueError(f"relation `{name}` is a view")
        # sets as lists: marshal writes a big set several times slower than a list
        rels[name] = (
            rel.arity,
            rel.derived,
            put(rel.edb),
            put(rel.stable) if rel.derived else None,
            [(height, rid, put(tuples)) for height, rid, tuples in rel.batches],
        )
    horizon = model.horizon
    clock = None
    if isinstance(horizon, Horizon):
        clock = (
            horizon.now,
            {rid: [x if type(x) is not Fraction else _instant(x) for x in xs] for rid, xs in horizon.instants.items()},
            sorted(horizon.moving),
            {
                rid: [(x if type(x) is not Fraction else _instant(x), put(bs)) for x, bs in at.items()]
                for rid, at in horizon.at.items()
            },
            _instant(horizon.lo),
            _instant(horizon.hi),
        )
    return (FORMAT, put is _encoded, model.now, model.rounds, sorted(model.inexact), rels, clock)


def load_model(prepared: Prepared, data: bytes, limits: Limits | None) -> Model:
    """The model `dump_model` wrote, over `prepared` (the same program)."""
    with paused():  # a few hundred thousand tuples and sets: no cyclic collections meanwhile
        try:
            return _load(prepared, marshal.loads(data), limits)
        except (ValueError, TypeError, KeyError, IndexError, EOFError, AttributeError) as exc:
            raise ValueError(f"not a model snapshot: {exc}") from None


def _load(prepared: Prepared, data: Any, limits: Limits | None) -> Model:
    form, structured, now, rounds, inexact, rels, clock = data
    if form != FORMAT or not isinstance(now, int) or not isinstance(rels, dict):
        raise ValueError("format")
    get = _decoded if structured else _as_read
    loaded: dict[str, Rel] = {}
    for name, (arity, derived, edb, stable, batches) in rels.items():
        if prepared.arity.get(name, arity) != arity or derived != (name in prepared.derived):
            raise ValueError(f"relation `{name}` does not match the program")
        rel = Rel(name, arity, derived)
        rel.edb = set(get(edb))
        rel.stable = set(get(stable)) if derived else rel.edb
        rel.batches = [(height, rid, tuple(get(tuples))) for height, rid, tuples in batches]
        loaded[name] = rel
    model = Model(prepared, loaded, now, limits)
    model.rounds = dict(rounds)
    model.inexact = set(inexact)
    if clock is not None:
        at_now, instants, moving, at, lo, hi = clock
        model.horizon = Horizon(
            at_now,
            {rid: [x if type(x) is not tuple else _value(x) for x in xs] for rid, xs in instants.items()},
            frozenset(moving),
            {
                rid: {x if type(x) is not tuple else _value(x): list(get(bs)) for x, bs in pairs}
                for rid, pairs in at.items()
            },
            _value(lo),
            _value(hi),
        )
    return model


def _instant(x: Any) -> Any:
    """An instant as marshal data: a Fraction as its (numerator, denominator)."""
    return (x.numerator, x.denominator) if isinstance(x, Fraction) else x


def _value(x: Any) -> Any:
    return Fraction(*x) if isinstance(x, tuple) else x
