"""The datalog-conformance core corpus through `conformance_adapter.Evaluator`."""

from __future__ import annotations

import pytest
from datalog_conformance import DatalogEvaluator, YamlTestRunner, discover_yaml_tests, get_tests_dir

from conformance_adapter import Evaluator

CORE = ("basic", "recursion", "negation", "errors")
CASES = [case for d in CORE for _, case in discover_yaml_tests(get_tests_dir() / d)]


def test_the_core_corpus_has_114_cases():
    assert len(CASES) == 114
    assert isinstance(Evaluator(), DatalogEvaluator)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case):
    YamlTestRunner(Evaluator()).run_test_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_on_duckdb(case):
    """The same corpus on the SQL backend (ordinance.engine.sql)."""
    YamlTestRunner(Evaluator("duckdb")).run_test_case(case)
