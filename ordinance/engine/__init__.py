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

from .demand import Given, demanded, model_for
from .full import evaluate
from .incremental import extend, overlay, prime, renumber, retract
from .limits import GATE_DEADLINE_S, Limits
from .model import Model, Note
from .prepare import Prepared, prepare, prepared
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
    "prime",
    "retract",
    "renumber",
    "Pattern",
    "parse_pattern",
    "answers",
    "Given",
    "demanded",
    "model_for",
]
