"""The PostgreSQL backend (psycopg 3): the same log for a fleet of hosts.

Writes run in one transaction that first takes `LOCK TABLE events IN
EXCLUSIVE MODE`: writers queue one at a time (readers are not blocked), so
the revision read, the fence check and the insert are atomic and `seq` is
gapless and in commit order. Triggers refuse UPDATE, DELETE and TRUNCATE of
`events`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

import psycopg

from .schema import Schema
from .store import COLUMNS, LAYER_COLUMN, Row, SqlStore, SqlTxn, WriteTxn, tables_sql

__all__ = ["PostgresStore"]

T = TypeVar("T")
_INIT_LOCK = 0x6F7264  # advisory lock key: concurrent first opens create the schema once

_DDL = tables_sql("BIGINT") + f"ALTER TABLE events ADD COLUMN IF NOT EXISTS {LAYER_COLUMN};\n" + """
CREATE OR REPLACE FUNCTION ordinance_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'events are append-only: no %', lower(TG_OP); END $$;
CREATE OR REPLACE TRIGGER events_no_change BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION ordinance_append_only();
CREATE OR REPLACE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION ordinance_append_only();
"""


class _Txn(SqlTxn):
    mark = "%s"

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, object]:
        return f"{column} = ANY(%s)", list(values)

    def insert(self, rows: list[Row]) -> None:
        with self.db.cursor().copy(f"COPY events ({COLUMNS}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database (`postgresql://...` URL)."""

    txn = _Txn
    _concat = "string_agg(args, ',')"

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
