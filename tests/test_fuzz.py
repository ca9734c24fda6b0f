"""ordinance fuzz: generated histories, shrunk counterexamples, fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from ordinance.cli import cli
from ordinance.facts import Event, schema_of, validate
from ordinance.fuzz import Ask, Fact, Harness, History, load_history, report, run_history, save, search
from ordinance.fuzz import strategies
from ordinance.gate import Request
from ordinance.testing.scenario import load_scenario, run_scenario
from ordinance.values import FOREVER

# `current` forgets to exclude superseded claims: the planted bug
BUGGY = """\
.decl claim_valid(c: symbol, from: time, to: time)
.decl supersedes(new: symbol, old: symbol)
.decl correction(new: symbol, old: symbol)
superseded(C) :- supersedes(_, C).
current(C) :- claim_valid(C, From, To), From <= $now, $now < To.
.invariant "superseded is never current" :- current(C), superseded(C).
"""
CORRECT = BUGGY.replace("$now < To.", "$now < To, !superseded(C).")

# through the gate: hearsay grants permission (principle 5 broken)
HEARSAY_PERMITS = """\
.include "continuity"
permit(A) :- request(A, _, _, _, _), request_uses(A, C), claim_source(C, _, "hearsay").
"""

TYPED = """\
.decl reading(sensor: symbol, at: time, level: number, window: duration)
.decl placed(sensor: symbol, room: symbol)
.hint reading("s1" | "s2", _, 5 | 7, _)
.hint placed(_, "attic")
alarm(S) :- reading(S, _, L, _), L > 6, placed(S, "attic").
.invariant "no alarm" :- alarm(S).
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_planted_bug_is_found_and_shrunk(tmp_path: Path) -> None:
    harness = Harness.from_path(write(tmp_path, "buggy.rules", BUGGY))
    target = harness.target("superseded is never current")
    found = search(harness, target, examples=100, seed=0)
    assert found is not None
    steps = found.history.steps
    assert 1 <= len(steps) <= 4
    assert any(isinstance(s, Fact) and s.kind == "supersede" for s in steps)
    assert any(isinstance(s, Fact) and s.relation == "claim_valid" for s in steps)
    # the binding is a claim that is both current and superseded, with a proof per body fact
    claim = found.breach.binding[0]
    assert found.breach.target.variables == ("C",)
    assert found.breach.proof is not None
    children: Any = found.breach.proof.children
    proved = [(c.relation, c.tuple) for c in children]
    assert proved == [("current", (claim,)), ("superseded", (claim,))]
    # replaying the shrunk history breaks the invariant again, with the same binding
    again, _ = run_history(harness, found.history)
    assert again is not None and again.binding == (claim,)
    text = report(harness, found.history, found.breach)
    assert 'invariant "superseded is never current" is broken' in text
    assert "supersede  supersedes(" in text
    assert f'binding: C = "{claim}"' in text
    assert "fact  (event" in text


def test_a_correct_policy_passes(tmp_path: Path) -> None:
    harness = Harness.from_path(write(tmp_path, "correct.rules", CORRECT))
    assert search(harness, harness.targets[0], examples=100, seed=0) is None


def test_cli_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    buggy = write(tmp_path, "buggy.rules", BUGGY)
    result = runner.invoke(cli, ["fuzz", str(buggy), "--examples", "100"])
    assert result.exit_code == 1, result.output
    assert 'BROKEN  "superseded is never current"' in result.output
    assert "binding: C =" in result.output and "0 held, 1 broken" in result.output
    result = runner.invoke(cli, ["fuzz", str(write(tmp_path, "correct.rules", CORRECT)), "-n", "50"])
    assert result.exit_code == 0, result.output
    assert "1 held, 0 broken" in result.output
    result = runner.invoke(cli, ["fuzz", str(write(tmp_path, "bad.rules", "p(X) :- !q(X).\n"))])
    assert result.exit_code == 2
    result = runner.invoke(cli, ["fuzz", str(buggy), "--invariant", "no such thing"])
    assert result.exit_code == 2


def test_save_and_replay_reproduce_the_failure(tmp_path: Path) -> None:
    buggy = write(tmp_path, "buggy.rules", BUGGY)
    fixture = tmp_path / "fixtures" / "broken.toml"
    fixture.parent.mkdir()
    runner = CliRunner()
    result = runner.invoke(cli, ["fuzz", str(buggy), "-n", "100", "--save", str(fixture)])
    assert result.exit_code == 1 and fixture.exists()
    assert 'include = ["../buggy.rules"]' in fixture.read_text()
    replayed = runner.invoke(cli, ["fuzz", str(buggy), "--replay", str(fixture)])
    assert replayed.exit_code == 1, replayed.output
    binding = [line for line in result.output.splitlines() if "binding:" in line]
    assert binding and binding[0].strip() in replayed.output
    # the fixed policy replays the same history without a breach
    fixed = write(tmp_path, "buggy.rules", CORRECT)
    assert runner.invoke(cli, ["fuzz", str(fixed), "--replay", str(fixture)]).exit_code == 0


def test_a_gated_bug_round_trips_through_a_scenario_fixture(tmp_path: Path) -> None:
    policy = write(tmp_path, "policy.rules", HEARSAY_PERMITS)
    harness = Harness.from_path(policy)
    found = search(harness, harness.target("permits only from grants"), examples=200, seed=0)
    assert found is not None
    asks = [s for s in found.history.steps if isinstance(s, Ask)]
    assert len(asks) == 1 and asks[0].request.uses  # the request relies on a hearsay claim
    assert found.breach.request == asks[0]
    hearsay = [s for s in found.history.steps if isinstance(s, Fact) and s.relation == "claim_source"]
    assert [(s.args[0], s.args[2]) for s in hearsay] == [(asks[0].request.uses[0], "hearsay")]
    fixture = tmp_path / "hearsay.toml"
    save(harness, found.history, found.breach, fixture, str(policy), seed=0)
    assert load_history(harness, fixture) == found.history
    # the gate helper's scenario runner replays it too, and sees the invariant broken
    outcome = run_scenario(load_scenario(fixture), str(tmp_path / "store.db"))
    assert any("permits only from grants" in f for f in outcome.failures), outcome.failures
    # (the gate still denies: continuity forbids acting on hearsay, and forbid wins)
    assert [(d.allowed, "hearsay-authority" in d.codes) for _, d in outcome.decisions] == [(False, True)]


def _typed_harness() -> Harness:
    return Harness.from_text(TYPED, "typed.rules")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(strategies.histories(_typed_harness().program, gated=False))
def test_generated_values_respect_types_and_hints(history: History) -> None:
    program = _typed_harness().program
    schema = schema_of(program)
    for step in history.steps:
        if not isinstance(step, Fact):
            continue
        assert validate([Event(step.kind, step.relation, step.args)], schema) == []
        if step.relation == "reading":
            sensor, at, level, window = step.args
            assert sensor in ("s1", "s2") and level in (5, 7)
            assert at in strategies.TIMES or at == FOREVER
            assert window in strategies.DURATIONS
        else:
            assert step.relation == "placed" and step.args[1] == "attic"


def test_pools_come_from_hints_then_builtins_then_names() -> None:
    pools = strategies.pools(Harness.from_text('.include "continuity"\n').program)
    assert pools["claim_source"][2] == ("observed", "reported", "hearsay", "inferred", "speculation")
    assert pools["grant"] == (strategies.AGENTS, ("hub", "deploy"), (1, 2, 3))
    assert pools["lease"][3][-1] == FOREVER  # `expires` may be forever
    typed = strategies.pools(_typed_harness().program)
    assert typed["reading"][0] == ("s1", "s2") and typed["placed"][1] == ("attic",)


def test_only_relevant_relations_are_generated() -> None:
    harness = Harness.from_text('.include "continuity"\n')
    relevant = harness.relevant(harness.target("superseded is never current"))
    inputs = set(strategies.input_relations(harness.program, gated=True)) & relevant
    assert inputs == {"claim_valid", "supersedes", "correction"}
    gated = harness.relevant(harness.target("no stale lease epoch is ever permitted"))
    assert {"grant", "lease", "request"} <= gated and "claim" not in gated


def test_requests_borrow_from_earlier_facts() -> None:
    harness = Harness.from_text('.include "continuity"\n')
    draft: Any = strategies._Draft(Request("a1", "write", "job", "carol", 3), back=1)
    grant = Fact("grant", ("alice", "hub", 1))
    pool = strategies.pools(harness.program)
    steps = strategies._resolve(harness.program, pool, [grant, draft], {"request", "request_scope"})
    ask = steps[1]
    assert isinstance(ask, Ask)
    assert (ask.request.agent, ask.request.scope, ask.request.epoch) == ("alice", "hub", 1)


# ---------------------------------------------------------------- what a run exercised

FORCE_PUSH = """\
.include "continuity"
.invariant "no force push is ever permitted" :- request(A, "git-push-force", _, _, _), permit(A).
"""

GHOST = """\
.include "continuity"
.decl ghost(a: symbol)
ghost(A) :- grant(A, _, _), A != A.
.invariant "ghosts never act" :- ghost(Ag), request(_, _, _, Ag, _).
"""


def test_request_kinds_come_from_the_policy_without_a_hint(tmp_path: Path) -> None:
    assert "git-push-force" in strategies.pools(Harness.from_text(FORCE_PUSH).program)["request"][1]
    result = CliRunner().invoke(cli, ["fuzz", str(write(tmp_path, "p.rules", FORCE_PUSH)), "-n", "200"])
    assert result.exit_code == 1, result.output
    assert 'BROKEN  "no force push is ever permitted"' in result.output
    assert '"git-push-force"' in result.output


def test_an_invariant_never_exercised_is_vacuous_not_holding(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["fuzz", str(write(tmp_path, "g.rules", GHOST)), "-n", "30"])
    assert result.exit_code == 1, result.output  # a vacuous run fails, unless --allow-vacuous
    assert 'VACUOUS "ghosts never act"' in result.output and "`ghost(Ag)`" in result.output
    assert "0 held, 0 broken, 1 vacuous (not exercised)" in result.output
    held = CliRunner().invoke(cli, ["fuzz", str(write(tmp_path, "c.rules", CORRECT)), "-n", "50"])
    assert '  holds   "superseded is never current"' in held.output


def test_the_stdlib_invariants_run_only_with_all(tmp_path: Path) -> None:
    path = write(tmp_path, "s.rules", '.include "continuity"\n')
    result = CliRunner().invoke(cli, ["fuzz", str(path), "-n", "2"])
    assert result.exit_code == 0 and "no invariants to fuzz (the standard library's run with --all)" in result.output
    result = CliRunner().invoke(cli, ["fuzz", str(path), "-n", "2", "--all"])
    targets = len(Harness.from_path(path).targets)
    assert result.exit_code in (0, 1) and targets > 1
    assert f"fuzzing {targets} invariant(s) of {path}" in result.output  # every stdlib invariant, under --all
