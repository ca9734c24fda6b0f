"""The decision: allowed or not, why, and enough to replay it exactly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..diagnostics import Diagnostic
from ..values import format_instant
from .request import Request

__all__ = ["Reason", "Decision"]

# Reason kinds: a forbid that holds, a permit that does not, a flag, an error.
FORBID, MISSING_PERMIT, FLAG, ERROR = "forbid", "missing-permit", "flag", "error"


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason: `code` (kebab-case), `detail` (the forbid's third argument),
    `kind` (forbid, missing-permit, flag, error) and its proof: a forbid's or
    flag's proof tree, a missing permit's why-not, as the engine returns them.

    Proofs are built on first use (`proof`), from the
    decision's own scratch model, so a check that nobody explains stays cheap.
    """

    code: str
    detail: str
    kind: str = FORBID
    prover: Callable[[], Any] | None = field(default=None, compare=False, repr=False)
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def proof(self) -> Any:
        """The proof (None for errors, or if building it failed: see proof_error)."""
        if "proof" not in self._cache:
            try:
                self._cache["proof"] = self.prover() if self.prover is not None else None
            except Exception as exc:  # explaining must not raise either
                self._cache["proof"] = None
                self._cache["error"] = f"{type(exc).__name__}: {exc}"
        return self._cache["proof"]

    @property
    def proof_error(self) -> str | None:
        """Why the proof could not be built, if it could not."""
        _ = self.proof
        return self._cache.get("error")

    def to_json(self) -> dict[str, Any]:
        """`code`, `detail`, `kind` (`ordinance.explain.decision_json` adds the proof)."""
        return {"code": self.code, "detail": self.detail, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class Decision:
    """A pure function of (revision, policy_hash, request, now).

    `allowed` iff some permit holds and no forbid does; `reasons` holds every
    forbid and, when no permit holds, the missing permit; `flags` never block;
    `errors` are diagnostics, and deny (a `(code, message)` pair given here
    becomes a Diagnostic). `seq` is the decision log entry; `clock` says
    whose clock gave `now` (`server`, `owner` for the local owner and the
    library, or `principal:NAME` for a principal the owner gave the clock).
    """

    request: Request
    allowed: bool
    reasons: tuple[Reason, ...]
    revision: int
    policy_hash: str
    now: int
    errors: tuple[Diagnostic, ...] = ()
    flags: tuple[Reason, ...] = ()
    seq: int | None = field(default=None, compare=False)
    clock: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if any(not isinstance(e, Diagnostic) for e in self.errors):
            fixed = tuple(e if isinstance(e, Diagnostic) else Diagnostic(*e) for e in self.errors)
            object.__setattr__(self, "errors", fixed)

    @property
    def codes(self) -> tuple[str, ...]:
        """The reason codes, sorted, without repeats."""
        return tuple(sorted({r.code for r in self.reasons}))

    def payload(self) -> dict[str, Any]:
        """What the decision log stores (no proofs: replay rebuilds them):
        `to_json()`, whose `now` is seconds (with `now_text` beside it), so
        `Gate.replay` reads it back exactly; `from_payload` is the inverse."""
        return self.to_json()

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], seq: int | None = None) -> Decision:
        """The decision a log payload records (its reasons without proofs)."""

        def reasons(key: str) -> tuple[Reason, ...]:
            return tuple(
                Reason(str(r["code"]), str(r["detail"]), str(r.get("kind", FORBID))) for r in payload.get(key, ())
            )

        return cls(
            Request.from_json(payload["request"]),
            bool(payload["allowed"]),
            reasons("reasons"),
            int(payload["revision"]),
            str(payload["policy_hash"]),
            int(payload["now"]),
            tuple(Diagnostic(str(e["code"]), str(e["message"])) for e in payload.get("errors", ())),
            reasons("flags"),
            seq,
            None if payload.get("clock") is None else str(payload["clock"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The logged shape (no proofs; `ordinance.explain.decision_json` is
        the typed shape with proofs that the CLI prints)."""
        out: dict[str, Any] = {
            "request": self.request.to_json(),
            "allowed": self.allowed,
            "now": self.now,
            "now_text": format_instant(self.now),
            "revision": self.revision,
            "policy_hash": self.policy_hash,
            "reasons": [r.to_json() for r in self.reasons],
            "flags": [f.to_json() for f in self.flags],
            "errors": [e.to_json() for e in self.errors],
        }
        if self.clock is not None:
            out["clock"] = self.clock
        if self.seq is not None:
            out["seq"] = self.seq
        return out
