"""The language reference (docs/language.md) and the constructs added since
(docs/language-more.md): every construct's accepted example lints clean, and
its rejected example fails with the code the page names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_cli_meta import page, section
from test_lint import codes_of, lint_bytes

PRELUDE = ".decl path(p: symbol)\n.decl n(x: number)\n.decl e(a: number, b: number)\n"
ROW = re.compile(r"^\| (?P<what>.+?) \| `(?P<ok>.+?)` \| `(?P<bad>.+?)` `(?P<code>[a-z_]+)` \|$")


def rows() -> list[tuple[str, str, str, str]]:
    text = section("Language reference", page("language.md"))
    text += section("Constructs Soufflé has that ordinance refused", page("language-more.md"))
    found = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            unescape = lambda s: s.replace("\\|", "|")  # noqa: E731  (a `|` inside a table cell)
            found.append((m["what"], unescape(m["ok"]), unescape(m["bad"]), m["code"]))
    return found


def test_the_reference_lists_the_constructs() -> None:
    names = " ".join(what for what, *_ in rows())
    for construct in ("contains", "starts_with", "match", "glob", "cat", "strlen", "substr", "ord", "to_string"):
        assert f"`{construct}(" in names, construct


@pytest.mark.parametrize(("what", "ok", "bad", "code"), rows(), ids=[r[0][:40] for r in rows()])
def test_each_example_lints_as_the_page_says(tmp_path: Path, what: str, ok: str, bad: str, code: str) -> None:
    accepted = lint_bytes(tmp_path, (PRELUDE + ok + "\n").encode(), "ok.rules")
    assert (accepted.exit_code, accepted.stdout) == (0, ""), ok
    rejected = lint_bytes(tmp_path, (PRELUDE + bad + "\n").encode(), "bad.rules")
    assert rejected.exit_code == 1 and codes_of(rejected)[:1] == [code], (bad, rejected.stdout)
