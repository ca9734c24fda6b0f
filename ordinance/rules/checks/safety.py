"""Safety pass: every variable is bound by a positive literal.

A variable is bound by appearing as a plain argument of a positive body atom
(arithmetic arguments do not bind), by `X = expr` once `expr`'s variables are
bound (either side), or as the result of an aggregate. An aggregate's
variables are local to it unless they also occur outside every aggregate (a
target variable is always local): Soufflé's scoping, see rules/scope.py. Heads, comparisons, arithmetic and
negated literals use bound variables only, except that with
`existential_negation` a variable occurring in exactly one negated literal and
nowhere else reads as "some value", like `_`. Records and constructors are
patterns, as in Soufflé: a variable that is a field of a record (or an
argument of a constructor) in a positive atom is bound, `X = [A, B]` binds
`A` and `B` once `X` is bound (and `X` once they are), and `_` may be a field.

Codes: `unbound_variable`, `safety_violations` (`_` where a value is needed, a
variable that occurs only under negation), `aggregate_position`.
"""

from __future__ import annotations

from typing import Iterator

from ...diagnostics import Diagnostic
from .. import ast
from ..functors import FUNCTORS
from ..scope import feeding_vars, injected_vars
from .walk import literal_terms, subterms, term_aggregates, term_vars

__all__ = ["check_safety", "SAFETY_CODES"]

SAFETY_CODES = frozenset({"unbound_variable", "safety_violations", "aggregate_position", "range_position"})


def _deep_vars(t: ast.Term) -> Iterator[ast.Var]:
    """Variables of a term, including those inside aggregates."""
    return (s for s in subterms(t, into_aggregates=True) if isinstance(s, ast.Var))


def _wildcards(t: ast.Term) -> Iterator[ast.Wildcard]:
    return (s for s in subterms(t) if isinstance(s, ast.Wildcard))


def _pattern(t: ast.Term) -> Iterator[ast.Term]:
    """The fields of a record or constructor pattern, nested ones too."""
    if isinstance(t, (ast.Record, ast.Branch)):
        for a in t.args:
            yield a
            yield from _pattern(a)


def _pattern_vars(t: ast.Term) -> Iterator[str]:
    """The variables a pattern binds (`t` itself if a variable)."""
    return (s.name for s in (t, *_pattern(t)) if isinstance(s, ast.Var))


def _loose(t: ast.Term) -> Iterator[ast.Wildcard]:
    """Wildcards where a value is needed: not the fields of a pattern."""
    fields = {id(s) for s in _pattern(t) if isinstance(s, ast.Wildcard)}
    return (w for w in _wildcards(t) if id(w) not in fields)


class _Clause:
    """The safety of one clause (a rule, an invariant, an aggregate body)."""

    def __init__(
        self,
        found: list[Diagnostic],
        reported: set[str],
        existential: bool,
    ) -> None:
        self.found = found
        self.reported = reported
        self.existential = existential

    def report(self, code: str, message: str, node: ast.Var | ast.Term | ast.Literal) -> None:
        self.found.append(Diagnostic(code, message, node.span))

    def unbound(self, var: ast.Var, where: str) -> None:
        if var.name in self.reported:
            return
        self.reported.add(var.name)
        if where == "in a fact":
            message = f"variable `{var.name}` in a fact; facts must be ground"
        else:
            message = f"variable `{var.name}` {where} is not bound by a positive body literal"
        self.report("unbound_variable", message, var)

    def misplaced(self, term: ast.Term) -> None:
        for agg in term_aggregates(term):
            self.report(
                "aggregate_position",
                f"`{agg.func}` stands only in a comparison in an invariant, as in `N = {agg.func} ...`",
                agg,
            )

    def check(
        self,
        head: ast.Atom | None,
        body: tuple[ast.Literal, ...],
        outer: frozenset[str],
        targets: tuple[ast.Term, ...] = (),
    ) -> None:
        # where each variable occurs: -1 for the head, else the literal index
        occurs: dict[str, set[int]] = {}
        for term in (head.args if head else ()) + targets:
            for v in _deep_vars(term):
                occurs.setdefault(v.name, set()).add(-1)
        for i, lit in enumerate(body):
            for term in literal_terms(lit):
                for v in _deep_vars(term):
                    occurs.setdefault(v.name, set()).add(i)

        outside = feeding_vars(body) | outer
        bound = set(outer)
        for lit in body:
            if isinstance(lit, ast.Atom):
                bound.update(v for a in lit.args for v in _pattern_vars(a))
        self._equalities(body, bound)

        if head is not None:
            where = "in the head" if body else "in a fact"
            for term in head.args:
                for w in _wildcards(term):
                    self.report("safety_violations", "`_` is not allowed in a head", w)
                self.misplaced(term)
                for v in term_vars(term):
                    if v.name not in bound:
                        self.unbound(v, where)
        for i, lit in enumerate(body):
            if isinstance(lit, (ast.Comparison, ast.Predicate)):
                self._comparison(lit, bound, outside)
                continue
            atom = lit.atom if isinstance(lit, ast.Negation) else lit
            for arg in atom.args:
                self.misplaced(arg)
                if isinstance(arg, (ast.Var, ast.Wildcard)):
                    if isinstance(lit, ast.Negation) and isinstance(arg, ast.Var):
                        self._negated(arg, i, body, bound, occurs)
                    continue
                for w in _loose(arg):
                    self.report("safety_violations", "`_` is not allowed in an expression", w)
                fields = set(_pattern_vars(arg)) if isinstance(lit, ast.Negation) else set()
                for v in term_vars(arg):
                    if v.name in fields:
                        self._negated(v, i, body, bound, occurs)
                    elif v.name not in bound:
                        self.unbound(v, "in an expression")
        for term in targets:
            for w in _wildcards(term):
                self.report("safety_violations", "`_` is not allowed in an aggregate target", w)
            for v in term_vars(term):
                if v.name not in bound:
                    self.unbound(v, "in the aggregate target")

    def _equalities(self, body: tuple[ast.Literal, ...], bound: set[str]) -> None:
        changed = True
        while changed:
            changed = False
            for lit in body:
                if not (isinstance(lit, ast.Comparison) and lit.op == "="):
                    continue
                for var, other in ((lit.left, lit.right), (lit.right, lit.left)):
                    if isinstance(var, (ast.Record, ast.Branch)) and all(v.name in bound for v in term_vars(other)):
                        new = set(_pattern_vars(var)) - bound
                        if new and not any(True for _ in _wildcards(other)):
                            bound.update(new)
                            changed = True
                        continue
                    if (
                        isinstance(var, ast.Var)
                        and var.name not in bound
                        and not any(True for _ in _wildcards(other))
                        and all(v.name in bound for v in term_vars(other))
                    ):
                        bound.add(var.name)
                        changed = True

    def _negated(
        self,
        var: ast.Var,
        index: int,
        body: tuple[ast.Literal, ...],
        bound: set[str],
        occurs: dict[str, set[int]],
    ) -> None:
        if var.name in bound:
            return
        where = occurs[var.name]
        if self.existential and where == {index}:
            return
        if all(i >= 0 and isinstance(body[i], ast.Negation) for i in where):
            if var.name not in self.reported:
                self.reported.add(var.name)
                self.report(
                    "safety_violations",
                    f"variable `{var.name}` occurs only in negated literals; "
                    "bind it with a positive literal or write `_`",
                    var,
                )
            return
        self.unbound(var, "in a negated literal")

    def _comparison(self, lit: ast.Comparison | ast.Predicate, bound: set[str], outside: set[str]) -> None:
        what = "a comparison" if isinstance(lit, ast.Comparison) else f"`{lit.name}`"
        pattern = isinstance(lit, ast.Comparison) and lit.op == "="
        for term in literal_terms(lit):
            for w in _loose(term) if pattern else _wildcards(term):
                self.report("safety_violations", f"`_` is not allowed in {what}", w)
            for v in term_vars(term):
                if v.name not in bound:
                    self.unbound(v, f"in {what}")
            for agg in term_aggregates(term):
                self._aggregate(agg, bound, outside)

    def _aggregate(self, agg: ast.Aggregate, bound: set[str], outside: set[str]) -> None:
        # Soufflé's scoping (rules/scope.py): a variable also used outside every
        # aggregate belongs to the enclosing clause; a target variable never does
        shared = injected_vars(agg, outside)
        for v in _deep_vars(agg):
            if v.name in shared and v.name not in bound:
                self.unbound(v, "is used inside an aggregate but")
        targets = (agg.target,) if agg.target is not None else ()
        self.check(None, agg.body, frozenset(shared), targets)


def _ground(atom: ast.Atom, what: str, allow_wildcard: bool, found: list[Diagnostic]) -> None:
    for arg in atom.args:
        if isinstance(arg, ast.Wildcard):
            if not allow_wildcard:
                found.append(Diagnostic("safety_violations", f"`_` is not allowed in {what}", arg.span))
            continue
        for w in _loose(arg) if allow_wildcard else _wildcards(arg):  # `expect p([_, 1])` is a pattern
            found.append(Diagnostic("safety_violations", "`_` is not allowed in an expression", w.span))
        for v in term_vars(arg):
            found.append(
                Diagnostic(
                    "unbound_variable",
                    f"variable `{v.name}` in {what}; test data must be ground",
                    v.span,
                )
            )
        for agg in term_aggregates(arg):
            found.append(Diagnostic("aggregate_position", f"`{agg.func}` is not allowed in {what}", agg.span))


def _ranges(terms: tuple[ast.Term, ...], body: tuple[ast.Literal, ...], found: list[Diagnostic]) -> None:
    """`range(...)` has several values: it may only be a side of `X = range(...)`."""
    allowed: set[int] = set()
    every: list[ast.Term] = []
    stack: list[tuple[tuple[ast.Term, ...], tuple[ast.Literal, ...]]] = [(terms, body)]
    while stack:
        ts, lits = stack.pop()
        for lit in lits:
            if isinstance(lit, ast.Comparison) and lit.op == "=":
                allowed.update(id(side) for side in (lit.left, lit.right))
            ts = ts + literal_terms(lit)
        for t in ts:
            for sub in subterms(t):
                every.append(sub)
                if isinstance(sub, ast.Aggregate):
                    stack.append(((sub.target,) if sub.target is not None else (), sub.body))
    for t in every:
        if isinstance(t, ast.Call) and t.func in FUNCTORS and FUNCTORS[t.func].multi and id(t) not in allowed:
            found.append(
                Diagnostic(
                    "range_position",
                    f"`{t.func}` cannot stand inside a negation, an aggregate or a constraint; "
                    f"bind it first with `X = {t.func}(...)`",
                    t.span,
                )
            )


def check_safety(items: tuple[ast.Item, ...], existential_negation: bool = False) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for item in items:
        if isinstance(item, (ast.Rule, ast.Invariant)):
            _ranges(item.head.args if isinstance(item, ast.Rule) else (), item.body, found)
        if isinstance(item, ast.Rule):
            _Clause(found, set(), existential_negation).check(item.head, item.body, frozenset())
        elif isinstance(item, ast.Invariant):
            _Clause(found, set(), existential_negation).check(None, item.body, frozenset())
        elif isinstance(item, ast.TestBlock):
            for fact in item.facts:
                _ground(fact.head, "a test fact", False, found)
            for expect in item.expects:
                _ground(expect.atom, "an expectation", True, found)
    return found
