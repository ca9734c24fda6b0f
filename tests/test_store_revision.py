"""The store's change check: a write by another process counts on the very
next decision (SQLite answers from its wal-index header without a query
while nothing was committed; PostgreSQL asks)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from ordinance.facts import open_store, schema_of
from ordinance.facts.sqlite import SqliteStore
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.values import parse_instant

POLICY = compile_text('.include "continuity"\n')
T = parse_instant("2026-08-14T23:00:00Z")

WRITER = textwrap.dedent(
    """
    import sys
    from ordinance.facts import open_store, schema_of
    from ordinance.rules import compile_text
    url, agent, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open_store(url, schema_of(compile_text('.include "continuity"\\n'))) as s:
        s.assert_facts([("grant", (agent, "deploy", epoch))], source="test", author="other")
    """
)


def write_elsewhere(url: str, agent: str, epoch: int) -> None:
    """A grant asserted by another process (its own store object)."""
    subprocess.run([sys.executable, "-c", WRITER, url, agent, str(epoch)], check=True)


def ask(agent: str, epoch: int) -> Request:
    return Request(f"{agent}{epoch}", "write", "job", agent, epoch, scope="deploy")


def test_a_write_by_another_process_counts_on_the_very_next_decision(store_url: str) -> None:
    with open_store(store_url, schema_of(POLICY)) as store:
        store.assert_facts([("member", ("job", "deploy"))], source="test", author="lead")
        gate = Gate(POLICY, store)
        for epoch in range(1, 6):  # each round: refused, a grant written elsewhere, then allowed
            before = gate.decide(ask("bob", epoch), T)
            assert not before.allowed and before.codes == ("no-grant",)
            write_elsewhere(store_url, "bob", epoch)
            after = gate.decide(ask("bob", epoch), T)
            assert after.allowed, after.codes
            assert after.revision == before.revision + 1
            again = gate.decide(ask("bob", epoch), T)  # nothing written since: the same revision
            assert again.revision == after.revision


def test_sqlite_a_plain_sqlite_writer_is_seen_and_an_idle_store_is_not_asked(tmp_path) -> None:
    path = str(tmp_path / "s.db")
    with open_store(path, schema_of(POLICY)) as store:
        assert isinstance(store, SqliteStore)
        first = store.revision()
        queries: list[str] = []
        store.db.set_trace_callback(queries.append)
        assert store.revision() == first and queries == []  # unchanged wal-index: no query
        other = sqlite3.connect(path, isolation_level=None)  # another client, not ordinance
        other.execute(
            "INSERT INTO events (seq, kind, relation, args, source, author, time) "
            "VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM events), 'decision', '', '[]', 'x', 'x', 'x')"
        )
        other.close()
        assert store.revision() == first + 1 and queries
        queries.clear()
        assert store.revision() == first + 1 and queries == []


def test_sqlite_an_exclusive_connection_cannot_write_beside_the_store(tmp_path) -> None:
    """Exclusive locking mode keeps the wal-index out of the shared file,
    so it must not be able to write while a store is open."""
    path = str(tmp_path / "s.db")
    with open_store(path, schema_of(POLICY)) as store:
        rev = store.revision()
        other = sqlite3.connect(path, isolation_level=None, timeout=0.1)
        other.execute("PRAGMA locking_mode = EXCLUSIVE")
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute(
                "INSERT INTO events (seq, kind, relation, args, source, author, time) "
                "VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM events), 'decision', '', '[]', 'x', 'x', 'x')"
            )
        other.close()
        assert store.revision() == rev


def test_memory_store_has_no_wal_index_and_asks() -> None:
    with open_store(":memory:", schema_of(POLICY)) as store:
        assert store.revision() == 0
        store.assert_facts([("member", ("job", "deploy"))], source="test", author="lead")
        assert store.revision() == 1
