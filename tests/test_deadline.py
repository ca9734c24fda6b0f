"""Deadlines: the gate and every command have an upper bound."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.cli.deadline import with_deadline
from ordinance.diagnostics import LimitExceeded
from ordinance.engine import GATE_DEADLINE_S, Limits
from ordinance.facts import Event, open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text

# a request makes the rules count up forever: only a limit ends it
DIVERGING = """
.include "continuity"
.decl up(x: number)
up(E) :- request(_, "count", _, _, E).
up(Y) :- up(X), Y = X + 1.
forbid(A, "counted", "x") :- request(A, _, _, _, _), up(-1).
"""
COUNT = 'request("r1", "count", "prod", "alice", 1).'


def test_the_gate_has_a_deadline_by_default(tmp_path: Path) -> None:
    policy = compile_text(DIVERGING)
    with open_store(str(tmp_path / "g.db"), schema_of(policy)) as store:
        assert Gate(policy, store).limits.deadline == GATE_DEADLINE_S
        gate = Gate(policy, store, limits=Limits(deadline=0.3))
        decision = gate.check(Request("r1", "count", "prod", "alice", 1), 0)
    assert not decision.allowed
    [error] = decision.errors
    assert error.code == "limit_exceeded" and "deadline" in error.message


# a warm model that takes longer to build than the deadline: the closure of a
# chain. The request's own work is one probe of `cyclic` (a rule reading
# `path(N, N)` itself would scan the whole closure for each request)
CHAIN = """
.include "continuity"
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
.decl cyclic(flag: number)
path(A, B) :- edge(A, B).
path(A, C) :- path(A, B), edge(B, C).
cyclic(1) :- path(N, N).
forbid(A, "cycle", "x") :- request(A, _, _, _, _), cyclic(1).
"""


def test_the_deadline_bounds_requests_not_the_build_of_the_stores_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the warm model is the store's work, not the request's: a
    deadline shorter than the build still decides (it would otherwise fail
    the build on every decision and never decide); the request's own
    evaluation stays bounded (test_the_gate_has_a_deadline_by_default).

    The engine's clock here advances one second each time it is read (its
    checks of the deadline), whatever the load: the build reads it about a
    thousand times, the request about ten, so a deadline of 100 seconds is
    shorter than the build and longer than the request on any machine."""
    ticks = itertools.count()
    monkeypatch.setattr("ordinance.engine.limits.time", SimpleNamespace(monotonic=lambda: float(next(ticks))))
    policy = compile_text(CHAIN)
    with open_store(str(tmp_path / "g.db"), schema_of(policy)) as store:
        store.append([Event("assert", "edge", (i, i + 1)) for i in range(400)])
        store.append([Event("assert", "grant", ("alice", "prod", 1))])
        bounded = Gate(policy, store, limits=Limits(deadline=100), build_deadline=True)
        [error] = bounded.check(Request("r0", "deploy", "prod", "alice", 1), 0).errors
        assert "deadline" in error.message  # the build takes longer than the deadline
        gate = Gate(policy, store, limits=Limits(deadline=100))
        decision = gate.check(Request("r1", "deploy", "prod", "alice", 1), 0)
        assert decision.allowed, decision.reasons
        assert gate.check(Request("r2", "deploy", "prod", "alice", 1), 0).allowed


def test_check_denies_a_diverging_request_within_its_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.rules").write_text(DIVERGING)
    monkeypatch.setenv("ORDINANCE_POLICY", str(tmp_path / "policy.rules"))
    monkeypatch.setenv("ORDINANCE_DB", store_url)
    runner = CliRunner()
    assert runner.invoke(cli, ["assert", 'grant("alice", "prod", 1).']).exit_code == 0
    # the deadline covers the whole command, compiling the policy included
    # (cached by the `assert` above; about 0.5 s when not, more on a loaded
    # host): leave it room. The request diverges: only the deadline ends it
    result = runner.invoke(cli, ["check", COUNT, "--json", "--deadline", "4"])
    assert result.exit_code == 2, result.output
    data = json.loads(result.stdout)
    assert data["allowed"] is False
    assert [r["code"] for r in data["reasons"]] == ["limit_exceeded"]
    monkeypatch.setenv("ORDINANCE_DEADLINE", "4")  # the same from the environment
    result = runner.invoke(cli, ["check", COUNT])
    assert result.exit_code == 2 and "limit_exceeded" in result.output
    with open_store(store_url) as store:
        assert len(store.decisions()) == 2  # denied decisions are logged like any other


def nap_until_stopped() -> None:
    """Sleep until something stops it: only the deadline can (after ten
    minutes it returns, so a deadline that never rings fails the test
    instead of hanging it)."""
    for _ in range(60_000):
        time.sleep(0.01)


def test_a_command_past_its_deadline_stops_with_one_line() -> None:
    @click.command("nap", epilog="Example: ordinance nap")
    def nap() -> None:
        """Sleep."""
        nap_until_stopped()

    group = click.Group(commands=[with_deadline(nap)])
    result = CliRunner().invoke(group, ["nap", "--deadline", "0.2"])
    assert isinstance(result.exception, LimitExceeded)
    assert "deadline of 0.2 seconds passed" in str(result.exception)


def test_a_group_s_deadline_covers_its_subcommand() -> None:
    # `ordinance hook claude-code`: the group's callback returns before the subcommand runs
    @click.group("grp", epilog="Example: ordinance grp nap")
    def grp() -> None:
        """A group."""

    @grp.command("nap")
    def nap() -> None:
        nap_until_stopped()

    group = click.Group(commands=[with_deadline(grp)])
    result = CliRunner().invoke(group, ["grp", "--deadline", "0.2", "nap"])
    assert isinstance(result.exception, LimitExceeded), result.output


def test_every_command_takes_a_deadline() -> None:
    for name, command in cli.commands.items():
        assert "--deadline" in [o for p in command.params for o in getattr(p, "opts", [])], name


# the store's facts make a 3000 x 3000 cross product: a warm model of 9M
# tuples, about a minute and 1.5 GB to build
CROSS = """
.include "continuity"
.decl na(x: number)
.decl nb(x: number)
.decl cross(x: number, y: number)
cross(X, Y) :- na(X), nb(Y).
"""


def test_check_s_deadline_bounds_the_build_of_the_model(tmp_path: Path) -> None:
    """A one-shot `check` builds once: its deadline covers the build, and the
    denial is not followed by a second build without one."""
    import subprocess
    import sys

    (tmp_path / "policy.rules").write_text(CROSS)
    policy = compile_text(CROSS)
    with open_store(str(tmp_path / "o.db"), schema_of(policy)) as store:
        store.append([Event("assert", rel, (i,)) for i in range(3000) for rel in ("na", "nb")])
    script = Path(sys.executable).parent / "ordinance"
    done = subprocess.run(
        [str(script), "check", "--json", "--deadline", "2", COUNT, "--db", "o.db", "--policy", "policy.rules"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=40,  # generous for a 2 s deadline on a loaded host; the unbounded build takes far longer
    )
    assert done.returncode == 2, done.stderr
    data = json.loads(done.stdout)
    assert data["allowed"] is False and [r["code"] for r in data["reasons"]] == ["limit_exceeded"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309", "-1", "soon"])
def test_a_deadline_that_is_not_finite_seconds_is_a_usage_error(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["check", COUNT, "--deadline", value])
    assert result.exit_code == 2 and "error[usage]" in result.output and "--deadline" in result.output, result.output
    monkeypatch.setenv("ORDINANCE_DEADLINE", value)
    result = runner.invoke(cli, ["lint", "x.rules"])
    assert result.exit_code == 2 and "error[usage]" in result.output and "ORDINANCE_DEADLINE" in result.output


def test_run_evaluates_a_program_with_no_deadline_unless_one_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # `ordinance run` is a program's own bulk evaluation, as Soufflé's: a default of
    # 10 seconds would stop a long but finite program half way
    from ordinance.cli import deadline

    @click.command("run", epilog="Example: ordinance run")
    def run() -> None:
        """Report the limits an evaluation started now would get."""
        click.echo(repr(deadline.limits().deadline))

    monkeypatch.delenv(deadline.DEADLINE_ENV, raising=False)
    group = click.Group(commands=[with_deadline(run)])
    assert CliRunner().invoke(group, ["run"]).output.strip() == "None"
    given = float(CliRunner().invoke(group, ["run", "--deadline", "5"]).output)
    assert 0 < given <= 5
    assert "default: (none)" in " ".join(CliRunner().invoke(group, ["run", "--help"]).output.split())
