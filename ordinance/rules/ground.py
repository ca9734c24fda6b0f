"""Ground facts written in the rule language: `grant("alice", "deploy", 1).`

What `ordinance assert` and `ordinance check` read from the command line.
Only parsing happens here; whether a fact may be stored is the store's
check (facts/schema.py), whether it describes a request is the gate's.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..diagnostics import CheckError, Diagnostic, ParseError, arity_message
from .ast import Branch, Const, Record, Rule
from ..values import Value, to_value, value_problem
from .checked import CheckedProgram, Relation, is_request_side
from .checks.relations import unknown_relation
from .parser import parse

__all__ = ["parse_facts", "check_declared", "typed_fact"]


def parse_facts(texts: Iterable[str], what: str = "fact") -> list[tuple[str, tuple[str | int, ...]]]:
    """(relation, arguments) pairs of the facts in `texts` (several per text
    are fine, the final period is optional); ParseError if a text is empty,
    not in the language, a rule, or not ground."""
    out: list[tuple[str, tuple[str | int, ...]]] = []
    for n, text in enumerate(texts, 1):
        program = parse(text, file=f"<{what} {n}>")
        if not program.items:
            raise ParseError(f"{what} {n} is empty", code="syntax")
        for item in program.items:
            if not isinstance(item, Rule) or not item.is_fact:
                raise ParseError(
                    [
                        Diagnostic(
                            "not_a_fact",
                            f'{what} {n}: expected a fact such as `grant("alice", "deploy", 1).`',
                            item.span,
                        )
                    ]
                )
            structured = next((a for a in item.head.args if isinstance(a, (Record, Branch))), None)
            if structured is not None:
                raise ParseError(
                    [
                        Diagnostic(
                            "unsupported",
                            f"{what} {n}: `{item.head.relation}` has a record or ADT value; the store keeps none",
                            structured.span,
                        )
                    ]
                )
            if not all(isinstance(a, Const) for a in item.head.args):
                raise ParseError(
                    [
                        Diagnostic(
                            "not_ground",
                            f"{what} {n}: `{item.head.relation}` has a variable or expression; facts are ground",
                            item.head.span,
                        )
                    ]
                )
            # a float constant passes through: the store's schema check refuses it
            out.append((item.head.relation, tuple(a.value for a in item.head.args if isinstance(a, Const))))  # type: ignore[misc]
    return out


def check_declared(program: CheckedProgram, facts: Iterable[tuple[str, Sequence[object]]]) -> None:
    """CheckError unless every fact (or query pattern) names a relation
    `program` declares, with its arity (`typed_fact`'s first checks)."""
    for rel, args in facts:
        _declared(program, rel, len(args))


def _declared(program: CheckedProgram, relation: str, arity: int, where: str = "") -> Relation:
    decl = program.relations.get(relation)
    if decl is None:
        raise CheckError([unknown_relation(relation, program.relations, where=where)])
    if decl.arity != arity:
        raise CheckError(f"{where}{arity_message(relation, arity, decl.arity)}", code="arity_mismatch")
    return decl


def typed_fact(
    program: CheckedProgram, relation: str, args: Sequence[Any], *, where: str = "", stored: bool = False
) -> tuple[str, tuple[Value, ...]]:
    """The one check of a fact given as data (JSON, TOML) against the
    checked program: its relation declared (with lint's "did you mean"), its
    arity, each value as its declared type (`to_value`), and with
    `stored=True` a fact the store may take (not request-side, not derived).
    CheckError otherwise (`unknown_relation`, `arity_mismatch`,
    `request_fact`, `derived_relation`, `bad_value`); `where` starts the
    message (`fact 2: `). The store's schema check is the last word."""
    decl = _declared(program, relation, len(args), where)
    if stored and is_request_side(relation, decl):
        raise CheckError(f"{where}`{relation}` facts describe a request: pass them to check", code="request_fact")
    if stored and decl.derived:
        raise CheckError(f"{where}`{relation}` is derived by the policy and never stored", code="derived_relation")
    types = decl.types or ("symbol",) * decl.arity
    try:
        values = tuple(to_value(v, t) for v, t in zip(args, types))
    except (ValueError, TypeError) as exc:
        raise CheckError(f"{where}{exc}", code="bad_value") from None
    for i, (value, type_) in enumerate(zip(values, types), 1):
        problem = value_problem(value, type_)
        if problem is not None:
            raise CheckError(f"{where}argument {i} of `{relation}` {problem[1]}", code=problem[0])
    return relation, values
