"""Text for plan labels and explanations: the language's printer, plus values."""

from __future__ import annotations

from typing import Any

from ..rules.printer import format_literal as literal_text
from ..rules.printer import format_rule as rule_text
from ..rules.printer import format_string
from ..rules.printer import format_term as term_text

__all__ = ["rule_text", "literal_text", "term_text", "value_text"]


def value_text(value: Any) -> str:
    """A runtime value as the language writes it (symbols quoted)."""
    return format_string(value) if isinstance(value, str) else str(value)
