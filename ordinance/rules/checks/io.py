"""I/O directives: `.input`, `.output` and `.printsize` name relations the
program knows and take Soufflé's parameters (`IO=file` or, for output,
`IO=stdout`; `filename=`, `delimiter=`, `headers=true|false`,
`rfc4180=true|false`); a `.pragma` other than `magic-transform` changes
nothing here (a warning).
Codes: `unknown_relation`, `io_parameter`, `pragma`."""

from __future__ import annotations

from typing import Mapping

from ...diagnostics import Diagnostic
from .. import ast
from .relations import known_relations

__all__ = ["check_io", "IO_PARAMETERS", "PRAGMAS"]

IO_PARAMETERS = ("IO", "filename", "delimiter", "headers", "rfc4180")
PRAGMAS = ("magic-transform",)  # the `.pragma` keys that change something (`run` on demand)


def check_io(items: tuple[ast.Item, ...], extensional: Mapping[str, int]) -> list[Diagnostic]:
    known = known_relations(items, extensional)
    found: list[Diagnostic] = []
    for item in items:
        if isinstance(item, ast.Pragma) and item.key not in PRAGMAS:
            message = f"pragma `{item.key}` changes nothing here, only `magic-transform` does"
            found.append(Diagnostic("pragma", message, item.span, severity="warning"))
        if not isinstance(item, ast.IODirective):
            continue
        if item.relation not in known:
            found.append(
                Diagnostic("unknown_relation", f"unknown relation `{item.relation}` in `.{item.kind}`", item.span)
            )
        for key, value in item.params:
            if key not in IO_PARAMETERS:
                expected = ", ".join(f"`{k}`" for k in IO_PARAMETERS)
                found.append(
                    Diagnostic(
                        "io_parameter",
                        f"unknown parameter `{key}` of `.{item.kind}`, expected one of {expected}",
                        item.span,
                    )
                )
            elif key == "IO" and value not in (("file",) if item.kind == "input" else ("file", "stdout")):
                found.append(Diagnostic("io_parameter", f"`IO={value}` is not supported for `.{item.kind}`", item.span))
            elif key in ("headers", "rfc4180") and value not in ("true", "false"):
                found.append(Diagnostic("io_parameter", f"`{key}` is `true` or `false`, got `{value}`", item.span))
            elif (
                key == "delimiter"
                and len(value.encode("utf-8").decode("unicode_escape") if "\\" in value else value) != 1
            ):
                found.append(Diagnostic("io_parameter", "`delimiter` is one character", item.span))
        params = dict(item.params)
        if params.get("rfc4180") == "true" and params.get("delimiter") == '"':
            found.append(Diagnostic("io_parameter", 'with `rfc4180=true` the `delimiter` cannot be `"`', item.span))
    return found
