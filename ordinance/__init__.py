"""ordinance: a Datalog policy system and pre-action gate for AI agents."""

from .diagnostics import (
    CheckError,
    Diagnostic,
    EvaluationError,
    GateError,
    LimitExceeded,
    OrdinanceError,
    ParseError,
    SafetyViolationError,
    Span,
    StaleEpochError,
    StoreError,
)

__all__ = [
    "CheckError",
    "Diagnostic",
    "EvaluationError",
    "GateError",
    "LimitExceeded",
    "OrdinanceError",
    "ParseError",
    "SafetyViolationError",
    "Span",
    "StaleEpochError",
    "StoreError",
]
__version__ = "0.1.0"
