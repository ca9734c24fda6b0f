"""Built-in functors and constraints: parsed, checked, printed, evaluated, explained."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from naive import naive_evaluate
from ordinance.diagnostics import EvaluationError, OrdinanceError
from ordinance.engine import evaluate, why, why_not
from ordinance.explain import to_text
from ordinance.rules import ast, compile_text, format_program, parse
from ordinance.cli import cli
from ordinance.rules.functors import glob_regex
from ordinance.rules.regex import InvalidPatternWarning
from ordinance.values import parse_instant

PATHS = ("src/a.py", "src/x/b.py", "src/x/y/c.py", "README.md", "docs/a.md", "a/b")


def run(text: str, facts: dict[str, Any] | None = None) -> dict[str, set[tuple[Any, ...]]]:
    """Every relation of the program, by the engine; the naive evaluator agrees."""
    program = compile_text(text)
    model = evaluate(program, facts)
    reference = naive_evaluate(program, facts)
    out = {}
    for name in program.relations:
        got = set(model.tuples(name))
        assert got == reference[name], name
        out[name] = got
    return out


def paths(body: str) -> set[str]:
    text = ".decl path(p: symbol)\n" + "".join(f'path("{p}").\n' for p in PATHS) + f"hit(P) :- path(P), {body}.\n"
    return {t[0] for t in run(text)["hit"]}


def test_contains_takes_the_substring_first() -> None:
    assert paths('contains("/x/", P)') == {"src/x/b.py", "src/x/y/c.py"}
    assert paths('!contains("/", P)') == {"README.md"}


def test_starts_with_takes_the_prefix_first() -> None:
    assert paths('starts_with("src/", P)') == {"src/a.py", "src/x/b.py", "src/x/y/c.py"}
    assert paths('starts_with("", P)') == set(PATHS)


def test_match_is_a_full_match() -> None:
    assert paths('match("[a-z]+", P)') == set()
    assert paths('match("[a-z]+/[a-z]+", P)') == {"a/b"}
    assert paths('match(".*\\\\.md", P)') == {"README.md", "docs/a.md"}
    assert paths('!match(".*\\\\.py", P)') == {"README.md", "docs/a.md", "a/b"}


def test_glob_star_stays_in_one_directory_and_double_star_crosses() -> None:
    assert paths('glob("src/*.py", P)') == {"src/a.py"}
    assert paths('glob("src/**/*.py", P)') == {"src/a.py", "src/x/b.py", "src/x/y/c.py"}
    assert paths('glob("src/**", P)') == {"src/a.py", "src/x/b.py", "src/x/y/c.py"}
    assert paths('glob("*", P)') == {"README.md"}
    assert paths('glob("?/?", P)') == {"a/b"}
    assert paths('glob("**.md", P)') == {"README.md", "docs/a.md"}
    assert paths('glob("*.md", P)') == {"README.md"}


def test_glob_characters_other_than_wildcards_are_literal() -> None:
    assert glob_regex("a.b[c]").fullmatch("a.b[c]")
    assert not glob_regex("a.b").fullmatch("axb")
    assert not glob_regex("src/*").fullmatch("src/a/b")


def test_string_functors() -> None:
    out = run(
        """
        .decl w(s: symbol)
        w("hello"). w("").
        len(S, N) :- w(S), N = strlen(S).
        cut(S, T) :- w(S), T = substr(S, 1, 3).
        rest(S, T) :- w(S), T = substr(S, 2, 100).
        out(S, T) :- w(S), T = substr(S, 9, 1).
        joined(T) :- w(S), S != "", T = cat(S, "-", S, "!").
        code(N) :- N = ord("a").
        shown(T) :- T = to_string(-42).
        read(N) :- N = to_number("17") + to_number("-3") + to_number("0x10").
        """
    )
    assert out["len"] == {("hello", 5), ("", 0)}
    assert out["cut"] == {("hello", "ell"), ("", "")}
    assert out["rest"] == {("hello", "llo"), ("", "")}
    assert out["out"] == {("hello", ""), ("", "")}
    assert out["joined"] == {("hello-hello!",)}
    assert out["code"] == {(97,)}
    assert out["shown"] == {("-42",)}
    assert out["read"] == {(30,)}


def test_functors_nest_and_appear_in_heads_and_atom_arguments() -> None:
    out = run(
        """
        .decl w(s: symbol)
        w("ab"). w("abab").
        double(cat(S, S)) :- w(S).
        pair(S) :- w(S), w(cat(S, S)).
        longer(S) :- w(S), strlen(cat(S, "x")) > 3.
        """
    )
    assert out["double"] == {("abab",), ("abababab",)}
    assert out["pair"] == {("ab",)}
    assert out["longer"] == {("abab",)}


def test_to_number_of_a_non_numeral_is_an_evaluation_error() -> None:
    program = compile_text('.decl w(s: symbol)\nw("x1").\nn(N) :- w(S), N = to_number(S).')
    with pytest.raises(EvaluationError) as info:
        evaluate(program)
    assert info.value.code == "invalid_number"
    assert "`to_number` of `x1`: not a number" in str(info.value)
    assert "n(N) :- w(S), N = to_number(S)." in str(info.value)


def test_a_regex_from_data_that_does_not_compile_is_no_match_either_way_with_a_warning() -> None:
    # issue 24 (3): Soufflé warns, and both `match` and `!match` are false
    # a pattern of this test's own: each invalid pattern is warned of once per process (regex.warn_invalid)
    text = 'p("a"). p("[functors").\nhit(P) :- p(P), match(P, "a").\nmiss(P) :- p(P), !match(P, "a").'
    with pytest.warns(InvalidPatternWarning) as caught:
        out = run(text)
    assert out["hit"] == {("a",)}
    assert out["miss"] == set()
    assert any(w.message.diagnostic.code == "invalid_regex" for w in caught)  # type: ignore[union-attr]
    # it crosses processes whole (an xdist worker pickles a warning that escapes a test)
    warning = next(w.message for w in caught if isinstance(w.message, InvalidPatternWarning))
    again = pickle.loads(pickle.dumps(warning))
    assert (again.diagnostic, str(again)) == (warning.diagnostic, str(warning))


@pytest.mark.parametrize(
    ("pattern", "subject", "hit"),
    [
        ("a[[:digit:]]+", "a12", True),  # POSIX classes, as Soufflé's std::regex has them
        ("a[[:digit:]]+", "ab", False),
        ("[[:alpha:]_][[:alnum:]_]*", "x_1", True),
        ("[^[:space:]]+", "a b", False),
        ("a{2,3}", "aaa", True),
        ("a{2}", "aaa", False),
    ],
)
def test_the_regex_dialect_is_soufflés(pattern: str, subject: str, hit: bool) -> None:
    out = run(f'.decl s(x: symbol)\ns("{subject}").\nhit(X) :- s(X), match("{pattern}", X).')
    assert out["hit"] == ({(subject,)} if hit else set())


def test_a_brace_that_begins_no_repetition_is_an_invalid_pattern() -> None:
    # issue 24 (4): `!match("a{x}", X)` is false in Soufflé: the pattern is invalid
    with pytest.raises(OrdinanceError) as info:
        compile_text('s("a{x}").\nn(X) :- s(X), !match("a{x}", X).')
    assert info.value.code == "invalid_regex"
    with pytest.warns(InvalidPatternWarning):
        out = run('s("a{x}"). p("a{x}").\nn(X) :- s(X), p(P), !match(P, X).\ny(X) :- s(X), p(P), match(P, X).')
    assert out["n"] == set() and out["y"] == set()
    assert run('s("a{x}").\ny(X) :- s(X), match("a\\\\{x\\\\}", X).')["y"] == {("a{x}",)}


def test_a_backreference_runs_on_pythons_re_and_lint_warns(tmp_path: Any) -> None:
    program = compile_text('s("abab"). s("abba").\nhit(X) :- s(X), match("(ab)\\\\1", X).')
    assert [d.code for d in program.warnings] == ["backtracking_regex"]
    assert program.warnings[0].severity == "warning"
    assert set(evaluate(program).tuples("hit")) == {("abab",)}
    f = tmp_path / "p.rules"
    f.write_text('s("abab").\nhit(X) :- s(X), match("a(?=b)b.*", X).\n')
    result = CliRunner().invoke(cli, ["lint", str(f)])
    assert result.exit_code == 0, result.output
    assert "warning[backtracking_regex]" in result.output and "lookaround" in result.output


def test_a_backreference_from_data_is_an_invalid_pattern() -> None:
    with pytest.warns(InvalidPatternWarning):
        out = run('s("abab"). p("(ab)\\\\1").\nhit(X) :- s(X), p(P), match(P, X).')
    assert out["hit"] == set()


PATHOLOGICAL = """
import sys
from ordinance.engine import evaluate
from ordinance.rules import compile_text
a = "a" * 40
word = "-" + "x" * 48_000
program = compile_text(
    f's("{a}"). w("{word}"). p("(a|aa)*b").\\n'
    'hit(X) :- s(X), match("(a|aa)*b", X).\\n'
    'data(X) :- s(X), p(P), match(P, X).\\n'
    'flag(W) :- w(W), match("-[a-zA-Z]*f[a-zA-Z]*", W).\\n'
    'found(W) :- w(W), match(".*-[a-zA-Z]*f[a-zA-Z]*.*", W).\\n'
    'paths(W) :- w(W), glob("*x*x*x*x*x*x*x*x*x*x*y", W).\\n'
)
model = evaluate(program)
print(sorted(len(model.tuples(r)) for r in ("hit", "data", "flag", "found", "paths")))
"""


def test_pathological_patterns_run_in_linear_time() -> None:
    # each took minutes on Python's backtracking `re` (issue 19); the timeout
    # is generous: the subprocess fails only if matching backtracks
    done = subprocess.run([sys.executable, "-c", PATHOLOGICAL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[0, 0, 0, 0, 0]"


@pytest.mark.parametrize(
    ("body", "code", "at"),
    [
        ('match("[a-z", P)', "invalid_regex", '"[a-z"'),
        ('match("(", P)', "invalid_regex", '"("'),
        ("contains(1, P)", "type_mismatch", "1"),
        ('N = strlen(1), contains("a", P)', "type_mismatch", "1"),
        ("N = strlen(P) + 1, S = substr(P, P, 1)", "type_mismatch", "P, 1)"),
        ("S = to_string(P)", "type_mismatch", "P)"),
        ("S = cat(P, 1)", "type_mismatch", "1"),
        ('contains("a", Q)', "unbound_variable", "Q"),
        ("contains(_, P)", "safety_violations", "_"),
    ],
)
def test_misuse_is_a_lint_time_diagnostic_with_a_span(body: str, code: str, at: str) -> None:
    prefix = "hit(P) :- path(P), "
    with pytest.raises(OrdinanceError) as info:
        compile_text(f".decl path(p: symbol)\n{prefix}{body}.", "t.rules")
    first = info.value.diagnostics[0]
    column = len(prefix) + body.index(at) + 1
    assert (first.code, first.span.line, first.span.column) == (code, 2, column), info.value


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("p(X) :- q(X), X = foo(X).", "unknown_functor"),
        ('p(X) :- q(X), X = substr("a", 1).', "arity_mismatch"),
        ('p(X) :- q(X), glob("a").', "arity_mismatch"),
        ('contains("a", "b").', "syntax"),
        ('p(X) :- q(X).\nmatch("a", X) :- q(X).', "syntax"),
    ],
)
def test_unknown_functors_wrong_arity_and_constraints_as_heads_do_not_parse(text: str, code: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        parse(text)
    assert info.value.code == code
    assert info.value.diagnostics[0].span.line >= 1


def test_constraints_and_functors_print_back() -> None:
    text = 'p(cat(X, "a"), strlen(X)) :- q(X), !match("a.*", X), contains("b", X), X = substr(X, 0, to_number("1")).\n'
    program = parse(text)
    assert format_program(program) == text
    body = program.rules[0].body
    assert body[1] == ast.Predicate("match", (ast.Const("a.*"), ast.Var("X")), True)
    assert isinstance(body[3], ast.Comparison) and isinstance(body[3].right, ast.Call)


def test_why_and_why_not_show_constraints_and_functor_values() -> None:
    program = compile_text(
        '.decl path(p: symbol)\npath("src/a.py"). path("README.md").\n'
        'py(P, N) :- path(P), glob("**/*.py", P), N = strlen(P).\n'
        'doc(P) :- path(P), starts_with("docs/", P).'
    )
    model = evaluate(program)
    proof = to_text(why(model, "py", ("src/a.py", 8)))
    assert 'glob("**/*.py", "src/a.py")  holds' in proof
    assert "N = 8  holds" in proof
    answer = to_text(why_not(model, "doc", ("README.md",)))
    assert 'fails at starts_with("docs/", "README.md"): is false' in answer


@pytest.mark.parametrize(
    ("at", "weekday", "hour", "day"),
    [
        ("2026-08-14T23:00:00Z", 5, 23, "2026-08-14"),  # a Friday
        ("2026-08-16T00:59:59Z", 7, 0, "2026-08-16"),  # a Sunday
        ("1970-01-01T00:00:00Z", 4, 0, "1970-01-01"),  # a Thursday
        ("1969-12-31T23:00:00Z", 3, 23, "1969-12-31"),  # before the epoch
    ],
)
def test_weekday_hour_and_date_of_a_time(at: str, weekday: int, hour: int, day: str) -> None:
    text = (
        f".decl t(at: time)\nt({at}).\n"
        "w(D, H, S) :- t(T), D = weekday(T), H = hour(T), S = date(T).\n"
        "now_too(D) :- D = weekday($now).\n"
        "soon(T) :- t(T), T + 24h > $now, $now - T < 7d.\n"
    )
    out = run(text)
    assert out["w"] == {(weekday, hour, day)}
    program = compile_text(text)
    model = evaluate(program, now=parse_instant(at))
    assert set(model.tuples("now_too")) == {(weekday,)}
    assert set(model.tuples("soon")) == {(parse_instant(at),)}
    assert format_program(parse(text)) == format_program(parse(format_program(parse(text))))


def test_a_time_functor_of_forever_is_an_evaluation_error() -> None:
    with pytest.raises(EvaluationError) as info:
        evaluate(compile_text(".decl t(at: time)\nt(forever).\nw(D) :- t(T), D = weekday(T)."))
    assert info.value.code == "time_range"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("$now < 24h", "comparison `<` of a time with a duration"),
        ("X = T + $now, X > 0", "`+` of two times"),
        ("X = T * 2, X > 0", "`*` on a time"),
        ("X = 1h - T, X > 0", "a duration minus a time"),
    ],
)
def test_time_and_duration_arithmetic_is_type_checked(body: str, message: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(f".decl t(at: time)\nt(2026-08-14T23:00:00Z).\nbad(T) :- t(T), {body}.")
    assert info.value.code == "type_mismatch"
    assert message in str(info.value)
    with pytest.raises(OrdinanceError) as info:
        compile_text(".decl t(at: time)\n.decl d(x: duration)\nt(2026-08-14T23:00:00Z).\nd(T) :- t(T).")
    assert "argument 1 of `d` is declared `duration`, got a time" in str(info.value)


SYMBOLS = '.decl s(x: symbol)\ns("a"). s("b").\n.decl r(x: symbol)\n'


def test_plus_on_symbols_concatenates_as_in_souffle() -> None:
    text = (
        SYMBOLS
        + 'r(X + "/" + Y) :- s(X), s(Y), X != Y.\nr(Z) :- s(X), Z = X + X, Z != "aa".\nr(X) :- s(X), X + "x" = "ax".\n'
    )
    found = run(text)
    assert found["r"] == {("a/b",), ("b/a",), ("bb",), ("a",)}
    model = evaluate(compile_text(text))
    assert 'r(X + "/" + Y) :- s(X), s(Y), X != Y.' in to_text(why(model, "r", ("a/b",)))
    assert format_program(parse(text)) == format_program(parse(format_program(parse(text))))
    assert 'r(X + "/" + Y) :- s(X), s(Y), X != Y.' in format_program(parse(text))


@pytest.mark.parametrize(
    "rule",
    ["r(X + 1) :- s(X).", "r(Y) :- s(X), Y = 1 + X.", "r(X - X) :- s(X).", 'q(N) :- s(X), N = X + "a".'],
)
def test_plus_of_a_symbol_and_a_number_is_a_type_error(rule: str) -> None:
    with pytest.raises(OrdinanceError) as info:
        compile_text(SYMBOLS + ".decl q(n: number)\n" + rule)
    assert info.value.code == "type_mismatch"


def test_plus_on_symbols_keeps_the_symbol_limit() -> None:
    from ordinance.diagnostics import LimitExceeded

    with pytest.raises(LimitExceeded) as info:
        evaluate(compile_text(SYMBOLS + "r(X) :- s(X).\nr(X + X) :- r(X).\n"))
    assert "a symbol longer than" in str(info.value)


def test_plus_on_symbols_on_the_sql_backend() -> None:
    from ordinance.engine.sql import evaluate_sql

    program = compile_text(SYMBOLS + "r(X + Y) :- s(X), s(Y).\n")
    with evaluate_sql(program, engine="duckdb") as sql:
        assert set(sql.tuples("r")) == {("aa",), ("ab",), ("ba",), ("bb",)}
