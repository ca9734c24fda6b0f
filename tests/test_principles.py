"""The design's principles (docs/design.md) as properties over random event sequences.

Each property draws small random worlds (claims, grants, leases, stops,
receipts, observations) and checks one principle against the continuity
policy, through the real gate (an in-memory store for speed; arrival order
is checked against two real SQLite stores).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ordinance.engine import evaluate
from ordinance.facts import Event, open_store, schema_of
from ordinance.explain import decision_json
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.facts import kind_of
from ordinance.values import FOREVER, parse_instant

POLICY = compile_text('.include "continuity"\n')
BASE = parse_instant("2026-08-14T12:00:00Z")
HOUR = 3600
DAY = 24 * HOUR
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Facts = dict[str, set[tuple[Any, ...]]]


class MemStore:
    """Just enough of a Store for the gate: one revision, fixed facts."""

    def __init__(self, facts: Facts):
        self._facts = facts

    def revision(self) -> int:
        return 1

    def events(self, since: int = 0, until: int | None = None, kinds: Any = None) -> list[Event]:
        return []

    def facts(self, revision: int | None = None) -> Facts:
        return self._facts

    def log_decision(self, payload: Any, **kw: Any) -> int:
        return 2


def facts_of(rows: list[tuple[str, tuple[Any, ...]]]) -> Facts:
    out: Facts = {}
    for rel, args in rows:
        out.setdefault(rel, set()).add(args)
    return out


def gate(rows: list[tuple[str, tuple[Any, ...]]]) -> Gate:
    return Gate(POLICY, MemStore(facts_of(rows)))  # type: ignore[arg-type]


# ---------------------------------------------------------------- strategies

times = st.integers(-6, 6).map(lambda h: BASE + h * HOUR)
wide_times = st.integers(-48, 6).map(lambda h: BASE + h * HOUR)
agents = st.sampled_from(["alice", "bob", "carol"])
scopes = st.sampled_from(["deploy", "hub"])
works = st.sampled_from(["job", "deploy"])
epochs = st.integers(1, 4)
claim_ids = st.sampled_from(["c1", "c2", "c3", "c4", "c5"])
values = st.sampled_from(["open", "merged", "closed"])
kinds = st.sampled_from(["observed", "reported", "hearsay", "inferred", "speculation"])


@st.composite
def claim_world(draw: st.DrawFn) -> list[tuple[str, tuple[Any, ...]]]:
    rows: list[tuple[str, tuple[Any, ...]]] = [("single_valued", ("state",))]
    for c in draw(st.lists(claim_ids, min_size=1, max_size=5, unique=True)):
        start = draw(times)
        end = draw(st.one_of(st.just(FOREVER), times.map(lambda t: t + 3 * HOUR)))
        rows += [
            ("claim", (c, draw(st.sampled_from(["pr", "job"])), "state", draw(values))),
            ("claim_source", (c, "src", draw(kinds))),
            ("claim_valid", (c, start, max(end, start + 1))),
        ]
    for _ in range(draw(st.integers(0, 3))):
        new, old = draw(claim_ids), draw(claim_ids)
        if new != old:
            rel = draw(st.sampled_from(["supersedes", "correction"]))
            rows.append((rel, (new, old)))
    return rows


@st.composite
def authority_world(draw: st.DrawFn) -> list[tuple[str, tuple[Any, ...]]]:
    rows: list[tuple[str, tuple[Any, ...]]] = []
    for _ in range(draw(st.integers(0, 5))):
        rows.append(("grant", (draw(agents), draw(scopes), draw(epochs))))
    for _ in range(draw(st.integers(0, 3))):
        rows.append(("lease", (draw(works), draw(agents), draw(epochs), draw(times))))
    for _ in range(draw(st.integers(0, 2))):
        rows.append(("revoke", (draw(agents), draw(scopes), draw(epochs))))
    return rows


requests = st.builds(
    lambda i, ag, w, e, s: Request(f"r{i}", "write", w, ag, e, scope=s),
    st.integers(0, 99),
    agents,
    works,
    epochs,
    scopes,
)


# ---------------------------------------------------------------- principles


@SETTINGS
@given(claim_world(), times, st.sampled_from(["pr", "job", "nobody"]), values)
def test_unknown_never_becomes_false(rows: list, now: int, subject: str, value: str) -> None:
    request = Request("q", "report", subject, "alice", 1, scope="hub", needs=((subject, "state", value),))
    g = gate(rows + [("grant", ("alice", "hub", 1))])
    model = g.model(1, now)
    status = {s for (s_, at, s) in model.tuples("status") if (s_, at) == (subject, "state")}
    decision = g.decide(request, now)
    if status <= {"unknown"}:  # no current evidence (or nothing said at all)
        assert not any(v for (s_, at, v) in model.tuples("known_value") if (s_, at) == (subject, "state"))
        assert "contradicted" not in decision.codes
        assert "unknown-evidence" in decision.codes
        assert not decision.allowed


@SETTINGS
@given(claim_world(), times)
def test_superseded_is_never_current(rows: list, now: int) -> None:
    model = gate(rows).model(1, now)
    current = set(model.tuples("current"))
    assert not current & set(model.tuples("superseded"))
    assert not current & set(model.tuples("corrected"))
    # supersession closes the window where the successor's starts
    valid = {c: (f, t) for c, f, t in facts_of(rows).get("claim_valid", set())}
    for new, old in facts_of(rows).get("supersedes", set()):
        if new in valid and valid[new][0] <= now:
            assert (old,) not in current
    # conflict only between current claims, and a hearsay never outranks observed
    for c1, c2 in model.tuples("conflict"):
        assert (c1,) in current and (c2,) in current


@SETTINGS
@given(claim_world(), times, times)
def test_closing_a_window_never_reopens_another(rows: list, now: int, later: int) -> None:
    before = set(gate(rows).model(1, now).tuples("current"))
    extra = [("supersedes", ("c5", "c1")), ("correction", ("c4", "c2"))]
    after = set(gate(rows + extra).model(1, now).tuples("current"))
    assert after <= before


@SETTINGS
@given(authority_world(), st.lists(requests, min_size=1, max_size=4), times)
def test_no_stale_epoch_is_ever_permitted(rows: list, reqs: list[Request], now: int) -> None:
    g = gate(rows)
    facts = facts_of(rows)
    # also ask under every granted epoch, on the scope and on each work item
    reqs = reqs + [
        Request(f"g{i}", "write", w, ag, e, scope=s)
        for i, (ag, s, e) in enumerate(sorted(facts.get("grant", set())))
        for w in ("job", s)
    ]
    for r in reqs:
        newest = [e for (w, _, e, _) in facts.get("lease", set()) if w in (r.target, r.authority_scope)]
        newest += [e for (_, s, e) in facts.get("grant", set()) if s in (r.target, r.authority_scope)]
        d = g.decide(r, now)
        if newest and r.epoch < max(newest):
            assert not d.allowed and "stale-epoch" in d.codes
        if (r.agent, r.authority_scope, r.epoch) in facts.get("revoke", set()):
            assert {"revoked", "no-grant"} <= set(d.codes)
        if d.allowed:  # a permit needs a current grant for exactly this epoch
            assert (r.agent, r.authority_scope, r.epoch) in facts.get("grant", set())
            assert (r.agent, r.authority_scope, r.epoch) not in facts.get("revoke", set())


@SETTINGS
@given(
    authority_world(),
    st.lists(requests, min_size=1, max_size=4),
    times,
    times,
    st.lists(st.tuples(st.sampled_from(["grant", "lease"]), agents, epochs), max_size=3),
)
def test_owner_stop_is_absorbing(rows: list, reqs: list[Request], stop_at: int, now: int, later: list) -> None:
    stopped = rows + [("stop", ("deploy", stop_at))]
    # whatever is added afterwards (new grants, new leases), short of a resume
    more = stopped + [
        ("grant", (ag, "deploy", e)) if kind == "grant" else ("lease", ("job", ag, e, now + DAY))
        for kind, ag, e in later
    ]
    for world in (stopped, more):
        g = gate(world)
        for r in reqs:
            for t in (now, now + HOUR, now + DAY):
                d = g.decide(r, t)
                if r.authority_scope == "deploy" or r.target == "deploy":
                    if stop_at <= t:
                        assert not d.allowed and "owner-stop" in d.codes


@st.composite
def receipt_world(draw: st.DrawFn) -> list[tuple[str, tuple[Any, ...]]]:
    rows: list[tuple[str, tuple[Any, ...]]] = []
    for who in ("alice", "bob", "ci", "peer"):
        rows.append(("failure_domain", (who, draw(st.sampled_from(["host-a", "github"])))))
    for x in ("x1", "x2"):
        rows.append(("action_scope", (x, draw(scopes))))
        for _ in range(draw(st.integers(0, 3))):
            rows.append(("receipt", (x, draw(st.sampled_from(["intent", "outcome"])), draw(agents), draw(wide_times))))
        for _ in range(draw(st.integers(0, 4))):
            rows.append(
                (
                    "observation",
                    (
                        x,
                        draw(st.sampled_from(["alice", "bob", "ci", "peer"])),
                        draw(wide_times),
                        draw(scopes),
                        draw(st.sampled_from(["ok", "mismatch"])),
                    ),
                )
            )
    if draw(st.booleans()):
        rows.append(("fresh_for", (draw(scopes), draw(st.sampled_from([HOUR, 4 * HOUR])))))
    return rows


def fresh_independent_results(rows: list, x: str, now: int) -> set[str]:
    """The oracle, in plain Python: results of fresh same-scope readbacks from
    another failure domain than the outcome's reporter, after that outcome."""
    f = facts_of(rows)
    domain: dict[str, str] = dict(f.get("failure_domain", set()))  # type: ignore[arg-type]
    scopes_of: dict[str, str] = dict(f.get("action_scope", set()))  # type: ignore[arg-type]
    scope = scopes_of[x]
    ages: dict[str, int] = dict(f.get("fresh_for", set()))  # type: ignore[arg-type]
    age = ages.get(scope, DAY)
    found: set[str] = set()
    for a, kind, by, done_at in f.get("receipt", set()):
        if a != x or kind != "outcome" or done_at > now:
            continue
        for a2, obs, at, s, result in f.get("observation", set()):
            if (
                (a2, s) == (x, scope)
                and done_at <= at <= now
                and now - at <= age
                and by in domain
                and obs in domain
                and domain[by] != domain[obs]
            ):
                found.add(result)
    return found


@SETTINGS
@given(receipt_world(), times)
def test_verified_never_without_fresh_independent_evidence(rows: list, now: int) -> None:
    model = gate(rows).model(1, now)
    for x in ("x1", "x2"):
        assert ((x,) in model.tuples("verified")) == (fresh_independent_results(rows, x, now) == {"ok"})
        if (x,) in model.tuples("verified"):
            assert (x,) in model.tuples("done")
        # an irreversible request on it passes only if verified
        d = gate(rows + [("grant", ("alice", "hub", 1)), ("member", ("t", "hub"))]).decide(
            Request("q", "ship", "t", "alice", 1, scope="hub", requires=(x,), irreversible=True), now
        )
        assert d.allowed == ((x,) in model.tuples("verified"))


@settings(max_examples=25, deadline=None)
@given(claim_world(), authority_world(), st.randoms(use_true_random=False), requests, times)
def test_decisions_are_deterministic_and_independent_of_arrival_order(
    claims: list, authority: list, rnd: Any, request: Request, now: int
) -> None:
    rows = claims + authority + [("grant", (request.agent, request.authority_scope, request.epoch))]
    request = Request(
        request.id,
        request.kind,
        request.target,
        request.agent,
        request.epoch,
        scope=request.scope,
        uses=("c1", "c2"),
        needs=(("pr", "state", "merged"),),
    )
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for n, order in enumerate((rows, shuffled)):
            with open_store(str(Path(tmp) / f"s{n}.db"), schema_of(POLICY)) as store:
                # the same facts, arriving in a different order and batching
                cut = len(order) // 2
                for part in (order[:cut], order[cut:]):
                    if part:
                        store.append([Event(kind_of(rel), rel, args) for rel, args in part])
                g = Gate(POLICY, store)
                first = g.decide(request, now)
                # the same store: the same decision and the same proofs
                assert decision_json(Gate(POLICY, store).decide(request, now)) == decision_json(first)
                results.append(first)
    # another arrival order: the same decision and reasons, proved by the
    # same rules (ties between equally short proofs may pick different facts)
    a, b = results
    assert a.to_json() == b.to_json()
    for ra, rb in zip(decision_json(a)["reasons"], decision_json(b)["reasons"]):
        assert ra["proof"].get("rule") == rb["proof"].get("rule")


def test_a_model_is_a_function_of_its_inputs() -> None:
    rows = [("grant", ("alice", "hub", 1)), ("stop", ("hub", BASE))]
    ma, mb = evaluate(POLICY, facts_of(rows), now=BASE), evaluate(POLICY, facts_of(list(reversed(rows))), now=BASE)
    a = {rel: set(ma.tuples(rel)) for rel in POLICY.relations}
    b = {rel: set(mb.tuples(rel)) for rel in POLICY.relations}
    assert a == b and ("hub",) in {(s,) for (s, _) in a.get("stop", set())}
