"""The gate as a boundary against an agent's token: the clock, the scope,
the write policy and the fences belong to the owner, on every way in."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Iterator

import pytest
from mcp import Client

from ordinance.diagnostics import OrdinanceError
from ordinance.facts import Store, open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service, Tokens
from ordinance.serve.mcp import create_mcp
from ordinance.serve.service import Forbidden

POLICY = compile_text('.include "continuity"\n')
T = 1796126400  # 2026-12-01T12:00:00Z
LATER = "2026-12-09T00:00:00Z"
ALICE = Principal("alice")
RIG = Principal("rig", clock=True)
OWNER = Principal("jw", owner=True)


@pytest.fixture()
def service(store_url: str) -> Iterator[Service]:
    with open_store(store_url, schema_of(POLICY)) as store:
        yield Service(POLICY, store)


def ask(target: str = "w1", **more: Any) -> dict[str, Any]:
    return {"kind": "write", "target": target, "epoch": 1, **more}


def logged(store: Store) -> list[dict[str, Any]]:
    return [dict(e.payload or {}) for e in store.events(kinds=["decision"])]


# ---------------------------------------------------------------- the clock


def test_a_now_from_a_principal_without_the_clock_is_refused(service: Service) -> None:
    service.store.assert_facts([("grant", ("alice", "w1", 1)), ("stop", ("w1", T))])
    for body in ({"request": ask(), "now": LATER}, {"request": ask(), "now": "0001-01-01T00:00:00Z"}):
        with pytest.raises(Forbidden) as info:
            service.check(ALICE, body)
        assert info.value.code == "clock_not_granted" and "`alice`" in str(info.value)
    with pytest.raises(Forbidden) as info:  # the owner too: the clock is given, never assumed
        service.check(OWNER, {"request": ask(), "now": LATER})
    assert info.value.code == "clock_not_granted"
    assert logged(service.store) == []  # nothing decided, nothing logged
    # without a `now`, the server's clock decides: the stop holds
    out = service.check(ALICE, {"request": ask()})
    assert out["allowed"] is False and "owner-stop" in {r["code"] for r in out["reasons"]}
    assert out["clock"] == "server" and logged(service.store)[0]["clock"] == "server"


def test_reads_with_a_request_take_no_now_without_the_clock(service: Service) -> None:
    for read in (service.query, service.why, service.why_not):
        key = "pattern" if read == service.query else "fact"
        with pytest.raises(Forbidden) as info:
            read(ALICE, {key: 'permit("q1")', "request": ask(id="q1"), "now": LATER})
        assert info.value.code == "clock_not_granted"
    # a read of the store alone may ask about any time
    assert service.query(ALICE, {"pattern": "grant(A, S, E)", "now": LATER})["holds"] is False


def test_a_principal_given_the_clock_decides_at_its_now_and_the_log_says_whose(service: Service) -> None:
    service.store.assert_facts([("grant", ("rig", "w1", 1)), ("stop", ("w1", T))])
    before = service.check(RIG, {"request": ask(id="r1"), "now": "2026-11-30T00:00:00Z"})
    assert before["allowed"] is True and before["clock"] == "principal:rig"
    (event,) = service.store.events(kinds=["decision"])
    assert event.payload is not None and event.payload["clock"] == "principal:rig"
    replayed = Gate(POLICY, service.store).replay(event)
    assert replayed.payload() == event.payload  # replay reproduces it, clock and all


def test_the_library_and_the_cli_keep_their_now_as_the_owner(service: Service) -> None:
    service.store.assert_facts([("grant", ("alice", "w1", 1))])
    decision = Gate(POLICY, service.store).check(Request("l1", "write", "w1", "alice", 1), T)
    assert decision.allowed and decision.clock == "owner" and logged(service.store)[0]["clock"] == "owner"


def test_the_clock_in_the_tokens_file_is_true_or_false() -> None:
    tokens = Tokens.from_data({"principal": [{"name": "r", "token": "x", "clock": True}, {"name": "a", "token": "y"}]})
    assert tokens.principal("Bearer x").clock and not tokens.principal("Bearer y").clock
    with pytest.raises(OrdinanceError) as info:
        Tokens.from_data({"principal": [{"name": "r", "token": "x", "clock": "yes"}]})
    assert info.value.code == "bad_tokens" and "`clock`" in str(info.value)


def test_the_mcp_check_refuses_a_now_without_the_clock(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "m.db"), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("alice", "w1", 1))])
        server = create_mcp(Service(POLICY, store), ALICE)

        async def go() -> tuple[Any, Any]:
            async with Client(server) as c:
                refused = await c.call_tool("check", {"request": ask(), "now": LATER})
                served = await c.call_tool("check", {"request": ask()})
                return refused, served

        refused, served = asyncio.run(go())
        assert refused.is_error and "error[clock_not_granted]" in refused.content[0].text
        assert not served.is_error and served.structured_content["clock"] == "server"


def test_the_http_check_refuses_a_now_without_the_clock(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from ordinance.serve.app import create_app

    with open_store(str(tmp_path / "h.db"), schema_of(POLICY)) as store:
        tokens = Tokens.from_data({"principal": [{"name": "alice", "token": "a"}]})
        with TestClient(create_app(Service(POLICY, store), tokens)) as client:
            auth = {"authorization": "Bearer a"}
            r = client.post("/check", headers=auth, json={"request": ask(), "now": LATER})
            assert r.status_code == 403 and r.json()["error"]["code"] == "clock_not_granted"
            r = client.post("/why", headers=auth, json={"fact": 'permit("x")', "request": ask(id="x"), "now": LATER})
            assert r.status_code == 403 and r.json()["error"]["code"] == "clock_not_granted"
            r = client.post("/check", headers=auth, json={"request": ask()})
            assert r.status_code == 200 and r.json()["clock"] == "server"


# ---------------------------------------------------------------- least privilege for writes


@pytest.mark.parametrize(
    "fact",
    [
        ("grant", ("alice", "prod", 1)),
        ("lease", ("w1", "alice", 99, 2**53)),  # a lease at epoch 99 locking everyone out
        ("failure_domain", ("alice", "elsewhere")),
        ("observation", ("x", "alice", T, "w1", "ok")),
        ("member", ("prod", "sandbox")),
        ("settled", ("q", "yes")),
        ("stop", ("w1", T)),
    ],
)
def test_authority_is_the_owners(service: Service, fact: tuple[str, tuple[Any, ...]]) -> None:
    with pytest.raises(Forbidden) as info:
        service.write(ALICE, [fact])
    assert info.value.code == "may_not_assert"
    assert service.write(OWNER, [fact])["written"] == 1


def test_a_fact_bound_to_its_writer_is_refused_in_another_name(service: Service) -> None:
    for fact in (("receipt", ("x", "outcome", "bob", T)), ("claim_source", ("c1", "bob", "observed"))):
        with pytest.raises(Forbidden) as info:
            service.write(ALICE, [fact])
        assert info.value.code == "bound_to_writer" and "`bob`" in str(info.value)
    assert service.write(ALICE, [("claim_source", ("c1", "alice", "observed"))])["written"] == 1
    assert service.write(OWNER, [("claim_source", ("c2", "bob", "observed"))])["written"] == 1


def test_receipts_come_from_the_gate_and_its_writer(service: Service) -> None:
    with pytest.raises(Forbidden) as info:  # an intent is the gate's, when it allows
        service.write(ALICE, [("receipt", ("x", "intent", "alice", T))])
    assert info.value.code == "ungated_intent"
    with pytest.raises(Forbidden) as info:  # an outcome needs the writer's intent on record
        service.write(ALICE, [("receipt", ("x", "outcome", "alice", T))])
    assert info.value.code == "no_intent"
    model = service.gate.model(service.store.revision(), T)
    assert not model.contains("done", ("x",))


def test_an_observer_writes_only_its_own_observations_once_the_owner_declares_it(service: Service) -> None:
    ci = Principal("ci")
    readback = ("observation", ("x", "ci", T, "w1", "ok"))
    with pytest.raises(Forbidden):
        service.write(ci, [readback])
    service.write(OWNER, [("observer", ("ci",)), ("failure_domain", ("ci", "ci-cluster"))])
    assert service.write(ci, [readback])["written"] == 1
    with pytest.raises(Forbidden) as info:
        service.write(ci, [("observation", ("x", "gh", T, "w1", "ok"))])
    assert info.value.code == "bound_to_writer"
    with pytest.raises(Forbidden):  # its failure domain is the owner's to say
        service.write(ci, [("failure_domain", ("ci", "elsewhere"))])


# ---------------------------------------------------------------- leases through a gated action

UNTIL = T + 3600


def test_a_lease_is_taken_by_the_policy_and_once(service: Service) -> None:
    service.store.assert_facts([("grant", ("rig", "w1", 1)), ("grant", ("bob", "w1", 1))])
    bob = Principal("bob", clock=True)
    now = "2026-12-01T12:00:00Z"
    take = {"action": "take", "work": "w1", "epoch": 1, "until": "2026-12-01T13:00:00Z", "now": now}
    first = service.lease(RIG, take)
    assert first["taken"] and first["epoch"] == 1
    assert service.store.facts()["lease"] == {("w1", "rig", 1, UNTIL)}
    # another agent's live lease: refused by the policy, nothing written
    refused = service.lease(bob, take)
    assert not refused["taken"] and "lease-held" in {r["code"] for r in refused["decision"]["reasons"]}
    assert len(service.store.facts()["lease"]) == 1
    # no grant, no lease
    nogrant = service.lease(Principal("carol", clock=True), take)
    assert not nogrant["taken"] and "no-grant" in {r["code"] for r in nogrant["decision"]["reasons"]}
    # released, the work is free, and the next take is at a newer epoch (the old one is stale)
    assert service.lease(RIG, {"action": "release", "work": "w1", "now": now})["released"] == "w1"
    second = service.lease(bob, take)
    assert second["taken"] and second["epoch"] == 2, second["decision"]["reasons"]
    with pytest.raises(OrdinanceError) as info:
        service.lease(RIG, {"action": "release", "work": "w1"})
    assert info.value.code == "no_lease"
    assert [e.payload["request"]["kind"] for e in service.store.events(kinds=["decision"]) if e.payload] == [
        "lease"
    ] * 4


def test_two_gates_racing_for_one_lease_get_one(store_url: str) -> None:
    from ordinance.gate.lease import take

    with open_store(store_url, schema_of(POLICY)) as a, open_store(store_url, schema_of(POLICY)) as b:
        a.assert_facts([("grant", ("alice", "w1", 1)), ("grant", ("bob", "w1", 1))])
        ga, gb = Gate(POLICY, a), Gate(POLICY, b)
        ga.decide(Request("x", "lease", "w1", "alice", 1), T), gb.decide(Request("y", "lease", "w1", "bob", 1), T)
        # both decided at the same revision; the second append finds the facts moved and decides again
        first = take(ga, "alice", "w1", 1, UNTIL, T)
        second = take(gb, "bob", "w1", 1, UNTIL, T)
        assert first.taken and not second.taken and "lease-held" in second.decision.codes
        assert a.facts()["lease"] == {("w1", "alice", 1, UNTIL)}


def test_the_lease_cli_takes_and_releases(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ordinance.cli import cli

    policy = tmp_path / "policy.rules"
    policy.write_text('.include "continuity"\n')
    env = {"ORDINANCE_DB": str(tmp_path / "o.db"), "ORDINANCE_POLICY": str(policy)}
    run = CliRunner()
    assert run.invoke(cli, ["assert", 'grant("alice", "w1", 1).', 'grant("bob", "w1", 1).'], env=env).exit_code == 0
    args = ["lease", "take", "w1", "--agent", "alice", "--epoch", "1", "--until", "2026-12-01T13:00:00Z"]
    out = run.invoke(cli, [*args, "--now", "2026-12-01T12:00:00Z"], env=env)
    assert out.exit_code == 0 and "took the lease of `w1` for `alice` at epoch 1" in out.output, out.output
    again = run.invoke(cli, [*args[:4], "bob", *args[5:], "--now", "2026-12-01T12:00:00Z"], env=env)
    assert again.exit_code == 1 and "lease-held" in again.output, again.output
    out = run.invoke(cli, ["lease", "release", "w1", "--agent", "alice", "--now", "2026-12-01T12:30:00Z"], env=env)
    assert out.exit_code == 0 and "released" in out.output, out.output


# ---------------------------------------------------------------- every write fenced


def test_after_a_takeover_the_losers_receipt_is_refused_on_every_write_path(service: Service) -> None:
    from ordinance.diagnostics import StaleEpochError
    from ordinance.gate.guard import intent_batch

    service.store.assert_facts([("grant", ("alice", "w1", 1)), ("grant", ("bob", "w1", 1))])
    alice, bob = Principal("alice"), Principal("bob")
    lease = {"action": "take", "work": "w1", "epoch": 1, "until": "2100-01-01T00:00:00Z"}
    assert service.lease(alice, lease)["epoch"] == 1
    mine = Request("a1", "write", "w1", "alice", 1, lease_epoch=1)
    decision, refused = service.check_then(mine, T, lambda d: intent_batch(service.gate, mine, T))
    assert decision.allowed and refused is None  # alice's intent, fenced at (w1, 1)
    # the owner ends alice's lease; bob takes over at epoch 2
    service.lease(alice, {"action": "release", "work": "w1"})
    assert service.lease(bob, lease)["epoch"] == 2
    outcome = ("receipt", ("a1", "outcome", "alice", T + 60))
    with pytest.raises(StaleEpochError):
        service.write(alice, [outcome])
    with pytest.raises(StaleEpochError):
        service.load(alice, '{"relation": "receipt", "args": ["a1", "outcome", "alice", %d]}\n' % (T + 60))
    model = service.gate.model(service.store.revision(), T + 120)
    assert not model.contains("done", ("a1",))
    assert [e.args[1] for e in service.store.events(kinds=["receipt"])] == ["intent"]


# ---------------------------------------------------------------- a decision is logged against the store it was made on

RACER = """
import sys
from ordinance.facts import open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
policy = compile_text('.include "continuity"\\n')
with open_store(sys.argv[1], schema_of(policy)) as store:
    gate = Gate(policy, store)
    denied = 0
    for n in range(4000):
        if not gate.check(Request(f"{sys.argv[2]}-{n}", "write", "w1", "alice", 1), int(sys.argv[3])).allowed:
            denied += 1
            if denied >= 15:
                break
"""


def test_no_allow_is_logged_after_a_stop_from_another_process(store_url: str) -> None:
    import subprocess
    import sys
    import time as clock

    with open_store(store_url, schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("alice", "w1", 1))])
        racers = [
            subprocess.Popen([sys.executable, "-c", RACER, store_url, f"r{i}", str(T)], stderr=subprocess.PIPE)
            for i in range(2)
        ]
        try:
            deadline = clock.monotonic() + 120
            while len(store.decisions()) < 10 and clock.monotonic() < deadline:
                clock.sleep(0.02)
            stopped = store.assert_facts([("stop", ("w1", T - 1))], author="jw")
        finally:
            for racer in racers:
                _, err = racer.communicate(timeout=300)
                assert racer.returncode == 0, err.decode()
        logged = [(e.seq, dict(e.payload or {})) for e in store.events(kinds=["decision"])]
    before = [p for s, p in logged if s < stopped]
    after = [p for s, p in logged if s > stopped]
    assert before and all(p["allowed"] for p in before)
    assert len(after) >= 30 and not any(p["allowed"] for p in after)  # every one logged after the stop denies
    assert all(p["revision"] >= stopped for p in after if p["allowed"] is False and not p["errors"])


def test_the_directories_above_a_target_are_worked_out_never_given() -> None:
    from ordinance.diagnostics import GateError
    from ordinance.gate.request import places, under

    assert under("/p/src/x") == ("/", "/p", "/p/src") and under("repo/w1") == ("repo",)
    assert under("/p/../etc") == under("/p/./x") == under("/p//x") == under("prod") == ()
    assert places("/p/src/x") == ("/p/src/x", "/", "/p", "/p/src") and places("/p/../etc") == ("/p/../etc",)
    with pytest.raises(GateError):  # a caller cannot say where its target lies
        Request("a1", "write", "/etc/x", "alice", 1, attributes=(("request_at", ("/p",)),))


def test_the_mcp_lease_tool_takes_through_the_gate(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "m.db"), schema_of(POLICY)) as store:
        store.assert_facts([("grant", ("alice", "w1", 1))])
        server = create_mcp(Service(POLICY, store), ALICE)

        async def go() -> tuple[Any, Any]:
            async with Client(server) as c:
                taken = await c.call_tool(
                    "lease", {"action": "take", "work": "w1", "epoch": 1, "until": "2100-01-01T00:00:00Z"}
                )
                forged = await c.call_tool("assert", {"text": 'lease("w1", "alice", 99, 2100-01-01T00:00:00Z).'})
                return taken, forged

        taken, forged = asyncio.run(go())
        assert not taken.is_error and taken.structured_content["taken"] and taken.structured_content["epoch"] == 1
        assert forged.is_error and "error[may_not_assert]" in forged.content[0].text
        assert {row[2] for row in store.facts()["lease"]} == {1}
