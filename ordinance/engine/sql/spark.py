"""The Spark SQL dialect: the same compiled program on a cluster engine
(pyspark: local mode on one box, as the tests run it, or a cluster).

Spark has no temporary tables to insert into: each table is a DataFrame,
materialised (`localCheckpoint`, so a round's plan does not grow with every
round before it) and registered as a temporary view under its quoted name.
A semi-naive round computes the round's query `EXCEPT` the full table as the
new delta, counts it, and appends it to the full table. Facts are loaded
with `createDataFrame` and an explicit schema. ANSI mode is on, so a
division by zero or a 64-bit overflow is an error, as in the Python engine,
never a NULL or a wrapped number. Every view carries its session's prefix,
so evaluations sharing one SparkSession do not read each other's tables.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, Sequence

from ...diagnostics import Diagnostic, EvaluationError
from .dialects import Dialect, _failure

__all__ = ["Spark", "spark_session"]

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

    def run(self, sql: str) -> None:
        self.spark.sql(sql)

    def scalar(self, sql: str) -> Any:
        rows = self.spark.sql(sql).collect()
        return rows[0][0] if rows else None

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def create(self, table: str, cols: Sequence[str], kinds: Sequence[str], keyed: bool = False) -> None:
        self._set(table, self.spark.createDataFrame([], self._schema(cols, kinds)))

    def load(self, table: str, cols: Sequence[str], kinds: Sequence[str], data: Sequence[Sequence[Any]]) -> None:
        given = self.spark.createDataFrame(list(zip(*data)), self._schema(cols, kinds))
        self._set(table, self.frames[table].union(given).distinct().localCheckpoint())

    def insert(self, table: str, select: str) -> None:
        self._set(table, self.frames[table].union(self.spark.sql(select)).localCheckpoint())

    def round(self, full: str, new: str, select: str) -> int:
        delta = self.spark.sql(f"SELECT * FROM ({select}) AS q EXCEPT SELECT * FROM {full}").localCheckpoint()
        self._set(new, delta)
        self._set(full, self.frames[full].union(delta).localCheckpoint())
        return int(delta.count())

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
