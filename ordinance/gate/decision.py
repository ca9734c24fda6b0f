"""The decision: allowed or not, why, and enough to replay it exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..diagnostics import OrdinanceError
from ..values import format_instant
from .request import Request

__all__ = ["Reason", "Decision", "error_pair"]

# Reason kinds: a forbid that holds, a permit that does not, a flag, an error.
FORBID, MISSING_PERMIT, FLAG, ERROR = "forbid", "missing-permit", "flag", "error"


def error_pair(exc: BaseException) -> tuple[str, str]:
    """An exception as data: (its code, or its class name; its first line)."""
    code = exc.code if isinstance(exc, OrdinanceError) else type(exc).__name__
    return code, (str(exc).splitlines() or [type(exc).__name__])[0]


def _canonical(node: Any) -> Any:
    """A proof's JSON without derivation heights: they record how the model
    was maintained (a fresh evaluation and an incrementally extended one
    number rounds differently), not what the proof says."""
    if isinstance(node, dict):
        return {k: _canonical(v) for k, v in node.items() if k != "height"}
    if isinstance(node, list):
        return [_canonical(v) for v in node]
    return node


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason: `code` (kebab-case), `detail` (the forbid's third argument),
    `kind` (forbid, missing-permit, flag, error) and its proof: a forbid's or
    flag's proof tree, a missing permit's why-not, as the engine returns them.

    Proofs are built on first use (`proof`, `proof_json`, `to_json`), from the
    decision's own scratch model, so a check that nobody explains stays cheap.
    """

    code: str
    detail: str
    kind: str = FORBID
    prover: Callable[[], Any] | None = field(default=None, compare=False, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def proof(self) -> Any:
        """The proof (None for errors, or if building it failed: see proof_json)."""
        if "proof" not in self._cache:
            try:
                self._cache["proof"] = self.prover() if self.prover is not None else None
            except Exception as exc:  # explaining must not raise either
                self._cache["proof"] = None
                self._cache["json"] = {"kind": "error", "text": f"{type(exc).__name__}: {exc}"}
        return self._cache["proof"]

    @property
    def proof_json(self) -> Any:
        if "json" not in self._cache:
            from ..engine import to_json

            proof = self.proof
            if "json" not in self._cache:
                self._cache["json"] = None if proof is None else _canonical(to_json(proof))
        return self._cache["json"]

    def to_json(self, proofs: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "detail": self.detail, "kind": self.kind}
        if proofs and self.proof_json is not None:
            out["proof"] = self.proof_json
        return out


@dataclass(frozen=True, slots=True)
class Decision:
    """A pure function of (revision, policy_hash, request, now).

    `allowed` iff some permit holds and no forbid does; `reasons` holds every
    forbid and, when no permit holds, the missing permit; `flags` never block;
    `errors` (code, message) pairs deny. `seq` is the decision log entry.
    """

    request: Request
    allowed: bool
    reasons: tuple[Reason, ...]
    revision: int
    policy_hash: str
    now: int
    errors: tuple[tuple[str, str], ...] = ()
    flags: tuple[Reason, ...] = ()
    seq: int | None = field(default=None, compare=False)

    @property
    def codes(self) -> tuple[str, ...]:
        """The reason codes, sorted, without repeats."""
        return tuple(sorted({r.code for r in self.reasons}))

    def payload(self) -> dict[str, Any]:
        """What the decision log stores (no proofs: replay rebuilds them)."""
        return self.to_json(proofs=False)

    def to_json(self, proofs: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "request": self.request.to_json(),
            "allowed": self.allowed,
            "now": self.now,
            "now_text": format_instant(self.now),
            "revision": self.revision,
            "policy_hash": self.policy_hash,
            "reasons": [r.to_json(proofs) for r in self.reasons],
            "flags": [f.to_json(proofs) for f in self.flags],
            "errors": [{"code": c, "message": m} for c, m in self.errors],
        }
        if self.seq is not None:
            out["seq"] = self.seq
        return out
