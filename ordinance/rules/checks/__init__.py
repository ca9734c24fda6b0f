"""Static checks, one pass per module; `driver.check` runs them all."""

from .arity import check_arity
from .driver import check, run_passes
from .patterns import check_patterns
from .relations import check_relations
from .safety import SAFETY_CODES, check_safety
from .stratify import dependency_graph, stratify
from .types import check_types

__all__ = [
    "check",
    "run_passes",
    "check_arity",
    "check_safety",
    "check_types",
    "check_relations",
    "check_patterns",
    "stratify",
    "dependency_graph",
    "SAFETY_CODES",
]
