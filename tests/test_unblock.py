"""What would unblock: every reason of a denial names the facts that would have to change."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.explain import decision_json, explain_text, unblock
from ordinance.facts import open_store, schema_of
from ordinance.gate import Gate, Request
from ordinance.rules import compile_text
from ordinance.values import FOREVER, parse_instant

POLICY = compile_text('.include "continuity"\n')
NOW = parse_instant("2026-08-14T12:00:00Z")


def changes(decision, code):  # type: ignore[no-untyped-def]
    return {(c.how, c.relation, c.tuple) for r in decision.reasons if r.code == code for c in unblock(r.proof, POLICY)}


def test_each_forbid_names_what_would_have_to_change(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "u.db"), schema_of(POLICY)) as store:
        store.assert_facts(
            [
                ("grant", ("alice", "repo", 1)),
                ("grant", ("bob", "repo", 2)),  # a newer epoch for the scope: alice's 1 is stale
                ("lease", ("w1", "bob", 2, NOW + 3600)),
                ("stop", ("repo", NOW - 60)),
            ]
        )
        gate = Gate(POLICY, store)
        d = gate.decide(Request("a1", "write", "w1", "alice", 1, scope="repo", lease_epoch=1), NOW)
        assert {"stale-epoch", "owner-stop", "lease-held"} <= set(d.codes)
        stale = changes(d, "stale-epoch")
        assert ("another-epoch", "request", ("a1", "write", "w1", "alice", 1)) in stale
        assert ("revoke", "grant", ("bob", "repo", 2)) in stale
        stop = changes(d, "owner-stop")
        assert ("resume", "stop", ("repo", NOW - 60)) in stop
        assert any(how == "add" and rel == "has_resume" for how, rel, _ in stop)  # `!has_resume(S)`
        held = changes(d, "lease-held")
        assert ("expire", "lease", ("w1", "bob", 2, NOW + 3600)) in held
        text = explain_text(d, program=POLICY)
        assert (
            "to unblock, one of:" in text and 'lease("w1", "bob", 2, 2026-08-14T13:00:00Z) would have to expire' in text
        )
        reasons = decision_json(d, program=POLICY)["reasons"]
        assert all(r["unblock"] for r in reasons)


def test_a_missing_permit_says_what_to_add_and_why_not_prints_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with open_store(str(tmp_path / "u.db"), schema_of(POLICY)) as store:
        # scope follows the target: a grant of the scope the request targets is what it lacks
        d = Gate(POLICY, store).decide(Request("a2", "write", "repo", "carol", 1), NOW)
        (reason,) = d.reasons
        assert reason.kind == "missing-permit"
        assert ("add", "grant", ("carol", "repo", 1)) in {
            (c.how, c.relation, c.tuple) for c in unblock(reason.proof, POLICY)
        }
        # a scope the caller names only narrows: what it lacks is the call's own, never a fact to add
        d = Gate(POLICY, store).decide(Request("a4", "write", "w1", "carol", 1, scope="repo"), NOW)
        got = unblock(d.reasons[0].proof, POLICY)
        assert got and {c.how for c in got if c.relation.startswith("request")} == {"call"}
        assert 'the call itself would have to differ (request_scope("a4", "w1"))' in {c.text for c in got}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    out = CliRunner().invoke(
        cli,
        [
            "why-not",
            'permit("a3")',
            "--given",
            'request("a3", "write", "repo", "carol", 1).',
            "--db",
            str(tmp_path / "u.db"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert 'to make it hold, one of:\n  - grant("carol", "repo", 1) would have to be added' in out.output


def test_a_lease_forever_says_it_never_expires() -> None:
    from ordinance.engine.provenance import ProofNode

    leaf = ProofNode("fact", "lease", ("w", "bob", 1, FOREVER))
    (change,) = unblock(ProofNode("rule", "forbid", ("a", "x", "w"), rule=0, children=(leaf,)), None)
    assert change.how == "expire" and "never does (forever)" in change.text
