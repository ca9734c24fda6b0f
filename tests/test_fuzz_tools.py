"""Fuzzing reaches tool-call policies: request attributes are generated,
aimed at what the invariant reads; `holds` only once its body matched whole."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings

from ordinance.cli import cli
from ordinance.fuzz import Harness, search
from ordinance.fuzz import strategies
from ordinance.fuzz.history import Ask, Fact, History
from ordinance.fuzz.runner import outcomes

# the planted bug: a lease on a directory covers the files below it, but a
# lease on a file does not cover the file itself (`starts_with(cat(W, "/"), P)`
# misses P = W)
LEASED = """
.include "continuity"
.include "tools"
.decl covered(a: symbol)
covered(A) :- request_path(A, P), request(A, _, _, Ag, _), lease(W, Ag, _, X), X > $now, starts_with(cat(W, "/"), P).
permit(A) :- request_tool(A, "Write"), covered(A).
.invariant "the holder of a live lease on a file may write it" :-
  request_tool(A, "Write"), request_path(A, P), request(A, _, _, Ag, _), lease(P, Ag, _, X), X > $now, !permit(A).
"""
FIXED = LEASED.replace('starts_with(cat(W, "/"), P).', '(P = W ; starts_with(cat(W, "/"), P)).')


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_planted_lease_bug_is_found_and_shrunk(tmp_path: Path) -> None:
    harness = Harness.from_path(write(tmp_path, "leased.rules", LEASED))
    target = harness.target("the holder of a live lease on a file may write it")
    found = search(harness, target, examples=300, seed=0)
    assert found is not None
    steps = found.history.steps
    leases = [s for s in steps if isinstance(s, Fact) and s.relation == "lease"]
    asks = [s for s in steps if isinstance(s, Ask)]
    assert len(leases) == 1 and len(asks) == 1 and len(steps) <= 3  # shrunk to the lease and the write
    request = asks[0].request
    assert ("request_tool", ("Write",)) in request.attributes
    assert ("request_path", (leases[0].args[0],)) in request.attributes  # the leased file itself
    assert request.agent == leases[0].args[1]


def test_the_fixed_policy_holds_and_is_not_vacuous(tmp_path: Path) -> None:
    harness = Harness.from_path(write(tmp_path, "fixed.rules", FIXED))
    target = harness.target("the holder of a live lease on a file may write it")
    (outcome,) = outcomes(harness, examples=150, seed=0, targets=[target])
    assert outcome.counterexample is None and not outcome.vacuous


def test_requests_carry_the_declared_attributes_from_the_invariants_pools() -> None:
    harness = Harness.from_text(LEASED)
    target = harness.target("the holder of a live lease on a file may write it")
    pool, weights = strategies.aimed(harness.program, target.invariant.body)
    assert pool["request_path"][1] == pool["lease"][0]  # P joins them: one pool
    assert "Write" in pool["request_tool"][1]  # the invariant's own constant
    assert weights["lease"] > weights.get("grant", 1)  # the body reads lease; grant is read further off
    seen: list[History] = []

    @settings(max_examples=40, database=None, deadline=None)
    @given(strategies.histories(harness.program, harness.relevant(target), gated=True, body=target.invariant.body))
    def collect(history: History) -> None:
        seen.append(history)

    collect()
    asks = [s.request for h in seen for s in h.steps if isinstance(s, Ask)]
    assert asks and all(any(rel == "request_tool" for rel, _ in r.attributes) for r in asks)


UNJOINED = """
.include "continuity"
.include "tools"
.decl shifted(n: number, m: number)
shifted(N, M) :- request_word(_, N, _, _), M = N + 100.
.invariant "never both" :- request_word(A, N, _, _), shifted(N, M), lease(_, _, M, _), !permit(A).
"""


def test_an_invariant_whose_atoms_match_only_apart_is_vacuous_and_exits_non_zero(tmp_path: Path) -> None:
    path = write(tmp_path, "u.rules", UNJOINED)
    result = CliRunner().invoke(cli, ["fuzz", str(path), "-n", "40"])
    assert result.exit_code == 1, result.output
    assert 'VACUOUS "never both"' in result.output
    assert "`lease(_, _, M, _)` never matched together with the atoms before it" in result.output
    allowed = CliRunner().invoke(cli, ["fuzz", str(path), "-n", "40", "--allow-vacuous"])
    assert allowed.exit_code == 0, allowed.output
