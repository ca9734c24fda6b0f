"""`ordinance audit`: past agent sessions replayed through a policy, read only."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..audit import Report, Summary, Timeline, audit, read_calls, row_json
from ..audit import claude_code_request, subjects_of_calls, subjects_of_log
from ..explain import annotator
from ..gate import Gate
from ..values import escape
from .common import db_option, load_policy, open_db, policy_option, progress
from .deadline import limits

__all__ = ["command"]


@click.command(
    "audit",
    short_help="Replay past agent sessions through the policy (read only).",
    epilog="""\b
Examples:
  ordinance audit ~/.claude/projects/-home-me-p/          every session of a project
  ordinance audit s1.jsonl --against old-policy.rules     the calls that flip
  ordinance audit ~/.claude/projects/ --jsonl > audit.jsonl
  ordinance audit ~/.claude/projects/-home-me-p/ --html audit.html
  ordinance audit --decisions                             ordinance's own decision log
""",
)
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--decisions", is_flag=True, help="Also audit the decisions logged in the store (--db).")
@click.option(
    "--against", "against", default=None, metavar="FILE", help="An earlier policy: list the calls whose answer flips."
)
@click.option("--jsonl", "as_jsonl", is_flag=True, help="Print one JSON object per call (after a summary line).")
@click.option("--html", "html", default=None, type=click.Path(dir_okay=False), help="Write an HTML report here.")
@click.option("--agent", default="claude-code", show_default=True, help="The agent of the calls (as the hook's).")
@click.option("--project", default=None, metavar="DIR", help="The project directory (default: each call's cwd).")
@click.option("--epoch", default=1, show_default=True, type=int, help="The grant epoch of the calls.")
@db_option
@policy_option
def command(
    paths: tuple[str, ...],
    decisions: bool,
    against: str | None,
    as_jsonl: bool,
    html: str | None,
    agent: str,
    project: str | None,
    epoch: int,
    db: str,
    policy: str,
) -> None:
    """Decide every tool call of past Claude Code sessions (transcript
    files, or directories of them, subagents included) by the policy at
    the call's time, over the store (--db) as it was then, and say what
    actually happened to each (ran, failed, refused by the host or by a
    hook). Nothing is written to the store.

    Prints a summary first: counts by reason, tool and session, and with
    --against the calls the policy would newly block or newly let
    through. A line that is not a JSON record is reported (file:line) on
    stderr and skipped. Exits 0; 2 on a usage or runtime error.
    """
    if not paths and not decisions:
        raise click.UsageError("give transcript files or directories, or --decisions")
    program = load_policy(policy)
    old = load_policy(against) if against else None
    read = read_calls(paths)
    problems = [str(p) for p in read.problems]
    with open_db(db, program) as store:
        gate = Gate(program, store, limits=limits(), eager=False)
        was = Gate(old, store, limits=limits(), eager=False) if old is not None else None
        to_request = claude_code_request(gate.request_relations, agent, project, epoch)
        subjects = list(subjects_of_calls(read.calls, to_request, problems))
        if decisions:
            subjects += sorted(subjects_of_log(store, gate.request_relations), key=lambda s: s.now)
        summary = Summary()
        report = Report(program, annotator(store, store.revision())) if html is not None else None
        lines: list[str] = []
        with progress(len(subjects), "auditing") as tick:
            for row in audit(gate, subjects, timeline=Timeline(store), against=was, tick=tick):
                summary.add(row)
                if report is not None:
                    report.add(row)
                if as_jsonl:
                    lines.append(json.dumps(row_json(row), ensure_ascii=False, sort_keys=True))
        if report is not None and html is not None:
            Path(html).write_text(report.html(summary), encoding="utf-8")
    for p in problems:
        click.echo(f"warning: {escape(p)}", err=True)
    if as_jsonl:
        click.echo(json.dumps({"summary": summary.json(), "skipped": len(problems)}, sort_keys=True))
        for line in lines:
            click.echo(line)
        return
    click.echo(summary.text())
    if problems:
        click.echo(f"{len(problems)} lines or calls skipped (see the warnings)")
    if html is not None:
        click.echo(f"wrote {html}")
