"""Provenance stamps, read off a line's proof.

A stamp says how the line is known, for a reader deciding whether to repeat
it. It is taken from the fact leaves of the line's proofs (the line and its
notes), in this order:

1. `[corrected HH:MM]`: a `correction(New, Old)` leaf; the time is where New's
   validity starts.
2. `[verified OBSERVER HH:MM]`: an `observation` leaf inside a
   `fresh_readback` proof (fresh, same scope, another failure domain: see
   receipts.rules), or a `claim_source(C, Source, "observed")` leaf whose
   source is neither the standing agent nor in one of its failure domains
   (another agent reading the same log is not independent); the newest wins.
3. `[asserted AUTHOR HH:MM]`: the newest claim source, receipt, settlement
   (`settled_at`) or question (`asked`) by anyone but the standing agent, or
   any other observation.
4. `[self, unverified]`: the standing agent's own claims and receipts.
5. With none of these leaves, the newest event behind the line: its author
   (the standing agent: `[self, unverified]`) and the time the fact names
   (`armed`'s, `resolved`'s...). A fact that names no time is stamped with
   the time it was logged if that is not after `now` (an agent writing as
   it goes: `[asserted prime 21:09]`), and with no time otherwise (a night
   loaded after the fact and viewed at its own `now`: `[asserted prime]`),
   so the stamp never shows a write time as if it were a time in the story
   (seed 003's creation time read as the merge time).
   Facts written in the policy itself: `[policy]`.

Times print as HH:MM (UTC) on the day of `now`, with the date otherwise.
Names are escaped (escape.py), so no name can close a stamp early.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from ..engine import ProofNode
from ..facts import Event
from ..values import FOREVER, format_instant, parse_instant
from .escape import escape

__all__ = ["stamp", "fact_leaves", "clock"]

Fact = tuple[str, tuple[Any, ...]]
CORRECTED, VERIFIED, ASSERTED, SELF = 3, 2, 1, 0
# relation -> the argument holding the time a fact happened at (else: when it was logged, see above)
_WHEN = {"armed": 2, "resolved": 1, "disarmed": 1, "retracted": 1, "applied": 1, "stop": 1}


def fact_leaves(node: ProofNode, fresh: bool = False) -> Iterator[tuple[str, tuple[Any, ...], bool]]:
    """(relation, tuple, inside a fresh readback) for every fact leaf."""
    if node.kind == "fact" and node.relation is not None and node.tuple is not None:
        yield node.relation, tuple(node.tuple), fresh
    inside = fresh or (node.kind == "rule" and node.relation == "fresh_readback")
    for child in node.children:
        yield from fact_leaves(child, inside)


def clock(at: int, now: int) -> str:
    """HH:MM on the day of `now`, else YYYY-MM-DD HH:MM."""
    if at >= FOREVER:
        return "forever"
    text = format_instant(at)
    day, hhmm = text[:10], text[11:16]
    return hhmm if day == format_instant(now)[:10] else f"{day} {hhmm}"


def stamp(
    leaves: Iterable[tuple[str, tuple[Any, ...], bool]],
    valid_from: Callable[[Any], int | None],
    events: list[Event],
    agent: str | None,
    now: int,
    shares_domain: Callable[[Any], bool] = lambda who: False,
) -> str:
    """The stamp of a line from its proofs' leaves; `valid_from(c)` is where
    claim c's validity starts, `events` the events behind the line,
    `shares_domain(who)` whether `who` is in a failure domain of the agent."""
    found: list[tuple[int, int, str]] = []  # (class, time, who)

    def said(who: Any, at: int | None, observed: bool = False) -> None:
        cls = SELF if who == agent else VERIFIED if observed else ASSERTED
        found.append((cls, -1 if at is None else at, str(who)))

    for relation, t, fresh in leaves:
        if relation == "correction" and len(t) == 2:
            found.append((CORRECTED, valid_from(t[0]) or -1, ""))
        elif relation == "observation" and len(t) == 5:
            said(t[1], t[2], observed=fresh)
        elif relation == "claim_source" and len(t) == 3:
            said(t[1], valid_from(t[0]), observed=t[2] == "observed" and not shares_domain(t[1]))
        elif relation == "receipt" and len(t) == 4 and isinstance(t[3], int):
            said(t[2], t[3])
        elif relation in ("settled_at", "asked") and len(t) == 3 and isinstance(t[2], int):
            said(t[1], t[2])
    if found:
        cls, at, who = max(found)
        when = "" if at < 0 else " " + clock(at, now)
        if cls == CORRECTED:
            return f"corrected{when}"
        if cls == SELF:
            return "self, unverified"
        return f"{'verified' if cls == VERIFIED else 'asserted'} {escape(who)}{when}"
    if not events:
        return "policy"
    newest = max(events, key=lambda e: e.seq)
    if agent is not None and newest.author == agent:
        return "self, unverified"
    position = _WHEN.get(newest.relation)
    if position is not None and position < len(newest.args) and isinstance(newest.args[position], int):
        when = " " + clock(int(newest.args[position]), now)
    else:
        logged = _logged(newest.time)
        when = "" if logged is None or logged > now else " " + clock(logged, now)
    return f"asserted {escape(newest.author) or '?'}{when}"


def _logged(time: str) -> int | None:
    """The instant an event was written (`Event.time`), to the second."""
    try:
        return parse_instant(time)
    except ValueError:
        return None
