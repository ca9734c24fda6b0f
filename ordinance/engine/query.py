"""Patterns: one atom of constants, variables and `_`, read against a
checked program, and its answers in a model. `ordinance query`, `why`,
`why-not` and the server's /query, /why and /why_not all read patterns here.

    p = parse_pattern('status("svc", A, S)', program)
    answers(model, p)       # [{"A": "state", "S": "known"}, ...]
    model.query(p.relation, p.values)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..diagnostics import CheckError
from ..rules.checked import CheckedProgram
from .model import Model

__all__ = ["Pattern", "parse_pattern", "answers"]


@dataclass(frozen=True, slots=True)
class Pattern:
    """`relation(args)`; each argument is ("const", value), ("var", name) or ("any", None)."""

    relation: str
    args: tuple[tuple[str, Any], ...]

    @property
    def values(self) -> tuple[Any, ...]:
        """The argument values, None where open (what `Model.query` takes)."""
        return tuple(v if k == "const" else None for k, v in self.args)

    @property
    def variables(self) -> tuple[str, ...]:
        """The variable names, in order, without repeats."""
        return tuple(dict.fromkeys(v for k, v in self.args if k == "var"))

    @property
    def ground(self) -> bool:
        return all(k == "const" for k, _ in self.args)


def parse_pattern(text: str, program: CheckedProgram, *, ground: bool = False) -> Pattern:
    """The pattern written in `text` (a final period is fine), checked against
    the program's declarations; with `ground`, only constants are allowed."""
    from ..rules import check_declared, parse
    from ..rules.ast import Branch, Const, Record, Rule, Var, Wildcard
    from ..rules.functors import evaluate

    atom = text.strip().rstrip(".")
    # with its period, a ground atom is read by the parser's fast path for facts, not by lark
    items = parse(atom + "." if atom else atom, file="<query>").items
    if len(items) != 1 or not isinstance(items[0], Rule) or items[0].body:
        raise CheckError('give one atom such as `current(C)` or `status("svc", A, S)`', code="bad_query")
    head = items[0].head
    check_declared(program, [(head.relation, head.args)])
    args: list[tuple[str, Any]] = []
    for term in head.args:
        if isinstance(term, Const):
            args.append(("const", term.value))
        elif isinstance(term, (Record, Branch)) and _constant(term):  # `[1, "a"]`, `$Circle(2)`
            args.append(("const", evaluate(term, {}, 0)))
        elif isinstance(term, Var) and not ground:
            args.append(("var", term.name))
        elif isinstance(term, Wildcard) and not ground:
            args.append(("any", None))
        elif ground:
            raise CheckError(
                f'`{head.relation}` has a variable; give a fact such as `current("c1")`', code="not_ground"
            )
        else:
            raise CheckError("query arguments are constants, variables or `_`", code="bad_query")
    return Pattern(head.relation, tuple(args))


def _constant(term: Any) -> bool:
    from ..rules.ast import Branch, Const, Record

    return isinstance(term, Const) or isinstance(term, (Record, Branch)) and all(_constant(a) for a in term.args)


def answers(model: Model, pattern: Pattern) -> list[dict[str, Any]]:
    """One binding (variable -> value) per matching tuple (a repeated variable
    must agree), sorted, without repeats."""
    found: set[tuple[tuple[str, Any], ...]] = set()
    for t in model.query(pattern.relation, pattern.values):
        binding: dict[str, Any] = {}
        if all(binding.setdefault(v, x) == x for (k, v), x in zip(pattern.args, t) if k == "var"):
            found.add(tuple(binding.items()))
    return [dict(b) for b in sorted(found, key=lambda b: [(type(v).__name__, v) for _, v in b])]
