"""Run limits: derived tuples, matches, rounds per stratum, a deadline, and
the length of a symbol `cat` builds.

Limits hold inside a round as well as between rounds: a compiled join calls
its round's check every `codegen.CHUNK` matches (see `codegen._Gen.join`), so a
single exploding round (a 5000 x 5000 cross product, a rule building 10^8
tuples, 5 x 10^8 duplicate matches) stops with `LimitExceeded` (code
`limit_exceeded`) naming the limit and the stratum, as a diverging program
(`n(X) :- n(Y), X = Y + 1.`) does between rounds. Inside a round the tuple
limit counts the round's candidate tuples, and when they would pass it, only
those not known before (the exact count is taken again each time the
candidates double).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping, NoReturn, Sequence

from ..diagnostics import Diagnostic, LimitExceeded
from ..rules.functors import SYMBOL_LIMIT

__all__ = ["Limits", "Budget", "GATE_DEADLINE_S"]

# the gate's default deadline, per evaluation it runs (the warm model, then
# the request's overlay): a decision has an upper bound even when a request
# makes the rules diverge, and is then denied with `limit_exceeded`
GATE_DEADLINE_S = 5.0


@dataclass(frozen=True, slots=True)
class Limits:
    max_tuples: int | None = 10_000_000  # derived tuples in one evaluation
    max_iterations: int | None = 100_000  # semi-naive rounds in one stratum
    deadline: float | None = None  # seconds from the start of the evaluation
    max_matches: int | None = 2_000_000_000  # rule body matches (duplicates too) in one evaluation
    max_symbol: int | None = 1_000_000  # characters in one symbol `cat` builds (doubling one is exponential)


_DEFAULT = Limits()

# the output sets of a round, by rule id
Outs = Mapping[int, set[Any]]


class Budget:
    """What one evaluation (or one incremental update) has spent so far."""

    __slots__ = ("limits", "tuples", "matches", "ends_at", "stratum", "rels", "heads", "recount")

    def __init__(self, limits: Limits | None):
        self.limits = limits or _DEFAULT
        self.tuples = 0
        self.matches = 0
        d = self.limits.deadline
        self.ends_at = None if d is None else time.monotonic() + d
        self.stratum: Sequence[str] = ()
        self.rels: Mapping[str, Any] = {}
        self.heads: Sequence[str] = ()
        self.recount = 0
        SYMBOL_LIMIT.set(self.limits.max_symbol)  # what `cat` may build in this evaluation (this thread)

    def spend(self, stratum: Sequence[str], rounds: int, recent: int) -> None:
        """After a round: the count of its `recent` tuples, the round count,
        the deadline."""
        self.tuples += recent
        lim = self.limits
        if lim.max_tuples is not None and self.tuples > lim.max_tuples:
            self._fail(f"more than {lim.max_tuples} derived tuples", stratum)
        if lim.max_iterations is not None and rounds > lim.max_iterations:
            self._fail(f"more than {lim.max_iterations} iterations", stratum)
        self._clock(stratum)

    def enter(self, stratum: Sequence[str], rels: Mapping[str, Any], heads: Sequence[str]) -> None:
        """Before a stratum runs: what `check` counts against (no closures
        per stratum: an overlay runs several)."""
        self.stratum, self.rels, self.heads, self.recount = stratum, rels, heads, 0

    def check(self, matches: int, outs: Outs | None) -> None:
        """The `spend(matches, outs)` a round's joins call as they go, for the
        stratum last `enter`ed. When the round's candidates would pass the
        tuple limit, only those not known before count (taken again each
        time the candidates double)."""
        self.matches += matches
        lim, stratum = self.limits, self.stratum
        if lim.max_matches is not None and self.matches > lim.max_matches:
            self._fail(f"more than {lim.max_matches} matches", stratum)
        if lim.max_tuples is not None and outs:
            candidates = sum(map(len, outs.values()))
            if self.tuples + candidates > lim.max_tuples and candidates >= self.recount:
                rels, heads = self.rels, self.heads
                if self.tuples + sum(len(rels[heads[rid]].missing(o)) for rid, o in outs.items()) > lim.max_tuples:
                    self._fail(f"more than {lim.max_tuples} derived tuples", stratum)
                self.recount = 2 * candidates
        self._clock(stratum)

    def _clock(self, stratum: Sequence[str]) -> None:
        if self.ends_at is not None and time.monotonic() > self.ends_at:
            self._fail(f"deadline of {self.limits.deadline:g} seconds passed", stratum)

    @staticmethod
    def _fail(what: str, stratum: Sequence[str]) -> NoReturn:
        names = ", ".join(f"`{r}`" for r in stratum)
        raise LimitExceeded([Diagnostic("limit_exceeded", f"limit exceeded: {what} in the stratum of {names}")])

    @staticmethod
    def overflow(label: str) -> NoReturn:
        message = f"limit exceeded: a number outside 64 bits in rule `{label}`"
        raise LimitExceeded([Diagnostic("limit_exceeded", message)])
