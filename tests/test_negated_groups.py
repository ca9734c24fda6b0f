"""Negated groups `!( ... )` (issue 24): a conjunction, with `;` and nested
groups, that must have no match. The loader rewrites each into the negation
of a relation of its own (rules/expand.py); the answers are checked against
the group's meaning evaluated directly in Python, not through the rewrite."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, why, why_not
from ordinance.explain import to_text
from ordinance.rules import compile_text, format_program, parse
from test_lint import codes_of, lint_bytes

DECLS = ".decl a(x: number)\n.decl b(x: number, y: number)\n.decl c(x: number)\n.decl r(x: number)\n"
DOMAIN = range(0, 4)

Db = dict[str, set[Any]]
# a part of a group and its meaning for X = x, Y = y
PARTS: list[tuple[str, Callable[[Db, int, int], bool]]] = [
    ("b(X, Y)", lambda d, x, y: (x, y) in d["b"]),
    ("b(Y, X)", lambda d, x, y: (y, x) in d["b"]),
    ("c(Y)", lambda d, x, y: y in d["c"]),
    ("c(X), c(Y)", lambda d, x, y: x in d["c"] and y in d["c"]),
    ("Y > X", lambda d, x, y: y > x),
    ("!c(Y)", lambda d, x, y: y not in d["c"]),
    ("(c(Y) ; b(X, X))", lambda d, x, y: y in d["c"] or (x, x) in d["b"]),
    ("!(b(Y, Z{k}), c(Z{k}))", lambda d, x, y: not any((y, z) in d["b"] and z in d["c"] for z in DOMAIN)),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(range(len(PARTS))), min_size=1, max_size=3),
    st.sets(st.sampled_from(DOMAIN)),
    st.sets(st.tuples(st.sampled_from(DOMAIN), st.sampled_from(DOMAIN)), max_size=8),
    st.sets(st.sampled_from(DOMAIN)),
)
def test_a_negated_group_holds_where_its_conjunction_has_no_match(
    parts: list[int], a: set[int], b: set[tuple[int, int]], c: set[int]
) -> None:
    # Y ranges over the domain inside the group: c(Y) or b binds it in every part's use
    # (each nested group's own variable is named apart: one shared by two negated groups is unsafe)
    group = ", ".join(["d(Y)", *(PARTS[i][0].format(k=k) for k, i in enumerate(parts))])
    text = DECLS + ".decl d(x: number)\n" + f"r(X) :- a(X), !({group}).\n"
    db: Db = {"a": {(x,) for x in a}, "b": b, "c": {(x,) for x in c}, "d": {(y,) for y in DOMAIN}}
    plain = {"b": b, "c": c}
    expected = {(x,) for x in a if not any(all(PARTS[i][1](plain, x, y) for i in parts) for y in DOMAIN)}
    assert set(evaluate(compile_text(text), db).tuples("r")) == expected, text


@pytest.mark.parametrize(
    ("rule", "answer"),
    [
        ("r(X) :- a(X), !(b(X, Y), c(Y)).", {(1,), (3,)}),
        ("r(X) :- a(X), !(c(Y), X < Y).", set()),  # X is bound for the group by `a(X)`
        ("r(X) :- a(X), !(b(X, _) ; c(X)).", {(1,)}),
        ("r(X) :- a(X), !(X < 2).", {(2,), (3,), (4,)}),  # one comparison: its opposite
        ("r(X) :- a(X), !(b(X, Y), !(c(Y), Y > 2)).", {(1,), (4,)}),
        ("r(X) :- a(X), not (b(X, Y), c(Y)).", {(1,), (3,)}),
        ("r(X) :- a(X), !(b(X, Y), c(Y)), !(b(Z, X), c(Z)).", {(1,), (3,)}),
    ],
)
def test_negated_groups_answer_and_print_back(rule: str, answer: set) -> None:
    facts = "a(1). a(2). a(3). a(4).\nb(2, 2). b(3, 5). b(4, 9).\nc(2). c(9).\n"
    text = DECLS + facts + rule + "\n"
    assert set(evaluate(compile_text(text)).tuples("r")) == answer
    printed = format_program(parse(text))
    assert parse(printed) == parse(text)


def test_a_negated_group_prints_as_written() -> None:
    for rule in ("r(X) :- a(X), !(b(X, Y), c(Y)).", "r(X) :- a(X), !(b(X, _) ; c(X))."):
        assert format_program(parse(rule)) == rule + "\n"


def test_a_negated_group_is_explained() -> None:
    text = DECLS + "a(1). a(2).\nb(2, 2).\nc(2).\nr(X) :- a(X), !(b(X, Y), c(Y)).\n"
    model = evaluate(compile_text(text))
    proof = to_text(why(model, "r", (1,)))
    assert "a(1)  fact" in proof and "!not#" in proof
    missing = to_text(why_not(model, "r", (2,)))
    assert "r(2) does not hold" in missing and "not#" in missing


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("r(N) :- N = count : { a(X), !(b(X, Y), c(Y)) }.", "unsupported"),
        ('.invariant "x" :- a(X), !(b(X, Y), c(Y)).', "unsupported"),
        ("r(X) :- a(X), !(b(X, Y), r(Y)).", "cyclic_negation"),
        ("r(X) :- a(X), !(b(X, Y), c(Y, Y)).", "arity_mismatch"),
        ("r(X) :- a(X), !(b(X, Y), ).", "syntax"),
    ],
)
def test_what_lint_refuses_in_a_negated_group(tmp_path: Path, text: str, code: str) -> None:
    result = lint_bytes(tmp_path, (DECLS + text + "\n").encode(), "bad.rules")
    assert result.exit_code == 1 and codes_of(result)[:1] == [code], result.stdout
    with pytest.raises(OrdinanceError):
        compile_text(DECLS + text)
