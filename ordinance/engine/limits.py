"""Run limits: derived tuples, rounds per stratum, and a deadline.

Limits are checked after every semi-naive round, so a diverging program (for
example arithmetic recursion, `n(X) :- n(Y), X = Y + 1.`) stops with
`LimitExceeded` (code `limit_exceeded`) naming the limit and the stratum,
instead of running forever. A single round is never interrupted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from ..diagnostics import Diagnostic, LimitExceeded

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


_DEFAULT = Limits()


class Budget:
    """What one evaluation (or one incremental update) has spent so far."""

    __slots__ = ("limits", "tuples", "ends_at")

    def __init__(self, limits: Limits | None):
        self.limits = limits or _DEFAULT
        self.tuples = 0
        d = self.limits.deadline
        self.ends_at = None if d is None else time.monotonic() + d

    def spend(self, stratum: Sequence[str], rounds: int, new_tuples: int) -> None:
        self.tuples += new_tuples
        lim = self.limits
        if lim.max_tuples is not None and self.tuples > lim.max_tuples:
            self._fail(f"more than {lim.max_tuples} derived tuples", stratum)
        if lim.max_iterations is not None and rounds > lim.max_iterations:
            self._fail(f"more than {lim.max_iterations} iterations", stratum)
        if self.ends_at is not None and time.monotonic() > self.ends_at:
            self._fail(f"deadline of {lim.deadline:g} seconds passed", stratum)

    @staticmethod
    def _fail(what: str, stratum: Sequence[str]) -> None:
        names = ", ".join(f"`{r}`" for r in stratum)
        raise LimitExceeded([Diagnostic("limit_exceeded", f"limit exceeded: {what} in the stratum of {names}")])
