"""`ordinance fuzz POLICY`: search for histories that break the policy's invariants.

Exit status: 0 when every invariant holds on every generated history, 1 when
one is broken (the shrunk counterexample is printed), 2 on an error.
"""

from __future__ import annotations

from typing import Any

import click

from ..rules import format_atom
from ..rules.invariants import DEFAULT_EXAMPLES
from ..rules.loader import STDLIB_PREFIX
from ..values import escape, format_value
from .common import progress

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
  ordinance fuzz policy.rules --all      the standard library's invariants too
""",
)
@click.argument("policy", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--examples",
    "-n",
    type=click.IntRange(min=1),
    default=DEFAULT_EXAMPLES,
    show_default=True,
    help="Histories generated per invariant.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Random seed; the same seed generates the same histories."
)
@click.option("--invariant", "only", multiple=True, metavar="NAME", help="Fuzz only the invariant(s) with this name.")
@click.option(
    "--save",
    "save_to",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FIXTURE",
    help="Write the first counterexample as a scenario fixture (TOML).",
)
@click.option(
    "--replay",
    "replay_from",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    metavar="FILE",
    help="Replay a saved fixture instead of generating histories.",
)
@click.option("--all", "everything", is_flag=True, help="Also fuzz the invariants of the included standard library.")
@click.option(
    "--allow-vacuous", is_flag=True, help="Exit 0 even if an invariant stayed vacuous (its body never matched whole)."
)
def command(
    policy: str,
    examples: int,
    seed: int,
    only: tuple[str, ...],
    save_to: str | None,
    replay_from: str | None,
    everything: bool,
    allow_vacuous: bool,
) -> None:
    """Run every `.invariant` of POLICY against generated event histories.

    Each history (facts asserted, superseded, corrected, grants, leases,
    stops, receipts, observations, requests at the gate, time advancing) is
    replayed through a real store and the gate; an invariant is broken by
    any binding that makes its body true. A broken invariant is reported
    with the shrunk history, the binding and the proof of each fact in it.
    An invariant whose body never matched whole (an atom never matched, or
    never together with the atoms before it) in any history is reported as
    vacuous, naming that atom: it was not exercised (add facts or a `.hint`
    so it is). Request kinds and other constants are drawn from the
    policy's own rules. The standard library's invariants run with --all.
    Exits 1 if an invariant is broken, or stayed vacuous (unless --allow-vacuous).
    """
    # imported here: every other command starts without loading hypothesis
    from ..fuzz import Harness, load_history, outcomes, report, run_history, save

    harness = Harness.from_path(policy)
    if replay_from is not None:
        history = load_history(harness, replay_from)
        breach, _ = run_history(harness, history)
        if breach is None:
            click.echo(escape(f"{replay_from}: {len(history)} events, every invariant holds"))
            return
        click.echo(report(harness, history, breach, shrunk=False))
        raise click.exceptions.Exit(1)
    targets = [t for t in harness.targets if (not only or t.name in only) and (everything or only or not _stdlib(t))]
    missing = sorted(set(only) - {t.name for t in targets})
    if missing:
        raise click.BadParameter(f"no invariant named `{missing[0]}` in {policy}", param_hint="--invariant")
    if not targets:
        hidden = "" if everything else " (the standard library's run with --all)"
        click.echo(escape(f"{policy}: no invariants to fuzz{hidden}"))
        return
    click.echo(escape(f"fuzzing {len(targets)} invariant(s) of {policy}, {examples} histories each, seed {seed}"))
    broken = vacuous = 0
    with progress(len(targets) * examples, "fuzzing", 50) as tick:
        for outcome in outcomes(harness, examples=examples, seed=seed, targets=targets, on_example=tick):
            target, found = outcome.target, outcome.counterexample
            if found is None and outcome.vacuous:
                if outcome.unmatched:
                    atoms = ", ".join(f"`{escape(format_atom(a))}`" for a in outcome.unmatched)
                    why = f"never matched in {examples} histories: {atoms}"
                else:
                    assert outcome.unjoined is not None
                    atom = escape(format_atom(outcome.unjoined))
                    why = f"`{atom}` never matched together with the atoms before it in {examples} histories"
                click.echo(f"  VACUOUS {format_value(target.name)}  ({why})")
                vacuous += 1
                continue
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
    held = len(targets) - broken - vacuous
    note = f", {vacuous} vacuous (not exercised)" if vacuous else ""
    click.echo(f"{held} held, {broken} broken{note}")
    if broken or (vacuous and not allow_vacuous):
        raise click.exceptions.Exit(1)


def _stdlib(target: Any) -> bool:
    return (target.invariant.span.file or "").startswith(STDLIB_PREFIX)
