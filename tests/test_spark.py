"""The Spark SQL dialect (pyspark, local mode): the same compiled program as
DuckDB's and PostgreSQL's, answering as the Python engine does, tuple for
tuple, or refusing with the engine's own error."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from ordinance.diagnostics import EvaluationError, OrdinanceError
from ordinance.engine import evaluate
from ordinance.engine.sql import ENGINES, evaluate_sql
from ordinance.engine.sql import Spark, spark_session
from ordinance.rules import compile_text

# recursion, stratified negation over it, aggregates over both
PROGRAM = """
.decl edge(a: number, b: number)
.decl blocked(a: number)
path(X, Y) :- edge(X, Y), !blocked(Y).
path(X, Z) :- path(X, Y), path(Y, Z).
node(X) :- edge(X, _).
node(Y) :- edge(_, Y).
unreach(X, Y) :- node(X), node(Y), !path(X, Y).
fanout(X, N) :- node(X), N = count : { path(X, _) }.
far(X, M) :- node(X), M = max Y : { path(X, Y) }.
weight(X, S) :- node(X), S = sum Y : { path(X, Y) }.
"""
# one worker runs them all: a JVM per worker would cost each its 15-60 s start
pytestmark = pytest.mark.xdist_group("spark")

EDGES = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5), (5, 6), (6, 7), (8, 9)]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = spark_session()  # one JVM, on the worker of the `spark` group
    yield session


def same(program: Any, db: dict[str, list[tuple[Any, ...]]], spark: Any, now: int = 0) -> None:
    model = evaluate(program, db, now=now)
    with evaluate_sql(program, db, now=now, engine="spark", session=spark) as sql:
        for rel in program.relations:
            assert sql.tuples(rel) == set(model.tuples(rel)), rel


def test_recursion_negation_and_aggregates_agree_with_the_python_engine(spark):
    program = compile_text(PROGRAM)
    db = {"edge": EDGES, "blocked": [(6,)]}
    model = evaluate(program, db)
    with evaluate_sql(program, db, engine="spark", session=spark) as sql:
        for rel in program.relations:
            assert sql.tuples(rel) == set(model.tuples(rel)), rel
        assert (5, 6) not in sql.tuples("path") and (6, 7) in sql.tuples("path")  # the negation held
        assert (1, 5) in sql.tuples("fanout")  # 1 reaches 1 to 5 (a cycle), not 6 past the block
        assert sql.rounds[program.strata.index(("path",))] > 2  # driven round by round


def test_integer_division_xor_and_strings_are_the_engines(spark):
    program = compile_text(
        """
        .decl n(a: number, b: number)
        .decl s(x: symbol)
        q(X / Y, X % Y, X bxor Y, X band Y, X bor Y) :- n(X, Y).
        t(X, strlen(X), cat(X, "|"), to_string(strlen(X) * -3)) :- s(X).
        k(X) :- s(X), X = "it's \\\\ a 'quote'".
        lt(X, Y) :- s(X), s(Y), X < Y.
        """
    )
    db = {
        "n": [(-7, 2), (7, -2), (-7, -2), (9, 4), (-9223372036854775807, 3)],
        "s": [("it's \\ a 'quote'",), ("héllo😀",), ("b",), ("é",), ("",), ("a\nb",)],
    }
    assert evaluate(program, db).tuples("k")  # the escaped constant matches a fact: not vacuous
    same(program, db, spark)


def test_division_by_zero_and_overflow_are_errors_not_nulls(spark):
    div = compile_text(".decl n(a: number)\nq(Y) :- n(X), Y = 10 % X.")
    with pytest.raises(EvaluationError) as caught:
        evaluate_sql(div, {"n": [(1,), (0,)]}, engine="spark", session=spark)
    assert caught.value.diagnostics[0].code == "division_by_zero"
    big = compile_text(".decl n(a: number)\nq(Y) :- n(X), Y = X * X.")
    with pytest.raises(OrdinanceError) as caught:
        evaluate_sql(big, {"n": [(2**62,)]}, engine="spark", session=spark)
    assert caught.value.diagnostics[0].code == "limit_exceeded"


def test_two_evaluations_in_one_session_keep_their_own_tables(spark):
    program = compile_text(".decl e(a: number, b: number)\np(X, Y) :- e(X, Y).\np(X, Z) :- p(X, Y), e(Y, Z).")
    with evaluate_sql(program, {"e": [(1, 2), (2, 3)]}, engine="spark", session=spark) as first:
        with evaluate_sql(program, {"e": [(7, 8)]}, engine="spark", session=spark) as second:
            assert second.tuples("p") == {(7, 8)}
        assert first.tuples("p") == {(1, 2), (2, 3), (1, 3)}
        prefix = first.dialect.prefix
    assert not [t for t in spark.catalog.listTables() if t.name.startswith(prefix)]  # close drops its views


def test_a_construct_it_does_not_compile_is_refused_before_spark_runs(spark):
    program = compile_text(".decl n(a: number)\nq([X, X]) :- n(X).")
    with pytest.raises(EvaluationError) as caught:
        evaluate_sql(program, {"n": [(1,)]}, engine="spark", session=spark)
    assert caught.value.diagnostics[0].code == "unsupported_on_backend"


def test_spark_sql_text_quotes_names_and_literals(spark):
    d = Spark(spark)
    assert d.quote("r1") == f"`{d.prefix}r1`" and d.quote("a`b").endswith("a``b`")
    assert d.literal("it's \\") == "'it\\'s \\\\'"
    assert d.literal(0.1) == "CAST('0.1' AS DOUBLE)" and d.literal(3) == "CAST(3 AS BIGINT)"
    assert d.scalar(f"SELECT {d.literal(chr(39) + chr(92) + 'x')}") == "'\\x"
    assert d.scalar(f"SELECT {d.binop('/', '-7', '2', 'int')}, {d.binop('bxor', '6', '3', 'int')}") == -3
    assert "spark" in ENGINES  # `ordinance run --engine spark`


def test_ordinance_run_takes_the_spark_engine(spark, tmp_path):
    from test_run import REACH, run

    program = REACH + ".decl far(x: number)\n.output far\nfar(X) :- edge(X, _), !path(X, 4), X > 0.\n"
    code, out, err = run(tmp_path, program, {"edge.facts": "1\t2\n2\t3\n3\t4\n5\t6\n"}, "--engine", "spark")
    assert (code, out, err) == (0, "path\t7\n", "")
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n5\t6\n"
    assert (tmp_path / "out" / "far.csv").read_text() == "5\n"
