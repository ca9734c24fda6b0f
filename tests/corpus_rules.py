"""The rule strings of the datalog-conformance core corpus, loaded once.

The package's own discovery uses the pure-Python YAML loader, which takes
about a minute on the corpus's largest files; libyaml reads the same YAML.
"""

from __future__ import annotations

import functools
from typing import Any

import yaml
from datalog_conformance import get_tests_dir

CORE = ("basic", "recursion", "negation", "errors")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _cases(raw: Any) -> list[dict[str, Any]]:
    if isinstance(raw, dict) and "tests" in raw:
        return [c for c in raw["tests"] if isinstance(c, dict)]
    return [raw] if isinstance(raw, dict) else []


@functools.cache
def core_cases() -> tuple[tuple[str, tuple[str, ...], dict[str, Any], str | None], ...]:
    """(name, rules, facts, expect_error) of every core case with a program."""
    found = []
    for directory in CORE:
        for path in sorted((get_tests_dir() / directory).rglob("*.yaml")):
            for case in _cases(yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)):
                program = case.get("program") or {}
                found.append(
                    (
                        str(case.get("name", path.stem)),
                        tuple(program.get("rules") or ()),
                        dict(program.get("facts") or {}),
                        case.get("expect_error"),
                    )
                )
    return tuple(found)


def core_rules() -> list[str]:
    """Every distinct rule string, in corpus order."""
    return list(dict.fromkeys(r for _, rules, _, _ in core_cases() for r in rules))
