"""Evaluation on demand (engine/magic.py, engine/demand.py) against full evaluation.

For a pattern with some arguments bound, the demanded model must give the
answers, the proof of every answer and the why-not of what does not hold
exactly as a full evaluation does. Checked on the random stratified programs
of test_clock (negation, aggregates, arithmetic, `$now` as a filter and a
value) and of test_differential (recursion, constants, functors), at random
patterns, and on the standard library's test blocks with the patterns their
expectations name.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.diagnostics import EvaluationError
from ordinance.engine import answers, evaluate, parse_pattern, why, why_not
from ordinance.engine.demand import GROWTH, Given, demand_of, demanded, model_for
from ordinance.explain import to_json
from ordinance.rules import compile_text
from test_clock import EDB as CLOCK_EDB, NOWS, facts as clock_facts, programs as clock_programs
from test_differential import EDB as DIFF_EDB, facts as diff_facts, programs as diff_programs
from test_stdlib import POLICY, block_facts, ground

VALUES = st.integers(-1, 5)


def agree(full: Any, given: Given, relation: str, values: tuple[Any, ...]) -> None:
    """The demanded model answers `relation(values)` as the full model does:
    the matching tuples, each one's proof, and the why-not of the pattern
    (and of one absent ground tuple)."""
    model = demanded(given, relation, values)
    want = sorted(full.query(relation, values), key=repr)
    assert sorted(model.query(relation, values), key=repr) == want, (relation, values)
    for t in want:
        assert to_json(why(model, relation, t)) == to_json(why(full, relation, t)), (relation, t)
    walked = demanded(given, relation, values, why_not=True)
    assert sorted(walked.query(relation, values), key=repr) == want, (relation, values)
    assert to_json(why_not(walked, relation, values)) == to_json(why_not(full, relation, values)), (relation, values)
    absent = tuple(v if v is not None else -7 for v in values)
    if not full.contains(relation, absent):
        assert why(model, relation, absent) is None
        walked = demanded(given, relation, absent, why_not=True)
        assert to_json(why_not(walked, relation, absent)) == to_json(why_not(full, relation, absent))


def patterns(arity: dict[str, int]) -> st.SearchStrategy[list[tuple[str, tuple[Any, ...]]]]:
    one = st.sampled_from(sorted(arity)).flatmap(
        lambda r: st.tuples(st.just(r), st.tuples(*[st.none() | VALUES for _ in range(arity[r])]))
    )
    return st.lists(one, min_size=1, max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), clock_programs(), clock_facts, NOWS)
def test_demand_equals_full_evaluation_with_now_aggregates_and_negation(data, gen, db, now):
    text, arity = gen
    program = compile_text(text, extensional=CLOCK_EDB)
    try:
        full = evaluate(program, db, now=now)
    except Exception:
        return  # an evaluation error (a type clash): nothing to compare
    given_ = Given.load(program, db, now)
    for relation, values in data.draw(patterns(arity)):
        agree(full, given_, relation, values)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), diff_programs(arithmetic=True), diff_facts)
def test_demand_equals_full_evaluation_with_recursion_and_constants(data, gen, db):
    program = compile_text(gen.text, extensional=DIFF_EDB)
    try:
        full = evaluate(program, db)
    except Exception:
        return
    given_ = Given.load(program, db, 0)
    for relation, values in data.draw(patterns(gen.arity)):
        agree(full, given_, relation, values)


BLOCKS = [(b.name, b) for b in POLICY.tests]


@pytest.mark.parametrize("name,block", BLOCKS, ids=[n for n, _ in BLOCKS])
def test_stdlib_blocks_on_demand(name: str, block: Any) -> None:
    facts = block_facts(block)
    full = evaluate(POLICY, facts, now=block.now)
    given_ = Given.load(POLICY, facts, block.now)
    for expect in block.expects:
        relation, t = expect.atom.relation, ground(expect.atom)
        assert demanded(given_, relation, t).contains(relation, t) != expect.negated
        for k in range(len(t) + 1):  # the first k arguments bound
            agree(full, given_, relation, t[:k] + (None,) * (len(t) - k))


def test_the_gate_relations_on_demand_in_every_stdlib_block() -> None:
    for block in POLICY.tests:
        facts = block_facts(block)
        full = evaluate(POLICY, facts, now=block.now)
        given_ = Given.load(POLICY, facts, block.now)
        for a, *_rest in facts.get("request", ()):
            agree(full, given_, "forbid", (a, None, None))
            agree(full, given_, "permit", (a,))


PATH = """
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
.decl loop(a: number)
.decl clean(a: number, b: number)
.decl fanout(a: number, n: number)
path(X, Y) :- edge(X, Y).
path(X, Y) :- path(X, Z), edge(Z, Y).
loop(X) :- path(X, X).
clean(X, Y) :- path(X, Y), !loop(Y).
fanout(X, N) :- edge(X, _), N = count : { path(X, _) }.
"""


def test_demand_derives_only_what_the_pattern_needs() -> None:
    program = compile_text(PATH)
    # a chain, and a chain whose first half is a cycle: small, since the
    # why-nots `agree` compares walk the whole relation (a chain of 100 and a
    # cycle of 51 took two minutes on a loaded host, with nothing more shown)
    chain = [(i, i + 1) for i in range(30)] + [(1000 + i, 1001 + i) for i in range(20)] + [(1010, 1000)]
    given_ = Given.load(program, {"edge": chain}, 0)
    model = demanded(given_, "clean", (25, None))
    assert sorted(model.query("clean", (25, None))) == [(25, 26 + i) for i in range(5)]
    # only the paths from 25 were derived, not the 741 of the whole graph: `!loop(Y)` asks
    # for `path(Y, Y)` with both bound, which reads `edge(Z, Y)` first and derives nothing
    assert set(model.tuples("path")) == {(25, y) for y in range(26, 31)}
    full = evaluate(program, {"edge": chain})
    assert len(full.tuples("path")) == 741 and full.query("loop", (None,))
    for relation, values in [
        ("clean", (25, None)),
        ("clean", (1010, None)),
        ("fanout", (3, None)),
        ("path", (None, 3)),
        ("loop", (None,)),
        ("loop", (1005,)),
    ]:
        agree(full, given_, relation, values)


def test_a_negation_on_a_recursive_cycle_reads_a_fully_computed_copy() -> None:
    # the demand for `bad` needs `r`, which negates `bad`: no context of its
    # own stratifies that, nor does dropping `r` from the demand (it alone
    # binds Y), so `bad` is computed in full
    program = compile_text("""
.decl s(a: number)
.decl base(a: number)
.decl b(a: number)
.decl bad(a: number)
.decl r(a: number)
bad(X) :- b(X).
r(X) :- base(X).
r(X) :- s(X), r(Y), Y < X, !bad(Y).
""")
    for order in (False, True):
        assert demand_of(program, "r", (True,), order).full  # the recursive rule's negation reads `bad@f@*`
    facts = {"s": [(x,) for x in range(1, 8)], "base": [(0,), (4,)], "b": [(0,), (2,)]}
    full = evaluate(program, facts)
    given_ = Given.load(program, facts, 0)
    for x in range(9):
        agree(full, given_, "r", (x,))
    agree(full, given_, "r", (None,))


def test_program_facts_of_derived_relations_and_now_in_facts() -> None:
    program = compile_text("""
.decl e(a: number)
.decl p(a: number, t: number)
.decl q(a: number)
p(1, $now).
p(X, T) :- e(X), T = X + 10.
q(X) :- p(X, T), T > $now.
""")
    for now in (0, 5, 20):
        full = evaluate(program, {"e": [(1,), (2,), (30,)]}, now=now)
        given_ = Given.load(program, {"e": [(1,), (2,), (30,)]}, 0).at(now)
        for values in [(1,), (2,), (30,), (None,)]:
            agree(full, given_, "q", values)
        agree(full, given_, "p", (1, None))


def test_query_answers_on_demand() -> None:
    program = compile_text(PATH)
    facts = {"edge": [(1, 2), (2, 3), (3, 1), (7, 8)]}
    given_ = Given.load(program, facts, 0)
    asked = parse_pattern("clean(1, Y)", program)
    full = evaluate(program, facts)
    assert answers(demanded(given_, asked.relation, asked.values, proofs=False), asked) == answers(full, asked)
    asked = parse_pattern("clean(7, Y)", program)
    assert answers(demanded(given_, asked.relation, asked.values), asked) == [{"Y": 8}]


def test_an_evaluation_error_names_the_policy_rule() -> None:
    program = compile_text("""
.decl e(a: number, b: number)
.decl q(a: number, b: number)
q(X, Y) :- e(X, D), Y = 10 / D.
""")
    given_ = Given.load(program, {"e": [(1, 0), (2, 5)]}, 0)
    with pytest.raises(EvaluationError) as raised:
        demanded(given_, "q", (1, None))
    assert raised.value.diagnostics[0].code == "division_by_zero"
    assert "`q(X, Y) :- e(X, D), Y = 10 / D.`" in raised.value.diagnostics[0].message
    assert demanded(given_, "q", (2, None)).query("q", (2, None)) == [(2, 2)]  # the error is not demanded


def test_a_recursive_head_expression_falls_back_to_the_full_model() -> None:
    # `n(X + 1)` cannot be unified with a value to enumerate its instances, so
    # the heights of its tuples come from a full evaluation
    program = compile_text("""
.decl s(a: number)
.decl n(a: number)
.decl m(a: number)
n(X) :- s(X).
n(X + 1) :- n(X), X < 5.
m(X) :- n(X), X > 2.
.decl k(a: number, b: number)
k(X * 2, X) :- n(X).
""")
    full = evaluate(program, {"s": [(0,)]})
    for values in [(4, None), (5, None), (None, 3)]:  # a given expression argument is checked, not passed down
        assert demanded(Given.load(program, {"s": [(0,)]}, 0), "k", values, proofs=False).query(
            "k", values
        ) == full.query("k", values)
    given_ = Given.load(program, {"s": [(0,)]}, 0)
    model = demanded(given_, "m", (3,))
    assert model.query("m", (3,)) == [(3,)]
    assert set(model.tuples("n")) == set(full.tuples("n"))
    assert demanded(given_, "m", (3,), proofs=False).query("m", (None,)) == [(3,)]


def test_model_for_takes_the_demand_path_unless_the_rewrite_outgrows_the_policy() -> None:
    policy = POLICY
    facts = block_facts(BLOCKS[0][1])
    now = BLOCKS[0][1].now
    small = model_for(policy, facts, "current", ("c1",), now=now)
    assert set(small.tuples("claim")) == set(facts.get("claim", ()))
    assert len(demand_of(policy, "current", (True,)).program.rules) <= GROWTH * len(policy.rules)
    assert not small.tuples("status")  # only what `current("c1")` needs was derived
    # the gate's `forbid` reaches most of the library through many contexts: evaluated in full
    assert len(demand_of(policy, "forbid", (True, False, False)).program.rules) > GROWTH * len(policy.rules)
    whole = model_for(policy, facts, "forbid", ("a1", None, None), now=now)
    assert set(whole.tuples("status")) == set(evaluate(policy, facts, now=now).tuples("status"))


QUALIFIED = """
.decl e(a: number, b: number)
.decl first(a: number, b: number) choice-domain a
first(A, B) :- e(A, B).
.decl best(a: number, b: number)
best(A, B) :- e(A, B).
best(A, B) <= best(A, C) :- C < B.
.type Pair = [x: number, y: number]
.decl pr(p: Pair)
pr([A, B]) :- e(A, B).
.decl q(a: number, p: Pair)
q(A, [A, B]) :- pr([A, B]).
"""


@pytest.mark.parametrize(
    "relation, values",
    [
        ("first", (1, None)),
        ("best", (2, None)),
        ("q", (1, None)),
        ("pr", ((1, 3),)),
    ],
)
def test_qualifiers_and_records_are_evaluated_in_full(relation: str, values: tuple[Any, ...]) -> None:
    # a choice-domain, a subsumption or a record makes an answer depend on
    # more than its demand (the rewrite also does not plan record patterns):
    # model_for answers as a full evaluation does
    policy = compile_text(QUALIFIED)
    facts = {"e": {(1, 5), (1, 3), (2, 7), (2, 1)}}
    full = evaluate(policy, facts, now=0)
    assert full.query(relation, values)
    model = model_for(policy, facts, relation, values, now=0)
    assert sorted(model.query(relation, values)) == sorted(full.query(relation, values))


def test_an_expression_over_a_variable_only_the_demand_binds_is_not_passed_down() -> None:
    # Soufflé's evaluation/magic_infbinding: `gen(X + 1)` asked at 0 demanded
    # 1, then 2, ... without end (the iteration limit); an expression over a
    # variable only the head's demand binds is read free, as Soufflé's
    # MagicSet.cpp binds such a variable weakly; one a body atom binds still passes
    program = compile_text(
        "seed(5). valid(0). valid(1). valid(2). valid(3). valid(4). valid(5).\n"
        "gen(X) :- seed(X).\ngen(X) :- gen(X + 1), valid(X).\n"
        "next(X, Y) :- valid(X), gen(X + 1), Y = X + 1.\n"
    )
    full = evaluate(program)
    given_ = Given.load(program, {}, 0)
    for relation, values in [("gen", (0,)), ("gen", (3,)), ("next", (2, None)), ("next", (None, None))]:
        agree(full, given_, relation, values)
    assert set(demanded(given_, "gen", (0,)).query("gen", (0,))) == {(0,)}
