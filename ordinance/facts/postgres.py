"""The PostgreSQL backend (psycopg 3): the same log for a fleet of hosts.

Writes run in one transaction that first takes `LOCK TABLE events IN
EXCLUSIVE MODE`: writers queue one at a time (readers are not blocked), so
the revision read, the fence check and the insert are atomic and `seq` is
gapless and in commit order. Triggers refuse UPDATE, DELETE and TRUNCATE of
`events`.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Sequence, TypeVar

import psycopg

from .events import FACT_KINDS
from .schema import Schema
from .store import Row, Store, WriteTxn

__all__ = ["PostgresStore"]

T = TypeVar("T")
_INIT_LOCK = 0x6F7264  # advisory lock key: concurrent first opens create the schema once

_DDL = """
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT PRIMARY KEY,
    kind TEXT NOT NULL,
    relation TEXT NOT NULL,
    args TEXT NOT NULL,
    source TEXT NOT NULL,
    author TEXT NOT NULL,
    time TEXT NOT NULL,
    resource TEXT,
    epoch BIGINT,
    payload TEXT
);
CREATE INDEX IF NOT EXISTS events_purge ON events(seq) WHERE kind = 'purge';
CREATE INDEX IF NOT EXISTS events_decision ON events(seq) WHERE kind = 'decision';
CREATE TABLE IF NOT EXISTS fences (
    resource TEXT PRIMARY KEY,
    epoch BIGINT NOT NULL
);
CREATE OR REPLACE FUNCTION ordinance_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'events are append-only: no %', lower(TG_OP); END $$;
CREATE OR REPLACE TRIGGER events_no_change BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION ordinance_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION ordinance_append_only();
"""

_COLUMNS = "seq, kind, relation, args, source, author, time, resource, epoch, payload"


class _Txn:
    def __init__(self, db: psycopg.Connection) -> None:
        self.db = db

    def revision(self) -> int:
        row = self.db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        return int(row[0]) if row else 0

    def newest_epoch(self, resource: str) -> int | None:
        row = self.db.execute("SELECT epoch FROM fences WHERE resource = %s", (resource,)).fetchone()
        return None if row is None else int(row[0])

    def set_epoch(self, resource: str, epoch: int) -> None:
        self.db.execute(
            "INSERT INTO fences(resource, epoch) VALUES (%s, %s) "
            "ON CONFLICT(resource) DO UPDATE SET epoch = excluded.epoch",
            (resource, epoch),
        )

    def kinds(self, seqs: Sequence[int]) -> dict[int, str]:
        rows = self.db.execute("SELECT seq, kind FROM events WHERE seq = ANY(%s)", (list(seqs),))
        return {int(s): k for s, k in rows}

    def purged(self) -> set[int]:
        rows = self.db.execute("SELECT args FROM events WHERE kind = 'purge'")
        return {int(s) for (a,) in rows for s in json.loads(a)}

    def insert(self, rows: list[Row]) -> None:
        with self.db.cursor().copy(f"COPY events ({_COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


class PostgresStore(Store):
    """A store in a PostgreSQL database (`postgresql://...` URL)."""

    def __init__(self, url: str, schema: Schema | None = None) -> None:
        super().__init__(url, schema)
        self.db = psycopg.connect(url, autocommit=True)
        with self.db.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK,))
            self.db.execute(_DDL)

    def _write(self, work: Callable[[WriteTxn], T]) -> T:
        with self.db.transaction():
            self.db.execute("LOCK TABLE events IN EXCLUSIVE MODE")
            return work(_Txn(self.db))

    def _rows(self, since: int, until: int | None, kinds: Sequence[str] | None) -> list[Row]:
        sql = f"SELECT {_COLUMNS} FROM events WHERE seq > %s"
        params: list[object] = [since]
        if until is not None:
            sql += " AND seq <= %s"
            params.append(until)
        if kinds is not None:
            if len(kinds) == 1:  # matches the partial indexes on purge / decision
                sql += " AND kind = %s"
                params.append(kinds[0])
            else:
                sql += " AND kind = ANY(%s)"
                params.append(list(kinds))
        return self.db.execute(sql + " ORDER BY seq", params).fetchall()  # type: ignore[return-value]

    def _fact_groups(self, revision: int, exclude: Sequence[int]) -> Iterable[tuple[str, str]]:
        sql = (
            "SELECT relation, '[' || string_agg(args, ',') || ']' FROM events "
            "WHERE seq <= %s AND kind = ANY(%s)"
        )
        params: list[object] = [revision, list(FACT_KINDS)]
        if exclude:
            sql += " AND seq <> ALL(%s)"
            params.append(list(exclude))
        return self.db.execute(sql + " GROUP BY relation", params).fetchall()

    def revision(self) -> int:
        return _Txn(self.db).revision()

    def close(self) -> None:
        self.db.close()
