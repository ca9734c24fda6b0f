"""The events folded into the facts they hold at a revision, in plain Python.

This is the reference meaning of the log; the backends compute the same
thing in SQL (`Store.facts`), and the tests check that they agree.
"""

from __future__ import annotations

from typing import Iterable

from ..values import Facts
from .events import FACT_KINDS, Event

__all__ = ["fold"]


def fold(events: Iterable[Event], revision: int | None = None) -> Facts:
    """The facts of the events with seq <= revision, minus those purged by
    purge events with seq <= revision."""
    kept = [e for e in events if revision is None or e.seq <= revision]
    purged = {int(s) for e in kept if e.kind == "purge" for s in e.args}
    facts: Facts = {}
    for e in kept:
        if e.kind in FACT_KINDS and e.seq not in purged:
            facts.setdefault(e.relation, set()).add(e.args)
    return facts
