"""The set-at-a-time backend: the checked, stratified program compiled to SQL.

    from ordinance.engine.sql import evaluate_sql
    with evaluate_sql(program, {"edge": [(1, 2), (2, 3)]}, now=0) as model:
        model.tuples("path")      # the same set as ordinance.engine.evaluate's

One compiler (compile.py: rules to `SELECT`s, kinds.py: a SQL type per
column), a table of dialects (dialects.py: DuckDB embedded, PostgreSQL, Spark SQL) and
a driver for the semi-naive rounds (driver.py). What it does not compile is
refused up front (`unsupported_on_backend`), never answered differently.
The tuple-at-a-time engine stays the gate's: it is incremental, demand-driven
and gives proofs; `why` of a tuple found here is asked of it, on the same facts.
"""

from __future__ import annotations

from .dialects import DIALECTS, Dialect, DuckDB, PostgreSQL, Spark, dialect, spark_session
from .driver import SqlModel, evaluate_sql

__all__ = [
    "evaluate_sql",
    "SqlModel",
    "Dialect",
    "DuckDB",
    "PostgreSQL",
    "Spark",
    "spark_session",
    "DIALECTS",
    "dialect",
    "ENGINES",
]

ENGINES = ("python", *DIALECTS)  # what `ordinance run --engine` takes
