"""AST to text: the canonical layout, which the parser reads back unchanged.

The printed text of a flattened program is what the policy hash is taken of,
so formatting choices in the source never change a policy's identity.
"""

from __future__ import annotations

from ..values import format_instant, format_value, quote
from . import ast

__all__ = [
    "format_program",
    "format_item",
    "format_rule",
    "format_literal",
    "format_atom",
    "format_term",
    "format_string",
]

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def format_string(value: str) -> str:
    """A string literal with escapes (`"a\\"b"`)."""
    return quote(value)


def _const(c: ast.Const) -> str:
    return format_value(c.value, c.type)


def _precedence(t: ast.Term) -> int:
    return _PRECEDENCE[t.op] if isinstance(t, ast.BinOp) else 3


def format_term(t: ast.Term) -> str:
    if isinstance(t, ast.Var):
        return t.name
    if isinstance(t, ast.Wildcard):
        return "_"
    if isinstance(t, ast.Now):
        return "$now"
    if isinstance(t, ast.Const):
        return _const(t)
    if isinstance(t, ast.BinOp):
        p = _PRECEDENCE[t.op]
        left, right = format_term(t.left), format_term(t.right)
        if _precedence(t.left) < p:
            left = f"({left})"
        if _precedence(t.right) <= p:
            right = f"({right})"
        return f"{left} {t.op} {right}"
    if isinstance(t, ast.Call):
        return f"{t.func}({', '.join(format_term(a) for a in t.args)})"
    if isinstance(t, ast.Aggregate):
        target = "" if t.target is None else format_term(t.target) + " "
        return f"{t.func} {target}: {{ {_body(t.body)} }}"
    raise TypeError(f"not a term: {t!r}")


def format_atom(a: ast.Atom) -> str:
    return f"{a.relation}({', '.join(format_term(x) for x in a.args)})"


def format_literal(lit: ast.Literal) -> str:
    if isinstance(lit, ast.Atom):
        return format_atom(lit)
    if isinstance(lit, ast.Negation):
        return "!" + format_atom(lit.atom)
    if isinstance(lit, ast.Predicate):
        args = ", ".join(format_term(x) for x in lit.args)
        return f"{'!' if lit.negated else ''}{lit.name}({args})"
    return f"{format_term(lit.left)} {lit.op} {format_term(lit.right)}"


def _body(body: tuple[ast.Literal, ...]) -> str:
    return ", ".join(format_literal(lit) for lit in body)


def format_rule(r: ast.Rule) -> str:
    if not r.body:
        return format_atom(r.head) + "."
    return f"{format_atom(r.head)} :- {_body(r.body)}."


def _test(t: ast.TestBlock) -> str:
    lines = [f"test {format_string(t.name)} {{"]
    if t.now is not None:
        lines.append(f"  now {format_instant(t.now)}.")
    lines.extend("  " + format_rule(f) for f in t.facts)
    for e in t.expects:
        lines.append(f"  expect {'not ' if e.negated else ''}{format_atom(e.atom)}.")
    lines.append("}")
    return "\n".join(lines)


def format_item(item: ast.Item) -> str:
    if isinstance(item, ast.Rule):
        return format_rule(item)
    if isinstance(item, ast.Decl):
        params = ", ".join(f"{p.name}: {p.type}" for p in item.params)
        return f".decl {item.name}({params})"
    if isinstance(item, ast.Include):
        return f".include {format_string(item.path)}"
    if isinstance(item, ast.TestBlock):
        return _test(item)
    if isinstance(item, ast.Invariant):
        return f".invariant {format_string(item.name)} :- {_body(item.body)}."
    if isinstance(item, ast.Hint):
        pools = ", ".join(" | ".join(_const(c) for c in pool) or "_" for pool in item.values)
        return f".hint {item.relation}({pools})"
    raise TypeError(f"not an item: {item!r}")


def format_program(program: ast.Program) -> str:
    return "".join(format_item(item) + "\n" for item in program.items)
