"""Gate latency at the wall clock, against Cedar and OPA Rego, in one run.

    python benchmarks/bench_gate.py [--facts 100000] [--million] [--checks 2000]

For each size (100k facts, and 1M with --million), over one SQLite store:
- decide p50 / p99 (after one warm-up pass over the requests; the best of
  BATCHES runs, ours and Cedar's alike) with a frozen clock, with the clock
  advancing 1-5 s per decision, and with random jumps (+-1 day: decided on demand, gate/jump.py;
  the first jump is timed apart: the warm build rewrote the policy for it), as ratios
  to the targets (p50 <= 50 us, p99 <= 500 us with the clock advancing);
- the same requests on an authority policy (grants with epochs and revokes,
  owner stop and resume, leases) in ordinance, Cedar (`cedarpy`) and OPA Rego
  (`regopy`) over the same facts, each peer's decisions checked to agree with
  ours on a sample at random times; the ratio of our p50 to Cedar's;
- insert+recheck and purge+recheck (one fact, then a decision);
- peak RSS of this process (two warm models and the peers' data) and of a fresh
  `ordinance check` (one model; target: 1M facts in <= 2 GiB);
- a cold `ordinance check` in a fresh process (target <= 1 s at 100k): with
  nothing cached, from the policy cache and the gate snapshot, and after a new fact.
- `query` with a bound argument and `why` (engine.model_for: evaluated on
  demand) against a full evaluation over the same facts, as a ratio
  (`--demand-only` prints just these).
Each agent's work is a member of its scope (`member`, as the owner declares
it where scope follows the target; a checkout from before that has no
`member` and decides by the named scope alone, and so do the peers there),
so a request for another scope's work is refused everywhere.
Cedar has no clock and no aggregation: its entities carry each scope's and
work's newest epoch, stop and first resume, and `now` is in the context.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import re2  # noqa: F401  (first: regopy carries its own RE2, and with it loaded first google-re2's compile corrupts the heap)
import cedarpy
import regopy

from ordinance.engine import Given, answers, demanded, evaluate, parse_pattern, why
from ordinance.facts import Event, kind_of, open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.values import FOREVER, format_instant, parse_instant

NOW = parse_instant("2026-08-14T23:00:00Z")
DAY = 86400
TARGET_P50, TARGET_P99 = 50e-6, 500e-6
BATCHES = 3  # runs of each latency series (ours and Cedar's): the best one's p50 and p99 are shown
SCOPES = 100


def world(n: int, rnd: random.Random, members: bool = False) -> list[tuple[str, tuple[Any, ...]]]:
    """The facts; with `members` (a policy where scope follows the target),
    each agent's work is a member of its scope, as the owner declares."""
    rows: list[tuple[str, tuple[Any, ...]]] = [("single_valued", ("state",))]
    claims = n // 5  # 3 facts per claim: 60% of the facts
    for i in range(claims):
        c = f"c{i}"
        # even claims: observed, about their own subject; odd: the conflict join's load
        kind = "observed" if i % 2 == 0 else rnd.choice(["reported", "hearsay"])
        subject = f"s{i}" if i % 2 == 0 else f"s{i % (claims // 2 or 1)}"
        rows += [
            ("claim", (c, subject, "state", rnd.choice(["open", "merged"]))),
            ("claim_source", (c, "sweep", kind)),
            ("claim_valid", (c, NOW - rnd.randint(0, DAY), FOREVER)),
        ]
    agents = n // 20
    for i in range(agents):
        rows += [
            ("grant", (f"a{i}", f"scope{i % SCOPES}", 1 + (i % SCOPES) % 3)),
            ("lease", (f"w{i}", f"a{i}", 1 + (i % SCOPES) % 3, NOW + rnd.randint(600, 2 * DAY))),
            ("failure_domain", (f"a{i}", f"host{i % 7}")),
        ]
        if members:
            rows.append(("member", (f"w{i}", f"scope{i % SCOPES}")))
        if i % 97 == 5:
            rows.append(("revoke", (f"a{i}", f"scope{i % SCOPES}", 1 + (i % SCOPES) % 3)))
    for s in range(SCOPES):
        if s % 10 == 3:  # stopped an hour ago; some resumed at epoch 3
            rows.append(("stop", (f"scope{s}", NOW - 3600)))
        if s % 10 == 5:  # a stop half a day ahead: the clock crosses it
            rows.append(("stop", (f"scope{s}", NOW + DAY // 2)))
        if s % 20 == 3:
            rows.append(("resume", (f"scope{s}", 3)))
    actions = (n - len(rows)) // 2
    for i in range(actions):
        rows += [
            ("receipt", (f"x{i}", "outcome", f"a{i % agents}", NOW - 600)),
            ("action_scope", (f"x{i}", f"scope{i % SCOPES}")),
        ]
    return rows


def requests(n: int, count: int, rnd: random.Random) -> list[Request]:
    """Mostly well-formed requests; some stale, some on another agent's work."""
    agents, out = n // 20, []
    for i in range(count):
        a = rnd.randrange(agents)
        epoch = 1 + (a % SCOPES) % 3
        target = f"w{a}" if i % 5 else f"w{rnd.randrange(agents)}"
        if i % 7 == 0:
            epoch -= 1
        out.append(
            Request(
                f"r{i}",
                "write",
                target,
                f"a{a}",
                epoch,
                scope=f"scope{a % SCOPES}",
                uses=(f"c{2 * rnd.randrange(n // 10)}",),
            )
        )
    return out


# ---------------------------------------------------------------- peers


CEDAR_POLICY = """
permit(principal, action, resource) when {
  principal.grants.contains({scope: context.scope_name, epoch: context.epoch}) &&
  (!context.held || resource in context.scope)
};
forbid(principal, action, resource) when {
  principal.revoked.contains({scope: context.scope_name, epoch: context.epoch})
};
forbid(principal, action, resource) when {
  context.scope.latest > context.epoch || resource.latest > context.epoch
};
forbid(principal, action, resource) when {
  context.scope has stop_at && context.scope.stop_at <= context.now &&
  !(context.scope has first_resume && context.epoch >= context.scope.first_resume)
};
forbid(principal, action, resource) when {
  resource has holder && resource.holder != principal && context.now < resource.expires &&
  !resource.leased.contains({agent: principal, epoch: context.epoch})
};
"""

REGO_POLICY = """
package gate
import rego.v1

key := {"scope": input.scope, "epoch": input.epoch}
permit contains "grant" if {
  key in data.agents[input.agent].grants
  held
}
held if not data.held
held if data.member[input.target] == input.scope
revoked if key in data.agents[input.agent].revoked
deny contains "revoked" if revoked
deny contains "stale-epoch" if { some k in [input.scope, input.target]; data.latest[k] > input.epoch }
deny contains "owner-stop" if {
  some k in [input.scope, input.target]
  data.stops[k] <= input.now
  not resumed(k)
}
resumed(k) if input.epoch >= data.first_resume[k]
deny contains "lease-held" if {
  some l in data.leases[input.target]
  l.agent != input.agent
  input.now < l.expires
  not leased
}
leased if { some l in data.leases[input.target]; l.agent == input.agent; l.epoch == input.epoch }
"""

AUTHORITY = '.include "schema"\n.include "authority"\n'


def peer_data(rows: list[tuple[str, tuple[Any, ...]]]) -> dict[str, Any]:
    """The authority facts, with what Cedar cannot derive precomputed."""
    agents: dict[str, dict[str, list[Any]]] = {}
    latest: dict[str, int] = {}
    stops: dict[str, int] = {}
    resumes: dict[str, int] = {}
    leases: dict[str, list[dict[str, Any]]] = {}
    member: dict[str, str] = {}  # (one scope per work in this world)
    for rel, args in rows:
        if rel == "member":
            member[args[0]] = args[1]
        if rel in ("grant", "revoke"):
            ag, s, e = args
            agents.setdefault(ag, {"grants": [], "revoked": []})["grants" if rel == "grant" else "revoked"].append(
                {"scope": s, "epoch": e}
            )
            agents.setdefault(ag, {"grants": [], "revoked": []})
            if rel == "grant":
                latest[s] = max(latest.get(s, e), e)
        elif rel == "lease":
            w, ag, e, x = args
            leases.setdefault(w, []).append({"agent": ag, "epoch": e, "expires": x})
            latest[w] = max(latest.get(w, e), e)
        elif rel == "stop":
            stops[args[0]] = min(stops.get(args[0], args[1]), args[1])
        elif rel == "resume":
            resumes[args[0]] = min(resumes.get(args[0], args[1]), args[1])
    return {
        "agents": agents,
        "latest": latest,
        "stops": stops,
        "first_resume": resumes,
        "leases": leases,
        "member": member,
        "held": bool(member),  # scope follows the target: a grant permits only in a scope holding it
    }


def cedar_entities(data: dict[str, Any]) -> Any:
    out: list[dict[str, Any]] = []
    for ag, g in data["agents"].items():
        out.append({"uid": {"type": "Agent", "id": ag}, "attrs": g, "parents": []})
    keys = set(data["latest"]) | set(data["stops"]) | set(data["leases"])
    for k in keys:
        attrs: dict[str, Any] = {"latest": data["latest"].get(k, -1)}
        if k in data["stops"]:
            attrs["stop_at"] = data["stops"][k]
        if k in data["first_resume"]:
            attrs["first_resume"] = data["first_resume"][k]
        ls = data["leases"].get(k, [])
        if len(ls) == 1:  # one lease per work in this world; Cedar has no quantifiers over sets
            attrs["holder"] = {"__entity": {"type": "Agent", "id": ls[0]["agent"]}}
            attrs["expires"] = ls[0]["expires"]
        attrs["leased"] = [
            {"agent": {"__entity": {"type": "Agent", "id": x["agent"]}}, "epoch": x["epoch"]} for x in ls
        ]
        kind = "Work" if k in data["leases"] else "Scope"
        parents = [{"type": "Scope", "id": data["member"][k]}] if k in data["member"] else []
        out.append({"uid": {"type": kind, "id": k}, "attrs": attrs, "parents": parents})
    return cedarpy.Entities.from_json_str(json.dumps(out))


class Cedar:
    def __init__(self, data: dict[str, Any]):
        self.policies = cedarpy.PolicySet.from_str(CEDAR_POLICY)
        self.entities = cedar_entities(data)
        self.works = set(data["leases"])
        self.held = data["held"]

    def allowed(self, r: Request, now: int) -> bool:
        kind = "Work" if r.target in self.works else "Scope"
        req = {
            "principal": {"type": "Agent", "id": r.agent},
            "action": {"type": "Action", "id": r.kind},
            "resource": {"type": kind, "id": r.target},
            "context": {
                "scope_name": r.authority_scope,
                "epoch": r.epoch,
                "now": now,
                "scope": {"__entity": {"type": "Scope", "id": r.authority_scope}},
                "held": self.held,
            },
        }
        return cedarpy.is_authorized(req, self.policies, self.entities).allowed  # type: ignore[no-any-return]


class Rego:
    def __init__(self, data: dict[str, Any]):
        self.rego = regopy.Interpreter()
        self.rego.add_data(data)
        self.rego.add_module("gate", REGO_POLICY)
        self.bundle = self.rego.build("[data.gate.permit, data.gate.deny]")  # compiled once

    def allowed(self, r: Request, now: int) -> bool:
        self.rego.set_input(
            {"agent": r.agent, "scope": r.authority_scope, "target": r.target, "epoch": r.epoch, "now": now}
        )
        permit, deny = json.loads(str(self.rego.query_bundle(self.bundle)))["expressions"][0]
        return bool(permit) and not deny  # forbid wins, as in the gate


# ---------------------------------------------------------------- timing


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.99) - 1)]


def best(fn: Callable[[Request, int], Any], reqs: list[Request], runs: list[list[int]]) -> tuple[float, float]:
    """p50 and p99 of the run with the lowest p50 (one per list of `now`s):
    a shared machine slows whole stretches of a run down at times."""
    return min(timed(fn, reqs, nows) for nows in runs)


def timed(fn: Callable[[Request, int], Any], reqs: list[Request], nows: list[int]) -> tuple[float, float]:
    samples = []
    for r, now in zip(reqs, nows):
        t = time.perf_counter()
        fn(r, now)
        samples.append(time.perf_counter() - t)
    return percentiles(samples)


def show(label: str, p50: float, p99: float, note: str = "") -> None:
    print(
        f"  {label:34s} p50 {p50 * 1e6:9.1f} us ({p50 / TARGET_P50:7.2f}x target)  "
        f"p99 {p99 * 1e6:10.1f} us ({p99 / TARGET_P99:7.2f}x target){note}"
    )


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cold_check(db: str, policy: str, r: Request, now: int, env: dict[str, str]) -> tuple[float, float, float]:
    """Wall and CPU (user + system) seconds and peak RSS (MiB, 0 if GNU time
    is missing) of one `ordinance check` in a fresh process."""
    facts = [
        f'request("{r.id}", "{r.kind}", "{r.target}", "{r.agent}", {r.epoch}).',
        f'request_scope("{r.id}", "{r.authority_scope}").',
    ]
    ordinance = str(Path(sys.executable).parent / "ordinance")
    # (the children's ru_maxrss counts this process's pages the child started with)
    peak = Path(db + ".rss")
    timing = ["/usr/bin/time", "-f", "%M", "-o", str(peak)] if Path("/usr/bin/time").exists() else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(
        [*timing, ordinance, "check", "--db", db, "--policy", policy, "--now", format_instant(now), *facts],
        capture_output=True,
        text=True,
        env=env,
    )
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"cold check failed: {done.stderr.strip()}")
    rss = int(peak.read_text().split()[-1]) / 1024 if timing else 0.0
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), rss


def cold_checks(tmp: str, db: str, r: Request, now: int) -> None:
    """A fresh `ordinance check`: with nothing cached; then with the checked
    policy cached and the snapshot the first one wrote; then after one new
    fact (the snapshot is extended)."""
    policy_file = Path(tmp) / "policy.rules"
    policy_file.write_text('.include "continuity"\n')
    os.utime(policy_file, (time.time() - 60,) * 2)  # (a policy written this second is not cached yet)
    # caches in a directory of this run; bytecode compiled, as an installed package has it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["ORDINANCE_CACHE"] = str(Path(tmp) / "cache")
    env["ORDINANCE_DEADLINE"] = "0"  # (a loaded shared machine must not turn a slow build into an error)
    subprocess.run([str(Path(sys.executable).parent / "ordinance"), "--help"], capture_output=True, env=env)
    for label, prepare in (
        ("nothing cached", None),
        ("policy cache + snapshot", None),
        ("snapshot + 1 new fact", lambda s: s.assert_facts([("grant", ("late", "scope1", 1))])),
    ):
        if prepare is not None:
            with open_store(db, schema_of(compile_text('.include "continuity"\n'))) as s:
                prepare(s)
        wall, cpu, rss = cold_check(db, str(policy_file), r, now + 1, env)
        print(
            f"  cold `ordinance check`, {label:24s} {wall:5.2f} s wall, {cpu:5.2f} s cpu "
            f"({wall / 1.0:.2f}x the 1 s target), peak RSS {rss:,.0f} MiB (one model; 1M target <= 2048)"
        )


def demand_figures(n: int, rnd: random.Random, samples: int = 20) -> None:
    """A bound `query` and a `why` about one subject: on demand against a full evaluation."""
    print(f"\n== {n:,} facts: query and why on demand")
    policy = compile_text('.include "continuity"\n')
    facts: dict[str, set[tuple[Any, ...]]] = {}
    for r, a in world(n, rnd):
        facts.setdefault(r, set()).add(a)
    t0 = time.perf_counter()
    full = evaluate(policy, facts, now=NOW)
    t_full = time.perf_counter() - t0
    t0 = time.perf_counter()
    given = Given.load(policy, facts, NOW)
    t_given = time.perf_counter() - t0
    print(f"  full evaluation {t_full:.2f} s; given relations loaded once per revision in {t_given:.2f} s")
    claims = n // 5
    subjects = [2 * rnd.randrange(claims // 2) for _ in range(samples)]
    asks = {
        'query status("s", A, S)': lambda i: answers(
            demanded(given, "status", (f"s{i}", None, None), proofs=False),
            parse_pattern(f'status("s{i}", A, S)', policy),
        ),
        'why current("c")': lambda i: why(demanded(given, "current", (f"c{i}",)), "current", (f"c{i}",)),
        'why status("s", "state", "known")': lambda i: why(
            demanded(given, "status", (f"s{i}", "state", "known")), "status", (f"s{i}", "state", "known")
        ),
    }
    for label, ask in asks.items():
        t0 = time.perf_counter()
        first = ask(subjects[0])  # rewrites and compiles the demanded program once
        t_first = time.perf_counter() - t0
        took = []
        for i in subjects:
            t0 = time.perf_counter()
            ask(i)
            took.append(time.perf_counter() - t0)
        p50, p99 = percentiles(took)
        assert first is not None and first != []
        print(
            f"  {label:34s} p50 {p50 * 1e3:8.2f} ms  p99 {p99 * 1e3:8.2f} ms  first {t_first:6.2f} s  "
            f"({t_full / p50:,.0f}x faster than the full evaluation)"
        )
    # the demanded answers agree with the full evaluation on the sample
    for i in subjects:
        asked = parse_pattern(f'status("s{i}", A, S)', policy)
        assert answers(demanded(given, "status", asked.values, proofs=False), asked) == answers(full, asked)
        assert why(demanded(given, "current", (f"c{i}",)), "current", (f"c{i}",)) == why(full, "current", (f"c{i}",))
    print(f"  agreement with the full evaluation on {len(subjects)} subjects: answers and proofs equal")


def run(n: int, checks: int, rnd: random.Random) -> None:
    print(f"\n== {n:,} facts")
    policy = compile_text('.include "continuity"\n')
    authority = compile_text(AUTHORITY)
    rows = world(n, rnd, members="member" in policy.relations)
    reqs = requests(n, checks, rnd)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        store = open_store(db, schema_of(policy))
        store.append([Event(kind_of(r), r, a, "bench", "bench") for r, a in rows])
        seqs = store.revision()
        # as `ordinance serve` runs it: the warm model frozen out of the cyclic GC's way
        gate, auth = Gate(policy, store, settle=True), Gate(authority, store, settle=True)
        t0 = time.perf_counter()
        gate.decide(reqs[0], NOW)
        print(f"  facts {len(rows):,}; warm model built in {time.perf_counter() - t0:.2f} s")
        auth.decide(reqs[0], NOW)

        frozen = [NOW] * checks
        runs, t = [], NOW  # BATCHES runs of the clock advancing, each from where the last one ended
        for _ in range(BATCHES):
            runs.append([t := t + rnd.randint(1, 5) for _ in range(checks)])
        advancing = runs[-1]
        big = n >= 1_000_000  # fewer of the slow samples (jumps, Rego) there
        jumps = [NOW + rnd.randint(-DAY, DAY) for _ in range(min(checks // 10, 10 if big else 100))]
        timed(gate.decide, reqs, frozen)  # warm-up: steady state, as a long-running gate decides
        f50, f99 = best(gate.decide, reqs, [frozen] * BATCHES)
        a50, a99 = best(gate.decide, reqs, runs)
        t0 = time.perf_counter()
        gate.decide(reqs[-1], NOW - DAY)  # the first jump (the warm build rewrote the policy for it)
        first_jump = time.perf_counter() - t0
        j50, j99 = timed(gate.decide, reqs[: len(jumps)], jumps)
        show("decide, frozen clock", f50, f99)
        show("decide, clock advancing 1-5 s", a50, a99, f"  ({a50 / f50:.2f}x frozen)")
        show("decide, random jumps +-1 day", j50, j99, f"  ({j50 / f50:.2f}x frozen; first jump {first_jump:.2f} s)")

        data = peer_data(rows)
        cedar, rego = Cedar(data), Rego(data)
        # the authority policy: ordinance vs Cedar vs Rego, same requests, same clock
        o50, o99 = best(auth.decide, reqs, runs)
        c50, c99 = best(cedar.allowed, reqs, runs)
        few = 50 if big else max(50, checks // 4)
        r50, r99 = timed(rego.allowed, reqs[:few], advancing[:few])
        print("  authority policy, clock advancing:")
        show("ordinance", o50, o99, f"  ({o50 / c50:.2f}x Cedar p50; target <= 0.5x)")
        show("Cedar (cedarpy)", c50, c99)
        show(f"OPA Rego (regopy, {few} checks)", r50, r99, f"  ({o50 / r50:.3f}x ours/Rego p50)")
        sample = [(r, NOW + rnd.randint(-DAY, DAY)) for r in reqs[:200]]
        ours = [auth.decide(r, now).allowed for r, now in sample]
        theirs_c = [cedar.allowed(r, now) for r, now in sample]
        theirs_r = [rego.allowed(r, now) for r, now in sample]
        agree_c = sum(a == b for a, b in zip(ours, theirs_c))
        agree_r = sum(a == b for a, b in zip(ours, theirs_r))
        print(
            f"  agreement on {len(sample)} decisions at random times: Cedar {agree_c}/{len(sample)}, "
            f"Rego {agree_r}/{len(sample)} ({sum(ours)} allowed)"
        )
        if agree_c != len(sample) or agree_r != len(sample):
            raise SystemExit("peers disagree with ordinance: the policies are not equivalent")

        # one new fact, then a decision; one purged fact, then a decision
        ins, pur = [], []
        for i in range(20):
            store.assert_facts([("grant", (f"new{i}", "scope0", 1))])
            t0 = time.perf_counter()
            gate.decide(reqs[i], advancing[-1])
            ins.append(time.perf_counter() - t0)
        for i in range(20):
            store.purge([seqs - 3 * i], "retention")
            t0 = time.perf_counter()
            gate.decide(reqs[i], advancing[-1])
            pur.append(time.perf_counter() - t0)
        i50, i99 = percentiles(ins)
        p50, p99 = percentiles(pur)
        print(f"  insert+recheck p50 {i50 * 1e3:8.2f} ms  p99 {i99 * 1e3:8.2f} ms")
        print(f"  purge+recheck  p50 {p50 * 1e3:8.2f} ms  p99 {p99 * 1e3:8.2f} ms")
        print(f"  peak RSS {rss_mib():,.0f} MiB (target at 1M facts: <= 2048 MiB)")
        store.close()
        cold_checks(tmp, db, reqs[1], advancing[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--million", action="store_true", help="also run at 1M facts (minutes; shared machines beware)")
    ap.add_argument("--checks", type=int, default=2000)
    ap.add_argument("--demand-only", action="store_true", help="only the query and why figures")
    args = ap.parse_args()
    rnd = random.Random(7)
    for n in [args.facts] + ([1_000_000] if args.million else []):
        if not args.demand_only:
            run(n, args.checks, rnd)
        demand_figures(n, rnd)


if __name__ == "__main__":
    main()
