"""Store annotations for proof leaves: which event wrote a fact, and when it is valid.

Each EDB leaf of a proof is annotated from the store: the event that put
the fact there (revision, source, author), and its validity window when the
fact is about a claim (`claim_valid`) or carries a time of its own (leases,
stops, receipts, observations). Request facts are marked as the request's
own; facts written in the policy as policy facts.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..engine import Model
from ..facts import FACT_KINDS, Store
from ..values import format_instant
from .proof import Annotate

__all__ = ["annotator", "model_annotator"]

# relation -> the argument positions holding instants worth showing
_TIMES = {
    "lease": ("expires", 3),
    "stop": ("from", 1),
    "receipt": ("at", 3),
    "observation": ("at", 2),
    "retest_after": ("from", 1),
}


def _window(facts: Mapping[str, Iterable[tuple[Any, ...]]], claim: Any) -> str | None:
    for c, start, end in facts.get("claim_valid", ()):
        if c == claim:
            return f"valid [{format_instant(start)}, {format_instant(end)})"
    return None


def annotator(store: Store, revision: int, facts: Mapping[str, Iterable[tuple[Any, ...]]] | None = None) -> Annotate:
    """An `annotate(relation, tuple)` for the engine's renderers: where the
    fact came from in the store at `revision`, and when it is valid. Reads
    only the events behind the facts it is asked about (`Store.asserting`);
    `facts` (default: the replay, read on first need) gives claim windows."""
    origins: dict[tuple[str, tuple[Any, ...]], Any] = {}
    replay: list[Mapping[str, Iterable[tuple[Any, ...]]]] = [] if facts is None else [facts]

    lookup = getattr(store, "asserting", None)
    if lookup is None:  # a view (an audience's events) has no lookups: read its events now
        for e in store.events(0, revision):
            if e.kind in FACT_KINDS:
                origins.setdefault((e.relation, tuple(e.args)), e)

    def origin(relation: str, t: tuple[Any, ...]) -> Any:
        key = (relation, tuple(t))
        if key not in origins and lookup is not None:
            found = lookup(relation, t, revision)
            origins[key] = found[0] if found else None
        return origins.get(key)

    def windows() -> Mapping[str, Iterable[tuple[Any, ...]]]:
        if not replay:
            replay.append(store.facts(revision))
        return replay[0]

    def annotate(relation: str, t: tuple[Any, ...]) -> str | None:
        parts: list[str] = []
        event = origin(relation, t)
        if event is not None:
            parts.append(f"r{event.seq} {event.kind} by {event.author or '?'} via {event.source or '?'}")
        elif relation.startswith("request"):
            parts.append("this request")
        else:
            parts.append("policy fact")
        if relation.startswith("claim") and t:
            window = _window(windows(), t[0])
            if window is not None and relation != "claim_valid":
                parts.append(window)
        if relation == "claim_valid" and len(t) == 3:
            parts.append(f"valid [{format_instant(t[1])}, {format_instant(t[2])})")
        if relation in _TIMES:
            word, i = _TIMES[relation]
            if i < len(t) and isinstance(t[i], int):
                parts.append(f"{word} {format_instant(t[i])}")
        return "; ".join(parts)

    return annotate


def model_annotator(store: Any, revision: int, model: Model | None) -> Annotate:
    """`annotator` whose claim windows are `model`'s `claim_valid` (the
    model a proof or decision came from; none without one, as when the
    deadline cut its build short)."""
    return annotator(store, revision, {"claim_valid": model.tuples("claim_valid") if model is not None else set()})
