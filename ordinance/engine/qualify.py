"""Relation qualifiers that decide which derived tuples a relation keeps.

- `choice-domain` (a functional dependency): a relation keeps at most one
  tuple per value of each key. Soufflé keeps whichever tuple arrives first;
  here the choice is a function of the facts, never of arrival order: given
  facts are chosen before any rule runs, a tuple of an earlier round beats
  one of a later round, and within a round the candidates are taken in value
  order (the smallest tuple wins a free key).
- subsumption (`r(X) <= r(Y) :- body.`): after every round (and after the
  given facts are loaded), a tuple matched by the dominated atom is removed
  when a different tuple matched by the dominating atom exists with the
  body true. A removed tuple is never admitted again: dominance is a partial
  order, so whatever dominated it is itself dominated by a tuple that stays.
  A body may read the relation itself: it reads it as the round left it,
  and a round's dominated tuples are all found before any is removed.
- counters (`autoinc()`, `$`): a rule with `autoinc()` in its head runs as
  one whose head holds a `Ticket` per argument: the values of the rule's
  variables. After the round the tickets are numbered from the model's
  counter, tuples in value order, so the numbers are a function of the
  facts (one per distinct binding of the rule's named variables; Soufflé
  numbers each derivation in evaluation order). `model.tickets` keeps each
  number's rule and binding for explanations. In a body atom `autoinc()`
  is a `Ticket` too, a number not given yet: it equals no value, so the
  atom matches nothing (Soufflé compares the count it has reached there,
  which depends on its evaluation order).

The evaluator calls `number` and `choose` on a round's `to_add` and `prune`
after merging it (evaluate.py); incremental maintenance recomputes a
program holding any of them instead of extending it (incremental.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..rules.ast import Atom, Call, Const, Negation, Rule, Term, Var, Wildcard, map_children
from ..rules.functors import Ticket
from ..rules.checked import CheckedProgram
from .codegen import Compiled, compile_plan
from .plan import plan_rule
from .relation import Layer, Rel, key_getter

__all__ = ["Qualified", "qualified", "is_qualified", "counts", "admit", "rivals", "value_order"]

Tuple = tuple[Any, ...]


@dataclass(slots=True)
class Qualified:
    """The qualifiers of one program: `choice[r]` the key columns of each
    domain of `r`; `dominance[r]` its subsumption clauses as rules and
    `subsume[r]` their compiled joins; `counted` the counter rules."""

    choice: dict[str, tuple[tuple[int, ...], ...]]
    dominance: dict[str, tuple[Rule, ...]]  # relation -> its subsumption clauses as `__dominance` rules
    subsume: dict[str, tuple[Compiled, ...]] = field(default_factory=dict)
    counted: dict[int, Rule] = field(default_factory=dict)  # rule id -> the rule with tickets in its head
    binding: dict[int, tuple[str, ...]] = field(default_factory=dict)  # rule id -> the variables a ticket holds

    def number(self, model: Any, to_add: dict[int, set[Tuple]]) -> dict[int, set[Tuple]]:
        """`to_add` with the tickets of counter rules numbered, rule by rule."""
        for rid in sorted(r for r in to_add if r in self.counted and to_add[r]):
            numbered: set[Tuple] = set()
            for t in sorted(to_add[rid], key=value_order):
                out = []
                for v in t:
                    if isinstance(v, Ticket):
                        n = len(model.tickets)
                        model.tickets[n] = (rid, v)
                        v = n
                    out.append(v)
                numbered.add(tuple(out))
            to_add[rid] = numbered
        return to_add

    @property
    def relations(self) -> frozenset[str]:
        return frozenset(self.choice) | frozenset(self.dominance)

    def ticket_binding(self, model: Any, rid: int, position: int, n: Any) -> dict[str, Any] | None:
        """The binding rule `rid` numbered `n` at head argument `position`,
        None if it gave no such number there."""
        entry = model.tickets.get(n) if isinstance(n, int) else None
        if entry is None or entry[0] != rid or entry[1][0] != position:
            return None
        return dict(zip(self.binding[rid], entry[1][1:]))

    def choose(
        self, rels: Mapping[str, Rel], to_add: dict[int, set[Tuple]], heads: tuple[str, ...]
    ) -> dict[int, set[Tuple]]:
        """`to_add` with each choice relation's candidates cut to those it admits."""
        candidates: dict[str, set[Tuple]] = {}
        for rid, out in to_add.items():
            name = heads[rid]
            if name in self.choice and out:
                candidates.setdefault(name, set()).update(out)
        if not candidates:
            return to_add
        admitted = {name: admit(rels[name], tuples, self.choice[name]) for name, tuples in candidates.items()}
        return {rid: out & admitted[heads[rid]] if heads[rid] in admitted else out for rid, out in to_add.items()}

    def prune(
        self, rels: Mapping[str, Rel], names: Iterable[str], agg: Any, now: int, pruned: dict[str, set[Tuple]]
    ) -> dict[str, set[Tuple]]:
        """Remove the dominated tuples of `names` from `stable`; returns them
        (and adds them to `pruned`, the tuples a relation never takes again)."""
        gone: dict[str, set[Tuple]] = {}
        for name in names:
            joins = self.subsume.get(name)
            if not joins:
                continue
            rel = rels[name]
            lost: set[Tuple] = set()
            for compiled in joins:
                out: set[Tuple] = set()
                compiled.fn(rels, agg, out, now)
                n = rel.arity
                lost.update(t[:n] for t in out if t[:n] != t[n:])
            lost &= rel.stable
            if lost:
                drop(rel, lost)
                gone[name] = lost
                pruned.setdefault(name, set()).update(lost)
        return gone


def admit(rel: Rel, candidates: set[Tuple], domains: tuple[tuple[int, ...], ...]) -> set[Tuple]:
    """The candidates a choice relation takes: in value order, each whose
    key in every domain is free in `stable` and among those taken before it."""
    fresh = candidates - rel.stable
    try:
        ordered = sorted(fresh)  # a declared relation: one kind per column, so this is `value_order`
    except TypeError:
        ordered = sorted(fresh, key=value_order)
    keep: set[Tuple] = set()
    if len(domains) == 1:  # the usual case, without the general loop's lists
        key, idx, seen = key_getter(domains[0]), rel.index(domains[0]), set()  # type: Any, Any, set[Any]
        for t in ordered:
            k = key(t)
            if k not in seen and k not in idx:
                seen.add(k)
                keep.add(t)
        return keep
    getters = [key_getter(cols) for cols in domains]
    indexes = [rel.index(cols) for cols in domains]
    taken: list[set[Any]] = [set() for _ in domains]
    for t in ordered:
        keys = [g(t) for g in getters]
        if any(k in seen or k in idx for k, seen, idx in zip(keys, taken, indexes)):
            continue
        for k, seen in zip(keys, taken):
            seen.add(k)
        keep.add(t)
    return keep


def value_order(t: Tuple) -> tuple[tuple[str, Any], ...]:
    """A total order on tuples: by each value's kind, then the value."""
    return tuple((type(v).__name__ if not isinstance(v, (int, float)) else "", v) for v in t)


def drop(rel: Rel, gone: set[Tuple]) -> None:
    """Remove derived tuples from `stable` (given facts stay in `edb`)."""
    if rel.stable is rel.edb:
        rel.stable = set(rel.edb)
    rel.stable -= gone
    rel.indexes = {}


def is_qualified(program: CheckedProgram) -> bool:
    """Whether `program` has a choice-domain, a subsumption or a counter: an
    evaluation that only whole re-evaluation keeps right (no incremental
    maintenance, no demand rewrite)."""
    return (
        bool(program.subsumptions)
        or counts(program)
        or any(r.decl is not None and r.decl.choice for r in program.relations.values())
    )


def qualified(program: CheckedProgram) -> Qualified:
    """The qualifiers of `program`, their dominance joins compiled."""
    choice: dict[str, tuple[tuple[int, ...], ...]] = {}
    for name, r in program.relations.items():
        if r.decl is not None and r.decl.choice:
            cols = [p.name for p in r.decl.params]
            choice[name] = tuple(tuple(cols.index(a) for a in key.attributes) for key in r.decl.choice)
    rules: dict[str, list[Rule]] = {}
    for sub in program.subsumptions:
        rules.setdefault(sub.relation, []).append(dominance_rule(sub.dominated, sub.dominating, sub.body, sub.span))
    q = Qualified(choice, {name: tuple(rs) for name, rs in rules.items()})
    q.subsume = {name: tuple(compile_plan(plan_rule(r, -1)) for r in rs) for name, rs in q.dominance.items()}
    for rid, rule in enumerate(program.rules):
        if rule.body and any(_is_counter(a) for a in rule.head.args):
            names = tuple(
                sorted({v.name for lit in rule.body if isinstance(lit, Atom) for v in lit.args if isinstance(v, Var)})
            )
            q.binding[rid] = names
            args = tuple(
                Call("autoinc", (Const(i, "number"), *(Var(n) for n in names)), a.span) if _is_counter(a) else a
                for i, a in enumerate(rule.head.args)
            )
            q.counted[rid] = Rule(Atom(rule.head.relation, args, rule.head.span), rule.body, rule.span)
    return q


def counts(program: CheckedProgram) -> bool:
    """Whether a rule of `program` has `autoinc()`: in its head it numbers
    tuples; in a body atom it matches nothing (a number no tuple was given),
    and no rewrite may copy it into a head (the demand rewrite would)."""
    return any(r.body and any(_is_counter(a) for atom in _atoms(r) for a in atom.args) for r in program.rules)


def _atoms(rule: Rule) -> Iterable[Atom]:
    yield rule.head
    for lit in rule.body:
        if isinstance(lit, Negation):
            yield lit.atom
        elif isinstance(lit, Atom):
            yield lit


def _is_counter(t: Term) -> bool:
    return isinstance(t, Call) and t.func == "autoinc"


def dominance_rule(dominated: Atom, dominating: Atom, body: tuple[Any, ...], span: Any) -> Rule:
    """`__dominance(dominated..., dominating...) :- dominated, dominating, body.`"""
    fresh = iter(range(1 << 30))

    def named(t: Term) -> Term:
        if isinstance(t, Wildcard):
            return Var(f"_#{next(fresh)}", t.span)
        return map_children(t, named)

    low = Atom(dominated.relation, tuple(named(a) for a in dominated.args), dominated.span)
    high = Atom(dominating.relation, tuple(named(a) for a in dominating.args), dominating.span)
    head = Atom("__dominance", low.args + high.args, span)
    return Rule(head, (low, high, *body), span)


def rivals(model: Any, relation: str, t: Tuple, aggregator: Any) -> tuple[str, tuple[tuple[str, Tuple], ...]] | None:
    """Why a qualifier keeps `relation(t)` (not in the model) out: ("chosen",
    the tuples holding its keys) or ("dominated", the tuples dominating it);
    `aggregator` is evaluate.aggregator (which imports this module)."""
    q: Qualified | None = model.prepared.qualified
    rel = model.rels.get(relation)
    if q is None or rel is None or len(t) != rel.arity or t in rel.stable:
        return None
    holders: set[Tuple] = set()
    for cols in q.choice.get(relation, ()):
        key = t[cols[0]] if len(cols) == 1 else tuple(t[i] for i in cols)
        holders.update(rel.index(cols).get(key, ()))
    if holders:
        return "chosen", tuple((relation, u) for u in sorted(holders, key=value_order))
    joins = q.subsume.get(relation, ())
    if joins:
        view = Layer(rel)
        view.insert({t})
        rels = dict(model.rels)
        rels[relation] = view
        out: set[Tuple] = set()
        for compiled in joins:
            compiled.fn(rels, aggregator(model.prepared, rels, model.now), out, model.now)
        n = rel.arity
        better = {u[n:] for u in out if u[:n] == t and u[n:] != t}
        if better:
            return "dominated", tuple((relation, u) for u in sorted(better, key=value_order))
    return None
