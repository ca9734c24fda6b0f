"""Aggregates Soufflé has and ordinance refused (issue 24): `mean`. Each is
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
    assert "fails at 1.5 > 2: is false" in to_text(why_not(model, "big", ("a",)))
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
