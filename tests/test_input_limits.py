"""No `error[internal]` on input: each bad input has its own code, and
nesting, integer size and file size have limits."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from ordinance.cli import cli
from ordinance.cli.init import CLAUDE_CODE_POLICY
from ordinance.diagnostics import OrdinanceError
from ordinance.facts import MAX_JSON_DEPTH, MAX_LINE_BYTES, open_store, parse_json, schema_of
from ordinance.rules import compile_text
from ordinance.serve import Principal, Service
from ordinance.serve.mcp import create_mcp

SCRIPT = Path(sys.executable).parent / "ordinance"


def code_of(text: str, **kw: Any) -> str:
    with pytest.raises(OrdinanceError) as err:
        parse_json(text, **kw)
    return err.value.code


def test_json_is_read_with_bounded_nesting_and_integers() -> None:
    assert parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    assert code_of("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)) == "too_deep"
    assert code_of("[" * 100_000 + "]" * 100_000) == "too_deep"  # the parser's recursion, refused as data
    assert code_of('{"a": ' * 100_000 + "1" + "}" * 100_000) == "too_deep"
    assert code_of("9" * 5000) == "integer_range"  # never converted (Python refuses past 4300 digits)
    assert parse_json(str(2**63 - 1)) == 2**63 - 1
    assert code_of("NaN") == code_of("[Infinity]") == "bad_json"
    assert code_of("{") == "bad_json"
    assert code_of(b"\xff") == "encoding"


def run_cli(*args: str, **kw: Any) -> Any:
    return CliRunner().invoke(cli, list(args), **kw)


@pytest.mark.parametrize(
    "fact, code",
    [
        ("f(1.0 / 0.0).", "division_by_zero"),
        ('f(to_float("nan")).', "invalid_number"),
        ("n(1 / 0).", "division_by_zero"),
        ('g(to_string(to_float("nan"))).', "invalid_number"),
    ],
)
def test_a_policy_fact_that_cannot_be_evaluated_has_its_code(tmp_path: Path, fact: str, code: str) -> None:
    decls = ".decl f(x: float)\n.decl n(x: number)\n.decl g(x: symbol)\n.output f\n.output n\n.output g\n"
    (tmp_path / "p.rules").write_text(decls + fact + "\n")
    result = run_cli("run", str(tmp_path / "p.rules"))
    assert result.exit_code == 2 and f"error[{code}]" in result.output, result.output
    assert "internal" not in result.output


@pytest.mark.parametrize("command", ["lint", "test"])
def test_an_endless_file_is_read_with_a_bound(command: str) -> None:
    """`/dev/zero` never ends: the read stops at the limit (a subprocess, so
    an unbounded read would be killed by the timeout, not fill this memory)."""
    done = subprocess.run([str(SCRIPT), command, "/dev/zero"], capture_output=True, text=True, timeout=120)
    assert "error[too_large]" in done.stdout + done.stderr, (done.stdout, done.stderr)
    assert done.returncode in (1, 2)


def test_the_command_hook_reads_deep_json_as_too_deep(tmp_path: Path) -> None:
    (tmp_path / "policy.rules").write_text(CLAUDE_CODE_POLICY)
    body = "[" * 100_000 + "]" * 100_000
    result = run_cli(
        "hook", "claude-code", "--db", str(tmp_path / "o.db"), "--policy", str(tmp_path / "policy.rules"), input=body
    )
    out = json.loads(result.stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "error[too_deep]" in out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("field", [{"uses": 5}, {"needs": [1, 2]}, {"key": 5}])
def test_mcp_tools_refuse_a_request_field_of_the_wrong_type(tmp_path: Path, field: dict[str, Any]) -> None:
    policy = compile_text(CLAUDE_CODE_POLICY)
    request = {"id": "m1", "kind": "Bash", "target": "/p", "epoch": 1, **field}
    with open_store(str(tmp_path / "m.db"), schema_of(policy)) as store:
        server = create_mcp(Service(policy, store), Principal("claude-code"))

        async def go() -> list[Any]:
            async with Client(server) as c:
                return [
                    await c.call_tool("check", {"request": request}),
                    await c.call_tool("query", {"pattern": "permit(X)", "request": request}),
                ]

        for result in asyncio.run(go()):
            assert result.is_error and "error[bad_field]" in result.content[0].text, result.content
        assert store.events(kinds=["decision"]) == []


def test_load_reads_an_endless_file_line_by_line_with_a_bound(tmp_path: Path) -> None:
    """`ordinance load /dev/zero` stops at the line bound with one line
    naming the file and the line (a subprocess: an unbounded read would be
    killed by the timeout, not fill this test's memory)."""
    (tmp_path / "p.rules").write_text('.include "continuity"\n')
    args = [str(SCRIPT), "load", "--db", str(tmp_path / "l.db"), "--policy", str(tmp_path / "p.rules"), "/dev/zero"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert lines == [f"error[too_large]: /dev/zero:1: a line longer than {MAX_LINE_BYTES} bytes"], lines
    assert done.returncode == 2


def test_load_bounds_each_line_and_the_file_and_writes_nothing_past_them(store_url: str, tmp_path: Path) -> None:
    from io import BytesIO

    from ordinance.diagnostics import StoreError
    from ordinance.facts import read_lines

    fact = b'{"relation": "grant", "args": ["alice", "deploy", 1]}\n'
    assert read_lines(BytesIO(fact * 3), "f", max_line=len(fact)) == [fact.decode()] * 3
    with pytest.raises(StoreError) as long:
        read_lines(BytesIO(fact + b"x" * 100 + b"\n"), "f.jsonl", max_line=len(fact))
    assert long.value.code == "too_large" and str(long.value).endswith(
        f"f.jsonl:2: a line longer than {len(fact)} bytes"
    )
    with pytest.raises(StoreError) as big:
        read_lines(BytesIO(fact * 3), "f.jsonl", max_bytes=2 * len(fact))
    assert big.value.code == "too_large" and "f.jsonl:3: the file is longer than" in str(big.value)
    # through the command, on both backends: a refused file writes nothing
    (tmp_path / "p.rules").write_text('.include "continuity"\n')
    (tmp_path / "f.jsonl").write_bytes(fact + b'{"relation": "grant", "args": ["' + b"x" * MAX_LINE_BYTES + b'"]}\n')
    result = run_cli("load", "--db", store_url, "--policy", str(tmp_path / "p.rules"), str(tmp_path / "f.jsonl"))
    assert result.exit_code == 2 and "error[too_large]" in result.output and "f.jsonl:2:" in result.output
    policy = compile_text('.include "continuity"\n')
    with open_store(store_url, schema_of(policy)) as store:
        assert store.revision() == 0
