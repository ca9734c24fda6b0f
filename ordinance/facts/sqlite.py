"""The SQLite backend: one file, WAL mode, several processes on one host.

Writes run in `BEGIN IMMEDIATE` (the database write lock, waited for up to
the busy timeout), so the revision read, the fence check and the insert are
one transaction. Triggers refuse any UPDATE or DELETE of `events`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable, Sequence, TypeVar

from .schema import Schema
from .store import COLUMNS, Row, SqlStore, SqlTxn, WriteTxn, tables_sql

__all__ = ["SqliteStore"]

T = TypeVar("T")
BUSY_TIMEOUT_S = 60.0

_DDL = tables_sql("INTEGER") + """
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no update'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no delete'); END;
"""


class _Txn(SqlTxn):
    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, object]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def insert(self, rows: list[Row]) -> None:
        self.db.executemany(f"INSERT INTO events ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)


class SqliteStore(SqlStore):
    """A store in one SQLite file (`path`; `:memory:` for a private one)."""

    txn = _Txn

    def __init__(self, path: str, schema: Schema | None = None) -> None:
        super().__init__(path, schema)
        # check_same_thread=False: the Store docstring allows sharing a store between
        # threads under the caller's own lock (ordinance serve does)
        self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
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
