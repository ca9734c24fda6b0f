"""Arity pass: every mention of a relation has the same number of arguments
as its `.decl`, its data (`extensional`), or else its first mention."""

from __future__ import annotations

from typing import Mapping

from ...diagnostics import Diagnostic, Related, Span, arguments, arity_message
from .. import ast
from .walk import uses

__all__ = ["check_arity", "expected_arities"]


def expected_arities(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> dict[str, int]:
    """Each relation's arity: declared, else from data, else first mention."""
    arity: dict[str, int] = {}
    for item in items:
        if isinstance(item, ast.Decl):
            arity.setdefault(item.name, item.arity)
    for name, n in extensional.items():
        arity.setdefault(name, n)
    for use in uses(items):
        arity.setdefault(use.relation, use.arity)
    return arity


def check_arity(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    decls: dict[str, ast.Decl] = {}
    for item in items:
        if not isinstance(item, ast.Decl):
            continue
        names = [p.name for p in item.params]
        for i, p in enumerate(item.params):
            if names.index(p.name) != i:
                found.append(
                    Diagnostic(
                        "duplicate_attribute", f"attribute `{p.name}` of `{item.name}` is declared twice", p.span
                    )
                )
        if "eqrel" in item.qualifiers and (item.arity != 2 or len(set(item.types)) != 1):
            found.append(
                Diagnostic(
                    "arity_mismatch" if item.arity != 2 else "type_mismatch",
                    f"an `eqrel` relation has two attributes of one type, `{item.name}` has "
                    + ", ".join(f"`{t}`" for t in item.types),
                    item.span,
                )
            )
        first = decls.setdefault(item.name, item)
        if first is not item:
            found.append(
                Diagnostic(
                    "duplicate_decl",
                    f"relation `{item.name}` is declared twice",
                    item.span,
                    related=(Related("first declared here", first.span),),
                )
            )
        elif item.name in extensional and extensional[item.name] != item.arity:
            found.append(
                Diagnostic(
                    "arity_mismatch",
                    f"relation `{item.name}` declared with {arguments(item.arity)}, "
                    f"but its data has {extensional[item.name]}",
                    item.span,
                )
            )
    first_use: dict[str, tuple[int, Span]] = {}
    for use in uses(items):
        if use.relation in decls:
            expected, source = decls[use.relation].arity, "declared with"
        elif use.relation in extensional:
            expected, source = extensional[use.relation], "its data has"
        else:
            expected, first_span = first_use.setdefault(use.relation, (use.arity, use.span))
            if use.arity != expected:
                found.append(
                    Diagnostic(
                        "arity_mismatch",
                        arity_message(use.relation, use.arity, expected, "but with") + " where first used",
                        use.span,
                        related=(Related("first used here", first_span),),
                    )
                )
            continue
        if use.arity != expected:
            found.append(
                Diagnostic(
                    "arity_mismatch",
                    arity_message(use.relation, use.arity, expected, source),
                    use.span,
                )
            )
    return found
