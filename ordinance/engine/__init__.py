"""The evaluation engine: checked program + facts -> model, with proofs.

    model = evaluate(program, {"edge": [(1, 2), (2, 3)]}, now=0)
    model.tuples("path"); model.query("path", (1, None))
    proof = why(model, "path", (1, 3))   # a ProofNode tree
    why_not(model, "path", (3, 1))       # a WhyNot answer
    given = Given.load(program, facts, now)  # on demand: what one pattern needs
    why(demanded(given, "path", (1, None)), "path", (1, 3))  # the same proof

(`ordinance.explain` renders both as text, JSON and DOT.)
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..rules.checked import CheckedProgram
from .demand import Given, demanded, model_for
from .evaluate import load_relations, run_stratum
from .heap import paused
from .incremental import extend, overlay, renumber, retract, warm
from .limits import GATE_DEADLINE_S, Budget, Limits
from .model import Model, Note
from .prepare import Prepared, prepare
from .provenance import Failure, ProofNode, WhyNot, why, why_not
from .query import Pattern, answers, parse_pattern

__all__ = [
    "evaluate",
    "prepare",
    "prepared",
    "Prepared",
    "Limits",
    "GATE_DEADLINE_S",
    "Model",
    "Note",
    "ProofNode",
    "WhyNot",
    "Failure",
    "why",
    "why_not",
    "extend",
    "overlay",
    "retract",
    "renumber",
    "warm",
    "Pattern",
    "parse_pattern",
    "answers",
    "Given",
    "demanded",
    "model_for",
]

_CACHE: dict[int, tuple[CheckedProgram, Prepared]] = {}


def prepared(program: CheckedProgram) -> Prepared:
    """The program readied for evaluation: one per program object, shared by
    its models (with their compiled plans)."""
    hit = _CACHE.get(id(program))
    if hit is not None and hit[0] is program:
        return hit[1]
    if len(_CACHE) >= 64:
        _CACHE.pop(next(iter(_CACHE)))
    prep = _CACHE[id(program)] = (program, prepare(program))
    return prep[1]


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
