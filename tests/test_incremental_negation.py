"""Incremental maintenance through negation (engine/incremental.py): a
non-recursive stratum whose negated relations gain or lose tuples is
maintained (what a new tuple under `!` blocks is deleted unless rederived,
what a removed one unblocks is added), never recomputed; the model equals a
fresh evaluation, proofs included."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.engine import evaluate, extend, retract
from ordinance.engine import incremental
from ordinance.engine.clock import advance
from ordinance.rules import compile_text
from test_clock import EDB, facts, programs, same_model

PROGRAM = """
.decl a(x: number)
.decl b(x: number)
.decl c(x: number)
p(X) :- a(X), !b(X).
q(X) :- c(X), !p(X).
r(X) :- c(X), p(X).
"""


def _full_runs(monkeypatch: Any) -> list[tuple[str, ...]]:
    """The strata a model recomputes from scratch from now on."""
    runs: list[tuple[str, ...]] = []
    real = incremental.run_stratum

    def spy(model: Any, st: Any, budget: Any, seed: bool = False, write: Any = None) -> Any:
        if not seed and model.base is None:
            runs.append(st.relations)
        return real(model, st, budget, seed, write)

    monkeypatch.setattr(incremental, "run_stratum", spy)
    return runs


def test_a_blocking_fact_and_its_removal_are_maintained_not_recomputed(monkeypatch):
    program = compile_text(PROGRAM)
    db = {"a": [(i,) for i in range(40)], "b": [(3,)], "c": [(i,) for i in range(0, 40, 2)]}
    model = evaluate(program, db)
    runs = _full_runs(monkeypatch)
    extend(model, {"b": [(4,), (6,)]})  # blocks p(4), p(6): q(4), q(6) now hold, r(4), r(6) no longer
    retract(model, {"b": [(3,)]})  # unblocks p(3)
    assert runs == []
    now = {"a": db["a"], "b": [(4,), (6,)], "c": db["c"]}
    same_model(model, evaluate(program, now), ("p", "q", "r"))
    assert (4,) in model.tuples("q") and (3,) in model.tuples("p") and (4,) not in model.tuples("r")


def test_a_large_change_is_still_recomputed(monkeypatch):
    program = compile_text(PROGRAM)
    model = evaluate(program, {"a": [(1,), (2,)], "c": [(1,)]})
    runs = _full_runs(monkeypatch)
    extend(model, {"b": [(1,), (2,)]})
    assert ("p",) in runs
    same_model(model, evaluate(program, {"a": [(1,), (2,)], "b": [(1,), (2,)], "c": [(1,)]}), ("p", "q", "r"))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    programs(),
    facts,
    st.lists(st.tuples(st.booleans(), facts), min_size=1, max_size=4),
    st.lists(st.integers(-2, 7), max_size=3),
)
def test_maintained_negation_equals_a_full_evaluation(monkeypatch, gen, db, changes, nows):
    """Random stratified programs with negation, `$now` and aggregates: facts
    added and retracted, the clock moved; always maintained where possible
    (whatever the size of the change)."""
    monkeypatch.setattr(incremental, "NEGATION_SHARE", 0)
    monkeypatch.setattr(incremental, "NEGATION_MAX", 10**9)
    text, arity = gen
    program = compile_text(text, extensional=EDB)
    held = {k: set(map(tuple, v)) for k, v in db.items()}
    try:
        model = evaluate(program, db, now=0)
        for add, rows in changes:
            rows = {k: set(map(tuple, v)) for k, v in rows.items()}
            if add:
                extend(model, rows)
                held = {k: held[k] | rows[k] for k in held}
            else:
                retract(model, rows)
                held = {k: held[k] - rows[k] for k in held}
            same_model(model, evaluate(program, held, now=model.now), arity)
        for t in nows:
            model = advance(model, t)
            same_model(model, evaluate(program, held, now=t), arity)
    except Exception as exc:  # an evaluation error (a type clash) in the fresh evaluation too
        if type(exc).__name__ not in ("EvaluationError", "LimitExceeded"):
            raise
