"""Operators, numeric types and `.type` declarations, with Soufflé's semantics."""

from __future__ import annotations

from typing import Any

import pytest

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, why
from ordinance.explain import to_text
from ordinance.rules import ast, compile_text, format_program, format_term, parse
from ordinance.rules.functors import Unsigned


def value(expr: str, decls: str = "") -> Any:
    """The value of an expression, by the engine (the naive evaluator agrees)."""
    program = compile_text(f"{decls}\nv(X) :- X = {expr}.")
    got = set(evaluate(program).tuples("v"))
    assert got == naive_evaluate(program)["v"]
    assert len(got) == 1, got
    return next(iter(got))[0]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("6 band 3", 2),
        ("6 bor 3", 7),
        ("6 bxor 3", 5),
        ("1 bshl 4", 16),
        ("-16 bshr 2", -4),
        ("-1 bshru 60", 15),
        ("1 bshl 64", 0),
        ("1 bshl 63", -(2**63)),
        ("bnot 0", -1),
        ("2 land 3", 1),
        ("2 land 0", 0),
        ("0 lor 0", 0),
        ("0 lor 5", 1),
        ("2 lxor 3", 0),
        ("lnot 7", 0),
        ("lnot 0", 1),
        ("2 ^ 10", 1024),
        ("2 ^ 3 ^ 2", 512),
        ("-2 ^ 2", -4),
        ("(-2) ^ 2", 4),
        ("2 ^ -1", 0),
        ("1 + 2 band 3", 3),
        ("1 bor 2 band 3", 3),
        ("1 lor 0 land 0", 1),
        ("max(3, 9, 4)", 9),
        ("min(3, 9, 4)", 3),
        ("max(1.5, 2.5)", 2.5),
        ("7 / -2", -3),
        ("-7 % 2", -1),
        ("0x1F", 31),
        ("0xff band 0x0f", 15),
    ],
)
def test_operators_follow_souffle(expr: str, expected: Any) -> None:
    got = value(expr)
    assert got == expected and type(got) is type(expected)


def test_unsigned_numbers_wrap_at_64_bits() -> None:
    assert value("0u - 1u") == 2**64 - 1
    assert isinstance(value("0u - 1u"), Unsigned)
    assert value("7u / 2u") == 3
    assert value("0xffu + 1") == 256  # an integer literal takes the other side's type
    assert value("bnot 0u") == 2**64 - 1
    assert value("2u ^ 64") == 0


def test_floats_divide_and_convert() -> None:
    assert value("7.0 / 2.0") == 3.5
    assert value("1.5e3 + 1") == 1501.0
    assert value("to_float(3)") == 3.0
    assert value("to_number(2.9)") == 2
    assert value("to_number(-2.9)") == -2
    assert value("to_unsigned(-1)") == 2**64 - 1
    assert value("to_number(to_unsigned(-1))") == -1
    assert value('to_float("2.5")') == 2.5
    assert value("to_string(2.5)") == "2.500000"  # Soufflé's std::to_string: six decimals
    assert value("to_string(3.14)") == "3.140000"


def test_range_gives_every_value() -> None:
    def values(text: str) -> list[Any]:
        program = compile_text(f"v(X) :- X = {text}.")
        got = sorted(t[0] for t in evaluate(program).tuples("v"))
        assert got == sorted(t[0] for t in naive_evaluate(program)["v"])
        return got

    assert values("range(1, 5)") == [1, 2, 3, 4]
    assert values("range(5, 1)") == [2, 3, 4, 5]
    assert values("range(0, 10, 3)") == [0, 3, 6, 9]
    assert values("range(0, 1, 0)") == []
    program = compile_text("s(3). s(7). in(X) :- s(X), X = range(0, 5).")
    assert set(evaluate(program).tuples("in")) == {(3,)}
    model = evaluate(compile_text("v(X) :- X = range(1, 3)."))
    assert "X = range(1, 3)  holds" in to_text(why(model, "v", (2,)))


def test_range_stands_wherever_a_value_does_as_in_souffle() -> None:
    def rel(text: str, name: str) -> set[Any]:
        program = compile_text(text)
        got = set(evaluate(program).tuples(name))
        assert got == naive_evaluate(program)[name]
        return got

    assert rel("v(range(1, 3)).", "v") == {(1,), (2,)}
    assert rel("v(X) :- X = range(1, 3) + 1.", "v") == {(2,), (3,)}
    assert rel("n(2). n(3).\np(X, range(0, X) * 10) :- n(X).", "p") == {(2, 0), (2, 10), (3, 0), (3, 10), (3, 20)}
    assert rel("n(1). n(4).\nhit(X) :- n(X), n(range(0, 2)).", "hit") == {(1,), (4,)}
    assert rel("n(1). n(4).\nlow(X) :- n(X), X < range(2, 4).", "low") == {(1,)}
    model = evaluate(compile_text("n(2).\np(X, range(0, X)) :- n(X)."))
    assert why(model, "p", (2, 1)) is not None


def test_products_outside_64_bits_are_refused_not_wrapped() -> None:
    with pytest.raises(OrdinanceError) as info:
        value("2 ^ 64")
    assert info.value.code == "limit_exceeded"


def test_leading_zeros_are_decimal_and_long_literals_a_syntax_error() -> None:
    # `007` in a rule body reached int(text, 0), which refuses leading zeros: error[internal]
    assert value("007 + 0x00ff") == 262
    assert value("-0009223372036854775807") == -(2**63 - 1)
    with pytest.raises(OrdinanceError) as info:
        value("0" * 30 + "9" * 30)
    assert info.value.code == "syntax" and "out of range" in str(info.value)
    with pytest.raises(OrdinanceError) as info:  # a year past 9999 reads as arithmetic, then fails to parse
        compile_text('.decl stop(s: symbol, t: time)\nstop("p", 99999-01-01T00:00:00Z).')
    assert info.value.code == "syntax"


def test_numbers_keep_their_declared_types() -> None:
    program = compile_text(
        ".decl f(x: float)\n.decl u(x: unsigned)\nf(1). f(2.5). u(3).\ng(X) :- f(X), X > 1.\nw(Y) :- u(X), Y = X - 4."
    )
    model = evaluate(program)
    assert sorted(model.tuples("f")) == [(1.0,), (2.5,)] and all(type(t[0]) is float for t in model.tuples("f"))
    assert set(model.tuples("w")) == {(2**64 - 1,)}


def test_types_subtypes_unions_and_aliases() -> None:
    program = compile_text(
        ".type Path <: symbol\n.type Id = number\n.type Key = Path | Alias\n.type Alias = symbol\n"
        ".decl file(p: Path, owner: Id)\n.decl key(k: Key)\n"
        'file("/a", 1).\nkey(P) :- file(P, _).'
    )
    assert program.relations["file"].types == ("symbol", "number")
    assert program.relations["key"].types == ("symbol",)
    assert set(evaluate(program).tuples("key")) == {("/a",)}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("v(X) :- X = 1.5 band 1.", "type_mismatch"),
        ("v(X) :- X = 1.5 % 2.0.", "type_mismatch"),
        ("v(X) :- X = 1u + 1.5.", "type_mismatch"),
        ('v(X) :- X = "a" bor 1.', "type_mismatch"),
        ('v(X) :- X = max("a", 1).', "type_mismatch"),
        ("v(X) :- X = max(1u, 1.5).", "type_mismatch"),
        (".decl f(x: float)\nf(1.5).\nv(X) :- f(Y), X = Y bshl 1.", "type_mismatch"),
        (".decl f(x: float)\n.decl n(x: number)\nf(1.5).\nn(X) :- f(X).", "type_mismatch"),
        ("n(1).\nv(X) :- n(X), !n(range(0, X)).", "range_position"),
        ("n(1).\nv(C) :- C = count : { n(range(0, 3)) }.", "range_position"),
        (".type T <: nothing\n.decl p(x: T)", "unknown_type"),
        (".decl p(x: real)", "unknown_type"),
        (".type T = symbol | number", "type_mismatch"),
        (".type A = B\n.type B = A", "cyclic_type"),
        (".type T <: symbol\n.type T <: number", "duplicate_decl"),
    ],
)
def test_misuse_is_a_lint_time_error(text: str, code: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(text, "t.rules")
    assert info.value.code == code, info.value
    assert info.value.diagnostics[0].span.line >= 1


def test_literals_and_operators_print_back() -> None:
    text = (
        ".type Path <: symbol\n.type Key = Path | number\n"
        "p(X) :- q(X), Y = X band 3 bor 4 lor 1, Z = 2 ^ 3 ^ 2, W = bnot(X), V = max(X, 1, 2), "
        "U = 5u + 255u, F = -1.5, H = range(1, 5), A = (X lor Y) land Z, B = X bshl 2 + 1, C = (-2) ^ 2.\n"
    )
    program = parse(text)
    assert format_program(program) == text
    assert format_term(ast.BinOp("^", ast.Const(-2, "number"), ast.Const(2, "number"))) == "(-2) ^ 2"
    assert format_term(ast.BinOp("^", ast.Call("bnot", (ast.Var("X"),)), ast.Var("Y"))) == "(bnot(X)) ^ Y"
    assert parse("p(X) :- X = 0x10 + 1e3.").rules[0].body[0] == ast.Comparison(
        "=", ast.Var("X"), ast.BinOp("+", ast.Const(16, "number"), ast.Const(1000.0, "float"))
    )


@pytest.mark.parametrize(
    ("kind", "facts", "expected"),
    [("float", "item(1.0, 2.0).", 3.0), ("unsigned", "item(1, 2).", Unsigned(3))],
)
def test_head_arithmetic_has_the_kind_of_its_operands(kind: str, facts: str, expected: Any) -> None:
    # issue 24 (6): `r(V + W)` was typed `number` whatever V and W hold
    program = compile_text(
        f".decl item(a: {kind}, b: {kind})\n.decl r(x: {kind})\n{facts}\n"
        "r(V + W) :- item(V, W).\nr(V * 2) :- item(V, _)."
    )
    got = set(evaluate(program).tuples("r"))
    assert got == set(naive_evaluate(program)["r"]) == {(expected,), (expected - 1,)}
    assert all(type(t[0]) is type(expected) for t in got)
    with pytest.raises(OrdinanceError) as info:
        compile_text(f".decl item(a: {kind}, b: {kind})\n.decl r(x: symbol)\nr(V + W) :- item(V, W).")
    assert info.value.code == "type_mismatch"


def test_the_least_64_bit_number_is_a_literal_but_its_negation_is_not() -> None:
    program = compile_text(".decl f(x: number)\nf(-9223372036854775808).\nf(X) :- X = - 9223372036854775808 + 1.\n")
    assert set(evaluate(program).tuples("f")) == {(-(2**63),), (-(2**63) + 1,)}
    for text in ("f(9223372036854775808).", "f(X) :- X = 1 - 9223372036854775808."):
        with pytest.raises(OrdinanceError, match="integer `9223372036854775808` is out of range"):
            parse(".decl f(x: number)\n" + text)
