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


def test_a_view_of_the_bundle_or_the_records_is_checked_too(tmp_path: Path) -> None:
    from dataclasses import replace

    from ordinance.diagnostics import GateError

    path = next(p for p in FIXTURES if p.stem.startswith("firewall"))
    scenario = load_scenario(path)
    leaky = tuple(replace(v, absent=("catalyst",)) for v in scenario.states if v.form != "text")
    assert {v.form for v in leaky} == {"bundle", "records"}
    outcome = run_scenario(replace(scenario, checks=(), states=leaky), str(tmp_path / "store.db"))
    assert len(outcome.failures) == 2 and all("'catalyst' must not appear" in f for f in outcome.failures)
    text = path.read_text()
    for wrong, message in (
        ('form = "bundle"', "`form` is one of text, bundle, records, got `pdf`"),
        ('form = "records"', "form `records` renders the newest revision: drop `at`"),
    ):
        bad = tmp_path / "bad.toml"
        bad.write_text(text.replace(wrong, 'form = "pdf"' if "pdf" in message else f'{wrong}\nat = "public"', 1))
        with pytest.raises(GateError) as err:
            load_scenario(bad)
        assert message in str(err.value)
