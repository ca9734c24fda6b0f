"""The fact store: the same tests on SQLite and PostgreSQL (see conftest.store_url)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.diagnostics import StaleEpochError, StoreError
from ordinance.facts import Event, Store, fold, open_store, schema_of
from ordinance.facts.events import encode_args
from ordinance.facts.store import EMPTY_DIGEST, chain_digest, digest_line
from ordinance.values import FOREVER

SCHEMA = {
    "claim": ("symbol", "symbol", "symbol", "symbol"),
    "claim_valid": ("symbol", "time", "time"),
    "supersedes": ("symbol", "symbol"),
    "receipt": ("symbol", "symbol", "symbol", "time"),
    "edge": ("number", "number"),
    "note": ("any",),
}


@pytest.fixture
def store(store_url: str):
    with open_store(store_url, SCHEMA) as s:
        yield s


def decision(allowed: bool = True, **extra: object) -> dict[str, object]:
    """A minimal valid decision payload (the store refuses anything less)."""
    return {
        "request": {"id": "a1", "kind": "deploy", "target": "prod", "agent": "alice", "epoch": 1},
        "allowed": allowed,
        "now": 0,
        "revision": 0,
        "policy_hash": "h",
        "reasons": [],
        **extra,
    }


def claim(c: str, v: str = "primary") -> Event:
    return Event("assert", "claim", (c, "db", "role", v), "ops", "alice")


def test_append_assigns_gapless_seqs_and_replays_facts(store: Store) -> None:
    assert store.revision() == 0
    assert store.facts() == {}
    assert store.append([claim("c1"), claim("c2")]) == 2
    assert store.append([Event("assert", "claim_valid", ("c1", 10, FOREVER))]) == 3
    assert [e.seq for e in store.events()] == [1, 2, 3]
    assert store.facts() == {
        "claim": {("c1", "db", "role", "primary"), ("c2", "db", "role", "primary")},
        "claim_valid": {("c1", 10, FOREVER)},
    }


def test_events_round_trip_every_field(store: Store) -> None:
    store.append([Event("assert", "note", ('ünïcødé "quoted" ✓',), "src", "bob")])
    store.append([Event("assert", "edge", (-(2**62), 2**62))], fence=("r", 3))
    first, second = store.events()
    assert first.args == ('ünïcødé "quoted" ✓',)
    assert (first.kind, first.relation, first.source, first.author) == ("assert", "note", "src", "bob")
    assert first.time.endswith("Z") and first.resource is None and first.epoch is None
    assert second.args == (-(2**62), 2**62)
    assert (second.resource, second.epoch, second.seq) == ("r", 3, 2)


def test_events_filters_by_range_and_kind(store: Store) -> None:
    store.append([claim("c1")])
    store.append([Event("supersede", "supersedes", ("c2", "c1"))])
    store.log_decision(decision())
    store.append([claim("c3")])
    assert [e.seq for e in store.events(since=1, until=3)] == [2, 3]
    assert [e.seq for e in store.events(kinds=["assert"])] == [1, 4]
    assert [e.kind for e in store.events(kinds=("supersede", "decision"))] == ["supersede", "decision"]
    with pytest.raises(StoreError) as err:
        store.events(kinds=["retract"])
    assert err.value.code == "unknown_kind"


def test_fact_kinds_replay_and_log_kinds_do_not(store: Store) -> None:
    store.assert_facts([("supersedes", ("c2", "c1"))], kind="supersede", source="ops")
    store.assert_facts([("receipt", ("a1", "intent", "bot", 5))], kind="receipt")
    payload = decision(False, reasons=[{"code": "stale-epoch", "detail": "w"}])
    seq = store.log_decision(payload, author="gate")
    assert seq == 3
    assert store.facts() == {"supersedes": {("c2", "c1")}, "receipt": {("a1", "intent", "bot", 5)}}
    [logged] = store.decisions()
    assert logged.seq == 3 and logged.author == "gate"
    assert logged.payload == payload


def test_kind_must_match_relation(store: Store) -> None:
    with pytest.raises(StoreError) as err:
        store.assert_facts([("claim", ("c", "s", "a", "v"))], kind="supersede")
    assert err.value.code == "kind_mismatch"
    with pytest.raises(StoreError) as err:
        store.append([Event("retract", "claim", ("c", "s", "a", "v"))])
    assert err.value.code == "unknown_kind"
    assert store.revision() == 0


def test_bad_batch_is_refused_whole_with_one_line_per_problem(store: Store) -> None:
    store.append([claim("c0")])
    batch = [
        claim("c1"),
        Event("assert", "nope", ("x",)),
        Event("assert", "claim_valid", ("c1", 10)),
        Event("assert", "claim_valid", ("c1", "yesterday", True)),
        Event("assert", "note", (1.5,)),  # type: ignore[arg-type]
    ]
    with pytest.raises(StoreError) as err:
        store.append(batch)
    got = [(d.code, d.message) for d in err.value.diagnostics]
    assert got == [
        ("unknown_relation", "event 2: relation `nope` is not declared by the policy"),
        ("arity_mismatch", "event 3: relation `claim_valid` used with 2 arguments, declared with 3"),
        ("type_mismatch", 'event 4: argument 2 of `claim_valid` is "yesterday", declared `time`'),
        ("type_mismatch", "event 4: argument 3 of `claim_valid` is True, not a string or an integer"),
        ("type_mismatch", "event 5: argument 1 of `note` is 1.5, not a string or an integer"),
    ]
    assert all("\n" not in d.message for d in err.value.diagnostics)
    assert store.revision() == 1
    assert store.facts() == {"claim": {("c0", "db", "role", "primary")}}


def test_event_shape_is_checked(store: Store) -> None:
    bad = [
        Event("assert", "note", ["x"]),  # type: ignore[arg-type]
        Event("decision", "decision", (), payload={"when": object()}),
        Event("decision", "decision", ("x",), payload={}),
        Event("purge", "purge", ("1",), payload={"reason": "r"}),
        Event("decision", "decision", (), payload={"allowed": True}),
        Event("purge", "purge", (1,), payload={}),
    ]
    with pytest.raises(StoreError) as err:
        store.append(bad)
    assert [d.code for d in err.value.diagnostics] == [
        "type_mismatch",
        "bad_payload",
        "bad_decision",
        "bad_payload",
        "bad_decision",
        "no_reason",
    ]
    assert [d.message.split(":")[0] for d in err.value.diagnostics] == [
        "event 1",
        "event 2",
        "event 3",
        "event 4",
        "event 5",
        "event 6",
    ]
    assert store.revision() == 0


@pytest.mark.parametrize(
    "payload,code",
    [
        ({"reason": "a\x00b"}, "nul_byte"),
        ({"reason": "r", "x": [{"y": ["\udc80"]}]}, "lone_surrogate"),
        ({"reason": "r", "k\x00": 1}, "nul_byte"),
        ({"reason": "r", "x": [2**64]}, "integer_range"),
        ({"reason": "r", "x": float("nan")}, "bad_payload"),
        ({"reason": "r", 1: "x"}, "bad_payload"),
    ],
)
def test_every_string_and_number_of_a_payload_is_checked(store: Store, payload: dict, code: str) -> None:
    with pytest.raises(StoreError) as err:
        store.append([Event("purge", "purge", (), payload=payload)])
    assert [d.code for d in err.value.diagnostics] == [code]
    assert store.revision() == 0


def test_schema_can_be_set_later_and_without_one_no_fact_is_taken(store_url: str) -> None:
    """Without a policy's schema the store cannot tell a derived relation
    from a stored one, so it takes log events only."""
    with open_store(store_url) as s:
        with pytest.raises(StoreError) as err:
            s.assert_facts([("anything", ("x", 1))])
        assert err.value.code == "no_schema"
        s.log_decision(decision())
        s.schema = {"edge": ("number", "number")}
        with pytest.raises(StoreError) as err:
            s.assert_facts([("anything", ("x", 1))])
        assert err.value.code == "unknown_relation"
        s.assert_facts([("edge", (1, 2))])
        assert s.facts() == {"edge": {(1, 2)}}


def test_schema_of_a_checked_program() -> None:
    from ordinance.rules.checked import CheckedProgram, Relation

    program = CheckedProgram(
        rules=(),
        relations={
            "edge": Relation("edge", 2, ("number", "number")),
            "loose": Relation("loose", 2, None),
        },
        strata=(),
    )
    assert schema_of(program) == {"edge": ("number", "number"), "loose": ("any", "any")}


def test_as_of_shows_what_was_known_then(store: Store) -> None:
    store.append([claim("c1")])
    store.append([Event("supersede", "supersedes", ("c2", "c1")), claim("c2", "replica")])
    view = store.as_of(1)
    assert view.revision() == 1
    assert view.facts() == {"claim": {("c1", "db", "role", "primary")}}
    assert [e.seq for e in view.events()] == [1]
    assert store.as_of(0).facts() == {}
    assert store.as_of(3).facts() == store.facts()
    for bad in (4, -1):
        with pytest.raises(StoreError) as err:
            store.as_of(bad)
        assert err.value.code == "unknown_revision"


def test_duplicate_facts_replay_as_one(store: Store) -> None:
    store.append([claim("c1"), claim("c1")])
    assert store.revision() == 2
    assert store.facts() == {"claim": {("c1", "db", "role", "primary")}}


def test_events_cannot_be_updated_or_deleted(store: Store) -> None:
    store.append([claim("c1")])
    db = store.db  # type: ignore[attr-defined]
    statements = ["UPDATE events SET relation = 'x'", "DELETE FROM events"]
    if store.url.startswith("postgresql"):
        statements.append("TRUNCATE events")
    for sql in statements:
        with pytest.raises((sqlite3.DatabaseError, psycopg.Error), match="append-only"):
            db.execute(sql)
    assert [e.relation for e in store.events()] == ["claim"]


def test_purge_is_an_event_and_hides_facts_from_later_revisions(store: Store) -> None:
    store.append([claim("c1"), claim("c2")])
    store.log_decision(decision())
    seq = store.purge([1, 3], "retention: 30 days", author="janitor")
    assert seq == 4
    purge = store.events(kinds=["purge"])[0]
    assert purge.args == (1, 3) and purge.payload == {"reason": "retention: 30 days"}
    assert store.facts() == {"claim": {("c2", "db", "role", "primary")}}
    assert store.decisions() == []
    assert store.purged() == {1, 3}
    # before the purge, the log still says what was known
    assert store.as_of(3).facts() == {"claim": {("c1", "db", "role", "primary"), ("c2", "db", "role", "primary")}}
    assert [d.seq for d in store.decisions(3)] == [3]
    assert len(store.events()) == 4


@pytest.mark.parametrize("targets, code", [([9], "unknown_seq"), ([4], "not_purgeable"), ([1], "not_purgeable")])
def test_bad_purges_are_refused(store: Store, targets: list[int], code: str) -> None:
    store.append([claim("c1"), claim("c2"), claim("c3")])
    store.purge([1], "gdpr")
    with pytest.raises(StoreError) as err:
        store.purge(targets, "again")
    assert err.value.code == code
    assert store.revision() == 4


def test_fence_is_compare_and_set(store: Store) -> None:
    assert store.fence("deploy/db", 5) == 0
    store.append([claim("c1")], fence=("deploy/db", 5))  # same holder keeps writing
    with pytest.raises(StaleEpochError) as err:
        store.append([claim("c2")], fence=("deploy/db", 4))
    assert err.value.code == "stale_epoch"
    assert "epoch 4 for `deploy/db` is older than the newest epoch 5" in str(err.value)
    store.append([claim("c3")], fence=("deploy/db", 6))
    with pytest.raises(StaleEpochError):
        store.fence("deploy/db", 5)
    store.append([claim("c4")], fence=("other", 1))  # resources are independent
    assert [(e.args[0], e.epoch) for e in store.events()] == [("c1", 5), ("c3", 6), ("c4", 1)]


def test_append_each_writes_its_batches_in_one_commit_skipping_those_a_fence_refuses(store: Store) -> None:
    store.fence("deploy/db", 5)
    out = store.append_each(
        [([claim("c1")], None), ([claim("c2")], ("deploy/db", 4)), ([claim("c3"), claim("c4")], ("deploy/db", 6))]
    )
    assert out[0] == 1 and out[2] == 3
    assert isinstance(out[1], StaleEpochError) and out[1].code == "stale_epoch"
    events = store.events()
    assert [(e.seq, e.args[0], e.epoch) for e in events] == [(1, "c1", None), (2, "c3", 6), (3, "c4", 6)]
    with pytest.raises(StaleEpochError):
        store.fence("deploy/db", 5)  # the refused batch recorded nothing; the later one recorded 6
    with pytest.raises(StoreError) as err:  # a bad batch: nothing of any batch is written
        store.append_each([([claim("c5")], None), ([Event("assert", "note", ("x",), resource="r", epoch=1)], None)])
    assert err.value.code == "fence_mismatch" and store.revision() == 3


def test_fence_fields_on_events_must_match_the_batch_fence(store: Store) -> None:
    forged = Event("assert", "note", ("x",), resource="deploy/db", epoch=9)
    with pytest.raises(StoreError) as err:
        store.append([forged])
    assert err.value.code == "fence_mismatch"
    with pytest.raises(StoreError) as err:
        store.append([claim("c")], fence=("r", "1"))  # type: ignore[arg-type]
    assert err.value.code == "bad_fence"
    assert store.append([forged], fence=("deploy/db", 9)) == 1


def test_store_persists_across_reopen(store_url: str) -> None:
    with open_store(store_url, SCHEMA) as s:
        s.append([claim("c1")], fence=("r", 2))
    with open_store(store_url, SCHEMA) as s:
        assert s.revision() == 1
        assert s.facts() == {"claim": {("c1", "db", "role", "primary")}}
        with pytest.raises(StaleEpochError):
            s.fence("r", 1)


def test_open_store_urls(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with open_store(f"sqlite://{path}", SCHEMA) as s:
        s.assert_facts([("note", ("x",))])
    with open_store(str(path)) as s:
        assert s.facts() == {"note": {("x",)}}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with open_store("./a.db") as s:
            assert s.revision() == 1
    finally:
        os.chdir(cwd)
    with pytest.raises(StoreError) as err:
        open_store("mysql://db/x")
    assert err.value.code == "unknown_backend"


facts_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("edge"), st.tuples(st.integers(0, 4), st.integers(0, 4))),
        st.tuples(st.just("note"), st.tuples(st.sampled_from(["a", "b", "ü"]))),
    ),
    max_size=6,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.tuples(facts_strategy, st.booleans()), min_size=1, max_size=5))
def test_replay_in_sql_agrees_with_replay_in_python(store: Store, batches) -> None:
    start = store.revision()
    for facts, purge_something in batches:
        store.assert_facts(facts)
        live = [e.seq for e in store.events(kinds=["assert"]) if e.seq not in store.purged()]
        if purge_something and live:
            store.purge(live[::3], "random")
    events = store.events()
    for revision in range(start, store.revision() + 1):
        assert store.facts(revision) == fold(events, revision)


def test_a_postgresql_url_without_the_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if `ordinance[postgres]` were not installed
    monkeypatch.delitem(sys.modules, "ordinance.facts.postgres", raising=False)
    with pytest.raises(StoreError) as err:
        open_store("postgresql://localhost/nowhere")
    assert err.value.code == "missing_extra"
    assert "ordinance[postgres]" in str(err.value)


def test_the_seed_scenarios_are_package_data() -> None:
    """`ordinance demo` reads them from the installed package, not a clone."""
    import tomllib

    from ordinance.cli.demo import scenario_dir

    here = scenario_dir()
    assert here.parent.name == "testing" and here.parent.parent.name == "ordinance"
    data = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    patterns = data["tool"]["setuptools"]["package-data"]["ordinance"]
    shipped = {p for pattern in patterns for p in (here.parents[1]).glob(pattern)}
    assert sorted(here.glob("*.toml")) and set(here.glob("*.toml")) <= shipped


def _drop_digests(url: str) -> None:
    """Make the store look as it did before digests (the table gone)."""
    if url.startswith("postgresql"):
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("DROP TABLE digests")
    else:
        with sqlite3.connect(url) as db:
            db.execute("DROP TABLE digests")


def test_the_fact_digest_is_recorded_per_batch_and_read_in_one_lookup(store: Store) -> None:
    empty = store.fact_digest(0)
    r1 = store.assert_facts([("edge", (1, 2)), ("edge", (2, 3))])
    d1 = store.fact_digest(r1)
    assert d1 != empty and store.fact_digest(r1 - 1) not in (empty, d1)  # inside the batch: its first event
    r2 = store.log_decision(decision())  # a decision does not change the facts: nor the digest
    assert store.fact_digest(r2) == d1
    r3 = store.purge([1], "retention")  # a purge does
    d3 = store.fact_digest(r3)
    assert d3 not in (d1, empty) and store.fact_digest(r2) == d1 and store.fact_digest(0) == empty
    # what is recorded is what the events say: the same events recomputed give the same digests
    lines = [digest_line(e.seq, e.kind, e.relation, encode_args(e.args)) for e in store.events(0, r1)]
    assert d1 == chain_digest(EMPTY_DIGEST, lines)
    purge = store.events(r2, r3)[0]
    assert d3 == chain_digest(d1, [digest_line(r3, "purge", "purge", encode_args(purge.args))])


def test_the_same_facts_logged_differently_have_other_digests(store_url: str, tmp_path: Path) -> None:
    with open_store(store_url, SCHEMA) as a, open_store(str(tmp_path / "b.db"), SCHEMA) as b:
        a.assert_facts([("edge", (1, 2))])
        b.assert_facts([("edge", (1, 3))])
        assert a.revision() == b.revision() and a.fact_digest(1) != b.fact_digest(1)


def test_a_store_from_before_digests_records_one_when_opened(store_url: str) -> None:
    with open_store(store_url, SCHEMA) as s:
        s.assert_facts([("edge", (1, 2))])
        s.log_decision(decision())
        s.assert_facts([("edge", (2, 3)), ("edge", (3, 4))])
        s.purge([1], "retention")
    _drop_digests(store_url)
    with open_store(store_url, SCHEMA) as s:  # migrated: one record over the whole log
        lines = [
            digest_line(e.seq, e.kind, e.relation, encode_args(e.args)) for e in s.events() if e.kind != "decision"
        ]
        assert s.fact_digest(5) == chain_digest(EMPTY_DIGEST, lines)
        assert s.fact_digest(3) == chain_digest(EMPTY_DIGEST, lines[:2])  # inside it: recomputed from the events
        s.assert_facts([("edge", (4, 5))])
        d6 = s.fact_digest(6)
        assert d6 == chain_digest(s.fact_digest(5), [digest_line(6, "assert", "edge", encode_args((4, 5)))])
    with open_store(store_url, SCHEMA) as s:  # opened again: nothing recorded anew
        assert s.fact_digest(6) == d6


def test_a_store_from_before_digests_holding_only_decisions_is_migrated_once(store_url: str) -> None:
    with open_store(store_url, SCHEMA) as s:
        s.log_decision(decision())
    _drop_digests(store_url)
    with open_store(store_url, SCHEMA) as s:
        migrated = s.fact_digest(1)
        s.assert_facts([("edge", (1, 2))])
        assert s.fact_digest(2) != migrated
    with open_store(store_url, SCHEMA) as s:  # nothing recorded anew: the digests are those it had
        assert s.fact_digest(1) == migrated and s._digest_at(1)[:2] == (1, 1)
