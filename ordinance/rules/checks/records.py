"""Records and algebraic data types: their declarations, and the shape of
every record term and constructor.

`.type Pair = [x: number, y: symbol]` declares a record type and
`.type T = A {x: number} | B {}` an algebraic data type (ADT) with branches
`$A(..)` and `$B`; both may be recursive. As in Soufflé, a record term
`[a, b]` takes its type from where it stands (an argument of a declared
relation, a field, the other side of `=`), `nil` fits every record type, and
a constructor names its ADT (branch names are unique across ADTs). Records
and ADT values compare with `=` and `!=` only; arithmetic, ordering, `sum`,
`min` and `max` on them are `type_mismatch`, as are a record with the wrong
number of fields, a constructor with the wrong number of arguments, and
either one where another type is expected. A constructor no `.type` declares
is `unknown_branch`; a field named twice, or a branch declared twice, is
`duplicate_decl`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from ...diagnostics import Diagnostic, Span
from .. import ast
from .walk import where

__all__ = ["Structures", "structures", "check_structure_decls", "expect_structured", "branch_kind"]


@dataclass
class Structures:
    """The record types (name -> fields), the ADTs (name -> branch -> fields),
    and which ADT declares each branch."""

    records: dict[str, tuple[ast.Param, ...]] = field(default_factory=dict)
    adts: dict[str, dict[str, tuple[ast.Param, ...]]] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)

    def __contains__(self, name: object) -> bool:
        return name in self.records or name in self.adts


def structures(items: tuple[ast.Item, ...]) -> Structures:
    found = Structures()
    for item in items:
        if isinstance(item, ast.RecordType):
            found.records.setdefault(item.name, item.fields)
        elif isinstance(item, ast.AdtType) and item.name not in found.adts:
            found.adts[item.name] = {}
            for b in item.branches:
                found.adts[item.name].setdefault(b.name, b.fields)
                found.owner.setdefault(b.name, item.name)
    return found


def _type_span(p: ast.Param) -> Span:
    s = p.span
    return Span(s.end_line, s.end_column - len(p.type), s.end_line, s.end_column, s.file)


def check_structure_decls(items: tuple[ast.Item, ...], known_type: Callable[[str], bool]) -> list[Diagnostic]:
    """Fields named twice, branches declared twice, fields of unknown types."""
    found: list[Diagnostic] = []
    branches: dict[str, ast.BranchDecl] = {}

    def fields(params: tuple[ast.Param, ...], what: str) -> None:
        seen: set[str] = set()
        for p in params:
            if p.name in seen:
                found.append(Diagnostic("duplicate_decl", f"{what} names field `{p.name}` twice", p.span))
            seen.add(p.name)
            if not known_type(p.type):
                found.append(Diagnostic("unknown_type", f"unknown type `{p.type}` of field `{p.name}`", _type_span(p)))

    for item in items:
        if isinstance(item, ast.RecordType):
            fields(item.fields, f"record type `{item.name}`")
        elif isinstance(item, ast.AdtType):
            for b in item.branches:
                first = branches.setdefault(b.name, b)
                if first is not b:
                    found.append(
                        Diagnostic(
                            "duplicate_decl",
                            f"branch `{b.name}` is declared twice (first at {where(first.span, b.span)})",
                            b.span,
                        )
                    )
                fields(b.fields, f"branch `{b.name}`")
    return found


class _Checker(Protocol):
    structs: Structures

    def mismatch(self, message: str, span: Span) -> None: ...
    def expect(self, term: ast.Term, type_: str, what: str, verb: str = ...) -> None: ...
    def kind_of(self, term: ast.Term) -> str | None: ...
    def unknown_branch(self, term: ast.Branch) -> None: ...


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _inner(checker: _Checker, term: ast.Record | ast.Branch) -> None:
    for a in term.args:
        checker.kind_of(a)


def branch_kind(checker: _Checker, term: ast.Branch) -> str | None:
    """The ADT a constructor builds (its arguments checked); None if unknown."""
    owner = checker.structs.owner.get(term.name)
    if owner is None:
        checker.unknown_branch(term)
        _inner(checker, term)
        return None
    expect_structured(checker, term, owner, "")
    return owner


def expect_structured(checker: _Checker, term: ast.Record | ast.Branch, kind: str, what: str) -> None:
    """`term` stands where a value of `kind` is expected (`what` says where)."""
    s = checker.structs
    if isinstance(term, ast.Record):
        fields = s.records.get(kind)
        if fields is None:
            checker.mismatch(f"{what}, got a record", term.span)
            _inner(checker, term)
        elif term.args and len(term.args) != len(fields):
            checker.mismatch(
                f"a record of type `{kind}` has {_count(len(fields), 'field')}, got {len(term.args)}", term.span
            )
            _inner(checker, term)
        else:
            for i, (a, f) in enumerate(zip(term.args, fields), 1):
                checker.expect(a, f.type, f"field {i} (`{f.name}`) of `{kind}`")
        return
    owner = s.owner.get(term.name)
    if owner is None:
        checker.unknown_branch(term)
        _inner(checker, term)
        return
    if owner != kind:
        checker.mismatch(f"{what}, got `${term.name}` of type `{owner}`", term.span)
        _inner(checker, term)
        return
    fields = s.adts[owner][term.name]
    if len(term.args) != len(fields):
        checker.mismatch(f"`${term.name}` takes {_count(len(fields), 'argument')}, got {len(term.args)}", term.span)
        _inner(checker, term)
        return
    for i, (a, f) in enumerate(zip(term.args, fields), 1):
        checker.expect(a, f.type, f"argument {i} (`{f.name}`) of `${term.name}`")
