"""The printer: canonical text that parses back to the same AST."""

from __future__ import annotations

from hypothesis import given, settings

from ordinance.rules import ast, format_atom, format_program, format_rule, format_term, parse
from ordinance.values import FOREVER

from corpus_rules import core_rules
from strategies_ast import programs, terms


@settings(max_examples=200, deadline=None)
@given(programs)
def test_parse_of_print_is_identity(program: ast.Program) -> None:
    assert parse(format_program(program)) == program


@settings(max_examples=200, deadline=None)
@given(terms)
def test_terms_round_trip_inside_a_comparison(term: ast.Term) -> None:
    text = f"p() :- {format_term(term)} = {format_term(term)}."
    rule = parse(text).items[0]
    assert isinstance(rule, ast.Rule)
    assert rule.body == (ast.Comparison("=", term, term),)


def test_canonical_layout() -> None:
    text = """
    // comment
    .decl edge(a: symbol, b: number)
    reach(X,Y):-edge(X,Y) , not blocked( X ), Y<3 , N = count:{edge(X,_)} .
    test "t" { edge("a",1).  expect reach("a", 1). now 2026-08-14T23:00:00Z. }
    .hint edge("a"|"b", _)
    """
    assert format_program(parse(text)) == (
        ".decl edge(a: symbol, b: number)\n"
        "reach(X, Y) :- edge(X, Y), !blocked(X), Y < 3, N = count : { edge(X, _) }.\n"
        'test "t" {\n'
        "  now 2026-08-14T23:00:00Z.\n"
        '  edge("a", 1).\n'
        '  expect reach("a", 1).\n'
        "}\n"
        '.hint edge("a" | "b", _)\n'
    )


def test_precedence_needs_parentheses_only_where_meaning_changes() -> None:
    x, y, z = ast.Var("X"), ast.Var("Y"), ast.Var("Z")
    assert format_term(ast.BinOp("-", ast.BinOp("-", x, y), z)) == "X - Y - Z"
    assert format_term(ast.BinOp("-", x, ast.BinOp("-", y, z))) == "X - (Y - Z)"
    assert format_term(ast.BinOp("*", ast.BinOp("+", x, y), z)) == "(X + Y) * Z"
    assert format_term(ast.BinOp("+", x, ast.BinOp("*", y, z))) == "X + Y * Z"
    assert format_term(ast.BinOp("-", x, ast.Const(-5, "number"))) == "X - -5"


def test_constants_print_as_literals() -> None:
    assert format_term(ast.Const('a"b\\c\n', "symbol")) == '"a\\"b\\\\c\\n"'
    assert format_term(ast.Const("\x01", "symbol")) == '"\\u0001"'
    assert format_term(ast.Const(FOREVER, "time")) == "forever"
    assert format_term(ast.Const(0, "time")) == "1970-01-01T00:00:00Z"
    assert format_term(ast.Const(900, "duration")) == "15m"
    assert format_term(ast.Const(-7200, "duration")) == "-2h"
    assert format_term(ast.Now()) == "$now"
    assert format_atom(ast.Atom("ok", ())) == "ok()"
    assert format_rule(ast.Rule(ast.Atom("ok", ()))) == "ok()."


def test_formatting_is_a_fixpoint_on_the_conformance_corpus() -> None:
    rules = core_rules()
    for text in rules:
        program = parse(text)
        printed = format_program(program)
        assert parse(printed) == program
        assert format_program(parse(printed)) == printed
    assert len(rules) > 100
