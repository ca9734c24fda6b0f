"""Relation qualifiers: `choice-domain` and subsumption (`r(X) <= r(Y) :- body.`).

Parsed with spans, checked, printed back, evaluated per round, explained,
and maintained (extend, overlay, retract, the clock) as a full evaluation
would compute them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from naive import naive_evaluate
from ordinance.diagnostics import OrdinanceError
from ordinance.engine import evaluate, extend, overlay, retract, why, why_not
from ordinance.engine.clock import advance
from ordinance.explain import to_text
from ordinance.rules import ast, compile_text, format_program, parse

EDGES = [(1, 3), (1, 2), (2, 5), (2, 4), (3, 1), (4, 6), (5, 6), (6, 1)]

CHOICE = """
.decl edge(a: number, b: number)
.decl pick(a: number, b: number) choice-domain a
pick(A, B) :- edge(A, B).
"""

SHORTEST = """
.decl edge(a: number, b: number)
.decl dist(n: number, d: number)
dist(1, 0).
dist(B, D + 1) :- dist(A, D), edge(A, B).
dist(N, D) <= dist(N, E) :- E < D.
"""

# the same answer with an aggregate, over a bounded walk
BY_MIN = """
.decl edge(a: number, b: number)
.decl walk(n: number, d: number)
.decl best(n: number, d: number)
walk(1, 0).
walk(B, D + 1) :- walk(A, D), edge(A, B), D < 12.
best(N, D) :- walk(N, _), D = min E : { walk(N, E) }.
"""


def tuples(text: str, name: str, facts: dict[str, Any] | None = None) -> set[tuple[Any, ...]]:
    return set(evaluate(compile_text(text), facts).tuples(name))


def codes(text: str) -> list[str]:
    with pytest.raises(OrdinanceError) as info:
        compile_text(text)
    return [d.code for d in info.value.diagnostics]


# ---------------------------------------------------------------- syntax


def test_qualifiers_parse_with_spans_and_print_back() -> None:
    text = (
        ".decl r(x: number, y: number, z: number) btree choice-domain x, (y, z)\n"
        "r(X, Y, Z) <= r(X, Y, W) :- W < Z ; W = Z - 1.\n"
    )
    program = parse(text)
    decl, sub = program.items
    assert isinstance(decl, ast.Decl) and decl.qualifiers == ("btree",)
    assert [k.attributes for k in decl.choice] == [("x",), ("y", "z")]
    assert [(k.span.column, k.span.end_column) for k in decl.choice] == [(62, 63), (65, 71)]
    assert (decl.span.line, decl.span.column, decl.span.end_column) == (1, 1, 71)
    assert isinstance(sub, ast.Subsumption)
    assert (sub.span.line, sub.span.column) == (2, 1)
    assert (sub.dominating.span.column, sub.dominating.relation) == (15, "r")
    printed = format_program(program)
    assert printed.splitlines()[0] == ".decl r(x: number, y: number, z: number) btree choice-domain x, (y, z)"
    assert printed.splitlines()[1] == "r(X, Y, Z) <= r(X, Y, W) :- (W < Z ; W = Z - 1)."
    assert format_program(parse(printed)) == printed


def test_a_subsumption_clause_with_a_disjunction_is_one_clause_per_branch() -> None:
    program = compile_text(".decl r(x: number)\nr(1). r(2). r(3).\nr(X) <= r(Y) :- X < Y, Y < 3 ; X = 3, Y = 1.\n")
    assert len(program.subsumptions) == 2
    # 2 dominates 1 and 1 dominates 3: both go, at once
    assert set(evaluate(program).tuples("r")) == {(2,)}


# ---------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (".decl p(a: number, b: number) choice-domain c", "choice_domain"),
        (".decl p(a: number, b: number) choice-domain (a, b)", "choice_domain"),
        (".decl p(a: number, b: number) choice-domain (a, a)", "choice_domain"),
        (".decl p(a: number, b: number) eqrel choice-domain a", "choice_domain"),
        (".decl p(a: number)\n.decl q(a: number)\np(X) <= q(Y) :- X < Y.", "subsumption"),
        (".decl p(a: number, b: number) eqrel\np(X, Y) <= p(X, Z) :- Z < Y.", "subsumption"),
        (".decl p(a: number)\np(X) <= p(Y) :- $now > X, X < Y.", "subsumption"),
        (".decl p(a: number)\np(X) <= p(Y) :- Z < Y.", "unbound_variable"),
        (".decl p(a: number)\n.decl s(a: symbol)\np(X) <= p(Y) :- s(X), Y < 3.", "type_mismatch"),
        (".decl p(a: number)\np(X) <= p(Y, Z) :- X < Y.", "arity_mismatch"),
        (".decl p(a: number)\np(X) <= p(Y) :- q(X), X < Y.", "unknown_relation"),
    ],
)
def test_a_bad_qualifier_is_an_error_with_its_code(text: str, code: str) -> None:
    assert code in codes(text)


def test_a_subsumption_body_is_complete_before_its_relation_is_pruned() -> None:
    # `better` is derived from `p`: pruning `p` with it would read it half done
    assert "cyclic_negation" in codes(
        ".decl p(a: number)\n.decl better(a: number, b: number)\n"
        "better(X, Y) :- p(X), p(Y), X < Y.\np(X) <= p(Y) :- better(X, Y).\np(1)."
    )
    # a body over lower relations is fine
    text = (
        ".decl p(a: number)\n.decl rank(a: number, r: number)\n.decl src(a: number)\n"
        "rank(1, 5). rank(2, 9). src(1). src(2).\np(X) :- src(X).\n"
        "p(X) <= p(Y) :- rank(X, A), rank(Y, B), A < B.\n"
    )
    assert tuples(text, "p") == {(2,)}


def test_a_subsumption_body_may_read_its_own_relation() -> None:
    # issue 24: `cyclic_negation` before; the body reads `p` as each round's pruning leaves it:
    # an edge is dropped when a shorter first step reaches its end (a transitive reduction)
    text = (
        ".decl e(x: number, y: number)\ne(1, 2). e(2, 3). e(1, 3). e(3, 4). e(1, 4).\n"
        ".decl p(x: number, y: number)\np(X, Y) :- e(X, Y).\np(X, Y) <= p(X, Z) :- p(Z, Y).\n"
    )
    model = evaluate(compile_text(text))
    assert set(model.tuples("p")) == {(1, 2), (2, 3), (3, 4)}
    assert not why_not(model, "p", (1, 3)).holds
    printed = format_program(parse(text))
    assert "p(X, Y) <= p(X, Z) :- p(Z, Y)." in printed and parse(printed) == parse(text)
    # a relation of its stratum other than itself is still refused
    assert "cyclic_negation" in codes(
        text + ".decl q(x: number, y: number)\nq(X, Y) :- p(X, Y).\np(X, Y) :- q(X, Y).\n"
        "p(X, Y) <= p(X, Z) :- q(Z, Y).\n"
    )


# ---------------------------------------------------------------- choice-domain


def test_choice_keeps_the_smallest_tuple_per_key_whatever_the_order_of_the_facts() -> None:
    program = compile_text(CHOICE)
    for seed in range(5):
        edges = list(EDGES)
        random.Random(seed).shuffle(edges)
        model = evaluate(program, {"edge": edges})
        assert set(model.tuples("pick")) == {(1, 2), (2, 4), (3, 1), (4, 6), (5, 6), (6, 1)}


def test_an_earlier_round_wins_a_key_over_a_smaller_later_tuple() -> None:
    text = """
.decl edge(a: number, b: number)
.decl reach(n: number, via: number) choice-domain n
reach(1, 100).
reach(B, A) :- reach(A, _), edge(A, B).
"""
    # 6 is reached in round 3 through 4 and 5; 1 is a given fact, never replaced by reach(1, 6)
    got = tuples(text, "reach", {"edge": EDGES})
    assert got == {(1, 100), (2, 1), (3, 1), (4, 2), (5, 2), (6, 4)}


def test_several_keys_are_each_a_functional_dependency() -> None:
    text = """
.decl cand(a: symbol, b: symbol)
.decl pair(a: symbol, b: symbol) choice-domain a, b
pair(A, B) :- cand(A, B).
"""
    facts = {"cand": [("x", "p"), ("x", "q"), ("y", "p"), ("y", "q"), ("z", "r")]}
    assert tuples(text, "pair", facts) == {("x", "p"), ("y", "q"), ("z", "r")}
    composite = ".decl t(a: number, b: number, c: number) choice-domain (a, b)\nt(1, 1, 9). t(1, 1, 3). t(1, 2, 5).\n"
    assert tuples(composite, "t") == {(1, 1, 3), (1, 2, 5)}


def test_given_facts_of_a_choice_relation_are_chosen_too() -> None:
    text = ".decl owner(file: symbol, who: symbol) choice-domain file\n"
    facts = {"owner": [("a", "zoe"), ("a", "bob"), ("b", "kim")]}
    assert tuples(text, "owner", facts) == {("a", "bob"), ("b", "kim")}


# ---------------------------------------------------------------- subsumption


def test_subsumption_keeps_the_shortest_distance_and_terminates_on_a_cycle() -> None:
    got = tuples(SHORTEST, "dist", {"edge": EDGES})
    assert got == tuples(BY_MIN, "best", {"edge": EDGES})
    assert got == {(1, 0), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3)}


def test_given_facts_are_pruned_and_equal_tuples_never_dominate_each_other() -> None:
    text = ".decl price(item: symbol, p: number)\nprice(I, P) <= price(I, Q) :- Q <= P.\n"
    facts = {"price": [("a", 5), ("a", 3), ("a", 4), ("b", 7)]}
    assert tuples(text, "price", facts) == {("a", 3), ("b", 7)}


# ---------------------------------------------------------------- explanations


def test_why_and_why_not_name_the_qualifier() -> None:
    program = compile_text(CHOICE)
    model = evaluate(program, {"edge": EDGES})
    assert why(model, "pick", (1, 2)) is not None
    answer = why_not(model, "pick", (1, 3))
    assert [(f.kind, f.needed) for f in answer.failures] == [("chosen", (("pick", (1, 2)),))]
    assert "its `choice-domain` key is taken by pick(1, 2)" in to_text(answer, program=program)

    program = compile_text(SHORTEST)
    model = evaluate(program, {"edge": EDGES})
    proof = why(model, "dist", (6, 3))
    assert proof is not None and proof.rule is not None and proof.children[0].tuple in {(4, 2), (5, 2)}
    answer = why_not(model, "dist", (1, 4))
    assert [(f.kind, f.needed) for f in answer.failures] == [("dominated", (("dist", (1, 0)),))]
    assert "dominated by dist(1, 0)" in to_text(answer, program=program)


# ---------------------------------------------------------------- maintenance


@pytest.mark.parametrize("text", [CHOICE, SHORTEST])
def test_extend_overlay_and_retract_equal_a_full_evaluation(text: str) -> None:
    program = compile_text(text)
    rng = random.Random(7)
    for _ in range(20):
        edges = {(rng.randint(1, 6), rng.randint(1, 6)) for _ in range(rng.randint(0, 8))}
        more = {(rng.randint(0, 6), rng.randint(0, 6)) for _ in range(rng.randint(1, 4))}
        model = evaluate(program, {"edge": edges})
        before = {r: set(model.tuples(r)) for r in ("pick", "dist")}
        scratch = overlay(model, {"edge": more})
        full = evaluate(program, {"edge": edges | more})
        for r in ("pick", "dist"):
            assert set(scratch.tuples(r)) == set(full.tuples(r))
            assert set(model.tuples(r)) == before[r]  # the overlay left its base alone
            for t in full.tuples(r):
                assert why(scratch, r, t) is not None
        extend(model, {"edge": more})
        for r in ("pick", "dist"):
            assert set(model.tuples(r)) == set(full.tuples(r))
        gone = set(rng.sample(sorted(edges | more), k=min(2, len(edges | more))))
        retract(model, {"edge": gone})
        again = evaluate(program, {"edge": (edges | more) - gone})
        for r in ("pick", "dist"):
            assert set(model.tuples(r)) == set(again.tuples(r))


def test_a_moved_clock_equals_a_full_evaluation() -> None:
    text = """
.decl offer(item: symbol, p: number, from: time)
.decl live(item: symbol, p: number) choice-domain item
.decl cheapest(item: symbol, p: number)
live(I, P) :- offer(I, P, From), From <= $now.
cheapest(I, P) :- offer(I, P, From), From <= $now.
cheapest(I, P) <= cheapest(I, Q) :- Q < P.
"""
    program = compile_text(text)
    facts = {"offer": [("a", 9, 100), ("a", 5, 200), ("a", 7, 300), ("b", 4, 250)]}
    model = evaluate(program, facts, now=150)
    assert set(model.tuples("live")) == {("a", 9)}
    for t in (210, 260, 400, 120):
        model = advance(model, t)
        full = evaluate(program, facts, now=t)
        for r in ("live", "cheapest"):
            assert set(model.tuples(r)) == set(full.tuples(r)), (t, r)
    assert set(model.tuples("cheapest")) == {("a", 9)}


# ---------------------------------------------------------------- counters

COUNTER = """
.decl q(x: symbol, y: number)
.decl id(n: number, x: symbol)
.decl pair(n: number, m: number, x: symbol)
id(autoinc(), X) :- q(X, _).
pair($, $, X) :- q(X, Y), Y > 1.
"""
QS = [("b", 1), ("a", 2), ("c", 3), ("a", 5)]


def test_autoinc_numbers_each_binding_in_value_order_whatever_the_order_of_the_facts() -> None:
    program = compile_text(COUNTER)
    assert format_program(parse("p($) :- q(1).")) == "p(autoinc()) :- q(1).\n"
    for seed in range(4):
        qs = list(QS)
        random.Random(seed).shuffle(qs)
        model = evaluate(program, {"q": qs})
        # one number per binding of the named variables: `q(X, _)` numbers X
        assert set(model.tuples("id")) == {(0, "a"), (1, "b"), (2, "c")}
        # the next rule continues the count; two counters in a head take two numbers
        assert set(model.tuples("pair")) == {(3, 4, "a"), (5, 6, "a"), (7, 8, "c")}


def test_a_number_is_explained_by_the_binding_it_was_given() -> None:
    program = compile_text(COUNTER)
    model = evaluate(program, {"q": QS})
    proof = why(model, "pair", (5, 6, "a"))
    assert proof is not None and dict(proof.bindings) == {"X": "a", "Y": 5}
    assert [c.tuple for c in proof.children if c.kind == "fact"] == [("a", 5)]
    assert why(model, "id", (1, "b")) is not None
    assert not why_not(model, "pair", (5, 7, "a")).holds
    assert why_not(model, "pair", (5, 7, "a")).failures == ()


@pytest.mark.parametrize(
    "text",
    [
        ".decl q(x: symbol)\n.decl id(n: number, x: symbol)\nid(autoinc() + 1, X) :- q(X).",
        ".decl q(x: symbol)\n.decl id(n: number, x: symbol)\nid(N, X) :- q(X), N = autoinc().",
        '.decl id(n: number, x: symbol)\nid(autoinc(), "a").',
        ".decl id(n: number)\nid(autoinc()) :- id(_).\nid(0).",
        ".decl id(n: number)\nid(X + 1) :- id(X), id(autoinc()), X < 3.\nid(0).",
        ".decl q(x: number)\n.decl id(n: number)\nid(X) :- q(X), q(autoinc() + 1).",
        '.decl q(x: symbol)\n.invariant "i" :- q(X), autoinc() > 3.',
    ],
)
def test_autoinc_stands_only_as_an_atom_argument_of_a_rule_that_is_not_recursive(text: str) -> None:
    assert codes(text) == ["autoinc"]


BODY_COUNTER = """
.decl k(x: number)
.decl r(x: number)
.decl s(x: number)
.decl t(x: number)
r(autoinc()) :- k(autoinc()).
s(X) :- k(X), !k(autoinc()).
t(autoinc()) :- k(X), !r(autoinc()).
"""


def test_autoinc_in_a_body_atom_is_a_number_not_given_yet_and_matches_nothing() -> None:
    # Soufflé accepts it outside a recursive rule and compares the count it
    # has reached there (an order of its evaluation); here it matches no tuple
    program = compile_text(BODY_COUNTER)
    model = evaluate(program, {"k": [(0,), (1,)]})
    assert set(model.tuples("r")) == set()
    assert set(model.tuples("s")) == {(0,), (1,)}
    assert set(model.tuples("t")) == {(0,), (1,)}
    assert not why_not(model, "r", (0,)).holds
    assert format_program(parse("r(autoinc()) :- k($).")) == "r(autoinc()) :- k(autoinc()).\n"
    again = overlay(model, {"k": [(2,)]})
    assert set(again.tuples("s")) == {(0,), (1,), (2,)} and set(again.tuples("t")) == {(0,), (1,), (2,)}


def test_a_counter_program_is_recomputed_not_extended() -> None:
    program = compile_text(COUNTER)
    model = evaluate(program, {"q": QS})
    scratch = overlay(model, {"q": [("a0", 9)]})
    full = evaluate(program, {"q": QS + [("a0", 9)]})
    assert set(model.tuples("id")) == {(0, "a"), (1, "b"), (2, "c")}
    for r in ("id", "pair"):
        assert set(scratch.tuples(r)) == set(full.tuples(r))
    assert why(scratch, "id", (1, "a0")) is not None
    extend(model, {"q": [("a0", 9)]})
    retract(model, {"q": [("b", 1)]})
    again = evaluate(program, {"q": [q for q in QS if q != ("b", 1)] + [("a0", 9)]})
    for r in ("id", "pair"):
        assert set(model.tuples(r)) == set(again.tuples(r))


# ---------------------------------------------------------------- witnesses

FAMILY = """
.decl family(name: symbol, age: number)
.decl youngest(name: symbol, age: number)
.decl oldest(name: symbol)
family("Alissa", 10). family("Maria", 46). family("Mark", 50). family("John", 10).
youngest(P, N) :- N = min X : { family(P, X) }.
oldest(P) :- _ = max X : family(P, X).
"""


def test_min_and_max_bind_their_witnesses_every_tied_row() -> None:
    model = evaluate(compile_text(FAMILY))
    assert set(model.tuples("youngest")) == {("Alissa", 10), ("John", 10)}
    assert set(model.tuples("oldest")) == {("Mark",)}


def test_a_witness_is_per_group_when_the_group_is_bound_outside() -> None:
    text = """
.decl student(c: symbol, s: symbol, h: number)
.decl tallest(c: symbol, s: symbol, h: number)
student("a", "x", 170). student("a", "y", 180). student("b", "z", 150). student("b", "w", 150).
tallest(C, S, H) :- student(C, _, _), H = max Hh : { student(C, S, Hh) }, H > 100.
"""
    model = evaluate(compile_text(text))
    assert set(model.tuples("tallest")) == {("a", "y", 180), ("b", "z", 150), ("b", "w", 150)}
    proof = why(model, "tallest", ("b", "w", 150))
    assert proof is not None and ("S", "w") in proof.bindings
    assert any(c.kind == "fact" and c.tuple == ("b", "w", 150) for c in proof.children)
    assert not why_not(model, "tallest", ("a", "x", 170)).holds


def test_a_variable_of_a_compound_target_is_a_witness() -> None:
    # issue 24: `W` in `min X + W` was left unbound (`unbound_variable`)
    text = (
        ".decl a(x: number, y: number)\na(1, 5). a(2, 3). a(4, 0).\n.decl r(y: number, w: number)\n"
        "r(Y, W) :- Y = min X + W : { a(X, W) }.\n.decl s(y: number, w: number)\n"
        "s(Y, W) :- Y = max X * W : { a(X, W) }.\n"
    )
    program = compile_text(text)
    model = evaluate(program)
    assert set(model.tuples("r")) == naive_evaluate(program)["r"] == {(4, 0)}
    assert set(model.tuples("s")) == naive_evaluate(program)["s"] == {(6, 3)}
    proof = why(model, "r", (4, 0))
    assert proof is not None and ("W", 0) in proof.bindings
    assert not why_not(model, "r", (4, 5)).holds


def test_count_and_sum_have_no_witnesses() -> None:
    assert codes(
        ".decl e(a: number, b: number)\n.decl p(a: number, n: number)\np(X, N) :- N = count : { e(X, _) }."
    ) == ["unbound_variable"]
    assert "unbound_variable" in codes(
        ".decl e(a: number, b: number)\n.decl p(a: number, n: number)\np(X, N) :- N = sum Y : { e(X, Y) }."
    )


def test_a_variable_bound_outside_is_still_injected_not_a_witness() -> None:
    text = """
.decl e(a: number, b: number)
.decl low(a: number, m: number)
e(1, 5). e(1, 3). e(2, 7).
low(X, M) :- e(X, _), M = min Y : { e(X, Y) }.
"""
    assert tuples(text, "low") == {(1, 3), (2, 7)}


# ---------------------------------------------------------------- the gate

GATED = """
.include "continuity"
.decl first_holder(scope: symbol, agent: symbol) choice-domain scope
first_holder(S, A) :- grant(A, S, _).
.decl newest(scope: symbol, epoch: number)
newest(S, E) :- grant(_, S, E).
newest(S, E) <= newest(S, F) :- E < F.
forbid(R, "not-first", S) :- request(R, _, _, A, _), request_scope(R, S), first_holder(S, B), A != B.
forbid(R, "old-epoch", S) :- request(R, _, _, _, E), request_scope(R, S), newest(S, N), E < N.
"""


def test_the_warm_gate_decides_as_a_fresh_one_on_a_qualified_policy(tmp_path: Any) -> None:
    from ordinance.facts import open_store, schema_of
    from ordinance.gate import Gate, Request
    from ordinance.values import parse_instant

    policy = compile_text(GATED)
    t = parse_instant("2026-08-14T23:00:00Z")
    with open_store(str(tmp_path / "gate.db"), schema_of(policy)) as store:
        store.assert_facts(
            [("grant", ("bob", "deploy", 2)), ("member", ("job", "deploy"))], source="owner", author="lead"
        )
        gate = Gate(policy, store)
        asks = [
            Request("r1", "write", "job", "bob", 2, scope="deploy"),
            Request("r2", "write", "job", "alice", 1, scope="deploy"),
            Request("r3", "write", "job", "alice", 3, scope="deploy"),
        ]
        assert gate.check(asks[0], t).allowed
        # alice's grant is smaller: she becomes the first holder; epoch 3 is the newest
        store.assert_facts(
            [("grant", ("alice", "deploy", 1)), ("grant", ("alice", "deploy", 3))], source="owner", author="lead"
        )
        for i, ask in enumerate(asks):
            warm = gate.check(ask, t + 60 * i)
            fresh = Gate(policy, store).check(ask, t + 60 * i)
            assert (warm.allowed, warm.codes) == (fresh.allowed, fresh.codes)
        assert {"not-first", "old-epoch"} <= set(gate.check(asks[0], t + 600).codes)
        assert gate.check(asks[2], t + 600).allowed


def test_a_tuple_whose_premise_was_pruned_later_says_so_instead_of_a_proof() -> None:
    text = """
.decl r(n: number, d: number)
.decl s(d: number)
r(1, 5).
s(D) :- r(1, D).
r(1, D - 4) :- s(D), D > 4.
r(N, D) <= r(N, E) :- E < D.
"""
    model = evaluate(compile_text(text))
    # s(5) came from r(1, 5) in round 1; r(1, 1) of round 2 then dominated it
    assert set(model.tuples("r")) == {(1, 1)} and set(model.tuples("s")) == {(5,), (1,)}
    # r(1, 1) and s(1) rest on s(5): their proofs go through it
    for name, t in (("s", (5,)), ("s", (1,)), ("r", (1, 1))):
        with pytest.raises(OrdinanceError) as info:
            why(model, name, t)
        assert info.value.code == "unsupported" and "no proof of `s(5)`: a subsumption clause" in str(info.value)
    assert not why_not(model, "r", (1, 5)).holds
