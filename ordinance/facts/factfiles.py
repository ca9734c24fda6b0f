"""Soufflé's fact files: what `.input` reads and `.output` writes.

A relation's file is `<relation>.facts` in the facts directory (input) or
`<relation>.csv` in the output directory, unless `filename=` says otherwise
(relative to that directory). Columns are separated by a tab, or by
`delimiter=`; with `headers=true` the first line names the columns. Values
are written as they are, without quotes: symbols as text, numbers in decimal
(`unsigned` without a suffix, `float` as Python prints it but a whole
one without `.0`, `55` as Soufflé writes it), times as
ISO-8601 instants and durations as `15m`; reading accepts the same, and
integer seconds for times and durations. Records and ADT values are written
as Soufflé writes them, `[1, a]`, `nil`, `$A(1, [2, b])`, `$B` (symbols
inside unquoted); reading also takes symbols in double quotes (`[1, "a, b"]`).
A line that does not fit its relation's declaration is an `InputError`
naming the file and line.

With `rfc4180=true` (Soufflé's parameter; the delimiter defaults to `,`) a
field holding the delimiter, `"`, a carriage return or a line feed is
written between double quotes with its quotes doubled, and read so. Without
it Soufflé writes such a symbol as it is, which breaks the row; here it is
written quoted as rfc4180 does, so a row is always one line whatever a
symbol holds (read such a file back with `rfc4180=true`), and reading stays
Soufflé's: every field as it is.
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import Any, Iterable, Mapping

from ..diagnostics import Diagnostic, InputError, Span
from ..rules.ast import IODirective
from ..rules.checked import CheckedProgram
from ..rules.functors import Unsigned
from ..values import Branch, Record, format_duration, format_instant, parse_duration, parse_instant

__all__ = ["read_inputs", "write_output", "output_path", "input_path", "format_row", "format_fields", "MAX_ERRORS"]

MAX_ERRORS = 50
_INT = re.compile(r"[+-]?(?:0x[0-9a-fA-F]+|[0-9]+)")
_UNSIGNED = re.compile(r"(?:0x[0-9a-fA-F]+|[0-9]+)u?")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)")


def _options(d: IODirective) -> dict[str, str]:
    return dict(d.params)


def _rfc4180(opts: Mapping[str, str]) -> bool:
    return opts.get("rfc4180") == "true"


def _delimiter(opts: Mapping[str, str]) -> str:
    d = opts.get("delimiter", "," if _rfc4180(opts) else "\t")
    return d.encode("utf-8").decode("unicode_escape") if "\\" in d else d


def _quoted(field: str, delimiter: str, rfc4180: bool) -> str:
    """A field as written: between double quotes where it must be."""
    if any(c in field for c in (delimiter, "\n", "\r")) or rfc4180 and '"' in field:
        return '"' + field.replace('"', '""') + '"'
    return field


def _rows(text: str, delimiter: str, rfc4180: bool) -> Iterable[tuple[int, str, list[str]]]:
    """(line number, line, fields) per row; rfc4180 rows may span lines."""
    if not rfc4180:
        for n, line in enumerate(text.splitlines(), 1):
            yield n, line, line.split(delimiter)
        return
    reader = csv.reader(
        io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"', doublequote=True, strict=True
    )
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ValueError(str(e), reader.line_num) from None
        yield start, delimiter.join(fields), fields if fields else [""]
        start = reader.line_num + 1


def input_path(d: IODirective, facts_dir: str) -> str:
    return os.path.join(facts_dir, _options(d).get("filename", f"{d.relation}.facts"))


def output_path(d: IODirective, out_dir: str) -> str:
    return os.path.join(out_dir, _options(d).get("filename", f"{d.relation}.csv"))


Structures = Mapping[str, Mapping[str | None, tuple[str, ...]]]
_BARE = re.compile(r"[^,\])]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


class _Reader:
    """A record or ADT value in Soufflé's text, by its declared type."""

    def __init__(self, text: str, structures: Structures) -> None:
        self.text, self.pos, self.structures = text, 0, structures

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def take(self, char: str) -> None:
        self.skip()
        if not self.text.startswith(char, self.pos):
            raise ValueError(f"`{char}` expected at offset {self.pos + 1}")
        self.pos += 1

    def value(self, type_: str) -> Any:
        self.skip()
        shape = self.structures.get(type_)
        if shape is None:
            m = _QUOTED.match(self.text, self.pos) if type_ == "symbol" else None
            if m is not None:
                self.pos = m.end()
                return re.sub(r"\\(.)", r"\1", m.group(1))
            m = _BARE.match(self.text, self.pos)
            assert m is not None
            self.pos = m.end()
            return _value(m.group().strip(), type_)
        if None in shape:
            if self.text.startswith("nil", self.pos):
                self.pos += 3
                return ()
            fields: list[Any] = []
            self.take("[")
            for i, t in enumerate(shape[None]):
                if i:
                    self.take(",")
                fields.append(self.value(t))
            self.take("]")
            return Record(fields)
        self.take("$")
        m = _NAME.match(self.text, self.pos)
        if m is None or m.group() not in shape:
            raise ValueError(f"a branch of `{type_}` expected at offset {self.pos + 1}")
        self.pos = m.end()
        args: list[Any] = [m.group()]
        if shape[m.group()]:
            self.take("(")
            for i, t in enumerate(shape[m.group()]):
                if i:
                    self.take(",")
                args.append(self.value(t))
            self.take(")")
        return Branch(args)


def _structured(text: str, type_: str, structures: Structures) -> Any:
    reader = _Reader(text, structures)
    try:
        value = reader.value(type_)
        reader.skip()
        if reader.pos != len(text):
            raise ValueError(f"end of the value expected at offset {reader.pos + 1}")
    except ValueError as e:
        raise ValueError(f"a `{type_}` value ({e.args[0] if e.args else 'malformed'})") from None
    return value


def _integer(text: str) -> int:
    """A decimal or `0x` hexadecimal numeral: `040` is forty, as in Soufflé
    (Python's base-0 `int` refuses a leading zero)."""
    return int(text, 16) if "x" in text or "X" in text else int(text, 10)


def _value(text: str, type_: str | None, structures: Structures | None = None) -> Any:
    """A field's value by its column type; ValueError when it does not fit."""
    if structures and type_ is not None and type_ in structures:
        return _structured(text, type_, structures)
    if type_ in (None, "any"):
        return _integer(text) if _INT.fullmatch(text) else text
    if type_ == "symbol":
        return text
    if type_ == "number":
        if not _INT.fullmatch(text):
            raise ValueError("a number")
        value = _integer(text)
        if not -(2**63) <= value < 2**63:
            raise ValueError("a 64-bit number")
        return value
    if type_ == "unsigned":
        if not _UNSIGNED.fullmatch(text) or _integer(text.rstrip("u")) >= 2**64:
            raise ValueError("an unsigned number")
        return Unsigned(_integer(text.rstrip("u")))
    if type_ == "float":
        if not _FLOAT.fullmatch(text):
            raise ValueError("a float")
        return float(text)
    if type_ == "time":
        return int(text) if _INT.fullmatch(text) else parse_instant(text)
    if type_ == "duration":
        return int(text) if _INT.fullmatch(text) else parse_duration(text)
    return text


def _text(value: Any, type_: str | None) -> str:
    if isinstance(value, Branch):
        args = ", ".join(_text(v, None) for v in value.args)
        return f"${value.name}({args})" if args else f"${value.name}"
    if isinstance(value, tuple):
        return f"[{', '.join(_text(v, None) for v in value)}]" if value else "nil"
    if type_ == "time" and type(value) is int:
        return format_instant(value)
    if type_ == "duration" and type(value) is int:
        return "-" + format_duration(-value) if value < 0 else format_duration(value)
    if isinstance(value, float):  # a whole float as Soufflé's `%.17g` writes it (`55`), else the shortest exact form
        return format(value, ".17g") if value.is_integer() else repr(value)
    return str(int(value)) if isinstance(value, int) else str(value)


def read_inputs(program: CheckedProgram, facts_dir: str) -> dict[str, list[tuple[Any, ...]]]:
    """The facts of every `.input` relation; InputError with every problem found."""
    facts: dict[str, list[tuple[Any, ...]]] = {}
    found: list[Diagnostic] = []
    for d in program.io:
        if d.kind != "input":
            continue
        rel = program.relations[d.relation]
        path = input_path(d, facts_dir)
        try:
            with open(path, encoding="utf-8", newline="") as f:
                text = f.read()
        except OSError as e:
            found.append(
                Diagnostic(
                    "fact_file",
                    f"cannot read `{path}` for `.input {d.relation}`: {(e.strerror or str(e)).lower()}",
                    d.span,
                )
            )
            continue
        except UnicodeDecodeError as e:
            found.append(
                Diagnostic("fact_file", f"`{path}` is not valid utf-8 (byte {e.start})", Span(1, 1, 1, 2, path))
            )
            continue
        opts = _options(d)
        delimiter = _delimiter(opts)
        types = rel.types or (None,) * rel.arity
        rows = facts.setdefault(d.relation, [])
        try:
            parsed = list(_rows(text, delimiter, _rfc4180(opts)))
        except ValueError as e:
            line_no = e.args[1]
            found.append(
                Diagnostic(
                    "fact_file", f"malformed quoted field: {str(e.args[0]).lower()}", Span(line_no, 1, line_no, 2, path)
                )
            )
            continue
        for n, line, fields in parsed:
            if n == 1 and opts.get("headers") == "true" or line == "":
                continue
            if rel.arity == 0:  # any line holds a nullary relation (Soufflé writes `()`)
                rows.append(())
                continue
            if len(fields) != rel.arity:
                found.append(
                    Diagnostic(
                        "fact_file",
                        f"`{d.relation}` has {rel.arity} columns, this line has {len(fields)}",
                        Span(n, 1, n, len(line) + 1, path),
                    )
                )
                continue
            row: list[Any] = []
            column = 1
            for field, type_ in zip(fields, types):
                try:
                    row.append(_value(field, type_, program.structures))
                except ValueError as e:
                    want = e.args[0] if e.args and " " in str(e.args[0]) else f"a {type_}"
                    shown = field if len(field) <= 24 else field[:21] + "..."
                    found.append(
                        Diagnostic(
                            "fact_file",
                            f"`{shown}` is not {want} (column {len(row) + 1} of `{d.relation}`)",
                            Span(n, column, n, column + len(field), path),
                        )
                    )
                    break
                column += len(field) + len(delimiter)
            else:
                rows.append(tuple(row))
            if len(found) >= MAX_ERRORS:
                break
    if found:
        raise InputError(found[:MAX_ERRORS])
    return facts


def format_fields(t: tuple[Any, ...], types: tuple[str, ...] | None) -> list[str]:
    """A tuple's fields as a fact file writes them."""
    return [_text(v, types[i] if types and i < len(types) else None) for i, v in enumerate(t)]


def format_row(t: tuple[Any, ...], types: tuple[str, ...] | None, delimiter: str = "\t", rfc4180: bool = False) -> str:
    """One line of a fact file; `()` for the tuple of a nullary relation, as Soufflé writes it."""
    if not t:
        return "()"
    return delimiter.join(_quoted(f, delimiter, rfc4180) for f in format_fields(t, types))


def _order(t: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    return tuple((isinstance(v, str), v) for v in t)


def write_output(program: CheckedProgram, d: IODirective, rows: Iterable[tuple[Any, ...]], out_dir: str) -> str:
    """Write one `.output` relation's file (sorted rows); its path."""
    rel = program.relations[d.relation]
    opts = _options(d)
    delimiter = _delimiter(opts)
    path = output_path(d, out_dir)
    lines = []
    if opts.get("headers") == "true":
        names = [p.name for p in rel.decl.params] if rel.decl is not None else [f"x{i}" for i in range(rel.arity)]
        lines.append(delimiter.join(names))
    lines += [format_row(t, rel.types, delimiter, _rfc4180(opts)) for t in sorted(rows, key=_order)]
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(line + "\n" for line in lines))
    return path
