"""Replaying the decision log from Python: `Gate.replay` (one decision, what-if
mode, another revision) and `replay_log` (the whole log), which `ordinance
replay` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from ordinance.diagnostics import GateError, StoreError
from ordinance.facts import Store, open_store, schema_of
from ordinance.gate import Gate, Replayed, Request, replay_log
from ordinance.rules import compile_text
from ordinance.values import parse_instant

POLICY = compile_text('.include "continuity"\n')
# the same policy, and a forbid of every write to `job` on top
STRICT = compile_text('.include "continuity"\nforbid(A, "no-writes", "job") :- request(A, "write", "job", _, _).\n')
T = parse_instant("2026-08-14T23:00:00Z")


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(str(tmp_path / "replay.db"), schema_of(POLICY)) as s:
        yield s


def bob(id: str) -> Request:
    return Request(id, "write", "job", "bob", 2, scope="deploy")


def history(store: Store) -> list[int]:
    """bob is granted, decides twice, loses the grant, decides again;
    returns the decisions' seqs."""
    store.assert_facts(
        [("grant", ("bob", "deploy", 2)), ("lease", ("job", "bob", 2, T + 3600)), ("member", ("job", "deploy"))]
    )
    gate = Gate(POLICY, store)
    seqs = [gate.check(bob("b1"), T).seq, gate.check(bob("b2"), T + 60).seq]
    store.assert_facts([("revoke", ("bob", "deploy", 2))])
    seqs.append(gate.check(bob("b3"), T + 120).seq)
    return [s for s in seqs if s is not None]


def test_the_log_replays_the_same_under_its_own_policy(store: Store) -> None:
    seqs = history(store)
    rows = list(replay_log(Gate(POLICY, store)))
    assert all(isinstance(r, Replayed) for r in rows)
    assert [r.seq for r in rows] == seqs
    assert all(r.same for r in rows)
    assert [r.again.allowed for r in rows] == [True, True, False]
    # each decided again at its own revision, and reported at it
    assert [r.again.revision for r in rows] == [r.logged["revision"] for r in rows]
    assert rows[2].again.codes == ("no-grant", "revoked")


def test_another_policy_needs_what_if(store: Store) -> None:
    history(store)
    event = store.decisions()[0]
    with pytest.raises(GateError, match="what_if"):
        Gate(STRICT, store).replay(event)
    with pytest.raises(GateError):
        list(replay_log(Gate(STRICT, store)))
    again = Gate(STRICT, store).replay(event, what_if=True)
    assert not again.allowed and again.codes == ("no-writes",)
    assert again.policy_hash == STRICT.source_hash != event.payload["policy_hash"]  # type: ignore[index]
    rows = list(replay_log(Gate(STRICT, store), what_if=True))
    assert [r.same for r in rows] == [False, False, False]  # the last was denied, now for another reason too
    assert [r.again.codes for r in rows] == [("no-writes",), ("no-writes",), ("no-grant", "no-writes", "revoked")]


def test_replay_at_another_revision(store: Store) -> None:
    seqs = history(store)
    gate = Gate(POLICY, store)
    first = store.decisions()[0]
    # the first decision against the store after the revoke: denied, reported at that revision
    late = gate.replay(first, revision=seqs[-1])
    assert not late.allowed and late.codes == ("no-grant", "revoked") and late.revision == seqs[-1]
    # before anything was asserted there is no grant
    early = [r.again.codes for r in replay_log(gate, revision=0)]
    assert early == [("no-grant",)] * 3
    with pytest.raises(StoreError, match="revision 99"):
        gate.replay(first, revision=99)
    with pytest.raises(StoreError, match="revision 99"):
        list(replay_log(gate, revision=99))


def test_decisions_between_two_fact_changes_share_a_model(store: Store) -> None:
    seqs = history(store)
    gate = Gate(POLICY, store)
    # b1 and b2 (at T and T + 60) were logged between the same two fact changes
    a, b = (gate.replay(e) for e in store.decisions()[:2])
    assert (a.revision, b.revision) == (seqs[0] - 1, seqs[1] - 1)
    assert list(gate.warm.models) == [3]  # one warm model, at the grant's revision (a batch of three facts)
