"""The C preprocessor's directives Soufflé's programs use (rules/preprocess.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ordinance.diagnostics import OrdinanceError, ParseError
from ordinance.engine import evaluate
from ordinance.rules import compile_text, load, parse
from ordinance.rules.preprocess import preprocess

PROGRAM = """\
#define TRUE 1 // a comment is not the macro's
#define HOMER ["Homer", 742]
.type Who = [name: symbol, house: number]
.decl lives(w: Who, here: number)
.decl says(text: symbol)
lives(HOMER, TRUE).
says("TRUE stays in a string"). // TRUE in a comment
/* a comment over lines
#define TRUE 2
*/
#ifdef TRUE
says("defined").
#else
says("not defined").
#endif
#if !defined(FALSE) && TRUE == 1 || 0 && (1 != 1)
says("if").
#elif 1
says("elif").
#endif
#undef TRUE
says(TRUE).
"""


def test_constants_guards_and_conditions_as_the_c_preprocessor() -> None:
    model = evaluate(compile_text(PROGRAM.replace("says(TRUE).", "")))
    assert set(model.tuples("lives")) == {(("Homer", 742), 1)}
    assert set(model.tuples("says")) == {("TRUE stays in a string",), ("defined",), ("if",)}


def test_lines_keep_their_numbers_and_an_undefined_macro_is_a_name() -> None:
    text = preprocess(PROGRAM, "p.dl")
    assert text.count("\n") == PROGRAM.count("\n")
    with pytest.raises(OrdinanceError) as caught:
        compile_text(PROGRAM, "p.dl")  # `says(TRUE)` after `#undef`: TRUE is a variable again
    [d] = caught.value.diagnostics
    assert d.span is not None and (d.span.file, d.span.line) == ("p.dl", PROGRAM.count("\n"))


def test_an_include_with_a_guard_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "edb.dl").write_text("#ifndef EDB\n#define EDB\n.decl e(x: number)\ne(1).\n#endif\n", encoding="utf-8")
    (tmp_path / "main.dl").write_text(
        '#include "edb.dl"\n#include <edb.dl>\n.decl out(x: number)\nout(X) :- e(X).\n', encoding="utf-8"
    )
    assert set(evaluate(load(str(tmp_path / "main.dl"))).tuples("out")) == {(1,)}


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("#define SQUARE(x) ((x) * (x))\n", 1, "function-like macro `SQUARE` is not supported"),
        (".decl a(x: number)\n#pragma once\n", 2, "directive `#pragma` is not supported"),
        ("#ifdef A\n.decl a(x: number)\n", 1, "`#if` without `#endif`"),
        ("#else\n", 1, "`#else` without `#if`"),
        ("#if defined(A && 1\n#endif\n", 1, "cannot read `#if defined(A && 1`: a `(` is not closed"),
        (".decl a(x: number)\n#define LONG \\\n  1\n#pragma \\\n  once\n", 4, "directive `#pragma` is not supported"),
        ("#if A +\n#endif\n", 1, "cannot read `#if A +`"),
        ("#include edb.dl\n", 1, '`#include` names a file as `"file"`'),
    ],
)
def test_what_it_does_not_carry_out_is_a_preprocessor_error_at_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, "p.dl")
    [d] = caught.value.diagnostics
    assert d.code == "preprocessor" and d.span is not None and d.span.line == line
    assert d.message.startswith(message)


def test_a_program_without_directives_is_left_as_it_is() -> None:
    text = 'says("#not a directive").\n  // # nor this\n'
    assert preprocess(text) is text
