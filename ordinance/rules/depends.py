"""Which relations a body depends on, through the rules that can match it.

`uses_of(body)` lists every atom a body mentions (negated and inside
aggregates too) with its constant arguments; `depends_on(program, body)`
follows the rules whose heads can match those constants, transitively. The
fuzzer generates facts only for these relations.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from .ast import Aggregate, Atom, Const, Literal, Negation, literal_terms, subterms
from .checked import CheckedProgram

__all__ = ["Use", "uses_of", "depends_on"]


Use = tuple[str, tuple[Any, ...]]  # a relation and the constants an atom gives it (None: any)


def _use(lit: Literal) -> Iterator[Use]:
    atom = lit.atom if isinstance(lit, Negation) else lit
    if isinstance(atom, Atom):
        yield atom.relation, tuple(a.value if isinstance(a, Const) else None for a in atom.args)


def uses_of(body: Iterable[Literal]) -> Iterator[Use]:
    """Every atom a body mentions (negated and inside aggregates too), as its
    relation and its constant arguments."""
    for lit in body:
        yield from _use(lit)
        for term in literal_terms(lit):
            for sub in subterms(term, True):
                if isinstance(sub, Aggregate):
                    for inner in sub.body:
                        yield from _use(inner)


def _matches(head: Atom, pattern: tuple[Any, ...]) -> bool:
    return all(want is None or not isinstance(arg, Const) or arg.value == want for arg, want in zip(head.args, pattern))


def depends_on(program: CheckedProgram, body: Iterable[Literal]) -> set[str]:
    """The relations `body` depends on, through the rules whose heads can
    match each atom's constants, transitively."""
    seen: set[Use] = set()
    relations: set[str] = set()
    todo = list(uses_of(body))
    while todo:
        use = todo.pop()
        if use in seen:
            continue
        seen.add(use)
        relations.add(use[0])
        for rid in program.rules_for(use[0]):
            rule = program.rules[rid]
            if _matches(rule.head, use[1]):
                todo.extend(uses_of(rule.body))
    return relations
