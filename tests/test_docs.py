"""The documentation site (docs/, mkdocs.yml): it builds strictly, its
generated pages are current, the README is a front page, and the examples of
the pages no other test runs run here (test_cli_meta: the tutorial and the
README's example; test_language_reference; test_docs_serve;
test_docs_projections; test_json_output: the schema)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from test_cli_meta import README, ROOT, normalised, page, run_as_written, section, shell_steps

sys.path.insert(0, str(ROOT / "tools"))
import gen_docs  # noqa: E402

NAV = re.findall(r"^\s+- [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)


def blocks(text: str, lang: str = "") -> list[str]:
    """The fenced blocks of `text` whose info string is `lang` (one indented
    in a list item too, without its indent)."""
    found = re.findall(r"^( *)```(\w*)\n(.*?)^\1```$", text, re.M | re.S)
    return [textwrap.dedent(body) if indent else body for indent, info, body in found if info == lang]


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "threat-model" / "index.html").exists() and (tmp_path / "cli" / "index.html").exists()


def test_every_page_is_in_the_nav_and_incoming_notes_are_not() -> None:
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert set(NAV) == pages
    assert "_incoming/" in (ROOT / "mkdocs.yml").read_text()  # excluded: the build passes with or without them


def test_the_generated_pages_are_current() -> None:
    # in a fresh interpreter, as a user runs it: the help text of commands
    # other tests loaded or changed in this process is not the command line's
    done = subprocess.run([sys.executable, "tools/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert set(gen_docs.PAGES) == {"cli.md", "errors.md", "json.md", "index.md"}


def test_the_cli_reference_is_every_command_and_its_help() -> None:
    reference = page("cli.md")
    for name in ("rehydrate", "state", "export"):
        shown = CliRunner().invoke(cli, [name, "--help"], terminal_width=88).output
        assert shown.splitlines()[2] in reference  # the command's first help line


def test_the_readme_is_a_front_page() -> None:
    assert len(README.splitlines()) <= 250
    for name in NAV:
        if name != "index.md":
            assert f"](docs/{name})" in README, name


def test_the_threat_model_says_what_the_gate_does_not_stop() -> None:
    text = page("threat-model.md")
    stops = " ".join(section("What the gate does not stop", text).replace("**", "").split())
    assert "same operating-system user" in stops and "without the host's sandbox" in stops


def test_every_performance_table_says_how_to_rerun_it() -> None:
    text = page("performance.md")
    for title in re.findall(r"^## (.+)$", text, re.M):
        body = section(title, text)
        assert re.search(r"benchmarks/bench_\w+\.py", body) and "\n| " in body, title
        assert not re.search(r"\[[\d.]+ ?(ms|s|µs)", body), f"{title}: dated figures belong in benchmarks/README.md"
    for script in set(re.findall(r"benchmarks/(bench_\w+\.py)", text)):
        assert (ROOT / "benchmarks" / script).exists(), script


def test_the_rule_language_examples_lint_and_test_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.rules").write_text(blocks(page("language.md"))[0])  # "This file passes ..."
    for command in (["lint", "policy.rules"], ["test", "policy.rules"]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 0, (command, result.output)


def test_the_lint_example_prints_what_it_shows(tmp_path: Path) -> None:
    steps = [step for step in shell_steps(page("language.md")) if "bad.rules" in step[0]]
    assert [cmd.split()[:2] for cmd, _ in steps] == [["cat", ">"], ["ordinance", "lint"]]
    run_as_written(steps, tmp_path)


def test_the_invariants_example_breaks_as_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = section("Invariants: say what must never happen", page("language.md"))
    policy = next(b for b in blocks(text) if ".invariant" in b and not b.startswith("$"))
    shown = next(b for b in blocks(text) if b.startswith("$ ordinance fuzz"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.rules").write_text(policy)
    command = shown.splitlines()[0][2:].split()
    result = CliRunner().invoke(cli, command[1:])
    assert result.exit_code == 1
    assert normalised(result.output.splitlines()) == normalised(shown.splitlines()[1:])


def test_the_demo_excerpt_is_what_the_demo_prints() -> None:
    text = section("What the demo shows", page("getting-started.md"))
    [excerpt] = blocks(text)
    shown = normalised(excerpt.splitlines())
    played = normalised(CliRunner().invoke(cli, ["demo", "arc_c_epoch_takeover"]).output.splitlines())
    start = played.index(shown[0])  # the excerpt is a run of the demo's lines, as printed
    assert played[start : start + len(shown)] == shown


def test_the_python_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The From Python page's blocks, in order and in one namespace, in a
    project `ordinance init` made (given the `push` they guard)."""
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["init", "."]).exit_code == 0
    grants = ['grant("alice", "prod", 1).', 'grant("alice", "main", 1).']
    assert CliRunner().invoke(cli, ["assert", *grants]).exit_code == 0
    pushed: list[str] = []
    namespace: dict[str, object] = {"push": lambda: pushed.append("main")}
    try:
        for code in blocks(page("python.md"), "python"):
            exec(compile(code, "python.md", "exec"), namespace)
    finally:
        namespace["store"].close()  # type: ignore[attr-defined]
    assert namespace["decision"].allowed and pushed == ["main"]  # alice holds the grants the blocks ask for
    assert namespace["missing"] is not None and namespace["rows"] == []
