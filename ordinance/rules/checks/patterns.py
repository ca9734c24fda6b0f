"""Pattern constants: a regular expression written as a constant in
`match(Regex, S)` compiles, so a typo is a lint error, not a failing decision;
one that only Python's backtracking `re` can run is a warning (rules/regex.py).
Codes: `invalid_regex`, `backtracking_regex` (a warning)."""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic
from .. import ast
from ..regex import Backtracking, InvalidPattern, compile_regex
from .walk import literal_terms, subterms

__all__ = ["check_patterns"]


def _literals(body: tuple[ast.Literal, ...]) -> Iterator[ast.Literal]:
    """Every literal of a body, those inside aggregates too."""
    for lit in body:
        yield lit
        for term in literal_terms(lit):
            for sub in subterms(term, into_aggregates=True):
                if isinstance(sub, ast.Aggregate):
                    yield from _literals(sub.body)


def check_patterns(items: tuple[ast.Item, ...]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for item in items:
        if not isinstance(item, (ast.Rule, ast.Invariant)):
            continue
        for lit in _literals(item.body):
            if not (isinstance(lit, ast.Predicate) and lit.name == "match" and lit.args):
                continue
            pattern = lit.args[0]
            if isinstance(pattern, ast.Const) and isinstance(pattern.value, str):
                try:
                    compile_regex(pattern.value)
                except Backtracking as e:
                    found.append(Diagnostic(e.code, e.message, pattern.span, severity="warning"))
                except InvalidPattern as e:
                    found.append(Diagnostic(e.code, e.message, pattern.span))
    return found
