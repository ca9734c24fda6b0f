"""Property-testing a policy's invariants on generated event histories.

    harness = Harness.from_path("policy.rules")
    for target, found in fuzz(harness, examples=200, seed=0):
        if found is not None:
            print(report(harness, found.history, found.breach))

strategies.py derives hypothesis strategies from the declarations; history.py
is the event history; runner.py replays it through the store and the gate and
checks the invariants; report.py prints a counterexample; fixture.py saves it
as a scenario fixture and loads it back.
"""

from .fixture import load_history, save, to_toml
from .history import Advance, Ask, Fact, History, Entry
from .report import report
from .runner import (
    DEFAULT_EXAMPLES,
    Breach,
    Counterexample,
    Harness,
    InvariantRule,
    Outcome,
    fuzz,
    outcomes,
    minimize,
    run_history,
    search,
)
from .strategies import histories

__all__ = [
    "Advance",
    "Ask",
    "Breach",
    "Counterexample",
    "DEFAULT_EXAMPLES",
    "Fact",
    "Harness",
    "History",
    "Entry",
    "InvariantRule",
    "Outcome",
    "fuzz",
    "histories",
    "load_history",
    "minimize",
    "outcomes",
    "run_history",
    "report",
    "save",
    "search",
    "to_toml",
]
