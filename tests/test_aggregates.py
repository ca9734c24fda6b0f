"""Aggregates Soufflé has and ordinance refused (issue 24): `mean`, and a
`min`/`max` witness reaching the rule through an enclosing aggregate. Each is
parsed, checked, evaluated (the naive evaluator agrees), explained and
printed back; lint accepts an example and rejects another."""

from __future__ import annotations

from pathlib import Path

import pytest

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, extend, why, why_not
from ordinance.explain import to_text
from ordinance.rules import compile_text, format_program, parse
from test_lint import codes_of, lint_bytes

SCORES = '.decl score(who: symbol, s: number)\nscore("a", 1). score("a", 2). score("b", 4).\n'


def test_mean_is_a_float_per_group_and_nothing_over_nothing() -> None:
    text = (
        SCORES + ".decl avg(w: symbol, m: float)\n"
        "avg(W, M) :- score(W, _), M = mean S : { score(W, S) }.\n"
        "all(M) :- M = mean S : score(_, S).\n"
        'none(M) :- M = mean S : { score("z", S) }.\n'
        "big(W) :- score(W, _), mean S : { score(W, S) } > 2.\n"
    )
    program = compile_text(text)
    model = evaluate(program)
    reference = naive_evaluate(program)
    for rel in ("avg", "all", "none", "big"):
        assert set(model.tuples(rel)) == reference[rel], rel
    assert set(model.tuples("avg")) == {("a", 1.5), ("b", 4.0)}
    assert set(model.tuples("all")) == {(7 / 3,)}
    assert set(model.tuples("none")) == set()
    assert set(model.tuples("big")) == {("b",)}
    assert 'mean S : { score("a", S) } = 1.5  aggregate' in to_text(why(model, "avg", ("a", 1.5)))
    assert 'fails at mean S : { score("a", S) } > 2: is false' in to_text(why_not(model, "big", ("a",)))
    printed = format_program(parse(text))
    assert "M = mean S : { score(W, S) }" in printed
    assert format_program(parse(printed)) == printed
    # maintained as facts arrive
    extend(model, {"score": [("a", 6)]})
    assert ("a", 3.0) in set(model.tuples("avg"))


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (".decl w(s: symbol)\nm(M) :- M = mean S : { w(S) }.", "type_mismatch"),  # over a symbol
        (".decl n(x: number)\n.decl m(x: number)\nm(M) :- M = mean X : { n(X) }.", "type_mismatch"),  # a float
        (".decl n(x: number)\nm(M) :- M = mean : { n(_) }.", "syntax"),  # no target
    ],
)
def test_lint_accepts_mean_and_rejects_its_misuse(tmp_path: Path, bad: str, code: str) -> None:
    ok = ".decl n(x: number)\n.decl m(x: float)\nm(M) :- M = mean X : { n(X) }.\n"
    accepted = lint_bytes(tmp_path, ok.encode(), "ok.rules")
    assert (accepted.exit_code, accepted.stdout) == (0, "")
    rejected = lint_bytes(tmp_path, (bad + "\n").encode(), "bad.rules")
    assert rejected.exit_code == 1 and codes_of(rejected)[:1] == [code], rejected.stdout
    with pytest.raises(OrdinanceError):
        compile_text(bad)


LIFTED = (
    ".decl a(x: number)\na(1). a(2). a(3).\n.decl b(x: number, y: number)\nb(1, 0). b(2, 1). b(3, 3). b(4, 2).\n"
    ".decl r(x: number, y: number)\n"
)


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        ("r(X, count : { a(_) }) :- a(X).", {(1, 3), (2, 3), (3, 3)}),
        ("r(X, 0) :- b(X, count : { a(Y), Y < X }).", {(1, 0), (2, 0)}),
        ("r(X, 1 + max Y : { a(Y), Y < X }) :- a(X).", {(2, 2), (3, 3)}),
        ("r(W, min X : { b(X, W) }) :- a(_).", {(0, 1)}),  # its witness
        ("r(X, 5) :- a(X), !b(X, count : { a(Y), Y < X }).", {(3, 5)}),
        ("r(count : { a(_) }, 9).", {(3, 9)}),
        ("r(X, Y) :- a(X), b(Y, sum Z : { a(Z), Z <= X } - 1).", {(1, 1), (2, 4)}),
        ("r(X, Y) :- b(X, Y), Y = count : { a(Z), Z < X } + 0 * sum Z : { a(Z) }.", {(1, 0), (2, 1)}),
    ],
)
def test_an_aggregate_as_an_argument_is_lifted_into_a_variable(rule: str, answer: set) -> None:
    program = compile_text(LIFTED + rule + "\n")
    assert set(evaluate(program).tuples("r")) == naive_evaluate(program)["r"] == answer
    assert format_program(parse(rule)) == rule + "\n"  # printed back as written


def test_a_lifted_aggregate_is_explained() -> None:
    model = evaluate(compile_text(LIFTED + ".decl s(x: number)\ns(X) :- b(X, count : { a(Y), Y < X }).\n"))
    proof = to_text(why(model, "s", (2,)))
    assert "s(X) :- b(X, A_1), A_1 = count : { a(Y), Y < X }." in proof
    assert "count : { a(Y), Y < 2 } = 1  aggregate" in proof
    assert "does not hold" in to_text(why_not(model, "s", (3,)))


NESTED = (
    ".decl a(x: number)\n.decl b(x: number, y: number)\n.decl c(x: number)\n.decl r(x: number)\n"
    "a(1). a(2). a(3). a(4).\nb(2, 2). b(2, 5). b(3, 5). b(4, 9). b(4, 1).\nc(2). c(4). c(9).\n"
)


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        # per distinct W of b: the least second column (2 + 5 + 1); Soufflé
        # materializes a nesting body into a relation of its named variables,
        # so `_` adds no rows (it was 11, one per tuple of b, before)
        ("r(S) :- S = sum M : { b(W, _), M = min X : { b(W, X) } }.", 8),
        # the first columns of b with more than one tuple (2 and 4; 4 tuples before)
        ("r(S) :- S = count : { b(W, _), count : { b(W, _) } > 1 }.", 2),
        # in a target; 9 has no b, so no minimum: 2 + 1
        ("r(S) :- S = sum (min X : { b(W, X) }) : { c(W) }.", 3),
        # in an argument inside the body: b(2, 2) only
        ("r(S) :- S = count : { c(W), b(W, count : { b(W, _) }) }.", 1),
        # three levels: per W of c the b values below the largest (7 + 1 + 0)
        ("r(S) :- S = sum A : { c(W), A = sum B : { b(W, B), B < max C : { b(_, C) } } }.", 8),
        # witnesses: the Y of each least X (W = 2: 2; W = 9: 4)
        ("r(S) :- S = sum Y : { c(W), _ = min X : { b(X, W), c(Y), Y = X } }.", 6),
        # a variable of the rule inside (S from a(S)): no W of c below S has a sum equal to S
        ("r(S) :- a(S), S = max M : { c(W), W < S, M = sum X : { b(W, X) } }.", None),
    ],
)
def test_an_aggregate_inside_an_aggregate(rule: str, answer: int | None) -> None:
    text = NESTED + rule + "\n"
    program = compile_text(text)
    assert set(evaluate(program).tuples("r")) == ({(answer,)} if answer is not None else set())
    assert set(evaluate(program).tuples("r")) == naive_evaluate(program)["r"]
    assert format_program(parse(rule)) == rule + "\n"


def test_a_nested_aggregate_is_explained() -> None:
    model = evaluate(compile_text(NESTED + "r(S) :- S = sum (min X : { b(W, X) }) : { c(W) }.\n"))
    proof = to_text(why(model, "r", (3,)))
    assert "agg#" in proof and "aggregate" in proof
    assert "does not hold" in to_text(why_not(model, "r", (4,)))


def test_a_count_inside_an_aggregate_has_no_witnesses() -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(NESTED + "r(S) :- S = sum Y : { c(W), _ = count : { b(W, Y) } }.\n")
    assert info.value.code in ("unbound_variable", "safety_violations")


def test_a_nested_aggregate_whose_result_a_sibling_filter_reads() -> None:
    # Soufflé's evaluation/aggregates_nested: the relation computing the inner
    # `sum` copied the enclosing body's `2 * T >= I` into its rule, where `T`
    # (the sum itself) is unbound: lint refused the program
    text = (
        "s(1, 1, 3). s(1, 2, 4). s(1, 3, 5). stock(1, 10). stock(2, 1).\n"
        "half(P, M) :- stock(P, I), M = min C : { s(_, C, _), T = sum N : { s(P, Q, N), Q <= C }, 2 * T >= I }.\n"
    )
    program = compile_text(text)
    model = evaluate(program)
    assert set(model.tuples("half")) == {(1, 2)} == naive_evaluate(program)["half"]
    assert why(model, "half", (1, 2)) is not None


# Soufflé's evaluation/aggregate_witnesses, "Reaching witness": the witness of
# the inner `min` reaches the head through the `count` around it
REACHING = (
    ".decl b(x: number, y: number)\n.decl d(x: number, y: number)\n.decl f(n: number, w: number)\n"
    "b(2, 1). b(2, 2). b(2, 3). b(2, 4).\nd(1, 1). d(1, 2). d(1, 3). d(1, 4). d(3, 9).\n"
)


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        # Soufflé's answer: the count is of the distinct X (1), the witnesses
        # the W of the rows of d attaining the least Y (1..4, not 9)
        ("f(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W) } }.", {(1, 1), (1, 2), (1, 3), (1, 4)}),
        # through a `max`, and a `max` inside
        ("f(N, W) :- N = max X : { b(X, _), X < max Y : { d(Y, W) } }.", {(2, 9)}),
        # through a `sum` whose body reads a variable of the rule (V from b)
        # (V = 1: 2 < 1 fails; V = 2, 3: the least Y >= V is 3, of W = 9; V = 4: none)
        ("f(V, W) :- b(2, V), N = sum X : { b(X, V), X < min Y : { d(Y, W), Y >= V } }, N = 2.", {(2, 9), (3, 9)}),
        # in the enclosing aggregate's target: the least Y is 1, once per distinct X of b (2 + 1 + 1 + 1 before)
        ("f(N, W) :- N = sum (min Y : { d(Y, W) }) : { b(X, _) }.", {(1, 1), (1, 2), (1, 3), (1, 4)}),
        ("f(N, W) :- N = sum 1 + min Y : { d(Y, W) } : { b(X, _), b(_, X) }.", {(2, 1), (2, 2), (2, 3), (2, 4)}),
        # two levels down
        (
            "f(N, W) :- N = count : { b(X, _), N2 = count : { d(_, X2), X2 > min Y : { d(Y, W) } }, N2 > X }.",
            {(1, 1), (1, 2), (1, 3), (1, 4)},
        ),
    ],
)
def test_a_witness_reaches_the_rule_through_an_enclosing_aggregate(rule: str, answer: set) -> None:
    program = compile_text(REACHING + rule + "\n")
    model = evaluate(program)
    assert set(model.tuples("f")) == naive_evaluate(program)["f"] == answer
    assert format_program(parse(rule)) == rule + "\n"  # printed back as written


def test_a_reaching_witness_is_explained_linted_and_maintained(tmp_path: Path) -> None:
    text = REACHING + "f(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W) } }.\n"
    accepted = lint_bytes(tmp_path, text.encode(), "ok.rules")
    assert (accepted.exit_code, accepted.stdout) == (0, "")
    model = evaluate(compile_text(text))
    proof = to_text(why(model, "f", (1, 2)))
    assert "min Y : { d(Y, W_2) } = 1  aggregate" in proof and "d(1, 2)  fact" in proof
    assert "fails at d(1, 9): no such fact" in to_text(why_not(model, "f", (1, 9)))
    extend(model, {"d": [(0, 7)]})  # a new least Y: its row is the only witness
    assert set(model.tuples("f")) == {(1, 7)}


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        # the copy that grounds W stands in the rule, where X has no value;
        # Soufflé reports X ungrounded there
        ("f(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W), Y < X } }.", "cannot reach the rule"),
        # Soufflé grounds both aggregates' witnesses at once: not done here
        ("f(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W) } }, _ = max Z : { d(Z, W) }.", "another aggregate"),
        ("f(N, W) :- N = count : { b(X, _), X > min Y : { d(Y, W) }, X < max Y : { d(Y, W) } }.", "another aggregate"),
    ],
)
def test_a_nested_witness_that_cannot_reach_the_rule_is_refused(tmp_path: Path, rule: str, message: str) -> None:
    bad = REACHING + rule + "\n"
    rejected = lint_bytes(tmp_path, bad.encode(), "bad.rules")
    assert rejected.exit_code == 1 and codes_of(rejected) == ["nested_witness"], rejected.stdout
    assert "the witness `W` of a nested `min`" in rejected.stdout and message in rejected.stdout
    with pytest.raises(OrdinanceError) as info:
        compile_text(bad)
    assert info.value.code == "nested_witness"


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        # a witness of the `count` itself is not one (Soufflé: "witness problem")
        ("f(N, W) :- N = count : { b(X, W), X > min Y : { d(Y, W) } }.", "unbound_variable"),
        # nor of an inner `sum`
        ("f(N, W) :- N = count : { b(X, _), X > sum Y : { d(Y, W) } }.", "unbound_variable"),
    ],
)
def test_what_is_not_a_reaching_witness(rule: str, answer: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(REACHING + rule + "\n")
    assert info.value.code in (answer, "safety_violations")


@pytest.mark.parametrize(
    "rule",
    [
        "f(Y, W) :- d(Y, 9), N = min Y : { d(Y, W) }, N >= 0.",
        "f(Y, W) :- d(Y, 9), N = count : { b(X, _), X > min Y : { d(Y, W) } }, N > 0.",
    ],
)
def test_a_target_named_as_a_variable_of_the_rule_stays_local_where_its_witnesses_are_grounded(rule: str) -> None:
    # the target Y is local to the aggregate (the least Y of d is 1, of W 1..4);
    # grounding the witnesses once set the rule's Y (3, from d(Y, 9)) to 1: nothing
    program = compile_text(REACHING + rule + "\n")
    answer = {(3, 1), (3, 2), (3, 3), (3, 4)}
    assert set(evaluate(program).tuples("f")) == naive_evaluate(program)["f"] == answer
