"""The datalog-conformance core corpus through `conformance_adapter.Evaluator`.

Collection only names the cases (a regular expression over each file's
`name:` lines): loading and validating the whole corpus takes about a minute,
and every pytest-xdist worker collects. A test loads its own case's file with
the corpus's own discovery, once per file and worker (`souffle_example_lubm.yaml`
is 17 MB and holds 20 cases, each run on both engines), and first checks the
name was right. The discovery reads YAML with libyaml here: the same
documents, five times faster than the pure-Python loader it calls."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest
import yaml
from datalog_conformance import DatalogEvaluator, YamlTestRunner, discover_yaml_tests, get_tests_dir
from datalog_conformance import plugin

from conformance_adapter import Evaluator

CORE = ("basic", "recursion", "negation", "errors")
NAME = re.compile(r"^(?:- )?name: (\S+)$", re.M)  # a file's case, or each case of its `tests:` list
CASES = [
    (path, name)
    for d in CORE
    for path in sorted((get_tests_dir() / d).rglob("*.yaml"))
    for name in NAME.findall(path.read_text(encoding="utf-8"))
]


@pytest.fixture(scope="session")
def case_named(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, str], Any]:
    """The case `name` of `path`; each file is loaded once per worker, through
    the corpus's own discovery of a directory holding only that file."""

    @functools.cache
    def loaded(path: Path) -> dict[str, list[Any]]:
        alone = tmp_path_factory.mktemp("conformance")
        (alone / path.name).symlink_to(path)
        cases: dict[str, list[Any]] = {}
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(plugin, "yaml", SimpleNamespace(safe_load=_c_safe_load))
            for _, case in discover_yaml_tests(alone):
                cases.setdefault(case.name, []).append(case)
        return cases

    def named(path: Path, name: str) -> Any:
        found = loaded(path).get(name, [])
        assert len(found) == 1, f"{path.name} has no single case named {name}"
        return found[0]

    return named


def _c_safe_load(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


# no xdist_group: the module runs faster spread over the workers (37 s with -n 2,
# against 54 s with a file's cases on one worker); the cases harvested from one
# Soufflé program (hmmer's 2, lubm's 20) still evaluate it about once per engine
# and worker (conformance_adapter._LAST), as they are collected side by side
PARAMS = [pytest.param(path, name, id=name) for path, name in CASES]


def test_the_core_corpus_has_114_cases():
    assert len(CASES) == 114 and len({name for _, name in CASES}) == 114
    assert isinstance(Evaluator(), DatalogEvaluator)


@pytest.mark.parametrize(("path", "name"), PARAMS)
def test_case(path: Path, name: str, case_named: Callable[[Path, str], Any]) -> None:
    YamlTestRunner(Evaluator()).run_test_case(case_named(path, name))


@pytest.mark.parametrize(("path", "name"), PARAMS)
def test_case_on_duckdb(path: Path, name: str, case_named: Callable[[Path, str], Any]) -> None:
    """The same corpus on the SQL backend (ordinance.engine.sql)."""
    YamlTestRunner(Evaluator("duckdb")).run_test_case(case_named(path, name))
