"""The driver: flatten includes, run every pass, build the CheckedProgram."""

from __future__ import annotations

import hashlib
import os
from typing import Mapping

from ...diagnostics import CheckError, Diagnostic, ParseError, SafetyViolationError
from .. import ast
from ..checked import CheckedProgram, Relation
from ..loader import flatten
from ..printer import format_program
from .arity import check_arity, expected_arities
from .io import check_io
from .patterns import check_patterns
from .qualifiers import as_rules, check_counters, check_qualifiers, stratum_rules
from .relations import check_relations
from .records import structures
from .safety import SAFETY_CODES, check_safety
from .stratify import stratify
from .timing import check_timing
from .typedecls import resolve_types
from .types import check_types

__all__ = ["check", "run_passes"]


def run_passes(
    items: tuple[ast.Item, ...],
    extensional: Mapping[str, int],
    existential_negation: bool = False,
) -> tuple[list[Diagnostic], tuple[tuple[str, ...], ...]]:
    """All diagnostics of the analysis phase, pass by pass, and the strata."""
    found: list[Diagnostic] = check_qualifiers(items)
    subsumed, items = items, as_rules(items)
    found += check_arity(items, extensional)
    found += check_safety(items, existential_negation)
    found += check_types(items)
    found += check_timing(items)
    found += check_patterns(items)
    found += check_relations(items, extensional)
    found += check_io(items, extensional)
    strat = stratify(tuple(i for i in subsumed if isinstance(i, ast.Rule)) + stratum_rules(subsumed))
    found += strat.diagnostics
    found += check_counters(subsumed, strat.strata)
    return found, strat.strata


def _relations(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> dict[str, Relation]:
    """Every relation, its types resolved to base types (`.type Path <: symbol`
    gives `symbol`)."""
    resolved, _ = resolve_types(items)
    arity = expected_arities(items, extensional)
    decls: dict[str, ast.Decl] = {}
    derived: set[str] = set()
    for item in items:
        if isinstance(item, ast.Decl):
            decls.setdefault(item.name, item)
        elif isinstance(item, ast.Rule) and item.body:
            derived.add(item.head.relation)
    return {
        name: Relation(
            name,
            n,
            tuple(resolved.get(t, t) for t in decls[name].types) if name in decls else None,
            decls.get(name),
            name in derived,
        )
        for name, n in arity.items()
    }


def _typed_literals(
    rule: ast.Rule, relations: Mapping[str, Relation], structures: Mapping[str, Mapping[str | None, tuple[str, ...]]]
) -> ast.Rule:
    """An integer literal at a `float` or `unsigned` argument of an atom (or
    field of a record or constructor there) takes that type, as in Soufflé
    (`f(1)` for `.decl f(x: float)` holds `1.0`)."""

    def typed(x: ast.Term, type_: str) -> ast.Term:
        shape = structures.get(type_)
        if isinstance(x, ast.Record) and shape and None in shape and len(x.args) == len(shape[None]):
            return ast.Record(tuple(typed(a, t) for a, t in zip(x.args, shape[None])), x.span)
        if isinstance(x, ast.Branch) and shape and x.name in shape and len(x.args) == len(shape[x.name]):
            return ast.Branch(x.name, tuple(typed(a, t) for a, t in zip(x.args, shape[x.name])), x.span)
        if not (isinstance(x, ast.Const) and x.type == "number"):
            return x
        if type_ == "float":
            return ast.Const(float(x.value), "float", x.span)
        if type_ == "unsigned" and int(x.value) >= 0:
            return ast.Const(x.value, "unsigned", x.span)
        return x

    def atom(a: ast.Atom) -> ast.Atom:
        rel = relations.get(a.relation)
        if rel is None or rel.types is None or len(rel.types) != a.arity:
            return a
        args = tuple(typed(x, t) for x, t in zip(a.args, rel.types))
        return a if args == a.args else ast.Atom(a.relation, args, a.span)

    def literal(lit: ast.Literal) -> ast.Literal:
        if isinstance(lit, ast.Atom):
            return atom(lit)
        if isinstance(lit, ast.Negation):
            return ast.Negation(atom(lit.atom), lit.span)
        return lit

    numeric = ("float", "unsigned")
    if not any(r.types and any(t in numeric for t in r.types) for r in relations.values()) and not any(
        t in numeric for shape in structures.values() for types in shape.values() for t in types
    ):
        return rule
    return ast.Rule(atom(rule.head), tuple(literal(lit) for lit in rule.body), rule.span)


def check(
    program: ast.Program,
    *,
    base_dir: str | os.PathLike[str] | None = None,
    extensional: Mapping[str, int] | None = None,
    existential_negation: bool = False,
    allow_includes: tuple[str | os.PathLike[str], ...] = (),
) -> CheckedProgram:
    """Resolve includes and run every static pass; raise with all findings.

    Warnings (severity `warning`) do not raise: the program keeps them.
    Raises ParseError when an included file does not parse, CheckError for
    any other finding (SafetyViolationError when one of them is a safety
    diagnostic); `.code` is the first diagnostic's code.
    """
    extensional = dict(extensional or {})
    flat = flatten(program, base_dir, allow_includes)
    if flat.diagnostics:
        raise (ParseError if flat.syntax else CheckError)(flat.diagnostics)
    found, strata = run_passes(flat.items, extensional, existential_negation)
    warnings = tuple(d for d in found if d.severity == "warning")
    found = [d for d in found if d.severity != "warning"]
    if found:
        if any(d.code in SAFETY_CODES for d in found):
            raise SafetyViolationError(found)
        raise CheckError(found)
    # the policy hash covers what decides (rules, declarations, includes
    # flattened), not test blocks, invariants or fuzz hints: adding a test
    # does not make every logged decision foreign to `replay`; nor do pragmas
    quiet = (ast.TestBlock, ast.Invariant, ast.Hint, ast.Pragma)
    deciding = tuple(i for i in flat.items if not isinstance(i, quiet))
    text = format_program(ast.Program(deciding))
    relations = _relations(flat.items, extensional)
    structured = _structures(flat.items)
    return CheckedProgram(
        rules=tuple(_typed_literals(i, relations, structured) for i in flat.items if isinstance(i, ast.Rule)),
        relations=relations,
        strata=strata,
        tests=tuple(i for i in flat.items if isinstance(i, ast.TestBlock)),
        invariants=tuple(i for i in flat.items if isinstance(i, ast.Invariant)),
        hints=tuple(i for i in flat.items if isinstance(i, ast.Hint)),
        io=tuple(i for i in flat.items if isinstance(i, ast.IODirective)),
        pragmas=tuple(i for i in flat.items if isinstance(i, ast.Pragma)),
        source_hash=hashlib.sha256(text.encode("utf-8")).hexdigest(),  # the policy hash
        files=flat.files,
        subsumptions=tuple(i for i in flat.items if isinstance(i, ast.Subsumption)),
        structures=structured,
        warnings=warnings,
    )


def _structures(items: tuple[ast.Item, ...]) -> dict[str, dict[str | None, tuple[str, ...]]]:
    resolved, _ = resolve_types(items)
    s = structures(items)

    def types(fields: tuple[ast.Param, ...]) -> tuple[str, ...]:
        return tuple(resolved.get(f.type, f.type) for f in fields)

    out: dict[str, dict[str | None, tuple[str, ...]]] = {name: {None: types(f)} for name, f in s.records.items()}
    out.update({name: {b: types(f) for b, f in branches.items()} for name, branches in s.adts.items()})
    return out
