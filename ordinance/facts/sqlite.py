"""The SQLite backend: one file, WAL mode, several processes on one host.

Writes run in `BEGIN IMMEDIATE` (the database write lock, waited for up to
the busy timeout), so the revision read, the fence check and the insert are
one transaction. Triggers refuse any UPDATE or DELETE of `events`.

`revision()` asks SQLite only when the store may have changed: every commit
in WAL mode, by any process and any SQLite client, rewrites the wal-index
header in the `-shm` file that all connections map (its frame count, salts
and checksums: https://www.sqlite.org/walformat.html), so an unchanged header
means an unchanged log. The header is read (both copies, equal, or it is
being written) before the query whose revision it then vouches for, so a
commit racing the query is seen on the next look, never missed. A store
without a `-shm` file (`:memory:`) always queries. A connection in
exclusive locking mode, which would keep its wal-index private, cannot
open the store beside this one (the database is locked).
"""

from __future__ import annotations

import json
import mmap
import os
import sqlite3
from typing import Any, Callable, Mapping, Sequence, TypeVar

from ..diagnostics import StoreError
from .sql import COLUMNS, LAYER_COLUMN, SqlStore, SqlTxn, tables_sql
from .store import Row, WriteTxn

__all__ = ["SqliteStore"]

T = TypeVar("T")
BUSY_TIMEOUT_S = 60.0

_DDL = (
    tables_sql("INTEGER")
    + """
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no update'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only: no delete'); END;
"""
)


class _Txn(SqlTxn):
    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, object]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def payload_text(self, path: Sequence[str]) -> str:
        return "json_extract(payload, '$." + ".".join(path) + "')"

    def allowed(self) -> str:
        return "coalesce(json_extract(payload, '$.allowed') = 1, 0)"

    def insert(self, rows: list[Row]) -> None:
        self.db.executemany(f"INSERT INTO events ({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)


_HAS_EVENTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'"


class SqliteStore(SqlStore):
    """A store in one SQLite file (`path`; `:memory:` for a private one)."""

    txn = _Txn
    _shm: mmap.mmap | None = None
    _seen: tuple[bytes, int] | None = None  # (wal-index header, the revision read after it)

    def __init__(self, path: str, schema: Mapping[str, Sequence[str]] | None = None, *, create: bool = True) -> None:
        super().__init__(path, schema)
        if path != ":memory:" and not os.path.exists(path):
            if not create:
                raise StoreError(
                    f"no store at `{path}` (run `ordinance init`, or pass --db / set ORDINANCE_DB)", code="no_store"
                )
            try:  # a new store is private to its owner: 0600, before SQLite writes a byte
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
            except OSError as err:
                raise StoreError(
                    f"cannot create the store `{path}`: {(err.strerror or str(err)).lower()}", code="store_failed"
                ) from None
        try:
            # check_same_thread off: the store's lock serializes threads
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            self.db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if not create and not self.db.execute(_HAS_EVENTS).fetchone():  # an empty file, another app's database
                self.db.close()
                raise StoreError(
                    f"no store at `{path}` (the file has no ordinance tables: run `ordinance init`, or pass --db)",
                    code="no_store",
                )
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = FULL")
            self.db.executescript("BEGIN IMMEDIATE;" + _DDL + "COMMIT;")
            if "layer" not in self._columns():  # a store from before layers: add the column, once
                self._write(
                    lambda txn: (
                        None
                        if "layer" in self._columns()
                        else self.db.execute(f"ALTER TABLE events ADD COLUMN {LAYER_COLUMN}")
                    )
                )
            self._start_digests()  # a store from before digests
        except sqlite3.Error as exc:
            raise self._driver_error(exc) from None
        self._shm = _map_shm(path)

    def _wal_header(self) -> bytes | None:
        """The wal-index header, or None if there is none or it is being written."""
        shm = self._shm
        if shm is None:
            return None
        both = shm[:96]
        head = both[:48]
        return head if head == both[48:] and head[12] == 1 else None

    def revision(self) -> int:
        header = self._wal_header()
        seen = self._seen
        if header is not None and seen is not None and seen[0] == header:
            return seen[1]
        rev = super().revision()
        if header is not None:
            self._seen = (header, rev)
        return rev

    def close(self) -> None:
        with self._lock:
            if self._shm is not None:
                self._shm.close()
                self._shm = None
            self._seen = None
            super().close()

    def _columns(self) -> set[str]:
        return {row[1] for row in self.db.execute("PRAGMA table_info(events)")}

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


def _map_shm(path: str) -> mmap.mmap | None:
    """The store's `-shm` file mapped read-only (None if it has none)."""
    if path == ":memory:" or path.startswith("file:"):
        return None
    try:
        with open(path + "-shm", "rb") as f:
            shm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    if len(shm) < 96:
        shm.close()
        return None
    return shm
