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
`why_not=True` demand covers (magic.py). `also` asks several questions of
one model (the gate's forbid, permit and flag: gate/jump.py).

`Given.over(warm, request_facts, now)` gives the relations of a warm model of
any `now` instead: the derived ones that depend neither on `$now` nor on the
added facts' relations (`settled`) are the same at every `now`, so the
rewrite reads them fully computed, with their proof notes, and demands only
the others. A rewrite is planned as it passes demand (its magic relations
first, then probes on bound arguments), and its strata none of whose rules
can fire (each with a premise of lower strata empty, such as its magic
relation: most of them) are skipped. A demanded model over a warm model's
`Given.base` starts from the base's skeleton (its relations as given, an
`Empty` for each relation left to the demand): a question makes only the
relations it derived tuples of.

Proofs need heights: the round of its stratum in which a full evaluation
first derives a tuple. A non-recursive stratum derives all in round 1; in a
recursive one the height is the least, over the tuple's rule instances, of
one plus its highest premise of the stratum (a given fact of the stratum
counts 0), numbered here breadth first over the instances of the demanded
tuples (`premises`), which are exactly their instances in the full model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import Any, Iterable, Mapping, Sequence

from ..diagnostics import EvaluationError, LimitExceeded
from ..rules.ast import Aggregate, BinOp, Branch, Call, Record, literal_terms, subterms
from ..rules.checked import CheckedProgram
from .clock import clockwork
from .evaluate import load_relations, run_stratum
from .limits import Budget, Limits
from .magic import Demand, magic
from .model import Model
from .full import evaluate
from .prepare import Prepared, Stratum, prepared
from .qualify import is_qualified
from .provenance import premises
from .relation import Empty, Rel

__all__ = [
    "Given",
    "Ask",
    "demanded",
    "demand_exact",
    "demand_of",
    "ready",
    "model_for",
    "outputs",
    "settled",
    "structured",
    "GROWTH",
]

GROWTH = 2  # model_for evaluates in full when the rewrite holds more than this many times the policy's rules

Tuple = tuple[Any, ...]


@dataclass
class Given:
    """The given facts (the store's and the program's own) as relations that
    every demanded evaluation at `now` reads and none changes; and, over a
    warm model (`Given.over`), the derived relations that do not depend on
    `now` nor on the caller's facts, fully computed (`full`): the rewrite
    reads them as they are."""

    program: CheckedProgram
    rels: dict[str, Rel]
    now: int
    timed: bool = False  # a program fact mentions `$now`
    facts: Mapping[str, Iterable[Tuple]] | None = field(default=None, repr=False)
    full: frozenset[str] = frozenset()
    rounds: dict[int, int] = field(default_factory=dict)  # the full relations' strata -> their heights
    inexact: frozenset[int] = frozenset()  # of those strata, the ones to renumber before a proof
    # `adding`'s: the relations it replaced, those it added to, and the
    # rewrites' relations over those (`_rewrite`), shared by every `adding`
    added: frozenset[str] = field(default=frozenset(), repr=False)
    before: dict[str, Rel] | None = field(default=None, repr=False)
    shared: dict[int, tuple[Prepared, dict[str, Rel]]] = field(default_factory=dict, repr=False)
    # `base`'s, shared by every `adding`: the derived relations left to the demand (`opened`),
    # and the relations of a demanded model (`_restricted`) where the questions derive
    # nothing and `adding` adds nothing: each of `opened` an `Empty`, the others as given
    opened: frozenset[str] = field(default=frozenset(), repr=False)
    skeleton: dict[str, Rel] | None = field(default=None, repr=False)

    @classmethod
    def load(cls, program: CheckedProgram, facts: Mapping[str, Iterable[Tuple]] | None, now: int) -> "Given":

        prep = prepared(program)
        loaded = load_relations(prep, facts, now)
        rels = {name: rel if not rel.derived else Rel(name, rel.arity, False, rel.edb) for name, rel in loaded.items()}
        timed = not clockwork(prep).fixed
        return cls(program, rels, now, timed, facts if timed else None)

    @classmethod
    def over(
        cls, model: Model, facts: Mapping[str, Iterable[Tuple]], now: int, inputs: frozenset[str] | None = None
    ) -> "Given":
        """The relations of a warm `model` (of any `now`; its program facts
        must not mention `$now`) plus `facts` of the `inputs` (relations no
        rule derives; default: those of `facts`), at `now`: its derived
        relations that depend neither on `$now` nor on the inputs are given
        fully computed, the others are left to the demand."""
        return cls.base(model, frozenset(facts) if inputs is None else inputs | frozenset(facts)).adding(facts, now)

    @classmethod
    def base(cls, model: Model, inputs: frozenset[str]) -> "Given":
        """`over` without the facts (what `adding` adds them to): the same
        for every decision over one warm model as it is, so a caller may
        keep it while the model stays unchanged (gate/jump.py)."""
        prep = model.prepared
        full = settled(prep, inputs)
        rels: dict[str, Rel] = {}
        for name, rel in model.rels.items():
            if name in prep.derived and name not in full:
                rels[name] = Rel(name, rel.arity, False, rel.edb)
            else:
                rels[name] = rel
        strata = {prep.stratum_index[name] for name in full}
        rounds = {i: h for i, h in model.rounds.items() if i in strata}
        inexact = frozenset(model.inexact & strata)
        given = cls(prep.program, rels, model.now, full=full, rounds=rounds, inexact=inexact)
        given.opened = frozenset(prep.derived - (full & rels.keys()))
        given.skeleton = _skeleton(prep, given, given.opened)
        return given

    def adding(self, facts: Mapping[str, Iterable[Tuple]], now: int) -> "Given":
        """These relations plus `facts` (of relations it holds), at `now`;
        its own relations are shared, never changed."""
        rels = dict(self.rels)
        for name, rows in facts.items():
            rel = rels.get(name)
            if rel is not None:
                rels[name] = Rel(name, rel.arity, False, set(rel.edb) | set(map(tuple, rows)))
        before = self.rels if self.before is None else self.before
        added = self.added | frozenset(name for name in facts if name in rels)
        return Given(
            self.program,
            rels,
            now,
            full=self.full,
            rounds=self.rounds,
            inexact=self.inexact,
            added=added,
            before=before,
            shared=self.shared,
            opened=self.opened,
            skeleton=self.skeleton,
        )

    def at(self, now: int) -> "Given":
        """The same facts at another `now` (reloaded only if a program fact reads the clock)."""
        if now == self.now:
            return self
        if self.timed:
            return Given.load(self.program, self.facts, now)
        return Given(self.program, self.rels, now, full=self.full, rounds=self.rounds, inexact=self.inexact)


def settled(prep: Prepared, inputs: frozenset[str]) -> frozenset[str]:
    """The derived relations of `prep` that depend (through any literal)
    neither on `$now` nor on the relations `inputs`: the same at every
    `now` and whatever facts of `inputs` are added."""
    hit = prep.analyses.settled.get(inputs)
    if hit is not None:
        return hit
    work = clockwork(prep)
    timed = work.moving | {watch.rule for watch in work.watches}  # the rules that read the clock
    moving = set(inputs)
    for st in prep.strata:
        if (st.positive | st.negative) & moving or not timed.isdisjoint(st.rules):
            moving |= set(st.relations)
    found = prep.analyses.settled[inputs] = frozenset(prep.derived - moving)
    return found


def structured(program: CheckedProgram) -> bool:
    """Whether a rule of `program` builds or matches records or ADT values
    (the rewrite does not plan them: such programs are evaluated in full)."""
    return any(
        isinstance(t, (Record, Branch))
        for rule in program.rules
        for term in (*rule.head.args, *(x for lit in rule.body for x in literal_terms(lit)))
        for t in subterms(term, True)
    )


# the size an adorned relation counts when its rules are planned: it holds what
# was demanded only, so a probe of it with a bound argument comes before a scan
# of a relation read as it is (which grows with the store)
_DEMANDED = 1 << 10

_DEMANDS: dict[tuple[int, str, tuple[bool, ...], bool, frozenset[str]], tuple[CheckedProgram, Demand]] = {}


def demand_of(
    program: CheckedProgram,
    relation: str,
    bound: tuple[bool, ...],
    source_order: bool = False,
    given: frozenset[str] = frozenset(),
) -> Demand:
    """The demand transformation for `relation` with `bound` arguments (the
    derived relations `given` read as they are), made once per program."""
    key = (id(program), relation, bound, source_order, given)
    hit = _DEMANDS.get(key)
    if hit is not None and hit[0] is program:
        return hit[1]
    if len(_DEMANDS) >= 256:
        _DEMANDS.pop(next(iter(_DEMANDS)))
    found = magic(program, relation, bound, source_order, given)
    _DEMANDS[key] = (program, found)
    return found


Ask = tuple[str, tuple[Any, ...], bool]  # a relation, its pattern's values (None: open), and whether why-not reads it


def demanded(
    given: Given,
    relation: str,
    values: tuple[Any, ...],
    *,
    limits: Limits | None = None,
    proofs: bool = True,
    why_not: bool = False,
    also: Sequence[Ask] = (),
) -> Model:
    """The model of what `relation(values)` needs (None: an open argument).
    With `proofs`, its tuples carry the heights `why` reads; `why_not`
    demands in source order, what a why-not of the pattern reads. `also`
    asks more questions of the same model: it holds what each one needs."""

    prep = prepared(given.program)
    found: dict[str, set[Tuple]] = {}
    for ask in ((relation, values, why_not), *also):
        if ask[0] in prep.derived:
            _demand(given, ask, limits, found)
    return _restricted(prep, given, found, limits, proofs)


def _demand(given: Given, ask: Ask, limits: Limits | None, found: dict[str, set[Tuple]]) -> None:
    """Evaluate the demand transformation for one question; add the tuples
    it derived to `found` (original relation -> tuples)."""

    relation, values, _ = ask
    program = given.program
    demand, rewritten, template, guards, rels = _rewrite(given, ask)
    seed = template[demand.seed]
    rels[demand.seed] = Rel(seed.name, seed.arity, seed.derived, [tuple(v for v in values if v is not None)])
    model = Model(rewritten, rels, given.now, limits)
    budget = Budget(limits)
    always, starts, watchers, needs = _schedule(rewritten, guards, demand.seed)
    # most strata of a rewrite are not demanded: they run only once a relation guarding them is not empty
    todo = [*always, *(i for r in starts if rels[r].stable for i in watchers[r])]
    heapify(todo)
    done = -1
    strata = rewritten.strata
    ran: list[Stratum] = []

    def write(name: str) -> Rel:  # a relation of the template is shared until a stratum adds to it
        rel = rels[name]
        if rel is template[name]:
            rel = rels[name] = Rel(name, rel.arity, True, rel.edb)
        return rel

    try:
        while todo:
            i = heappop(todo)
            if i <= done:
                continue
            done = i
            need = needs[i]
            if need is not None:  # the lower strata are done: a rule with an empty premise there cannot fire
                for rule in need:
                    for r in rule:
                        if not rels[r].stable:
                            break
                    else:
                        break
                else:
                    continue
            st = strata[i]
            ran.append(st)
            run_stratum(model, st, budget, write=write)
            for name in st.relations:
                if rels[name].stable:
                    for j in watchers.get(name, ()):
                        heappush(todo, j)
    except LimitExceeded:
        raise
    except EvaluationError:
        # name the rule as the policy writes it: the full evaluation meets the same error

        evaluate(program, {name: rel.edb for name, rel in given.rels.items()}, now=given.now, limits=limits)
        raise
    origins = demand.origin
    for name in (name for st in ran for name in st.relations if name in origins):
        tuples = rels[name].stable
        if tuples:
            origin = origins[name]
            if origin in found:
                found[origin] |= tuples
            else:
                found[origin] = set(tuples)


def _rewrite(
    given: Given, ask: Ask
) -> tuple[Demand, Prepared, dict[str, Rel], list[tuple[str, ...] | None], dict[str, Rel]]:
    """The rewrite answering `ask` over `given`, readied (planned as it
    passes demand: magic relations first, then bound probes), its template
    and guards (`_template`), and its relations before the seed."""
    relation, values, why_not = ask
    program = given.program
    demand = demand_of(program, relation, tuple(v is not None for v in values), why_not, given.full)
    rewritten = prepared(demand.program)
    if not rewritten.hints:
        rewritten.hints.update({name: _DEMANDED for name in demand.origin})
        rewritten.hints.update({"?" + name: 1 for name in demand.origin})
    template, guards = _template(rewritten)
    if given.before is None:
        return demand, rewritten, template, guards, _over(program, template, given.rels)
    kept = given.shared.get(id(rewritten))
    if kept is None or kept[0] is not rewritten:
        kept = given.shared[id(rewritten)] = (rewritten, _over(program, template, given.before))
    rels = dict(kept[1])  # over the relations `adding` added to, then those it made
    for name in given.added:
        if name in rels:
            rels[name] = given.rels[name]
    return demand, rewritten, template, guards, rels


def _over(program: CheckedProgram, template: dict[str, Rel], given: Mapping[str, Rel]) -> dict[str, Rel]:
    """A rewrite's relations before its seed: its template's, the original
    program's read from `given` (empty where it holds none)."""
    rels = dict(template)
    for name in program.relations:
        if name in rels:
            have = given.get(name)
            rels[name] = have if have is not None else Rel(name, rels[name].arity, False)
    return rels


def ready(given: Given, asks: Sequence[Ask]) -> None:
    """Make the rewrites answering `asks` over `given` and compile every
    round their evaluations may run, so the first `demanded` over such a
    given costs what later ones do (a warm model's jumps: gate/jump.py),
    and build the indexes of the given relations they probe."""
    prep = prepared(given.program)
    for ask in asks:
        if ask[0] not in prep.derived:
            continue
        _, rewritten, _, _, rels = _rewrite(given, ask)
        for st in rewritten.strata:
            for kind in ("full", "own") if st.recursive else ("full",):
                run = rewritten.variants(st, kind, rels)
                for part in run.parts if run is not None else ():
                    _probed(rewritten, part.inputs, given.rels)


def _probed(prep: Prepared, inputs: Any, rels: Mapping[str, Rel]) -> None:
    """Build the indexes of `rels` that a compiled plan's `inputs` probe."""
    for spec in inputs:
        if spec[0] == "index" and spec[1] in rels:
            rels[spec[1]].index(spec[2])
        elif spec[0] == "agg":
            _probed(prep, prep.aggregate(spec[1]).inputs, rels)


Needs = tuple[tuple[str, ...], ...] | None  # per rule of a stratum, the relations of lower strata it reads positively


def _schedule(
    prep: Prepared, guards: list[tuple[str, ...] | None], seed: str
) -> tuple[tuple[int, ...], tuple[str, ...], dict[str, tuple[int, ...]], list[Needs]]:
    """When the strata of a rewrite run: those without a guard always; the
    others once a relation guarding them is not empty, that is, from the
    start for the guards no stratum writes (given relations, the seed, a
    relation holding facts), else after the stratum holding it ran (its
    strata are higher: they follow in order). And what a stratum then
    needs: per rule, the relations of lower strata (or given) it reads
    positively (None where some rule reads none: it may always fire); if
    each rule has one of its own empty, none can fire, and the stratum is
    skipped. Made once per rewrite."""
    hit = prep.analyses.schedule
    if hit is not None and hit[0] == seed:
        return hit[1]
    always, watchers = [], {}  # type: list[int], dict[str, list[int]]
    for i, guard in enumerate(guards):
        if guard is None:
            always.append(i)
        for r in guard or ():
            watchers.setdefault(r, []).append(i)
    template = prep.analyses.template
    assert template is not None
    starts = tuple(r for r in watchers if r not in prep.derived or r == seed or template[0][r].edb)
    needs: list[Needs] = []
    for st in prep.strata:
        rules = [tuple(sorted({r for _, r in st.atoms[rid] if r not in st.relations})) for rid in st.rules]
        needs.append(None if () in rules else tuple(dict.fromkeys(rules)))
    found = (tuple(always), starts, {r: tuple(ids) for r, ids in watchers.items()}, needs)
    prep.analyses.schedule = (seed, found)
    return found


def _template(prep: Prepared) -> tuple[dict[str, Rel], list[tuple[str, ...] | None]]:
    """The relations of a rewrite before evaluation, shared by its
    evaluations until a stratum that runs writes them (most never run), and
    per stratum, relations of lower strata one of which every rule reads
    positively (the first such atom of each rule: in a rewrite, its magic
    relation; None where some rule reads none): while they are all empty, no
    rule of the stratum can fire."""
    hit = prep.analyses.template
    if hit is not None:
        return hit
    guards: list[tuple[str, ...] | None] = []
    for st in prep.strata:
        first = [next((r for _, r in st.atoms[rid] if r not in st.relations), None) for rid in st.rules]
        guards.append(None if None in first else tuple(dict.fromkeys(r for r in first if r is not None)))
    rels = load_relations(prep, None, 0)  # a rewrite's own facts never mention `$now`
    prep.analyses.template = (rels, guards)
    return rels, guards


def _restricted(
    prep: Prepared, given: Given, found: dict[str, set[Tuple]], limits: Limits | None, proofs: bool
) -> Model:
    """The original program's model holding the given relations and the
    demanded tuples of the derived ones, with their heights."""
    arity, held = prep.arity, given.rels
    if given.skeleton is not None:  # over a `base`: what differs from its skeleton
        rels = dict(given.skeleton)
        for name in given.added - given.opened:
            if name in arity:
                rels[name] = held[name]
        opened: Iterable[str] = given.opened & (found.keys() | given.added)
    else:
        opened = prep.derived - (given.full & held.keys())  # (the full relations are given as they are)
        rels = _skeleton(prep, given, frozenset())
    for name in opened:
        have = held.get(name)
        tuples = found.get(name)
        if tuples is None:
            tuples = set()
        rel = rels[name] = Rel(name, arity[name], True, tuples & have.edb if have is not None and have.edb else ())
        rel.stable = tuples
    model = Model(prep, rels, given.now, limits)
    model.rounds.update(given.rounds)
    model.inexact = set(given.inexact)
    # a stratum none of whose relations was demanded derived nothing: nothing to number
    asked = sorted({prep.stratum_index[name] for name in found if name not in given.full})
    if proofs and not all(_number(model, prep.strata[i]) for i in asked):
        # a tuple whose instances cannot be enumerated from its value (a head
        # argument that is an expression, in a recursive stratum): its height is
        # the full evaluation's to give

        return evaluate(prep.program, {name: rel.edb for name, rel in given.rels.items()}, now=given.now, limits=limits)
    return model


def _skeleton(prep: Prepared, given: Given, opened: frozenset[str]) -> dict[str, Rel]:
    """The relations of the program (in its order) as `given` holds them, a
    new empty one where it holds none, and each of `opened` (derived) an
    `Empty`: what a demanded model holds where nothing was demanded."""
    arity, held = prep.arity, given.rels
    rels: dict[str, Any] = dict.fromkeys(arity)
    if held.keys() <= arity.keys():
        rels.update(held)
    else:
        rels.update((name, rel) for name, rel in held.items() if name in arity)
    for name in arity.keys() - held.keys() - prep.derived:
        rels[name] = Rel(name, arity[name], False)
    for name in opened:
        rels[name] = Empty(name, arity[name])
    return rels


def _first_rules(prep: Prepared) -> dict[str, int]:
    """Derived relation -> the id of its first rule with a body (what a
    non-recursive stratum's notes name), made once per program."""
    first = prep.analyses.first
    if first is None:
        first = prep.analyses.first = {}
        for rid, rule in enumerate(prep.program.rules):
            if rule.body:
                first.setdefault(rule.head.relation, rid)
    return first


def _number(model: Model, st: Stratum) -> bool:
    """Heights of the stratum's derived tuples, as a full evaluation numbers
    them; False if some tuple has no instance to number it from."""
    rels = model.rels
    if all(len(rels[name].stable) == len(rels[name].edb) for name in st.relations):
        return True  # nothing derived here
    first = _first_rules(model.prepared)
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
        or structured(program)
        or (
            relation in program.relations
            and program.relations[relation].derived
            and len(demand_of(program, relation, bound, why_not).program.rules) > GROWTH * rules
        )
    ):
        return evaluate(program, facts, now=now, limits=limits)
    return demanded(Given.load(program, facts, now), relation, values, limits=limits, proofs=proofs, why_not=why_not)


def demand_exact(policy: CheckedProgram, inputs: frozenset[str]) -> bool:
    """Whether questions asked on demand over a warm model, with `inputs`
    (the request-side relations) given, answer as a full evaluation at
    another `now` does (gate/jump.py): not for qualifiers or records, a
    program whose facts mention `$now`, or one whose rules that depend on the
    clock or the inputs may fail at run time (a functor, an operator but `+`
    and `-`, an aggregate but `count`, `min` and `max`)."""
    if is_qualified(policy) or structured(policy):
        return False
    prep = prepared(policy)
    if not clockwork(prep).fixed:
        return False
    full = settled(prep, inputs)
    for rule in policy.rules:
        if rule.body and rule.head.relation not in full:
            terms = (*rule.head.args, *(x for lit in rule.body for x in literal_terms(lit)))
            for term in terms:
                for t in subterms(term, True):
                    if (
                        isinstance(t, Call)
                        or (isinstance(t, BinOp) and t.op not in ("+", "-"))
                        or (isinstance(t, Aggregate) and t.func not in ("count", "min", "max"))
                    ):
                        return False
    return True


def outputs(
    program: CheckedProgram,
    facts: Mapping[str, Iterable[Tuple]] | None,
    relations: Sequence[str],
    *,
    now: int,
    limits: Limits | None = None,
) -> Model:
    """A model holding each of `relations` in full, evaluated on demand
    (Soufflé's `.pragma "magic-transform"`): a rule's constants pass down as
    demand (`query() :- samegen(16384, 32767).` reads one path of the tree,
    not every pair of a generation). In full when the program has a
    choice-domain, subsumption or counter, or records and ADT values (as
    `model_for`), or nothing is asked."""
    if not relations or is_qualified(program) or structured(program):
        return evaluate(program, facts, now=now, limits=limits)
    asks = [(name, (None,) * program.relations[name].arity, False) for name in relations]
    first, *also = asks
    return demanded(Given.load(program, facts, now), first[0], first[1], limits=limits, proofs=False, also=also)
