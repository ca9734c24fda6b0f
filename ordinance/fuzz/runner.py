"""Replay histories through the real store and gate; check invariants.

Invariants are compiled to rules by ordinance/invariants.py (a breaking
binding is a tuple of the model, and `why` proves it). `run_history` appends each fact to a fresh SQLite store (in
memory), asks the gate each request at the current `now` (and logs the
decision), and checks the invariants in the gate's model at each request
(with the request's facts), before time advances, and at the end. `search`
lets hypothesis generate and shrink histories until one breaks an invariant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as seed_decorator

from ..engine import ProofNode, evaluate, overlay, why
from ..facts import Event, Store, open_store, schema_of
from ..gate import Decision, Gate
from ..rules.ast import Atom
from ..rules.checked import is_request_side
from ..rules.invariants import DEFAULT_EXAMPLES, Harness, InvariantRule, invariant_head
from . import strategies
from .history import Advance, Ask, Fact, History

__all__ = [
    "invariant_head",
    "InvariantRule",
    "Breach",
    "Harness",
    "Counterexample",
    "run_history",
    "search",
    "minimize",
    "fuzz",
    "outcomes",
    "Outcome",
    "DEFAULT_EXAMPLES",
]


@dataclass(frozen=True, slots=True)
class Breach:
    """A binding that makes an invariant's body true, and where."""

    target: InvariantRule
    binding: tuple[Any, ...]  # values of target.variables
    now: int
    revision: int
    step: int  # number of history steps replayed when it was found
    request: Ask | None  # the request checked in that model, if any
    proof: ProofNode | None
    origins: dict[tuple[str, tuple[Any, ...]], int] = field(default_factory=dict)  # fact -> step


class _Replay:
    """One history going through one fresh store."""

    def __init__(
        self, harness: Harness, store: Store, targets: tuple[InvariantRule, ...], matched: set[str] | None = None
    ):
        self.harness = harness
        self.store = store
        self.targets = targets
        self.matched = matched  # candidate relations (body atoms) seen holding
        self.asked: dict[str, set[tuple[Any, ...]]] = {}  # request-side facts of an ungated policy
        # a gate per history, deciding a few times: warming it for later checks costs more than it saves
        self.gate = Gate(harness.program, store, eager=False) if harness.gated else None
        self.origins: dict[tuple[str, tuple[Any, ...]], int] = {}
        self.decisions: list[Decision] = []

    def model(self, now: int, ask: Ask | None) -> Any:
        if self.gate is not None:
            if ask is not None:
                model = self.gate.overlay(ask.request, now)
            else:
                model = self.gate.model(self.store.revision(), now)
            return overlay(model, self.asked, now=now)  # read at `now` (the warm model holds there)
        facts = self.store.facts()
        for relation, tuples in self.asked.items():  # request-side facts: never in the store
            facts.setdefault(relation, set()).update(tuples)
        return evaluate(self.harness.program, facts, now=now)

    def breach(self, now: int, step: int, ask: Ask | None) -> Breach | None:
        model = self.model(now, ask)
        if self.matched is not None:
            for target in self.targets:
                for relation, _ in target.candidates + target.joined:
                    if relation not in self.matched and model.tuples(relation):
                        self.matched.add(relation)
        for target in self.targets:
            found = sorted(model.tuples(target.relation), key=repr)
            if found:
                t = found[0]
                return Breach(
                    target, t, now, self.store.revision(), step, ask, why(model, target.relation, t), dict(self.origins)
                )
        return None

    def run(self, history: History) -> Breach | None:
        now, dirty = history.base, True
        for n, step in enumerate(history.steps, 1):
            if isinstance(step, Fact) and is_request_side(step.relation):
                self.asked.setdefault(step.relation, set()).add(step.args)  # (a policy without a gate)
                self.origins.setdefault((step.relation, step.args), n)
                dirty = True
            elif isinstance(step, Fact):
                self.store.append([Event(step.kind, step.relation, step.args, "fuzz", "fuzz")])
                self.origins.setdefault((step.relation, step.args), n)
                dirty = True
            elif isinstance(step, Advance):
                if dirty and (found := self.breach(now, n - 1, None)):
                    return found
                now, dirty = now + step.seconds, True
            else:
                if self.gate is not None:
                    self.decisions.append(self.gate.check(step.request, now))
                if found := self.breach(now, n, step):
                    return found
        return self.breach(now, len(history.steps), None) if dirty else None


def run_history(
    harness: Harness,
    history: History,
    targets: tuple[InvariantRule, ...] | None = None,
    store_url: str = ":memory:",
    matched: set[str] | None = None,
) -> tuple[Breach | None, list[Decision]]:
    """Replay `history` into a fresh store at `store_url`; the first breach
    of one of `targets` (default: every invariant), and the gate's decisions.
    `matched` collects the candidate relations (see InvariantRule) seen holding."""
    schema = schema_of(harness.program)
    with open_store(store_url, schema) as store:
        if store.revision() != 0:
            raise ValueError(f"store `{store_url}` is not empty")
        run = _Replay(harness, store, harness.targets if targets is None else targets, matched)
        found = run.run(history)
        return found, run.decisions


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A shrunk history and the breach it leads to."""

    history: History
    breach: Breach


class _Found(Exception):
    def __init__(self, history: History, breach: Breach):
        super().__init__(f"invariant `{breach.target.name}` broken")
        self.history = history
        self.breach = breach


def search(
    harness: Harness,
    target: InvariantRule,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    max_steps: int = strategies.MAX_STEPS,
    matched: set[str] | None = None,
    on_example: Callable[[], None] | None = None,
) -> Counterexample | None:
    """Generate up to `examples` histories (deterministic for a `seed`)
    looking for one that breaks `target`; return it shrunk, or None.
    `matched` collects the body atoms seen matching; `on_example` is called
    after each history."""
    strategy = strategies.histories(
        harness.program, harness.relevant(target), gated=harness.gated, max_steps=max_steps, body=target.invariant.body
    )

    @seed_decorator(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
    )
    @given(strategy)
    def probe(history: History) -> None:
        found, _ = run_history(harness, history, (target,), matched=matched)
        if on_example is not None:
            on_example()
        if found is not None:
            raise _Found(history, found)

    try:
        probe()
    except _Found as found:
        return minimize(harness, target, found.history, found.breach)
    return None


def minimize(harness: Harness, target: InvariantRule, history: History, breach: Breach) -> Counterexample:
    """Drop steps one at a time while the invariant stays broken, until no
    single step can go (hypothesis shrinks the drafts; this finishes the job
    on the concrete history, where steps no longer borrow from each other)."""
    steps = list(history.steps)
    i = len(steps) - 1
    while i >= 0:
        candidate = History(history.base, tuple(steps[:i] + steps[i + 1 :]))
        found, _ = run_history(harness, candidate, (target,))
        if found is not None:
            steps, breach = list(candidate.steps), found
        i = min(i - 1, len(steps) - 1)
    return Counterexample(History(history.base, tuple(steps)), breach)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What fuzzing one invariant found: a counterexample, or that it held;
    `unmatched` lists the body atoms that never had a matching tuple in any
    generated history, `unjoined` (when each did) the first atom that never
    matched together with the atoms before it: either way the invariant held
    vacuously (its body never matched whole, so it was never exercised and
    says nothing)."""

    target: InvariantRule
    counterexample: Counterexample | None
    unmatched: tuple[Atom, ...]
    # when every atom matched alone: the first that never matched together with the atoms before it
    unjoined: Atom | None = None

    @property
    def vacuous(self) -> bool:
        return self.counterexample is None and (bool(self.unmatched) or self.unjoined is not None)


def outcomes(
    harness: Harness,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    targets: Iterable[InvariantRule] | None = None,
    on_example: Callable[[], None] | None = None,
) -> Iterator[Outcome]:
    """`search` every invariant (or `targets`), in source order, saying
    which held vacuously."""
    for target in harness.targets if targets is None else targets:
        matched: set[str] = set()
        found = search(harness, target, examples=examples, seed=seed, matched=matched, on_example=on_example)
        unmatched = () if found is not None else tuple(a for rel, a in target.candidates if rel not in matched)
        unjoined = None
        if found is None and not unmatched:
            unjoined = next((a for rel, a in target.joined if rel not in matched), None)
        yield Outcome(target, found, unmatched, unjoined)


def fuzz(
    harness: Harness,
    *,
    examples: int = DEFAULT_EXAMPLES,
    seed: int = 0,
    targets: Iterable[InvariantRule] | None = None,
) -> Iterator[tuple[InvariantRule, Counterexample | None]]:
    """`search` every invariant (or `targets`), in source order."""
    for target in harness.targets if targets is None else targets:
        yield target, search(harness, target, examples=examples, seed=seed)
