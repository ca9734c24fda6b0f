"""Diagnostics are data: a code, a one-line message and a source span.

Every phase of the pipeline reports what is wrong as `Diagnostic` values. A
phase that cannot continue raises the exception of its phase (a subclass of
`OrdinanceError`) carrying *all* the diagnostics it found, never just the
first. The library never exits the process; the CLI chooses exit codes.

Messages follow Cedar's style: lowercase, no trailing period, one line, user
names in backticks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

__all__ = [
    "Span",
    "Diagnostic",
    "OrdinanceError",
    "ParseError",
    "CheckError",
    "SafetyViolationError",
    "EvaluationError",
    "LimitExceeded",
    "StoreError",
    "StaleEpochError",
    "GateError",
    "STORE_CODES",
]

# The codes of the store and of values at the edge (the language's codes are
# listed in README's rule-language section): code -> what it means. README's
# "Store errors" table shows the same list (a test compares them).
STORE_CODES: dict[str, str] = {
    "derived_relation": "a fact of a relation a rule of the policy derives: never stored",
    "request_fact": "a request-side fact (`request`, `request_*`): only the gate's overlay holds them",
    "no_schema": "a store opened without a policy's schema takes no facts",
    "unknown_relation": "a relation the policy does not declare",
    "arity_mismatch": "a fact with the wrong number of arguments",
    "type_mismatch": "an argument of the wrong type",
    "nul_byte": "a string holding a NUL byte",
    "lone_surrogate": "a string holding a lone surrogate (undecodable bytes)",
    "invalid_utf8": "a file that is not valid UTF-8",
    "integer_range": "an integer outside signed 64 bits",
    "epoch_range": "an epoch outside 0 .. 2^63 - 1",
    "time_range": "a time outside years 1 .. 9999 that is not `forever`",
    "bad_decision": "a decision event whose payload is not a decision",
    "bad_payload": "a payload that is not a JSON object of storable values",
    "no_reason": "a purge without a reason",
    "stale_epoch": "a write under an epoch older than the newest for its resource",
    "bad_fence": "a fence that is not a (resource, epoch) pair",
    "fence_mismatch": "an event carrying a fence its batch was not written under",
    "bad_seq": "an imported event that does not continue the log",
    "bad_jsonl": "a JSON Lines line that is not an event or a fact",
    "unknown_kind": "an event kind the log does not have",
    "kind_mismatch": "an event kind carrying another kind's relation",
    "unknown_seq": "a purge of a seq the log does not hold",
    "not_purgeable": "a purge of a purge, or of an event already purged",
    "no_such_fact": "a retraction of a fact the store does not hold",
    "no_store": "a command other than init, assert, load given a store that does not exist",
    "store_failed": "the database failed (the message names the store)",
    "missing_extra": "a postgresql:// store without `ordinance[postgres]` installed",
    "unknown_backend": "a store url of no known backend",
    "unknown_revision": "a revision the log does not hold",
}


@dataclass(frozen=True, slots=True)
class Span:
    """A region of source text; lines and columns are 1-based, end exclusive."""

    line: int = 0
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.line}:{self.column}"


NO_SPAN = Span()


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    span: Span = field(default=NO_SPAN)
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.span}: {self.severity}[{self.code}]: {self.message}"


class OrdinanceError(Exception):
    """Root of every error ordinance raises.

    `code` is the code of the first diagnostic (the conformance corpus and the
    CLI read it); `diagnostics` holds all of them.
    """

    default_code = "error"

    def __init__(self, diagnostics: Iterable[Diagnostic] | str, code: str | None = None):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(code or self.default_code, diagnostics)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.code: str = code or (
            self.diagnostics[0].code if self.diagnostics else self.default_code
        )
        super().__init__("; ".join(str(d) for d in self.diagnostics))


class ParseError(OrdinanceError):
    """The text is not in the language (phase: parser)."""

    default_code = "syntax"


class CheckError(OrdinanceError):
    """The program parsed but a static check failed (phase: analysis)."""

    default_code = "check"


class SafetyViolationError(CheckError):
    """A variable is not bound by a positive literal (phase: analysis)."""

    default_code = "safety_violations"


class EvaluationError(OrdinanceError):
    """Evaluation could not complete (phase: engine)."""

    default_code = "evaluation"


class LimitExceeded(EvaluationError):
    """A run limit (tuples, iterations, deadline) was exceeded."""

    default_code = "limit_exceeded"


class StoreError(OrdinanceError):
    """The fact store refused or failed an operation (phase: store)."""

    default_code = "store"


class StaleEpochError(StoreError):
    """A write carried an epoch older than the newest one for its resource."""

    default_code = "stale_epoch"


class GateError(OrdinanceError):
    """The gate was used wrongly (a bad request); policy outcomes never raise."""

    default_code = "gate"
