"""Incremental maintenance: extend, overlay, retract agree with evaluating anew."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from ordinance.engine import evaluate, extend, overlay, retract, why
from ordinance.engine.relation import Layer, LayeredSet, Rel, build_index
from ordinance.rules import compile_text as program

POLICY = """
reach(X, Y) :- edge(X, Y).
reach(X, Z) :- reach(X, Y), edge(Y, Z).
superseded(C) :- supersedes(_, C).
current(C, S, V) :- claim(C, S, V), !superseded(C).
conflict(C1, C2) :- current(C1, S, V1), current(C2, S, V2), V1 != V2.
status(S, "conflict") :- conflict(C, _), current(C, S, _).
status(S, "known") :- current(_, S, _), !disputed(S).
disputed(S) :- conflict(C, _), current(C, S, _).
claims(S, N) :- current(_, S, _), N = count : { current(_, S, _) }.
forbid(A) :- request(A, S), disputed(S).
permit(A) :- request(A, S), status(S, "known"), !forbid(A).
linked(A, B) :- request(A, S), reach(S, B).
pinned(A) :- request(A, "s1").
into(X) :- edge(X, "s2"), request(_, X).
unpinned(A) :- request(A, _), !pinned(A).
"""
EXT = {"edge": 2, "supersedes": 2, "claim": 3, "request": 2}
RELATIONS = (
    "reach",
    "superseded",
    "current",
    "conflict",
    "status",
    "disputed",
    "claims",
    "forbid",
    "permit",
    "linked",
    "pinned",
    "into",
    "unpinned",  # rules whose atoms ask constants: a stratum no new tuple matches is not run
)

P = program(POLICY, extensional=EXT)

values = st.sampled_from(["s1", "s2", "s3"])
facts = st.fixed_dictionaries(
    {
        "edge": st.lists(st.tuples(values, values), max_size=6),
        "supersedes": st.lists(
            st.tuples(st.sampled_from(["c1", "c2", "c3", "c4"]), st.sampled_from(["c1", "c2", "c3", "c4"])), max_size=2
        ),
        "claim": st.lists(
            st.tuples(st.sampled_from(["c1", "c2", "c3", "c4"]), values, st.sampled_from(["v1", "v2"])), max_size=5
        ),
        "request": st.lists(st.tuples(st.sampled_from(["a1", "a2"]), values), max_size=3),
    }
)


def union(a, b):
    return {k: list(a.get(k, ())) + list(b.get(k, ())) for k in a.keys() | b.keys()}


def snapshot(m):
    return {r: set(m.tuples(r)) for r in RELATIONS}


@settings(max_examples=150, deadline=None)
@given(facts, facts)
def test_extend_and_overlay_agree_with_a_fresh_evaluation(first, second):
    expected = snapshot(evaluate(P, union(first, second)))
    base = evaluate(P, first)
    before = snapshot(base)
    scratch = overlay(base, second)
    assert snapshot(scratch) == expected
    assert snapshot(base) == before  # the overlay left its base untouched
    extend(base, second)
    assert snapshot(base) == expected
    for rel in RELATIONS:  # every derived tuple still has a proof
        for t in list(base.tuples(rel))[:3]:
            assert why(base, rel, t) is not None
            assert why(scratch, rel, t) is not None


# what each relation reads, transitively (itself included)
READS = {
    "forbid": ("forbid", "disputed", "conflict", "current", "superseded"),
    "linked": ("linked", "reach"),
    "permit": ("permit", "status", "forbid", "disputed", "conflict", "current", "superseded"),
}


@settings(max_examples=150, deadline=None)
@given(facts, facts, st.sampled_from(sorted(READS)))
def test_an_overlay_for_one_relation_agrees_on_it_and_on_what_it_reads(first, second, wanted):
    """The gate's overlay (`wanted`: the relations it decides on) brings only
    what they read up to date, whether facts of `second` only grow the
    model (the overlay's short path) or not (incremental.py's `_propagate`)."""
    expected = snapshot(evaluate(P, union(first, second)))
    scratch = overlay(evaluate(P, first), second, wanted={wanted})
    assert {r: set(scratch.tuples(r)) for r in READS[wanted]} == {r: expected[r] for r in READS[wanted]}
    for t in scratch.tuples(wanted):
        assert why(scratch, wanted, t) is not None


@settings(max_examples=100, deadline=None)
@given(facts, facts)
def test_retract_agrees_with_a_fresh_evaluation(kept, dropped):
    m = evaluate(P, union(kept, dropped))
    only_dropped = {k: [t for t in v if t not in set(kept.get(k, ()))] for k, v in dropped.items()}
    retract(m, only_dropped)
    assert snapshot(m) == snapshot(evaluate(P, kept))


def test_extend_continues_semi_naive_only_where_positive():
    m = evaluate(P, {"edge": [("a", "b")], "claim": [("c1", "s", "v1")], "request": [("r", "s")]})
    reach_before = m.rels["reach"].stable
    permit_before = m.rels["permit"].stable
    extend(m, {"edge": [("b", "c")]})
    # reach grew in place (semi-naive continuation), nothing else was touched
    assert m.rels["reach"].stable is reach_before
    assert m.tuples("reach") == {("a", "b"), ("b", "c"), ("a", "c")}
    assert m.rels["permit"].stable is permit_before and m.tuples("permit") == {("r",)}
    extend(m, {"claim": [("c2", "s", "v2")]})
    # `permit` negates `forbid`, which grew: that stratum was recomputed
    assert m.tuples("forbid") == {("r",)} and m.tuples("permit") == set()
    assert m.tuples("claims") == {("s", 2)}


def test_new_tuples_get_notes_above_the_old_ones():
    m = evaluate(
        program("path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).", extensional={"edge": 2}),
        {"edge": [(1, 2)]},
    )
    old = m.note("path", (1, 2))
    extend(m, {"edge": [(2, 3)]})
    new = m.note("path", (1, 3))
    assert old is not None and new is not None and new.height > old.height and new.rule == 1
    proof = why(m, "path", (1, 3))
    assert proof is not None and [c.tuple for c in proof.children] == [(1, 2), (2, 3)]


def test_an_overlay_is_freed_without_the_cyclic_collector():
    # a decision's scratch model is freed as soon as it is dropped: cyclic
    # garbage would wait for a collection, which then stalls some decision
    base = evaluate(P, {"claim": [(f"c{i}", f"s{i % 3}", "v1") for i in range(30)], "edge": [("s1", "s2")]})
    gc.collect()
    gc.disable()
    try:
        for i in range(20):  # requests, and a claim the `claims` count is recomputed for
            scratch = overlay(base, {"request": [(f"a{i}", "s1")], "claim": [(f"x{i}", "s1", "v1")]})
            assert scratch.tuples("permit") == {(f"a{i}",)}
        del scratch
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_overlay_shares_the_base_relations():
    claims = [(f"c{i}", f"s{i}", "v") for i in range(1000)]
    base = evaluate(P, {"claim": claims})
    scratch = overlay(base, {"request": [("a1", "s7")]})
    assert scratch.tuples("permit") == {("a1",)} and base.tuples("permit") == set()
    # untouched relations are the very same objects; written ones are layers over the base,
    # or the overlay's own where the base holds nothing (a request's relations)
    assert scratch.rels["claim"] is base.rels["claim"]
    assert scratch.rels["current"] is base.rels["current"]
    assert type(scratch.rels["request"]) is Rel and scratch.rels["request"] is not base.rels["request"]
    assert base.tuples("request") == set()
    # an overlay of an overlay works too, and leaves both below untouched
    deeper = overlay(scratch, {"claim": [("c9999", "s7", "w")]})
    assert deeper.tuples("forbid") == {("a1",)} and scratch.tuples("forbid") == set()
    assert isinstance(deeper.rels["claim"], Layer)
    assert isinstance(deeper.rels["claim"].stable, LayeredSet)
    assert deeper.rels["claim"].stable.base is scratch.rels["claim"].stable
    assert ("c9999", "s7", "w") not in scratch.tuples("claim")


def test_facts_given_to_a_recomputed_derived_relation_reach_its_readers():
    # `a` is derived and given; its stratum aggregates over `c`, which grew, so it is recomputed:
    # the given `a(5)` is new to `d` all the same
    p = program(
        "a(X) :- b(X), !c(X).\na(X) :- n(X, _), X > count : { c(_) }.\nd(X) :- a(X).",
        extensional={"b": 1, "c": 1, "n": 2, "a": 1},
    )
    m = evaluate(p, {"b": [(1,)], "a": [(9,)]})
    extend(m, {"a": [(5,)], "c": [(7,)]})
    assert m.tuples("d") == evaluate(p, {"b": [(1,)], "a": [(9,), (5,)], "c": [(7,)]}).tuples("d") == {(1,), (5,), (9,)}


def test_a_stratum_losing_tuples_through_negation_and_deletion_at_once_tells_its_readers_both():
    # retracting `f(2)` makes `c(2)`, which blocks `a(2)` (negation step); retracting `b(1)` deletes `a(1)`
    p = program("c(X) :- e(X), !f(X).\na(X) :- b(X), !c(X).\nd(X) :- a(X).", extensional={"b": 1, "e": 1, "f": 1})
    many = [(i,) for i in range(200, 300)]  # so that both changes are small enough to be maintained
    m = evaluate(p, {"b": [(i,) for i in range(100)], "e": [(2,)] + many, "f": [(2,)] + many})
    retract(m, {"b": [(1,)], "f": [(2,)]})
    expected = evaluate(p, {"b": [(i,) for i in range(100) if i != 1], "e": [(2,)] + many, "f": many})
    assert m.tuples("a") == expected.tuples("a")
    assert m.tuples("d") == expected.tuples("d") and (2,) not in m.tuples("d")


def test_removing_tuples_keeps_every_index_as_built_anew_and_in_order():
    rel = Rel("r", 2, False, [(i % 3, i) for i in range(100)])  # buckets of 33 on column 0: dicts
    small = Rel("s", 2, False, [(i % 50, i) for i in range(100)])  # buckets of 2: lists
    for r in (rel, small):
        before = {cols: {k: list(b) for k, b in r.index(cols).items()} for cols in [(0,), (1,), (0, 1)]}
        gone = {t for t in r.stable if t[1] % 2 == 0}
        r.remove(gone)
        for cols, idx in r.indexes.items():
            assert {k: list(b) for k, b in idx.items()} == {
                k: [t for t in b if t not in gone] for k, b in before[cols].items() if any(t not in gone for t in b)
            }
            assert {k: set(b) for k, b in idx.items()} == {k: set(b) for k, b in build_index(r.stable, cols).items()}
        r.remove(set(r.stable))
        assert all(not idx for idx in r.indexes.values())


def test_an_overlay_reads_a_base_bucket_and_its_own_as_one():
    base = Rel("r", 2, False, [(0, i) for i in range(40)])
    view = Layer(base)
    view.index((0,))
    view.insert({(0, 40), (1, 0)})
    assert list(view.index((0,)).get(0)) == [t for t in base.index((0,))[0]] + [(0, 40)]
    assert list(view.index((0,)).get(1)) == [(1, 0)] and view.index((0,)).get(2) is None


def test_deletion_rederives_through_the_rules_whose_head_constants_match():
    """A candidate for deletion is checked only against the rules whose head
    constants it has (incremental._headed): `note("a", 1)` stays while
    another `"a"` rule derives it, `note("b", 2)` goes, and the model equals
    a fresh evaluation after each retraction."""
    p = program(
        """
        note("a", X) :- p(X).
        note("b", X) :- q(X).
        note("a", X) :- r(X).
        note(K, X) :- s(K, X).
        """,
        extensional={"p": 1, "q": 1, "r": 1, "s": 2},
    )
    facts = {"p": {(1,), (3,)}, "q": {(2,)}, "r": {(1,)}, "s": {("b", 3)}}
    m = evaluate(p, facts)
    for rel, gone in (("p", (1,)), ("q", (2,)), ("p", (3,)), ("r", (1,))):
        retract(m, {rel: {gone}})
        facts[rel] = facts[rel] - {gone}
        assert set(m.tuples("note")) == set(evaluate(p, facts).tuples("note"))
    assert set(m.tuples("note")) == {("b", 3)}
