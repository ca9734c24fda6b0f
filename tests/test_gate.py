"""The gate: decisions, the decision log, replay, errors, guard, explanations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from ordinance.diagnostics import Diagnostic, GateError
from ordinance.explain import annotator, decision_json, explain_text, to_dot
from ordinance.facts import Store, open_store, schema_of
from ordinance.gate import Decision, Gate, Request
from ordinance.rules import compile_text
from ordinance.values import parse_instant

POLICY = compile_text('.include "continuity"\n')
T = parse_instant("2026-08-14T23:00:00Z")


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "gate.db"), schema_of(POLICY)) as s:
        yield s


def takeover(store: Store) -> None:
    store.assert_facts(
        [("grant", ("alice", "deploy", 1)), ("lease", ("job", "alice", 1, T - 3600)), ("member", ("job", "deploy"))],
        source="coordinator",
        author="lead",
    )
    store.assert_facts(
        [("grant", ("bob", "deploy", 2)), ("lease", ("job", "bob", 2, T + 3600))],
        source="coordinator",
        author="lead",
    )


def alice() -> Request:
    return Request("a1", "write", "job", "alice", 1, scope="deploy")


def bob(id: str = "b1", **kw: Any) -> Request:
    return Request(id, "write", "job", "bob", 2, scope="deploy", **kw)


def test_allowed_iff_permit_and_no_forbid(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    ok = gate.check(bob(), T)
    assert ok.allowed and ok.reasons == () and ok.errors == ()
    stale = gate.check(alice(), T)
    assert not stale.allowed
    assert stale.codes == ("stale-epoch",)
    assert {r.detail for r in stale.reasons} == {"job", "deploy"}
    nobody = gate.check(Request("c1", "write", "elsewhere", "carol", 1), T)
    assert not nobody.allowed and nobody.codes == ("no-grant",)
    assert nobody.reasons[0].kind == "missing-permit" and nobody.reasons[0].proof is not None


def test_decision_fields_identify_the_inputs(store: Store) -> None:
    takeover(store)
    d = Gate(POLICY, store).check(alice(), T)
    assert d.revision == 5  # a batch of three facts, then one of two
    assert d.policy_hash == POLICY.source_hash and d.policy_hash
    assert d.now == T
    data = decision_json(d, program=POLICY)
    json.dumps(data)  # plain JSON
    assert data["request"]["id"] == "a1" and data["allowed"] is False
    assert all("proof" in r for r in data["reasons"])


def test_every_decision_is_logged(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    d1, d2 = gate.check(bob(), T), gate.check(alice(), T)
    logged = store.decisions()
    assert [e.seq for e in logged] == [d1.seq, d2.seq]
    assert logged[1].payload is not None
    payload = dict(logged[1].payload)
    assert payload["allowed"] is False and payload["revision"] == d2.revision
    assert payload["policy_hash"] == POLICY.source_hash and payload["now"] == T
    assert [r["code"] for r in payload["reasons"]] == ["stale-epoch", "stale-epoch"]


def test_replay_gives_the_same_decision_and_proof(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    before = gate.check(alice(), T)
    # the world moves on: alice's epoch is revoked, bob's too
    store.assert_facts([("revoke", ("alice", "deploy", 1)), ("stop", ("deploy", T - 60))])
    now_denied = gate.check(alice(), T)
    assert set(now_denied.codes) == {"stale-epoch", "revoked", "owner-stop", "no-grant"}
    event = next(e for e in store.decisions() if e.seq == before.seq)
    again = Gate(POLICY, store).replay(event)
    assert decision_json(again) == {k: v for k, v in decision_json(before).items() if k != "seq"}
    assert again.codes == ("stale-epoch",)


def test_replay_refuses_another_policy(store: Store) -> None:
    takeover(store)
    d = Gate(POLICY, store).check(alice(), T)
    other = compile_text('.include "continuity"\n.decl extra(x: symbol)\n')
    event = next(e for e in store.decisions() if e.seq == d.seq)
    with pytest.raises(GateError):
        Gate(other, store).replay(event)


def test_decisions_do_not_cool_the_model(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    gate.check(bob(), T)
    warm = gate.model(store.revision(), T)
    gate.check(bob("b2"), T)  # appends a decision: no new facts
    assert gate.model(store.revision(), T) is warm
    store.assert_facts([("stop", ("deploy", T - 60))])
    d = gate.check(bob("b3"), T)
    assert d.codes == ("owner-stop",)  # new facts are seen


def test_the_clock_moves_the_warm_model_only_past_what_decisions_read(store: Store) -> None:
    """Bob's lease expiring changes `live` (read by the state projection, not
    by any decision): decisions after it leave the warm model where it is,
    and decide as a fresh gate does; `Gate.overlay` (every relation) sees it
    move. A claim's window opening changes `current`, which decisions read:
    the warm model moves there."""
    takeover(store)
    store.assert_facts(
        [("claim", ("c1", "db", "role", "primary")), ("claim_valid", ("c1", T + 7200, T + 9000))], source="ops"
    )
    gate = Gate(POLICY, store)

    def same_as_fresh(request: Request, now: int) -> Decision:
        d = gate.decide(request, now)
        assert decision_json(d, program=POLICY) == decision_json(
            Gate(POLICY, store).decide(request, now), program=POLICY
        )
        return d

    same_as_fresh(bob(), T)
    rev = store.revision()
    assert same_as_fresh(bob("b2"), T + 3600 + 60).allowed  # past the lease's expiry
    assert not same_as_fresh(alice(), T + 3600 + 120).allowed
    assert gate.warm.cached(rev)[1].now == T  # not moved
    assert ("job", "bob") not in gate.overlay(None, T + 3600 + 120).tuples("live")
    assert gate.warm.cached(rev)[1].now == T + 3600 + 120  # moved for every relation when asked
    assert same_as_fresh(bob("b3", uses=("c1",)), T + 7300).allowed  # the claim is current: read by the decision
    assert gate.warm.cached(rev)[1].now == T + 7300


def test_overlay_leaves_the_warm_model_untouched(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    gate.check(alice(), T)
    model = gate.model(store.revision(), T)
    assert not model.query("request", ("a1", None, None, None, None))
    assert not model.query("forbid", ("a1", None, None))


def test_an_evaluation_error_denies_as_data(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    takeover(store)

    def broken(revision: int, now: int) -> Any:
        raise RuntimeError("disk on fire")

    gate = Gate(POLICY, store)
    monkeypatch.setattr(gate.warm, "model", broken)  # the warm model cannot be built
    d = gate.check(bob(), T)
    assert not d.allowed
    assert [(e.code, e.message) for e in d.errors] == [("RuntimeError", "disk on fire")]
    assert all(isinstance(e, Diagnostic) for e in d.errors)  # errors are diagnostics
    assert d.codes == ("RuntimeError",)
    assert store.decisions()[-1].payload["errors"] == [{"code": "RuntimeError", "message": "disk on fire"}]  # type: ignore[index]


def test_a_policy_without_gate_relations_is_refused(store: Store) -> None:
    with pytest.raises(GateError):
        Gate(compile_text('.decl p(x: symbol)\np("a").\n'), store)


def test_bad_requests_raise_gate_errors() -> None:
    with pytest.raises(GateError):
        Request("", "write", "job", "bob", 1)
    with pytest.raises(GateError):
        Request("a", "write", "job", "bob", "1")  # type: ignore[arg-type]
    with pytest.raises(GateError):
        Request.from_json({"id": "a", "kind": "k", "target": "t", "agent": "x", "epoch": 1, "colour": 2})
    r = Request(
        "a",
        "k",
        "t",
        "x",
        3,
        uses=("c",),
        needs=(("s", "at", "v"),),
        routes=("r",),
        requires=("p",),
        irreversible=True,
        key="k1",
    )
    assert Request.from_json(r.to_json()) == Request(
        "a",
        "k",
        "t",
        "x",
        3,
        scope="t",
        uses=("c",),
        needs=(("s", "at", "v"),),
        routes=("r",),
        requires=("p",),
        irreversible=True,
        key="k1",
    )
    assert r.facts()["request_route"] == {("a", "r", "t")}


@pytest.mark.parametrize(
    "request_",
    [
        Request("a", "k", "t", "x", 3, scope="t"),
        Request(
            "a",
            "k",
            "t",
            "x",
            3,
            scope="s",
            uses=("c",),
            needs=(("s", "at", "v"),),
            routes=("r",),
            requires=("p",),
            irreversible=True,
            key="k1",
        ),
    ],
)
def test_a_request_round_trips_through_its_facts(request_: Request) -> None:
    assert Request.from_facts(request_.facts()) == request_
    pairs = [(rel, t) for rel, ts in request_.facts().items() for t in ts]
    assert Request.from_facts(pairs) == request_


def test_facts_that_are_not_a_request_are_refused() -> None:
    head = ("request", ("a", "k", "t", "x", 3))
    with pytest.raises(GateError, match="exactly one"):
        Request.from_facts([head, ("request", ("b", "k", "t", "x", 3))])
    with pytest.raises(GateError, match="not a request-side relation"):
        Request.from_facts([head, ("grant", ("x", "k", 3))])
    with pytest.raises(GateError, match="first argument"):
        Request.from_facts([head, ("request_uses", ("b", "c"))])
    with pytest.raises(GateError, match="does not fit"):
        Request.from_facts([head, ("request_scope", ("a", "s1")), ("request_scope", ("a", "s2"))])


# ---------------------------------------------------------------- guard


def test_guard_runs_the_effect_between_receipts(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    calls: list[int] = []

    def effect() -> str:
        calls.append(store.revision())
        return "ok"

    result = gate.guard(bob(key="deploy:v2"), effect, T)
    assert result.decision.allowed and result.ran and result.completed and result.value == "ok"
    assert result.intent_seq is not None and result.outcome_seq is not None
    assert result.intent_seq <= calls[0] < result.outcome_seq
    facts = store.facts()
    assert ("b1", "intent", "bob", T) in facts["receipt"]
    assert ("b1", "outcome", "bob", T) in facts["receipt"]
    # the outcome makes the key a repeat
    again = gate.guard(bob("b2", key="deploy:v2"), lambda: calls.append(0), T)
    assert not again.ran and again.decision.codes == ("repeat",)
    assert len(calls) == 1


def test_a_blocked_check_never_calls_the_effect(store: Store) -> None:
    takeover(store)
    called: list[bool] = []
    result = Gate(POLICY, store).guard(alice(), lambda: called.append(True), T)
    assert not result.ran and not called and not result.decision.allowed
    assert "receipt" not in store.facts()


def test_the_fence_refuses_a_stale_epoch_at_the_effect(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    store.fence("job", 5)  # the resource has seen epoch 5 already
    called: list[bool] = []
    result = gate.guard(bob(), lambda: called.append(True), T)
    assert result.decision.allowed  # the policy did not know about epoch 5
    assert not result.ran and not called and result.error is not None
    assert result.error[0] == "stale_epoch"


def test_a_takeover_during_the_effect_refuses_the_outcome(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)

    def effect() -> str:
        store.fence("job", 3)  # a newer epoch takes the resource meanwhile
        return "late"

    result = gate.guard(bob(), effect, T)
    assert result.ran and not result.completed and result.value == "late"
    assert result.error is not None and result.error[0] == "stale_epoch"
    assert ("b1", "outcome", "bob", T) not in store.facts().get("receipt", set())


def test_a_failing_effect_leaves_only_the_intent(store: Store) -> None:
    takeover(store)

    def effect() -> None:
        raise ValueError("boom")

    result = Gate(POLICY, store).guard(bob(), effect, T)
    assert result.ran and not result.completed and result.error == ("ValueError", "boom")
    assert {r[1] for r in store.facts()["receipt"]} == {"intent"}


# ---------------------------------------------------------------- explanations


def blocked(store: Store) -> tuple[Decision, Any]:
    takeover(store)
    store.assert_facts(
        [
            ("claim", ("c1", "job", "state", "open")),
            ("claim_source", ("c1", "sweep", "observed")),
            ("claim_valid", ("c1", T - 7200, T - 3600)),
        ],
        source="gh-sweep",
        author="prime",
    )
    d = Gate(POLICY, store).check(Request("a9", "write", "job", "alice", 1, scope="deploy", uses=("c1",)), T)
    return d, annotator(store, d.revision)


def test_text_explanation_names_rule_facts_and_sources(store: Store) -> None:
    d, annotate = blocked(store)
    text = explain_text(d, annotate)
    assert text.startswith("DENIED a9")
    assert "forbid stale-epoch job" in text and "forbid unknown-evidence c1" in text
    assert "lease" in text and "r4 assert by lead via coordinator" in text
    assert "valid [2026-08-14T21:00:00Z, 2026-08-14T22:00:00Z)" in text
    assert "this request" in text


def test_json_and_dot_explanations(store: Store) -> None:
    d, annotate = blocked(store)
    data = decision_json(d, annotate, POLICY)
    json.dumps(data)
    assert {r["code"] for r in data["reasons"]} == {"stale-epoch", "unknown-evidence"}
    assert "annotation" in json.dumps(data)
    assert "2026-08-14T21:00:00Z" in json.dumps(data)  # times typed, not seconds
    proof = next(r.proof for r in d.reasons if r.code == "stale-epoch")
    dot = to_dot(proof, POLICY, annotate)
    assert dot.startswith("digraph proof {") and dot.rstrip().endswith("}")
    assert "stale-epoch" in dot and "->" in dot


def test_an_extended_warm_model_decides_like_a_fresh_one(store: Store) -> None:
    takeover(store)
    store.assert_facts(
        [
            ("claim", ("c1", "job", "state", "open")),
            ("claim_source", ("c1", "sweep", "observed")),
            ("claim_valid", ("c1", T - 7200, 2**53)),
            ("single_valued", ("state",)),
        ]
    )
    gate = Gate(POLICY, store)
    uses = Request("u1", "write", "job", "bob", 2, scope="deploy", uses=("c1",))
    assert gate.check(uses, T).allowed
    warm = gate.model(store.revision(), T)
    # facts that take things away (supersession, a stop) as well as add
    store.assert_facts(
        [
            ("claim", ("c2", "job", "state", "done")),
            ("claim_source", ("c2", "ci", "observed")),
            ("claim_valid", ("c2", T - 60, 2**53)),
            ("supersedes", ("c2", "c1")),
        ]
    )
    store.assert_facts([("stop", ("deploy", T - 30)), ("resume", ("deploy", 3)), ("grant", ("bob", "deploy", 3))])
    for r in (uses, bob("b9"), Request("b10", "write", "job", "bob", 3, scope="deploy")):
        extended = gate.decide(r, T)
        fresh = Gate(POLICY, store).decide(r, T)
        assert decision_json(extended) == decision_json(fresh)
    assert gate.model(store.revision(), T) is warm  # extended in place, not rebuilt
    assert gate.decide(uses, T).codes == ("owner-stop", "stale-epoch", "superseded-evidence")


def test_a_warm_model_is_ready_for_its_first_check(store: Store) -> None:
    takeover(store)
    gate = Gate(POLICY, store)
    model = gate.model(store.revision(), T)
    plans = dict(model.prepared.plans)
    gate.decide(
        bob(
            "w1",
            uses=("c1",),
            needs=(("job", "state", "open"),),
            routes=("r",),
            requires=("x",),
            irreversible=True,
            key="k",
        ),
        T,
    )
    gate.decide(alice(), T)
    assert model.prepared.plans == plans  # warming compiled every plan an overlay runs


def test_proofs_do_not_depend_on_fact_arrival_order(tmp_path: Path) -> None:
    facts = [
        ("grant", ("alice", "deploy", 1)),
        ("member", ("job", "deploy")),
        ("lease", ("job", "alice", 1, T - 3600)),
        ("grant", ("bob", "deploy", 2)),
        ("lease", ("job", "bob", 2, T + 3600)),
        ("single_valued", ("state",)),
    ]
    for i in range(4):  # conflicting claims: several equally short proofs
        facts += [
            ("claim", (f"c{i}", "job", "state", "open" if i % 2 else "done")),
            ("claim_source", (f"c{i}", "sweep", "observed")),
            ("claim_valid", (f"c{i}", T - 600 * (i + 1), 2**53)),
        ]
    answers = []
    for n, order in enumerate((facts, facts[::-1])):
        with open_store(str(tmp_path / f"order{n}.db"), schema_of(POLICY)) as s:
            gate = Gate(POLICY, s)
            for k in range(0, len(order), 3):  # in batches: the warm model is extended
                s.assert_facts(order[k : k + 3])
                gate.decide(alice(), T)
            got = []
            for r in (alice(), bob(uses=("c0", "c1")), bob("b2", needs=(("job", "state", "open"),))):
                d = gate.decide(r, T)
                data = decision_json(d)
                got.append((d.allowed, data["reasons"], data["flags"]))
            answers.append(got)
    assert answers[0] == answers[1]
    assert any(reason for _, reasons, _ in answers[0] for reason in reasons if "proof" in reason)
