"""Gate decisions for people and programs: a terminal tree, one JSON shape, DOT.

    annotate = annotator(store, decision.revision)
    print(explain_text(decision, annotate, program))
    decision_json(decision, annotate, program)   # what `check --json` prints

The proofs inside print through `proof.py`'s renderer, typed by the policy.
Everything a request or the store wrote (ids, agents, codes, details) is
escaped in text.
"""

from __future__ import annotations

from typing import Any

from ..engine.provenance import WhyNot
from ..gate.decision import FORBID, MISSING_PERMIT, Decision, Reason
from ..rules.checked import CheckedProgram
from ..values import escape, format_instant
from .proof import Annotate, Renderer, proof_json, text_lines, why_not_json
from .unblock import unblock

__all__ = ["explain_text", "decision_json", "reason_title", "UNBLOCK_SHOWN"]

UNBLOCK_SHOWN = 8  # changes that would unblock, listed per reason in text


def _headline(d: Decision) -> list[str]:
    r = d.request
    word = "ALLOWED" if d.allowed else "DENIED"
    return [
        f"{word} {escape(r.id)}: {escape(r.agent)} wants {escape(r.kind)} on {escape(r.target)} "
        f"(scope {escape(r.authority_scope)}, epoch {r.epoch})",
        f"  at revision {d.revision}, now {format_instant(d.now)}, policy {d.policy_hash[:12]}",
    ]


def reason_title(r: Reason) -> str:
    """A reason's one line (code and detail escaped)."""
    code, detail = escape(r.code), escape(r.detail)
    if r.kind == "missing-permit":
        return f"no permit ({code}: no current grant in {detail}); why not:"
    if r.kind == "error":
        return f"error {code}: {detail}"
    if r.kind == "flag":
        return f"flag {code} {detail} (does not block)"
    return f"forbid {code} {detail}"


def explain_text(d: Decision, annotate: Annotate | None = None, program: CheckedProgram | None = None) -> str:
    """The decision as a terminal tree: headline, then each reason with the
    rule and the facts that made it (each fact with its store annotation;
    with the policy's `program`, values shown by their declared types).
    A proof that could not be built says so."""
    lines = _headline(d)
    renderer = Renderer(program, annotate)
    for n, r in enumerate(list(d.reasons) + list(d.flags), 1):
        lines.append(f"  {n}. {reason_title(r)}")
        proof = r.proof
        if proof is not None:
            lines.extend(text_lines(proof, renderer, 3))
            changes = unblock(proof, program) if r.kind in (FORBID, MISSING_PERMIT) else ()
            if changes:
                lines.append("      to unblock, one of:")
                lines.extend(f"        - {c.text}" for c in changes[:UNBLOCK_SHOWN])
                if len(changes) > UNBLOCK_SHOWN:
                    lines.append(f"        ... {len(changes) - UNBLOCK_SHOWN} more (--json lists them all)")
        elif r.kind != "error" and r.prover is not None:
            lines.append(f"      (no proof: {escape(str(r.proof_error))})")
    if d.allowed and not d.flags:
        lines.append("  a permit holds and no forbid does")
    return "\n".join(lines)


def _reason_json(r: Reason, renderer: Renderer | None) -> dict[str, Any]:
    out = r.to_json()
    if renderer is not None:
        proof = r.proof
        if proof is not None:
            out["proof"] = why_not_json(proof, renderer) if isinstance(proof, WhyNot) else proof_json(proof, renderer)
            if r.kind in (FORBID, MISSING_PERMIT):
                out["unblock"] = [c.to_json() for c in unblock(proof, renderer.program)]
        elif r.kind != "error" and r.prover is not None:
            out["proof"] = {"kind": "error", "text": str(r.proof_error)}
    return out


def decision_json(
    d: Decision, annotate: Annotate | None = None, program: CheckedProgram | None = None, *, proofs: bool = True
) -> dict[str, Any]:
    """The decision's JSON (ordinance/output.schema.json): the request, allowed,
    `now` as ISO-8601, revision, policy hash, reasons and flags (each with its
    proof unless `proofs` is false), errors, whose clock gave `now` (`clock`)
    and the log `seq` once logged."""
    renderer = Renderer(program, annotate) if proofs else None
    out: dict[str, Any] = {
        "request": d.request.to_json(),
        "allowed": d.allowed,
        "now": format_instant(d.now),
        "revision": d.revision,
        "policy_hash": d.policy_hash,
        "reasons": [_reason_json(r, renderer) for r in d.reasons],
        "flags": [_reason_json(r, renderer) for r in d.flags],
        "errors": [e.to_json() for e in d.errors],
    }
    if d.clock is not None:
        out["clock"] = d.clock
    if d.seq is not None:
        out["seq"] = d.seq
    return out
