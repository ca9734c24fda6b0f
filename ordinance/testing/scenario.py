"""Scenarios: a failure story as data, replayed against a real store.

A scenario file (TOML, see scenarios/README.md) holds the policy (the stdlib
`continuity` plus optional extra rules), steps (batches of facts appended to
the store, each optionally labelled so checks can name its revision),
checks (a request at a `now`, with the expected decision and reason codes),
projections (derived facts expected to hold or be absent at a `now`) and
state files (`ordinance.project`: the lines a rendered projection must show,
and text it must not contain, at a `now`, for an audience, under a cap).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..diagnostics import GateError, OrdinanceError
from ..facts import Event, Store, kind_of, open_store, schema_of
from ..gate import Decision, Gate, Request
from ..project import DEFAULT_BOUND, Layers, Projector, records, rehydrate
from ..rules.invariants import Harness, invariant_head
from ..rules import typed_fact
from ..rules.checked import CheckedProgram
from ..values import to_value

__all__ = [
    "Scenario",
    "Batch",
    "Check",
    "Projection",
    "StateView",
    "Outcome",
    "load_scenario",
    "scenario_from",
    "load_steps",
    "run_scenario",
    "compile_policy",
    "broken_invariants",
]


Fact = tuple[str, tuple[Any, ...]]


@dataclass(frozen=True)
class Batch:
    facts: tuple[Fact, ...]
    label: str | None = None
    source: str = "scenario"
    author: str = "scenario"
    layer: str | None = None  # None: the policy's default layer


@dataclass(frozen=True)
class Check:
    name: str
    request: Request
    now: int
    at: str | None  # a step label; None: the newest revision
    allowed: bool
    codes: tuple[str, ...]
    flags: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Projection:
    name: str
    now: int
    at: str | None
    holds: tuple[Fact, ...]
    absent: tuple[Fact, ...]


@dataclass(frozen=True)
class StateView:
    """A rendered projection (default `state`) and what it must and must not
    show, as its text, the rehydration bundle or Markdown records (`form`)."""

    name: str
    now: int
    at: str | None
    projection: str = "state"
    audience: str | None = None
    cap: int | None = 4096  # the text's cap; the bundle's bound; records are uncapped
    agent: str | None = None
    lines: tuple[str, ...] = ()  # exact lines the text must contain
    absent: tuple[str, ...] = ()  # substrings it must not contain
    has: tuple[str, ...] = ()  # substrings it must contain (e.g. a line up to a wall-clock stamp)
    form: str = "text"  # text | bundle | records


@dataclass(frozen=True)
class Scenario:
    name: str
    story: str
    policy: CheckedProgram
    steps: tuple[Batch, ...]
    checks: tuple[Check, ...]
    projections: tuple[Projection, ...]
    path: str | None = None
    states: tuple[StateView, ...] = ()


@dataclass
class Outcome:
    """The result of running a scenario: one line per failed expectation."""

    scenario: str
    decisions: list[tuple[Check, Decision]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def compile_policy(text: str, file: str | None = None) -> CheckedProgram:
    """Compile `text` with every `.invariant` also turned into a rule whose
    tuples are the bindings breaking it (the fuzzer's compilation), so a
    model shows broken invariants."""
    return Harness.from_text(text, file).program


def broken_invariants(model: Any) -> list[str]:
    """Names of the invariants broken in `model` (of a `compile_policy` program)."""
    program = model.prepared.program
    return sorted(inv.name for n, inv in enumerate(program.invariants) if model.tuples(invariant_head(n)))


def _policy(data: Mapping[str, Any], path: Path | None) -> CheckedProgram:
    spec = data.get("policy", {})
    includes = spec.get("include", ["continuity"])
    text = "".join(f'.include "{name}"\n' for name in includes) + spec.get("rules", "")
    return compile_policy(text, file=str(path) if path is not None else None)


def _fact(row: Any, policy: CheckedProgram, where: str) -> Fact:
    if not isinstance(row, list) or not row or not isinstance(row[0], str):
        raise GateError(f"{where}: a fact is [relation, arg, ...], got {row!r}")
    return typed_fact(policy, row[0], row[1:], where=f"{where}: ")


def _request(data: Mapping[str, Any]) -> Request:
    fields = dict(data)
    if "needs" in fields:
        fields["needs"] = [tuple(n) for n in fields["needs"]]
    return Request.from_json(fields)


def load_scenario(path: str | Path) -> Scenario:
    """Parse a scenario file; errors name the file and the entry."""
    p = Path(path)
    with p.open("rb") as fh:
        data = tomllib.load(fh)
    return scenario_from(data, p)


def scenario_from(data: Mapping[str, Any], path: Path | None = None) -> Scenario:
    name = data.get("name") or (path.stem if path else "scenario")
    policy = _policy(data, path)
    steps = tuple(
        Batch(
            tuple(_fact(r, policy, f"step {i}") for r in s.get("facts", [])),
            s.get("label"),
            s.get("source", "scenario"),
            s.get("author", "scenario"),
            s.get("layer"),
        )
        for i, s in enumerate(data.get("step", []), 1)
    )
    checks = tuple(
        Check(
            c.get("name", f"check {i}"),
            _request(c["request"]),
            int(to_value(c["now"], "time")),
            c.get("at"),
            bool(c["allowed"]),
            tuple(sorted(set(c.get("codes", [])))),
            tuple(sorted(set(c["flags"]))) if "flags" in c else None,
        )
        for i, c in enumerate(data.get("check", []), 1)
    )
    projections = tuple(
        Projection(
            p_.get("name", f"projection {i}"),
            int(to_value(p_["now"], "time")),
            p_.get("at"),
            tuple(_fact(r, policy, f"projection {i}") for r in p_.get("holds", [])),
            tuple(_fact(r, policy, f"projection {i}") for r in p_.get("absent", [])),
        )
        for i, p_ in enumerate(data.get("project", []), 1)
    )
    states = tuple(
        StateView(
            v.get("name", f"state {i}"),
            int(to_value(v["now"], "time")),
            v.get("at"),
            v.get("projection", "state"),
            v.get("audience"),
            v.get("cap", 4096),
            v.get("agent"),
            tuple(v.get("lines", [])),
            tuple(v.get("absent", [])),
            tuple(v.get("has", [])),
            _form(v.get("form", "text"), v.get("at"), f"state {i}"),
        )
        for i, v in enumerate(data.get("state", []), 1)
    )
    return Scenario(
        name, data.get("story", ""), policy, steps, checks, projections, str(path) if path else None, states
    )


def load_steps(store: Store, scenario: Scenario) -> dict[str, int]:
    """Append every step to `store`; return label -> revision after the step."""
    labels: dict[str, int] = {}
    layers = Layers.of(scenario.policy)
    for step in scenario.steps:
        layer = layers.require(step.layer) if step.layer else layers.default
        events = [Event(kind_of(rel), rel, args, step.source, step.author, layer=layer) for rel, args in step.facts]
        rev = store.append(events)
        if step.label:
            labels[step.label] = rev
    return labels


def _form(form: Any, at: Any, where: str) -> str:
    if form not in FORMS:
        raise GateError(f"{where}: `form` is one of {', '.join(FORMS)}, got `{form}`")
    if form != "text" and at is not None:
        raise GateError(f"{where}: form `{form}` renders the newest revision: drop `at`")
    return str(form)


FORMS = ("text", "bundle", "records")


def run_scenario(scenario: Scenario, store_url: str) -> Outcome:
    """Load the steps into the (fresh) store at `store_url`, run every check
    and projection, and compare with the expectations."""
    out = Outcome(scenario.name)
    with open_store(store_url, schema_of(scenario.policy)) as store:
        labels = load_steps(store, scenario)
        gate = Gate(scenario.policy, store)

        def revision(at: str | None, what: str) -> int | None:
            if at is None:
                return None
            if at not in labels:
                out.failures.append(f"{what}: no step labelled `{at}`")
                return None
            return labels[at]

        for check in scenario.checks:
            rev = revision(check.at, check.name)
            (decision,) = gate.log([(check.request, check.now)], revision=rev, source="scenario")
            out.decisions.append((check, decision))
            if decision.errors:
                out.failures.append(f"{check.name}: evaluation error {decision.errors[0]}")
            if decision.allowed != check.allowed:
                word = "allowed" if decision.allowed else "denied"
                out.failures.append(f"{check.name}: {word}, expected the opposite (codes {list(decision.codes)})")
            if decision.codes != check.codes:
                out.failures.append(f"{check.name}: reason codes {list(decision.codes)}, expected {list(check.codes)}")
            broken = broken_invariants(gate.overlay(check.request, check.now, rev))
            if broken:
                out.failures.append(f"{check.name}: invariants broken: {broken}")
            if check.flags is not None:
                got = tuple(sorted({f.code for f in decision.flags}))
                if got != check.flags:
                    out.failures.append(f"{check.name}: flags {list(got)}, expected {list(check.flags)}")
        for proj in scenario.projections:
            rev = revision(proj.at, proj.name)
            try:
                model = gate.model(store.revision() if rev is None else rev, proj.now)
            except OrdinanceError as exc:
                out.failures.append(f"{proj.name}: evaluation error {exc}")
                continue
            for name in broken_invariants(model):
                out.failures.append(f"{proj.name}: invariant broken: {name}")
            for rel, args in proj.holds:
                if args not in set(model.tuples(rel)):
                    out.failures.append(f"{proj.name}: expected {rel}{args} to hold")
            for rel, args in proj.absent:
                if args in set(model.tuples(rel)):
                    out.failures.append(f"{proj.name}: expected {rel}{args} to be absent")
        for view in scenario.states:
            out.failures.extend(_state_failures(view, revision(view.at, view.name), store, scenario.policy))
    return out


def _state_failures(view: StateView, rev: int | None, store: Store, policy: CheckedProgram) -> list[str]:
    """What a rendered projection gets wrong: missing lines, forbidden text,
    a cap overrun, or different bytes when rendered again from scratch."""

    def render() -> str:
        projector = Projector(policy, store)
        if view.form == "bundle":
            return rehydrate(
                projector, policy, view.now, view.audience, view.cap or DEFAULT_BOUND, agent=view.agent
            ).text
        if view.form == "records":
            return records(projector, view.projection, view.now, audience=view.audience, agent=view.agent)
        return projector.render(
            view.projection, view.now, audience=view.audience, cap=view.cap, agent=view.agent, revision=rev
        ).text

    try:
        text, again = render(), render()
    except OrdinanceError as exc:
        return [f"{view.name}: {exc}"]
    found = [
        f"{view.name}: expected the line {line!r} in\n{text}" for line in view.lines if line not in text.splitlines()
    ]
    found += [f"{view.name}: {word!r} must not appear in\n{text}" for word in view.absent if word in text]
    found += [f"{view.name}: expected {word!r} in\n{text}" for word in view.has if word not in text]
    if view.form != "records" and view.cap is not None and len(text.encode()) > view.cap:
        found.append(f"{view.name}: {len(text.encode())} bytes, over the cap of {view.cap}")
    if again != text:
        found.append(f"{view.name}: rendering again gave different bytes")
    return found
