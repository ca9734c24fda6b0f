"""Decisions at a `now` far from the warm model's, on demand (gate/jump.py):
equal to a full evaluation's at the same revision and `now` (decisions,
reasons, proofs), on random programs and through the standard library."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.engine import evaluate, prepared
from ordinance.engine.clock import horizon
from ordinance.engine.demand import Given, settled
from ordinance.explain import decision_json
from ordinance.facts import Event, kind_of, open_store, schema_of
from ordinance.fuzz import Ask, Fact
from ordinance.fuzz import strategies as fuzz
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from test_clock import EDB as CLOCK_EDB, NOWS, facts as clock_facts, programs as clock_programs
from test_demand import agree, patterns

POLICY = compile_text('.include "continuity"\n')
DAY = 86400


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), clock_programs(), clock_facts, NOWS, NOWS)
def test_demand_over_a_warm_model_equals_a_full_evaluation(data, gen, db, then, now):
    """A warm model at `then` without the input relation `e3`; asked at `now`
    with `e3`'s facts added, as the gate adds a request's."""
    text, arity = gen
    program = compile_text(text, extensional=CLOCK_EDB)
    stored = {name: rows for name, rows in db.items() if name != "e3"}
    try:
        warm = evaluate(program, stored, now=then)
        full = evaluate(program, db, now=now)
    except Exception:
        return  # an evaluation error (a type clash): nothing to compare
    given_ = Given.over(warm, {"e3": set(db["e3"])}, now)
    for relation, values in data.draw(patterns(arity)):
        agree(full, given_, relation, values)


def test_what_depends_neither_on_the_clock_nor_on_the_request_is_read_from_the_warm_model():
    program = compile_text(
        """
        .decl e(x: number)  .decl ask(x: number)
        .decl still(x: number)  .decl timed(x: number)  .decl asked(x: number)  .decl both(x: number)
        still(X) :- e(X), !e(X + 1).
        timed(X) :- still(X), X < $now.
        asked(X) :- ask(X), still(X).
        both(X) :- asked(X), !timed(X).
        """
    )
    assert settled(prepared(program), frozenset({"ask"})) == {"still"}
    warm = evaluate(program, {"e": [(1,), (2,), (5,)]}, now=0)
    given_ = Given.over(warm, {"ask": {(2,), (5,)}}, 3)
    assert given_.rels["still"] is warm.rels["still"]  # shared, not derived again
    full = evaluate(program, {"e": [(1,), (2,), (5,)], "ask": [(2,), (5,)]}, now=3)
    for relation in ("both", "asked", "timed", "still"):
        agree(full, given_, relation, (None,))
        agree(full, given_, relation, (5,))


# ---------------------------------------------------------------- the gate


def _decision(d: Any) -> Any:
    out = decision_json(d, program=POLICY)  # with every reason's proof
    out.pop("seq", None)
    return out


def _eager(gate: Gate) -> Gate:
    """Every `now` past the horizon is decided on demand, never by moving the model."""
    gate.warm.jumps.instants = -1
    gate.warm.jumps.settle = 1 << 30
    return gate


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    fuzz.histories(POLICY, gated=True, max_steps=25),
    st.lists(st.lists(st.integers(-DAY, DAY), max_size=3), max_size=25),
)
def test_the_gate_decides_a_jump_on_demand_as_a_fresh_gate_does(history, jumps):
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "s.db"), schema_of(POLICY))
        warm = _eager(Gate(POLICY, store))
        asked = 0
        for step, now in zip(history.steps, history.nows()):
            if isinstance(step, Fact):
                store.append([Event(kind_of(step.relation), step.relation, step.args, "t", "t")])
            elif isinstance(step, Ask):
                offsets = [0] + (jumps[asked] if asked < len(jumps) else [])
                asked += 1
                for off in offsets:
                    model = warm.warm.cached(store.revision())[1]
                    jumped = model is not None and not horizon(model).holds(now + off)
                    then = model.now if model is not None else None
                    got = warm.decide(step.request, now + off)
                    if jumped:  # decided on demand: the warm model stayed where it was
                        assert warm.warm.cached(store.revision())[1] is model and model.now == then
                    want = Gate(POLICY, store).decide(step.request, now + off)
                    assert _decision(got) == _decision(want), (now + off, step.request)
        store.close()


def _world(store: Any, now: int) -> None:
    rows: list[tuple[str, tuple[Any, ...]]] = [("grant", ("alice", "repo", 1)), ("single_valued", ("state",))]
    for i in range(40):  # claims whose windows open over the day before `now`, and some after it
        rows += [
            ("claim", (f"c{i}", f"s{i % 7}", "state", "open" if i % 3 else "merged")),
            ("claim_source", (f"c{i}", "sweep", "observed")),
            ("claim_valid", (f"c{i}", now - DAY + i * 3600, now + DAY)),
        ]
    store.append([Event(kind_of(r), r, a, "t", "t") for r, a in rows])


def test_a_jump_leaves_the_warm_model_where_it_is_and_a_settled_clock_moves_it(tmp_path):
    store = open_store(str(tmp_path / "s.db"), schema_of(POLICY))
    now = 1_000_000
    _world(store, now)
    gate = Gate(POLICY, store)
    gate.warm.jumps.instants = 4
    ask = Request("a1", "write", "w1", "alice", 1, scope="repo", uses=("c3",), needs=(("s3", "state", "open"),))
    first = gate.decide(ask, now)
    rev = store.revision()
    model = gate.model(rev, now)
    for t in (now - DAY // 2, now + DAY // 3, now - 5 * 3600):  # each crosses more than 4 instants
        got = gate.decide(ask, t)
        assert gate.model(rev, now) is model and model.now == now  # not moved
        assert _decision(got) == _decision(Gate(POLICY, store).decide(ask, t))
    assert _decision(gate.decide(ask, now)) == _decision(first)
    # the clock really jumped: decisions keep coming near the new `now`; the model follows
    far = now + DAY // 2
    for t in (far, far + 1, far + 2, far + 3):
        got = gate.decide(ask, t)
        assert _decision(got) == _decision(Gate(POLICY, store).decide(ask, t))
    assert gate.warm.cached(rev)[1].now == far + 2  # moved at the third, then held
    store.close()


def test_a_policy_whose_clock_rules_may_fail_always_moves_the_model(tmp_path):
    text = '.include "continuity"\n.decl late(a: symbol, d: number)\nlate(W, ($now - At) / 0) :- lease(W, _, _, At).\n'
    policy = compile_text(text)
    store = open_store(str(tmp_path / "s.db"), schema_of(policy))
    assert not Gate(policy, store).warm.jumps.able  # a full evaluation fails where the demand never looks
    assert Gate(POLICY, store).warm.jumps.able
    store.close()


def test_the_warm_build_rewrites_the_policy_for_jumps_so_the_first_jump_rewrites_nothing(tmp_path, monkeypatch):
    import importlib

    demand = importlib.import_module("ordinance.engine.demand")
    prepare = importlib.import_module("ordinance.engine.prepare")  # (the package exports a function of that name)

    policy = compile_text('.include "continuity"\n.decl jump_only(x: number)\n')  # its own rewrites and plans
    store = open_store(str(tmp_path / "s.db"), schema_of(policy))
    now = 1_000_000
    _world(store, now)
    ask = Request("a1", "write", "w1", "alice", 1, scope="repo", uses=("c3",), needs=(("s3", "state", "open"),))
    gate = _eager(Gate(policy, store))
    gate.decide(ask, now)  # builds the warm model
    jump = now - DAY // 2
    want = Gate(policy, store, eager=False).decide(ask, jump)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("rewritten or compiled at a jump")

    monkeypatch.setattr(demand, "magic", refuse)
    monkeypatch.setattr(prepare, "compile_plan", refuse)
    monkeypatch.setattr(prepare, "compile_round", refuse)
    model = gate.model(store.revision(), now)
    got = gate.decide(ask, jump)
    assert gate.warm.cached(store.revision())[1] is model and model.now == now  # decided on demand
    assert got.errors == () and got.allowed == want.allowed
    assert [(r.code, r.detail) for r in got.reasons] == [(r.code, r.detail) for r in want.reasons]
    store.close()


def test_decisions_on_demand_share_their_base_s_empty_relations_and_never_write_them(tmp_path):
    """A demanded model starts from its base's skeleton: a relation its
    questions derived nothing of is the base's `Empty`, shared by every
    decision over that warm model, frozen, and refusing writes."""
    import pytest

    from ordinance.engine.relation import Empty

    store = open_store(str(tmp_path / "s.db"), schema_of(POLICY))
    now = 1_000_000
    _world(store, now)
    gate = _eager(Gate(POLICY, store))
    asks = [
        Request(
            f"a{i}", "write", f"w{i}", "alice", 1, scope="repo", uses=(f"c{i}",), needs=((f"s{i}", "state", "open"),)
        )
        for i in range(6)
    ]
    gate.decide(asks[0], now)  # builds the warm model
    rev = store.revision()
    models = []
    for i, ask in enumerate(asks):
        t = now + (-1) ** i * (DAY // 3 + i * 977)
        assert _decision(gate.decide(ask, t)) == _decision(Gate(POLICY, store).decide(ask, t))
        models.append(gate.warm.decision_model(rev, gate._facts(ask), ask.id, t))
    base = gate.warm.jumps._given[2]  # type: ignore[index]
    assert base.skeleton is not None and base.opened
    empties = {name: rel for name, rel in base.skeleton.items() if isinstance(rel, Empty)}
    assert set(empties) == set(base.opened)
    shared = [name for name in empties if all(m.rels[name] is empties[name] for m in models)]
    assert shared  # most open relations are demanded by none of these decisions
    for rel in empties.values():
        assert not rel.stable and not rel.edb and not rel.batches and rel.derived
        with pytest.raises(AssertionError):
            rel.insert({(1,) * rel.arity})
        with pytest.raises(AssertionError):
            rel.add_facts({(1,) * rel.arity})
    store.close()
