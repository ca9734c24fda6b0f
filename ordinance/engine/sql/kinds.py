"""The SQL type of every column: the declarations', the facts', and what the
rules carry from one column to another.

A SQL column holds one type, where a Python relation may hold symbols and
numbers side by side. Each column and each rule variable is a node; a rule
joins the nodes its variables, comparisons and operators make equal (a
union-find), and a declaration, a constant or a fact value gives a node its
kind: `int` (number, time, duration), `float` or `str` (symbol). Two kinds
meeting in one node is refused (`unsupported_on_backend`): the backend never
guesses. A column that no value ever reaches holds integers.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ...diagnostics import Diagnostic, Span
from ...rules.ast import Aggregate, Atom, BinOp, Call, Comparison, Const, Negation, Now, Term, Var, Wildcard
from ...rules.checked import CheckedProgram

__all__ = ["Kinds", "infer_kinds", "kind_of_value", "DECLARED"]

DECLARED = {"symbol": "str", "number": "int", "time": "int", "duration": "int", "float": "float"}
_NUMERIC_OPS = {"band", "bor", "bxor", "land", "lor", "lxor"}
_TEXT_RESULT = {"cat": "str", "to_string": "str", "strlen": "int"}


def kind_of_value(v: Any) -> str | None:
    """`int`, `float` or `str` for a value a column can hold, None otherwise."""
    if isinstance(v, bool):
        return None
    if type(v) is int:  # an Unsigned (a subclass) wraps around: not a SQL BIGINT
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    return None


class Kinds:
    """The union-find: nodes are `(relation, column)` and `(rule, variable)`."""

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}
        self.kind: dict[Any, str] = {}
        self.clash: Diagnostic | None = None

    def find(self, n: Any) -> Any:
        root = n
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while n != root:
            self.parent[n], n = root, self.parent.get(n, n)
        return root

    def union(self, a: Any, b: Any, span: Span | None) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[ra] = rb
        if ra in self.kind:
            self.give(rb, self.kind.pop(ra), span)

    def give(self, n: Any, kind: str, span: Span | None) -> None:
        r = self.find(n)
        have = self.kind.get(r)
        if have is None:
            self.kind[r] = kind
        elif have != kind and self.clash is None:
            self.clash = Diagnostic(
                "unsupported_on_backend",
                f"unsupported on the sql backend: a column or variable holding both {have} and {kind} values",
                span or Span(),
            )

    def of(self, n: Any) -> str:
        return self.kind.get(self.find(n), "int")

    def column(self, relation: str, i: int) -> str:
        return self.of(("col", relation, i))


def infer_kinds(program: CheckedProgram, facts: Mapping[str, Iterable[tuple[Any, ...]]], sample: int = 1000) -> Kinds:
    """The kinds of every column of `program` over `facts` (the first
    `sample` tuples of each relation are read for their values' kinds, the
    loader checks every value against its column's kind)."""
    k = Kinds()
    for name, rel in program.relations.items():
        for i, t in enumerate(rel.types or ()):
            if t in DECLARED:
                k.give(("col", name, i), DECLARED[t], rel.decl.span if rel.decl else None)
    for name, rows in facts.items():
        for n, row in enumerate(rows):
            if n >= sample:
                break
            for i, v in enumerate(row):
                kind = kind_of_value(v)
                if kind is not None:
                    k.give(("col", name, i), kind, None)
    for rid, rule in enumerate(program.rules):
        _atom(k, rid, rule.head)
        for lit in rule.body:
            _literal(k, rid, lit)
    return k


def _atom(k: Kinds, rid: int, atom: Atom, body: bool = False) -> None:
    """A body atom's constants only filter (a symbol never equals a number):
    they give their column no kind."""
    for i, a in enumerate(atom.args):
        if body and isinstance(a, Const):
            continue
        n = _term(k, rid, a)
        if n is not None:
            k.union(("col", atom.relation, i), n, getattr(a, "span", None))


def _literal(k: Kinds, rid: int, lit: Any) -> None:
    if isinstance(lit, Atom):
        _atom(k, rid, lit, True)
    elif isinstance(lit, Negation):
        _atom(k, rid, lit.atom, True)
    elif isinstance(lit, Comparison):
        left, right = _term(k, rid, lit.left), _term(k, rid, lit.right)
        if left is not None and right is not None:
            k.union(left, right, lit.span)


def _term(k: Kinds, rid: int, t: Term) -> Any:
    """The node of term `t` (None for `_`)."""
    if isinstance(t, Wildcard):
        return None
    if isinstance(t, Var):
        return ("var", rid, t.name)
    node = ("term", rid, id(t))
    span = getattr(t, "span", None)
    if isinstance(t, Const):
        kind = kind_of_value(t.value) if t.type != "unsigned" else None
        if kind is not None:
            k.give(node, kind, span)
    elif isinstance(t, Now):
        k.give(node, "int", span)
    elif isinstance(t, BinOp):
        left, right = _term(k, rid, t.left), _term(k, rid, t.right)
        for side in (left, right):
            if side is not None:
                if t.op in _NUMERIC_OPS:
                    k.give(side, "int", span)
                k.union(node, side, span)
    elif isinstance(t, Call):
        args = [_term(k, rid, a) for a in t.args]
        if t.func in _TEXT_RESULT:
            k.give(node, _TEXT_RESULT[t.func], span)
            if t.func != "to_string":
                for a in args:
                    if a is not None:
                        k.give(a, "str", span)
        elif t.func == "lnot":
            for a in args:
                if a is not None:
                    k.give(a, "int", span)
                    k.union(node, a, span)
        else:  # min, max: the arguments' kind
            for a in args:
                if a is not None:
                    k.union(node, a, span)
    elif isinstance(t, Aggregate):
        for lit in t.body:
            _literal(k, rid, lit)
        if t.func == "count":
            k.give(node, "int", span)
        elif t.func == "mean":
            k.give(node, "float", span)
        elif t.target is not None:
            target = _term(k, rid, t.target)
            if target is not None:
                k.union(node, target, span)
    return node
