"""What the SQL backends share: the tables, the write transaction over a
DB-API connection (`SqlTxn`) and the reads (`SqlStore`); sqlite.py and
postgres.py set what differs (placeholders, JSON paths, the string
aggregate, locking)."""

from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from .events import FACT_KINDS
from .store import DIGEST_KINDS, EMPTY_DIGEST, Row, Store, WriteTxn, chain_digest, digest_line

__all__ = ["COLUMNS", "LAYER_COLUMN", "SqlStore", "SqlTxn", "tables_sql"]

COLUMNS = "seq, kind, relation, args, source, author, time, resource, epoch, payload, layer"
# added after the first release: a store created before it gains the column on open
LAYER_COLUMN = "layer TEXT NOT NULL DEFAULT 'public'"
_FACT_KINDS_SQL = ", ".join(f"'{k}'" for k in FACT_KINDS)
_DIGEST_KINDS_SQL = ", ".join(f"'{k}'" for k in DIGEST_KINDS)


def tables_sql(integer: str) -> str:
    """The `events` and `fences` tables and the partial indexes; `integer`
    is the backend's 64-bit integer type."""
    return f"""
CREATE TABLE IF NOT EXISTS events (
    seq {integer} PRIMARY KEY,
    kind TEXT NOT NULL,
    relation TEXT NOT NULL,
    args TEXT NOT NULL,
    source TEXT NOT NULL,
    author TEXT NOT NULL,
    time TEXT NOT NULL,
    resource TEXT,
    epoch {integer},
    payload TEXT,
    {LAYER_COLUMN}
);
CREATE INDEX IF NOT EXISTS events_purge ON events(seq) WHERE kind = 'purge';
CREATE INDEX IF NOT EXISTS events_decision ON events(seq) WHERE kind = 'decision';
CREATE INDEX IF NOT EXISTS events_fact ON events(relation, args);
CREATE TABLE IF NOT EXISTS fences (
    resource TEXT PRIMARY KEY,
    epoch {integer} NOT NULL
);
CREATE TABLE IF NOT EXISTS digests (
    first {integer} PRIMARY KEY,
    last {integer} NOT NULL,
    digest TEXT NOT NULL
);
"""


class SqlTxn:
    """`WriteTxn` over a DB-API connection; a backend sets the placeholder
    `mark`, how a column is matched against a list (`in_list`) and `insert`."""

    mark = "?"

    def __init__(self, db: Any) -> None:
        self.db = db

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, object]:
        """SQL true when `column` is one of `values`, and its one parameter."""
        raise NotImplementedError

    def payload_text(self, path: Sequence[str]) -> str:
        """SQL for the text at `path` inside the JSON `payload`."""
        raise NotImplementedError

    def allowed(self) -> str:
        """SQL true when a decision's payload says `allowed: true`."""
        raise NotImplementedError

    def insert(self, rows: list[Row]) -> None:
        raise NotImplementedError

    def revision(self) -> int:
        row = self.db.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        return int(row[0]) if row else 0

    def newest_epoch(self, resource: str) -> int | None:
        row = self.db.execute(f"SELECT epoch FROM fences WHERE resource = {self.mark}", (resource,)).fetchone()
        return None if row is None else int(row[0])

    def set_epoch(self, resource: str, epoch: int) -> None:
        self.db.execute(
            f"INSERT INTO fences(resource, epoch) VALUES ({self.mark}, {self.mark}) "
            "ON CONFLICT(resource) DO UPDATE SET epoch = excluded.epoch",
            (resource, epoch),
        )

    def kinds(self, seqs: Sequence[int]) -> dict[int, str]:
        where, param = self.in_list("seq", seqs)
        return {int(s): k for s, k in self.db.execute(f"SELECT seq, kind FROM events WHERE {where}", (param,))}

    def purged(self) -> set[int]:
        rows = self.db.execute("SELECT args FROM events WHERE kind = 'purge'")
        return {int(s) for (a,) in rows for s in json.loads(a)}

    def last_digest(self) -> str | None:
        row = self.db.execute("SELECT digest FROM digests ORDER BY first DESC LIMIT 1").fetchone()
        return None if row is None else str(row[0])

    def last_change(self) -> int:
        """The seq of the newest fact or purge event (0 if none): the last of the newest digest record."""
        row = self.db.execute("SELECT last FROM digests ORDER BY first DESC LIMIT 1").fetchone()
        return 0 if row is None else int(row[0])

    def add_digest(self, first: int, last: int, digest: str) -> None:
        m = self.mark
        self.db.execute(f"INSERT INTO digests(first, last, digest) VALUES ({m}, {m}, {m})", (first, last, digest))


class SqlStore(Store):
    """The reads every SQL backend shares; it sets `db` and `txn` (its SqlTxn)."""

    db: Any
    txn: type[SqlTxn]
    _concat = "group_concat(args, ',')"  # the backend's string aggregate of `args`

    def _rows(self, since: int, until: int | None, kinds: Sequence[str] | None) -> list[Row]:
        mark = self.txn.mark
        sql = f"SELECT {COLUMNS} FROM events WHERE seq > {mark}"
        params: list[object] = [since]
        if until is not None:
            sql += f" AND seq <= {mark}"
            params.append(until)
        if kinds is not None:
            param: object
            if len(kinds) == 1:  # matches the partial indexes on purge / decision
                where, param = f"kind = {mark}", kinds[0]
            else:
                where, param = self.txn(self.db).in_list("kind", kinds)
            sql += f" AND {where}"
            params.append(param)
        return self._query(sql + " ORDER BY seq", params)

    def _fact_groups(self, revision: int, exclude: Sequence[int]) -> Iterable[tuple[str, str]]:
        sql = (
            f"SELECT relation, '[' || {self._concat} || ']' FROM events "
            f"WHERE seq <= {self.txn.mark} AND kind IN ({_FACT_KINDS_SQL})"
        )
        params: list[object] = [revision]
        if exclude:
            where, param = self.txn(self.db).in_list("seq", exclude)
            sql += f" AND NOT ({where})"
            params.append(param)
        return self._query(sql + " GROUP BY relation", params)

    def _digest_at(self, revision: int) -> tuple[int, int, str, str]:
        m = self.txn.mark
        rows = self._query(
            f"SELECT first, last, digest FROM digests WHERE first <= {m} ORDER BY first DESC LIMIT 2", (revision,)
        )
        if not rows:
            return 0, 0, EMPTY_DIGEST, EMPTY_DIGEST
        first, last, digest = rows[0]
        return int(first), int(last), str(digest), str(rows[1][2]) if len(rows) > 1 else EMPTY_DIGEST

    def _digest_lines(self, since: int, until: int) -> list[str]:
        m = self.txn.mark
        rows = self._query(
            f"SELECT seq, kind, relation, args FROM events WHERE seq >= {m} AND seq <= {m} "
            f"AND kind IN ({_DIGEST_KINDS_SQL}) ORDER BY seq",
            (since, until),
        )
        return [digest_line(int(s), k, r, a) for s, k, r, a in rows]

    def _start_digests(self) -> None:
        """Give a store from before digests its first record, covering the
        whole log (once: a store with a record, or empty, is left alone)."""

        def start(txn: WriteTxn) -> None:
            if self.db.execute("SELECT 1 FROM digests LIMIT 1").fetchone() is not None:
                return
            revision = txn.revision()  # a record even without fact events: the next open finds it
            txn.add_digest(1, revision, chain_digest(EMPTY_DIGEST, self._digest_lines(1, revision)))

        if self._query("SELECT 1 FROM digests LIMIT 1") or not self.revision():
            return
        self._write(start)

    def _decision_rows(
        self,
        after: int,
        limit: int | None,
        newest: bool,
        denied: bool,
        agent: str | None,
        request: str | None,
        since: str | None,
        exclude: Sequence[int],
    ) -> list[Row]:
        txn, mark = self.txn(self.db), self.txn.mark
        sql = f"SELECT {COLUMNS} FROM events WHERE kind = 'decision' AND seq > {mark}"
        params: list[object] = [after]
        if denied:
            sql += f" AND NOT {txn.allowed()}"
        for path, value in ((("request", "agent"), agent), (("request", "id"), request)):
            if value is not None:
                sql += f" AND {txn.payload_text(path)} = {mark}"
                params.append(value)
        if since is not None:
            sql += f" AND time >= {mark}"
            params.append(since)
        if exclude:
            where, param = txn.in_list("seq", exclude)
            sql += f" AND NOT ({where})"
            params.append(param)
        sql += " ORDER BY seq DESC" if newest else " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._query(sql, params)
        return rows[::-1] if newest else rows

    def _count(self, kind: str) -> int:
        return int(self._query(f"SELECT count(*) FROM events WHERE kind = {self.txn.mark}", (kind,))[0][0])

    def _fact_seqs(self, relation: str, args: str) -> list[int]:
        mark = self.txn.mark
        rows = self._query(
            f"SELECT seq FROM events WHERE relation = {mark} AND args = {mark} "
            f"AND kind IN ({_FACT_KINDS_SQL}) ORDER BY seq",
            (relation, args),
        )
        return [int(r[0]) for r in rows]

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """All rows of one read, under the connection's lock."""
        with self._lock:
            try:
                return self.db.execute(sql, params).fetchall()  # type: ignore[no-any-return]
            except Exception as exc:
                raise self._driver_error(exc) from exc

    def _rows_at(self, seqs: Sequence[int]) -> list[Row]:
        where, param = self.txn(self.db).in_list("seq", seqs)
        return self.db.execute(f"SELECT {COLUMNS} FROM events WHERE {where} ORDER BY seq", (param,)).fetchall()  # type: ignore[no-any-return]

    def _rows_of(self, relation: str, args: str, revision: int) -> list[Row]:
        mark = self.txn.mark
        sql = (
            f"SELECT {COLUMNS} FROM events WHERE relation = {mark} AND args = {mark} AND seq <= {mark} "
            f"AND kind IN ({_FACT_KINDS_SQL}) ORDER BY seq"
        )
        return self.db.execute(sql, (relation, args, revision)).fetchall()  # type: ignore[no-any-return]

    def revision(self) -> int:
        row = self._query("SELECT coalesce(max(seq), 0) FROM events")
        return int(row[0][0]) if row else 0

    def close(self) -> None:
        with self._lock:
            self.db.close()
