"""Type pass: constants, variables, operators and functors respect the types.

Kinds of value: symbols, numbers (`number`, `time` and `duration` are all
numbers inside), `unsigned` and `float`; a `.type` has its base's kind
(typedecls.py). An integer literal such as `1` fits any numeric kind, as in
Soufflé. A constant of the wrong kind at a declared position, a variable used
as two kinds in one rule, arithmetic on a symbol or mixing kinds, a bitwise
or logical operator (or `%`) on a float, a functor argument of the wrong
kind, and a comparison between kinds are `type_mismatch`. A record type or
ADT is a kind of its own; records.py checks record terms and constructors.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic, Related, Span
from .. import ast
from ..functors import FUNCTORS, OPERAND, PREDICATES, Builtin
from ..printer import format_term
from ..scope import feeding_vars, local_vars
from .records import Structures, branch_kind, expect_structured, structures
from .typedecls import kind_of_type, resolve_types

__all__ = ["check_types"]


class _Articles(dict[str, str]):
    def __missing__(self, kind: str) -> str:  # a record type or ADT
        return f"a `{kind}` value"


_ARTICLE = _Articles(
    {
        "symbol": "a symbol",
        "number": "a number",
        "unsigned": "an unsigned number",
        "float": "a float",
        "numeral": "a number",
        "record": "a record",
    }
)
_NUMERIC = ("number", "unsigned", "float")
NUMERAL = "numeral"  # an integer literal: fits any numeric kind


def _unify(a: str | None, b: str | None) -> str | None:
    """The kind both fit, None if unknown; raises ValueError when none does."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a == NUMERAL and b in _NUMERIC:
        return b
    if b == NUMERAL and a in _NUMERIC:
        return a
    raise ValueError((a, b))


def _show(c: ast.Const) -> str:
    text = format_term(c)
    return f"`{text}`" if len(text) <= 30 else f"`{text[:27]}...`"


class _Rule:
    """Kinds of the variables of one rule, and what contradicts them."""

    def __init__(
        self,
        decls: dict[str, ast.Decl],
        types: dict[str, str],
        found: list[Diagnostic],
        structs: Structures | None = None,
    ) -> None:
        self.decls = decls
        self.types = types
        self.found = found
        self.structs = structs or Structures()
        self.env: dict[str, tuple[str, Span]] = {}
        self.outside: set[str] = set()  # the clause's variables outside every aggregate

    def mismatch(self, message: str, span: Span, related: tuple[Related, ...] = ()) -> None:
        self.found.append(Diagnostic("type_mismatch", message, span, related=related))

    def unknown_branch(self, term: ast.Branch) -> None:
        self.found.append(Diagnostic("unknown_branch", f"no `.type` declares a branch `{term.name}`", term.span))

    def bind(self, var: ast.Var, kind: str) -> None:
        prev = self.env.get(var.name)
        if prev is None:
            self.env[var.name] = (kind, var.span)
            return
        try:
            joined = _unify(prev[0], kind)
        except ValueError:
            self.mismatch(
                f"variable `{var.name}` is used as {_ARTICLE[kind]} here but as {_ARTICLE[prev[0]]} where first used",
                var.span,
                (Related("first used here", prev[1]),),
            )
            return
        if joined is not None and joined != prev[0]:
            self.env[var.name] = (joined, prev[1])

    def atom(self, atom: ast.Atom) -> None:
        decl = self.decls.get(atom.relation)
        if decl is None or decl.arity != atom.arity:
            for arg in atom.args:
                self.kind_of(arg)
            return
        for i, (arg, param) in enumerate(zip(atom.args, decl.params), 1):
            self.expect(arg, param.type, f"argument {i} of `{atom.relation}`")

    def expect(self, term: ast.Term, type_: str, what: str, verb: str = "is declared") -> None:
        kind = kind_of_type(type_, self.types)
        if kind is None:
            self.kind_of(term)
            return
        self.expect_kind(term, kind, f"{what} {verb} `{type_}`")

    def expect_kind(self, term: ast.Term, kind: str, what: str) -> None:
        if isinstance(term, ast.Var):
            self.bind(term, kind)
            return
        if isinstance(term, (ast.Record, ast.Branch)):
            expect_structured(self, term, kind, what)
            return
        actual = self.kind_of(term)
        try:
            _unify(actual, kind)
        except ValueError:
            got = _show(term) if isinstance(term, ast.Const) else _ARTICLE[actual or kind]
            self.mismatch(f"{what}, got {got}", term.span)

    def kind_of(self, term: ast.Term) -> str | None:
        """The kind of a term's value (None if unknown); checks inner terms."""
        if isinstance(term, ast.Const):
            if term.type == "number":
                return NUMERAL
            return kind_of_type(term.type, self.types)
        if isinstance(term, ast.Var):
            known = self.env.get(term.name)
            return known[0] if known else None
        if isinstance(term, ast.Now):
            return "number"
        if isinstance(term, ast.BinOp):
            return self.arithmetic(term)
        if isinstance(term, ast.Call):
            builtin = FUNCTORS.get(term.func)
            return None if builtin is None else self.arguments(builtin, term.args)
        if isinstance(term, ast.Aggregate):
            return self.aggregate(term)
        if isinstance(term, ast.Branch):
            return branch_kind(self, term)
        if isinstance(term, ast.Record):  # its type comes from where it stands
            for a in term.args:
                self.kind_of(a)
        return None

    def arithmetic(self, term: ast.BinOp) -> str | None:
        sides = (term.left, term.right)
        kinds = [self.kind_of(side) for side in sides]
        if term.op == "+" and "symbol" in kinds:  # concatenation, as Soufflé's `+` on symbols
            for side, kind in zip(sides, kinds):
                if kind != "symbol":
                    self.expect_kind(side, "symbol", "`+` on a symbol concatenates: its other operand must be `symbol`")
            return "symbol"
        for side, kind in zip(sides, kinds):
            if kind == "symbol" or kind in self.structs or isinstance(side, (ast.Record, ast.Branch)):
                self.mismatch(f"arithmetic `{term.op}` on {_ARTICLE[kind or 'record']}", side.span)
                return "number"
        try:
            kind = _unify(kinds[0], kinds[1])
        except ValueError:
            self.mismatch(
                f"arithmetic `{term.op}` of {_ARTICLE[kinds[0] or 'number']} and {_ARTICLE[kinds[1] or 'number']}",
                term.span,
            )
            return kinds[0]
        if kind == "float" and OPERAND[term.op] == "integral":
            self.mismatch(f"`{term.op}` on a float", term.span)
        for side in sides:
            if isinstance(side, ast.Var):
                self.bind(side, kind if kind is not None else NUMERAL)  # a numeric kind, which one yet unknown
        return kind if kind is not None else "number"

    def arguments(self, builtin: Builtin, args: tuple[ast.Term, ...]) -> str | None:
        """Each argument of a functor or constraint against its parameter;
        the result's kind."""
        same: str | None = None
        for i, arg in enumerate(args):
            want = builtin.param(i)
            what = f"argument {i + 1} of `{builtin.name}`"
            if want in ("symbol", "number"):
                self.expect_kind(arg, want, f"{what} must be `{want}`")
                continue
            kind = self.kind_of(arg)
            if want == "any":
                continue
            if isinstance(arg, (ast.Record, ast.Branch)):
                kind = kind or "record"
            allowed = ("number", "unsigned") if want == "integral" else _NUMERIC
            if kind in (None, NUMERAL):
                if isinstance(arg, ast.Var) and builtin.result != "same":
                    self.bind(arg, "number")
                continue
            if kind not in allowed:
                self.mismatch(
                    f"{what} must be {'an integer' if want == 'integral' else 'a number'}, got {_ARTICLE[kind]}",
                    arg.span,
                )
                continue
            try:
                same = _unify(same, kind)
            except ValueError:
                self.mismatch(
                    f"arguments of `{builtin.name}` mix {_ARTICLE[same or 'number']} and {_ARTICLE[kind]}", arg.span
                )
        if builtin.result == "same":
            for arg in args:
                if isinstance(arg, ast.Var) and same is not None:
                    self.bind(arg, same)
            return same if same is not None else NUMERAL
        return builtin.result

    def aggregate(self, term: ast.Aggregate) -> str | None:
        # the aggregate's local variables have kinds of their own (rules/scope.py)
        local = local_vars(term, self.outside)
        hidden = {v: self.env.pop(v) for v in local if v in self.env}
        outer = set(self.env)
        self.body(term.body)
        target = None if term.target is None else self.kind_of(term.target)
        for v in [v for v in self.env if v not in outer and v in local]:
            del self.env[v]
        self.env.update(hidden)
        if term.target is None:
            return "number"
        if term.func in ("sum", "mean") and target == "symbol":
            self.mismatch(f"`{term.func}` over a symbol", term.target.span)
            return "number"
        if target in self.structs or isinstance(term.target, (ast.Record, ast.Branch)):
            self.mismatch(f"`{term.func}` over {_ARTICLE[target or 'record']}", term.target.span)
            return None
        return "float" if term.func == "mean" else target

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
        sides = (lit.left, lit.right)
        if any(isinstance(s, (ast.Record, ast.Branch)) for s in sides) or left in self.structs or right in self.structs:
            if lit.op not in ("=", "!="):
                self.mismatch(f"comparison `{lit.op}` orders numbers and symbols, not records or ADT values", lit.span)
                return
            for side, other in ((lit.left, right), (lit.right, left)):
                if isinstance(side, ast.Record) and other is not None:
                    self.expect_kind(side, other, f"compared with {_ARTICLE[other]}")
                    return
        try:
            kind = _unify(left, right)
        except ValueError:
            self.mismatch(
                f"comparison `{lit.op}` of {_ARTICLE[left or 'number']} with {_ARTICLE[right or 'number']}", lit.span
            )
            return
        if kind is None or kind == NUMERAL:
            return
        for side in (lit.left, lit.right):
            if isinstance(side, ast.Var):
                self.bind(side, kind)


def check_types(items: tuple[ast.Item, ...]) -> list[Diagnostic]:
    types, found = resolve_types(items)
    structs = structures(items)
    decls: dict[str, ast.Decl] = {}
    for item in items:
        if isinstance(item, ast.Decl):
            decls.setdefault(item.name, item)
    for item in items:
        if isinstance(item, ast.Rule):
            rule = _Rule(decls, types, found, structs)
            rule.outside = feeding_vars(item.body)
            rule.body(item.body)  # first: the body's kinds type the head's arithmetic (`r(V + W)` of floats)
            rule.atom(item.head)
        elif isinstance(item, ast.Invariant):
            rule = _Rule(decls, types, found, structs)
            rule.outside = feeding_vars(item.body)
            rule.body(item.body)
        elif isinstance(item, ast.TestBlock):
            for atom in [f.head for f in item.facts] + [e.atom for e in item.expects]:
                _Rule(decls, types, found, structs).atom(atom)
        elif isinstance(item, ast.Hint):
            decl = decls.get(item.relation)
            if decl is None or decl.arity != len(item.values):
                continue
            checker = _Rule(decls, types, found, structs)
            for i, (pool, param) in enumerate(zip(item.values, decl.params), 1):
                for const in pool:
                    checker.expect(const, param.type, f"argument {i} of `{item.relation}`")
    return found
