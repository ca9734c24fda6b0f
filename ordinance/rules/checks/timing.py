"""Times and durations: both are numbers of seconds inside, but they do not
mix freely. A time plus or minus a duration is a time, a time minus a time is
a duration (`$now - T < 24h`); adding two times, subtracting a time from a
duration, multiplying or dividing a time, comparing a time with a duration,
or a duration where a `time` is declared (and the other way round) is
`type_mismatch`. Which variables hold times comes from the declarations
(rules/infer.py); an untyped number fits either.
"""

from __future__ import annotations

from typing import Callable, Iterator

from ...diagnostics import Diagnostic
from .. import ast
from ..infer import TIMED, arith_type, infer_types, term_type
from .typedecls import resolve_types
from .walk import literal_terms, subterms

__all__ = ["check_timing"]

_ARTICLE = {"time": "a time", "duration": "a duration"}


def _literals(body: tuple[ast.Literal, ...]) -> Iterator[ast.Literal]:
    for lit in body:
        yield lit
        for term in literal_terms(lit):
            for sub in subterms(term, into_aggregates=True):
                if isinstance(sub, ast.Aggregate):
                    yield from _literals(sub.body)


def _arithmetic(term: ast.BinOp, env: dict[str, str]) -> str | None:
    """Why `term` mixes times wrongly (None if it does not)."""
    left, right = term_type(term.left, env), term_type(term.right, env)
    if left not in TIMED and right not in TIMED or arith_type(term.op, left, right) is not None:
        return None
    if term.op in "+-" and (left not in TIMED or right not in TIMED):
        # a time or duration with an untyped number: seconds, allowed, except a number minus a time
        return "a number minus a time" if term.op == "-" and right == "time" else None
    if term.op == "+" and left == right == "time":
        return "`+` of two times (a time plus a duration is a time)"
    if term.op == "-" and (left, right) == ("duration", "time"):
        return "a duration minus a time"
    if "time" in (left, right):
        return f"`{term.op}` on a time"
    if term.op == "*" and left == right == "duration":
        return "`*` of two durations"
    return None


def _check(
    head: ast.Atom | None,
    body: tuple[ast.Literal, ...],
    declared: Callable[[str], tuple[str, ...] | None],
    found: list[Diagnostic],
) -> None:
    env = infer_types(None, body, declared)  # the body types the head: a mismatch is reported there
    atoms = [head] if head is not None else []
    for lit in _literals(body):
        if isinstance(lit, (ast.Atom, ast.Negation)):
            atoms.append(lit.atom if isinstance(lit, ast.Negation) else lit)
        if isinstance(lit, ast.Comparison):
            left, right = term_type(lit.left, env), term_type(lit.right, env)
            if {left, right} == set(TIMED):
                found.append(
                    Diagnostic(
                        "type_mismatch",
                        f"comparison `{lit.op}` of {_ARTICLE[str(left)]} with {_ARTICLE[str(right)]}",
                        lit.span,
                        help="a time minus a time is a duration: `$now - T < 24h`",
                    )
                )
        for term in literal_terms(lit):
            for sub in subterms(term, into_aggregates=False):
                if isinstance(sub, ast.BinOp):
                    why = _arithmetic(sub, env)
                    if why is not None:
                        found.append(Diagnostic("type_mismatch", f"arithmetic {why}", sub.span))
    for atom in atoms:
        types = declared(atom.relation) or ()
        for i, (arg, want) in enumerate(zip(atom.args, types), 1):
            got = term_type(arg, env)
            if want in TIMED and got in TIMED and got != want:
                found.append(
                    Diagnostic(
                        "type_mismatch",
                        f"argument {i} of `{atom.relation}` is declared `{want}`, got {_ARTICLE[str(got)]}",
                        arg.span,
                    )
                )


def check_timing(items: tuple[ast.Item, ...]) -> list[Diagnostic]:
    resolved, _ = resolve_types(items)
    decls: dict[str, tuple[str, ...]] = {}
    for item in items:
        if isinstance(item, ast.Decl):
            decls.setdefault(item.name, tuple(resolved.get(t, t) for t in item.types))
    found: list[Diagnostic] = []
    for item in items:
        if isinstance(item, ast.Rule) and item.body:
            _check(item.head, item.body, decls.get, found)
        elif isinstance(item, ast.Rule):
            _check(item.head, (), decls.get, found)
        elif isinstance(item, ast.Invariant):
            _check(None, item.body, decls.get, found)
    return found
