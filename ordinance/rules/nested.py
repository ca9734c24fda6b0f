"""An aggregate inside an aggregate's body, as Soufflé allows: computed by a
relation of its own, so every aggregate the engine runs is one level deep.

    r(S) :- S = sum M : { b(W), M = min X : { a(X, W) } }.

becomes

    r(S) :- S = sum M : { b(W), agg#...(W, M) }.
    agg#...(W, M) :- b(W), M = min X : { a(X, W) }.

The new relation holds, per binding of the variables the inner aggregate
shares with the enclosing one (or with the rule), the inner aggregate's
value. Its rule reads the enclosing body's other literals (`b(W)`), which
bind the shared variables as they are bound where the inner aggregate
stands, and the rule's own literals outside aggregates when the inner
aggregate reads a variable of the rule. A variable of the inner aggregate
that the enclosing one uses only in its target is a witness of a `min` or
`max` (witness.py grounds it in the new rule), so `sum Y : { b(W), _ = min
X : { a(X, W, Y) } }` sums the Y of the rows attaining each minimum. An
aggregate as an argument inside an aggregate's body is first bound by
`A = agg` there (as lift.py does in a rule). The new relation is named by the
inner aggregate's rule, so the same aggregate twice is one relation; deeper
nesting unfolds one level per relation. A nesting `count`, `sum` or `mean`
ranges over the distinct bindings of its body's named variables, as Soufflé's
materialized body does (materialize.py, which also reads every other body
Soufflé materializes so).
"""

from __future__ import annotations


from . import ast
from .lift import lifted
from .materialize import SET_AGGREGATES, materialized, projected, relation_rule
from .scope import outside_vars
from .witness import FreshNames, rule_vars

__all__ = ["unnest_aggregates"]


def _aggregates(t: ast.Term) -> list[ast.Aggregate]:
    return [s for s in ast.subterms(t) if isinstance(s, ast.Aggregate)]


def _nests(agg: ast.Aggregate) -> bool:
    """Whether an aggregate holds another, in its body or its target."""
    terms = [
        *([agg.target] if agg.target is not None else []),
        *(t for lit in agg.body for t in ast.literal_terms(lit)),
    ]
    return any(isinstance(s, ast.Aggregate) for t in terms for s in ast.subterms(t, True))


def unnest_aggregates(rule: ast.Rule) -> list[ast.Rule]:
    """The rule with each aggregate nested in an aggregate's body computed
    by a relation of its own, and those relations' rules (the rule alone
    when nothing nests)."""
    terms = [*rule.head.args, *(t for lit in rule.body for t in ast.literal_terms(lit))]
    if not any(_aggregates(t) for t in terms):
        return [rule]
    names = FreshNames(rule_vars(rule))
    made: list[ast.Rule] = []
    context = tuple(lit for lit in rule.body if not any(_aggregates(t) for t in ast.literal_terms(lit)))
    scope = outside_vars(rule.head.args, rule.body)

    def flatten(agg: ast.Aggregate) -> ast.Aggregate:
        """`agg` with the aggregates of its body read from relations."""
        body = list(_bound(agg.body, names))
        target = agg.target
        if target is not None and _aggregates(target):  # `sum (min X : { ... }) : { ... }`
            lifted = ast.Var(names.fresh("T"), target.span)
            body.append(ast.Comparison("=", lifted, target, target.span))
            target = lifted
        drop: list[int] = []
        for i, lit in enumerate(body):
            inner = [a for t in ast.literal_terms(lit) for a in _aggregates(t)]
            if not inner:
                continue
            others = [x for j, x in enumerate(body) if j != i]
            around = outside_vars((target,) if target is not None else (), others) | scope
            replaced: dict[int, ast.Var] = {}
            for a in inner:
                shared = sorted(v for v in ast.var_names(a, True) if v in around and not _is_target(a, v))
                result = ast.Var(names.fresh("M"), a.span)
                cols = (*(ast.Var(v, a.span) for v in shared), result)
                guard = tuple(others)
                bound = {v.name for x in guard if isinstance(x, ast.Atom) for v in x.args if isinstance(v, ast.Var)}
                if not set(shared) | outside_vars((), others) <= bound:
                    guard += context
                guard = _groundable(guard)
                made_rule = relation_rule(cols, (*guard, ast.Comparison("=", result, a, a.span)), a.span)
                made.extend(unnest_aggregates(made_rule))
                replaced[id(a)] = result
                body.append(made_rule.head)
            body[i] = ast.map_terms(lit, lambda t: _replace(t, replaced))
            if isinstance(lit, ast.Comparison) and lit.op == "=" and ast.Wildcard in (type(lit.left), type(lit.right)):
                drop.append(i)  # `_ = min X : { ... }`: the relation's atom asks for the witnesses only
        kept = tuple(x for i, x in enumerate(body) if i not in drop)
        if agg.func in SET_AGGREGATES:  # a body holding an aggregate is materialized
            kept = projected(kept, names, made)
        return ast.Aggregate(agg.func, target, kept, agg.span)

    def top(t: ast.Term) -> ast.Term:
        if isinstance(t, ast.Aggregate):
            return flatten(t) if _nests(t) else materialized(t, rule, names, made)
        return ast.map_children(t, top)

    head = ast.Atom(rule.head.relation, tuple(top(a) for a in rule.head.args), rule.head.span)
    body = tuple(ast.map_terms(lit, top) for lit in rule.body)
    if not made:
        return [rule]
    return [ast.Rule(head, body, rule.span, rule.more_heads), *made]


def _groundable(guard: tuple[ast.Literal, ...]) -> tuple[ast.Literal, ...]:
    """The guard without the literals it cannot ground: one over a variable
    no atom (or equation over bound variables) of the guard binds, such as
    the enclosing body's `2 * T >= I` where `T` is the inner aggregate's own
    result. Leaving a filter out only widens the new relation: it is joined
    back on the shared variables, where the filter still stands."""
    bound = {
        v.name
        for x in guard
        if isinstance(x, ast.Atom)
        for a in x.args
        for v in ast.subterms(a)
        if isinstance(v, ast.Var)
    }
    changed = True
    while changed:
        changed = False
        for x in guard:
            if isinstance(x, ast.Comparison) and x.op == "=":
                for var, expr in ((x.left, x.right), (x.right, x.left)):
                    if isinstance(var, ast.Var) and var.name not in bound and outside_vars((expr,), ()) <= bound:
                        bound.add(var.name)
                        changed = True
    return tuple(x for x in guard if isinstance(x, ast.Atom) or outside_vars((), (x,)) <= bound)


def _is_target(agg: ast.Aggregate, v: str) -> bool:
    return isinstance(agg.target, ast.Var) and agg.target.name == v


def _replace(t: ast.Term, replaced: dict[int, ast.Var]) -> ast.Term:
    if id(t) in replaced:
        return replaced[id(t)]
    if isinstance(t, ast.Aggregate):
        return t
    return ast.map_children(t, lambda x: _replace(x, replaced))


def _bound(body: tuple[ast.Literal, ...], names: FreshNames) -> list[ast.Literal]:
    """An aggregate body with each aggregate in an atom's argument bound by `A = agg`."""
    out: list[ast.Literal] = []
    extra: list[ast.Literal] = []

    def lift(t: ast.Term) -> ast.Term:
        return lifted(t, names, extra)

    for lit in body:
        if isinstance(lit, ast.Atom):
            out.append(ast.Atom(lit.relation, tuple(lift(a) for a in lit.args), lit.span))
        elif isinstance(lit, ast.Negation):
            out.append(
                ast.Negation(
                    ast.Atom(lit.atom.relation, tuple(lift(a) for a in lit.atom.args), lit.atom.span), lit.span
                )
            )
        else:
            out.append(lit)
    return out + extra
