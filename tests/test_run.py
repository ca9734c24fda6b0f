"""`ordinance run` and Soufflé's I/O directives: fact files in, `.csv` out."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.diagnostics import InputError, OrdinanceError
from ordinance.engine import evaluate
from ordinance.facts.factfiles import read_inputs
from ordinance.rules import compile_text, format_program, parse

REACH = """\
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.input edge
.output path
.printsize path
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""


def run(tmp_path: Path, program: str, files: dict[str, str], *args: str) -> tuple[int, str, str]:
    (tmp_path / "facts").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / "facts" / name).write_text(text, encoding="utf-8")
    (tmp_path / "p.dl").write_text(program, encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(tmp_path / "p.dl"),
            "-F",
            str(tmp_path / "facts"),
            "-D",
            str(tmp_path / "out"),
            "--now",
            "2026-01-01T00:00:00Z",
            *args,
        ],
    )
    return result.exit_code, result.stdout, result.stderr


def test_a_souffle_program_runs_on_its_fact_files(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, REACH, {"edge.facts": "1\t2\n2\t3\n3\t4\n"})
    assert (code, out, err) == (0, "path\t6\n", "")
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n"


def test_filename_delimiter_and_headers(tmp_path: Path) -> None:
    program = """\
.decl person(name: symbol, age: number, score: float)
.decl adult(name: symbol, score: float)
.input person(IO=file, filename="people.csv", delimiter=",", headers=true)
.output adult(filename="grown/adults.tsv", headers=true)
adult(N, S) :- person(N, A, S), A >= 18.
"""
    files = {"people.csv": "name,age,score\nann,30,1.5\nbob,12,2\ncyd,18,0.25\n"}
    code, out, err = run(tmp_path, program, files)
    assert (code, err) == (0, "")
    assert (tmp_path / "out" / "grown" / "adults.tsv").read_text() == "name\tscore\nann\t1.5\ncyd\t0.25\n"


def test_a_whole_float_is_written_as_souffle_writes_it_and_reads_back(tmp_path: Path) -> None:
    # Soufflé writes floats with %.17g: `55`, not `55.0` (its aggregates5,
    # float_equality, rangeop... differed only so); others keep their shortest form
    program = ".decl v(x: float)\n.input v\n.decl w(x: float)\n.output w\nw(X * 2.0) :- v(X).\n"
    code, _, err = run(tmp_path, program, {"v.facts": "27.5\n-1\n0.05\n1e20\n"})
    assert (code, err) == (0, "")
    written = (tmp_path / "out" / "w.csv").read_text()
    assert sorted(written.split()) == sorted(["55", "-2", "0.1", "2e+20"])
    (tmp_path / "facts" / "v.facts").write_text(written)
    assert run(tmp_path, program, {"v.facts": written})[0] == 0
    assert sorted((tmp_path / "out" / "w.csv").read_text().split()) == sorted(["110", "-4", "0.2", "4e+20"])


def test_output_to_stdout(tmp_path: Path) -> None:
    program = REACH.replace(".output path", ".output path(IO=stdout)").replace(".printsize path\n", "")
    code, out, _ = run(tmp_path, program, {"edge.facts": "1\t2\n"})
    assert (code, out) == (0, "path\n1\t2\n")
    assert not (tmp_path / "out").exists()


def test_symbols_times_and_unsigned_values_read_and_write(tmp_path: Path) -> None:
    program = """\
.decl ev(who: symbol, at: time, n: unsigned)
.decl late(who: symbol, at: time, n: unsigned)
.input ev
.output late
late(W, T, M) :- ev(W, T, N), T > 2026-01-01T00:00:00Z, M = N - 1.
"""
    files = {"ev.facts": "a b\t2026-02-01T00:00:00Z\t0\nc\t2025-01-01T00:00:00Z\t5\n"}
    assert run(tmp_path, program, files)[0] == 0
    assert (tmp_path / "out" / "late.csv").read_text() == f"a b\t2026-02-01T00:00:00Z\t{2**64 - 1}\n"


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("1\t2\n2\tx\n", 2, 3, "`x` is not a number (column 2 of `edge`)"),
        ("1\t2\n\n3\n", 3, 1, "`edge` has 2 columns, this line has 1"),
        ("1\t99999999999999999999\n", 1, 3, "is not a 64-bit number"),
    ],
)
def test_a_malformed_fact_file_names_its_file_and_line(
    tmp_path: Path, text: str, line: int, column: int, message: str
) -> None:
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text(text)
    with pytest.raises(InputError) as info:
        read_inputs(compile_text(REACH), str(facts))
    d = info.value.diagnostics[0]
    assert (d.code, d.span.file, d.span.line, d.span.column) == ("fact_file", str(facts / "edge.facts"), line, column)
    assert message in d.message
    code, _, err = run(tmp_path, REACH, {"edge.facts": text})
    assert code == 2 and err.startswith(f"error[fact_file]: {facts / 'edge.facts'}:{line}:")


def test_a_missing_fact_file_is_an_error_naming_it(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, REACH, {})
    assert code == 2
    assert "error[fact_file]" in err and "cannot read" in err and "edge.facts" in err


def test_directives_parse_print_and_check() -> None:
    text = (
        '.decl a(x: number)\n.input a\n.input a(IO="file", filename="a.tsv", delimiter=",", headers="true")\n'
        ".output a\n.printsize a\n"
    )
    assert format_program(parse(text)) == text
    assert len(parse(".decl a(x: number)\n.output a, b\n").io) == 2
    for bad, code in [
        (".decl a(x: number)\n.output b", "unknown_relation"),
        (".decl a(x: number)\n.input a(IO=stdout)", "io_parameter"),
        (".decl a(x: number)\n.input a(compress=true)", "io_parameter"),
        (".decl a(x: number)\n.input a(headers=yes)", "io_parameter"),
        (".decl a(x: number)\n.input a(", "syntax"),
    ]:
        with pytest.raises(OrdinanceError) as info:
            compile_text(bad, "t.rules")
        assert info.value.code == code and info.value.diagnostics[0].span.line == 2, bad


QUOTED = """\
.decl note(who: symbol, text: symbol)
.decl copy(who: symbol, text: symbol)
.input note(rfc4180=true)
.output copy
.output copy(filename="copy.rfc.csv", rfc4180=true)
copy(W, T) :- note(W, T).
"""


def test_symbols_holding_a_delimiter_or_a_newline_stay_in_their_row(tmp_path: Path) -> None:
    notes = 'ann,"two\nlines"\nbob,"a\ttab, a comma and ""quotes"""\ncyd,plain\n'
    code, out, err = run(tmp_path, QUOTED, {"note.facts": notes})
    assert (code, err) == (0, "")
    # tab-separated: a field with a tab or a line break is quoted (Soufflé would break the row)
    assert (tmp_path / "out" / "copy.csv").read_text() == (
        'ann\t"two\nlines"\nbob\t"a\ttab, a comma and ""quotes"""\ncyd\tplain\n'
    )
    # rfc4180: Soufflé's quoting, and it reads back to the same tuples
    written = (tmp_path / "out" / "copy.rfc.csv").read_text()
    assert written == 'ann,"two\nlines"\nbob,"a\ttab, a comma and ""quotes"""\ncyd,plain\n'
    (tmp_path / "facts" / "again.facts").write_text(written, encoding="utf-8")
    program = compile_text(
        QUOTED.replace(".input note(rfc4180=true)", '.input note(filename="again.facts", rfc4180=true)')
    )
    assert set(read_inputs(program, str(tmp_path / "facts"))["note"]) == {
        ("ann", "two\nlines"),
        ("bob", 'a\ttab, a comma and "quotes"'),
        ("cyd", "plain"),
    }


def test_a_malformed_quoted_field_names_its_file_and_line(tmp_path: Path) -> None:
    program = compile_text(QUOTED)
    (tmp_path / "note.facts").write_text('ann,ok\nbob,"open"x\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_inputs(program, str(tmp_path))
    d = info.value.diagnostics[0]
    assert (d.code, d.span.line) == ("fact_file", 2) and "quoted" in d.message
    for bad in (".input note(rfc4180=yes)", '.input note(rfc4180=true, delimiter="\\"")'):
        with pytest.raises(OrdinanceError) as info:
            compile_text(QUOTED.replace(".input note(rfc4180=true)", bad))
        assert info.value.code == "io_parameter"


def test_a_leading_zero_is_a_decimal_number_as_in_souffle(tmp_path: Path) -> None:
    # issue 24 (5): `040` was refused (Python's base-0 int); Soufflé reads 40
    program = ".decl n(x: number, u: unsigned, a: number)\n.input n\n.output n\n"
    code, _, err = run(tmp_path, program, {"n.facts": "040\t007\t0x1F\n-010\t0\t-0x10\n"})
    assert (code, err) == (0, "")
    assert (tmp_path / "out" / "n.csv").read_text() == "-10\t0\t-16\n40\t7\t31\n"


@pytest.mark.parametrize("engine", ["python", "duckdb"])
def test_the_engines_write_the_same_outputs(tmp_path: Path, engine: str) -> None:
    program = REACH + ".decl far(x: number)\n.output far\nfar(X) :- edge(X, _), !path(X, 4), X > 0.\n"
    code, out, err = run(tmp_path, program, {"edge.facts": "1\t2\n2\t3\n3\t4\n5\t6\n"}, "--engine", engine)
    assert (code, out, err) == (0, "path\t7\n", "")
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n5\t6\n"
    assert (tmp_path / "out" / "far.csv").read_text() == "5\n"


def test_the_postgresql_engine_runs_on_its_url(tmp_path: Path, pg_admin_url: str) -> None:
    files = {"edge.facts": "1\t2\n2\t3\n3\t4\n"}
    code, out, err = run(tmp_path, REACH, files, "--engine", "postgresql", "--engine-url", pg_admin_url)
    assert (code, out, err) == (0, "path\t6\n", "")
    assert (tmp_path / "out" / "path.csv").read_text() == "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n"


def test_a_construct_the_sql_engine_does_not_compile_is_refused(tmp_path: Path) -> None:
    program = REACH + ".decl odd(x: number)\n.output odd\nodd(Y) :- edge(X, _), Y = X bshl 1.\n"
    code, _, err = run(tmp_path, program, {"edge.facts": "1\t2\n"}, "--engine", "duckdb")
    assert code != 0
    assert "error[unsupported_on_backend]" in err and "`bshl`" in err
    assert not (tmp_path / "out" / "path.csv").exists()


SAMEGEN = """\
.pragma "magic-transform" "*"
.decl samegen(x: number, y: number)
.decl node(x: number)
.input node()
.decl parent(x: number, y: number)
.input parent()
.decl query()
.output query()
samegen(x, x) :- node(x).
samegen(x, y) :- parent(x, a), samegen(a, b), parent(y, b).
query() :- samegen({left}, {right}).
"""


def _tree(height: int) -> dict[str, str]:
    """Soufflé's magic_samegen facts: a complete binary tree, nodes 1.. top down."""
    nodes = range(1, 2**height)
    return {
        "node.facts": "".join(f"{n}\n" for n in nodes),
        "parent.facts": "".join(f"{n}\t{n // 2}\n" for n in nodes if n > 1),
    }


def test_magic_transform_pragma_evaluates_the_outputs_on_demand(tmp_path: Path) -> None:
    # Soufflé's magic_samegen: every pair of a generation of a tree of height
    # 13 is 2.2e7 `samegen` tuples, over the tuple limit; on demand the
    # constants pass down and only one path is read
    program = SAMEGEN.format(left=2**12, right=2**13 - 1)
    code, out, err = run(tmp_path, program, _tree(13))
    assert (code, out, err) == (0, "", "")
    assert (tmp_path / "out" / "query.csv").read_text() == "()\n"  # a nullary relation, as Soufflé writes it
    code, _, _ = run(tmp_path, SAMEGEN.format(left=2**12, right=2**11), _tree(13))  # not of one generation
    assert code == 0 and (tmp_path / "out" / "query.csv").read_text() == ""


def test_outputs_on_demand_are_the_full_evaluations(tmp_path: Path) -> None:
    from ordinance.engine import evaluate
    from ordinance.engine.demand import outputs

    for left, right in ((8, 15), (8, 12), (9, 9), (4, 9)):
        checked = compile_text(
            SAMEGEN.format(left=left, right=right).replace(".input node()\n", "").replace(".input parent()\n", "")
        )
        db = {"node": [(n,) for n in range(1, 16)], "parent": [(n, n // 2) for n in range(2, 16)]}
        full, demanded = evaluate(checked, db), outputs(checked, db, ["query"], now=0)
        assert set(demanded.tuples("query")) == set(full.tuples("query"))
        assert len(demanded.tuples("samegen")) < len(full.tuples("samegen"))


def test_a_pragma_prints_back_and_lint_warns_of_one_that_changes_nothing() -> None:
    text = '.pragma "magic-transform" "*"\n.pragma "legacy"\na(1).\n'
    assert format_program(parse(text)) == text
    checked = compile_text(text)
    assert [p.key for p in checked.pragmas] == ["magic-transform", "legacy"]
    assert [(w.code, w.message) for w in checked.warnings] == [
        ("pragma", "pragma `legacy` changes nothing here, only `magic-transform` does")
    ]
    assert checked.source_hash == compile_text("a(1).\n").source_hash  # answers do not depend on it


def test_a_nullary_input_reads_any_line_as_its_tuple(tmp_path: Path) -> None:
    program = ".decl on()\n.input on\n.decl out()\n.output out\nout() :- on().\n"
    code, _, err = run(tmp_path, program, {"on.facts": "()\n"})
    assert (code, err) == (0, "") and (tmp_path / "out" / "out.csv").read_text() == "()\n"
    code, _, err = run(tmp_path, program, {"on.facts": ""})
    assert (code, err) == (0, "") and (tmp_path / "out" / "out.csv").read_text() == ""


COUNT = """\
.decl n(x: number)
.output n
.printsize n
n(0).
n(X + 1) :- n(X), X < 100005.
"""


def test_run_bounds_no_rounds_as_souffle_but_the_engine_default_does(tmp_path: Path) -> None:
    # Soufflé's independent_body3 needs ~10^6 rounds of one stratum: `run` has no round limit
    code, out, err = run(tmp_path, COUNT, {})
    assert (code, out, err) == (0, "n\t100006\n", "")
    # the engine's default (the gate's `Limits()`) still stops past 100,000 rounds
    with pytest.raises(OrdinanceError, match="more than 100000 iterations"):
        evaluate(compile_text(COUNT))
