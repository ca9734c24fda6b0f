"""Testing policies: test blocks, scenarios and the pytest plugin.

    results = run_blocks(harness, blocks)            # a policy's `test` blocks
    outcomes = run_scenario(load_scenario(path))     # a failure story, through the gate

blocks.py runs `test` blocks; scenario.py replays a scenario file through a
real store and gate; pytest_plugin.py collects test blocks and invariants as
pytest items (the `pytest11` entry point).
"""

from .blocks import BlockResult, Broken, FailedExpect, ground, run_block, run_blocks
from .scenario import (
    Check,
    Outcome,
    Projection,
    Scenario,
    Batch,
    broken_invariants,
    compile_policy,
    load_scenario,
    load_steps,
    run_scenario,
    scenario_from,
)

__all__ = [
    "BlockResult",
    "Broken",
    "Check",
    "FailedExpect",
    "Outcome",
    "Projection",
    "Scenario",
    "Batch",
    "broken_invariants",
    "compile_policy",
    "ground",
    "load_scenario",
    "load_steps",
    "run_block",
    "run_blocks",
    "run_scenario",
    "scenario_from",
]
