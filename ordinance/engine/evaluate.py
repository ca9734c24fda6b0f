"""Semi-naive evaluation, stratum by stratum.

The vocabulary is datafrog's, with one difference. A round runs rule variants
(compiled together into one function per stratum and kind of round, see
`Prepared.variants`) and collects what each rule derived in the round's
`to_add`. The merge keeps, per rule, the `batch` of tuples not known before
(`Rel.missing`); a relation's batches of the round are its `recent` tuples
(the frontier the next round's variants join from). A seed run returns what
`grown`: the union of its rounds' `recent` tuples.

`stable` differs from datafrog's: there, `stable` holds the tuples of earlier
rounds only, and a round joins `recent` with `stable` and `recent` with
`recent`. Here a round's batches join `stable` at once, so `stable` is every
tuple known so far, `recent` included. One set per relation (and one index
per column list) then serves every membership test and every probe, and a
variant that reads literal `i` from `recent` reads every other literal from
`stable`: the same tuples as datafrog's three joins, some found twice, which
the set absorbs.

The first round of a stratum runs every rule in full (`delta=None`); later
rounds run, for each positive body literal over a relation of the stratum
whose `recent` is not empty, the variant that reads that literal from
`recent`. A `seed` run (incremental maintenance) starts instead from the
`recent` tuples of any relation, inside or below the stratum, that the
caller filled.

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

from typing import Any, Callable, Iterable, Mapping, NoReturn, Sequence

from ..diagnostics import Diagnostic, EvaluationError, LimitExceeded, Span
from ..rules.ast import Rule, Term
from ..rules.functors import EVAL_ERRORS, FunctorError, evaluate
from .codegen import Compiled, unlimited
from .limits import Budget
from .model import Model
from .plan import AggStep
from .prepare import Prepared, Round, Stratum
from .qualify import admit
from .relation import Rel

__all__ = ["run_stratum", "ground_value", "load_relations", "aggregator"]


def ground_value(term: Term, now: int) -> Any:
    """The value of a variable-free term (program facts)."""
    try:
        return evaluate(term, {}, now)
    except KeyError:
        raise EvaluationError([Diagnostic("unbound_variable", "a fact must not contain variables")]) from None
    except ZeroDivisionError:
        where = getattr(term, "span", None) or Span()
        raise EvaluationError([Diagnostic("division_by_zero", "division by zero in a fact", where)]) from None
    except FunctorError as exc:
        raise EvaluationError(
            [Diagnostic(exc.code, f"{exc.message} in a fact", getattr(term, "span", None) or Span())]
        ) from None
    except TypeError:
        where = getattr(term, "span", None) or Span()
        raise EvaluationError(
            [Diagnostic("type_mismatch", "cannot combine a number and a symbol in a fact", where)]
        ) from None
    except OverflowError:
        raise LimitExceeded(
            [
                Diagnostic(
                    "limit_exceeded",
                    "limit exceeded: a number outside 64 bits in a fact",
                    getattr(term, "span", None) or Span(),
                )
            ]
        ) from None


def load_relations(prep: Prepared, facts: Mapping[str, Iterable[tuple[Any, ...]]] | None, now: int) -> dict[str, Rel]:
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
                [
                    Diagnostic(
                        "arity_mismatch", f"facts of `{name}` have {' and '.join(map(str, sorted(arities)))} arguments"
                    )
                ]
            )
        if want is None:
            arity[name] = arities.pop() if arities else 0
    q = prep.qualified
    for name, n in arity.items():
        rels[name] = Rel(name, n, name in prep.derived or q is not None and name in q.relations, given.get(name, ()))
        if q is not None and name in q.choice:  # given facts are chosen before any rule runs
            rel = rels[name]
            rel.stable = set()
            rel.stable = admit(rel, set(rel.edb), q.choice[name])
            rel.indexes = {}
    return rels


def run_stratum(
    model: Model, st: Stratum, budget: Budget, seed: bool = False, write: Callable[[str], Rel] | None = None
) -> dict[str, set[Any]]:
    """Evaluate one stratum to its fixpoint.

    A `seed` run starts from the frontiers the caller set and returns what
    grew: per relation, the tuples the run made known (every round's
    `recent`); a full run returns nothing. `write(name)` (an overlay's) is
    the relation to add to in place of `rels[name]`, asked only for a
    relation the run adds tuples to: one it only reads stays shared, and is
    never written to (its `recent` included)."""
    prep, rels, now = model.prepared, model.rels, model.now
    kind = "seed" if seed else "full"
    variants = prep.runs.get((st.index, kind)) or prep.variants(st, kind, rels)
    grown: dict[str, set[Any]] = {}
    q, pruned = prep.qualified, {}  # type: Any, dict[str, set[Any]]
    if variants is None and q is None:  # (with qualifiers, given facts may still be pruned below)
        return grown
    own = st.relations
    heads = prep.heads
    budget.enter(own, rels, heads)
    spend = budget.check
    needs_agg = variants is None or variants.aggregates or st.recursive or q is not None
    agg = aggregator(prep, rels, now, spend) if needs_agg else None
    rounds = 0
    if q is not None:
        q.prune(rels, own, agg, now, pruned)
    if variants is not None and not (seed or st.recursive or q is not None):  # one round, no frontier to keep
        to_add = _run(variants, rels, agg, now, spend, prep.program.rules, own)
        if to_add is not None:
            model.rounds[st.index] = 1
            count = 0
            for rid, out in to_add.items():
                if out:
                    name = heads[rid]
                    rel = rels[name]
                    batch = rel.missing(out)
                    if batch:
                        if write is not None:
                            rel = write(name)
                        rel.insert(batch)
                        rel.batches.append((1, rid, tuple(batch)))
                        count += len(batch)  # (disjoint: each batch is missing from what the last one joined)
            budget.spend(own, 1, count)
        variants = None
    while variants:
        to_add = _run(variants, rels, agg, now, spend, prep.program.rules, own)
        if to_add is None:
            break
        if q is not None:
            to_add = q.choose(rels, q.number(model, to_add), heads)
        rounds += 1
        # a non-recursive stratum derives everything in one round: height 1
        height = model.rounds[st.index] = model.rounds.get(st.index, 0) + 1 if st.recursive else 1
        recent: dict[str, set[Any]] = {}
        for rid, out in to_add.items():
            if out:
                name = heads[rid]
                rel = rels[name]
                batch = rel.missing(out)
                if batch and name in pruned:
                    batch -= pruned[name]
                if batch:
                    if write is not None:
                        rel = write(name)
                    rel.insert(batch)
                    rel.batches.append((height, rid, tuple(batch)))  # (a tuple: a quarter of a set's memory)
                    recent[name] = batch if name not in recent else recent[name] | batch
        if q is not None:
            for name, gone in q.prune(rels, own, agg, now, pruned).items():
                if name in recent:
                    recent[name] -= gone
        count = 0
        for name in own:
            tuples = recent.get(name)
            rel = rels[name]
            if tuples:
                rel.recent = tuples
                count += len(tuples)
                if seed:
                    grown[name] = grown[name] | tuples if name in grown else tuples
            elif rel.recent:
                rel.recent = ()
        budget.spend(own, rounds, count)
        if not count or not st.recursive:
            break
        variants = prep.runs.get((st.index, "own")) or prep.variants(st, "own", rels)
    for name in own:
        rel = rels[name]
        if rel.recent:
            rel.recent = ()
    return grown


def _run(
    variants: Round, rels: Any, agg: Any, now: int, spend: Any, rules: Sequence[Rule], own: Sequence[str]
) -> dict[int, set[Any]] | None:
    """One round's matches by rule id (None if no variant ran); an
    evaluation error names its rule, running out of memory the stratum."""
    try:
        return variants.run(rels, agg, now, spend)
    except EVAL_ERRORS as exc:
        _culprit(variants, rels, agg, now, exc, rules)
    except MemoryError:
        names = ", ".join(f"`{r}`" for r in own)
        raise LimitExceeded(
            [Diagnostic("limit_exceeded", f"limit exceeded: out of memory in the stratum of {names}")]
        ) from None


def aggregator(
    prep: Prepared, rels: Mapping[str, Rel], now: int, spend: Any = unlimited
) -> Callable[[AggStep], Callable[[Any], Any]]:
    """`agg(step)`: the aggregate's value per outer binding over `rels`, memoised
    while the relations stay as they are (one stratum run)."""
    return _Aggregator(prep, rels, now, spend)


class _Aggregator:
    """`aggregator`'s `agg`. An object, not two closures calling each other:
    those would be a reference cycle, so every stratum run (each overlay
    runs several) would leave its relations to the cyclic collector instead
    of freeing them when done, and the collections would stall decisions."""

    __slots__ = ("prep", "rels", "now", "spend", "fns")

    def __init__(self, prep: Prepared, rels: Mapping[str, Rel], now: int, spend: Any):
        self.prep, self.rels, self.now, self.spend = prep, rels, now, spend
        self.fns: dict[int, Callable[[Any], Any]] = {}

    def __call__(self, step: AggStep) -> Callable[[Any], Any]:
        fn = self.fns.get(id(step))
        if fn is None:
            compiled = self.prep.aggregate(step)
            fn = self.fns[id(step)] = _aggregate_fn(compiled, step, self._resolve, self.now, self.spend)
        return fn

    def _resolve(self, spec: tuple[Any, ...]) -> Any:
        kind, rel = spec[0], spec[1]
        if kind == "index":
            return self.rels[rel].index(spec[2])
        if kind == "stable":
            return self.rels[rel].stable
        if kind == "recent":
            return self.rels[rel].recent
        return self(rel)


def _culprit(variants: Round, rels: Any, agg: Any, now: int, exc: Exception, rules: Sequence[Rule]) -> NoReturn:
    """Re-run the round's variants one by one to name the rule that failed."""
    for compiled in variants.parts:
        try:
            compiled.fn(rels, agg, set(), now)
        except EVAL_ERRORS as again:
            _fail(compiled, again, rules[compiled.plan.rule_id].span)
    raise exc


def _fail(compiled: Compiled, exc: Exception, span: Span) -> NoReturn:
    """The evaluation error of the rule `compiled` runs, at the rule's span."""
    if isinstance(exc, OverflowError):
        Budget.overflow(compiled.plan.label)
    rule = compiled.plan.label
    if isinstance(exc, FunctorError) and exc.code == "limit_exceeded":
        raise LimitExceeded([Diagnostic(exc.code, f"{exc.message} in rule `{rule}`", span)]) from exc
    if isinstance(exc, FunctorError):
        found = Diagnostic(exc.code, f"{exc.message} in rule `{rule}`", span)
    elif isinstance(exc, ZeroDivisionError):
        found = Diagnostic("division_by_zero", f"division by zero in rule `{rule}`", span)
    else:
        found = Diagnostic("type_mismatch", f"cannot compare or combine a number and a symbol in rule `{rule}`", span)
    raise EvaluationError([found]) from exc


def _aggregate_fn(
    compiled: Compiled, step: AggStep, resolve: Callable[[tuple[Any, ...]], Any], now: int, spend: Any
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
                v = fn(*args, now, spend)
            elif n == 1:
                v = fn(key, *args, now, spend)
            else:
                v = fn(*key, *args, now, spend)
        except TypeError as exc:
            raise EvaluationError(
                [Diagnostic("type_mismatch", f"cannot aggregate symbols in rule `{compiled.plan.label}`")]
            ) from exc
        memo[key] = v
        return v

    return value
