"""Bodies and heads: disjunction `;`, several heads, nested parentheses, and
`eqrel` relations and declaration checks,
expanded into plain rules as Soufflé does."""

from __future__ import annotations

from typing import Any

import pytest

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, why, why_not
from ordinance.explain import to_text
from ordinance.rules import ast, compile_text, format_program, parse

FACTS = "c(1). c(2). c(3). d(2). e(3).\n"


def relation(text: str, name: str) -> set[tuple[Any, ...]]:
    program = compile_text(FACTS + text)
    model = evaluate(program)
    got = set(model.tuples(name))
    assert got == naive_evaluate(program)[name]
    for t in got:
        assert why(model, name, t) is not None
    return got


def test_disjunction_holds_when_a_branch_holds() -> None:
    assert relation("o(X) :- c(X), (d(X) ; e(X)).", "o") == {(2,), (3,)}
    assert relation("o(X) :- d(X) ; e(X).", "o") == {(2,), (3,)}
    assert relation("o(X) :- c(X), (X < 2 ; X > 2, !d(X)).", "o") == {(1,), (3,)}


def test_nested_parentheses_group_and_nest() -> None:
    assert relation("o(X) :- (c(X), ((d(X)) ; (e(X), X > 1))).", "o") == {(2,), (3,)}
    assert relation("o(X) :- c(X), ((X + 1) * 2 > 5).", "o") == {(2,), (3,)}
    assert relation("o(X) :- c(X), (d(X) ; (e(X) ; X = 1)).", "o") == {(1,), (2,), (3,)}


def test_several_heads_share_a_body() -> None:
    assert relation("a(X), b(X, X) :- c(X), !d(X).", "a") == {(1,), (3,)}
    assert relation("a(X), b(X, X) :- c(X), !d(X).", "b") == {(1, 1), (3, 3)}


def test_each_expansion_is_a_rule_that_explains_itself() -> None:
    program = compile_text(FACTS + "a(X), b(X) :- c(X), (d(X) ; e(X)).")
    assert [r.head.relation for r in program.rules if r.body] == ["a", "a", "b", "b"]
    model = evaluate(program)
    assert "by rule" in to_text(why(model, "b", (3,))) and "e(3)  fact" in to_text(why(model, "b", (3,)))
    answer = to_text(why_not(model, "a", (1,)))
    assert answer.count("  rule ") == 2  # one failure per branch


def test_disjunction_prints_back_and_keeps_its_shape() -> None:
    text = "a(X), b(X) :- c(X), (d(X) ; e(X), X > 1 ; (f(X) ; g(X))).\n"
    program = parse(text)
    assert format_program(program) == text
    rule = program.rules[0]
    assert rule.more_heads == (ast.Atom("b", (ast.Var("X"),)),)
    assert isinstance(rule.body[1], ast.Disjunction) and len(rule.body[1].branches) == 3


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("n(Y, N) :- c(Y), N = count : { d(Y) ; e(X), X > Y }.", "unsupported"),
        ("o(X) :- c(Y), (d(X) ; e(Y)).", "unbound_variable"),
        ("o(X) :- c(X), (d(X) ; ).", "syntax"),
        ("o(X) :- c(X), (d(X).", "syntax"),
    ],
)
def test_misuse_is_a_diagnostic(text: str, code: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(FACTS + text, "t.rules")
    assert info.value.code == code
    assert info.value.diagnostics[0].span.line == 2


def test_an_aggregate_over_a_disjunction_ranges_over_the_union_of_its_branches() -> None:
    # c = {1, 2, 3}, d = {2}, e = {3}: distinct values, as Soufflé counts them
    assert relation("n(N) :- N = count : { d(X) ; e(X) ; c(X), X < 2 }.", "n") == {(3,)}
    assert relation("n(N) :- N = count : { c(X) ; d(X) }.", "n") == {(3,)}
    assert relation("m(M) :- M = max X : { d(X) ; e(X), X < 3 }.", "m") == {(2,)}
    # a variable from the rule: the aggregate per value, every branch binding it
    assert relation("s(Y, N) :- c(Y), N = sum X : { d(Y), X = Y ; e(Y), X = 10 * Y }.", "s") == {
        (1, 0),
        (2, 2),
        (3, 30),
    }
    program = compile_text(FACTS + "n(N) :- N = count : { d(X) ; e(X) }.\nk(N) :- N = count : { d(X) ; e(X) }.")
    assert len({r.head.relation for r in program.rules if r.head.relation.startswith("agg#")}) == 1
    model = evaluate(program)
    assert "count : { agg#" in to_text(why(model, "n", (2,)))


def test_an_invariant_with_a_disjunction_is_broken_by_any_branch() -> None:
    program = compile_text(FACTS + '.invariant "no d or e" :- c(X), (d(X) ; e(X)).')
    assert len(program.invariants) == 2


def test_eqrel_is_an_equivalence_relation() -> None:
    text = '.decl same(a: symbol, b: symbol) eqrel btree\nsame("a", "b"). same("b", "c"). same("d", "e").\n'
    program = compile_text(text)
    model = evaluate(program)
    got = set(model.tuples("same"))
    assert got == naive_evaluate(program)["same"]
    group = {"a", "b", "c"}
    assert got == {(x, y) for x in group for y in group} | {(x, y) for x in "de" for y in "de"}
    assert 'same("b", "c")  fact' in to_text(why(model, "same", ("c", "a")))
    assert format_program(parse(text)).startswith(".decl same(a: symbol, b: symbol) eqrel btree\n")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (".decl s(a: number, a: symbol)", "duplicate_attribute"),
        (".decl s(a: number, a: number)", "duplicate_attribute"),
        (".decl s(a: number) eqrel", "arity_mismatch"),
        (".decl s(a: number, b: symbol) eqrel", "type_mismatch"),
    ],
)
def test_declarations_are_checked(text: str, code: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(text)
    assert [d.code for d in info.value.diagnostics] == [code]
