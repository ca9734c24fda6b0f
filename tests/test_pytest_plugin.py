"""The pytest plugin: policy files' test blocks and invariants as pytest items."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

POLICY = """\
.decl claim_valid(c: symbol, from: time, to: time)
.decl supersedes(new: symbol, old: symbol)
superseded(C) :- supersedes(_, C).
current(C) :- claim_valid(C, From, To), From <= $now, $now < To{guard}.

test "a claim in its window is current" {{
  claim_valid("c1", 2026-08-14T10:00:00Z, forever).
  now 2026-08-14T12:00:00Z.
  expect current("c1").
}}

test "a superseded claim is not current" {{
  claim_valid("c1", 2026-08-14T10:00:00Z, forever). supersedes("c2", "c1").
  now 2026-08-14T12:00:00Z.
  expect not current("c1").
}}

.invariant "superseded is never current" :- current(C), superseded(C).
.invariant "a current claim has a window" :- current(C), !claim_valid(C, _, _).
"""
CORRECT = POLICY.format(guard=", !superseded(C)")
BUGGY = POLICY.format(guard="")

INI = """\
[pytest]
testpaths = tests
ordinance_paths = policies
ordinance_fuzz_examples = 60
"""


def project(pytester: pytest.Pytester, policy: str) -> None:
    pytester.makeini(INI)
    pytester.mkdir("policies")
    pytester.mkdir("tests")
    (pytester.path / "policies" / "policy.rules").write_text(policy)
    (pytester.path / "tests" / "test_nothing.py").write_text("def test_ok():\n    assert True\n")
    # a deliberately broken file outside ordinance_paths: never collected
    pytester.mkdir("golden")
    (pytester.path / "golden" / "broken.rules").write_text("p(X :- q.\n")


def test_items_have_readable_names_and_pass(pytester: pytest.Pytester) -> None:
    project(pytester, CORRECT)
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "tests/test_nothing.py::test_ok",
            'policies/policy.rules::test "a claim in its window is current"',
            'policies/policy.rules::test "a superseded claim is not current"',
            'policies/policy.rules::invariant "superseded is never current"',
            'policies/policy.rules::invariant "a current claim has a window"',
        ]
    )
    assert "broken.rules" not in result.stdout.str()
    pytester.runpytest().assert_outcomes(passed=5)


def test_failures_are_reported_readably(pytester: pytest.Pytester) -> None:
    project(pytester, BUGGY)
    result = pytester.runpytest("policies")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    # the failed expectation, with the facts of its relation and why it holds
    assert 'test "a superseded claim is not current" failed' in out
    assert 'expect not current("c1"): it holds' in out
    # the block's model also breaks the invariant, and says with which binding
    assert 'invariant "superseded is never current" is broken: C = "c1"' in out
    # the invariant item prints a shrunk counterexample with its proof
    assert 'invariant "superseded is never current" is broken (' in out
    assert "history (shrunk, " in out and "supersedes(" in out
    assert "proof of each fact in the body:" in out
    result.stdout.fnmatch_lines(['FAILED policies/policy.rules::invariant "superseded is never current"*'])


def test_missing_expectation_shows_the_model_facts(pytester: pytest.Pytester) -> None:
    project(pytester, CORRECT.replace('expect current("c1").', 'expect current("c9").'))
    result = pytester.runpytest("policies", "-k", "window and test")
    result.assert_outcomes(failed=1, deselected=3)
    out = result.stdout.str()
    assert 'expect current("c9"): it does not hold' in out
    assert "current facts in the model: 1" in out and 'current("c1")' in out
    assert "why not:" in out


def test_explicit_rules_files_are_collected_unconfigured_ones_are_not(pytester: pytest.Pytester) -> None:
    pytester.mkdir("elsewhere")
    (pytester.path / "elsewhere" / "policy.rules").write_text(CORRECT)
    (pytester.path / "elsewhere" / "broken.rules").write_text("p(X :- q.\n")
    pytester.runpytest("elsewhere").assert_outcomes()  # a directory alone collects no rules
    result = pytester.runpytest("elsewhere/policy.rules")
    result.assert_outcomes(passed=4)
    broken = pytester.runpytest("elsewhere/broken.rules")
    broken.assert_outcomes(errors=1)
    assert "broken.rules does not compile" in broken.stdout.str()
