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

# Soufflé's binding strength of each binary operator (higher binds tighter);
# UNARY is prefix `-`, `bnot`, `lnot` (and negative constants), PRIMARY the rest
_PRECEDENCE = {
    "lor": 1,
    "lxor": 2,
    "land": 3,
    "bor": 4,
    "bxor": 5,
    "band": 6,
    "bshl": 7,
    "bshr": 7,
    "bshru": 7,
    "+": 8,
    "-": 8,
    "*": 9,
    "/": 9,
    "%": 9,
    "^": 11,
}
UNARY, PRIMARY = 10, 12
_PREFIX = ("bnot", "lnot")


def format_string(value: str) -> str:
    """A string literal with escapes (`"a\\"b"`)."""
    return quote(value)


def _const(c: ast.Const) -> str:
    if c.type == "float":
        return repr(float(c.value))
    if c.type == "unsigned":
        return f"{int(c.value)}u"
    return format_value(c.value, c.type)


def _precedence(t: ast.Term) -> int:
    if isinstance(t, ast.BinOp):
        return _PRECEDENCE[t.op]
    if isinstance(t, ast.Call) and t.func in _PREFIX:
        return UNARY
    if isinstance(t, ast.Const) and not isinstance(t.value, str) and t.value < 0:
        return UNARY
    if isinstance(t, ast.Const) and t.type == "float" and str(t.value).startswith("-"):
        return UNARY  # -0.0
    return PRIMARY


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
        if t.op == "^":  # right-associative: a primary, then anything unary or tighter
            if _precedence(t.left) < PRIMARY:
                left = f"({left})"
            if _precedence(t.right) < UNARY:
                right = f"({right})"
        else:
            if _precedence(t.left) < p:
                left = f"({left})"
            if _precedence(t.right) <= p:
                right = f"({right})"
        return f"{left} {t.op} {right}"
    if isinstance(t, ast.Call):
        return f"{t.func}({', '.join(format_term(a) for a in t.args)})"
    if isinstance(t, ast.Aggregate):
        target = "" if t.target is None else format_term(t.target) + " "
        if isinstance(t.target, ast.Aggregate):  # `sum (min X : { ... }) : { ... }`
            target = f"({target.strip()}) "
        return f"{t.func} {target}: {{ {_body(t.body)} }}"
    if isinstance(t, ast.Record):
        return f"[{', '.join(format_term(a) for a in t.args)}]" if t.args else "nil"
    if isinstance(t, ast.Branch):
        return f"${t.name}({', '.join(format_term(a) for a in t.args)})" if t.args else f"${t.name}"
    raise TypeError(f"not a term: {t!r}")


def _fields(fields: tuple[ast.Param, ...]) -> str:
    return ", ".join(f"{p.name}: {p.type}" for p in fields)


def format_atom(a: ast.Atom) -> str:
    return f"{a.relation}({', '.join(format_term(x) for x in a.args)})"


def format_literal(lit: ast.Literal) -> str:
    if isinstance(lit, ast.Atom):
        return format_atom(lit)
    if isinstance(lit, ast.Negation):
        return "!" + format_atom(lit.atom)
    if isinstance(lit, ast.Disjunction):
        return "(" + " ; ".join(_body(branch) for branch in lit.branches) + ")"
    if isinstance(lit, ast.NegatedGroup):
        if len(lit.body) == 1 and isinstance(lit.body[0], ast.Disjunction):
            return "!" + format_literal(lit.body[0])
        return f"!({_body(lit.body)})"
    if isinstance(lit, ast.Predicate):
        args = ", ".join(format_term(x) for x in lit.args)
        return f"{'!' if lit.negated else ''}{lit.name}({args})"
    return f"{format_term(lit.left)} {lit.op} {format_term(lit.right)}"


def _body(body: tuple[ast.Literal, ...]) -> str:
    return ", ".join(format_literal(lit) for lit in body)


def format_rule(r: ast.Rule) -> str:
    if not r.body:
        return format_atom(r.head) + "."
    heads = ", ".join(format_atom(h) for h in (r.head, *r.more_heads))
    return f"{heads} :- {_body(r.body)}."


def _test(t: ast.TestBlock) -> str:
    lines = [f"test {format_string(t.name)} {{"]
    if t.now is not None:
        lines.append(f"  now {format_instant(t.now)}.")
    lines.extend("  " + format_rule(f) for f in t.facts)
    for e in t.expects:
        lines.append(f"  expect {'not ' if e.negated else ''}{format_atom(e.atom)}.")
    lines.append("}")
    return "\n".join(lines)


def _component_type(t: ast.ComponentType) -> str:
    return t.name + (f"<{', '.join(t.args)}>" if t.args else "")


def _component(c: ast.Component) -> str:
    head = _component_type(ast.ComponentType(c.name, c.params))
    bases = f" : {', '.join(map(_component_type, c.bases))}" if c.bases else ""
    lines = [f".comp {head}{bases} {{"]
    for item in c.items:
        text = f".override {item.relation}" if isinstance(item, ast.Override) else format_item(item)
        lines.extend("  " + line for line in text.splitlines())
    return "\n".join([*lines, "}"])


def _choice(keys: tuple[ast.ChoiceKey, ...]) -> str:
    if not keys:
        return ""
    names = [k.attributes for k in keys]
    return " choice-domain " + ", ".join(k[0] if len(k) == 1 else f"({', '.join(k)})" for k in names)


def format_item(item: ast.Item) -> str:
    if isinstance(item, ast.Rule):
        return format_rule(item)
    if isinstance(item, ast.Decl):
        params = ", ".join(f"{p.name}: {p.type}" for p in item.params)
        return f".decl {item.name}({params})" + "".join(f" {q}" for q in item.qualifiers) + _choice(item.choice)
    if isinstance(item, ast.IODirective):
        params = ", ".join(f"{k}={format_string(v)}" for k, v in item.params)
        return f".{item.kind} {item.relation}" + (f"({params})" if item.params else "")
    if isinstance(item, ast.TypeDecl):
        if item.supertype is not None:
            return f".type {item.name} <: {item.supertype}"
        return f".type {item.name} = {' | '.join(item.union)}"
    if isinstance(item, ast.RecordType):
        return f".type {item.name} = [{_fields(item.fields)}]"
    if isinstance(item, ast.AdtType):
        return f".type {item.name} = " + " | ".join(f"{b.name} {{{_fields(b.fields)}}}" for b in item.branches)
    if isinstance(item, ast.Include):
        return f".include {format_string(item.path)}"
    if isinstance(item, ast.TestBlock):
        return _test(item)
    if isinstance(item, ast.Invariant):
        return f".invariant {format_string(item.name)} :- {_body(item.body)}."
    if isinstance(item, ast.Subsumption):
        return f"{format_atom(item.dominated)} <= {format_atom(item.dominating)} :- {_body(item.body)}."
    if isinstance(item, ast.Hint):
        pools = ", ".join(" | ".join(_const(c) for c in pool) or "_" for pool in item.values)
        return f".hint {item.relation}({pools})"
    if isinstance(item, ast.Pragma):
        return f".pragma {format_string(item.key)}" + (f" {format_string(item.value)}" if item.value else "")
    if isinstance(item, ast.Component):
        return _component(item)
    if isinstance(item, ast.Init):
        return f".init {item.name} = {_component_type(item.component)}"
    raise TypeError(f"not an item: {item!r}")


def format_program(program: ast.Program) -> str:
    return "".join(format_item(item) + "\n" for item in program.items)
