"""The table of SQL dialects: what differs between the engines the compiled
program runs on (column types, operators, loading facts, one semi-naive
round's insert). The compiler and the driver are the same for all of them.

- `duckdb`: embedded and columnar, the default for bulk work (the `duckdb`
  extra).
- `postgresql`: the fleet's own store, so no export; a round is a keyed
  `INSERT … ON CONFLICT DO NOTHING RETURNING` until nothing is new (the
  `postgres` extra). Symbols compare by code point (`COLLATE "C"`), as
  Python's strings do.
- `spark`: Spark SQL (pyspark: local mode on one box, as the tests run it,
  or a cluster; the `spark` extra). Spark has no temporary tables to insert
  into: each table is a DataFrame, materialised (`localCheckpoint`, so a
  round's plan does not grow with every round before it) and registered as
  a temporary view under its quoted name. A round is one job: the round's
  query `EXCEPT` the full table, checkpointed lazily and counted, is the new
  delta; the full table's union with it is kept by the next job. ANSI
  mode is on, so a division by zero or a 64-bit overflow is an error, never a
  NULL or a wrapped number. Every view carries its evaluation's prefix, so
  evaluations sharing one SparkSession do not read each other's tables.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Sequence

from ...diagnostics import Diagnostic, EvaluationError, LimitExceeded

__all__ = ["Dialect", "DuckDB", "PostgreSQL", "Spark", "spark_session", "DIALECTS", "dialect"]


class Dialect:
    """One SQL engine: its SQL text and a session on one connection."""

    name = ""
    recursive_cte = False  # a linear stratum as one `WITH RECURSIVE` query instead of rounds
    types = {"int": "BIGINT", "str": "VARCHAR", "float": "DOUBLE PRECISION"}

    def __init__(self, connection: Any = None):
        self.con = connection

    # ------------------------------------------------------------ SQL text

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def literal(self, v: Any) -> str:
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        if isinstance(v, float):
            return f"CAST({v!r} AS {self.types['float']})"
        return f"CAST({int(v)} AS BIGINT)"  # never a narrower type that could overflow first

    def cast(self, sql: str, kind: str) -> str:
        return f"CAST({sql} AS {self.types[kind]})"

    def binop(self, op: str, a: str, b: str, kind: str) -> str:
        if op == "/":
            return self.floatdiv(a, b) if kind == "float" else self.intdiv(a, b)
        if op == "+" and kind == "str":  # `+` on symbols concatenates
            return f"({a} || {b})"
        return {
            "+": f"({a} + {b})",
            "-": f"({a} - {b})",
            "*": f"({a} * {b})",
            "%": f"({a} % {b})",
            "band": f"({a} & {b})",
            "bor": f"({a} | {b})",
            "bxor": self.xor(a, b),
            "land": _truth(f"{a} <> 0 AND {b} <> 0"),
            "lor": _truth(f"{a} <> 0 OR {b} <> 0"),
            "lxor": _truth(f"({a} <> 0) <> ({b} <> 0)"),
        }[op]

    def intdiv(self, a: str, b: str) -> str:
        return f"({a} // {b})"

    def floatdiv(self, a: str, b: str) -> str:
        return f"({a} / {b})"

    def xor(self, a: str, b: str) -> str:
        return f"xor({a}, {b})"

    def call(self, func: str, args: Sequence[str]) -> str:
        if func == "min":
            return f"LEAST({', '.join(args)})"
        if func == "max":
            return f"GREATEST({', '.join(args)})"
        if func == "lnot":
            return _truth(f"{args[0]} = 0")
        if func == "cat":
            return "(" + " || ".join(args) + ")"
        if func == "strlen":
            return f"CAST(length({args[0]}) AS BIGINT)"
        return f"CAST({args[0]} AS {self.types['str']})"  # to_string

    # ------------------------------------------------------------ a session

    def run(self, sql: str) -> None:
        self.con.execute(sql)

    def scalar(self, sql: str) -> Any:
        row = self.con.execute(sql).fetchone()
        return row[0] if row else None

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.con.execute(sql).fetchall()]

    def create(self, table: str, cols: Sequence[str], kinds: Sequence[str], keyed: bool = False) -> None:
        spec = ", ".join(f"{c} {self.types[k]}" for c, k in zip(cols, kinds))
        self.run(f"CREATE TEMPORARY TABLE {table} ({spec})")

    def load(self, table: str, cols: Sequence[str], kinds: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
        """Add the tuples whose columns are `data` (one sequence per column) to `table`."""
        raise NotImplementedError

    def insert(self, table: str, select: str) -> None:
        """Add what `select` finds to `table` (the caller keeps out what it holds)."""
        self.run(f"INSERT INTO {table} {select}")

    def drop(self, table: str) -> None:
        self.run(f"DROP TABLE IF EXISTS {table}")

    def rename(self, table: str, to: str) -> None:
        self.run(f"ALTER TABLE {table} RENAME TO {to}")

    def begin(self) -> None:
        self.run("BEGIN TRANSACTION")

    def commit(self) -> None:
        self.run("COMMIT")

    def round(self, full: str, new: str, select: str) -> int:
        """Add to `full` what `select` finds that it does not hold; `new`
        (created here) holds exactly those tuples. Returns their number."""
        self.run(f"CREATE TEMPORARY TABLE {new} AS SELECT * FROM ({select}) AS q EXCEPT SELECT * FROM {full}")
        self.run(f"INSERT INTO {full} SELECT * FROM {new}")
        return int(self.scalar(f"SELECT count(*) FROM {new}"))

    def failure(self, exc: Exception, where: str) -> Exception | None:
        """The ordinance error an engine error stands for (None: not the engine's)."""
        return None

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


def _truth(condition: str) -> str:
    """1 where `condition` holds, else 0 (a cast of a boolean is not portable)."""
    return f"(CASE WHEN {condition} THEN CAST(1 AS BIGINT) ELSE CAST(0 AS BIGINT) END)"


def _failure(message: str, where: str) -> Exception:
    low = message.lower()
    if "division by zero" in low:
        return EvaluationError([Diagnostic("division_by_zero", f"division by zero in the stratum of {where}")])
    if "out of range" in low or "overflow" in low:
        return LimitExceeded(
            [Diagnostic("limit_exceeded", f"limit exceeded: a number outside 64 bits in the stratum of {where}")]
        )
    first = (message.splitlines() or ["error"])[0].rstrip(".")
    return EvaluationError([Diagnostic("evaluation", f"the sql backend failed in the stratum of {where}: {first}")])


class DuckDB(Dialect):
    name = "duckdb"
    recursive_cte = True  # measured: one query instead of a statement batch per round (docs/sql.md)

    def __init__(self, connection: Any = None):
        if connection is None:
            try:
                import duckdb
            except ImportError:
                raise EvaluationError(
                    [
                        Diagnostic(
                            "backend_unavailable",
                            "the `duckdb` engine needs the duckdb package: pip install 'ordinance[duckdb]'",
                        )
                    ]
                ) from None
            connection = duckdb.connect()
        super().__init__(connection)

    def floatdiv(self, a: str, b: str) -> str:
        # DuckDB gives inf for a float divided by zero; the engine raises
        return f"({a} / (CASE WHEN {b} = 0 THEN CAST(error('division by zero') AS DOUBLE) ELSE {b} END))"

    def load(self, table: str, cols: Sequence[str], kinds: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
        import numpy as np

        arrays = {
            c: np.array(col, dtype=np.int64 if k == "int" else np.float64 if k == "float" else object)
            for c, k, col in zip(cols, kinds, data)
        }
        view = f"load_{table.strip(chr(34))}"
        self.con.register(view, arrays)
        try:
            self.run(f"INSERT INTO {table} SELECT DISTINCT * FROM {view}")
        finally:
            self.con.unregister(view)

    def failure(self, exc: Exception, where: str) -> Exception | None:
        import duckdb

        return _failure(str(exc), where) if isinstance(exc, duckdb.Error) else None


class PostgreSQL(Dialect):
    name = "postgresql"
    types = {"int": "BIGINT", "str": 'TEXT COLLATE "C"', "float": "DOUBLE PRECISION"}

    def __init__(self, connection: Any = None, url: str | None = None):
        if connection is None:
            try:
                import psycopg
            except ImportError:
                raise EvaluationError(
                    [
                        Diagnostic(
                            "backend_unavailable",
                            "the `postgresql` engine needs psycopg: pip install 'ordinance[postgres]'",
                        )
                    ]
                ) from None
            try:
                connection = psycopg.connect(url or "", autocommit=True, connect_timeout=10)
                connection.execute("SET standard_conforming_strings = on")  # a backslash in a literal is a backslash
            except psycopg.Error as exc:  # the message, never the url: it may hold a password
                first = (str(exc).strip().splitlines() or ["no answer"])[0].rstrip(".")
                raise EvaluationError(
                    [Diagnostic("backend_unavailable", f"cannot connect to the `postgresql` engine: {first}")]
                ) from None
        super().__init__(connection)

    def cast(self, sql: str, kind: str) -> str:
        return f"CAST({sql} AS {'TEXT' if kind == 'str' else self.types[kind]})"

    def intdiv(self, a: str, b: str) -> str:
        return f"({a} / {b})"  # integer division truncates toward zero in PostgreSQL

    def xor(self, a: str, b: str) -> str:
        return f"({a} # {b})"

    def call(self, func: str, args: Sequence[str]) -> str:
        if func == "to_string":
            return f"CAST({args[0]} AS TEXT)"
        return super().call(func, args)

    def create(self, table: str, cols: Sequence[str], kinds: Sequence[str], keyed: bool = False) -> None:
        super().create(table, cols, kinds)
        if keyed:
            self.run(f"CREATE UNIQUE INDEX ON {table} ({', '.join(cols)})")

    def load(self, table: str, cols: Sequence[str], kinds: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
        with self.con.cursor() as cur:
            cur.execute(f"CREATE TEMPORARY TABLE load_ (LIKE {table})")
            with cur.copy(f"COPY load_ ({', '.join(cols)}) FROM STDIN") as copy:
                for row in zip(*data):
                    copy.write_row(row)
            cur.execute(f"INSERT INTO {table} SELECT * FROM load_ ON CONFLICT DO NOTHING")
            cur.execute("DROP TABLE load_")

    def round(self, full: str, new: str, select: str) -> int:
        self.run(f"CREATE TEMPORARY TABLE {new} (LIKE {full})")
        self.run(
            f"WITH ins AS (INSERT INTO {full} SELECT * FROM ({select}) AS q ON CONFLICT DO NOTHING RETURNING *) "
            f"INSERT INTO {new} SELECT * FROM ins"
        )
        return int(self.scalar(f"SELECT count(*) FROM {new}"))

    def failure(self, exc: Exception, where: str) -> Exception | None:
        import psycopg

        return _failure(str(exc), where) if isinstance(exc, psycopg.Error) else None


_LOCK = threading.Lock()
_SESSIONS = itertools.count()


def spark_session() -> Any:
    """The process's own local SparkSession (created on first use, then shared):
    one core, no web UI, one shuffle partition, ANSI arithmetic."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise EvaluationError(
            [Diagnostic("backend_unavailable", "the `spark` engine needs pyspark: pip install 'ordinance[spark]'")]
        ) from None
    with _LOCK:
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        session = (
            SparkSession.builder.master("local[1]")
            .appName("ordinance")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.ansi.enabled", "true")
            .config("spark.ui.showConsoleProgress", "false")
            # small data on one core (measured, docs/sql.md): one partition per table
            # whatever its estimated size, so a join or an anti-join needs no shuffle,
            # and no adaptive re-planning (a job per stage, and it hides the partitioning)
            .config("spark.sql.maxSinglePartitionBytes", str(2**63 - 1))
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("FATAL")  # an engine error is raised as a diagnostic, not logged
        return session


class Spark(Dialect):
    name = "spark"
    types = {"int": "BIGINT", "str": "STRING", "float": "DOUBLE"}

    def __init__(self, session: Any = None):
        super().__init__(None)
        self.spark = session if session is not None else spark_session()
        self.spark.conf.set("spark.sql.ansi.enabled", "true")  # errors, never NULL, for / 0 and overflow
        # Spark 4.3's constraint propagation fails inside a union of checkpointed frames
        # (`key not found` in UnionBase.rewriteConstraints); the rounds need none of it
        self.spark.conf.set("spark.sql.constraintPropagation.enabled", "false")
        self.prefix = f"o{next(_SESSIONS)}_"
        self.frames: dict[str, Any] = {}  # quoted view name -> its DataFrame
        # a session that shuffles to one partition keeps every table in one: Spark
        # knows a coalesced frame is a single partition, so joins need no exchange
        self.single = self.spark.conf.get("spark.sql.shuffle.partitions") == "1"

    # ------------------------------------------------------------ SQL text

    def quote(self, name: str) -> str:
        return "`" + (self.prefix + name).replace("`", "``") + "`"

    def literal(self, v: Any) -> str:
        if isinstance(v, str):  # Spark reads backslash escapes in a literal; `''` is two literals
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        if isinstance(v, float):
            return f"CAST('{v!r}' AS DOUBLE)"
        return f"CAST({int(v)} AS BIGINT)"

    def intdiv(self, a: str, b: str) -> str:
        return f"({a} div {b})"  # truncates toward zero, as the engine's `/` on integers

    def xor(self, a: str, b: str) -> str:
        return f"({a} ^ {b})"

    def call(self, func: str, args: Sequence[str]) -> str:
        if func == "strlen":  # characters (code points), as Python's len
            return f"CAST(char_length({args[0]}) AS BIGINT)"
        if func == "to_string":
            return f"CAST({args[0]} AS STRING)"
        return super().call(func, args)

    # ------------------------------------------------------------ a session

    def _view(self, table: str) -> str:
        return table[1:-1].replace("``", "`")

    def _set(self, table: str, frame: Any) -> None:
        self.frames[table] = frame
        frame.createOrReplaceTempView(self._view(table))

    def _schema(self, cols: Sequence[str], kinds: Sequence[str]) -> Any:
        from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

        of = {"int": LongType, "float": DoubleType, "str": StringType}
        return StructType([StructField(c, of[k](), False) for c, k in zip(cols, kinds)])

    def _keep(self, frame: Any, eager: bool = True) -> Any:
        """`frame` materialised (eagerly: now, as one job; else by the first job
        that reads it), its plan cut to a scan of what it holds."""
        return (frame.coalesce(1) if self.single else frame).localCheckpoint(eager=eager)

    def run(self, sql: str) -> None:
        self.spark.sql(sql)

    def scalar(self, sql: str) -> Any:
        rows = self.spark.sql(sql).collect()
        return rows[0][0] if rows else None

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def create(self, table: str, cols: Sequence[str], kinds: Sequence[str], keyed: bool = False) -> None:
        empty = self.spark.createDataFrame([], self._schema(cols, kinds))
        self._set(table, empty.coalesce(1) if self.single else empty)

    def load(self, table: str, cols: Sequence[str], kinds: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
        given = self.spark.createDataFrame(list(zip(*data)), self._schema(cols, kinds))
        self._set(table, self._keep(self.frames[table].union(given).distinct()))

    def insert(self, table: str, select: str) -> None:
        self._set(table, self._keep(self.frames[table].union(self.spark.sql(select))))

    def round(self, full: str, new: str, select: str) -> int:
        # one job a round: counting the delta computes it and keeps it; the full
        # table's union with it is kept by the next job that reads it
        delta = self._keep(self.spark.sql(f"SELECT * FROM ({select}) AS q EXCEPT SELECT * FROM {full}"), eager=False)
        count = int(delta.count())
        self._set(new, delta)
        self._set(full, self._keep(self.frames[full].union(delta), eager=False))
        return count

    def drop(self, table: str) -> None:
        if self.frames.pop(table, None) is not None:
            self.spark.catalog.dropTempView(self._view(table))

    def rename(self, table: str, to: str) -> None:
        frame = self.frames[table]
        self.drop(table)
        self._set(to, frame)

    def begin(self) -> None:
        pass  # DataFrames are immutable: a failed run leaves nothing behind but views `close` drops

    def commit(self) -> None:
        pass

    def failure(self, exc: Exception, where: str) -> Exception | None:
        try:
            from py4j.protocol import Py4JError
            from pyspark.errors import PySparkException
        except ImportError:
            return None
        if not isinstance(exc, (PySparkException, Py4JError)):
            return None
        message = str(exc)
        if "REMAINDER_BY_ZERO" in message or "DIVIDE_BY_ZERO" in message:
            message = "division by zero"
        return _failure(message, where)

    def close(self) -> None:
        for table in list(self.frames):
            self.drop(table)


DIALECTS: dict[str, Callable[..., Dialect]] = {"duckdb": DuckDB, "postgresql": PostgreSQL, "spark": Spark}


def dialect(name: str, **options: Any) -> Dialect:
    """A session of dialect `name` (`duckdb`, `postgresql`, `spark`)."""
    try:
        make = DIALECTS[name]
    except KeyError:
        known = ", ".join(f"`{n}`" for n in DIALECTS)
        raise EvaluationError(
            [Diagnostic("backend_unavailable", f"no sql engine `{name}`; the engines are {known}")]
        ) from None
    return make(**options)
