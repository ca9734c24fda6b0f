"""Diagnostics as text, lint style: a header, the source line, a caret line.

policy.rules:3:12: error[unbound_variable]: variable `X` in the head ...
  3 | ok(X) :- person(Y).
    |    ^
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ..diagnostics import Diagnostic, Span
from ..values import escape

__all__ = ["render_diagnostic", "render_diagnostics", "sort_diagnostics"]

_WIDTH = 120  # longest source excerpt shown


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in text)


def _excerpt(line: str, start: int, end: int) -> tuple[str, str]:
    """The source line (shortened around the span) and its caret line."""
    line = line.rstrip("\r")
    start = min(max(start, 1), len(line) + 1)
    end = max(end, start + 1)
    left = 0
    if len(line) > _WIDTH:
        left = max(0, min(start - 1 - _WIDTH // 2, len(line) - _WIDTH))
        end = min(end, left + _WIDTH + 1)
    shown = _printable(line[left : left + _WIDTH])
    pad = "".join("\t" if c == "\t" else " " for c in shown[: start - 1 - left])
    lead = "..." if left else ""
    tail = "..." if left + _WIDTH < len(line) else ""
    return lead + shown + tail, " " * len(lead) + pad + "^" * max(1, min(end, len(line) + 2) - start)


def _at(span: Span, lines: list[str] | None) -> list[str]:
    """The source line of `span` and its caret line (none without the source)."""
    if lines is None or not 1 <= span.line <= len(lines):
        return []
    end = span.end_column if span.end_line == span.line else len(lines[span.line - 1]) + 1
    source, carets = _excerpt(lines[span.line - 1], span.column, end)
    gutter = str(span.line)
    return [f" {gutter} | {source}", f" {' ' * len(gutter)} | {carets}"]


def render_diagnostic(d: Diagnostic, lines: list[str] | None, sources: Mapping[str, list[str]] | None = None) -> str:
    """The header, the source excerpt, then `= help:` and `= note:` lines and
    each related place (`file:line:col: note: first declared here`) with its
    own excerpt when its file's lines are in `sources`."""
    out = [escape(f"{d.span.file or '<input>'}:{d.span.line}:{d.span.column}: {d.severity}[{d.code}]: {d.message}")]
    out += _at(d.span, lines)
    if d.help:
        out.append(escape(f"   = help: {d.help}"))
    out += [escape(f"   = note: {n}") for n in d.notes]
    for r in d.related:
        out.append(escape(f"{r.span}: note: {r.message}"))
        out += _at(r.span, lines if r.span.file == d.span.file else (sources or {}).get(r.span.file or "<input>"))
    return "\n".join(out)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """By file, then position; stable for equal positions."""
    return sorted(diagnostics, key=lambda d: (d.span.file or "", d.span.line, d.span.column))


def render_diagnostics(diagnostics: Iterable[Diagnostic], sources: Mapping[str, str]) -> str:
    """Each diagnostic as `FILE:LINE:COL: error[CODE]: message` with its source line."""
    split: dict[str, list[str]] = {}
    out = []
    for d in diagnostics:
        name = d.span.file or "<input>"
        if name not in split and name in sources:
            split[name] = sources[name].split("\n")
        for f in [r.span.file or "<input>" for r in d.related]:
            if f not in split and f in sources:
                split[f] = sources[f].split("\n")
        out.append(render_diagnostic(d, split.get(name), split))
    return "\n".join(out) + ("\n" if out else "")
