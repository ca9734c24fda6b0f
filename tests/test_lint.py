"""`ordinance lint`: output format, exit codes, and robustness on bad input."""

from __future__ import annotations

import random
import re
from pathlib import Path

from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from ordinance.cli.lint import MAX_BYTES, command

HEADER = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[a-z_]+)\]: (?P<msg>.+)$")


def lint(*args: str) -> Result:
    result = CliRunner().invoke(command, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def lint_bytes(tmp_path: Path, data: bytes, name: str = "x.rules") -> Result:
    path = tmp_path / name
    path.write_bytes(data)
    return lint(str(path))


def codes_of(result: Result) -> list[str]:
    return [m.group("code") for m in map(HEADER.match, result.stdout.splitlines()) if m]


README_EXAMPLE = """\
.decl lease(work: symbol, agent: symbol, epoch: number, expires: time)
.decl request(action: symbol, kind: symbol, target: symbol, agent: symbol, epoch: number)

// the newest epoch of each piece of work
latest_epoch(W, E) :- lease(W, _, _, _), E = max X : { lease(W, _, X, _) }.
// a request carrying an older epoch is refused
forbid(A, "stale-epoch", W) :- request(A, _, W, _, E), latest_epoch(W, L), E < L.
// the lease holder may act while the lease lasts
permit(A) :- request(A, _, W, Ag, E), lease(W, Ag, E, Until), $now < Until,
             !forbid(A, _, _).

test "an older epoch is refused" {
  now 2026-08-14T22:00:00Z.
  lease("w1", "alice", 1, 2026-08-14T23:00:00Z).
  lease("w1", "bob", 2, forever).
  request("a1", "write", "w1", "alice", 1).
  expect forbid("a1", "stale-epoch", "w1").
  expect not permit("a1").
}
.invariant "no permit for a forbidden request" :- permit(A), forbid(A, _, _).
"""


def test_a_clean_file_prints_nothing_and_exits_0(tmp_path: Path) -> None:
    result = lint_bytes(tmp_path, README_EXAMPLE.encode())
    assert (result.exit_code, result.stdout) == (0, "")


def test_errors_print_header_source_and_caret(tmp_path: Path) -> None:
    result = lint_bytes(tmp_path, b"q(1).\np(X) :- q(Y).\n")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    header = HEADER.match(lines[0])
    assert header and header.group("file").endswith("x.rules")
    assert (header.group("line"), header.group("col"), header.group("code")) == ("2", "3", "unbound_variable")
    assert lines[1:4] == [" 2 | p(X) :- q(Y).", "   |   ^", "found 1 error"]


def test_every_file_is_reported_and_the_worst_status_wins(tmp_path: Path) -> None:
    (tmp_path / "good.rules").write_text("p(1).\n")
    (tmp_path / "bad.rules").write_text("p(.\n")
    result = lint(str(tmp_path / "good.rules"), str(tmp_path / "bad.rules"))
    assert result.exit_code == 1 and codes_of(result) == ["syntax"]
    result = lint(str(tmp_path / "bad.rules"), str(tmp_path / "missing.rules"))
    assert result.exit_code == 2 and codes_of(result) == ["syntax"]


def test_a_missing_file_or_a_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for target in (tmp_path / "missing.rules", tmp_path):
        result = lint(str(target))
        assert result.exit_code == 2
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith(f"error: cannot read `{target}`")


def test_empty_file_is_fine(tmp_path: Path) -> None:
    assert lint_bytes(tmp_path, b"").exit_code == 0


def test_binary_garbage_is_diagnosed(tmp_path: Path) -> None:
    rng = random.Random(7)
    result = lint_bytes(tmp_path, bytes(rng.randrange(256) for _ in range(65536)))
    assert result.exit_code == 1 and codes_of(result) == ["encoding"]
    ascii_garbage = bytes(rng.randrange(1, 128) for _ in range(65536))
    result = lint_bytes(tmp_path, ascii_garbage)
    # (a line of it starting with `#` is a directive the preprocessor refuses)
    assert (
        result.exit_code == 1 and codes_of(result) and set(codes_of(result)) <= {"syntax", "too_deep", "preprocessor"}
    )


def test_invalid_utf8_points_at_the_byte(tmp_path: Path) -> None:
    result = lint_bytes(tmp_path, b'p("ok").\np("\xff").\n')
    assert codes_of(result) == ["encoding"]
    assert ":2:4: error[encoding]: file is not valid utf-8 (byte 0xff)" in result.stdout


def test_unterminated_string_and_deep_nesting(tmp_path: Path) -> None:
    assert codes_of(lint_bytes(tmp_path, b'p("abc).\n')) == ["syntax"]
    nested = b"p(X) :- q(X), X = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b".\n"
    assert codes_of(lint_bytes(tmp_path, nested)) == ["too_deep"]
    unbalanced = b"(" * 10_000
    assert codes_of(lint_bytes(tmp_path, unbalanced)) == ["too_deep"]


def test_files_over_the_limit_are_refused(tmp_path: Path) -> None:
    assert MAX_BYTES >= 10_000_000
    path = tmp_path / "x.rules"
    path.write_bytes(b"p(1).\n" * 400)
    result = lint("--max-bytes", "1000", str(path))
    assert result.exit_code == 1 and codes_of(result) == ["too_large"]
    assert "file is 2,400 bytes; lint reads at most 1,000" in result.stdout
    assert lint("--max-bytes", "0", str(path)).exit_code == 0


def test_ten_megabytes_of_garbage_are_diagnosed_not_refused(tmp_path: Path) -> None:
    rng = random.Random(11)
    chunk = bytes(rng.randrange(32, 127) for _ in range(100_000)) + b"\n"
    data = chunk * 100
    assert 10_000_000 <= len(data) <= MAX_BYTES
    result = lint_bytes(tmp_path, data)
    assert result.exit_code == 1
    codes = codes_of(result)
    assert codes and set(codes) <= {"syntax", "too_deep"}


def test_a_megabyte_of_facts_and_rules_is_linted(tmp_path: Path) -> None:
    # 20,000 lines, each read by the fast fact path, far past any per-line recursion (1000 frames);
    # nothing in the reader depends on the file's size but MAX_BYTES (2.5 MB took 50 s in a loaded suite)
    lines = [".decl edge(a: number, b: symbol, t: time)", "// edges"]
    lines += ["path(A, B) :- edge(A, _, _), edge(B, _, _)."]
    lines += [f'edge({i}, "n{i} // not a comment", 2026-08-14T23:00:00Z).' for i in range(20_000)]
    lines += ["far(A) :-", '  edge(A, "x", _).', 'edge(-1, "\\u00e9", forever).']
    data = "\n".join(lines).encode()
    assert len(data) > 1_000_000
    result = lint_bytes(tmp_path, data)
    assert (result.exit_code, result.stdout) == (0, "")
    broken = data.replace(b"edge(10000,", b"edge(10000 ").replace(b"edge(16000,", b"edge(16000,,")
    result = lint_bytes(tmp_path, broken)
    assert result.exit_code == 1
    headers = [m.groupdict() for m in map(HEADER.match, result.stdout.splitlines()) if m]
    assert [(h["line"], h["code"]) for h in headers] == [("10004", "syntax"), ("16004", "syntax")]


def test_diagnostics_in_included_files_show_their_source(tmp_path: Path) -> None:
    (tmp_path / "lib.rules").write_text("ok(1).\nbroken(.\n")
    result = lint_bytes(tmp_path, b'.include "lib"\n', "main.rules")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == " 2 | broken(."


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300) | st.text(alphabet="ab(){}\"'.,:-!_=<>+*/%$ \n\tXY0129TZ", max_size=300).map(str.encode))
def test_no_input_crashes_lint(tmp_path_factory: object, data: bytes) -> None:
    directory = tmp_path_factory.mktemp("fuzz")  # type: ignore[attr-defined]
    result = lint_bytes(directory, data)
    assert result.exit_code in (0, 1)
    if result.exit_code == 1:
        assert codes_of(result)


def test_a_string_builtin_with_a_variable_pattern_and_a_constant_subject_warns(tmp_path: Path) -> None:
    # issue 24: `glob(P, "**/.env")` passed lint and never matched
    f = tmp_path / "p.rules"
    f.write_text('path("x/.env").\nsecret(P) :- path(P), glob(P, "**/.env").\nok(P) :- path(P), glob("**/.env", P).\n')
    result = CliRunner().invoke(command, [str(f)])
    assert result.exit_code == 0  # a warning, not an error
    assert result.output.count("warning[swapped_arguments]") == 1
    assert 'swap them: `glob("**/.env", P)`' in result.output
    for builtin in ("contains", "starts_with", "match"):
        f.write_text(f'path("x").\nhit(P) :- path(P), {builtin}(P, "abc").\n')
        assert "warning[swapped_arguments]" in CliRunner().invoke(command, [str(f)]).output
