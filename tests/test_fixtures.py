"""Every seed scenario (ordinance/testing/scenarios/) replays against a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from ordinance.facts import open_store
from ordinance.explain import decision_json
from ordinance.gate import Gate
from ordinance.testing.scenario import load_scenario, run_scenario

FIXTURES = sorted((Path(__file__).parent.parent / "ordinance" / "testing" / "scenarios").glob("*.toml"))


def test_the_required_stories_are_present() -> None:
    names = {p.stem for p in FIXTURES}
    for prefix in ("arc_a", "arc_b", "arc_c", "arc_d"):
        assert any(n.startswith(prefix) for n in names), prefix
    assert sum(n.startswith("incident_") for n in names) >= 4


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture(path: Path, tmp_path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.checks or scenario.projections
    outcome = run_scenario(scenario, str(tmp_path / "store.db"))
    assert outcome.ok, "\n".join(outcome.failures)
    # every decision was logged, and replays at its revision to the same
    # decision and the same proofs, in a fresh gate over the reopened store
    with open_store(str(tmp_path / "store.db")) as store:
        logged = {e.seq: e for e in store.decisions()}
        gate = Gate(scenario.policy, store)
        for check, decision in outcome.decisions:
            assert decision.seq in logged
            again = gate.replay(logged[decision.seq])
            assert again.allowed == check.allowed
            assert decision_json(again) == {k: v for k, v in decision_json(decision).items() if k != "seq"}


def test_a_wrong_expectation_is_reported(tmp_path: Path) -> None:
    path = next(p for p in FIXTURES if p.stem.startswith("arc_c"))
    scenario = load_scenario(path)
    flipped = scenario.checks[0]
    from dataclasses import replace

    broken = replace(scenario, checks=(replace(flipped, allowed=not flipped.allowed, codes=("bogus",)),))
    outcome = run_scenario(broken, str(tmp_path / "store.db"))
    assert not outcome.ok
    assert any("bogus" in f for f in outcome.failures)
