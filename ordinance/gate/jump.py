"""Deciding at a `now` far from the warm model's: on demand, not by moving it.

The warm model holds at every `now` within its horizon (engine/clock.py);
beyond it, `Gate.model` moves it, re-deciding every `$now` comparison the
move crosses: work proportional to how far the clock moved (a jump of a day
re-derives every claim whose window starts inside it). A decision asks three
questions about one request: `forbid(A, _, _)`, `permit(A)` and
`flag(A, _, _)`. Past `instants` crossed instants, `Jumps.model` answers
them on demand instead (engine/magic.py): the derived relations that depend
neither on `$now` nor on the request are read from the warm model as they
are (they are the same at every `now`), and the others are derived from the
request's id only as far as the questions need (`Given.over`,
engine/demand.py). Its model holds tuples of the full model at `now`, with
the heights a full evaluation gives them, and everything the decision and
its proofs read (`why` of a forbid or flag, `why_not` of the permit, demanded
in source order), so decisions, reasons and proofs are those of the overlay
of a moved model.

A clock that really jumped, with decisions that keep coming near the new
`now`, moves the model after all, once `settle` decisions in a row past the
horizon each came within `instants` instants after the one before: the
advancing clock after a jump then costs what it did before. An eager gate
rewrites the policy for the questions when it builds a warm model (`prepare`),
compiling what the rewrites run and indexing what they probe, so the first
jump costs what later ones do. The model always
moves for a program the demand transformation does not take (qualifiers,
records: engine/demand.py), one whose program facts mention `$now`, and one
whose rules that depend on the clock or the request may fail at run time (a
functor, an operator but `+` and `-`, an aggregate but `count`, `min` and
`max`): a full evaluation meets such a failure wherever it is, the demand only
where the questions lead. (`+` and `-` fail only past 64 bits: taken.)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import cached_property

from ..engine import Given, Limits, Model, demanded
from ..engine.clock import Horizon, horizon
from ..engine.demand import Ask, demand_exact, ready
from ..rules.checked import CheckedProgram
from ..values import Facts

__all__ = ["Jumps", "JUMP_INSTANTS"]

JUMP_INSTANTS = 64  # a move across more instants than this is a jump
SETTLE = 2  # consecutive decisions near each other past the horizon that move the model there


class Jumps:
    """One gate's choice between moving its warm model and deciding on demand."""

    def __init__(self, policy: CheckedProgram, inputs: frozenset[str], flags: bool, limits: Limits) -> None:
        self.limits = limits
        self.instants = JUMP_INSTANTS
        self.settle = SETTLE
        self.inputs = inputs  # the request-side relations
        self.flags = flags
        self.policy = policy
        self._last: int | None = None  # the `now` of the last decision made on demand
        self._streak = 0  # decisions in a row past the horizon, each near the one before
        self._given: tuple[Model, int, Given] | None = None  # `_base`'s: (warm model, generation, given)

    @cached_property
    def able(self) -> bool:
        """Whether decisions on demand equal a full evaluation's for this policy
        (worked out when first needed: a gate that never jumps never pays)."""
        return demand_exact(self.policy, self.inputs)

    def model(self, warm: Model | None, facts: Facts, request_id: str, now: int, generation: int) -> Model | None:
        """The model deciding on `facts` at `now` on demand over `warm` (as
        it is at `generation`: see `Warm.generation`), or None when the
        caller should overlay `warm` moved to `now` instead."""
        if warm is None or warm.now == now:
            return None
        h = horizon(warm)
        if h.holds(now) or not self.able:
            self._streak = 0
            return None
        last, self._last = self._last, now
        if last is not None and last <= now and _crossed(h, last, now) <= self.instants:
            self._streak += 1
        else:
            self._streak = 0
        if self._streak >= self.settle or _crossed(h, warm.now, now) <= self.instants:
            self._streak, self._last = 0, None
            return None
        given = self._base(warm, generation).adding(facts, now)
        first, *also = self._asks(request_id)
        return demanded(given, first[0], first[1], limits=self.limits, also=also)

    def _base(self, warm: Model, generation: int) -> Given:
        """The given relations of decisions over `warm`: kept while it is the
        same model at the same generation (it changes in place only when the
        generation moves), made anew otherwise."""
        kept = self._given
        if kept is None or kept[0] is not warm or kept[1] != generation:
            kept = self._given = (warm, generation, Given.base(warm, frozenset(self.inputs)))
        return kept[2]

    def _asks(self, request_id: str) -> list[Ask]:
        """The questions a decision about `request_id` asks: forbid first."""
        asks: list[Ask] = [("forbid", (request_id, None, None), False), ("permit", (request_id,), True)]
        if self.flags:
            asks.append(("flag", (request_id, None, None), False))
        return asks

    def prepare(self, warm: Model, generation: int) -> None:
        """Rewrite the policy for the questions a jump asks and compile what
        their evaluations run, when a warm model is built (not on the first
        jump: that would cost it the rewrite, about half a second at 100k
        facts), and work out its horizon (what every decision at another `now` reads)."""
        horizon(warm)
        if self.able:
            try:
                ready(self._base(warm, generation), self._asks(""))
            except Exception:  # a cache: the jump meets (and reports) whatever failed here
                pass


def _crossed(h: Horizon, a: int, b: int) -> int:
    """How many of the horizon's instants lie between `a` and `b`."""
    lo, hi = (a, b) if a <= b else (b, a)
    return sum(bisect_right(xs, hi) - bisect_left(xs, lo) for xs in h.instants.values())
