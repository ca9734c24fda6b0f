"""The static passes: arity, safety, types, relations, stratification,
includes, and the CheckedProgram they produce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ordinance.diagnostics import CheckError, Diagnostic, ParseError, SafetyViolationError
from ordinance.rules import check, compile_text, load, parse
from ordinance.rules import ast
from ordinance.rules.checks.walk import uses

from corpus_rules import core_cases


def findings(text: str, **kwargs: Any) -> list[tuple[str, int, int, str]]:
    with pytest.raises(CheckError) as info:
        compile_text(text, "t.rules", **kwargs)
    return [(d.code, d.span.line, d.span.column, d.message) for d in info.value.diagnostics]


def diagnostics(text: str, **kwargs: Any) -> tuple[Diagnostic, ...]:
    with pytest.raises(CheckError) as info:
        compile_text(text, "t.rules", **kwargs)
    return info.value.diagnostics


def codes(text: str, **kwargs: Any) -> list[str]:
    return [code for code, *_ in findings(text, **kwargs)]


def corpus_program(rules: tuple[str, ...], facts: dict[str, Any]) -> ast.Program:
    """Each rule string parsed alone (some omit their final period), then the facts."""
    items: list[ast.Item] = [item for text in rules for item in parse(text).items]
    for relation, rows in facts.items():
        for row in rows:
            args = tuple(ast.Const(v) if isinstance(v, str) else ast.Const(v, "number") for v in row)
            items.append(ast.Rule(ast.Atom(relation, args)))
    return ast.Program(tuple(items))


def test_core_corpus_error_cases_report_the_expected_error() -> None:
    cases = [c for c in core_cases() if c[3]]
    assert len(cases) >= 6
    for name, rules, facts, expected in cases:
        with pytest.raises(CheckError) as info:
            check(corpus_program(rules, facts))
        if expected == "SafetyViolationError":
            assert type(info.value).__name__ == expected, name
        else:
            assert info.value.code == expected, name


def test_core_corpus_valid_programs_pass_with_their_data() -> None:
    """Facts are data; relations neither defined nor given are empty data."""
    checked = 0
    for name, rules, facts, expected in core_cases():
        if expected or not rules:
            continue
        program = corpus_program(rules, {})
        extensional = {r: len(rows[0]) for r, rows in facts.items() if rows}
        for use in uses(program.items):
            extensional.setdefault(use.relation, use.arity)
        for rule in program.rules:
            extensional.pop(rule.head.relation, None)
        checked_program = check(program, extensional=extensional, existential_negation=True)
        assert checked_program.strata, name
        checked += 1
    assert checked > 50


# ---------------------------------------------------------------- arity


def test_arity_against_decl_data_and_first_use() -> None:
    assert findings(".decl e(a: number, b: number)\ne(1, 2, 3).") == [
        ("arity_mismatch", 2, 1, "relation `e` used with 3 arguments, declared with 2")
    ]
    assert findings("p(1).\np(1, 2).") == [
        ("arity_mismatch", 2, 1, "relation `p` used with 2 arguments, but with 1 where first used")
    ]
    [d] = diagnostics("p(1).\np(1, 2).")
    assert [(r.message, r.span.line, r.span.column) for r in d.related] == [("first used here", 1, 1)]
    assert findings("p(X) :- q(X, X).", extensional={"q": 1}) == [
        ("arity_mismatch", 1, 9, "relation `q` used with 2 arguments, its data has 1")
    ]


def test_arity_counts_every_kind_of_mention() -> None:
    text = """.decl e(a: number)
p(X) :- e(X), !e(X, X), N = count : { e(X, X, X) }, N > 0.
.invariant "i" :- e(1, 2).
test "t" { e(1, 2). expect e(). }
.hint e(1, 2)
"""
    assert [(c, line) for c, line, _, _ in findings(text)] == [("arity_mismatch", n) for n in (2, 2, 3, 4, 4, 5)]


def test_duplicate_decl() -> None:
    assert findings(".decl e(a: number)\n.decl e(a: number)") == [
        ("duplicate_decl", 2, 1, "relation `e` is declared twice")
    ]
    [d] = diagnostics(".decl e(a: number)\n.decl e(a: number)")
    assert [(r.message, r.span.line) for r in d.related] == [("first declared here", 1)]
    assert d.line() == "relation `e` is declared twice; first declared here at t.rules:1:1"


# ---------------------------------------------------------------- safety


def test_safety_failures_raise_safety_violation_error_with_first_code() -> None:
    with pytest.raises(SafetyViolationError) as info:
        compile_text("p(X) :- q(Y).\nq(1).")
    assert info.value.code == "unbound_variable"
    assert [d.message for d in info.value.diagnostics] == [
        "variable `X` in the head is not bound by a positive body literal"
    ]


def test_arithmetic_arguments_do_not_bind() -> None:
    text = "Fib(0, 0).\nFib(n, x + y) :- Fib(n - 1, x), Fib(n - 2, y), (n <= 25)"
    assert findings(text) == [
        ("unbound_variable", 2, 5, "variable `n` in the head is not bound by a positive body literal")
    ]


def test_equalities_bind_in_any_order_and_either_direction() -> None:
    compile_text("q(1).\np(Y) :- q(X), Y = Z + 1, X * 2 = Z.")
    assert findings("q(1).\np(X) :- q(X), X < Y.") == [
        ("unbound_variable", 2, 19, "variable `Y` in a comparison is not bound by a positive body literal")
    ]


def test_wildcards_only_where_any_value_will_do() -> None:
    assert codes("Ok(_) :- Ok(_)") == ["safety_violations"]
    assert codes("q(1).\np(X) :- q(X), q(_ + 1).") == ["safety_violations"]
    assert codes("q(1).\np(X) :- q(X), X < _.") == ["safety_violations"]
    compile_text("q(1, 2).\np(X) :- q(X, _), !q(_, X).")


def test_variables_only_under_negation() -> None:
    unsafe = "person(1).\nbanned(1, 2).\nok(X) :- person(X), not banned(X, Y)."
    with pytest.raises(SafetyViolationError) as info:
        compile_text(unsafe)
    assert info.value.code == "safety_violations"
    compile_text(unsafe, existential_negation=True)
    twice = "person(1).\nbanned(1, 2).\nok(X) :- person(X), !banned(X, Y), !banned(Y, X)."
    assert codes(twice, existential_negation=True) == ["safety_violations"]
    compared = "person(1).\nbanned(1, 2).\nok(X) :- person(X), !banned(X, Y), Y > 3."
    assert codes(compared, existential_negation=True) == ["unbound_variable"]


def test_aggregate_scoping() -> None:
    base = ".decl l(w: symbol, x: number)\n"
    compile_text(base + "n(N) :- N = count : { l(_, X) }.")
    compile_text(base + 'w("a").\nlatest(W, E) :- w(W), E = max X : { l(W, X) }.')
    compile_text(base + "s(W, T) :- l(W, _), T = sum X : l(W, X).")
    assert findings(base + "bad(W, N) :- N = count : { l(W, _) }.") == [
        ("unbound_variable", 2, 5, "variable `W` in the head is not bound by a positive body literal")
    ]
    assert findings(base + "bad(N) :- l(W, _), N = max X : { l(W, _) }.") == [
        (
            "unbound_variable",
            2,
            28,
            "variable `X` in the aggregate target is not bound by a positive body literal",
        )
    ]
    # an aggregate as an argument is lifted into `A = count ...` (rules/lift.py); its variables keep their scope
    assert codes(base + "bad(W, count : { l(W, _) }).") == ["unbound_variable"]


def test_facts_tests_and_invariants_must_be_ground_or_bound() -> None:
    assert findings("p(X).") == [("unbound_variable", 1, 3, "variable `X` in a fact; facts must be ground")]
    text = 'p(1).\ntest "t" { p(X). p(_). expect p(_). expect p(Y). }\n.invariant "i" :- p(X), X > Z.'
    assert [(c, line) for c, line, _, _ in findings(text)] == [
        ("unbound_variable", 2),
        ("safety_violations", 2),
        ("unbound_variable", 2),
        ("unbound_variable", 3),
    ]


# ---------------------------------------------------------------- types


def test_constants_respect_declared_types() -> None:
    text = (
        '.decl e(a: symbol, b: number, t: time, d: duration)\ne("x", 1, 2026-08-14T23:00:00Z, 15m).\ne(1, "y", 5, 7).'
    )
    assert findings(text) == [
        ("type_mismatch", 3, 3, "argument 1 of `e` is declared `symbol`, got `1`"),
        ("type_mismatch", 3, 6, 'argument 2 of `e` is declared `number`, got `"y"`'),
    ]


def test_variables_keep_one_kind_per_rule() -> None:
    decls = ".decl s(x: symbol)\n.decl n(x: number)\n"
    assert findings(decls + "p(X) :- s(X), n(X).") == [
        ("type_mismatch", 3, 17, "variable `X` is used as a number here but as a symbol where first used")
    ]
    [d] = diagnostics(decls + "p(X) :- s(X), n(X).")
    assert [(r.message, r.span.line, r.span.column) for r in d.related] == [("first used here", 3, 11)]
    assert codes(decls + "p(X) :- s(X), X < 3.") == ["type_mismatch"]
    assert codes(decls + "p(Y) :- s(X), Y = X + 1.") == ["type_mismatch"]
    assert codes(decls + 'p(Y) :- n(X), Y = X * "a".') == ["type_mismatch"]
    compile_text(decls + 'p(X, Y) :- s(X), n(Y), X != "a", Y >= $now - 1h.')


def test_hints_and_test_facts_are_typed() -> None:
    text = '.decl e(a: symbol)\n.hint e("a" | 2)\ntest "t" { e(3). }'
    assert [(c, line) for c, line, _, _ in findings(text)] == [("type_mismatch", 2), ("type_mismatch", 3)]


# ---------------------------------------------------------------- relations


def test_unknown_relations_everywhere_they_can_be_mentioned() -> None:
    text = """.decl lease(w: symbol)
p(X) :- leese(X), !gone(X), N = count : { missing(X) }, N > 0, lease(X).
.invariant "i" :- nowhere(1).
test "t" { absent(1). expect vanished(1). }
.hint ghost(1)
"""
    found = findings(text)
    assert [(c, line, col) for c, line, col, _ in found] == [
        ("unknown_relation", 2, 9),
        ("unknown_relation", 2, 20),
        ("unknown_relation", 2, 43),
        ("unknown_relation", 3, 19),
        ("unknown_relation", 4, 12),
        ("unknown_relation", 4, 30),
        ("unknown_relation", 5, 1),
    ]
    assert found[0][3] == "unknown relation `leese`"
    first = diagnostics(text)[0]
    assert first.help == "did you mean `lease`"  # a field, not glued into the message
    assert diagnostics(text)[1].help is None


def test_relations_are_known_by_decl_rule_fact_or_data() -> None:
    program = compile_text(".decl a(x: number)\nb(1).\nc(X) :- d(X).\np(X) :- a(X), b(X), c(X).", extensional={"d": 1})
    assert {name: r.arity for name, r in program.relations.items()} == {"a": 1, "b": 1, "c": 1, "d": 1, "p": 1}
    assert program.relations["p"].derived and not program.relations["d"].derived


# ---------------------------------------------------------------- stratification


def test_strata_follow_dependencies() -> None:
    program = compile_text(
        """e(1, 2).
reach(X, Y) :- e(X, Y).
reach(X, Z) :- reach(X, Y), e(Y, Z).
odd(X) :- even(Y), e(Y, X).
even(X) :- odd(Y), e(Y, X).
even(1).
unreached(X) :- e(X, _), !reach(1, X), !odd(X).
size(N) :- N = count : { unreached(_) }.
"""
    )
    strata = program.strata
    assert ("odd", "even") in strata or ("even", "odd") in strata
    index = {name: i for i, stratum in enumerate(strata) for name in stratum}
    assert index["reach"] < index["unreached"] and index["odd"] < index["unreached"]
    assert index["unreached"] < index["size"]
    assert "e" not in index
    assert program.relations["reach"].derived and not program.relations["e"].derived


def test_cyclic_negation_names_the_cycle_and_its_rules() -> None:
    assert findings("b(1).\na(X) :- b(X), !c(X).\nc(X) :- a(X).") == [
        (
            "cyclic_negation",
            2,
            15,
            "negation of `c` is on a recursive cycle `a` -> `c` -> `a` (rules at lines 2, 3)",
        )
    ]
    assert findings("Ok() :- not Ok()") == [
        ("cyclic_negation", 1, 9, "negation of `Ok` is on a recursive cycle `Ok` -> `Ok` (rule at line 1)")
    ]
    assert codes("q(1).\np(N) :- q(X), N = count : { p(X) }.") == ["cyclic_negation"]


# ---------------------------------------------------------------- includes


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_relative_includes_are_flattened_once(tmp_path: Path) -> None:
    write(tmp_path / "lib" / "edges.rules", '.include "base"\n.decl edge(a: number, b: number)\n')
    write(tmp_path / "lib" / "base.rules", ".decl node(a: number)\n")
    write(tmp_path / "lib" / "nodes.rules", '.include "base.rules"\nnode(1).\n')
    main = write(
        tmp_path / "main.rules",
        '.include "lib/edges"\n.include "lib/nodes.rules"\nreach(X) :- node(X), edge(X, _).\n',
    )
    program = load(main)
    assert [Path(f).name for f in program.files] == ["main.rules", "edges.rules", "base.rules", "nodes.rules"]
    assert [r.head.relation for r in program.rules] == ["node", "reach"]
    assert program.relations["edge"].types == ("number", "number")


def test_include_problems(tmp_path: Path) -> None:
    write(tmp_path / "a.rules", '.include "b"\np(1).\n')
    write(tmp_path / "b.rules", '.include "a"\n')
    with pytest.raises(CheckError) as info:
        load(tmp_path / "a.rules")
    (d,) = info.value.diagnostics
    assert d.code == "include_cycle" and d.span.file == str(tmp_path / "b.rules")
    assert (
        d.message == f"include cycle `{tmp_path / 'a.rules'}` -> `{tmp_path / 'b.rules'}` -> `{tmp_path / 'a.rules'}`"
    )

    write(tmp_path / "c.rules", '.include "nowhere"\n')
    with pytest.raises(CheckError) as info:
        load(tmp_path / "c.rules")
    assert info.value.code == "include_not_found"

    write(tmp_path / "d.rules", '.include "broken"\n')
    write(tmp_path / "broken.rules", "p(.\n")
    with pytest.raises(ParseError) as parse_info:
        load(tmp_path / "d.rules")
    assert parse_info.value.diagnostics[0].span.file == str(tmp_path / "broken.rules")


def test_stdlib_modules_come_before_local_files(tmp_path: Path) -> None:
    write(tmp_path / "continuity.rules", "this is not a policy\n")
    program = check(parse('.include "continuity"\n', str(tmp_path / "main.rules")))
    assert "<stdlib>/continuity.rules" in program.files
    assert "permit" in program.relations


def test_base_dir_resolves_includes_of_unnamed_text(tmp_path: Path) -> None:
    write(tmp_path / "defs.rules", ".decl e(a: number)\n")
    program = compile_text('.include "defs"\np(X) :- e(X).', base_dir=tmp_path)
    assert program.relations["e"].arity == 1


# ---------------------------------------------------------------- the checked program


def test_checked_program_contents_and_hash() -> None:
    text = (
        '.decl e(a: number)\ne(1).\np(X) :- e(X), X > 0.\ntest "t" { e(2). expect p(2). }\n'
        '.invariant "i" :- p(X), !e(X).\n.hint e(1 | 2)'
    )
    program = compile_text(text)
    assert [r.is_fact for r in program.rules] == [True, False]
    assert program.relations["p"].arity == 1 and program.relations["p"].decl is None
    assert program.relations["e"].types == ("number",)
    assert len(program.tests) == len(program.invariants) == len(program.hints) == 1
    assert program.rules_for("p") == (1,)
    reformatted = "/* same policy */ .decl e(a:number) e( 1 ). p(X):-e(X),X>0.\n" + text.split("\n", 3)[3]
    assert compile_text(reformatted).source_hash == program.source_hash
    assert compile_text(text.replace("X > 0", "X > 1")).source_hash != program.source_hash
    assert len(program.source_hash) == 64


def test_the_policy_hash_covers_what_decides_not_tests_or_invariants() -> None:
    text = ".decl e(a: number)\ne(1).\np(X) :- e(X), X > 0.\n"
    base = compile_text(text).source_hash
    more = text + 'test "new" { e(2). expect p(2). }\n.invariant "i" :- p(X), !e(X).\n.hint e(1 | 2)\n'
    assert compile_text(more).source_hash == base
    assert compile_text(text + ".decl f(a: symbol)\n").source_hash != base
    assert compile_text(text + "e(3).\n").source_hash != base


def test_the_policy_hash_covers_included_rules_but_not_their_tests(tmp_path: Path) -> None:
    (tmp_path / "top.rules").write_text('.include "lib.rules"\n.decl e(a: number)\np(X) :- e(X), q(X).\n')
    lib = tmp_path / "lib.rules"
    lib.write_text(".decl q(a: number)\nq(1).\n")
    base = load(tmp_path / "top.rules").source_hash
    lib.write_text(lib.read_text() + 'test "t" { q(5). expect q(5). }\n.invariant "i" :- q(X), X > 9.\n')
    assert load(tmp_path / "top.rules").source_hash == base
    lib.write_text(lib.read_text() + "q(2).\n")
    assert load(tmp_path / "top.rules").source_hash != base
