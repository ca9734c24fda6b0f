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
    "ProjectionError",
]


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


class ProjectionError(OrdinanceError):
    """A projection could not be rendered (unknown projection or audience, a cap too small)."""

    default_code = "projection"
