"""The clock as a delta (engine/clock.py) against evaluating anew.

A model moved from one `now` to another (or found to hold there unchanged)
must equal a full evaluation at the new `now`: every relation's tuples, the
proof of every derived tuple, why-not answers, and overlays on top of it.
Checked on random stratified programs with negation, aggregates, arithmetic
and `$now` used both as a filter and as a value, and through the standard
library on random event histories, with the gate's warm model following an
advancing clock and random jumps, against a fresh gate per decision.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from naive import naive_evaluate
from ordinance.engine import evaluate, extend, overlay, retract, why, why_not
from ordinance.explain import decision_json, to_json
from ordinance.engine.clock import advance, clockwork, horizon, refresh
from ordinance.facts import Event, open_store, schema_of
from ordinance.fuzz import Advance, Ask, Fact
from ordinance.fuzz import strategies as fuzz
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text, parse
from ordinance.rules.checks.timing import check_timing
from ordinance.facts import kind_of

EDB = {"e1": 2, "e2": 2, "e3": 1}
VARS = ("A", "B", "C")
DOMAIN = st.integers(0, 4)
NOWS = st.integers(-2, 7)

# `$now` as a filter (linear: one flip instant per binding), as a value and
# inside aggregates (moving rules, recomputed on every move)
FILTERS = (
    "{x} < $now",
    "{x} <= $now",
    "$now < {x}",
    "$now - {x} <= 1",
    "{x} + 1 >= $now",
    "$now != {x}",
    "$now = {x}",
    "$now - {x} > {y}",
    "$now + {x} < {y} + 3",
)
MOVING = (
    "N = $now - {x}, N < 3",
    "N = ($now - {x}) * 2, N < 6",  # a duration times a number
    "N = count : {{ e1({x}, Y), Y < $now }}",
    "N = max Y : {{ e2(Y, {x}), Y <= $now }}",
)


@st.composite
def programs(draw: Any) -> tuple[str, dict[str, int]]:
    n_derived = draw(st.integers(1, 4))
    arity = {f"p{i}": draw(st.integers(1, 2)) for i in range(n_derived)}
    lines = []
    for i in range(n_derived):
        for _ in range(draw(st.integers(1, 2))):
            pos = list(EDB.items()) + [(f"p{j}", arity[f"p{j}"]) for j in range(i + 1)]
            neg = list(EDB.items()) + [(f"p{j}", arity[f"p{j}"]) for j in range(i)]
            body = [draw(_atom(list(EDB.items())))] + draw(st.lists(_atom(pos), max_size=2))
            bound = sorted({a for _, args in body for a in args if a in VARS})
            lits = [f"{r}({', '.join(a)})" for r, a in body]
            for _ in range(draw(st.integers(0, 2))):
                x, y = draw(st.sampled_from(bound)), draw(st.sampled_from(bound))
                lits.append(draw(st.sampled_from(FILTERS)).format(x=x, y=y))
            head_vars = list(bound)
            if draw(st.integers(0, 3)) == 0:
                lits.append(draw(st.sampled_from(MOVING)).format(x=draw(st.sampled_from(bound))))
                head_vars.append("N")
            if draw(st.booleans()):
                x = draw(st.sampled_from(bound))
                lits.append(f"E = {x} + {draw(st.integers(1, 2))}")
                lits.append("E < 6")
                head_vars.append("E")
            for r, args in draw(st.lists(_atom(neg), max_size=2)):
                args = tuple(a if a in bound else bound[0] for a in args)
                lits.append(f"!{r}({', '.join(args)})")
            head = [draw(st.sampled_from(head_vars)) for _ in range(arity[f"p{i}"])]
            lines.append(f"p{i}({', '.join(head)}) :- {', '.join(lits)}.")
    text = "\n".join(lines)
    assume(not check_timing(parse(text).items))  # no time added to a time, compared with a duration...
    return text, arity


@st.composite
def _atom(draw: Any, relations: list[tuple[str, int]]) -> tuple[str, tuple[str, ...]]:
    name, n = draw(st.sampled_from(relations))
    return name, tuple(draw(st.sampled_from(VARS)) for _ in range(n))


facts = st.fixed_dictionaries(
    {
        "e1": st.lists(st.tuples(DOMAIN, DOMAIN), max_size=8, unique=True),
        "e2": st.lists(st.tuples(DOMAIN, DOMAIN), max_size=8, unique=True),
        "e3": st.lists(st.tuples(DOMAIN), max_size=4, unique=True),
    }
)


def same_model(moved: Any, fresh: Any, relations: Any) -> None:
    for rel in relations:
        have, want = set(moved.tuples(rel)), set(fresh.tuples(rel))
        assert have == want, (rel, moved.now)
        for t in sorted(want, key=repr):
            assert to_json(why(moved, rel, t)) == to_json(why(fresh, rel, t)), (rel, t)
        absent = (0,) * moved.rels[rel].arity
        if absent not in want:
            assert to_json(why_not(moved, rel, absent)) == to_json(why_not(fresh, rel, absent)), rel


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), facts, st.lists(NOWS, min_size=1, max_size=6), facts)
def test_a_moved_model_equals_a_full_evaluation(gen, db, nows, extra):
    text, arity = gen
    program = compile_text(text, extensional=EDB)
    try:
        model = evaluate(program, db, now=nows[0])
    except Exception:
        return  # an evaluation error at the first `now` (e.g. a type clash): nothing to move
    for i, t in enumerate(nows[1:]):
        try:
            fresh = evaluate(program, db, now=t)
        except Exception:
            break
        held = horizon(model).holds(t)
        before = {r: set(model.tuples(r)) for r in arity}
        reader = overlay(model, {}) if i % 2 else None  # a live overlay: the move must copy, not mutate
        earlier, model = model, advance(model, t)
        assert model.now == t
        same_model(model, fresh, arity)
        if reader is not None:
            assert {r: set(earlier.tuples(r)) for r in arity} == before  # the earlier model is as it was
            assert {r: set(reader.tuples(r)) for r in arity} == before
        assert {r: set(fresh.tuples(r)) for r in arity} == {r: naive_evaluate(program, db, now=t)[r] for r in arity}
        if held:  # the horizon promised nothing changes, and nothing did (checked above)
            assert horizon(model).holds(t)
    # an overlay at another `now` inside the horizon equals evaluating anew there
    h = horizon(model)
    for t in {model.now - 1, model.now + 1} if not h.moving else ():
        if h.holds(t):
            union = {k: list(db.get(k, ())) + list(extra.get(k, ())) for k in EDB}
            same_model(overlay(model, extra, now=t), evaluate(program, union, now=t), arity)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), facts, facts, st.lists(NOWS, min_size=2, max_size=4))
def test_the_horizon_follows_new_facts(gen, db, extra, nows):
    text, arity = gen
    program = compile_text(text, extensional=EDB)
    try:
        model = evaluate(program, db, now=nows[0])
        union = {k: list(db.get(k, ())) + list(extra.get(k, ())) for k in EDB}
        [evaluate(program, union, now=t) for t in nows]
    except Exception:
        return
    horizon(model)
    refresh(model, extend(model, extra))
    for t in nows[1:]:
        model = advance(model, t)
        same_model(model, evaluate(program, union, now=t), arity)


def same_horizon(have: Any, want: Any) -> None:
    """Equal instants, and equal bindings at each (their order aside)."""
    assert have.moving == want.moving
    assert have.instants == want.instants
    assert {r: {x: set(bs) for x, bs in at.items()} for r, at in have.at.items()} == {
        r: {x: set(bs) for x, bs in at.items()} for r, at in want.at.items()
    }
    assert (have.lo, have.hi) == (want.lo, want.hi)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), facts, facts, facts, st.lists(NOWS, min_size=2, max_size=4))
def test_the_horizon_is_maintained_through_retracted_and_new_facts(gen, kept, dropped, extra, nows):
    # what a purge removes and new facts add changes the instants tuple by tuple (clock._maintain):
    # they must equal those of a model evaluated anew, and moves from there must be right
    text, arity = gen
    program = compile_text(text, extensional=EDB)
    both = {k: list(kept.get(k, ())) + list(dropped.get(k, ())) for k in EDB}
    gone = {k: [t for t in dropped.get(k, ()) if t not in set(kept.get(k, ()))] for k in EDB}
    after = {k: list(kept.get(k, ())) + list(extra.get(k, ())) for k in EDB}
    try:
        model = evaluate(program, both, now=nows[0])
        [evaluate(program, after, now=t) for t in nows]
        evaluate(program, kept, now=nows[0])
    except Exception:
        return
    horizon(model)
    refresh(model, retract(model, gone))
    same_horizon(horizon(model), horizon(evaluate(program, kept, now=nows[0])))
    refresh(model, extend(model, extra))
    same_horizon(horizon(model), horizon(evaluate(program, after, now=nows[0])))
    for t in nows[1:]:
        model = advance(model, t)
        fresh = evaluate(program, after, now=t)
        same_model(model, fresh, arity)
        same_horizon(horizon(model), horizon(fresh))


def test_filters_watch_and_values_move():
    program = compile_text(
        "live(W) :- lease(W, E), $now < E.\n"
        "age(X, N) :- seen(X, At), N = $now - At.\n"
        "fresh(X) :- seen(X, At), $now - At <= 10.\n",
        extensional={"lease": 2, "seen": 2},
    )
    work = clockwork(evaluate(program, {}).prepared)
    assert [w.rule for w in work.watches] == [0, 2]
    assert work.moving == frozenset({1}) and work.fixed
    model = evaluate(program, {"lease": [("w", 100)], "seen": [("x", 50)]}, now=0)
    h = horizon(model)
    assert h.instants == {0: [100], 2: [60]}
    assert not h.holds(1)  # `age` moves with every second
    model = evaluate(
        compile_text("live(W) :- lease(W, E), $now < E.", extensional={"lease": 2}),
        {"lease": [("w", 100), ("v", 200)]},
        now=0,
    )
    h = horizon(model)
    assert h.holds(99) and not h.holds(100) and h.holds(-(10**9))
    assert h.crossed(150) == {0: {(100,)}}  # the rule, with the filter binding that flips
    reader = overlay(model, {})
    moved = advance(model, 150)  # copies what it changes: `reader` still reads `model`
    assert set(moved.tuples("live")) == {("v",)} and set(reader.tuples("live")) == {("v",), ("w",)}
    del reader
    model = moved
    assert horizon(model).holds(199) and not horizon(model).holds(99)
    assert advance(model, 250) is model and not set(model.tuples("live"))  # no reader: moved in place


def test_program_facts_with_now_are_evaluated_anew_by_the_gate():
    program = compile_text("started($now).\n", extensional={})
    assert not clockwork(evaluate(program, {}).prepared).fixed
    assert not horizon(evaluate(program, {}, now=5)).holds(6)


# ---------------------------------------------------------------- through the standard library

POLICY = compile_text('.include "continuity"\n')
JUMPS = st.lists(st.integers(-3 * fuzz.HOUR, 3 * fuzz.HOUR), max_size=3)


def _decision(d: Any) -> Any:
    out = decision_json(d, program=POLICY)  # with every reason's proof
    out.pop("seq", None)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    fuzz.histories(POLICY, gated=True, max_steps=25),
    st.lists(JUMPS, max_size=25),
    st.lists(st.integers(0, 3), max_size=25),
)
def test_the_warm_gate_at_a_moving_clock_decides_as_a_fresh_one(history, jumps, purges):
    """Also with retention purges of earlier facts between the checks."""
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "s.db"), schema_of(POLICY))
        warm = Gate(POLICY, store)
        asked = 0
        written: list[int] = []
        for step, now in zip(history.steps, history.nows()):
            if isinstance(step, Fact):
                written.append(store.append([Event(kind_of(step.relation), step.relation, step.args, "t", "t")]))
            elif isinstance(step, Ask):
                offsets = [0] + (jumps[asked] if asked < len(jumps) else [])
                asked += 1
                purge = purges[asked - 1] if asked <= len(purges) else 0
                if purge and written:  # then purge one of the facts so far, and ask again
                    store.purge([written.pop(-min(purge, len(written)))], "retention")
                    offsets.append(0)
                for off in offsets:
                    got = warm.decide(step.request, now + off)
                    want = Gate(POLICY, store).decide(step.request, now + off)
                    assert _decision(got) == _decision(want), (now + off, step.request)
            elif isinstance(step, Advance):
                pass
        store.close()


def test_a_purge_reaches_the_warm_model_incrementally(tmp_path):
    store = open_store(str(tmp_path / "s.db"), schema_of(POLICY))
    gate = Gate(POLICY, store)
    store.append([Event("assert", "member", ("w1", "repo"), "t", "t")])  # the owner puts the work in the scope
    grant = store.append([Event("assert", "grant", ("alice", "repo", 1), "t", "t")])
    twice = store.append([Event("assert", "grant", ("bob", "repo", 1), "t", "t")] * 2)
    alice = Request("a1", "write", "w1", "alice", 1, scope="repo")
    bob = Request("b1", "write", "w1", "bob", 1, scope="repo")
    assert gate.decide(alice, 0).allowed and gate.decide(bob, 0).allowed
    model = gate.model(store.revision(), 0)
    store.purge([grant, twice], "retention")  # bob's grant is still asserted by the other event
    assert not gate.decide(alice, 0).allowed and gate.decide(bob, 0).allowed
    assert gate.model(store.revision(), 0) is model  # retracted in place, not rebuilt
    assert set(model.tuples("grant")) == {("bob", "repo", 1)}
    store.close()


def test_two_rules_of_one_stratum_crossing_at_once_pass_on_what_they_derive():
    # both `p1` rules flip at now = 1: their stratum is maintained once, and
    # what it derives reaches the stratum that negates it (found by hypothesis:
    # a second pass over the stratum used to forget the first one's growth)
    text = (
        "p1(A, A) :- e1(A, B), A < $now.\n"
        "p1(A, A) :- e1(A, B), A < $now, A < $now.\n"
        "p2(A) :- e1(A, A), e1(A, B), A < $now.\n"
        "p2(A) :- e1(A, B), !p1(B, B).\n"
    )
    program = compile_text(text, extensional=EDB)
    model = evaluate(program, {}, now=0)
    horizon(model)
    refresh(model, extend(model, {"e1": [(0, 0), (1, 0)]}))
    moved = advance(model, 1)
    assert set(moved.tuples("p2")) == {(0,)}
    same_model(moved, evaluate(program, {"e1": [(0, 0), (1, 0)]}, now=1), {"p1": 2, "p2": 1})
