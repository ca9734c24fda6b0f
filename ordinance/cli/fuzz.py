"""`ordinance fuzz POLICY`: search for histories that break the policy's invariants.

Exit status: 0 when every invariant holds on every generated history, 1 when
one is broken (the shrunk counterexample is printed), 2 on an error.
"""

from __future__ import annotations

import click

from ..rules.invariants import DEFAULT_EXAMPLES
from ..values import escape, format_value

__all__ = ["command"]


@click.command(
    "fuzz",
    short_help="Property-test the policy's invariants on generated histories.",
    epilog="""\b
Examples:
  ordinance fuzz policy.rules
  ordinance fuzz policy.rules --examples 1000 --seed 7
  ordinance fuzz policy.rules --save fixtures/broken.toml
  ordinance fuzz policy.rules --replay fixtures/broken.toml
""",
)
@click.argument("policy", type=click.Path(exists=True, dir_okay=False))
@click.option("--examples", "-n", type=click.IntRange(min=1), default=DEFAULT_EXAMPLES, show_default=True,
              help="Histories generated per invariant.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Random seed; the same seed generates the same histories.")
@click.option("--invariant", "only", multiple=True, metavar="NAME",
              help="Fuzz only the invariant(s) with this name.")
@click.option("--save", "save_to", type=click.Path(dir_okay=False), default=None, metavar="FIXTURE",
              help="Write the first counterexample as a scenario fixture (TOML).")
@click.option("--replay", "replay_from", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="Replay a saved fixture instead of generating histories.")
def command(
    policy: str, examples: int, seed: int, only: tuple[str, ...],
    save_to: str | None, replay_from: str | None,
) -> None:
    """Run every `.invariant` of POLICY against generated event histories.

    Each history (facts asserted, superseded, corrected, grants, leases,
    stops, receipts, observations, requests at the gate, time advancing) is
    replayed through a real store and the gate; an invariant is broken by
    any binding that makes its body true. A broken invariant is reported
    with the shrunk history, the binding and the proof of each fact in it.
    """
    # imported here: every other command starts without loading hypothesis
    from ..fuzz import Harness, fuzz, load_history, replay, report, save

    harness = Harness.from_path(policy)
    if replay_from is not None:
        history = load_history(harness, replay_from)
        breach, _ = replay(harness, history)
        if breach is None:
            click.echo(escape(f"{replay_from}: {len(history)} events, every invariant holds"))
            return
        click.echo(report(harness, history, breach, shrunk=False))
        raise click.exceptions.Exit(1)
    targets = [t for t in harness.targets if not only or t.name in only]
    missing = sorted(set(only) - {t.name for t in targets})
    if missing:
        raise click.BadParameter(f"no invariant named `{missing[0]}` in {policy}", param_hint="--invariant")
    if not targets:
        click.echo(escape(f"{policy}: no invariants to fuzz"))
        return
    click.echo(escape(f"fuzzing {len(targets)} invariant(s) of {policy}, {examples} histories each, seed {seed}"))
    broken = 0
    for target, found in fuzz(harness, examples=examples, seed=seed, targets=targets):
        if found is None:
            click.echo(f"  holds   {format_value(target.name)}")
            continue
        click.echo(f"  BROKEN  {format_value(target.name)}  ({len(found.history)} events after shrinking)")
        click.echo("")
        click.echo("\n".join("    " + line for line in report(harness, found.history, found.breach).splitlines()))
        click.echo("")
        if save_to is not None and broken == 0:
            save(harness, found.history, found.breach, save_to, policy, seed=seed)
            click.echo(escape(f"    saved to {save_to}; replay with: ordinance fuzz {policy} --replay {save_to}"))
            click.echo("")
        broken += 1
    click.echo(f"{len(targets) - broken} held, {broken} broken")
    if broken:
        raise click.exceptions.Exit(1)
