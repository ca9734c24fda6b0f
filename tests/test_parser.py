"""The parser: every construct of the language, spans, and syntax errors."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ordinance.diagnostics import ParseError, Span
from ordinance.rules import ast, parse, parser
from ordinance.rules.parser import MAX_ERRORS, MAX_TERM_DEPTH
from ordinance.values import FOREVER, parse_instant

from corpus_rules import core_rules

X, Y = ast.Var("X"), ast.Var("Y")


def num(n: int) -> ast.Const:
    return ast.Const(n, "number")


def one_rule(text: str) -> ast.Rule:
    (item,) = parse(text).items
    assert isinstance(item, ast.Rule)
    return item


def errors(text: str) -> list[tuple[str, int, int, str]]:
    with pytest.raises(ParseError) as info:
        parse(text, "t.rules")
    return [(d.code, d.span.line, d.span.column, d.message) for d in info.value.diagnostics]


def test_every_core_corpus_rule_parses_to_one_rule() -> None:
    rules = core_rules()
    assert len(rules) > 200
    for text in rules:
        (item,) = parse(text).items
        assert isinstance(item, ast.Rule) and item.body, text


def test_subtraction_chains_are_left_associative() -> None:
    rule = one_rule("result(1-2-3) :- seed(x).")
    assert rule.head.args == (ast.BinOp("-", ast.BinOp("-", num(1), num(2)), num(3)),)
    assert rule.body == (ast.Atom("seed", (ast.Var("x"),)),)


def test_negation_both_spellings_and_constants() -> None:
    rule = one_rule('Z(a,b) :- not X("a","b"), !W(a), Y(a,b).')
    neg = ast.Negation(ast.Atom("X", (ast.Const("a"), ast.Const("b"))))
    assert rule.body[0] == neg
    assert rule.body[1] == ast.Negation(ast.Atom("W", (ast.Var("a"),)))


def test_missing_final_period_and_parenthesized_comparison() -> None:
    rule = one_rule("Fib(n, x + y) :- Fib(n - 1, x), Fib(n - 2, y), (n <= 25)")
    assert rule.body[2] == ast.Comparison("<=", ast.Var("n"), num(25))
    assert one_rule("Ok() :- not Ok()").body == (ast.Negation(ast.Atom("Ok", ())),)


def test_arithmetic_precedence_and_unary_minus() -> None:
    rule = one_rule("p(X) :- q(X), Y = -X + 2 * (X - -3) % 4.")
    assert rule.body[1] == ast.Comparison(
        "=",
        Y,
        ast.BinOp(
            "+",
            ast.BinOp("-", num(0), X),
            ast.BinOp("%", ast.BinOp("*", num(2), ast.BinOp("-", X, num(-3))), num(4)),
        ),
    )


def test_time_literals() -> None:
    rule = one_rule("t(2026-08-14T23:00:00Z, 15m, 4h, 7d, 30s, 2w, forever, $now, -1h).")
    assert rule.head.args == (
        ast.Const(parse_instant("2026-08-14T23:00:00Z"), "time"),
        ast.Const(900, "duration"),
        ast.Const(4 * 3600, "duration"),
        ast.Const(7 * 86400, "duration"),
        ast.Const(30, "duration"),
        ast.Const(14 * 86400, "duration"),
        ast.Const(FOREVER, "time"),
        ast.Now(),
        ast.Const(-3600, "duration"),
    )


def test_aggregates_with_braces_and_single_atom() -> None:
    rule = one_rule(
        "latest(W, E) :- lease(W, _, _, _), E = max X : { lease(W, _, X, _) }, "
        "N = count : lease(W, _, _, _), S = sum X : { lease(W, _, X, _), X > 0 }."
    )
    lease = ast.Atom("lease", (ast.Var("W"), ast.Wildcard(), ast.Var("X"), ast.Wildcard()))
    assert rule.body[1] == ast.Comparison("=", ast.Var("E"), ast.Aggregate("max", X, (lease,)))
    count = rule.body[2]
    assert isinstance(count, ast.Comparison) and isinstance(count.right, ast.Aggregate)
    assert count.right.func == "count" and count.right.target is None
    total = rule.body[3]
    assert isinstance(total, ast.Comparison) and isinstance(total.right, ast.Aggregate)
    assert total.right.body[1] == ast.Comparison(">", X, num(0))


def test_strings_escapes_and_comments() -> None:
    program = parse('// line\n/* block\n comment */ s("a\\"b\\\\c\\n\\t\\u0041"). // trailing\n')
    (rule,) = program.items
    assert isinstance(rule, ast.Rule)
    assert rule.head.args == (ast.Const('a"b\\c\n\tA'),)


def test_directives_tests_invariants_hints() -> None:
    program = parse(
        """
        .include "continuity"
        .decl grant(agent: symbol, scope: symbol, epoch: number)
        .invariant "no self loops" :- edge(X, X).
        .hint grant("alice" | "bob", "w1", 1 | 2, _)
        T (x1, x3) :- T(x1, x2), T(x2, x3).
        test "an older epoch is refused" {
          now 2026-08-14T23:00:00Z.
          grant("alice", "w1", 1).
          expect permit("a1").
          expect not forbid("a1", "stale-epoch", "w1").
          expect !forbid("a2", _, _).
        }
        """
    )
    inc, decl, inv, hint, rule, test = program.items
    assert inc == ast.Include("continuity")
    assert decl == ast.Decl(
        "grant",
        (
            ast.Param("agent", "symbol"),
            ast.Param("scope", "symbol"),
            ast.Param("epoch", "number"),
        ),
    )
    assert inv == ast.Invariant("no self loops", (ast.Atom("edge", (X, X)),))
    assert hint == ast.Hint(
        "grant",
        ((ast.Const("alice"), ast.Const("bob")), (ast.Const("w1"),), (num(1), num(2)), ()),
    )
    assert isinstance(rule, ast.Rule) and rule.head.relation == "T"
    assert isinstance(test, ast.TestBlock)
    assert test.now == parse_instant("2026-08-14T23:00:00Z")
    assert [f.head.relation for f in test.facts] == ["grant"]
    assert [(e.atom.relation, e.negated) for e in test.expects] == [
        ("permit", False),
        ("forbid", True),
        ("forbid", True),
    ]


def test_soft_keywords_stay_usable_as_names() -> None:
    program = parse("test(1). expect(2). now(3). p(test, expect, now) :- q(test, expect, now).")
    assert [i.head.relation for i in program.items if isinstance(i, ast.Rule)] == [
        "test",
        "expect",
        "now",
        "p",
    ]
    rule = one_rule("p(maximum, count_x, not_y) :- q(maximum, count_x, not_y).")
    assert rule.head.args == (ast.Var("maximum"), ast.Var("count_x"), ast.Var("not_y"))


def test_empty_input_is_an_empty_program() -> None:
    assert parse("") == ast.Program(())
    assert parse("  // nothing\n") == ast.Program(())


def test_spans_point_at_tokens() -> None:
    program = parse('p(X) :-\n  q(X),\n  !r(X, "s").', "f.rules")
    (rule,) = program.items
    assert isinstance(rule, ast.Rule)
    assert rule.span == Span(1, 1, 3, 14, "f.rules")
    assert rule.head.args[0].span == Span(1, 3, 1, 4, "f.rules")
    neg = rule.body[1]
    assert isinstance(neg, ast.Negation)
    assert neg.span == Span(3, 3, 3, 13, "f.rules")
    assert neg.atom.args[1].span == Span(3, 9, 3, 12, "f.rules")
    assert program.file == "f.rules"


def test_several_syntax_errors_are_reported_at_once() -> None:
    found = errors('a(X) :- b(X.\nok(1).\nc(1) :- ,\nd("x).\ne(1).\np(X) :- q(X), X = foo(X).\n')
    assert [(code, line) for code, line, _, _ in found] == [
        ("syntax", 1),
        ("syntax", 3),
        ("syntax", 4),
        ("unknown_functor", 6),
    ]
    assert found[2][3] == "unterminated string"
    assert found[3][3].startswith("unknown functor `foo`")


def test_error_messages_name_what_was_expected() -> None:
    assert errors("a(X :- b.") == [("syntax", 1, 5, "unexpected `:`, expected `)` or `,`")]
    assert errors("a(X) :- b(X)\nc(X) :- d(X).") == [("syntax", 1, 13, "missing `.` at the end of the clause")]
    assert errors("a(X) :- b(X") == [("syntax", 1, 12, "unexpected end of input, expected `)` or `,`")]
    assert errors("/* open") == [("syntax", 1, 1, "unterminated comment")]
    assert errors("p(\x00).")[0][3] == "unexpected character `\\x00`"


def test_bad_literals_are_diagnosed() -> None:
    assert errors('p("\\q").')[0][3] == "unknown escape `\\q` in string"
    assert errors("p(2026-13-45T00:00:00Z).")[0][3] == "invalid instant `2026-13-45T00:00:00Z`"
    assert errors("p(99999999999999999999).")[0][3].endswith("is out of range")
    assert errors("p(N) :- N = count X : { q(X) }.")[0][3] == "`count` takes no target expression"
    assert errors("p(N) :- N = max : { q(X) }.")[0][3].startswith("`max` needs a target")
    assert errors('test "t" { now 2026-08-14T23:00:00Z. now 2026-08-14T23:00:00Z. }')[0][3] == (
        "a test sets `now` more than once"
    )
    assert errors('tset "t" { }')[0][3] == "unexpected `tset`, expected `test` before a test name"


def test_deep_nesting_is_a_diagnostic_not_a_crash() -> None:
    deep = "p(X) :- q(X), X = " + "(" * 10_000 + "1" + ")" * 10_000 + "."
    assert [code for code, *_ in errors(deep)] == ["too_deep"]
    long_sum = "p(X) :- q(X), X = " + " + ".join(["1"] * (MAX_TERM_DEPTH + 5)) + "."
    assert [code for code, *_ in errors(long_sum)] == ["too_deep"]
    fine = "p(X) :- q(X), X = " + " + ".join(["1"] * 50) + "."
    assert isinstance(one_rule(fine), ast.Rule)


def test_error_count_is_capped() -> None:
    found = errors("p(.\n" * (MAX_ERRORS * 3))
    assert len(found) == MAX_ERRORS


# ---------------------------------------------------------------- fast path


def lark_only(text: str) -> object:
    """What parse gives when every line goes through the grammar."""
    with mock.patch.object(parser, "_LINE", re.compile(r"(?!)")):
        return outcome(text)


def outcome(text: str) -> object:
    try:
        program = parse(text, "f.rules")
    except ParseError as e:
        return e.diagnostics
    return program, [spans(item) for item in program.items]


def spans(node: object) -> list[object]:
    if isinstance(node, tuple):
        return [s for child in node for s in spans(child)]
    if not hasattr(node, "__slots__"):
        return []
    found: list[object] = [node.span] if hasattr(node, "span") else []
    return found + [s for f in node.__slots__ if f != "span" for s in spans(getattr(node, f))]


gaps = st.sampled_from(["", " ", "\t", "  "])
string_bodies = st.lists(
    st.sampled_from(
        ["a", " ", "//", "/*", "*/", "(", "}", '\\"', "\\\\", "\\n", "\\t", "\\u00e9", "\\q", "\\u12", "é", "\\/"]
    )
).map("".join)
signs = st.sampled_from(["", "-", "- ", "--"])
constants = st.one_of(
    string_bodies.map(lambda s: f'"{s}"'),
    st.tuples(signs, st.integers(0, 2**64)).map(lambda t: f"{t[0]}{t[1]}"),
    st.tuples(signs, st.integers(0, 10**20), st.sampled_from("smhdw")).map(lambda t: "".join(map(str, t))),
    st.sampled_from(
        ["2026-08-14T23:00:00Z", "-2026-08-14T23:00:00Z", "2026-13-45T00:00:00Z", "forever", "-forever"]
        + ["X", "_", "1+2", "5x"]
    ),
)
fact_lines = st.builds(
    lambda name, args, g, tail: f"{name}{g}({g}{(g + ',' + g).join(args)}{g}){g}.{tail}",
    st.sampled_from(["p", "claim", "not", "count", "forever", "test", "_", "p_2"]),
    st.lists(constants, max_size=4),
    gaps,
    st.sampled_from(["", " ", " // c", "// x /* y", "\r", " /* z */"]),
)
other_lines = st.sampled_from(
    [
        "",
        "// note",
        "  ",
        ".decl p(a: number)",
        ".decl q(a: flot)",
        "p(X) :- q(X).",
        "p(X) :-",
        "  q(X),",
        "q(1).",
        "  r(1).",
        "/* open",
        "*/",
        'test "t" {',
        "}",
        "expect q(1).",
        "p(X) :- q(X)",
        "p(1, .",
        'p("abc).',
        '.include "x"',
        "  // indented",
        "p(\x00).",
        "(((",
    ]
)
files = st.lists(st.one_of(fact_lines, other_lines), max_size=12).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).map(lambda nl: nl.join(lines))
)


@settings(max_examples=300, deadline=None)
@given(files)
def test_fast_facts_read_exactly_as_the_grammar_reads_them(text: str) -> None:
    assert outcome(text) == lark_only(text)


def test_fact_like_lines_inside_other_items_are_read_in_context() -> None:
    text = (
        "p(X) :- q(X),\nr(1).\n"  # a rule goes on over a fact-like line
        "/* a comment\nhidden(1).\n*/\n"
        'test "t" {\nq(2).\nexpect p(2).\n}\n'
        'fact("a//b", -5, 15m).\n'
        "t(-2026-08-14T23:00:00Z, --5, - 1h).\n"  # shapes the fast path leaves to lark
    )
    program, _ = outcome(text)  # type: ignore[misc]
    assert outcome(text) == lark_only(text)
    assert [type(i).__name__ for i in program.items] == ["Rule", "TestBlock", "Rule", "Rule"]
    assert isinstance(program.items[3].head.args[0], ast.BinOp)
    assert program.items[3].head.args[1:] == (num(5), ast.Const(-3600, "duration"))
    assert program.items[0].body[1] == ast.Atom("r", (num(1),))
    last = program.items[2]
    assert last.head.args == (ast.Const("a//b"), num(-5), ast.Const(900, "duration"))
    assert last.span == Span(10, 1, 10, 23, "f.rules")
    assert last.head.args[1].span == Span(10, 14, 10, 16, "f.rules")


def test_errors_between_fast_facts_are_all_reported() -> None:
    text = "".join(f'c({i}, "x").\n' for i in range(100)) + "bad(.\n" + 'c(1, "y").\n' * 100 + 'q("\\q").\n'
    found = errors(text)
    assert [(code, line) for code, line, *_ in found] == [("syntax", 101), ("syntax", 202)]
    with mock.patch.object(parser, "_LINE", re.compile(r"(?!)")):  # the grammar alone
        assert errors(text) == found


def test_double_equals_suggests_a_single_one() -> None:
    # issue 24: `T == "prod"` said only "unexpected =, expected expression"
    with pytest.raises(ParseError) as info:
        parse('q(T) :- p(T), T == "prod".')
    d = info.value.diagnostics[0]
    assert (d.code, d.message) == ("syntax", "unexpected `==`")
    assert d.help is not None and "single `=`" in d.help
    assert (d.span.column, d.span.end_column) == (17, 19)


def test_one_decl_may_declare_several_relations_alike() -> None:
    # Soufflé's `.decl K, R, A(X: number)` (evaluation/magic_negignored and others)
    items = parse(".decl a, b(x: number) choice-domain x\n.comp C { .decl p, q(s: symbol) }").items
    decls = [i for i in items if isinstance(i, ast.Decl)]
    assert [(d.name, [p.name for p in d.params], len(d.choice)) for d in decls] == [("a", ["x"], 1), ("b", ["x"], 1)]
    component = next(i for i in items if isinstance(i, ast.Component))
    assert [d.name for d in component.items if isinstance(d, ast.Decl)] == ["p", "q"]


def test_a_repeated_negation_cancels_in_pairs() -> None:
    # Soufflé's example/dnf writes `!!!( B(X) ; D(X) )`
    body = parse("r(X) :- u(X), !!b(X), !!!c(X), !!!(b(X) ; c(X)).").items[0].body
    assert [type(lit).__name__ for lit in body] == ["Atom", "Atom", "Negation", "NegatedGroup"]
