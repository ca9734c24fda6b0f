"""What `count`, `sum` and `mean` range over, as Soufflé computes them
(rules/materialize.py): the tuples of a body of one atom, `_` columns
included; the distinct bindings of the named variables of every body Soufflé
materializes (several atoms, or one atom repeating a variable). The expected
answers are Soufflé's, worked out from MaterializeAggregationQueries.cpp; the
SQL backend gives the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, extend, why
from ordinance.engine.sql import evaluate_sql
from ordinance.explain import to_text
from ordinance.rules import compile_text, format_program, parse
from test_lint import codes_of, lint_bytes

FACTS = (
    ".decl a(x: number)\n.decl b(x: number, y: number)\n.decl c(x: number, y: number, z: number)\n"
    ".decl d(x: number, y: number)\n.decl r(n: number)\n.decl q(x: number, n: number)\n"
    "a(1). a(2).\nb(1, 1). b(1, 2). b(2, 5).\nc(1, 1, 7). c(1, 1, 8). c(2, 2, 9). c(2, 3, 9).\n"
    "d(1, 1). d(2, 2). d(3, 3). d(4, 4).\n"
)

CASES = [
    # several atoms: the distinct X of b (1, 2), d's four tuples add none
    ("r(N) :- N = count : { b(X, _), d(_, _) }.", "r", {(2,)}),
    ("r(N) :- N = sum X : { b(X, _), d(_, _) }.", "r", {(3,)}),
    # the distinct (X, Y): 10 * X + Y over X in {1, 2}, Y in {1, 2}
    ("r(N) :- N = sum X * 10 + Y : { b(X, _), c(Y, _, _) }.", "r", {(66,)}),
    # a named variable used once still counts: the distinct (X, Y) of b
    ("r(N) :- N = count : { b(X, Y), a(_) }.", "r", {(3,)}),
    # one atom: its tuples, `_` included (three of b), a filter or a negation beside it
    ("r(N) :- N = count : { b(X, _) }.", "r", {(3,)}),
    ("r(N) :- N = count : { b(X, _), X > 0 }.", "r", {(3,)}),
    ("r(N) :- N = count : { b(X, _), !a(X) }.", "r", {(0,)}),
    ("r(N) :- N = sum X : { b(X, _) }.", "r", {(4,)}),
    # one atom repeating a variable: the distinct X (1, 2), not c's three tuples
    ("r(N) :- N = count : { c(X, X, _) }.", "r", {(2,)}),
    # ... repeating it once Soufflé resolves the alias X = Y
    ("r(N) :- N = count : { c(X, Y, _), X = Y }.", "r", {(2,)}),
    # ... injected from the rule: per X, whether c(X, X, _) has a tuple
    ("q(X, N) :- a(X), N = count : { c(X, X, _) }.", "q", {(1, 1), (2, 1)}),
    ("q(X, N) :- a(X), a(Y), X = Y, N = count : { c(X, Y, _) }.", "q", {(1, 1), (2, 1)}),
    # without the repetition, the tuples: c(1, 1, 7), c(1, 1, 8); c(2, 2, 9), c(2, 3, 9)
    ("q(X, N) :- a(X), N = count : { c(X, Y, _) }.", "q", {(1, 2), (2, 2)}),
    # an alias with a variable of the rule is not resolved inside the aggregate
    ("q(X, N) :- a(X), N = count : { c(Y, Z, _), Z = X }.", "q", {(1, 2), (2, 1)}),
    # a variable of the rule in the body: per X, the distinct Y of b(X, Y) with an a(Y)
    ("q(X, N) :- a(X), N = count : { b(X, Y), a(Y), c(_, _, _) }.", "q", {(1, 2), (2, 0)}),
    # min and max are the same either way
    ("r(N) :- N = max Z : { c(X, X, Z), d(_, _) }.", "r", {(9,)}),
]


@pytest.mark.parametrize(("rule", "rel", "answer"), CASES, ids=[c[0][:60] for c in CASES])
def test_an_aggregate_ranges_over_what_souffle_materializes(rule: str, rel: str, answer: set) -> None:
    program = compile_text(FACTS + rule + "\n")
    model = evaluate(program)
    assert set(model.tuples(rel)) == answer
    assert naive_evaluate(program)[rel] == answer
    with evaluate_sql(program, {}) as sql:
        assert sql.tuples(rel) == answer
    assert format_program(parse(rule)) == rule + "\n"  # printed back as written


def test_mean_ranges_over_the_distinct_bindings_too() -> None:
    program = compile_text(FACTS + ".decl m(x: float)\nm(M) :- M = mean X : { b(X, _), a(_) }.\n")
    assert set(evaluate(program).tuples("m")) == {(1.5,)}  # the X 1 and 2, not 1, 1, 2
    with pytest.raises(OrdinanceError) as info:  # refused there, never an internal error
        evaluate_sql(program, {})
    assert info.value.code == "unsupported_on_backend" and "`mean`" in str(info.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8),
    st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8),
)
def test_two_atoms_count_the_distinct_named_bindings(bs: set, ds: set) -> None:
    text = (
        ".decl b(x: number, y: number)\n.decl d(x: number, y: number)\n"
        "r(N) :- N = count : { b(X, _), d(X, _) }.\nt(N) :- N = count : { b(X, _) }.\n"
        "s(N) :- N = sum Y : { b(_, Y), d(_, _) }.\n"
    )
    program = compile_text(text)
    model = evaluate(program, {"b": sorted(bs), "d": sorted(ds)})
    assert set(model.tuples("r")) == {(len({x for x, _ in bs} & {x for x, _ in ds}),)}
    assert set(model.tuples("t")) == {(len(bs),)}
    assert set(model.tuples("s")) == {(sum({y for _, y in bs}) if ds else 0,)}


def test_the_count_is_explained_through_its_relation_and_maintained() -> None:
    program = compile_text(FACTS + "r(N) :- N = count : { b(X, _), d(_, _) }.\n")
    model = evaluate(program)
    text = to_text(why(model, "r", (2,)))
    assert "count : { agg#" in text and "} = 2  aggregate" in text
    extend(model, {"b": [(1, 9), (3, 0)]})  # one more X (3); a new tuple of the X 1 adds none
    assert set(model.tuples("r")) == {(3,)}


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        ("z() :- _ = count : { b(_, _) }.", {()}),
        ("z() :- _ = count : { b(3, _) }.", {()}),  # a count always has a value: 0 here
        ("z() :- _ = sum Y : { b(3, Y) }.", {()}),
        ("z() :- _ = min Y : { b(3, Y) }.", set()),  # no minimum over nothing
        ("z() :- _ = mean Y : { b(3, Y) }.", set()),
        ("s(X) :- b(X, _), _ = sum Y : { b(X, Y) }.", {(1,), (2,)}),
        ("s(W) :- max X : { b(W, X) } = _.", {(2,)}),  # the witness of the largest
    ],
)
def test_an_aggregate_compared_with_wildcard(rule: str, answer: set) -> None:
    program = compile_text(FACTS + ".decl s(x: number)\n.decl z()\n" + rule + "\n")
    rel = rule.split("(")[0]
    assert set(evaluate(program).tuples(rel)) == naive_evaluate(program)[rel] == answer
    assert format_program(parse(rule)) == rule + "\n"


def test_lint_accepts_a_wildcard_aggregate_and_still_refuses_a_wildcard_elsewhere(tmp_path: Path) -> None:
    ok = lint_bytes(tmp_path, (FACTS + ".decl z()\nz() :- _ = count : { b(_, _) }.\n").encode(), "ok.rules")
    assert (ok.exit_code, ok.stdout) == (0, "")
    bad = lint_bytes(tmp_path, (FACTS + ".decl z()\nz() :- _ < count : { b(_, _) }.\n").encode(), "bad.rules")
    assert bad.exit_code == 1 and codes_of(bad)[:1] == ["safety_violations"]
