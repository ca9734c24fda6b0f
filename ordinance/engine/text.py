"""Text for plan labels: rules and literals as the language's printer writes them.

(Explanations print through `ordinance.explain`, values through `ordinance.values`.)
"""

from __future__ import annotations

from ..rules.printer import format_literal as literal_text
from ..rules.printer import format_rule as rule_text
from ..rules.printer import format_term as term_text

__all__ = ["rule_text", "literal_text", "term_text"]
