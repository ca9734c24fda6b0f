"""The demand (magic-set) transformation: a checked program and a query
with some arguments bound -> the program that derives only what the query
needs.

    demand = magic(program, "status", (True, False, False))
    # evaluate demand.program with the seed fact {demand.seed: {("svc",)}}

Each derived relation the query reaches is *adorned*: `p@bf` holds the
tuples of `p` whose first argument was asked for, `?p@bf` (its magic
relation) the values asked for. A rule `p(X, Y) :- q(X, Z), r(Z, Y).` read
with X bound becomes

    p@bf(X, Y) :- ?p@bf(X), q@bf(X, Z), r@bf(Z, Y).
    ?q@bf(X) :- ?p@bf(X).
    ?r@bf(Z) :- ?p@bf(X), q@bf(X, Z).

The sideways information passing is the rule's source order, as why-not
walks it (`plan_rule(source_order=True)`: comparisons, negations and
aggregates placed as soon as their variables are bound), so the demanded
tuples cover every pattern a proof or a why-not reads. Relations fed only
by facts are read as they are; a derived relation also reads its own given
facts (`p@bf(X, Y) :- ?p@bf(X), p(X, Y).`).

Stratification (as Soufflé's `MagicSet.cpp` labels negated relations): a
relation read under negation or inside an aggregate is adorned in a context
of its own, one per such occurrence (`q@b@7.2`: rule 7, step 2), so its
demand never mixes with the demand of the strata above it. Where the demand
of such an occurrence still depends on the relation that negates it (the
occurrence sits on a recursive cycle of the rewritten program), the
occurrence reads a fully computed copy instead (`q@ff@*`, the original rules
renamed, seeded unconditionally), and the rewrite is repeated until the
program stratifies. Arithmetic, functors and `$now` are kept as written; a
head argument that is an expression is never treated as bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from ..rules.ast import Aggregate, Atom, BinOp, Call, Comparison, Literal, Negation, Predicate, Rule, Term, Var
from ..rules.checked import CheckedProgram, Relation
from ..rules.checks.stratify import dependency_graph, stratify
from .plan import AggStep, AntiJoin, Assign, Filter, Scan, Step, plan_rule, term_vars

__all__ = ["Demand", "magic", "adornment", "FULL"]

FULL = "*"  # the context of fully computed copies


@dataclass(frozen=True, slots=True)
class Demand:
    """The rewritten program for one query relation and adornment.

    `seed` is the query's magic relation: evaluate `program` with the bound
    values as its one fact; `query` then holds the answers (and more of the
    query relation, when recursion asks for it). `origin` maps every
    adorned relation to the relation it holds tuples of."""

    program: CheckedProgram
    query: str
    seed: str
    origin: dict[str, str]
    full: frozenset[str]  # the occurrences read fully computed (rule.step keys)


def adornment(bound: tuple[bool, ...]) -> str:
    return "".join("b" if b else "f" for b in bound)


def magic(program: CheckedProgram, relation: str, bound: tuple[bool, ...]) -> Demand:
    """The demand transformation of `program` for `relation` with the
    arguments `bound` marks given."""
    full: set[str] = set()
    while True:
        rewrite = _Rewrite(program, full)
        query = rewrite.adorned(relation, adornment(bound), "")
        rewrite.run()
        cyclic = _cyclic(rewrite.rules, rewrite.context)
        if not cyclic:
            break
        full |= cyclic
    rules = tuple(rewrite.rules)
    relations = {
        name: Relation(name, n, None, None, name in rewrite.derived) for name, n in rewrite.arity.items()
    }
    for name, rel in program.relations.items():
        relations.setdefault(name, Relation(name, rel.arity, rel.types, rel.decl, False))
    checked = CheckedProgram(rules, relations, stratify(rules).strata)
    return Demand(checked, query, _magic_name(query), dict(rewrite.origin), frozenset(full))


def _name(relation: str, adorn: str, context: str) -> str:
    return f"{relation}@{adorn}" + (f"@{context}" if context else "")


def _magic_name(name: str) -> str:
    return f"?{name}"


def _rename(term: Term) -> Term:
    """The planner's fresh names (`_#0`, `X#3`) renamed apart from the
    names it will make when it plans the rewritten rule."""
    if isinstance(term, Var):
        return Var(term.name.replace("#", "~"), term.span) if "#" in term.name else term
    if isinstance(term, BinOp):
        return BinOp(term.op, _rename(term.left), _rename(term.right), term.span)
    if isinstance(term, Call):
        return Call(term.func, tuple(_rename(a) for a in term.args), term.span)
    if isinstance(term, Aggregate):
        target = None if term.target is None else _rename(term.target)
        return Aggregate(term.func, target, tuple(_rename_literal(lit) for lit in term.body), term.span)
    return term


def _rename_atom(atom: Atom, relation: str | None = None) -> Atom:
    return Atom(relation or atom.relation, tuple(_rename(a) for a in atom.args), atom.span)


def _rename_literal(lit: Literal) -> Literal:
    if isinstance(lit, Atom):
        return _rename_atom(lit)
    if isinstance(lit, Negation):
        return Negation(_rename_atom(lit.atom), lit.span)
    if isinstance(lit, Predicate):
        return Predicate(lit.name, tuple(_rename(a) for a in lit.args), lit.negated, lit.span)
    return Comparison(lit.op, _rename(lit.left), _rename(lit.right), lit.span)


def _vars(term: Term | None) -> set[str]:
    return set(term_vars(term))


class _Rewrite:
    def __init__(self, program: CheckedProgram, full: set[str]):
        self.program = program
        self.full = full
        self.derived = {r.head.relation for r in program.rules if r.body}
        self.rules: list[Rule] = []
        self.arity: dict[str, int] = {}
        self.origin: dict[str, str] = {}
        self.context: dict[str, str] = {}  # adorned relation -> its context
        self.todo: list[tuple[str, str, str]] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.seeded: set[str] = set()

    def adorned(self, relation: str, adorn: str, context: str) -> str:
        """The name of `relation` adorned in `context`, queued for rewriting."""
        key = (relation, adorn, context)
        name = _name(*key)
        if key not in self.seen:
            self.seen.add(key)
            self.todo.append(key)
            self.arity[name] = len(adorn)
            self.arity[_magic_name(name)] = adorn.count("b")
            self.origin[name] = relation
            self.context[name] = self.context[_magic_name(name)] = context
            if context == FULL and _magic_name(name) not in self.seeded:
                self.seeded.add(_magic_name(name))
                self.rules.append(Rule(Atom(_magic_name(name), ())))
        return name

    def run(self) -> None:
        while self.todo:
            self._relation(*self.todo.pop())

    def _relation(self, relation: str, adorn: str, context: str) -> None:
        name = _name(relation, adorn, context)
        magic = _magic_name(name)
        n = len(adorn)
        # the relation's own given facts
        xs = tuple(Var(f"~c{i}") for i in range(n))
        self.rules.append(Rule(Atom(name, xs), (Atom(magic, tuple(x for x, a in zip(xs, adorn) if a == "b")),
                                                Atom(relation, xs))))
        for rid in self.program.rules_for(relation):
            rule = self.program.rules[rid]
            if not rule.body:
                continue
            self._rule(rid, name, adorn, context)

    def _rule(self, rid: int, name: str, adorn: str, context: str) -> None:
        plan = plan_rule(self.program.rules[rid], rid, source_order=True)
        head = tuple(_rename(t) for t in plan.head)
        bound: set[str] = set()
        given: list[Term] = []
        for t, a in zip(head, adorn):
            if a == "b":
                given.append(t)
                if isinstance(t, Var):
                    bound.add(t.name)
        body: list[Literal] = [Atom(_magic_name(name), tuple(given))]
        for i, step in enumerate(plan.steps):
            body.append(self._step(step, body, bound, context, f"{rid}.{i}"))
        self.rules.append(Rule(Atom(name, head), tuple(body), self.program.rules[rid].span))

    def _read(self, atom: Atom, body: list[Literal], bound: set[str], context: str) -> Atom:
        """A positive read of `atom` in `context` after `body`: its demand
        (a magic rule) and the adorned atom."""
        atom = _rename_atom(atom)
        if atom.relation not in self.derived:
            return atom
        if context == FULL:
            adorn = "f" * atom.arity
        else:
            adorn = "".join("b" if _vars(a) <= bound else "f" for a in atom.args)
        target = self.adorned(atom.relation, adorn, context)
        if context != FULL:
            demand = Atom(_magic_name(target), tuple(a for a, x in zip(atom.args, adorn) if x == "b"))
            if body != [demand]:  # `?p@b(X) :- ?p@b(X).` adds nothing
                self.rules.append(Rule(demand, tuple(body)))
        return Atom(target, atom.args, atom.span)

    def _step(self, step: Step, body: list[Literal], bound: set[str], context: str, key: str) -> Literal:
        if isinstance(step, Scan):
            atom = self._read(step.atom, body, bound, context)
            bound |= {a.name for a in atom.args if isinstance(a, Var)}
            return atom
        if isinstance(step, AntiJoin):
            inner = FULL if context == FULL or key in self.full else key
            return Negation(self._read(step.atom, body, bound, inner))
        if isinstance(step, Filter):
            return _rename_literal(step.literal)
        if isinstance(step, Assign):
            var = step.var.replace("#", "~")
            bound.add(var)
            return Comparison("=", Var(var), _rename(step.expr))
        assert isinstance(step, AggStep)
        inner = FULL if context == FULL or key in self.full else key
        lits: list[Literal] = []
        inner_bound = set(bound)
        for j, sub in enumerate(step.plan.steps):
            lits.append(self._step(sub, body + lits, inner_bound, inner, f"{key}.{j}"))
        agg = step.aggregate
        target = None if agg.target is None else _rename(agg.target)
        var = step.var.replace("#", "~")
        bound.add(var)
        return Comparison("=", Var(var), Aggregate(agg.func, target, tuple(lits), agg.span))


def _cyclic(rules: list[Rule], context: dict[str, str]) -> set[str]:
    """The contexts of negated or aggregated reads on a cycle of `rules`."""
    graph = dependency_graph(tuple(rules))
    members = nx.condensation(graph).graph["mapping"]
    found: set[str] = set()
    for src, dst, data in graph.edges(data=True):
        if data["negative"] and members[src] == members[dst]:
            ctx = context.get(src)
            assert ctx and ctx != FULL, f"a fully computed read on a cycle: {src} -> {dst}"
            found.add(ctx)
    return found
