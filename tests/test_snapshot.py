"""Gate snapshots (gate/snapshot.py): a fresh gate starts from the last warm
model written beside the store, and decides exactly as a fresh evaluation;
a snapshot that is stale, corrupted, truncated, tampered with, foreign or
made for other facts is ignored (never unmarshalled unless its seal holds)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance import sealed
from ordinance.engine import snapshot as model_snapshot
from ordinance.explain import decision_json
from ordinance.facts import Event, kind_of, open_store, schema_of
from ordinance.fuzz import Ask, Fact
from ordinance.fuzz import strategies as fuzz
from ordinance.gate import Gate, Request
from ordinance.gate.snapshot import snapshot_path
from ordinance.rules import compile_text

POLICY = compile_text('.include "continuity"\n')
NOW = 1_786_748_400  # 2026-08-14T23:00:00Z


def _decision(d: Any) -> Any:
    out = decision_json(d, program=POLICY)  # with every reason's proof
    out.pop("seq", None)
    return out


def _world(store: Any, *, extra: int = 0) -> None:
    facts = [
        ("grant", ("alice", "repo", 1)),
        ("grant", ("bob", "repo", 2)),
        ("revoke", ("bob", "repo", 2)),
        ("lease", ("w1", "carol", 1, NOW + 600)),
        ("stop", ("ops", NOW + 3600)),
        ("claim", ("c1", "db", "role", "primary")),
        ("claim_source", ("c1", "ops", "observed")),
        ("claim_valid", ("c1", NOW - 60, NOW + 1800)),
    ] + [("grant", (f"agent{i}", "repo", 1)) for i in range(extra)]
    store.append([Event(kind_of(r), r, a, "t", "t") for r, a in facts])


ASKS = [
    Request("a1", "write", "w1", "alice", 1, scope="repo", uses=("c1",)),
    Request("b1", "write", "w2", "bob", 2, scope="repo"),
    Request("c1", "deploy", "ops", "carol", 1),
]


def _same_as_fresh(store: Any, path: Path, nows: list[int], *, restored: int | None) -> None:
    gate = Gate(POLICY, store, snapshot=path)
    for now in nows:
        for request in ASKS:
            assert _decision(gate.decide(request, now)) == _decision(Gate(POLICY, store).decide(request, now))
    assert gate.warm.restored_from == restored


@pytest.fixture
def store(store_url: str) -> Any:
    with open_store(store_url, schema_of(POLICY)) as s:
        _world(s)
        yield s


def _saved(store: Any, path: Path, now: int = NOW) -> int:
    gate = Gate(POLICY, store, snapshot=path)
    gate.decide(ASKS[0], now)
    assert gate.warm.save_snapshot()
    return store.revision()


def test_the_default_place_is_beside_a_sqlite_file_or_in_the_cache_for_postgresql(store, store_url):
    where = snapshot_path(store)
    assert where is not None
    if store_url.startswith("postgres"):
        assert where.parent == sealed.cache_dir() / "snapshots"
        assert "@" not in where.name and where.suffix == ".snapshot"
    else:
        assert str(where) == store_url + ".snapshot"
    with open_store(":memory:", schema_of(POLICY)) as private:
        assert snapshot_path(private) is None
    gate = Gate(POLICY, store, snapshot=True)
    gate.decide(ASKS[0], NOW)
    assert gate.warm.save_snapshot() and where.exists()
    assert (where.stat().st_mode & 0o777) == 0o600
    again = Gate(POLICY, store, snapshot=True)
    again.decide(ASKS[1], NOW)
    assert again.warm.restored_from == store.revision()


def test_a_restored_gate_extends_the_snapshot_with_later_facts_and_purges(store, tmp_path):
    path = tmp_path / "s.snapshot"
    saved = _saved(store, path)
    _same_as_fresh(store, path, [NOW], restored=saved)
    seq = store.append([Event("assert", "revoke", ("alice", "repo", 1), "t", "t")])
    store.append([Event("assert", "grant", ("carol", "ops", 1), "t", "t")])
    _same_as_fresh(store, path, [NOW, NOW + 700], restored=saved)
    store.purge([seq], "retention")
    _same_as_fresh(store, path, [NOW + 5, NOW + 4000, NOW - 100], restored=saved)


def test_the_clock_moves_a_restored_model_as_it_moves_a_built_one(store, tmp_path):
    path = tmp_path / "s.snapshot"
    saved = _saved(store, path, NOW)
    # past the lease expiry, the stop, the claim's window; and back before them
    _same_as_fresh(store, path, [NOW + 601, NOW + 3601, NOW + 1801, NOW - 3600, NOW], restored=saved)


def _damaged(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        del data[len(data) // 2 :]
    elif how == "empty":
        data = bytearray()
    elif how == "flipped":
        data[-10] ^= 0x40
    elif how == "header":  # a header edited to claim another revision, seal left as it was
        start = data.index(b"{")
        end = data.index(b"}", start)
        head = json.loads(bytes(data[start : end + 1]))
        head["revision"] = 1
        data[start : end + 1] = json.dumps(head, sort_keys=True).encode().ljust(end + 1 - start)
    elif how == "garbage":
        data = bytearray(os.urandom(len(data)))
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "empty", "flipped", "header", "garbage"])
def test_a_damaged_snapshot_is_ignored_without_being_unmarshalled(store, tmp_path, how, monkeypatch):
    path = tmp_path / "s.snapshot"
    _saved(store, path)
    _damaged(path, how)

    def refuse(data: bytes) -> Any:
        raise AssertionError("an unsealed snapshot was unmarshalled")

    monkeypatch.setattr(model_snapshot.marshal, "loads", refuse)
    _same_as_fresh(store, path, [NOW, NOW + 601], restored=None)


def test_a_snapshot_sealed_under_another_key_is_ignored(store, tmp_path, monkeypatch):
    path = tmp_path / "s.snapshot"
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "someone-else"))
    _saved(store, path)
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "me"))
    _same_as_fresh(store, path, [NOW], restored=None)


def test_a_key_others_can_read_turns_snapshots_off(store, tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, str(tmp_path / "cache"))
    path = tmp_path / "s.snapshot"
    saved = _saved(store, path)
    os.chmod(tmp_path / "cache" / "key", 0o644)
    _same_as_fresh(store, path, [NOW], restored=None)
    gate = Gate(POLICY, store, snapshot=tmp_path / "other.snapshot")
    gate.decide(ASKS[0], NOW)
    assert not gate.warm.save_snapshot() and not (tmp_path / "other.snapshot").exists()
    os.chmod(tmp_path / "cache" / "key", 0o600)
    _same_as_fresh(store, path, [NOW], restored=saved)


def test_turning_the_cache_off_turns_snapshots_off(store, tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.CACHE_ENV, "off")
    gate = Gate(POLICY, store, snapshot=tmp_path / "s.snapshot")
    gate.decide(ASKS[0], NOW)
    assert not gate.warm.save_snapshot() and not (tmp_path / "s.snapshot").exists()


def test_a_snapshot_of_other_facts_at_the_same_revision_is_ignored(store_url, tmp_path):
    """Same revision, same policy, a validly sealed file: but not this log."""
    path = tmp_path / "s.snapshot"
    with open_store(str(tmp_path / "other.db"), schema_of(POLICY)) as other:
        _world(other)
        other.append([Event("assert", "revoke", ("alice", "repo", 1), "t", "t")])
        _saved(other, path)
    with open_store(store_url, schema_of(POLICY)) as store:
        _world(store)
        store.append([Event("assert", "grant", ("dave", "repo", 1), "t", "t")])
        assert store.revision() == 9
        _same_as_fresh(store, path, [NOW], restored=None)


def test_a_snapshot_newer_than_the_store_is_ignored(tmp_path):
    path = tmp_path / "s.snapshot"
    with open_store(str(tmp_path / "a.db"), schema_of(POLICY)) as a:
        _world(a, extra=3)
        _saved(a, path)
    with open_store(str(tmp_path / "b.db"), schema_of(POLICY)) as b:
        _world(b)  # the same first facts: an older copy of the log
        _same_as_fresh(b, path, [NOW], restored=None)


def test_a_snapshot_of_another_policy_is_ignored(store, tmp_path):
    path = tmp_path / "s.snapshot"
    other = compile_text('.include "continuity"\nforbid(A, "no-bob", "") :- request(A, _, _, "bob", _).\n')
    gate = Gate(other, store, snapshot=path)
    gate.decide(ASKS[1], NOW)
    assert gate.warm.save_snapshot()
    _same_as_fresh(store, path, [NOW], restored=None)


def test_the_cli_check_prints_the_same_from_a_snapshot(tmp_path, monkeypatch):
    import re

    from click.testing import CliRunner

    from ordinance.cli import cli
    from ordinance.gate import warm

    restored: list[Any] = []

    def spy(*args: Any) -> Any:
        restored.append(found := read(*args))
        return found

    read = warm.read_snapshot
    monkeypatch.setattr(warm, "read_snapshot", spy)

    db = str(tmp_path / "o.db")
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    with open_store(db, schema_of(POLICY)) as s:
        _world(s)
    args = [
        "check",
        "--db",
        db,
        "--policy",
        str(tmp_path / "policy.rules"),
        "--now",
        "2026-08-14T23:10:00Z",
        'request("a1", "write", "w1", "alice", 1).',
        'request_scope("a1", "repo").',
    ]

    def output() -> str:
        done = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert done.exit_code in (0, 1), done.output
        return re.sub(r"revision \d+", "revision R", done.output)  # each check logs its decision

    plain = output()
    Path(db + ".snapshot").unlink(missing_ok=True)  # (one it wrote if building took long enough)
    with open_store(db, schema_of(POLICY)) as s:
        assert Gate(POLICY, s, snapshot=True).warm.save_snapshot() is False  # nothing built yet
        gate = Gate(POLICY, s, snapshot=True)
        gate.decide(ASKS[0], NOW)
        assert gate.warm.save_snapshot()
    restored.clear()
    assert output() == plain and len(restored) == 1 and restored[0] is not None
    Path(db + ".snapshot").write_bytes(b"not a snapshot")
    assert output() == plain and restored[-1] is None


# ---------------------------------------------------------------- random histories


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    fuzz.histories(POLICY, gated=True, max_steps=25),
    st.lists(st.booleans(), max_size=25),
    st.lists(st.integers(-3 * fuzz.HOUR, 3 * fuzz.HOUR), max_size=25),
    st.lists(st.integers(0, 3), max_size=25),
)
def test_a_restored_gate_decides_as_a_fresh_one_on_stdlib_histories(history, saves, jumps, purges):
    """At every ask a new gate starts from the last snapshot written (if any),
    brings it to the store's revision (new facts, purges) and to the ask's
    `now` (also jumps back and forth), and decides, with every proof, as a
    gate that evaluates the store afresh."""
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "s.db"), schema_of(POLICY))
        path = Path(tmp) / "s.snapshot"
        saved: int | None = None
        asked = 0
        written: list[int] = []
        for step, now in zip(history.steps, history.nows()):
            if isinstance(step, Fact):
                written.append(store.append([Event(kind_of(step.relation), step.relation, step.args, "t", "t")]))
            elif isinstance(step, Ask):
                purge = purges[asked] if asked < len(purges) else 0
                if purge and written:
                    store.purge([written.pop(-min(purge, len(written)))], "retention")
                at = now + (jumps[asked] if asked < len(jumps) else 0)
                gate = Gate(POLICY, store, snapshot=path)
                got = gate.decide(step.request, at)
                assert gate.warm.restored_from == saved
                assert _decision(got) == _decision(Gate(POLICY, store).decide(step.request, at))
                if asked < len(saves) and saves[asked]:
                    assert gate.warm.save_snapshot()
                    saved = store.revision()
                asked += 1
        store.close()


RECORDS = compile_text(
    '.include "continuity"\n'
    ".type Held = [scope: symbol, epoch: number]\n"
    ".type Shape = Wide {scope: symbol} | Narrow {scope: symbol, epoch: number}\n"
    ".decl holds(agent: symbol, held: Held)\n"
    ".decl shape(agent: symbol, shape: Shape)\n"
    "holds(A, [S, E]) :- grant(A, S, E).\n"
    "shape(A, $Wide(S)) :- grant(A, S, 1).\n"
    "shape(A, $Narrow(S, E)) :- grant(A, S, E), E > 1.\n"
    'forbid(R, "narrow", "") :- request(R, _, _, A, _), shape(A, $Narrow(_, _)).\n'
)


def test_a_model_holding_records_and_branches_is_written_and_restored_exactly(store, tmp_path):
    from ordinance.values import Branch, Record

    path = tmp_path / "s.snapshot"
    built = Gate(RECORDS, store, snapshot=path)
    first = [built.decide(r, NOW) for r in ASKS]
    assert built.warm.save_snapshot()
    restored = Gate(RECORDS, store, snapshot=path)
    again = [restored.decide(r, NOW) for r in ASKS]
    assert restored.warm.restored_from == store.revision()
    for a, b in zip(first, again):
        assert decision_json(a, program=RECORDS) == decision_json(b, program=RECORDS)
    model, fresh = restored.model(store.revision(), NOW), Gate(RECORDS, store).model(store.revision(), NOW)
    for rel in ("holds", "shape"):
        have, want = model.tuples(rel), fresh.tuples(rel)
        assert have == want and len(have) >= 2
        # the same values, of the same types (a record is not a plain tuple)
        assert sorted(map(repr, have)) == sorted(map(repr, want))
        assert {type(t[1]) for t in have} == {type(t[1]) for t in want} <= {Record, Branch}
    assert ("alice", Record(("repo", 1))) in model.tuples("holds")
    assert ("bob", Branch(("Narrow", "repo", 2))) in model.tuples("shape")
    assert [d.allowed for d in again] == [d.allowed for d in first] and not again[1].allowed


def test_query_why_and_why_not_answer_the_same_from_a_snapshot(tmp_path, monkeypatch):
    """With a snapshot that matches the store, `query`, `why` and `why-not`
    read the gate's warm model instead of evaluating the store, and print
    what they print without one; the proofs' annotations read only the
    events behind their leaves, never the whole log."""
    from click.testing import CliRunner

    from ordinance.cli import cli
    from ordinance.facts.store import Store
    from ordinance.project import projector

    db = str(tmp_path / "o.db")
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    with open_store(db, schema_of(POLICY)) as s:
        _world(s)
    base = ["--db", db, "--policy", str(tmp_path / "policy.rules"), "--now", "2026-08-14T23:10:00Z"]
    request = ["-g", 'request("b1", "write", "w2", "bob", 2).', "-g", 'request_scope("b1", "repo").']
    asks = [
        ["query", 'status("db", A, S)'],
        ["query", "current(C)", "--json"],
        ["why", 'current("c1")'],
        ["why-not", 'superseded("c1")'],
        ["why", 'forbid("b1", "revoked", "repo")', *request],
        ["why-not", 'permit("b1")', *request, "--json"],
    ]

    def outputs() -> list[str]:
        done = [CliRunner().invoke(cli, [*ask, *base], catch_exceptions=False) for ask in asks]
        assert all(d.exit_code in (0, 1) for d in done), [d.output for d in done]
        return [d.output for d in done]

    plain = outputs()
    assert "(r3 assert by t via t)" in plain[4]  # the annotations name the events
    with open_store(db, schema_of(POLICY)) as s:
        assert _saved(s, Path(db + ".snapshot"))

    def evaluated(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("evaluated the store although a snapshot matches it")

    def whole_log(self: Any, since: int = 0, until: int | None = None, kinds: Any = None) -> Any:
        assert kinds is not None or since > 0, "read the whole log"
        return events(self, since, until, kinds)

    events = Store.events
    monkeypatch.setattr(projector, "demanded_model", evaluated)  # (Projector.model_for evaluates with these)
    monkeypatch.setattr(projector, "evaluate", evaluated)
    monkeypatch.setattr(Store, "events", whole_log)
    assert outputs() == plain
