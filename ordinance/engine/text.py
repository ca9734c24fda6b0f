"""Rule and term text for plan labels and explanations.

Uses the language's printer (`ordinance.rules.format_rule`) when present, so a
plan's label is exactly the rule as the printer writes it.
"""

from __future__ import annotations

from ..rules.ast import Aggregate, Atom, BinOp, Const, Literal, Negation, Now, Rule, Term, Var

__all__ = ["rule_text", "literal_text", "term_text", "value_text"]


def value_text(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def term_text(term: Term) -> str:
    if isinstance(term, Var):
        return term.name
    if isinstance(term, Const):
        return value_text(term.value)
    if isinstance(term, Now):
        return "$now"
    if isinstance(term, BinOp):
        return f"({term_text(term.left)} {term.op} {term_text(term.right)})"
    if isinstance(term, Aggregate):
        target = f" {term_text(term.target)}" if term.target is not None else ""
        body = ", ".join(literal_text(lit) for lit in term.body)
        return f"{term.func}{target} : {{ {body} }}"
    return "_"


def literal_text(lit: Literal) -> str:
    if isinstance(lit, Atom):
        return f"{lit.relation}({', '.join(term_text(a) for a in lit.args)})"
    if isinstance(lit, Negation):
        return "!" + literal_text(lit.atom)
    return f"{term_text(lit.left)} {lit.op} {term_text(lit.right)}"


def rule_text(rule: Rule) -> str:
    try:
        from ..rules import format_rule  # type: ignore[attr-defined]
    except ImportError:
        format_rule = None
    if format_rule is not None:
        return str(format_rule(rule))
    head = literal_text(rule.head)
    if not rule.body:
        return head + "."
    return f"{head} :- {', '.join(literal_text(lit) for lit in rule.body)}."

