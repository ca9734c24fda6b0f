"""Invariants as rules: `.invariant "name" :- body.` compiled to one more rule
`invariant_N_broken(V1, ..., Vk) :- body.` over the body's bound variables,
so each binding that breaks it is a tuple of the model and `why` proves it,
one child per body literal. The fuzzer, `ordinance test`, the pytest plugin
and the scenarios all read invariants this way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from . import check, parse
from .ast import Atom, Comparison, Const, Invariant, Program, Rule, Var
from .checked import CheckedProgram
from .checks.walk import term_vars
from .depends import depends_on
from .loader import read_policy

__all__ = ["InvariantRule", "Harness", "invariant_head", "candidate_head", "joined_head", "DEFAULT_EXAMPLES"]

DEFAULT_EXAMPLES = 200  # histories the fuzzer tries per invariant unless told


@dataclass(frozen=True, slots=True)
class InvariantRule:
    """One invariant and the rule that finds its breaking bindings."""

    invariant: Invariant
    relation: str  # the head relation of the compiled rule
    variables: tuple[str, ...]
    types: tuple[str | None, ...]  # each variable's type where a body atom declares it
    # one (relation, atom) per positive body atom: the relation holds iff the
    # atom has a matching tuple, so the fuzzer can tell an invariant that was
    # exercised from one whose body never had a candidate binding (vacuous)
    candidates: tuple[tuple[str, Atom], ...] = ()
    # one (relation, atom) per positive body atom k >= 1: the relation holds
    # iff body atoms 0..k match together (one binding), so an invariant whose
    # atoms each matched but never all at once is told apart (still vacuous);
    # up to the last positive atom when negations or comparisons follow, else
    # the one before it (all of them together would be a breach)
    joined: tuple[tuple[str, Atom], ...] = ()

    @property
    def name(self) -> str:
        return self.invariant.name


def invariant_head(n: int) -> str:
    """The relation whose tuples are the bindings breaking invariant `n`."""
    return f"invariant_{n}_broken"


def candidate_head(n: int, k: int) -> str:
    """The relation that holds when body atom `k` of invariant `n` matches."""
    return f"invariant_{n}_atom_{k}"


def joined_head(n: int, k: int) -> str:
    """The relation that holds when body atoms 0..k of invariant `n` match together."""
    return f"invariant_{n}_join_{k}"


def _body_variables(body: tuple[Any, ...]) -> dict[str, None]:
    """Variables bound by the body (positive atoms, `V = ...`), in order."""
    found: dict[str, None] = {}
    for lit in body:
        if isinstance(lit, Atom):
            for arg in lit.args:
                if isinstance(arg, Var):
                    found[arg.name] = None
        elif isinstance(lit, Comparison) and lit.op == "=":
            for side in (lit.left, lit.right):
                if isinstance(side, Var):
                    found[side.name] = None
    for lit in body:  # anything else mentioned outside negations is bound somewhere
        if isinstance(lit, Comparison):
            for v in (*term_vars(lit.left), *term_vars(lit.right)):
                found.setdefault(v.name, None)
    return found


def _is_bound(name: str, body: tuple[Any, ...]) -> bool:
    return any(
        isinstance(lit, Atom)
        and any(v.name == name for a in lit.args for v in term_vars(a))
        or isinstance(lit, Comparison)
        and lit.op == "="
        and any(isinstance(s, Var) and s.name == name for s in (lit.left, lit.right))
        for lit in body
    )


@dataclass
class Harness:
    """A policy prepared for fuzzing: the checked program with one extra rule
    per invariant, and whether requests go through the gate."""

    program: CheckedProgram
    targets: tuple[InvariantRule, ...]
    gated: bool

    @classmethod
    def from_ast(cls, program: Program) -> Harness:
        plain = check(program)
        compiled, extra = [], []
        for n, inv in enumerate(plain.invariants):
            head = invariant_head(n)
            names = tuple(v for v in _body_variables(inv.body) if _is_bound(v, inv.body))
            extra.append(Rule(Atom(head, tuple(Var(v) for v in names)), inv.body, inv.span))
            positive = [a for a in inv.body if isinstance(a, Atom)]
            atoms = tuple((candidate_head(n, k), a) for k, a in enumerate(positive))
            extra.extend(Rule(Atom(rel, (Const(1, "number"),)), (a,), inv.span) for rel, a in atoms)
            # all positive atoms together, when negations or comparisons follow (else that join is a breach)
            last = len(positive) if len(positive) < len(inv.body) else len(positive) - 1
            joins = tuple((joined_head(n, k), positive[k]) for k in range(1, last))
            extra.extend(
                Rule(Atom(rel, (Const(1, "number"),)), tuple(positive[: k + 1]), inv.span)
                for k, (rel, _) in enumerate(joins, 1)
            )
            compiled.append((inv, head, names, atoms, joins))
        checked = check(replace(program, items=program.items + tuple(extra)))
        targets = []
        for inv, head, names, atoms, joins in compiled:
            types = checked.body_types(inv.body)
            targets.append(InvariantRule(inv, head, names, tuple(types.get(v) for v in names), atoms, joins))
        gated = "permit" in checked.relations and "forbid" in checked.relations
        return cls(checked, tuple(targets), gated)

    @classmethod
    def from_text(cls, text: str, file: str | None = None) -> Harness:
        return cls.from_ast(parse(text, file))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str]) -> Harness:
        name = os.fspath(path)
        return cls.from_text(read_policy(name), name)

    @property
    def types(self) -> dict[str, tuple[str, ...] | None]:
        return {name: rel.types for name, rel in self.program.relations.items()}

    def target(self, name: str) -> InvariantRule:
        for t in self.targets:
            if t.name == name:
                return t
        raise KeyError(name)

    def relevant(self, target: InvariantRule) -> set[str]:
        """The relations the invariant depends on (what the fuzzer generates)."""
        return depends_on(self.program, target.invariant.body)
