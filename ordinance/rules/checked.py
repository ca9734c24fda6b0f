"""The checked program: what the analysis passes hand to the engine.

Includes are resolved and flattened; every relation has an arity (and types
where declared); rules are numbered (a rule's id is its index in `rules`,
used by provenance notes); strata list the derived relations in evaluation
order, as the stratification pass computed them. The types of each rule's
variables (which hold instants, which durations) are inferred once, here,
for every renderer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic
from .ast import Decl, Hint, Invariant, IODirective, Literal, Pragma, Rule, Subsumption, TestBlock
from .infer import infer_types

__all__ = ["Relation", "CheckedProgram", "REQUEST_PREFIX", "is_request_side"]

REQUEST_PREFIX = "request_"


@dataclass(frozen=True, slots=True)
class Relation:
    name: str
    arity: int
    types: tuple[str, ...] | None = None  # None when not declared
    decl: Decl | None = None
    derived: bool = False  # has at least one rule with a body


def is_request_side(name: str, relation: Relation | None = None) -> bool:
    """A request-side relation: named `request` or `request_*`, and not
    derived by a rule (`relation` is the checked program's, if known). A
    request fills these in the gate's overlay; the store never takes them
    (it refuses the derived ones as derived)."""
    named = name == "request" or (name.startswith(REQUEST_PREFIX) and len(name) > len(REQUEST_PREFIX))
    return named and not (relation is not None and relation.derived)


@dataclass(frozen=True, slots=True)
class CheckedProgram:
    rules: tuple[Rule, ...]  # rules with bodies and facts, includes flattened
    relations: dict[str, Relation]
    strata: tuple[tuple[str, ...], ...]  # derived relations, in evaluation order
    tests: tuple[TestBlock, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    hints: tuple[Hint, ...] = ()
    io: tuple[IODirective, ...] = ()  # `.input`, `.output`, `.printsize`, in source order
    pragmas: tuple[Pragma, ...] = ()  # `.pragma "magic-transform" "*"`: `run` evaluates on demand
    source_hash: str = ""  # the policy hash: sha256 of the flattened rules and declarations, not tests
    files: tuple[str, ...] = field(default=())  # every file read, includes too
    subsumptions: tuple[Subsumption, ...] = ()  # `r(X) <= r(Y) :- body.`, disjunctions expanded
    # record types and ADTs: name -> {None: field types} for a record type,
    # {branch: field types} for an ADT (field types resolved to base types)
    structures: dict[str, dict[str | None, tuple[str, ...]]] = field(default_factory=dict)
    warnings: tuple[Diagnostic, ...] = ()  # what lint warns of (severity `warning`), the program runs
    _types: dict[int, dict[str, str]] = field(default_factory=dict, compare=False, repr=False)
    _heads: dict[str, tuple[int, ...]] = field(default_factory=dict, init=False, compare=False, repr=False)

    def relation_types(self, relation: str) -> tuple[str, ...] | None:
        """The declared argument types of `relation` (None: not declared)."""
        rel = self.relations.get(relation)
        return None if rel is None else rel.types

    def variable_types(self, rule: int | None) -> dict[str, str]:
        """The type of each variable of rule `rule` that the declarations fix."""
        if rule is None or not 0 <= rule < len(self.rules):
            return {}
        env = self._types.get(rule)
        if env is None:
            r = self.rules[rule]
            env = self._types[rule] = infer_types(r.head, r.body, self.relation_types)
        return env

    def body_types(self, body: tuple[Literal, ...]) -> dict[str, str]:
        """The variable types of a body of literals (an invariant's)."""
        return infer_types(None, body, self.relation_types)

    def cite(self, rule: int) -> str:
        """Where rule `rule` is written, as `file:line`."""
        span: Any = self.rules[rule].span
        return f"{span.file or '<input>'}:{span.line}" if span.line else (span.file or "<input>")

    def rules_for(self, relation: str) -> tuple[int, ...]:
        """Ids of the rules whose head is `relation`."""
        if not self._heads:  # worked out on first use, for every relation at once
            heads: dict[str, list[int]] = {}
            for i, r in enumerate(self.rules):
                heads.setdefault(r.head.relation, []).append(i)
            self._heads.update((name, tuple(ids)) for name, ids in heads.items())
        return self._heads.get(relation, ())
