"""The continuity library: declarations, its test blocks, its invariants."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest

from ordinance.engine import evaluate
from ordinance.gate import with_defaults
from ordinance.rules.ast import Atom, Const, Rule, TestBlock
from ordinance.rules import compile_text
from ordinance.rules.parser import parse
from ordinance.values import parse_instant
from ordinance.testing.scenario import broken_invariants, compile_policy

POLICY = compile_policy('.include "continuity"\n')
STDLIB = files("ordinance.rules") / "stdlib"
MODULES = sorted(p.name for p in STDLIB.iterdir() if p.name.endswith(".rules"))

# the design's built-in relations (DESIGN.md, not in this repository), with the types the store validates against
BUILTINS = {
    "claim": ("symbol",) * 4,
    "claim_source": ("symbol",) * 3,
    "claim_valid": ("symbol", "time", "time"),
    "claim_confidence": ("symbol", "symbol"),
    "supersedes": ("symbol", "symbol"),
    "correction": ("symbol", "symbol"),
    "single_valued": ("symbol",),
    "incompatible": ("symbol",) * 3,
    "tombstone": ("symbol",) * 3,
    "tombstone_evidence": ("symbol", "symbol"),
    "revive_when": ("symbol",) * 4,
    "retest_after": ("symbol", "time"),
    "grant": ("symbol", "symbol", "number"),
    "revoke": ("symbol", "symbol", "number"),
    "lease": ("symbol", "symbol", "number", "time"),
    "stop": ("symbol", "time"),
    "receipt": ("symbol", "symbol", "symbol", "time"),
    "observation": ("symbol", "symbol", "time", "symbol", "symbol"),
    "failure_domain": ("symbol", "symbol"),
    "request": ("symbol", "symbol", "symbol", "symbol", "number"),
    "request_uses": ("symbol", "symbol"),
}
DERIVED = [
    "superseded",
    "current",
    "status",
    "conflict",
    "done",
    "verified",
    "stale",
    "revived",
    "forbid",
    "permit",
    "consolidation",
]


def const(term: Any) -> Any:
    assert isinstance(term, Const), term
    return term.value


def block_facts(block: TestBlock) -> dict[str, set[tuple[Any, ...]]]:
    facts: dict[str, set[tuple[Any, ...]]] = {}
    for rule in block.facts:
        assert isinstance(rule, Rule) and rule.is_fact
        facts.setdefault(rule.head.relation, set()).add(tuple(const(a) for a in rule.head.args))
    return with_defaults(facts)  # request_scope and request_lease, as the gate and `ordinance test` fill them


def ground(atom: Atom) -> tuple[Any, ...]:
    return tuple(const(a) for a in atom.args)


def test_every_builtin_relation_is_declared_with_its_types() -> None:
    for name, types in BUILTINS.items():
        rel = POLICY.relations[name]
        assert rel.types == types, name
        assert not rel.derived, name
    for name in DERIVED:
        assert POLICY.relations[name].derived, name


def test_every_module_tests_its_rules_and_states_invariants() -> None:
    assert {
        "continuity.rules",
        "claims.rules",
        "authority.rules",
        "tombstones.rules",
        "receipts.rules",
        "routing.rules",
    } <= set(MODULES)
    for name in MODULES:
        program = parse((STDLIB / name).read_text(), file=name)
        if name == "schema.rules":
            assert program.decls and not program.rules
            continue
        assert program.tests, f"{name} has no test block"
        assert program.invariants, f"{name} states no invariant"


def test_reason_codes_are_kebab_case() -> None:
    codes = set()
    for rule in POLICY.rules:
        if rule.head.relation in ("forbid", "flag"):
            code = rule.head.args[1]
            assert isinstance(code, Const), "a reason code is a constant"
            codes.add(code.value)
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", str(c)) for c in codes)
    assert {
        "stale-epoch",
        "owner-stop",
        "revoked",
        "tombstoned-route",
        "unverified-prerequisite",
        "repeat",
        "hearsay-authority",
        "conflict",
        "unknown-evidence",
        "superseded-evidence",
    } <= codes


BLOCKS = [(b.name, b) for b in POLICY.tests]


def test_the_library_has_many_test_blocks() -> None:
    assert len(BLOCKS) >= 25
    assert len({name for name, _ in BLOCKS}) == len(BLOCKS)


@pytest.mark.parametrize("name,block", BLOCKS, ids=[n for n, _ in BLOCKS])
def test_block(name: str, block: TestBlock) -> None:
    assert block.now is not None and block.expects
    model = evaluate(POLICY, block_facts(block), now=block.now)
    for expect in block.expects:
        holds = model.contains(expect.atom.relation, ground(expect.atom))
        assert holds != expect.negated, f"expect {'not ' if expect.negated else ''}{expect.atom}"
    assert broken_invariants(model) == []


def test_a_broken_invariant_is_seen() -> None:
    program = compile_policy(
        '.decl p(x: symbol)\n.decl q(x: symbol)\np("a"). q("a"). p("b").\n'
        '.invariant "p and q never meet" :- p(X), q(X).\n'
        '.invariant "b is never q" :- q("b").\n'
    )
    model = evaluate(program, {}, now=0)
    assert broken_invariants(model) == ["p and q never meet"]


def test_the_calendar_module_forbids_deploys_on_fridays(tmp_path: Any) -> None:
    from ordinance.testing import run_blocks

    policy = tmp_path / "policy.rules"
    policy.write_text('.include "continuity"\n.include "calendar"\n')
    results = [r for r in run_blocks(str(policy), include_all=True) if "calendar" in str(r.block.span.file)]
    assert len(results) == 3 and all(r.passed for r in results), results
    program = compile_text('.include "continuity"\n.include "calendar"\nquiet_day("deploy", 5).')
    friday, thursday = parse_instant("2026-08-14T09:00:00Z"), parse_instant("2026-08-13T09:00:00Z")
    request = {"request": {("a1", "deploy", "prod", "bob", 1)}}
    for at, quiet in ((friday, True), (thursday, False)):
        forbids = evaluate(program, with_defaults(request), now=at).tuples("forbid")
        assert (("a1", "quiet-time", "deploy") in forbids) == quiet
