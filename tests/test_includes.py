"""`.include` stays inside the policy's tree, has a size cap, and lint never
prints a file that is not a policy; lint's output is capped."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ordinance.cli import cli
from ordinance.diagnostics import OrdinanceError
from ordinance.rules import load
from ordinance.rules import loader
from ordinance.rules.checks.relations import Suggester


def lint(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["lint", *args], env=env)
    return result.exit_code, result.output + result.stderr


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("root:x:0:0:SECRET-LINE\n")
    (tmp_path / "outside" / "more.rules").write_text(".decl extra(x: symbol)\n")
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "lib.rules").write_text(".decl lib(x: symbol)\n")
    (tmp_path / "policy" / "notes.txt").write_text("NOTE-SECRET do not print\n")
    return tmp_path


def write(tree: Path, include: str) -> Path:
    top = tree / "policy" / "top.rules"
    top.write_text(f'.include "{include}"\n.decl a(x: symbol)\n')
    return top


def test_an_include_inside_the_tree_is_read(tree: Path) -> None:
    assert "lib" in load(write(tree, "lib")).relations


@pytest.mark.parametrize("include", ["../outside/more", "../outside/secret.txt", "/etc/passwd"])
def test_an_include_outside_the_tree_is_refused_without_its_lines(tree: Path, include: str) -> None:
    top = write(tree, include)
    with pytest.raises(OrdinanceError) as err:
        load(top)
    assert err.value.code == "include_outside"
    status, out = lint(str(top))
    assert status == 1 and "include_outside" in out
    assert "SECRET" not in out and "root:" not in out


def test_a_directory_can_be_allowed_explicitly(tree: Path) -> None:
    top = write(tree, "../outside/more")
    assert "extra" in load(top, allow_includes=(tree / "outside",)).relations
    status, _ = lint(str(top), env={"ORDINANCE_INCLUDE_PATH": str(tree / "outside")})
    assert status == 0


def test_a_file_that_is_not_a_policy_is_not_printed(tree: Path) -> None:
    top = write(tree, "notes.txt")
    status, out = lint(str(top))
    assert status == 1 and "include_not_policy" in out
    assert "NOTE-SECRET" not in out
    top = write(tree, "../outside/secret.txt")
    status, out = lint(str(top), env={"ORDINANCE_INCLUDE_PATH": str(tree / "outside")})
    assert "include_not_policy" in out and "SECRET" not in out


def test_an_include_has_a_size_cap(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", 10)
    with pytest.raises(OrdinanceError) as err:
        load(write(tree, "lib"))
    assert err.value.code == "too_large"


def test_lint_prints_at_most_50_errors_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "many.rules"
    path.write_text("\n".join(f"p{i}(X) :- missing{i}(X)." for i in range(60)) + "\n")
    status, out = lint(str(path))
    assert status == 1
    assert out.count("error[unknown_relation]") == 50
    assert "found 60 errors (10 not shown: --max-errors 0 shows all)" in out
    status, out = lint(str(path), "--max-errors", "0")
    assert out.count("error[unknown_relation]") == 60


def test_suggestions_look_at_a_bounded_set_of_candidates() -> None:
    known = [f"rel{i}" for i in range(10_000)] + ["lease", "grant", "claim_valid"]
    suggest = Suggester(known)
    assert suggest("leese") == "lease"
    assert suggest("claim_vaild") == "claim_valid"
    assert suggest("zzzzzz") is None
    pools = [b for b in suggest._buckets.values()]
    assert max(len(b) for b in pools) <= 8
