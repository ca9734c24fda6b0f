"""Unknown relations: a relation mentioned but never declared, defined by a
rule or fact, or supplied as data."""

from __future__ import annotations

import difflib
from typing import Mapping

from ...diagnostics import Diagnostic, Span
from .. import ast
from .walk import uses

__all__ = ["check_relations", "known_relations"]


def known_relations(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> set[str]:
    known = set(extensional)
    for item in items:
        if isinstance(item, ast.Decl):
            known.add(item.name)
        elif isinstance(item, ast.Rule):
            known.add(item.head.relation)
    return known


def check_relations(
    items: tuple[ast.Item, ...], extensional: Mapping[str, int]
) -> list[Diagnostic]:
    known = known_relations(items, extensional)
    found: list[Diagnostic] = []
    for use in uses(items):
        if use.relation in known or use.role in ("head", "fact"):
            continue
        close = difflib.get_close_matches(use.relation, sorted(known), n=1)
        s = use.span
        name_span = Span(s.line, s.column, s.line, s.column + len(use.relation), s.file)
        found.append(Diagnostic("unknown_relation", f"unknown relation `{use.relation}`",
                                name_span if use.atom else s,
                                help=f"did you mean `{close[0]}`" if close else None))
    return found
