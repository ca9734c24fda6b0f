"""Text for plan labels and explanations: the language's printer, plus values.

`Typed` formats runtime values by the policy's declared types: instants as
`2026-08-14T10:05:00Z` and durations as `4h`, where a value sits at a `time`
or `duration` argument or comes through a rule variable that does.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..diagnostics import OrdinanceError
from ..rules import ast
from ..rules.checked import CheckedProgram
from ..rules.parser import parse
from ..rules.printer import format_literal as literal_text
from ..rules.printer import format_rule as rule_text
from ..rules.printer import format_string
from ..rules.printer import format_term as term_text
from ..values import format_duration, format_instant

__all__ = ["rule_text", "literal_text", "term_text", "value_text", "Typed"]

_TIMED = ("time", "duration")


def value_text(value: Any, type_: str | None = None) -> str:
    """A runtime value as the language writes it (symbols quoted; ints at a
    `time` or `duration` type as instants or durations)."""
    if isinstance(value, str):
        return format_string(value)
    if type(value) is int and type_ == "time":
        return format_instant(value)
    if type(value) is int and type_ == "duration":
        return "-" + format_duration(-value) if value < 0 else format_duration(value)
    return str(value)


def _arith(op: str, left: str | None, right: str | None) -> str | None:
    """The type of `left op right` where it is a time or a duration."""
    pair = (left, right)
    if op == "+" and pair in (("time", "duration"), ("duration", "time")):
        return "time"
    if op == "-" and pair == ("time", "time"):
        return "duration"
    if op in "+-" and left in _TIMED and right == "duration":
        return left
    if op == "*" and "duration" in pair and "time" not in pair:
        return "duration"
    if op == "/" and left == "duration" and right != "duration":
        return "duration"
    return None


class Typed:
    """Value formatting by a program's declared relation types and the
    types they give each rule's variables (inferred, cached per rule)."""

    def __init__(self, program: CheckedProgram) -> None:
        self.program = program
        self.types: Mapping[str, tuple[str, ...] | None] = {n: r.types for n, r in program.relations.items()}
        self._vars: dict[int, dict[str, str]] = {}

    def atom(self, relation: str | None, t: tuple[Any, ...] | None) -> str:
        """`relation(args)`, each argument by its declared type; None is `_`."""
        types = self.types.get(relation or "") or ()
        args = (
            "_" if v is None else value_text(v, types[i] if i < len(types) else None)
            for i, v in enumerate(t or ())
        )
        return f"{relation}({', '.join(args)})"

    def variables(self, rule: int | None) -> dict[str, str]:
        """The type of each variable of rule `rule` that the declarations fix."""
        if rule is None or not 0 <= rule < len(self.program.rules):
            return {}
        env = self._vars.get(rule)
        if env is None:
            env = self._vars[rule] = self._infer(self.program.rules[rule])
        return env

    def bindings(self, rule: int | None, b: tuple[tuple[str, Any], ...]) -> str:
        env = self.variables(rule)
        return ", ".join(f"{k}={value_text(v, env.get(k))}" for k, v in b)

    def literal(self, text: str, rule: int | None, b: tuple[tuple[str, Any], ...] = ()) -> str:
        """An instantiated literal (as provenance writes it) with its values
        retyped; the text itself when it does not read back."""
        try:
            items = parse(f"t() :- {text}.").items
        except OrdinanceError:
            return text
        if len(items) != 1 or not isinstance(items[0], ast.Rule) or len(items[0].body) != 1:
            return text
        lit = items[0].body[0]
        if isinstance(lit, (ast.Atom, ast.Negation)):
            return literal_text(self._typed_atom(lit))
        assert isinstance(lit, ast.Comparison)
        env, bound = self.variables(rule), dict(b)
        body = self.program.rules[rule].body if rule is not None and rule in self._vars else ()
        for orig in body:
            if isinstance(orig, ast.Comparison) and orig.op == lit.op:
                left = self._zip(orig.left, lit.left, env, bound)
                right = self._zip(orig.right, lit.right, env, bound)
                if left is not None and right is not None:
                    return literal_text(ast.Comparison(lit.op, left, right, lit.span))
        return text

    def _typed_atom(self, lit: ast.Atom | ast.Negation) -> ast.Atom | ast.Negation:
        atom = lit.atom if isinstance(lit, ast.Negation) else lit
        types = self.types.get(atom.relation) or ()
        args = tuple(
            ast.Const(a.value, types[i], a.span)
            if isinstance(a, ast.Const) and a.type == "number" and i < len(types) and types[i] in _TIMED
            else a
            for i, a in enumerate(atom.args)
        )
        typed = ast.Atom(atom.relation, args, atom.span)
        return ast.Negation(typed, lit.span) if isinstance(lit, ast.Negation) else typed

    def _zip(self, orig: ast.Term, inst: ast.Term, env: dict[str, str], b: dict[str, Any]) -> ast.Term | None:
        """`inst` (an instance of `orig`) with its numbers typed as `orig`'s
        terms are; None when `inst` is not an instance of `orig` under `b`."""
        if isinstance(inst, ast.Const):
            if isinstance(orig, ast.Var):
                if orig.name in b and b[orig.name] != inst.value:
                    return None
            elif isinstance(orig, ast.Const):
                return orig if orig.value == inst.value else None
            elif not isinstance(orig, (ast.BinOp, ast.Now)):
                return None
            type_ = self._type(orig, env)
            if isinstance(inst.value, int) and type_ in _TIMED:
                return ast.Const(inst.value, type_, inst.span)
            return inst
        if isinstance(inst, ast.Var):
            return inst if isinstance(orig, ast.Var) and orig.name == inst.name else None
        if isinstance(inst, ast.Wildcard):
            return inst if isinstance(orig, (ast.Var, ast.Wildcard)) else None
        if isinstance(inst, ast.Now):
            return inst if isinstance(orig, ast.Now) else None
        if isinstance(inst, ast.BinOp) and isinstance(orig, ast.BinOp) and orig.op == inst.op:
            left, right = self._zip(orig.left, inst.left, env, b), self._zip(orig.right, inst.right, env, b)
            if left is None or right is None:
                return None
            return ast.BinOp(inst.op, left, right, inst.span)
        return None

    def _type(self, term: ast.Term, env: Mapping[str, str]) -> str | None:
        if isinstance(term, ast.Const):
            return term.type
        if isinstance(term, ast.Var):
            return env.get(term.name)
        if isinstance(term, ast.Now):
            return "time"
        if isinstance(term, ast.BinOp):
            return _arith(term.op, self._type(term.left, env), self._type(term.right, env))
        if isinstance(term, ast.Aggregate):
            target = None if term.target is None else self._type(term.target, env)
            if term.func in ("min", "max") or (term.func == "sum" and target == "duration"):
                return target
            return "number"
        return None

    def _infer(self, rule: ast.Rule) -> dict[str, str]:
        env: dict[str, str] = {}
        comparisons: list[ast.Comparison] = []

        def atom(a: ast.Atom) -> None:
            types = self.types.get(a.relation) or ()
            for i, arg in enumerate(a.args):
                if isinstance(arg, ast.Var) and i < len(types) and env.get(arg.name, "number") == "number":
                    env[arg.name] = types[i]

        def body(lits: tuple[ast.Literal, ...]) -> None:
            for lit in lits:
                if isinstance(lit, ast.Atom):
                    atom(lit)
                elif isinstance(lit, ast.Negation):
                    atom(lit.atom)
                else:
                    comparisons.append(lit)
                    for side in (lit.left, lit.right):
                        if isinstance(side, ast.Aggregate):
                            body(side.body)

        atom(rule.head)
        body(rule.body)
        for _ in range(len(comparisons) + 1):  # a variable's type can flow through comparisons
            changed = False
            for c in comparisons:
                for mine, other in ((c.left, c.right), (c.right, c.left)):
                    t = self._type(other, env)
                    if isinstance(mine, ast.Var) and t in _TIMED and mine.name not in env:
                        env[mine.name] = t
                        changed = True
            if not changed:
                break
        return env
