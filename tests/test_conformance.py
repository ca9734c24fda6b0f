"""The datalog-conformance core corpus through `conformance_adapter.Evaluator`.

Collection only names the cases (a regular expression over each file's
`name:` lines): loading and validating the whole corpus takes about a minute,
and every pytest-xdist worker collects. Each test loads its own case's file,
with the corpus's own loader, and first checks the name was right."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from datalog_conformance import DatalogEvaluator, YamlTestRunner, discover_yaml_tests, get_tests_dir

from conformance_adapter import Evaluator

CORE = ("basic", "recursion", "negation", "errors")
NAME = re.compile(r"^(?:- )?name: (\S+)$", re.M)  # a file's case, or each case of its `tests:` list
CASES = [
    (path, name)
    for d in CORE
    for path in sorted((get_tests_dir() / d).rglob("*.yaml"))
    for name in NAME.findall(path.read_text(encoding="utf-8"))
]


def test_the_core_corpus_has_114_cases():
    assert len(CASES) == 114 and len({name for _, name in CASES}) == 114
    assert isinstance(Evaluator(), DatalogEvaluator)


@pytest.mark.parametrize(("path", "name"), CASES, ids=[name for _, name in CASES])
def test_case(path: Path, name: str, tmp_path: Path) -> None:
    (tmp_path / path.name).symlink_to(path)  # the one file, through the corpus's own discovery
    found = [case for _, case in discover_yaml_tests(tmp_path) if case.name == name]
    assert len(found) == 1, f"{path.name} has no single case named {name}"
    YamlTestRunner(Evaluator()).run_test_case(found[0])


@pytest.mark.parametrize(("path", "name"), CASES, ids=[name for _, name in CASES])
def test_case_on_duckdb(path: Path, name: str, tmp_path: Path) -> None:
    """The same corpus on the SQL backend (ordinance.engine.sql)."""
    (tmp_path / path.name).symlink_to(path)
    found = [case for _, case in discover_yaml_tests(tmp_path) if case.name == name]
    assert len(found) == 1, f"{path.name} has no single case named {name}"
    YamlTestRunner(Evaluator("duckdb")).run_test_case(found[0])
