"""The checked program: what the analysis passes hand to the engine.

Includes are resolved and flattened; every relation has an arity (and types
where declared); rules are numbered (a rule's id is its index in `rules`,
used by provenance notes); strata list the derived relations in evaluation
order, as the stratification pass computed them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .ast import Decl, Hint, Invariant, IODirective, Rule, TestBlock

__all__ = ["Relation", "CheckedProgram"]


@dataclass(frozen=True, slots=True)
class Relation:
    name: str
    arity: int
    types: tuple[str, ...] | None = None  # None when not declared
    decl: Decl | None = None
    derived: bool = False  # has at least one rule with a body


@dataclass(frozen=True, slots=True)
class CheckedProgram:
    rules: tuple[Rule, ...]  # rules with bodies and facts, includes flattened
    relations: dict[str, Relation]
    strata: tuple[tuple[str, ...], ...]  # derived relations, in evaluation order
    tests: tuple[TestBlock, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    hints: tuple[Hint, ...] = ()
    io: tuple[IODirective, ...] = ()  # `.input`, `.output`, `.printsize`, in source order
    source_hash: str = ""  # sha256 of the flattened program text (policy hash)
    files: tuple[str, ...] = field(default=())  # every file read, includes too

    def rules_for(self, relation: str) -> tuple[int, ...]:
        """Ids of the rules whose head is `relation`."""
        return tuple(i for i, r in enumerate(self.rules) if r.head.relation == relation)
