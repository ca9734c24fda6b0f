"""Type pass: constants and variables respect `.decl` types.

Two kinds only: symbols and numbers (`number`, `time` and `duration` are all
numbers inside). A constant of the wrong kind at a declared position, a
variable used as both kinds in one rule, arithmetic on a symbol, and a
comparison between a symbol and a number are `type_mismatch`.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic, Related, Span
from .. import ast
from ..functors import FUNCTORS, PREDICATES, Builtin
from ..printer import format_term
from ..scope import local_vars, outside_vars

__all__ = ["check_types"]

_ARTICLE = {"symbol": "a symbol", "number": "a number"}


def _kind(type_: str) -> str:
    return "symbol" if type_ == "symbol" else "number"


def _show(c: ast.Const) -> str:
    text = format_term(c)
    return f"`{text}`" if len(text) <= 30 else f"`{text[:27]}...`"


class _Rule:
    """Kinds of the variables of one rule, and what contradicts them."""

    def __init__(self, decls: dict[str, ast.Decl], found: list[Diagnostic]) -> None:
        self.decls = decls
        self.found = found
        self.env: dict[str, tuple[str, Span]] = {}
        self.outside: set[str] = set()  # the clause's variables outside every aggregate

    def mismatch(self, message: str, span: Span, related: tuple[Related, ...] = ()) -> None:
        self.found.append(Diagnostic("type_mismatch", message, span, related=related))

    def bind(self, var: ast.Var, kind: str) -> None:
        prev = self.env.setdefault(var.name, (kind, var.span))
        if prev[0] != kind:
            self.mismatch(
                f"variable `{var.name}` is used as {_ARTICLE[kind]} here "
                f"but as {_ARTICLE[prev[0]]} where first used",
                var.span,
                (Related("first used here", prev[1]),),
            )

    def atom(self, atom: ast.Atom) -> None:
        decl = self.decls.get(atom.relation)
        if decl is None or decl.arity != atom.arity:
            for arg in atom.args:
                self.kind_of(arg)
            return
        for i, (arg, param) in enumerate(zip(atom.args, decl.params), 1):
            self.expect(arg, param.type, f"argument {i} of `{atom.relation}`")

    def expect(self, term: ast.Term, type_: str, what: str, verb: str = "is declared") -> None:
        kind = _kind(type_)
        if isinstance(term, ast.Var):
            self.bind(term, kind)
            return
        actual = self.kind_of(term)
        if actual is not None and actual != kind:
            got = _show(term) if isinstance(term, ast.Const) else _ARTICLE[actual]
            self.mismatch(f"{what} {verb} `{type_}`, got {got}", term.span)

    def kind_of(self, term: ast.Term) -> str | None:
        """The kind of a term's value (None if unknown); checks inner arithmetic."""
        if isinstance(term, ast.Const):
            return _kind(term.type)
        if isinstance(term, ast.Var):
            known = self.env.get(term.name)
            return known[0] if known else None
        if isinstance(term, ast.Now):
            return "number"
        if isinstance(term, ast.BinOp):
            for side in (term.left, term.right):
                if isinstance(side, ast.Var):
                    self.bind(side, "number")
                elif self.kind_of(side) == "symbol":
                    self.mismatch(f"arithmetic `{term.op}` on a symbol", side.span)
            return "number"
        if isinstance(term, ast.Call):
            builtin = FUNCTORS.get(term.func)
            if builtin is None:
                return None
            self.arguments(builtin, term.args)
            return builtin.result
        if isinstance(term, ast.Aggregate):
            # the aggregate's local variables have kinds of their own (rules/scope.py)
            hidden = {v: self.env.pop(v) for v in local_vars(term, self.outside) if v in self.env}
            outer = set(self.env)
            self.body(term.body)
            target = None if term.target is None else self.kind_of(term.target)
            for v in [v for v in self.env if v not in outer and v in local_vars(term, self.outside)]:
                del self.env[v]
            self.env.update(hidden)
            if term.target is None:
                return "number"
            if term.func == "sum" and target == "symbol":
                self.mismatch("`sum` over a symbol", term.target.span)
            return "number" if term.func == "sum" else target
        return None

    def arguments(self, builtin: Builtin, args: tuple[ast.Term, ...]) -> None:
        """Each argument of a functor or constraint against its parameter."""
        for i, arg in enumerate(args):
            want = builtin.param(i)
            what = f"argument {i + 1} of `{builtin.name}`"
            if want != "numeric":
                self.expect(arg, want, what, "must be")
            elif isinstance(arg, ast.Var):
                self.bind(arg, "number")
            elif self.kind_of(arg) == "symbol":
                self.mismatch(f"{what} must be a number, got {_described(arg)}", arg.span)

    def body(self, body: tuple[ast.Literal, ...]) -> None:
        for lit in body:
            if isinstance(lit, ast.Atom):
                self.atom(lit)
            elif isinstance(lit, ast.Negation):
                self.atom(lit.atom)
        for lit in body:
            if isinstance(lit, ast.Comparison):
                self.comparison(lit)
            elif isinstance(lit, ast.Predicate) and lit.name in PREDICATES:
                self.arguments(PREDICATES[lit.name], lit.args)

    def comparison(self, lit: ast.Comparison) -> None:
        left, right = self.kind_of(lit.left), self.kind_of(lit.right)
        if left is not None and right is not None and left != right:
            self.mismatch(
                f"comparison `{lit.op}` of {_ARTICLE[left]} with {_ARTICLE[right]}", lit.span
            )
        elif left is None and right is not None and isinstance(lit.left, ast.Var):
            self.bind(lit.left, right)
        elif right is None and left is not None and isinstance(lit.right, ast.Var):
            self.bind(lit.right, left)


def _described(term: ast.Term) -> str:
    return _show(term) if isinstance(term, ast.Const) else "a symbol"


def check_types(items: tuple[ast.Item, ...]) -> list[Diagnostic]:
    decls: dict[str, ast.Decl] = {}
    for item in items:
        if isinstance(item, ast.Decl):
            decls.setdefault(item.name, item)
    found: list[Diagnostic] = []
    for item in items:
        if isinstance(item, ast.Rule):
            rule = _Rule(decls, found)
            rule.outside = outside_vars(item.head.args, item.body)
            rule.atom(item.head)
            rule.body(item.body)
        elif isinstance(item, ast.Invariant):
            rule = _Rule(decls, found)
            rule.outside = outside_vars((), item.body)
            rule.body(item.body)
        elif isinstance(item, ast.TestBlock):
            for atom in [f.head for f in item.facts] + [e.atom for e in item.expects]:
                _Rule(decls, found).atom(atom)
        elif isinstance(item, ast.Hint):
            decl = decls.get(item.relation)
            if decl is None or decl.arity != len(item.values):
                continue
            checker = _Rule(decls, found)
            for i, (pool, param) in enumerate(zip(item.values, decl.params), 1):
                for const in pool:
                    checker.expect(const, param.type, f"argument {i} of `{item.relation}`")
    return found
