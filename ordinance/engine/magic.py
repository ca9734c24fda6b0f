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

Demand passes sideways through a rule in the order the planner would join
it with the head's given variables bound on entry (the most bound atom
first, a relation read as it is before a derived one, whose read would
demand it; comparisons, negations and aggregates as soon as their variables
are bound). Every rule instance of the full model that derives a demanded
tuple then has only demanded premises, so answers and proofs read only
demanded patterns. Why-not reads more: the partial bindings of a rule's
body in *source order*; `source_order=True` passes demand in that order
(`plan_rule(source_order=True)`), which covers every pattern why-not reads.
Relations fed only by facts are read as they are, and so are the derived
relations the caller gives fully computed (`given`: over a warm model, those
that depend neither on `$now` nor on the request; demand.py); a derived
relation also reads its own given facts (`p@bf(X, Y) :- ?p@bf(X), p(X, Y).`).

Stratification (as Soufflé's `MagicSet.cpp` labels negated relations): a
relation read under negation or inside an aggregate is adorned in a context
of its own, one per such occurrence and enclosing context (`q@b@7.2`: rule 7,
literal 2; `q@b@7.2/3.1` inside the context `3.1`), so its demand never
mixes with the demand of the strata above it. Where the demand of such an
occurrence still depends on the relation that negates it (a cycle of the
rewritten program through the negation), the demand rules first stop reading
that relation (`_weaken`: more demand, never less, while their variables
stay bound); if the cycle remains, the occurrence reads a fully computed copy
(`q@ff@*`, the original rules renamed, seeded unconditionally). The rewrite
repeats until the program stratifies. Arithmetic, functors and `$now` are
kept as written; a given head argument that is an expression is checked once
its variables are bound, never passed down.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.ast import (
    Aggregate,
    Atom,
    Comparison,
    Literal,
    Negation,
    Predicate,
    Rule,
    Term,
    Var,
    map_terms,
    var_names,
    rename_vars,
)
from ..rules.checked import CheckedProgram, Relation
from ..rules.checks.stratify import dependency_graph, stratify
from .plan import AggStep, AntiJoin, Assign, Filter, Scan, Step, plan_rule

__all__ = ["Demand", "magic", "adornment", "FULL"]

FULL = "*"  # the context of fully computed copies
_ENTRY = "?"  # stands for the head's given variables when a rule is planned bound first
_READ = 1 << 20  # the size a relation read as it is counts when a rule is planned (unknown ones count 1 << 40)


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


def magic(
    program: CheckedProgram,
    relation: str,
    bound: tuple[bool, ...],
    source_order: bool = False,
    given: frozenset[str] = frozenset(),
) -> Demand:
    """The demand transformation of `program` for `relation` with the
    arguments `bound` marks given; demand passes through each rule bound
    first, or in `source_order`. The derived relations in `given` are read
    as they are, like facts: the caller supplies them fully computed."""
    full: set[str] = set()
    cut: set[str] = set()
    plans: dict[tuple[int, str], tuple[tuple[Term, ...], tuple[Step, ...]]] = {}  # shared by the rounds
    while True:
        rewrite = _Rewrite(program, full, cut, source_order, given, plans)
        query = rewrite.adorned(relation, adornment(bound), "")
        rewrite.run()
        contexts, negating = _cyclic(rewrite.rules, rewrite.context)
        if negating - cut:
            cut |= negating
        elif contexts:
            full |= contexts
        else:
            break
    rules = tuple(rewrite.rules)
    relations = {name: Relation(name, n, None, None, name in rewrite.derived) for name, n in rewrite.arity.items()}
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
    return rename_vars(term, lambda n: n.replace("#", "~"))


def _rename_atom(atom: Atom, relation: str | None = None) -> Atom:
    return Atom(relation or atom.relation, tuple(_rename(a) for a in atom.args), atom.span)


def _rename_literal(lit: Literal) -> Literal:
    return map_terms(lit, _rename)


def _vars(term: Term | None) -> set[str]:
    return set(var_names(term, True))


class _Rewrite:
    def __init__(
        self,
        program: CheckedProgram,
        full: set[str],
        cut: set[str],
        source_order: bool,
        given: frozenset[str],
        plans: dict[tuple[int, str], tuple[tuple[Term, ...], tuple[Step, ...]]],
    ):
        self.program = program
        self.plans = plans
        self.cut = cut
        self.source_order = source_order
        self.full = full
        self.derived = {r.head.relation for r in program.rules if r.body} - given
        self.rules: list[Rule] = []
        self.arity: dict[str, int] = {}
        self.origin: dict[str, str] = {}
        self.context: dict[str, str] = {}  # adorned relation -> its context
        self.todo: list[tuple[str, str, str]] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.seeded: set[str] = set()
        self.weak: set[str] = set()  # the rule's variables bound only through the head's given arguments
        # bound first, and relations read as they are before derived ones (which their reads would demand)
        self.sizes = {_ENTRY: 1, **{name: _READ for name in program.relations if name not in self.derived}}

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
        self.rules.append(
            Rule(Atom(name, xs), (Atom(magic, tuple(x for x, a in zip(xs, adorn) if a == "b")), Atom(relation, xs)))
        )
        for rid in self.program.rules_for(relation):
            rule = self.program.rules[rid]
            if not rule.body:
                continue
            self._rule(rid, name, adorn, context)

    def _plan(self, rid: int, adorn: str) -> tuple[tuple[Term, ...], tuple[Step, ...]]:
        """The head and the steps demand passes through rule `rid` in, read
        with `adorn` (planned once per rewrite, whatever the context)."""
        found = self.plans.get((rid, adorn))
        if found is not None:
            return found
        rule = self.program.rules[rid]
        if self.source_order:
            plan = plan_rule(rule, rid, source_order=True)
            steps = plan.steps
        else:  # bound first: the head's given variables bound on entry
            given_vars = tuple(t for t, a in zip(rule.head.args, adorn) if a == "b" and isinstance(t, Var))
            plan = plan_rule(Rule(rule.head, (Atom(_ENTRY, given_vars),) + rule.body), rid, sizes=self.sizes)
            steps = tuple(s for s in plan.steps if not (isinstance(s, Scan) and s.atom.relation == _ENTRY))
            # negations bind nothing: last, so the demand of the atoms never waits for them
            steps = tuple(s for s in steps if not isinstance(s, AntiJoin)) + tuple(
                s for s in steps if isinstance(s, AntiJoin)
            )
        found = self.plans[rid, adorn] = (plan.head, steps)
        return found

    def _rule(self, rid: int, name: str, adorn: str, context: str) -> None:
        rule = self.program.rules[rid]
        plan_head, steps = self._plan(rid, adorn)
        head = tuple(_rename(t) for t in plan_head)
        bound: set[str] = set()
        self.weak = set()
        given: list[Term] = []
        later: list[Literal] = []  # a given expression argument, checked once its variables are bound
        for i, (t, a) in enumerate(zip(head, adorn)):
            if a == "b":
                if isinstance(t, Var) or not _vars(t):
                    given.append(t)
                    bound |= _vars(t)
                    self.weak |= _vars(t)
                else:
                    given.append(Var(f"~h{i}"))
                    later.append(Comparison("=", Var(f"~h{i}"), t))
        body: list[Literal] = [Atom(_magic_name(name), tuple(given))]
        for step in steps:
            body.append(self._step(step, body, bound, context, str(rid)))
        self.rules.append(Rule(Atom(name, head), tuple(body + later), rule.span))

    def _read(self, atom: Atom, body: list[Literal], bound: set[str], context: str) -> Atom:
        """A positive read of `atom` in `context` after `body`: its demand
        (a magic rule) and the adorned atom."""
        atom = _rename_atom(atom)
        if atom.relation not in self.derived:
            return atom
        if context == FULL:
            adorn = "f" * atom.arity
        else:
            adorn = "".join("b" if self._given(a, bound) else "f" for a in atom.args)
        target = self.adorned(atom.relation, adorn, context)
        if context != FULL:
            demand = Atom(_magic_name(target), tuple(a for a, x in zip(atom.args, adorn) if x == "b"))
            passed = _weaken(body, demand, self.cut)
            if passed != [demand]:  # `?p@b(X) :- ?p@b(X).` adds nothing
                self.rules.append(Rule(demand, tuple(passed)))
        return Atom(target, atom.args, atom.span)

    def _given(self, arg: Term, bound: set[str]) -> bool:
        """Whether a read passes `arg` down as demand: a bound variable or
        constant, or an expression over variables a body atom bound. Over a
        variable only the head's demand gives (`gen(X) :- gen(X + 1), v(X).`
        asked at 0) it would demand 1, then 2, without end (Soufflé's
        MagicSet.cpp binds such a variable "weakly" for the same reason)."""
        names = _vars(arg)
        return names <= bound and (isinstance(arg, Var) or not names & self.weak)

    def _inner(self, context: str, key: str) -> str:
        """The context of a negated or aggregated read: one per occurrence
        and enclosing context, FULL in FULL or where that still cycles."""
        inner = f"{key}/{context}" if context else key
        return FULL if context == FULL or inner in self.full else inner

    def _step(self, step: Step, body: list[Literal], bound: set[str], context: str, where: str) -> Literal:
        """The rewritten literal of one plan step, after `body`; `where`
        names the rule (and aggregate) holding it: with the step, the key of
        a negated or aggregated read's context."""
        key = f"{where}.{step.var if isinstance(step, AggStep) else getattr(step, 'pos', '')}"
        if isinstance(step, Scan):
            atom = self._read(step.atom, body, bound, context)
            bound |= {a.name for a in atom.args if isinstance(a, Var)}
            self.weak -= {a.name for a in atom.args if isinstance(a, Var)}
            return atom
        if isinstance(step, AntiJoin):
            inner = self._inner(context, key)
            return Negation(self._read(step.atom, body, bound, inner))
        if isinstance(step, Filter):
            return _rename_literal(step.literal)
        if isinstance(step, Assign):
            var = step.var.replace("#", "~")
            bound.add(var)
            if _vars(_rename(step.expr)) & self.weak:
                self.weak.add(var)
            return Comparison("=", Var(var), _rename(step.expr))
        assert isinstance(step, AggStep)
        inner = self._inner(context, key)
        lits: list[Literal] = []
        inner_bound = set(bound)
        for sub in step.plan.steps:
            lits.append(self._step(sub, body + lits, inner_bound, inner, key))
        agg = step.aggregate
        target = None if agg.target is None else _rename(agg.target)
        var = step.var.replace("#", "~")
        bound.add(var)
        return Comparison("=", Var(var), Aggregate(agg.func, target, tuple(lits), agg.span))


def _weaken(body: list[Literal], demand: Atom, cut: set[str]) -> list[Literal]:
    """`body` without its reads of the `cut` relations (and what needs
    their variables), when `demand`'s variables stay bound: more demand,
    never less, and no path from the relation back to its own demand."""
    if not any(isinstance(lit, Atom) and lit.relation in cut for lit in body[1:]):
        return body
    kept: list[Literal] = [body[0]]
    bound = {a.name for a in body[0].args if isinstance(a, Var)} if isinstance(body[0], Atom) else set()
    for lit in body[1:]:
        if isinstance(lit, Atom):
            if lit.relation not in cut:
                kept.append(lit)
                bound |= {a.name for a in lit.args if isinstance(a, Var)}
        elif isinstance(lit, Negation):
            if set().union(*map(_vars, lit.atom.args)) <= bound:
                kept.append(lit)
        elif isinstance(lit, Predicate):
            if set().union(*map(_vars, lit.args)) <= bound:
                kept.append(lit)
        elif not isinstance(lit.left, Aggregate) and not isinstance(lit.right, Aggregate):
            left, right = _vars(lit.left), _vars(lit.right)
            if left | right <= bound:
                kept.append(lit)
            elif lit.op == "=" and isinstance(lit.left, Var) and right <= bound:
                kept.append(lit)
                bound.add(lit.left.name)
            elif lit.op == "=" and isinstance(lit.right, Var) and left <= bound:
                kept.append(lit)
                bound.add(lit.right.name)
    if not set().union(*map(_vars, demand.args)) <= bound:
        return body
    return kept


def _cyclic(rules: list[Rule], context: dict[str, str]) -> tuple[set[str], set[str]]:
    """The contexts of negated or aggregated reads on a cycle of `rules`,
    and the relations that negate them there (their reads in demand rules
    close the cycle)."""
    graph = dependency_graph(tuple(rules))
    import networkx as nx  # here: importing it costs every command's start-up

    members = nx.condensation(graph).graph["mapping"]
    found: set[str] = set()
    negating: set[str] = set()
    for src, dst, data in graph.edges(data=True):
        if data["negative"] and members[src] == members[dst]:
            ctx = context.get(src)
            assert ctx and ctx != FULL, f"a fully computed read on a cycle: {src} -> {dst}"
            found.add(ctx)
            if not dst.startswith("?"):
                negating.add(dst)
    return found, negating
