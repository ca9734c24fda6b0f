"""Diagnostics are data, and their codes live in one registry."""

from __future__ import annotations

import re
from pathlib import Path

from ordinance.diagnostics import CODES, NO_SPAN, Diagnostic, OrdinanceError, Related, Span, diagnostic_of

ROOT = Path(__file__).resolve().parents[1]


def codes_in_source() -> set[str]:
    """Every code the library writes: `Diagnostic("x", ...)`, `code="x"`,
    `default_code = "x"`, `error[x]`, and the helpers that wrap them."""
    found: set[str] = set()
    for path in (ROOT / "ordinance").rglob("*.py"):
        text = path.read_text()
        found.update(re.findall(r'(?:Diagnostic|diag|_error|bad)\(\s*"([a-z][a-z_]*)"', text))
        found.update(re.findall(r'(?:\bcode\s*=\s*|default_code\s*=\s*)"([a-z][a-z_]*)"', text))
        found.update(re.findall(r"error\[([a-z][a-z_]*)\]", text))
    return found


def test_every_code_is_registered_and_every_registered_code_is_used() -> None:
    used = codes_in_source()
    assert used - set(CODES) == set(), "codes missing from diagnostics.CODES"
    assert set(CODES) - used == set(), "registered codes nothing reports"


def test_codes_are_snake_case() -> None:
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in CODES)


def test_the_error_codes_page_is_the_registry() -> None:
    section = (ROOT / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| (\w+) \| (.+) \|$", section, re.M)
    assert rows == [(code, phase, meaning) for code, (phase, meaning) in CODES.items()]


def test_help_related_and_notes_are_fields_shown_on_one_line() -> None:
    d = Diagnostic(
        "duplicate_decl",
        "relation `e` is declared twice",
        Span(2, 1, 2, 5, "p.rules"),
        help="remove one",
        related=(Related("first declared here", Span(1, 1, 1, 5, "p.rules")),),
        notes=("declarations are global",),
    )
    assert d.message == "relation `e` is declared twice"
    assert str(d) == (
        "p.rules:2:1: error[duplicate_decl]: relation `e` is declared twice; "
        "first declared here at p.rules:1:1; help: remove one"
    )
    data = d.to_json()
    assert data["help"] == "remove one" and data["related"] == [{"message": "first declared here", "at": "p.rules:1:1"}]
    assert data["span"]["line"] == 2 and data["notes"] == ["declarations are global"]


def test_a_diagnostic_without_source_has_no_span() -> None:
    d = Diagnostic("bad_payload", "event 3: payload is not an object")
    assert d.span == NO_SPAN and str(d) == "error[bad_payload]: event 3: payload is not an object"
    assert "span" not in d.to_json()
    assert diagnostic_of(OrdinanceError([d])) is d
    other = diagnostic_of(ValueError("boom\nmore"))
    assert (other.code, other.message) == ("ValueError", "boom")
