"""A checked program readied for evaluation: strata, their rules and the
rule variants a round runs (compiled on first use, see codegen.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..rules.ast import Aggregate, Atom, Const, Negation, Rule, Var, literal_terms, subterms
from ..rules.checked import CheckedProgram
from ..rules.printer import format_rule
from .codegen import Compiled, compile_plan, compile_round
from .plan import AggStep, plan_rule
from .qualify import Qualified, is_qualified, qualified
from .relation import Rel

__all__ = ["Analyses", "Prepared", "Stratum", "Round", "prepare", "prepared"]


@dataclass(frozen=True, slots=True)
class Stratum:
    index: int
    relations: tuple[str, ...]
    rules: tuple[int, ...]  # ids of the rules with a body whose head is here
    positive: frozenset[str]  # relations read by positive literals
    negative: frozenset[str]  # relations negated or aggregated over
    atoms: Mapping[int, tuple[tuple[int, str], ...]]  # rule id -> (position, relation) of positive atoms
    recursive: bool = False  # a rule reads a relation of its own stratum positively
    deltas: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)  # relation -> variants reading it
    plain_heads: bool = True  # every head argument is a variable or a constant (no expression)


@dataclass(frozen=True, slots=True)
class Round:
    """The variants of one round of a stratum, compiled into one function
    (`run(rels, agg, now) -> {rule id: matches}`, None if no variant ran);
    `parts` name the culprit of an error; `aggregates`: whether a variant
    reads an aggregate (else `agg` is never called)."""

    run: Callable[..., dict[int, set[Any]] | None]
    parts: tuple[Compiled, ...]
    aggregates: bool = True


@dataclass(slots=True)
class Analyses:
    """What is worked out once per program, one typed cache per question
    (each filled where its question is asked, on first need)."""

    # the strata a set of relations needs (`Prepared.needed`)
    needed: dict[frozenset[str], frozenset[int]] = field(default_factory=dict)
    # an overlay's short path, per (given, wanted) (incremental._path)
    paths: dict[tuple[frozenset[str], frozenset[str] | None], tuple[tuple[Stratum, tuple[str, ...]], ...] | None] = (
        field(default_factory=dict)
    )
    heads: dict[int, tuple[tuple[int, Any], ...]] = field(default_factory=dict)  # a rule's head constants
    aggregated: dict[int, frozenset[str]] = field(default_factory=dict)  # read inside an aggregate, per stratum
    negations: dict[int, tuple[tuple[int, int, Negation], ...]] = field(default_factory=dict)  # per stratum
    primed: dict[frozenset[str], tuple[tuple[str, tuple[int, ...]], ...]] = field(default_factory=dict)  # prime()
    settled: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)  # demand.settled, per inputs
    # per (stratum, relation): the constants each variant reading its frontier asks of a tuple
    # (column, value) pairs; None if a variant asks none (incremental._admits)
    seeds: dict[tuple[int, str], tuple[tuple[tuple[int, Any], ...], ...] | None] = field(default_factory=dict)
    template: tuple[dict[str, Rel], list[tuple[str, ...] | None]] | None = None  # a rewrite's relations (demand)
    first: dict[str, int] | None = None  # a derived relation's first rule (demand)
    schedule: Any = None  # (seed, when a rewrite's strata run) (demand._schedule)


@dataclass(slots=True)
class Prepared:
    """A checked program readied for evaluation; plans compile on first use."""

    program: CheckedProgram
    strata: tuple[Stratum, ...]
    arity: dict[str, int]
    derived: frozenset[str]
    labels: tuple[str, ...]
    stratum_index: dict[str, int]
    readers: dict[str, tuple[int, ...]] = field(default_factory=dict)  # relation -> strata reading or holding it
    heads: tuple[str, ...] = ()  # rule id -> its head relation
    plans: dict[tuple[int, int | None], Compiled] = field(default_factory=dict)
    aggregates: dict[int, Compiled] = field(default_factory=dict)
    runs: dict[tuple[int, str], "Round | None"] = field(default_factory=dict)
    clock: Any = None  # clock.Clockwork, computed when first asked for (Any: clock.py imports this module)
    bound: dict[tuple[int, str], Compiled] = field(default_factory=dict)  # rules with the head bound (incremental.py)
    qualified: Qualified | None = None  # with `choice-domain`, subsumption or `autoinc()`, else None
    hints: dict[str, int] = field(default_factory=dict)  # sizes planned with instead of the live ones (demand.py)
    analyses: Analyses = field(default_factory=Analyses)  # worked out once per program, by question

    def plan(self, rule_id: int, delta: int | None, rels: Mapping[str, Rel]) -> Compiled:
        compiled = self.plans.get((rule_id, delta))
        if compiled is None:
            sizes = _Sizes(rels, self.hints)
            rule = self.program.rules[rule_id]
            if self.qualified is not None:  # `autoinc()` heads hold tickets (qualify.py)
                rule = self.qualified.counted.get(rule_id, rule)
            plan = plan_rule(rule, rule_id, delta, sizes)
            compiled = self.plans[rule_id, delta] = compile_plan(plan)
        return compiled

    def variants(self, st: "Stratum", kind: str, rels: Mapping[str, Rel]) -> "Round | None":
        """What a round of `st` runs: every rule in full (`kind` "full"), or
        the variants reading any relation ("seed") or one of the stratum's
        ("own") from its frontier, each only if that frontier is not empty."""
        key = (st.index, kind)
        try:
            return self.runs[key]
        except KeyError:
            pass
        if kind == "full":
            vs: list[tuple[int, int | None]] = [(rid, None) for rid in st.rules]
        else:
            vs = sorted(v for r, d in st.deltas.items() if kind == "seed" or r in st.relations for v in d)
        parts = tuple(self.plan(rid, p, rels) for rid, p in vs)
        aggregates = any(spec[0] == "agg" for c in parts for spec in c.inputs)
        run = self.runs[key] = Round(compile_round([c.plan for c in parts]), parts, aggregates) if parts else None
        return run

    def needed(self, wanted: frozenset[str]) -> frozenset[int]:
        """The strata holding `wanted` or what they read, transitively
        (worked out once per set of relations)."""
        found = self.analyses.needed.get(wanted)
        if found is not None:
            return found
        todo, seen, needed = list(wanted), set(wanted), set()
        while todo:
            i = self.stratum_index.get(todo.pop())
            if i is None or i in needed:
                continue
            needed.add(i)
            st = self.strata[i]
            for r in st.positive | st.negative:
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        found = self.analyses.needed[wanted] = frozenset(needed)
        return found

    def aggregate(self, step: AggStep) -> Compiled:
        compiled = self.aggregates.get(id(step))
        if compiled is None:
            compiled = self.aggregates[id(step)] = compile_plan(step.plan, step.aggregate.func)
        return compiled


class _Sizes(Mapping[str, int]):
    """A plan's relation sizes: the live ones, each read when the planner
    asks (a rewrite holds hundreds of relations; a rule reads a few), or
    the hint standing in for one."""

    __slots__ = ("rels", "hints")

    def __init__(self, rels: Mapping[str, Rel], hints: Mapping[str, int]):
        self.rels, self.hints = rels, hints

    def __getitem__(self, name: str) -> int:
        hint = self.hints.get(name)
        return hint if hint is not None else len(self.rels[name].stable)

    def __iter__(self) -> Iterator[str]:
        return iter(self.rels.keys() | self.hints.keys())

    def __len__(self) -> int:
        return len(self.rels.keys() | self.hints.keys())


def prepare(program: CheckedProgram) -> Prepared:
    arity = {name: r.arity for name, r in program.relations.items()}
    strata = []
    by_head: dict[str, list[int]] = {}  # relation -> the ids of the rules (with a body) deriving it
    for rid, rule in enumerate(program.rules):
        if rule.body:
            by_head.setdefault(rule.head.relation, []).append(rid)
    for i, names in enumerate(program.strata):
        rule_ids = tuple(sorted(rid for name in names for rid in by_head.get(name, ())))
        pos: set[str] = set()
        neg: set[str] = set()
        atoms: dict[int, tuple[tuple[int, str], ...]] = {}
        for rid in rule_ids:
            rule = program.rules[rid]
            atoms[rid] = tuple((p, lit.relation) for p, lit in enumerate(rule.body) if isinstance(lit, Atom))
            _dependencies(rule, pos, neg)
        recursive = any(r in names for rid in rule_ids for _, r in atoms[rid])
        deltas: dict[str, list[tuple[int, int]]] = {}
        for rid in rule_ids:
            for p, r in atoms[rid]:
                deltas.setdefault(r, []).append((rid, p))
        strata.append(
            Stratum(
                i,
                tuple(names),
                rule_ids,
                frozenset(pos),
                frozenset(neg),
                atoms,
                recursive,
                {r: tuple(v) for r, v in deltas.items()},
                all(isinstance(a, (Var, Const)) for rid in rule_ids for a in program.rules[rid].head.args),
            )
        )
    derived = frozenset(r for names in program.strata for r in names)
    index = {r: i for i, names in enumerate(program.strata) for r in names}
    readers: dict[str, list[int]] = {}
    for st in strata:
        for name in st.positive | st.negative | set(st.relations):
            readers.setdefault(name, []).append(st.index)
    prep = Prepared(
        program,
        tuple(strata),
        arity,
        derived,
        tuple(format_rule(r) for r in program.rules),
        index,
        {name: tuple(sorted(ids)) for name, ids in readers.items()},
        tuple(r.head.relation for r in program.rules),
    )
    if is_qualified(program):
        prep.qualified = qualified(program)
    return prep


def _dependencies(rule: Rule, pos: set[str], neg: set[str]) -> None:
    """The relations `rule` reads positively, and those it negates or
    aggregates over (an aggregate needs its body's relations complete)."""
    terms = list(rule.head.args)
    for lit in rule.body:
        if isinstance(lit, Negation):
            neg.add(lit.atom.relation)
            continue
        if isinstance(lit, Atom):
            pos.add(lit.relation)
        terms += literal_terms(lit)
    for t in terms:
        for sub in subterms(t):
            if isinstance(sub, Aggregate):
                for lit in sub.body:
                    neg.update(_relations(lit))


def _relations(lit: Any) -> Iterable[str]:
    if isinstance(lit, Atom):
        yield lit.relation
    elif isinstance(lit, Negation):
        yield lit.atom.relation


# the programs last prepared, oldest first: a gate's policy and its jump rewrites
# stay; more would keep every policy a process ever ran alive (plans, compiled
# rounds), and each full collection walks them all
_CACHE: dict[int, tuple[CheckedProgram, Prepared]] = {}
_KEPT = 8


def prepared(program: CheckedProgram) -> Prepared:
    """The program readied for evaluation: one per program object, shared by
    its models (with their compiled plans)."""
    hit = _CACHE.get(id(program))
    if hit is not None and hit[0] is program:
        _CACHE[id(program)] = _CACHE.pop(id(program))  # the newest again
        return hit[1]
    if len(_CACHE) >= _KEPT:
        _CACHE.pop(next(iter(_CACHE)))
    prep = _CACHE[id(program)] = (program, prepare(program))
    return prep[1]
