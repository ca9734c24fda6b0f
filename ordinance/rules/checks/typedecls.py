"""`.type` declarations: every type name resolves to a base type.

A subtype (`.type Path <: symbol`) and an alias (`.type Id = number`) have
their base's values; a union (`.type Key = Path | Id`) needs members of one
base. Types are checked by their base (symbol, number, unsigned, float; time
and duration are numbers), so values of two subtypes of `symbol` mix, which
Soufflé would refuse. A record type or ADT (records.py) is its own base and
kind; an alias may name one, a subtype or union may not (Soufflé has no
unions involving records). Codes: `unknown_type`, `duplicate_decl`,
`type_mismatch` (a union of different bases), `cyclic_type`.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic, Span
from .. import ast
from .records import check_structure_decls, structures
from .walk import where

__all__ = ["resolve_types", "BASE_KIND", "kind_of_type"]

# what a base type's values are inside
BASE_KIND = {
    "symbol": "symbol",
    "number": "number",
    "time": "number",
    "duration": "number",
    "unsigned": "unsigned",
    "float": "float",
}


def kind_of_type(type_: str, resolved: dict[str, str]) -> str | None:
    base = resolved.get(type_, type_)
    return BASE_KIND.get(base) or (base if resolved.get(base) == base else None)


def resolve_types(items: tuple[ast.Item, ...]) -> tuple[dict[str, str], list[Diagnostic]]:
    """Each declared type's base type, and the diagnostics of the declarations
    and of `.decl` parameters naming unknown types."""
    decls: dict[str, ast.TypeDecl | ast.RecordType | ast.AdtType] = {}
    found: list[Diagnostic] = []
    structs = structures(items)
    for item in items:
        if isinstance(item, (ast.TypeDecl, ast.RecordType, ast.AdtType)):
            first = decls.setdefault(item.name, item)
            if item.name in BASE_KIND:
                found.append(Diagnostic("duplicate_decl", f"`{item.name}` is a built-in type", item.span))
            elif first is not item:
                found.append(
                    Diagnostic(
                        "duplicate_decl",
                        f"type `{item.name}` is declared twice (first at {where(first.span, item.span)})",
                        item.span,
                    )
                )
    resolved: dict[str, str] = {
        name: name
        for name in (*structs.records, *structs.adts)
        if isinstance(decls.get(name), (ast.RecordType, ast.AdtType))
    }

    def resolve(name: str, span: Span, chain: tuple[str, ...]) -> str | None:
        if name in BASE_KIND:
            return name
        if name in resolved:
            return resolved[name]
        decl = decls.get(name)
        if decl is None:
            found.append(Diagnostic("unknown_type", f"unknown type `{name}`", span))
            return None
        if name in chain:
            cycle = " -> ".join(f"`{n}`" for n in chain[chain.index(name) :] + (name,))
            found.append(Diagnostic("cyclic_type", f"type {cycle} is defined in terms of itself", decl.span))
            return None
        assert isinstance(decl, ast.TypeDecl)
        members = (decl.supertype,) if decl.supertype is not None else decl.union
        bases = [resolve(m, decl.span, chain + (name,)) for m in members]
        known = [b for b in bases if b is not None]
        if any(b in structs for b in known):
            if len(members) == 1 and decl.supertype is None:  # an alias of a record type or ADT
                resolved[name] = known[0]
                return known[0]
            found.append(
                Diagnostic("type_mismatch", f"`{name}` is a subtype or union of a record type or ADT", decl.span)
            )
            return None
        if not known:
            return None
        kinds = {BASE_KIND[b] for b in known}
        if len(kinds) > 1:
            found.append(
                Diagnostic(
                    "type_mismatch",
                    f"union `{name}` mixes types of different kinds ({', '.join(sorted(kinds))})",
                    decl.span,
                )
            )
        base = (
            known[0]
            if len(set(known)) == 1
            else next(k for k in ("number", "symbol", "unsigned", "float") if k in kinds)
        )
        resolved[name] = base
        return base

    for name, decl in decls.items():
        if name not in BASE_KIND and name not in resolved:
            resolve(name, decl.span, ())
    found += check_structure_decls(items, lambda t: t in BASE_KIND or t in decls)
    for item in items:
        if isinstance(item, ast.Decl):
            for p in item.params:
                if p.type not in BASE_KIND and p.type not in decls:
                    known = ", ".join(f"`{t}`" for t in ast.TYPES)
                    s = p.span
                    at = Span(s.end_line, s.end_column - len(p.type), s.end_line, s.end_column, s.file)
                    found.append(
                        Diagnostic("unknown_type", f"unknown type `{p.type}`, expected one of {known} or a `.type`", at)
                    )
    return resolved, found
