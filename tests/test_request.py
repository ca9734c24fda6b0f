"""Request-side relations of the policy's own, separate epochs, and
`gate.guarded` as a decorator and a context manager."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.diagnostics import GateError, StaleEpochError
from ordinance.facts import Store, open_store, schema_of
from ordinance.gate import Blocked, Gate, Request, request_relations
from ordinance.rules import compile_text
from ordinance.testing import run_blocks
from ordinance.values import parse_instant

T = parse_instant("2026-08-14T23:00:00Z")
FORCE = """.include "continuity"
.decl request_force(a: symbol)                 // the user's own request attribute
.decl request_flag(a: symbol, name: symbol, n: number)
forbid(A, "force", T) :- request(A, _, T, _, _), request_force(A).
forbid(A, "flagged", N) :- request_flag(A, N, 3).
"""
POLICY = compile_text(FORCE)


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "r.db"), schema_of(POLICY)) as s:
        s.assert_facts([("grant", ("alice", "repo", 1)), ("member", ("main", "repo")), ("member", ("dev", "repo"))])
        yield s


def test_request_side_relations_are_declared_by_the_policy() -> None:
    names = request_relations(POLICY)
    assert {"request", "request_scope", "request_lease", "request_force", "request_flag"} <= set(names)
    assert names["request_flag"] == 3
    assert "request_in" not in names  # derived by a rule: not request-side
    assert "grant" not in names


def test_the_gate_reads_an_attribute_of_the_users_own(store: Store) -> None:
    gate = Gate(POLICY, store)
    plain = Request("a1", "push", "main", "alice", 1, scope="repo")
    forced = Request(
        "a2", "push", "main", "alice", 1, scope="repo", attributes=(("request_force", ()), ("request_flag", ("x", 3)))
    )
    assert gate.check(plain, T).allowed
    d = gate.check(forced, T)
    assert not d.allowed and d.codes == ("flagged", "force")
    # logged and replayed with its attributes
    assert gate.replay(store.events(kinds=["decision"])[-1]) == d


def test_an_attribute_is_never_a_store_relation_or_undeclared(store: Store) -> None:
    with pytest.raises(GateError, match="not a request attribute"):
        Request("a1", "push", "main", "alice", 1, attributes=(("grant", ("alice", "repo")),))
    d = Gate(POLICY, store).check(
        Request("a1", "push", "main", "alice", 1, scope="repo", attributes=(("request_nope", ()),)), T
    )
    assert not d.allowed and d.errors and "request_nope" in d.errors[0].message
    d = Gate(POLICY, store).check(
        Request("a1", "push", "main", "alice", 1, scope="repo", attributes=(("request_flag", ("x",)),)), T
    )
    assert not d.allowed and d.errors and "request_flag` used with 2 arguments, declared with 3" in d.errors[0].message


def test_attributes_round_trip_through_json_and_facts() -> None:
    r = Request(
        "a1",
        "push",
        "main",
        "alice",
        1,
        scope="main",
        lease_epoch=2,
        attributes=(("request_flag", ("x", 3)), ("request_force", ())),
    )
    assert Request.from_json(r.to_json()) == r
    assert Request.from_facts(r.facts()) == r
    assert r.facts()["request_lease"] == {("a1", 2)}


def test_separate_epochs_let_a_takeover_pass_under_a_repo_wide_grant(store: Store) -> None:
    store.assert_facts(
        [
            ("lease", ("w1", "alice", 1, T - 60)),
            ("lease", ("w1", "bob", 2, T + 3600)),
            ("grant", ("bob", "repo", 1)),
            ("member", ("w1", "repo")),
        ]
    )
    gate = Gate(POLICY, store)
    assert gate.check(Request("b1", "write", "w1", "bob", 1, scope="repo", lease_epoch=2), T).allowed
    one = gate.check(Request("b2", "write", "w1", "bob", 1, scope="repo"), T)
    assert not one.allowed and "stale-epoch" in one.codes
    two = gate.check(Request("b3", "write", "w1", "bob", 2, scope="repo"), T)
    assert not two.allowed and "no-grant" in two.codes
    # alice, still at lease epoch 1, is refused however her grant stands
    old = gate.check(Request("a1", "write", "w1", "alice", 1, scope="repo"), T)
    assert not old.allowed and "stale-epoch" in old.codes


def test_check_and_given_feed_the_users_attribute(tmp_path: Path) -> None:
    policy = tmp_path / "policy.rules"
    policy.write_text(FORCE)
    env = {"ORDINANCE_POLICY": str(policy), "ORDINANCE_DB": str(tmp_path / "o.db")}
    runner = CliRunner()
    assert runner.invoke(cli, ["assert", 'grant("alice", "main", 1).'], env=env).exit_code == 0
    ok = runner.invoke(cli, ["check", 'request("a1", "push", "main", "alice", 1).', "--now", "2026-08-14"], env=env)
    assert ok.exit_code == 0, ok.output
    forced = runner.invoke(
        cli,
        ["check", 'request("a2", "push", "main", "alice", 1).', 'request_force("a2").', "--now", "2026-08-14"],
        env=env,
    )
    assert forced.exit_code == 1 and "force" in forced.output
    why = runner.invoke(
        cli,
        [
            "why",
            'forbid("a3", "force", "main")',
            "--given",
            'request("a3", "push", "main", "alice", 1). request_force("a3").',
            "--now",
            "2026-08-14",
        ],
        env=env,
    )
    assert why.exit_code == 0 and "request_force" in why.output
    refused = runner.invoke(cli, ["assert", 'request_force("a2").'], env=env)
    assert refused.exit_code != 0


def test_test_blocks_default_the_request_like_the_gate(tmp_path: Path) -> None:
    policy = tmp_path / "p.rules"
    policy.write_text(
        FORCE
        + """
test "the scope defaults to the target, the lease epoch to the epoch" {
  grant("alice", "main", 1).
  request("a1", "push", "main", "alice", 1). request_force("a1").
  now 2026-08-14T23:00:00Z.
  expect permit("a1").
  expect request_lease("a1", 1).
  expect forbid("a1", "force", "main").
}
"""
    )
    results = run_blocks(str(policy))
    assert [r.passed for r in results] == [True], [r.failed for r in results]


def test_guarded_as_a_context_manager_writes_both_receipts(store: Store) -> None:
    gate = Gate(POLICY, store)
    ran = []
    with gate.guarded(Request("a1", "push", "main", "alice", 1, scope="repo"), T) as g:
        ran.append(1)
    assert ran == [1] and g.decision is not None and g.decision.allowed
    kinds = [e.args[1] for e in store.events(kinds=["receipt"])]
    assert kinds == ["intent", "outcome"] and g.outcome_seq is not None


def test_guarded_blocks_before_the_effect(store: Store) -> None:
    gate = Gate(POLICY, store)
    with pytest.raises(Blocked) as info:
        with gate.guarded(Request("a1", "push", "main", "mallory", 1, scope="repo"), T):
            raise AssertionError("the effect must not run")
    assert info.value.code == "blocked" and "no-grant" in info.value.decision.codes
    assert store.events(kinds=["receipt"]) == []


def test_guarded_as_a_decorator_builds_the_request_from_arguments(store: Store) -> None:
    gate = Gate(POLICY, store)

    @gate.guarded(
        lambda branch, force=False: Request(
            f"push-{branch}",
            "push",
            branch,
            "alice",
            1,
            scope="repo",
            attributes=(("request_force", ()),) if force else (),
        ),
        T,
    )
    def push(branch: str, force: bool = False) -> str:
        return f"pushed {branch}"

    assert push("main") == "pushed main"
    with pytest.raises(Blocked):
        push("dev", force=True)
    assert [e.args[0] for e in store.events(kinds=["receipt"])] == ["push-main", "push-main"]


def test_guarded_is_fenced_at_the_lease_epoch(store: Store) -> None:
    gate = Gate(POLICY, store)
    store.fence("main", 2)
    with pytest.raises(Blocked) as info:
        with gate.guarded(Request("a1", "push", "main", "alice", 1, scope="repo"), T):
            raise AssertionError("the effect must not run")
    assert info.value.code == "stale_epoch"
    with pytest.raises(StaleEpochError):  # authority lost during the effect: no outcome
        with gate.guarded(Request("a2", "push", "dev", "alice", 1, scope="repo"), T):
            store.fence("dev", 5)
    assert [e.args[1] for e in store.events(kinds=["receipt"])] == ["intent"]


def test_log_logs_each_decision_as_check_does(store: Store) -> None:
    gate = Gate(POLICY, store)
    asks = [(Request(f"a{i}", "push", "main", "alice" if i % 2 else "mallory", 1, scope="repo"), T) for i in range(4)]
    decisions = gate.log(asks)
    assert [d.allowed for d in decisions] == [False, True, False, True]
    logged = store.events(kinds=["decision"])
    assert [e.seq for e in logged] == [d.seq for d in decisions] == list(range(4, 8))
    for event, decision in zip(logged, decisions):
        unlogged = {k: v for k, v in decision.payload().items() if k != "seq"}  # as `check` logs it
        assert event.payload == unlogged and event.author == decision.request.agent
        assert event.source == "gate"
        assert gate.replay(event) == decision
    single = gate.check(Request("a9", "push", "main", "alice", 1, scope="repo"), T)
    assert store.events(kinds=["decision"])[-1].payload == {k: v for k, v in single.payload().items() if k != "seq"}
    assert single.seq == 8


def test_the_server_and_mcp_feed_the_users_attribute(tmp_path: Path) -> None:
    import asyncio

    from mcp import Client

    from ordinance.serve import Principal, Service
    from ordinance.serve.mcp import create_mcp
    from served import AGENT, OWNER, Served, write_tokens

    (tmp_path / "policy.rules").write_text(FORCE)
    db = str(tmp_path / "o.db")
    plain = {"id": "s1", "kind": "push", "target": "main", "epoch": 1, "scope": "repo"}
    forced = {**plain, "id": "s2", "attributes": {"request_force": [[]]}}
    with Served(tmp_path / "policy.rules", db, write_tokens(tmp_path / "tokens.toml")) as server:
        granted = server.post(
            "/assert", OWNER, json={"text": 'grant("claude-code", "repo", 1). member("main", "repo").'}
        )
        assert granted.status_code == 200
        assert server.post("/check", AGENT, json={"request": plain, "now": "2026-08-14T23:00:00Z"}).json()["allowed"]
        refused = server.post("/check", AGENT, json={"request": forced, "now": "2026-08-14T23:00:00Z"}).json()
        assert refused["allowed"] is False and [r["code"] for r in refused["reasons"]] == ["force"]
        assert refused["request"]["attributes"] == {"request_force": [[]]}
    with open_store(db, schema_of(POLICY)) as store:
        server_mcp = create_mcp(Service(POLICY, store), Principal("claude-code", clock=True))

        async def ask(request: dict[str, object]) -> Any:
            async with Client(server_mcp) as c:
                result = await c.call_tool("check", {"request": request, "now": "2026-08-14T23:00:00Z"})
                assert not result.is_error, result.content
                return result.structured_content

        assert asyncio.run(ask({**plain, "id": "m1"}))["allowed"] is True
        out = asyncio.run(ask({**forced, "id": "m2"}))
        assert out["allowed"] is False and [r["code"] for r in out["reasons"]] == ["force"]
        logged = store.events(kinds=["decision"])
        assert [e.payload["request"].get("attributes") for e in logged] == [
            None,
            {"request_force": [[]]},
            None,
            {"request_force": [[]]},
        ]
