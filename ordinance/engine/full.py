"""Evaluating a checked program in full: `evaluate(program, facts, now=)`.

Every stratum, in order, over the program's facts and the given ones, at
`now` (demand.py evaluates only what a question needs; incremental.py keeps
a model current as facts come and go).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..rules.checked import CheckedProgram
from .evaluate import load_relations, run_stratum
from .heap import paused
from .limits import Budget, Limits
from .model import Model
from .prepare import prepared

__all__ = ["evaluate"]


def evaluate(
    program: CheckedProgram,
    facts: Mapping[str, Iterable[tuple[Any, ...]]] | None = None,
    *,
    now: int = 0,
    limits: Limits | None = None,
) -> Model:
    """Evaluate `program` over `facts` (relation -> tuples) at time `now`."""
    prep = prepared(program)
    with paused():  # a model holds no cycles: the cyclic collector would only slow building it
        model = Model(prep, load_relations(prep, facts, now), now, limits)
        budget = Budget(limits)
        for stratum in prep.strata:
            run_stratum(model, stratum, budget)
    return model
