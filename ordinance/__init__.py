"""ordinance: a Datalog policy system and pre-action gate for AI agents.

The package loads nothing until asked: `ordinance.OrdinanceError` imports
diagnostics.py then (so `ordinance hook claude-code` starts with the
standard library alone, see cli/hook_client.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # (mypy reads it as True; importing typing would cost a start-up)
if TYPE_CHECKING:
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


def __getattr__(name: str) -> object:
    if name in __all__:
        from . import diagnostics

        return getattr(diagnostics, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
