"""Traversals shared by the passes: relation uses, variables, aggregates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ...diagnostics import Span
from .. import ast
from ..ast import literal_terms

__all__ = ["Use", "uses", "body_atoms", "subterms", "term_vars", "term_aggregates", "literal_terms", "where"]


@dataclass(frozen=True, slots=True)
class Use:
    """One mention of a relation. `role` is one of: head, fact, body, negated,
    aggregate, invariant, test_fact, expect, hint."""

    relation: str
    arity: int
    span: Span
    role: str
    atom: ast.Atom | None = None  # None for hints


def subterms(t: ast.Term, into_aggregates: bool = False) -> Iterator[ast.Term]:
    """A term and the terms inside it, depth first; an aggregate's target and
    body are entered only when `into_aggregates` is set."""
    yield t
    if isinstance(t, ast.BinOp):
        yield from subterms(t.left, into_aggregates)
        yield from subterms(t.right, into_aggregates)
    elif isinstance(t, ast.COMPOUND):
        for a in t.args:
            yield from subterms(a, into_aggregates)
    elif into_aggregates and isinstance(t, ast.Aggregate):
        if t.target is not None:
            yield from subterms(t.target, True)
        for lit in t.body:
            for term in literal_terms(lit):
                yield from subterms(term, True)


def term_aggregates(t: ast.Term) -> Iterator[ast.Aggregate]:
    """Aggregates in a term, outermost first (not those nested inside them)."""
    return (s for s in subterms(t) if isinstance(s, ast.Aggregate))


def term_vars(t: ast.Term) -> Iterator[ast.Var]:
    """Variables of a term, not looking inside aggregates."""
    return (s for s in subterms(t) if isinstance(s, ast.Var))


def body_atoms(
    body: tuple[ast.Literal, ...], in_aggregate: bool = False
) -> Iterator[tuple[ast.Atom, str, ast.Literal | ast.Aggregate]]:
    """Every atom of a body with its role and the literal (or aggregate) holding it."""
    for lit in body:
        if isinstance(lit, ast.Atom):
            yield lit, "aggregate" if in_aggregate else "body", lit
        elif isinstance(lit, ast.Negation):
            yield lit.atom, "aggregate" if in_aggregate else "negated", lit
        for term in literal_terms(lit):
            for agg in term_aggregates(term):
                for atom, _, _ in body_atoms(agg.body, True):
                    yield atom, "aggregate", agg


def _use(atom: ast.Atom, role: str) -> Use:
    return Use(atom.relation, atom.arity, atom.span, role, atom)


def uses(items: tuple[ast.Item, ...]) -> Iterator[Use]:
    """Every mention of a relation, in source order."""
    for item in items:
        if isinstance(item, ast.Rule):
            yield _use(item.head, "head" if item.body else "fact")
            for atom, role, _ in body_atoms(item.body):
                yield _use(atom, role)
        elif isinstance(item, ast.Invariant):
            for atom, role, _ in body_atoms(item.body):
                yield _use(atom, "invariant" if role == "body" else role)
        elif isinstance(item, ast.TestBlock):
            for fact in item.facts:
                yield _use(fact.head, "test_fact")
            for expect in item.expects:
                yield _use(expect.atom, "expect")
        elif isinstance(item, ast.Hint):
            yield Use(item.relation, len(item.values), item.span, "hint")


def where(span: Span, relative_to: Span | None = None) -> str:
    """`line 3`, or `file.rules:3` when in another file than `relative_to`."""
    if relative_to is not None and span.file != relative_to.file and span.file:
        return f"{span.file}:{span.line}"
    return f"line {span.line}"
