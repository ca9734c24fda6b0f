"""Pattern constants: a regular expression written as a constant in
`match(Regex, S)` compiles, so a typo is a lint error, not a failing decision;
one that only Python's backtracking `re` can run is a warning (rules/regex.py).
A string built-in whose pattern is a variable and whose subject a constant
(`glob(P, "**/.env")`) has its arguments swapped, most likely: the pattern
comes first. Codes: `invalid_regex`, and as warnings `backtracking_regex`,
`swapped_arguments`."""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic
from .. import ast
from ..printer import format_term
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
            if not (isinstance(lit, ast.Predicate) and len(lit.args) == 2):
                continue
            pattern, subject = lit.args
            if isinstance(pattern, ast.Var) and isinstance(subject, ast.Const) and isinstance(subject.value, str):
                found.append(_swapped(lit, pattern, subject))
            if lit.name != "match":
                continue
            if isinstance(pattern, ast.Const) and isinstance(pattern.value, str):
                try:
                    compile_regex(pattern.value)
                except Backtracking as e:
                    found.append(Diagnostic(e.code, e.message, pattern.span, severity="warning"))
                except InvalidPattern as e:
                    found.append(Diagnostic(e.code, e.message, pattern.span))
    return found


_PARAMETERS = {"match": "regular expression", "glob": "pattern", "contains": "substring", "starts_with": "prefix"}


def _swapped(lit: ast.Predicate, pattern: ast.Var, subject: ast.Const) -> Diagnostic:
    what = _PARAMETERS.get(lit.name, "pattern")
    return Diagnostic(
        "swapped_arguments",
        f"`{lit.name}` takes the {what} first: here the variable `{pattern.name}` is the {what} "
        f"and the constant {format_term(subject)} the text",
        lit.span,
        severity="warning",
        help=f"if `{pattern.name}` is the text, swap them: `{lit.name}({format_term(subject)}, {pattern.name})`",
    )
