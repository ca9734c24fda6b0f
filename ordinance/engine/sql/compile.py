"""Rules to SQL: one `SELECT DISTINCT` per rule (or per semi-naive variant).

A body's positive atoms are the `FROM` list (one alias each); a variable is
the first column it appears in, and each later occurrence an equality;
constants, `$now` and expression arguments are `WHERE` conditions. An
assignment `X = expr` binds `X` to the expression once its variables are
bound; other comparisons filter. A negation is `NOT EXISTS`, an aggregate a
scalar subquery over the distinct bindings of its body's own variables (and
its target), correlated with the rule's variables it shares: the engine's
semantics, where `sum` adds the target of each distinct binding, `count` of
an empty body is 0 and `min`/`max` of one binds nothing. Which variables
come from the rule is rules/scope.py's answer, as for the engine.

`refusals` lists, before anything runs, each construct this compiler does
not translate, as an `unsupported_on_backend` diagnostic with its span: the
backend answers exactly as the Python engine does, or not at all.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ...diagnostics import Diagnostic, Span
from ...rules.ast import (
    Aggregate,
    Atom,
    BinOp,
    Branch,
    Call,
    Comparison,
    Const,
    Negation,
    Now,
    Predicate,
    Record,
    Rule,
    Term,
    Var,
    Wildcard,
    literal_terms,
    subterms,
    var_names,
)
from ...rules.checked import CheckedProgram
from ...rules.scope import feeding_vars, injected_vars
from ..qualify import is_qualified
from .dialects import Dialect
from .kinds import DECLARED, Kinds, kind_of_value

__all__ = ["refusals", "RuleCompiler", "columns"]

OPS = {"+", "-", "*", "/", "%", "band", "bor", "bxor", "land", "lor", "lxor"}
FUNCS = {"min", "max", "cat", "strlen", "to_string", "lnot"}
_COLUMN = re.compile(r"t[0-9]+\.c[0-9]+")
_CMP = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _refuse(what: str, span: Span | None) -> Diagnostic:
    return Diagnostic("unsupported_on_backend", f"unsupported on the sql backend: {what}", span or Span())


def refusals(program: CheckedProgram, kinds: Kinds) -> list[Diagnostic]:
    """What the compiler does not translate, each with its span (empty: all of it)."""
    found: list[Diagnostic] = []
    if is_qualified(program):
        found.append(_refuse("`choice-domain`, subsumption or `autoinc()`", None))
    for name, rel in program.relations.items():
        for t in rel.types or ():
            if t not in DECLARED:
                found.append(_refuse(f"a column of type `{t}` in `{name}`", rel.decl.span if rel.decl else None))
    for rid, rule in enumerate(program.rules):
        for term in rule.head.args:
            _term_refusals(term, kinds, rid, found)
        for lit in rule.body:
            if isinstance(lit, Predicate):
                found.append(_refuse(f"the constraint `{lit.name}`", lit.span))
            for term in literal_terms(lit):
                _term_refusals(term, kinds, rid, found)
    if kinds.clash is not None:
        found.append(kinds.clash)
    return found


def _term_refusals(term: Term, kinds: Kinds, rid: int, found: list[Diagnostic]) -> None:
    for t in subterms(term, into_aggregates=True):
        span = getattr(t, "span", None)
        if isinstance(t, (Record, Branch)):
            found.append(_refuse("records and constructors", span))
        elif isinstance(t, Call) and t.func not in FUNCS:
            found.append(_refuse(f"the functor `{t.func}`", span))
        elif isinstance(t, Call) and t.func == "to_string" and any(_kind(kinds, rid, a) == "float" for a in t.args):
            found.append(_refuse("`to_string` of a float", span))
        elif isinstance(t, BinOp) and t.op not in OPS:
            found.append(_refuse(f"the operator `{t.op}`", span))
        elif isinstance(t, Const) and t.type == "unsigned":
            found.append(_refuse("unsigned numbers", span))
        elif isinstance(t, Const) and isinstance(t.value, float) and not math.isfinite(t.value):
            found.append(_refuse("a float that is not finite", span))
        elif isinstance(t, Aggregate) and t.func == "mean":
            found.append(_refuse("the `mean` aggregate", span))
        elif isinstance(t, Aggregate) and t.func == "sum" and _kind(kinds, rid, t) == "float":
            found.append(_refuse("`sum` of floats (its rounding depends on the order it adds in)", span))
        elif isinstance(t, Aggregate):
            for lit in t.body:
                if isinstance(lit, Predicate):
                    found.append(_refuse(f"the constraint `{lit.name}`", lit.span))


def _kind(kinds: Kinds, rid: int, t: Term) -> str:
    if isinstance(t, Var):
        return kinds.of(("var", rid, t.name))
    return kinds.of(("term", rid, id(t)))


def columns(arity: int) -> list[str]:
    """A table's columns: `c0`, `c1`, ...; a nullary relation has one, `z`,
    always 0 (a row present means the relation holds)."""
    return [f"c{i}" for i in range(arity)] if arity else ["z"]


@dataclass(slots=True)
class _Body:
    froms: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


class RuleCompiler:
    """Compiles the rules of one program for one dialect; `table(relation)`
    names the table holding a relation's tuples."""

    def __init__(self, program: CheckedProgram, kinds: Kinds, dialect: Dialect, now: int):
        self.program, self.kinds, self.d, self.now = program, kinds, dialect, now
        self.n = 0
        self.outside: set[str] = set()  # the rule's variables that feed its aggregates

    def alias(self, prefix: str = "t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def select(
        self, rid: int, table: Callable[[str], str], delta: Mapping[int, str] | None = None, distinct: bool = True
    ) -> str:
        """`SELECT DISTINCT` of rule `rid`'s head (`distinct` False: where the
        caller removes duplicates); body literal `p` reads table `delta[p]`
        instead of `table(...)` (a semi-naive variant)."""
        rule = self.program.rules[rid]
        self.outside = feeding_vars(rule.body)
        occurrences: dict[str, int] = {}
        for t in rule.head.args:
            for v in var_names(t, True):
                occurrences[v] = occurrences.get(v, 0) + 1
        for lit in rule.body:
            for t in literal_terms(lit):
                for v in var_names(t, True):
                    occurrences[v] = occurrences.get(v, 0) + 1
        body = self.body(rule, rid, list(rule.body), {}, table, delta or {}, occurrences)
        cols = []
        for i, a in enumerate(rule.head.args):
            sql = self.expr(a, body.env, rid, table, occurrences)
            if not (isinstance(a, Var) and _COLUMN.fullmatch(sql)):  # a column has its type already
                sql = self.d.cast(sql, self.kinds.column(rule.head.relation, i))
            cols.append(f"{sql} AS c{i}")
        out = ", ".join(cols) or "0 AS z"
        return f"SELECT {'DISTINCT ' if distinct else ''}{out}{self._from_where(body)}"

    def _from_where(self, body: _Body) -> str:
        sql = f" FROM {', '.join(body.froms)}" if body.froms else ""
        return sql + (f" WHERE {' AND '.join(body.where)}" if body.where else "")

    def body(
        self,
        rule: Rule,
        rid: int,
        lits: list[Any],
        outer: Mapping[str, str],
        table: Callable[[str], str],
        delta: Mapping[int, str],
        occurrences: Mapping[str, int],
    ) -> _Body:
        b = _Body(env=dict(outer))
        pending: list[tuple[str, Term] | Comparison | Negation] = []
        for p, lit in enumerate(lits):
            if isinstance(lit, Atom):
                a = self.alias()
                b.froms.append(f"{delta.get(p) or table(lit.relation)} AS {a}")
                for i, arg in enumerate(lit.args):
                    col = f"{a}.c{i}"
                    if isinstance(arg, Var) and arg.name not in b.env:
                        b.env[arg.name] = col
                    elif isinstance(arg, Const):
                        b.where.append(self._equals_constant(col, arg, lit.relation, i))
                    elif not isinstance(arg, Wildcard):
                        pending.append((col, arg))
            elif isinstance(lit, (Comparison, Negation)):
                pending.append(lit)
        while pending:
            rest: list[Any] = []
            for item in pending:
                sql = self._step(item, b, rid, table, occurrences)
                if sql is None:
                    rest.append(item)
                elif sql:
                    b.where.append(sql)
            if len(rest) == len(pending):
                raise _Unready(rule.span)
            pending = rest
        return b

    def _step(self, item: Any, b: _Body, rid: int, table: Callable[[str], str], occ: Mapping[str, int]) -> str | None:
        """The condition `item` adds once its variables are bound ("" if it
        binds a variable instead), None while it waits."""
        if isinstance(item, tuple):
            col, term = item
            if not self._ready(term, b.env):
                return None
            return f"{col} = {self.expr(term, b.env, rid, table, occ)}"
        if isinstance(item, Negation):
            if not all(v in b.env for v in self._negation_needs(item, b.env, occ)):
                return None
            return self._not_exists(item.atom, b.env, rid, table, occ)
        left, right = item.left, item.right
        if item.op == "=":
            for var, other in ((left, right), (right, left)):
                if isinstance(var, Var) and var.name not in b.env and self._ready(other, b.env):
                    b.env[var.name] = self.expr(other, b.env, rid, table, occ)
                    if isinstance(other, Aggregate) and other.func in ("min", "max"):
                        return f"{b.env[var.name]} IS NOT NULL"
                    return ""
        if not (self._ready(left, b.env) and self._ready(right, b.env)):
            return None
        lhs, rhs = self.expr(left, b.env, rid, table, occ), self.expr(right, b.env, rid, table, occ)
        return f"{lhs} {_CMP[item.op]} {rhs}"

    def _equals_constant(self, col: str, c: Const, relation: str, i: int) -> str:
        """`col = c`; FALSE when one is a symbol and the other a number (never
        equal, in the engine too)."""
        if (kind_of_value(c.value) == "str") != (self.kinds.column(relation, i) == "str"):
            return "FALSE"
        return f"{col} = {self.d.literal(c.value)}"

    def _negation_needs(self, neg: Negation, env: Mapping[str, str], occ: Mapping[str, int]) -> list[str]:
        """The variables a negation waits for: those occurring elsewhere in the
        rule (one only under the negation is existential, as `_`)."""
        own: dict[str, int] = {}
        for a in neg.atom.args:
            for v in var_names(a):
                own[v] = own.get(v, 0) + 1
        return [v for v, n in own.items() if occ.get(v, 0) > n]

    def _ready(self, term: Term, env: Mapping[str, str]) -> bool:
        if isinstance(term, Aggregate):
            return all(v in env for v in self._outer(term))
        return all(v in env for v in var_names(term))

    def _outer(self, agg: Aggregate) -> list[str]:
        """The aggregate's variables that come from the rule (rules/scope.py):
        a target variable, or one that only the head or a sibling aggregate
        names, is the aggregate's own."""
        return sorted(injected_vars(agg, self.outside))

    def _not_exists(
        self, atom: Atom, env: Mapping[str, str], rid: int, table: Callable[[str], str], occ: Mapping[str, int]
    ) -> str:
        a = self.alias("n")
        conds, local = [], dict(env)
        for i, arg in enumerate(atom.args):
            col = f"{a}.c{i}"
            if isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Var) and arg.name not in local:
                local[arg.name] = col
            elif isinstance(arg, Const):
                conds.append(self._equals_constant(col, arg, atom.relation, i))
            else:
                conds.append(f"{col} = {self.expr(arg, local, rid, table, occ)}")
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return f"NOT EXISTS (SELECT 1 FROM {table(atom.relation)} AS {a}{where})"

    def expr(
        self, t: Term, env: Mapping[str, str], rid: int, table: Callable[[str], str], occ: Mapping[str, int]
    ) -> str:
        if isinstance(t, Var):
            return env[t.name]
        if isinstance(t, Const):
            return self.d.literal(t.value)
        if isinstance(t, Now):
            return self.d.literal(self.now)
        if isinstance(t, BinOp):
            left = self.expr(t.left, env, rid, table, occ)
            right = self.expr(t.right, env, rid, table, occ)
            return self.d.binop(t.op, left, right, _kind(self.kinds, rid, t))
        if isinstance(t, Call):
            args = [self.expr(a, env, rid, table, occ) for a in t.args]
            return self.d.call(t.func, args)
        if isinstance(t, Aggregate):
            return self._aggregate(t, env, rid, table, occ)
        raise _Unready(getattr(t, "span", None))

    def _named(self, lit: Any) -> Any:
        if not isinstance(lit, Atom):
            return lit
        args = tuple(Var(f"?{self.alias('w')}") if isinstance(a, Wildcard) else a for a in lit.args)
        return Atom(lit.relation, args, lit.span)

    def _aggregate(
        self, agg: Aggregate, env: Mapping[str, str], rid: int, table: Callable[[str], str], occ: Mapping[str, int]
    ) -> str:
        outer = {v: env[v] for v in self._outer(agg)}
        inner_occ = dict(occ)
        rule = self.program.rules[rid]
        lits = [self._named(lit) for lit in agg.body]  # a `_` is a binding of its own, as the engine counts
        b = self.body(rule, rid, lits, outer, table, {}, inner_occ)
        named = {v for lit in lits for t in literal_terms(lit) for v in var_names(t)}
        local = sorted(v for v in named - set(outer) if v in b.env)
        cols = [f"{b.env[v]} AS l{i}" for i, v in enumerate(local)]
        if agg.target is not None:
            cols.append(f"{self.expr(agg.target, b.env, rid, table, inner_occ)} AS v")
        elif not cols:
            cols.append("1 AS v")
        s = self.alias("s")
        inner = f"(SELECT DISTINCT {', '.join(cols)}{self._from_where(b)}) AS {s}"
        kind = _kind(self.kinds, rid, agg)
        value = {
            "count": "COUNT(*)",
            "sum": f"COALESCE(SUM({s}.v), 0)",
            "min": f"MIN({s}.v)",
            "max": f"MAX({s}.v)",
        }[agg.func]
        return f"(SELECT {self.d.cast(value, kind)} FROM {inner})"


class _Unready(Exception):
    """A body whose bindings this compiler cannot order (refused)."""

    def __init__(self, span: Span | None):
        super().__init__("unready")
        self.span = span
