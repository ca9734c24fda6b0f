"""The SQLite backend: one file, WAL mode, several processes on one host.

Writes run in `BEGIN IMMEDIATE` (the database write lock, waited for up to
the busy timeout), so the revision read, the fence check and the insert are
one transaction. Triggers refuse any UPDATE or DELETE of `events`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Callable, Iterable, Sequence, TypeVar

from .events import FACT_KINDS
from .schema import Schema
from .store import Row, Store, WriteTxn

__all__ = ["SqliteStore"]

T = TypeVar("T")
BUSY_TIMEOUT_S = 60.0

_DDL = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    relation TEXT NOT NULL,
    args TEXT NOT NULL,
    source TEXT NOT NULL,
    author TEXT NOT NULL,
    time TEXT NOT NULL,
    resource TEXT,
    epoch INTEGER,
    payload TEXT
);
CREATE INDEX IF NOT EXISTS events_purge ON events(seq) WHERE kind = 'purge';
CREATE INDEX IF NOT EXISTS events_decision ON events(seq) WHERE kind = 'decision';
CREATE TABLE IF NOT EXISTS fences (
    resource TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no update'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no delete'); END;
"""

_COLUMNS = "seq, kind, relation, args, source, author, time, resource, epoch, payload"
_FACT_KINDS_SQL = ", ".join(f"'{k}'" for k in FACT_KINDS)


class _Txn:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def revision(self) -> int:
        return int(self.db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()[0])

    def newest_epoch(self, resource: str) -> int | None:
        row = self.db.execute("SELECT epoch FROM fences WHERE resource = ?", (resource,)).fetchone()
        return None if row is None else int(row[0])

    def set_epoch(self, resource: str, epoch: int) -> None:
        self.db.execute(
            "INSERT INTO fences(resource, epoch) VALUES (?, ?) "
            "ON CONFLICT(resource) DO UPDATE SET epoch = excluded.epoch",
            (resource, epoch),
        )

    def kinds(self, seqs: Sequence[int]) -> dict[int, str]:
        rows = self.db.execute(
            "SELECT seq, kind FROM events WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps(list(seqs)),),
        )
        return {int(s): k for s, k in rows}

    def purged(self) -> set[int]:
        rows = self.db.execute("SELECT args FROM events WHERE kind = 'purge'")
        return {int(s) for (a,) in rows for s in json.loads(a)}

    def insert(self, rows: list[Row]) -> None:
        self.db.executemany(f"INSERT INTO events ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


class SqliteStore(Store):
    """A store in one SQLite file (`path`; `:memory:` for a private one)."""

    def __init__(self, path: str, schema: Schema | None = None) -> None:
        super().__init__(path, schema)
        self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        self.db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.executescript("BEGIN IMMEDIATE;" + _DDL + "COMMIT;")

    def _write(self, work: Callable[[WriteTxn], T]) -> T:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = work(_Txn(self.db))
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result

    def _rows(self, since: int, until: int | None, kinds: Sequence[str] | None) -> list[Row]:
        sql = f"SELECT {_COLUMNS} FROM events WHERE seq > ?"
        params: list[object] = [since]
        if until is not None:
            sql += " AND seq <= ?"
            params.append(until)
        if kinds is not None:
            sql += " AND kind IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(kinds)))
            if len(kinds) == 1:  # matches the partial indexes on purge / decision
                sql = sql.replace("kind IN (SELECT value FROM json_each(?))", "kind = ?")
                params[-1] = kinds[0]
        return self.db.execute(sql + " ORDER BY seq", params).fetchall()

    def _fact_groups(self, revision: int, exclude: Sequence[int]) -> Iterable[tuple[str, str]]:
        sql = (
            "SELECT relation, '[' || group_concat(args, ',') || ']' FROM events "
            f"WHERE seq <= ? AND kind IN ({_FACT_KINDS_SQL})"
        )
        params: list[object] = [revision]
        if exclude:
            sql += " AND seq NOT IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(exclude)))
        return self.db.execute(sql + " GROUP BY relation", params).fetchall()

    def revision(self) -> int:
        return _Txn(self.db).revision()

    def close(self) -> None:
        self.db.close()
