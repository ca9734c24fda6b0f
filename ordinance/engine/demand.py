"""Evaluation on demand: the model of what one pattern needs, not of the
whole store.

    given = Given.load(program, store.facts(), now)  # once per revision
    model = demanded(given, "status", ("svc", None, None))
    answers(model, pattern); why(model, ...); why_not(model, ...)

`demanded` evaluates the demand transformation of the program for the
pattern's bound arguments (magic.py), seeded with their values, over the
given relations, which every question shares (their indexes are built once).
Its answer is a model of the *original* program holding, for every derived
relation, only the tuples the question demanded, each one a tuple of the
full model, and every tuple of the full model that matches a demanded
pattern; relations fed by facts are the given ones. Every rule instance of
the full model deriving a demanded tuple has demanded premises only, so
`answers` and `why` give what they give on a full evaluation; `why_not`
also reads the partial bindings of rule bodies in source order, which the
`why_not=True` demand covers (magic.py).

Proofs need heights: the round of its stratum in which a full evaluation
first derives a tuple. A non-recursive stratum derives all in round 1; in a
recursive one the height is the least, over the tuple's rule instances, of
one plus its highest premise of the stratum (a given fact of the stratum
counts 0), numbered here breadth first over the instances of the demanded
tuples (`premises`), which are exactly their instances in the full model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..diagnostics import EvaluationError, LimitExceeded
from ..rules.ast import Branch, Now, Record, Term, literal_terms, subterms
from ..rules.checked import CheckedProgram
from .evaluate import load_relations, run_stratum
from .limits import Budget, Limits
from .magic import Demand, magic
from .model import Model
from .prepare import Prepared, Stratum
from .qualify import is_qualified
from .provenance import premises
from .relation import Rel

__all__ = ["Given", "demanded", "demand_of", "model_for", "GROWTH"]

GROWTH = 2  # model_for evaluates in full when the rewrite holds more than this many times the policy's rules

Tuple = tuple[Any, ...]


@dataclass
class Given:
    """The given facts (the store's and the program's own) as relations that
    every demanded evaluation at `now` reads and none changes."""

    program: CheckedProgram
    rels: dict[str, Rel]
    now: int
    timed: bool = False  # a program fact mentions `$now`
    facts: Mapping[str, Iterable[Tuple]] | None = field(default=None, repr=False)

    @classmethod
    def load(cls, program: CheckedProgram, facts: Mapping[str, Iterable[Tuple]] | None, now: int) -> "Given":
        from . import prepared

        loaded = load_relations(prepared(program), facts, now)
        rels = {name: rel if not rel.derived else Rel(name, rel.arity, False, rel.edb) for name, rel in loaded.items()}
        timed = any(not r.body and any(map(_mentions_now, r.head.args)) for r in program.rules)
        return cls(program, rels, now, timed, facts if timed else None)

    def at(self, now: int) -> "Given":
        """The same facts at another `now` (reloaded only if a program fact reads the clock)."""
        if now == self.now:
            return self
        if self.timed:
            return Given.load(self.program, self.facts, now)
        return Given(self.program, self.rels, now)


def _mentions_now(term: Term) -> bool:
    return any(isinstance(t, Now) for t in subterms(term))


def _structured(program: CheckedProgram) -> bool:
    """Whether a rule of `program` builds or matches records or ADT values
    (the rewrite does not plan them: such programs are evaluated in full)."""
    return any(
        isinstance(t, (Record, Branch))
        for rule in program.rules
        for term in (*rule.head.args, *(x for lit in rule.body for x in literal_terms(lit)))
        for t in subterms(term, True)
    )


_DEMANDS: dict[tuple[int, str, tuple[bool, ...], bool], tuple[CheckedProgram, Demand]] = {}


def demand_of(program: CheckedProgram, relation: str, bound: tuple[bool, ...], source_order: bool = False) -> Demand:
    """The demand transformation for `relation` with `bound` arguments, made once per program."""
    key = (id(program), relation, bound, source_order)
    hit = _DEMANDS.get(key)
    if hit is not None and hit[0] is program:
        return hit[1]
    if len(_DEMANDS) >= 256:
        _DEMANDS.pop(next(iter(_DEMANDS)))
    found = magic(program, relation, bound, source_order)
    _DEMANDS[key] = (program, found)
    return found


def demanded(
    given: Given,
    relation: str,
    values: tuple[Any, ...],
    *,
    limits: Limits | None = None,
    proofs: bool = True,
    why_not: bool = False,
) -> Model:
    """The model of what `relation(values)` needs (None: an open argument).
    With `proofs`, its tuples carry the heights `why` reads; `why_not`
    demands in source order, what a why-not of the pattern reads."""
    from . import prepared

    program = given.program
    prep = prepared(program)
    if relation not in prep.derived:
        return _restricted(prep, given, {}, limits, proofs)
    demand = demand_of(program, relation, tuple(v is not None for v in values), why_not)
    rewritten = prepared(demand.program)
    rels = load_relations(rewritten, {demand.seed: [tuple(v for v in values if v is not None)]}, given.now)
    for name in program.relations:
        if name in rels:
            have = given.rels.get(name)
            rels[name] = have if have is not None else Rel(name, rels[name].arity, False)
    model = Model(rewritten, rels, given.now, limits)
    budget = Budget(limits)
    try:
        for st in rewritten.strata:
            run_stratum(model, st, budget)
    except LimitExceeded:
        raise
    except EvaluationError:
        # name the rule as the policy writes it: the full evaluation meets the same error
        from . import evaluate

        evaluate(program, {name: rel.edb for name, rel in given.rels.items()}, now=given.now, limits=limits)
        raise
    found: dict[str, set[Tuple]] = {}
    for name, origin in demand.origin.items():
        tuples = rels[name].stable
        if tuples:
            if origin in found:
                found[origin] |= tuples
            else:
                found[origin] = set(tuples)
    return _restricted(prep, given, found, limits, proofs)


def _restricted(
    prep: Prepared, given: Given, found: dict[str, set[Tuple]], limits: Limits | None, proofs: bool
) -> Model:
    """The original program's model holding the given relations and the
    demanded tuples of the derived ones, with their heights."""
    rels: dict[str, Rel] = {}
    for name, n in prep.arity.items():
        have = given.rels.get(name)
        if name not in prep.derived:
            rels[name] = have if have is not None else Rel(name, n, False)
            continue
        tuples = found.get(name, set())
        rel = rels[name] = Rel(name, n, True, tuples & have.edb if have is not None else ())
        rel.stable = tuples
    model = Model(prep, rels, given.now, limits)
    if proofs and not all(_number(model, st) for st in prep.strata):
        # a tuple whose instances cannot be enumerated from its value (a head
        # argument that is an expression, in a recursive stratum): its height is
        # the full evaluation's to give
        from . import evaluate

        return evaluate(prep.program, {name: rel.edb for name, rel in given.rels.items()}, now=given.now, limits=limits)
    return model


def _number(model: Model, st: Stratum) -> bool:
    """Heights of the stratum's derived tuples, as a full evaluation numbers
    them; False if some tuple has no instance to number it from."""
    rels = model.rels
    first = {
        name: next(rid for rid in model.prepared.program.rules_for(name) if model.prepared.program.rules[rid].body)
        for name in st.relations
    }
    if not st.recursive:
        for name in st.relations:
            rel = rels[name]
            new = rel.stable - rel.edb
            if new:
                rel.batches = [(1, first[name], new)]
                model.rounds[st.index] = 1
        return True
    own = set(st.relations)
    waiting: dict[tuple[str, Tuple], list[int]] = {}
    count: list[int] = []
    conclusion: list[tuple[str, Tuple]] = []
    frontier: list[tuple[str, Tuple]] = []
    for name in st.relations:
        rel = rels[name]
        for t in rel.stable - rel.edb:
            for found in premises(model, name, t):
                need = {p for p in found if p[0] in own and p[1] not in rels[p[0]].edb}
                if not need:
                    frontier.append((name, t))
                    continue
                count.append(len(need))
                conclusion.append((name, t))
                for p in need:
                    waiting.setdefault(p, []).append(len(count) - 1)
    heights: dict[str, dict[int, set[Tuple]]] = {}
    known: set[tuple[str, Tuple]] = set()
    height = 1
    while frontier:
        later: list[tuple[str, Tuple]] = []
        for key in frontier:
            if key in known:
                continue
            known.add(key)
            heights.setdefault(key[0], {}).setdefault(height, set()).add(key[1])
            for i in waiting.get(key, ()):
                count[i] -= 1
                if count[i] == 0 and conclusion[i] not in known:
                    later.append(conclusion[i])
        frontier = later
        height += 1
    for name, by_height in heights.items():
        rels[name].batches = [(h, first[name], tuple(ts)) for h, ts in sorted(by_height.items())]
        model.rounds[st.index] = max(model.rounds.get(st.index, 0), max(by_height))
    return sum(len(rels[n].stable - rels[n].edb) for n in own) == len(known)


def model_for(
    program: CheckedProgram,
    facts: Mapping[str, Iterable[Tuple]] | None,
    relation: str,
    values: tuple[Any, ...],
    *,
    now: int,
    limits: Limits | None = None,
    proofs: bool = True,
    why_not: bool = False,
) -> Model:
    """The model a question about `relation(values)` reads (`query`, `why`,
    `why-not`): evaluated on demand when an argument is bound, in full
    otherwise, or when the rewrite would be more than `GROWTH` times the
    policy's rules (the copies of contexts cost more than they save), or
    when the program has a choice-domain, subsumption or counter (whose
    answers depend on the whole relation, not on what a question demands)
    or records and ADT values."""
    bound = tuple(v is not None for v in values)
    rules = sum(1 for r in program.rules if r.body)
    if (
        not any(bound)
        or is_qualified(program)
        or _structured(program)
        or (
            relation in program.relations
            and program.relations[relation].derived
            and len(demand_of(program, relation, bound, why_not).program.rules) > GROWTH * rules
        )
    ):
        from . import evaluate

        return evaluate(program, facts, now=now, limits=limits)
    return demanded(Given.load(program, facts, now), relation, values, limits=limits, proofs=proofs, why_not=why_not)
