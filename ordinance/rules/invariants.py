"""Invariants as rules: `.invariant "name" :- body.` compiled to one more rule
`invariant_N_broken(V1, ..., Vk) :- body.` over the body's bound variables,
so each binding that breaks it is a tuple of the model and `why` proves it,
one child per body literal. The fuzzer, `ordinance test`, the pytest plugin
and the scenarios all read invariants this way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import check, parse
from .ast import Aggregate, Atom, Comparison, Invariant, Program, Rule, Var
from .checked import CheckedProgram
from .checks.walk import term_vars
from .depends import depends_on
from .loader import decode

__all__ = ["Target", "Harness", "invariant_head", "DEFAULT_EXAMPLES"]

DEFAULT_EXAMPLES = 200  # histories the fuzzer tries per invariant unless told


@dataclass(frozen=True, slots=True)
class Target:
    """One invariant and the rule that finds its breaking bindings."""

    invariant: Invariant
    relation: str  # the head relation of the compiled rule
    variables: tuple[str, ...]
    types: tuple[str | None, ...]  # each variable's type where a body atom declares it

    @property
    def name(self) -> str:
        return self.invariant.name



def invariant_head(n: int) -> str:
    """The relation whose tuples are the bindings breaking invariant `n`."""
    return f"invariant_{n}_broken"


def _body_variables(body: tuple[Any, ...], relations: dict[str, Any]) -> dict[str, str | None]:
    """Variables bound by the body (positive atoms, `V = ...`), in order, with
    the declared type of an atom position that binds them."""
    found: dict[str, str | None] = {}
    for lit in body:
        if isinstance(lit, Atom):
            rel = relations.get(lit.relation)
            types = rel.types if rel is not None and rel.types else (None,) * lit.arity
            for arg, type_ in zip(lit.args, types):
                if isinstance(arg, Var):
                    found[arg.name] = found.get(arg.name) or type_
        elif isinstance(lit, Comparison) and lit.op == "=":
            for side, other in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(side, Var) and side.name not in found:
                    found[side.name] = "number" if isinstance(other, Aggregate) else None
    for lit in body:  # anything else mentioned outside negations is bound somewhere
        if isinstance(lit, Comparison):
            for v in (*term_vars(lit.left), *term_vars(lit.right)):
                found.setdefault(v.name, None)
    return found


def _is_bound(name: str, body: tuple[Any, ...]) -> bool:
    return any(
        isinstance(lit, Atom) and any(v.name == name for a in lit.args for v in term_vars(a))
        or isinstance(lit, Comparison) and lit.op == "=" and any(
            isinstance(s, Var) and s.name == name for s in (lit.left, lit.right))
        for lit in body
    )


@dataclass
class Harness:
    """A policy prepared for fuzzing: the checked program with one extra rule
    per invariant, and whether requests go through the gate."""

    program: CheckedProgram
    targets: tuple[Target, ...]
    gated: bool

    @classmethod
    def from_ast(cls, program: Program) -> Harness:
        plain = check(program)
        targets, extra = [], []
        for n, inv in enumerate(plain.invariants):
            head = invariant_head(n)
            found = _body_variables(inv.body, plain.relations)
            names = tuple(v for v in found if _is_bound(v, inv.body))
            extra.append(Rule(Atom(head, tuple(Var(v) for v in names)), inv.body, inv.span))
            targets.append(Target(inv, head, names, tuple(found[v] for v in names)))
        checked = check(replace(program, items=program.items + tuple(extra)))
        gated = "permit" in checked.relations and "forbid" in checked.relations
        return cls(checked, tuple(targets), gated)

    @classmethod
    def from_text(cls, text: str, file: str | None = None) -> Harness:
        return cls.from_ast(parse(text, file))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> Harness:
        name = os.fspath(path)
        return cls.from_text(decode(Path(name).read_bytes(), name), name)

    @property
    def types(self) -> dict[str, tuple[str, ...] | None]:
        return {name: rel.types for name, rel in self.program.relations.items()}

    def target(self, name: str) -> Target:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def relevant(self, target: Target) -> set[str]:
        """The relations the invariant depends on (what the fuzzer generates)."""
        return depends_on(self.program, target.invariant.body)
