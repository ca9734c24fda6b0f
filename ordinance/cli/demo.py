"""`ordinance demo`: the seed scenarios through the gate, explained.

The scenarios are package data, `ordinance/testing/scenarios/*.toml`, so the
demo runs from an installed wheel; `--dir` points elsewhere.
"""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path

import click

from ..diagnostics import OrdinanceError
from ..explain import annotator, explain_text
from ..facts import open_store
from ..testing.scenario import Outcome, Scenario, load_scenario, run_scenario
from ..values import escape

__all__ = ["command", "scenario_dir", "scenario_files"]


def scenario_dir() -> Path:
    """The seed scenarios shipped with the package."""
    return Path(__file__).resolve().parents[1] / "testing" / "scenarios"


def scenario_files(directory: Path, only: tuple[str, ...] = ()) -> list[Path]:
    """The scenario files of `directory`, those whose name contains one of
    `only` if given, sorted."""
    if not directory.is_dir():
        raise OrdinanceError(
            f"no scenarios at `{directory}` (pass --dir a directory of scenario .toml files)",
            code="no_scenarios",
        )
    paths = sorted(directory.glob("*.toml"))
    if only:
        paths = [p for p in paths if any(o in p.stem or o.replace("-", "_") in p.stem for o in only)]
    if not paths:
        raise OrdinanceError(f"no scenario matches in `{directory}`", code="no_scenarios")
    return paths


def _heading(text: str) -> str:
    return click.style(text, bold=True)


def _show(scenario: Scenario, outcome: Outcome, db: str, brief: bool) -> None:
    click.echo(_heading(f"== {escape(scenario.name)} =="))
    for line in textwrap.wrap(escape(" ".join(scenario.story.split())), 78):
        click.echo(f"   {line}")
    facts = sum(len(s.facts) for s in scenario.steps)
    click.echo(f"   ({facts} facts in {len(scenario.steps)} steps, {len(outcome.decisions)} requests)")
    with open_store(db) as store:
        for n, (check, decision) in enumerate(outcome.decisions, 1):
            expected = decision.allowed == check.allowed and decision.codes == check.codes
            mark = click.style("as expected", fg="green") if expected else click.style("UNEXPECTED", fg="red")
            click.echo("")
            click.echo(f" {n}. {escape(check.name)}  [{mark}]")
            text = explain_text(decision, None if brief else annotator(store, decision.revision), scenario.policy)
            lines = text.splitlines()
            if brief:
                lines = lines[:1] + [line for line in lines[2:] if line.startswith("  ") and line[2:3].isdigit()]
            for line in lines:
                click.echo("    " + line)
    for failure in outcome.failures:
        click.echo(click.style(f"   failed: {escape(failure)}", fg="red"))
    click.echo("")


@click.command(
    "demo",
    short_help="Play the seed scenarios through the gate, explained.",
    epilog="""\b
Examples:
  ordinance demo                      every scenario, every decision explained
  ordinance demo arc_c                only the scenarios whose name contains arc_c
  ordinance demo --brief              decisions and reason codes, no proof trees
""",
)
@click.argument("only", nargs=-1, metavar="[NAME]...")
@click.option("--brief", is_flag=True, help="Show decisions and reasons without proof trees.")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Read scenarios from this directory (default: the seed scenarios shipped with ordinance).",
)
def command(only: tuple[str, ...], brief: bool, directory: Path | None) -> None:
    """Play the seed scenarios through the gate and explain each decision.

    Each scenario is a failure story from agent operations (repeated
    actions, superseded conclusions, "done" without evidence, hearsay,
    writes after a takeover): its facts go into a throw-away SQLite store,
    its requests go through the gate, and every decision is shown with the
    rules and stored facts behind it. Nothing outside a temporary directory
    is touched. Exits 1 if a decision differs from the scenario's
    expectation.
    """
    paths = scenario_files(directory or scenario_dir(), only)
    ok = 0
    total = 0
    with tempfile.TemporaryDirectory(prefix="ordinance-demo-") as tmp:
        for i, path in enumerate(paths):
            scenario = load_scenario(path)
            db = str(Path(tmp) / f"{i}-{path.stem}.db")
            outcome = run_scenario(scenario, db)
            _show(scenario, outcome, db, brief)
            total += len(outcome.decisions)
            ok += outcome.ok
    click.echo(
        _heading(
            f"{len(paths)} scenarios, {total} decisions; {ok} of {len(paths)} scenarios behaved as their story says"
        )
    )
    if ok != len(paths):
        raise click.exceptions.Exit(1)
