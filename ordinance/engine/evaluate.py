"""Semi-naive evaluation, stratum by stratum.

A round runs rule variants (compiled together into one function per stratum
and kind of round, see `Prepared.variants`) and collects what each rule
derived in the round's `to_add`; the merge then keeps only the unknown tuples, which become the
relation's `recent` frontier and join `stable`. The first round of a stratum
runs every rule in full (`delta=None`); later rounds run, for each positive
body literal over a relation of the stratum whose frontier is not empty, the
variant that reads that literal from `recent`. A `seed` run (incremental
maintenance) starts instead from the frontiers of any relation, inside or
below the stratum, that the caller filled.

Provenance costs one batch note per (round, rule): the round's number within
its stratum is the height of every tuple it holds. In a full run that is the
tuple's minimal derivation depth (a function of the facts, not of their
order); a seed run continues the numbering, so its heights are only upper
bounds until `renumber` (incremental.py) recomputes them. A tuple's rank is
(stratum + 1, height), (0, 0) for a given fact; every tuple has an instance
of its rule whose positive premises all have a smaller rank, because they
were known before the round that derived it (lower strata are complete
before a stratum starts). Ranks survive recomputing a stratum: only the
recomputed stratum's heights change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NoReturn

from ..diagnostics import Diagnostic, EvaluationError
from ..rules.ast import Aggregate, Atom, BinOp, Call, Comparison, Negation, Rule, Term
from ..rules.checked import CheckedProgram
from ..rules.functors import EVAL_ERRORS, FunctorError, evaluate
from .codegen import Compiled, compile_plan, compile_round
from .limits import Budget
from .plan import AggStep, plan_rule
from .relation import Rel
from .text import rule_text

if TYPE_CHECKING:
    from .model import Model

__all__ = ["Prepared", "Stratum", "prepare", "run_stratum", "ground_value", "load_relations"]


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


@dataclass(frozen=True, slots=True)
class Round:
    """The variants of one round of a stratum, compiled into one function
    (`run(rels, agg, now) -> {rule id: matches}`, None if no variant ran);
    `parts` name the culprit of an error."""

    run: Callable[..., dict[int, set[Any]] | None]
    parts: tuple[Compiled, ...]


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

    def plan(self, rule_id: int, delta: int | None, rels: Mapping[str, Rel]) -> Compiled:
        compiled = self.plans.get((rule_id, delta))
        if compiled is None:
            sizes = {name: len(r.stable) for name, r in rels.items()}
            plan = plan_rule(self.program.rules[rule_id], rule_id, delta, sizes)
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
        run = self.runs[key] = Round(compile_round([c.plan for c in parts]), parts) if parts else None
        return run

    def aggregate(self, step: AggStep) -> Compiled:
        compiled = self.aggregates.get(id(step))
        if compiled is None:
            compiled = self.aggregates[id(step)] = compile_plan(step.plan, step.aggregate.func)
        return compiled



def prepare(program: CheckedProgram) -> Prepared:
    arity = {name: r.arity for name, r in program.relations.items()}
    strata = []
    for i, names in enumerate(program.strata):
        rule_ids = tuple(rid for rid, r in enumerate(program.rules) if r.body and r.head.relation in names)
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
        strata.append(Stratum(i, tuple(names), rule_ids, frozenset(pos), frozenset(neg), atoms, recursive,
                              {r: tuple(v) for r, v in deltas.items()}))
    derived = frozenset(r for names in program.strata for r in names)
    index = {r: i for i, names in enumerate(program.strata) for r in names}
    readers: dict[str, list[int]] = {}
    for st in strata:
        for name in st.positive | st.negative | set(st.relations):
            readers.setdefault(name, []).append(st.index)
    return Prepared(
        program, tuple(strata), arity, derived, tuple(rule_text(r) for r in program.rules), index,
        {name: tuple(sorted(ids)) for name, ids in readers.items()}, tuple(r.head.relation for r in program.rules),
    )


def _dependencies(rule: Rule, pos: set[str], neg: set[str]) -> None:
    def in_term(t: Term | None) -> None:
        if isinstance(t, Aggregate):
            for lit in t.body:
                for name in _relations(lit):
                    neg.add(name)
        elif isinstance(t, (BinOp, Call)):
            for sub in (t.left, t.right) if isinstance(t, BinOp) else t.args:
                in_term(sub)

    for lit in rule.body:
        if isinstance(lit, Atom):
            pos.add(lit.relation)
            for a in lit.args:
                in_term(a)
        elif isinstance(lit, Negation):
            neg.add(lit.atom.relation)
        else:
            for side in (lit.left, lit.right) if isinstance(lit, Comparison) else lit.args:
                in_term(side)
    for a in rule.head.args:
        in_term(a)


def _relations(lit: Any) -> Iterable[str]:
    if isinstance(lit, Atom):
        yield lit.relation
    elif isinstance(lit, Negation):
        yield lit.atom.relation


def ground_value(term: Term, now: int) -> Any:
    """The value of a variable-free term (program facts)."""
    try:
        return evaluate(term, {}, now)
    except KeyError:
        raise EvaluationError([Diagnostic("unbound_variable", "a fact must not contain variables")]) from None


def load_relations(
    prep: Prepared, facts: Mapping[str, Iterable[tuple[Any, ...]]] | None, now: int
) -> dict[str, Rel]:
    """Relations holding the given facts and the program's own facts."""
    given: dict[str, set[tuple[Any, ...]]] = {}
    for name, rows in (facts or {}).items():
        given[name] = set(map(tuple, rows))
    for rule in prep.program.rules:
        if not rule.body:
            t = tuple(ground_value(a, now) for a in rule.head.args)
            given.setdefault(rule.head.relation, set()).add(t)
    rels: dict[str, Rel] = {}
    arity = dict(prep.arity)
    for name, tuples in given.items():
        arities = {len(t) for t in tuples}
        want = arity.get(name)
        if want is not None:
            arities.add(want)
        if len(arities) > 1:
            raise EvaluationError(
                [Diagnostic("arity_mismatch", f"facts of `{name}` have {' and '.join(map(str, sorted(arities)))} arguments")]
            )
        if want is None:
            arity[name] = arities.pop() if arities else 0
    for name, n in arity.items():
        rels[name] = Rel(name, n, name in prep.derived, given.get(name, ()))
    return rels


def run_stratum(model: "Model", st: Stratum, budget: Budget, seed: bool = False) -> dict[str, set[Any]]:
    """Evaluate one stratum to its fixpoint.

    A `seed` run starts from the frontiers the caller set and returns the
    tuples it added per relation that grew; a full run returns nothing."""
    prep, rels, now = model.prepared, model.rels, model.now
    aggregates: dict[int, Callable[[Any], Any]] = {}
    added: dict[str, set[Any]] = {}
    own = st.relations

    def resolve(spec: tuple[Any, ...]) -> Any:
        kind, rel = spec[0], spec[1]
        if kind == "index":
            return rels[rel].index(spec[2])
        if kind == "stable":
            return rels[rel].stable
        if kind == "recent":
            return rels[rel].recent
        return agg(rel)

    def agg(step: AggStep) -> Callable[[Any], Any]:
        fn = aggregates.get(id(step))
        if fn is None:
            fn = aggregates[id(step)] = _aggregate_fn(prep.aggregate(step), step, resolve, now)
        return fn

    heads = prep.heads
    kind = "seed" if seed else "full"
    variants = prep.runs.get((st.index, kind)) or prep.variants(st, kind, rels)
    rounds = 0
    while variants:
        try:
            to_add = variants.run(rels, agg, now)
        except EVAL_ERRORS as exc:
            _culprit(variants, rels, agg, now, exc)
        if to_add is None:
            break
        rounds += 1
        # a non-recursive stratum derives everything in one round: height 1
        height = model.rounds[st.index] = model.rounds.get(st.index, 0) + 1 if st.recursive else 1
        news: dict[str, set[Any]] = {}
        for rid, out in to_add.items():
            if out:
                name = heads[rid]
                rel = rels[name]
                new = rel.missing(out)
                if new:
                    rel.insert(new)
                    rel.batches.append((height, rid, new))
                    news[name] = new if name not in news else news[name] | new
        fresh = 0
        for name in own:
            recent = rels[name].recent = news.get(name) or set()
            fresh += len(recent)
            if recent and seed:
                added[name] = added[name] | recent if name in added else recent
        budget.spend(own, rounds, fresh)
        if not fresh or not st.recursive:
            break
        variants = prep.runs.get((st.index, "own")) or prep.variants(st, "own", rels)
    for name in own:
        rels[name].recent = ()
    return added


def _culprit(variants: Round, rels: Any, agg: Any, now: int, exc: Exception) -> NoReturn:
    """Re-run the round's variants one by one to name the rule that failed."""
    for compiled in variants.parts:
        try:
            compiled.fn(rels, agg, set(), now)
        except EVAL_ERRORS as again:
            _fail(compiled, again)
    raise exc


def _fail(compiled: Compiled, exc: Exception) -> NoReturn:
    if isinstance(exc, FunctorError):
        raise EvaluationError([Diagnostic(exc.code, f"{exc.message} in rule `{compiled.plan.label}`")]) from exc
    if isinstance(exc, ZeroDivisionError):
        raise EvaluationError(
            [Diagnostic("division_by_zero", f"division by zero in rule `{compiled.plan.label}`")]
        ) from exc
    raise EvaluationError(
        [Diagnostic("type_mismatch", f"cannot compare or combine a number and a symbol in rule `{compiled.plan.label}`")]
    ) from exc


def _aggregate_fn(
    compiled: Compiled, step: AggStep, resolve: Callable[[tuple[Any, ...]], Any], now: int
) -> Callable[[Any], Any]:
    """The aggregate's value per outer binding, memoised for one stratum run."""
    args = [resolve(s) for s in compiled.inputs]
    memo: dict[Any, Any] = {}
    fn, n = compiled.fn, len(step.outer)

    def value(key: Any) -> Any:
        try:
            return memo[key]
        except KeyError:
            pass
        try:
            if n == 0:
                v = fn(*args, now)
            elif n == 1:
                v = fn(key, *args, now)
            else:
                v = fn(*key, *args, now)
        except TypeError as exc:
            raise EvaluationError(
                [Diagnostic("type_mismatch", f"cannot aggregate symbols in rule `{compiled.plan.label}`")]
            ) from exc
        memo[key] = v
        return v

    return value

