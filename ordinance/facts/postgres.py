"""The PostgreSQL backend (psycopg 3): the same log for a fleet of hosts.

Writes run in one transaction that first takes `LOCK TABLE events IN
EXCLUSIVE MODE`: writers queue one at a time (readers are not blocked), so
the revision read, the fence check and the insert are atomic and `seq` is
gapless and in commit order. Triggers refuse UPDATE, DELETE and TRUNCATE of
`events`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg

from ..diagnostics import StoreError
from .sql import COLUMNS, LAYER_COLUMN, SqlStore, SqlTxn, tables_sql
from .store import Row, WriteTxn

__all__ = ["PostgresStore"]

T = TypeVar("T")
_INIT_LOCK = 0x6F7264  # advisory lock key: concurrent first opens create the schema once

_HAS_LAYER = (
    "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = 'events' AND column_name = 'layer'"
)
_DDL = (
    tables_sql("BIGINT")
    + """
CREATE OR REPLACE FUNCTION ordinance_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'events are append-only: no %', lower(TG_OP); END $$;
CREATE OR REPLACE TRIGGER events_no_change BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION ordinance_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION ordinance_append_only();
"""
)


def _redacted(url: str) -> str:
    """`url` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


class _Txn(SqlTxn):
    mark = "%s"

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, object]:
        return f"{column} = ANY(%s)", list(values)

    def payload_text(self, path: Sequence[str]) -> str:
        return "(payload::jsonb #>> '{" + ",".join(path) + "}')"

    def allowed(self) -> str:
        return "coalesce((payload::jsonb ->> 'allowed') = 'true', false)"

    def insert(self, rows: list[Row]) -> None:
        with self.db.cursor().copy(f"COPY events ({COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database (`postgresql://...` URL)."""

    txn = _Txn
    _concat = "string_agg(args, ',')"

    def __init__(self, url: str, schema: Mapping[str, Sequence[str]] | None = None, *, create: bool = True) -> None:
        super().__init__(url, schema)
        try:
            self.db = psycopg.connect(url, autocommit=True)
            if not create and self.db.execute("SELECT to_regclass('events')").fetchone()[0] is None:
                self.db.close()
                raise StoreError(
                    f"no store at `{_redacted(url)}` (the database has no ordinance tables: "
                    "run `ordinance init --db URL`)",
                    code="no_store",
                )
            with self.db.transaction():
                self.db.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK,))
                self.db.execute(_DDL)
                if self.db.execute(_HAS_LAYER).fetchone() is None:  # a store from before layers
                    self.db.execute(f"ALTER TABLE events ADD COLUMN {LAYER_COLUMN}")
            self._start_digests()  # a store from before digests
        except psycopg.Error as exc:
            raise self._driver_error(exc) from None

    def _driver_error(self, exc: Exception) -> StoreError:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return StoreError(f"store `{_redacted(self.url)}`: {first}", code="store_failed")

    def _write(self, work: Callable[[WriteTxn], T]) -> T:
        with self.db.transaction():
            self.db.execute("LOCK TABLE events IN EXCLUSIVE MODE")
            return work(_Txn(self.db))
