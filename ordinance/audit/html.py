"""The audit as one self-contained HTML file: the summary, every call, and
each blocked or asked call's proof one click away (a `<details>` element).

Rendered with Jinja2 (autoescaping on: everything a transcript or the
store wrote is text, never markup); no script, no external resource.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import OrdinanceError
from ..explain import Annotate, explain_text
from ..rules.checked import CheckedProgram
from .replay import ASK, DENY, Audited
from .report import Summary, row_json

__all__ = ["Report", "PROOFS"]

PROOFS = 2000  # proofs rendered in one report; past that the row says so


class Report:
    """The rows of an HTML report, each turned into data (its proof text
    included) as it is added, so no decision, and no model its proofs
    would be built from, outlives its row."""

    def __init__(self, program: CheckedProgram, annotate: Annotate | None = None) -> None:
        self.program, self.annotate = program, annotate
        self.rows: list[dict[str, Any]] = []
        self.proofs = 0

    def add(self, a: Audited) -> None:
        row = row_json(a)
        row["proof"] = None
        if a.answer in (ASK, DENY):
            if self.proofs < PROOFS:
                row["proof"] = explain_text(a.decision, self.annotate, self.program)
                self.proofs += 1
            else:
                row["proof"] = f"(not rendered: a report holds at most {PROOFS} proofs)"
        self.rows.append(row)

    def html(self, summary: Summary, title: str = "ordinance audit") -> str:
        """The report's HTML text."""
        try:
            import jinja2
        except ImportError as exc:
            raise OrdinanceError(
                "the html report needs jinja2: pip install 'ordinance[audit]'", code="missing_extra"
            ) from exc
        env = jinja2.Environment(
            loader=jinja2.PackageLoader("ordinance.audit", "."), autoescape=True, undefined=jinja2.StrictUndefined
        )
        return env.get_template("report.html.j2").render(
            title=title, summary=summary.text(), counts=summary.json(), rows=self.rows, compared=summary.compared
        )
