"""`ordinance init`: a project directory with a policy file and an empty store."""

from __future__ import annotations

from pathlib import Path

import click

from ..diagnostics import OrdinanceError
from ..values import escape
from .common import load_policy, open_db

__all__ = ["command", "POLICY_TEMPLATE"]

POLICY_TEMPLATE = """\
// policy.rules: the rules the gate applies before any action runs.
// `ordinance lint` checks this file; `ordinance test` runs its test blocks.

// the continuity library: claims, grants, epochs, leases, owner stops,
// receipts, tombstones, and the gate's `permit` / `forbid` relations
.include "continuity"

// an example rule of your own: while a scope is frozen, nothing acts in it.
// A request is allowed iff some permit(A) holds and no forbid(A, Code, Detail) does.
.decl freeze(scope: symbol, until: time)
forbid(A, "frozen", S) :- request_scope(A, S), freeze(S, Until), $now < Until.

test "a freeze blocks actions in its scope until it ends" {
  grant("alice", "prod", 1).
  freeze("prod", 2026-12-27T00:00:00Z).
  request("a1", "deploy", "prod", "alice", 1). request_scope("a1", "prod").
  now 2026-12-24T12:00:00Z.
  expect permit("a1").
  expect forbid("a1", "frozen", "prod").
}
"""


@click.command(
    "init",
    short_help="Create a project: policy.rules and an empty store.",
    epilog="""\b
Examples:
  ordinance init myproject && cd myproject
  ordinance init .                    here
""",
)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing policy.rules.")
def command(directory: str, force: bool) -> None:
    """Create DIRECTORY with policy.rules (the stdlib, an example rule and a
    test block) and an empty SQLite store, ordinance.db.

    Commands run inside DIRECTORY find both by default (--policy and --db).
    """
    root = Path(directory)
    policy = root / "policy.rules"
    if policy.exists() and not force:
        raise OrdinanceError(f"`{policy}` already exists (use --force to overwrite it)", code="exists")
    root.mkdir(parents=True, exist_ok=True)
    policy.write_text(POLICY_TEMPLATE, encoding="utf-8")
    program = load_policy(str(policy))
    db = root / "ordinance.db"
    with open_db(str(db), program) as store:
        revision = store.revision()
    click.echo(escape(f"created {policy}: the continuity stdlib, an example rule and a test block"))
    click.echo(escape(f"created {db}: an empty store (revision {revision})"))
    if root.resolve() != Path.cwd().resolve():
        click.echo(escape(f"next: cd {directory} && ordinance test"))
    else:
        click.echo("next: ordinance test")
