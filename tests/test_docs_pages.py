"""The examples of the pages no other test ran: docs/limits.md, sql.md,
hosts.md, other-hosts.md, language-more.md and getting-started.md's
install and environment blocks; language.md's two fragments, audit.md's
excerpt, design.md's module map, performance.md's benchmark lines and the
help examples cli.md shows.

Each block runs as written and prints what the page shows (an output shown
with `...` shows the parts around it; a `# comment` after it is not output).
What a user has and a test has not (their paths, a fixed port, `$TOKEN`, the
store a sentence describes) the test puts in, as each test says. The lines
that cannot run here are checked statically, and are listed in STATIC with
why."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import time
import tomllib
import warnings
from pathlib import Path
from typing import Iterator

import click
import httpx
import pytest
from click.testing import CliRunner, Result

from ordinance.cli import cli
from ordinance.facts import Event, open_store, schema_of
from ordinance.rules import compile_text
from served import AGENT, Served, write_tokens
from test_cli_meta import ROOT, normalised, page, run_steps, section, shell_steps
from test_deadline import CROSS
from test_docs import blocks

BIN = Path(sys.executable).parent

# the lines no test runs as written, and why; each is checked for what it can be
STATIC = {
    "pip install 'ordinance[duckdb]'": "installs a package: the extra is checked in pyproject.toml",
    "pip install 'ordinance[server]'": "installs a package: the extra is checked in pyproject.toml",
    "benchmarks/bench_": "a benchmark takes minutes: the script exists and its --help lists each option used",
    ".ci/install-clients": "npm installs the real clients: the script exists",
    "tests/test_e2e_": "the end-to-end tests run the real clients (minutes): the files exist",
    "ORDINANCE_E2E_CAPTURE=1": "refreshes the captured fixtures: the tests read the variable",
    "python3 -m venv .venv": "makes a venv and installs into it: the README's command and the CI's, checked equal",
    "cli.md": "each help example needs a store, a server or a user's files: its command and options exist",
    ".hint claim_source": "a fragment of a policy: it lints in one that includes the stdlib",
    "design.md": "a map of the modules, not a command: the paths it names exist",
}

# what a page's shown output has that a run's differs in: the wall clock's
# `now`, the time a deadline had left when the evaluation started
MASKS = ((r"now [0-9TZ:.-]+,", "now NOW,"), (r"deadline of [\d.]+ seconds", "deadline of S seconds"))


def masked(lines: list[str]) -> list[str]:
    text = "\n".join(re.sub(r"\s+# .*$", "", line) for line in normalised(lines))  # a comment is not output
    for pattern, mask in MASKS:
        text = re.sub(pattern, mask, text)
    return text.splitlines()


def assert_shows(shown: list[str], got: str, command: str) -> None:
    """`got` is the output `shown`; a `...` in a line stands for anything."""
    want, have = masked(shown), masked(got.splitlines())
    assert len(want) == len(have), (command, have)
    for line, real in zip(want, have):
        assert re.fullmatch(".*".join(map(re.escape, line.split("..."))), real), (command, real)


def ordinance(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str = "") -> Result:
    """`ordinance ARGS` in `cwd`, in this process (the blocks themselves run
    in bash: this is the test's own setting up and asking)."""
    with contextlib.chdir(cwd):
        return CliRunner().invoke(cli, list(args), env=env, input=stdin)


@contextlib.contextmanager
def serving(command: str, cwd: Path, env: dict[str, str], port: int) -> Iterator[None]:
    """`command` (an `ordinance serve` line) running until the block ends."""
    proc = subprocess.Popen(
        ["bash", "-c", "exec " + command],
        cwd=cwd,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not answer within 60 s"
                time.sleep(0.1)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_every_block_of_these_pages_is_run_or_listed() -> None:
    """The count of each page's blocks is the count the tests below take:
    a new block fails here until a test runs it (or STATIC lists it)."""
    counts = {"limits.md": 5, "sql.md": 5, "hosts.md": 3, "other-hosts.md": 3}
    for name, count in counts.items():
        assert len(re.findall(r"^```\w*$", page(name), re.M)) == 2 * count, name
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"duckdb", "server", "spark"} <= set(extras)


# --- docs/limits.md ---------------------------------------------------------


def test_the_server_refuses_before_it_reads(tmp_path: Path) -> None:
    """On a server of the test's (its own port for 8377, an agent's token in
    `$TOKEN`): an unauthenticated 1 GB body is refused unread, a deep one
    from a caller with a token is `too_deep`."""
    steps = shell_steps(section("The server reads a body only after it knows the caller", page("limits.md")), "console")
    assert [c.split()[0] for c, _ in steps] == ["curl", "python"]
    (tmp_path / "policy.rules").write_text('.include "continuity"\n')
    with Served(tmp_path / "policy.rules", str(tmp_path / "o.db"), write_tokens(tmp_path / "tokens.toml")) as server:
        mine = [(c.replace("8377", str(server.port)), shown) for c, shown in steps]
        done = run_steps(mine, tmp_path, env={"TOKEN": AGENT})
    for (command, shown), (got, _) in zip(mine, done):
        assert_shows(shown, got, command)


def initialised(project: Path) -> None:
    """`ordinance init .` in `project`, its policy dated back: the policy
    cache keeps no file written within the last second, and every command
    after this one would check it afresh."""
    assert ordinance("init", ".", cwd=project).exit_code == 0
    os.utime(project / "policy.rules", (0, 0))


def test_load_stops_at_the_first_bound(tmp_path: Path) -> None:
    """In a project `ordinance init` made."""
    initialised(tmp_path)
    steps = [s for s in shell_steps(page("limits.md"), "console") if s[0] == "ordinance load /dev/zero"]
    [(command, shown)] = steps
    [(got, status)] = run_steps(steps, tmp_path, stderr=True)
    assert_shows(shown, got, command)
    assert status == 2


def test_a_doubling_symbol_stops_at_the_symbol_limit(tmp_path: Path) -> None:
    """doubling.rules is written as the page's `cat` shows it."""
    steps = [s for s in shell_steps(page("limits.md"), "console") if "doubling.rules" in s[0]]
    assert [c for c, _ in steps] == ["cat doubling.rules", "ordinance run doubling.rules"]
    (tmp_path / "doubling.rules").write_text("\n".join(steps[0][1]) + "\n")
    done = run_steps(steps, tmp_path, stderr=True)
    for (command, shown), (got, _) in zip(steps, done):
        assert_shows(shown, got, command)
    assert done[1][1] == 2


def test_the_cli_deadline_covers_the_model_build(tmp_path: Path) -> None:
    """On the store the page describes (test_deadline's: facts making a 3000 x
    3000 cross product) as ./ordinance.db and ./policy.rules, the policy
    checked once before (by `ordinance log`), as a user's is.

    What it prints depends on the machine, so the test takes what holds on
    any: exit status 2 and a deadline. When the engine's deadline cut the
    build (a quiet machine), the page's lines, but for the time that was
    left and, with little left, the stratum it was cut in; when starting up
    took the two seconds (a loaded one), the watchdog's line alone."""
    (tmp_path / "policy.rules").write_text(CROSS)
    os.utime(tmp_path / "policy.rules", (0, 0))  # the cache keeps no policy written within the last second
    with open_store(str(tmp_path / "ordinance.db"), schema_of(compile_text(CROSS))) as store:
        store.append([Event("assert", rel, (i,)) for i in range(3000) for rel in ("na", "nb")])
    assert ordinance("log", "--limit", "1", cwd=tmp_path).exit_code == 0
    text = section("The CLI deadline covers the model build", page("limits.md"))
    [(command, shown)] = steps = shell_steps(text, "console")
    [(got, status)] = run_steps(steps, tmp_path, stderr=True)
    assert status == 2 and "(exit status 2)" in text
    if got.startswith("DENIED"):
        cut = [re.sub(r"stratum of `\w+`", "stratum of `...`", line) for line in shown]
        assert_shows(cut, got, command)
        assert shown[-1].endswith("in the stratum of `cross`")  # (what a quiet machine prints)
    else:
        watchdog = "error[limit_exceeded]: limit exceeded: deadline of 2 seconds passed"
        assert got == f"{watchdog} (set --deadline or ORDINANCE_DEADLINE; 0 for none)\n", got


def test_load_refuses_decisions_this_store_did_not_make(tmp_path: Path) -> None:
    """backup.jsonl is the export of another store of five events, the
    fourth a decision, loaded into the empty store of a project `ordinance
    init` made."""
    initialised(tmp_path)
    for args in (
        ["assert", 'grant("alice", "prod", 1).', 'grant("bob", "prod", 1).', 'grant("carol", "prod", 1).'],
        ["check", 'request("a1", "deploy", "prod", "alice", 1).'],
        ["assert", 'grant("dave", "prod", 1).'],
        ["export", "backup.jsonl"],
    ):
        assert ordinance(*args, "--db", "other.db", cwd=tmp_path).exit_code == 0, args
    events = [json.loads(line)["kind"] for line in (tmp_path / "backup.jsonl").read_text().splitlines()]
    assert events == ["assert", "assert", "assert", "decision", "assert"]
    steps = shell_steps(section("`load` refuses decisions this store did not make", page("limits.md")), "console")
    assert [c for c, _ in steps] == ["ordinance load backup.jsonl", "ordinance load --decisions backup.jsonl"]
    done = run_steps(steps, tmp_path, stderr=True)
    for (command, shown), (got, _) in zip(steps, done):
        assert_shows(shown, got, command)
    assert [status for _, status in done] == [2, 0]


# --- docs/sql.md --------------------------------------------------------------

REACH = """\
.decl edge(a: number, b: number)
.input edge
.decl reach(a: number, b: number)
.output reach
reach(X, Y) :- edge(X, Y).
reach(X, Z) :- reach(X, Y), edge(Y, Z).
"""


def test_the_engines_run_from_the_command_line(tmp_path: Path, pg_url: str) -> None:
    """The test's reach.dl and facts/ (a chain of edges), PostgreSQL on the
    test's database for `postgresql://user@host/db`: each engine writes what
    the Python engine does."""
    [block] = blocks(section("Choosing the engine", page("sql.md")))
    [install, *commands] = block.splitlines()
    assert install in STATIC
    (tmp_path / "reach.dl").write_text(REACH)
    (tmp_path / "facts").mkdir()
    (tmp_path / "facts" / "edge.facts").write_text("".join(f"{i}\t{i + 1}\n" for i in range(30)))
    assert ordinance("run", "reach.dl", "-F", "facts", "-D", "expected", cwd=tmp_path).exit_code == 0
    expected = sorted((tmp_path / "expected" / "reach.csv").read_text().splitlines())
    assert len(expected) == 30 * 31 // 2
    for command in commands:
        (tmp_path / "out").mkdir(exist_ok=True)
        line = command.replace("postgresql://user@host/db", pg_url)
        [(got, status)] = run_steps([(line, [])], tmp_path, stderr=True)
        assert status == 0, (command, got)
        assert sorted((tmp_path / "out" / "reach.csv").read_text().splitlines()) == expected, command
        (tmp_path / "out" / "reach.csv").unlink()
    assert [c.split("--engine ")[1].split()[0] for c in commands] == ["duckdb", "postgresql"]


def test_the_python_examples_print_what_they_say() -> None:
    """The first block prints the sets its comments show (a set prints in any
    order: the values are compared); the second runs on its facts and `now`
    (which the page leaves to the reader: the first block's)."""
    first, second = blocks(page("sql.md"), "python")
    namespace: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(first, "sql.md", "exec"), namespace)
    shown = [line.split("#", 1)[1].strip() for line in first.splitlines() if line.strip().startswith("print(")]
    got = printed.getvalue().splitlines()
    assert len(got) == len(shown) == 2
    for value, comment in zip(got, shown):
        try:
            want = ast.literal_eval(comment)
        except (ValueError, SyntaxError):  # `3, counted by the engine`
            want = ast.literal_eval(comment.split(",", 1)[0])
        assert ast.literal_eval(value) == want, comment
    namespace.update(facts={"edge": [(1, 2), (2, 3)]}, now=0)
    exec(compile(second, "sql.md", "exec"), namespace)
    proof = namespace["proof"]
    assert (proof.relation, proof.tuple) == ("path", (1, 3))  # type: ignore[attr-defined]
    assert [c.tuple for c in proof.children] == [(1, 2), (2, 3)]  # type: ignore[attr-defined]


def benchmark_lines(text: str) -> list[str]:
    return [line for block in blocks(text) for line in block.splitlines() if "benchmarks/bench_" in line]


@pytest.mark.parametrize("name", ["sql.md", "performance.md"])
def test_the_benchmark_lines_name_real_options(name: str) -> None:
    """Statically (STATIC): each script exists and declares the options used
    (`add_argument("--runs", ...)`; read, not run: the scripts' imports
    alone take seconds)."""
    lines = benchmark_lines(page(name))
    assert lines
    for line in lines:
        command = line.split("#", 1)[0].split()
        assert command[0] == ".venv/bin/python" and command[1].startswith("benchmarks/bench_"), line
        source = (ROOT / command[1]).read_text()
        for option in (word for word in command[2:] if word.startswith("-")):
            assert re.search(rf"add_argument\([^)]*[\"']{option}[\"']", source), (line, option)


# --- docs/hosts.md and docs/other-hosts.md -------------------------------------


def project_for(tmp_path: Path, *flags: str) -> tuple[Path, Path, dict[str, str], str]:
    """A git project `p` set up by `ordinance init FLAGS .`, HOME and
    XDG_STATE_HOME in `tmp_path`: the project, the owner's directory, the
    environment, and the `ordinance serve` line init printed."""
    project, home = tmp_path / "p", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True)
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / ".local" / "state")}
    done = ordinance("init", *flags, ".", cwd=project, env=env)
    assert done.exit_code == 0, done.output
    [owner] = (home / ".local" / "state" / "ordinance").iterdir()
    os.utime(owner / "policy.rules", (0, 0))  # (as initialised does)
    [serve] = [line.removeprefix("next: ") for line in done.stdout.splitlines() if line.startswith("next: ")]
    return project, owner, env, serve


def port_of(serve: str) -> int:
    return int(serve.rsplit("--port ", 1)[1].split()[0])


def pre_tool_use(project: Path, tool: str, tool_input: dict[str, str]) -> str:
    call = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": "t1", "cwd": str(project)}
    return json.dumps({**call, "tool_input": tool_input})


def decision_of(done: Result) -> dict[str, str]:
    assert done.exit_code == 0, done.output
    return dict(json.loads(done.stdout)["hookSpecificOutput"])


def test_the_claude_code_setup_runs(tmp_path: Path) -> None:
    """hosts.md "Setup", in a git project `p`: `init` prints the page's serve
    line with the real owner's directory (for `~/.local/state/ordinance/p-1a2b3c4d`)
    and port (for 31234), that line serves, and `doctor` finds everything in
    place (a `claude` that says its version stands in for Claude Code);
    `pip install` is in STATIC."""
    block = blocks(section("Setup", page("hosts.md")), "sh")[0].replace("\\\n", " ")
    install, init, serve, doctor = (line.split("  #")[0].strip() for line in block.splitlines())
    assert install in STATIC
    assert init == "ordinance init --claude-code ." and doctor == "ordinance doctor"
    project, owner, env, printed = project_for(tmp_path, "--claude-code")
    port = port_of(printed)
    serve = serve.removesuffix("&").strip().replace("~/.local/state/ordinance/p-1a2b3c4d", str(owner))
    serve = " ".join(serve.replace("31234", str(port)).split())
    assert serve.replace('"$PWD"', str(project)) == printed  # "init prints this line with the real paths and port"
    claude = tmp_path / "bin" / "claude"
    claude.parent.mkdir()
    claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
    claude.chmod(0o755)
    with serving(serve, project, env, port):
        done = ordinance(*doctor.split()[1:], cwd=project, env={**env, "PATH": f"{claude.parent}:{os.environ['PATH']}"})
    assert done.exit_code == 0, done.output
    assert all(line.startswith("ok ") for line in done.stdout.splitlines()), done.output


def test_auto_allow_runs_a_markdown_read_unasked(tmp_path: Path) -> None:
    """The page's rule, added to the policy `init --claude-code` wrote, lints
    and makes a Read of a Markdown file `allow` (without it: no decision)."""
    [rule] = blocks(section("The answer: never wider than Claude Code's own", page("hosts.md")))
    project, owner, env, _ = project_for(tmp_path, "--claude-code")
    (project / "README.md").write_text("hi\n")
    hook = ["hook", "claude-code", "--db", str(owner / "ordinance.db"), "--policy", str(owner / "policy.rules")]
    read = pre_tool_use(project, "Read", {"file_path": str(project / "README.md")})
    assert "permissionDecision" not in decision_of(ordinance(*hook, cwd=project, env=env, stdin=read))
    with (owner / "policy.rules").open("a") as policy:
        policy.write("\n" + rule)
    os.utime(owner / "policy.rules", (0, 0))
    assert ordinance("lint", str(owner / "policy.rules"), cwd=project).exit_code == 0
    assert decision_of(ordinance(*hook, cwd=project, env=env, stdin=read))["permissionDecision"] == "allow"


def test_a_stop_is_lifted_at_a_new_epoch(tmp_path: Path) -> None:
    """hosts.md "Lifting a stop", each `ordinance assert` with `--db` and
    `--policy` of the owner's directory (as the page says), the project for
    `/path/to/project`, and init's serve line for `serve ...`: after the stop
    a write in the project is denied `owner-stop`; after the resume the
    server at epoch 2 permits it."""
    [block] = blocks(section("Lifting a stop", page("hosts.md")), "sh")
    stop, resume, serve = (line.split("  #")[0].strip() for line in block.splitlines())
    project, owner, env, printed = project_for(tmp_path, "--claude-code")
    store = f"--db {owner / 'ordinance.db'} --policy {owner / 'policy.rules'}"
    write = pre_tool_use(project, "Write", {"file_path": str(project / "a.txt"), "content": "x"})
    in_process = ["hook", "claude-code", *store.split()]
    for line in (stop, resume):
        mine = line.replace("ordinance assert", f"ordinance assert {store}").replace("/path/to/project", str(project))
        [(got, status)] = run_steps([(mine, [])], project, stderr=True, env=env)
        assert status == 0, got
        if line == stop:
            answer = decision_of(ordinance(*in_process, cwd=project, env=env, stdin=write))
            assert answer["permissionDecision"] == "deny" and "owner-stop" in answer["permissionDecisionReason"]
    assert serve.startswith("ordinance serve ... ")
    with serving(serve.replace("ordinance serve ...", printed), project, env, port_of(printed)):
        hook = ["hook", "claude-code", "--server", f"http://127.0.0.1:{port_of(printed)}"]
        answer = decision_of(
            ordinance(*hook, "--token-file", str(owner / "claude-code.token"), cwd=project, stdin=write)
        )
    assert "permissionDecision" not in answer and answer["additionalContext"].startswith("ordinance permits this")


def test_the_gemini_hook_answers_in_its_shape(tmp_path: Path) -> None:
    """other-hosts.md's `ordinance hook gemini`, on the server `init --gemini`
    set up (its port for 8377, its token file for `~/.local/state/ordinance/p/gemini.token`),
    prints the answer the page's comment shows; the settings init writes are
    the page's (with `~/.local/state/ordinance/p-1a2b3c4d` and 31234 for the
    real directory and port)."""
    project, owner, env, printed = project_for(tmp_path, "--gemini")
    port = port_of(printed)
    call = blocks(page("other-hosts.md"), "sh")[0]
    settings = blocks(page("other-hosts.md"), "json")[0]
    script, shown = call.split("\n# ")
    script = script.replace("8377", str(port)).replace("~/.local/state/ordinance/p/", f"{owner}/")
    with serving(printed, project, env, port):
        [(got, status)] = run_steps([(script, [])], project, env=env)
    assert status == 0 and json.loads(got) == json.loads(shown)
    written = (project / ".gemini" / "settings.json").read_text()
    written = written.replace(str(owner), "~/.local/state/ordinance/p-1a2b3c4d").replace(str(port), "31234")
    assert json.loads(written) == json.loads(settings)


def test_the_end_to_end_commands_name_what_exists() -> None:
    """Statically (STATIC): running them installs npm packages and takes minutes."""
    [block] = [b for b in blocks(page("other-hosts.md"), "sh") if ".ci/install-clients" in b]
    for line in block.splitlines():
        assert any(key in line for key in STATIC), line
        for path in re.findall(r"(?:\.ci|tests)/[\w./*-]+", line.split("#", 1)[0]):
            assert list(ROOT.glob(path)), path
    assert "ORDINANCE_E2E_CAPTURE" in (ROOT / "tests" / "e2e" / "harness.py").read_text()


# --- docs/language-more.md ------------------------------------------------------

# what `ordinance run FILE -D -` prints of each block with `.output REL` added
# for the relations its comments name (`// hit("a")`, `// query(0), query(1)`)
RUNS = {
    ".decl word(w: symbol)": {"digits": ["a12"], "tool": ["git"]},
    'p("a"). p("[").': {"hit": ["a"], "miss": []},
    ".decl deploy(at: time)": {},  # (what `recent` and `soon` hold depends on the clock)
    '.include "continuity"': {},
    ".decl score(who: symbol, s: number)": {"avg": ["a\t1.5", "b\t4"]},
    ".decl b(x: number, y: number)": {"xs": ["1"], "tuples": ["2"], "total": ["3"], "any": ["()"]},
    ".decl nat(x: number)": {"query": ["0", "1"]},
    '.pragma "magic-transform" "*"': {},
    'path("x/.env").': {},
    "#define LIMIT 3  // the last number": {"query": ["2", "3"]},
}


def printed(output: str, names: set[str]) -> dict[str, list[str]]:
    """`run -D -`'s output of relations `names`: each one's name line, then its tuples."""
    relations: dict[str, list[str]] = {}
    for line in output.splitlines():
        if line in names and line not in relations:
            relations[line] = []
        else:
            relations[list(relations)[-1]].append(line)
    return relations


@pytest.mark.parametrize("block", blocks(page("language-more.md")), ids=lambda b: b.splitlines()[0][:30])
def test_each_language_example_lints_and_runs(tmp_path: Path, block: str) -> None:
    """As the page says: `ordinance lint FILE` reports the codes its comments
    name (an error only where one is named), and the rest, the lines naming
    an error taken out, runs with `ordinance run FILE -D -` to what its
    comments say."""
    named = re.findall(r"// (?:.*?)(warning|error)\[(\w+)\]", block)
    (tmp_path / "example.rules").write_text(block)
    linted = ordinance("lint", "example.rules", cwd=tmp_path)
    codes = set(re.findall(r"(warning|error)\[(\w+)\]", linted.output))
    assert set(named) <= codes and {c for c in codes if c[0] == "error"} == {c for c in named if c[0] == "error"}
    assert linted.exit_code == (1 if any(kind == "error" for kind, _ in named) else 0), linted.output
    accepted = "".join(line + "\n" for line in block.splitlines() if "error[" not in line)
    outputs = RUNS[block.splitlines()[0]]
    (tmp_path / "example.rules").write_text(accepted + "".join(f".output {r}\n" for r in outputs))
    with warnings.catch_warnings(record=True) as caught:  # (the library's warning for a pattern from data)
        warnings.simplefilter("always")
        ran = ordinance("run", "example.rules", "-D", "-", cwd=tmp_path)
    assert ran.exit_code == 0, ran.output
    data_pattern = block.startswith('p("a"). p("[").')  # "evaluation warns once per pattern"
    invalid = ["invalid regular expression `[`: missing ]"] if data_pattern else []
    assert [str(w.message).split(": `match`")[0] for w in caught] == invalid
    assert printed(ran.stdout, set(outputs)) == outputs


# --- docs/language.md's fragments -----------------------------------------------

INVARIANTS = "Invariants: say what must never happen"


def test_the_hint_line_lints_in_a_policy_of_the_stdlib(tmp_path: Path) -> None:
    """A fragment (a `.hint` for the stdlib's `claim_source`): checked
    statically, in a policy that includes `continuity`."""
    [hint] = [b for b in blocks(section(INVARIANTS, page("language.md"))) if b.startswith(".hint")]
    (tmp_path / "policy.rules").write_text('.include "continuity"\n' + hint)
    linted = ordinance("lint", "policy.rules", cwd=tmp_path)
    assert (linted.exit_code, linted.output) == (0, "")


def test_the_pytest_configuration_collects_the_invariant(tmp_path: Path) -> None:
    """The page's `[tool.pytest.ini_options]` as a project's pyproject.toml,
    the page's policy with the planted bug in its `policies/`: pytest
    collects the invariant as `policy.rules::invariant "..."` and fails it
    with the fuzz report."""
    text = section(INVARIANTS, page("language.md"))
    [config] = blocks(text, "toml")
    policy = next(b for b in blocks(text) if ".invariant" in b and not b.startswith("$"))
    (tmp_path / "pyproject.toml").write_text(config)
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "policy.rules").write_text(policy)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert 'FAILED policies/policy.rules::invariant "superseded is never current"' in done.stdout, done.stdout[-2000:]
    assert re.search(r'invariant "superseded is never current" is broken \(\S*policy.rules:8\)', done.stdout)
    assert "proof of each fact in the body:" in done.stdout


# --- docs/getting-started.md ------------------------------------------------------


def test_the_install_lines_are_the_readme_s_and_ci_s() -> None:
    """Statically (STATIC: they install the package): the first is the
    README's (which test_cli_meta checks), the second the CI's test command."""
    install, tests = blocks(page("getting-started.md"))[:2]
    readme = (ROOT / "README.md").read_text()
    assert all(any(line.startswith(key) for key in STATIC) for line in (install, tests))
    assert install.strip() in readme.splitlines() and install.startswith("python3 -m venv .venv")
    assert tests.strip() == (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]


def test_the_environment_block_runs_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    """The test's PostgreSQL database for `postgresql://ordinance@db.internal:5432/ordinance`
    and a policy `ordinance init` wrote for `/etc/ordinance/policy.rules`, its
    store holding alice's grant: the check reads both from the environment."""
    [block] = blocks(section("Environment", page("getting-started.md")))
    initialised(tmp_path)
    granted = ordinance("assert", "--db", pg_url, 'grant("alice", "prod", 1).', cwd=tmp_path)
    assert granted.exit_code == 0, granted.output
    script = block.replace("postgresql://ordinance@db.internal:5432/ordinance", f"'{pg_url}'")
    script = script.replace("/etc/ordinance/policy.rules", str(tmp_path / "policy.rules"))
    (tmp_path / "elsewhere").mkdir()  # no ./policy.rules, no ./ordinance.db: the environment's
    [(got, status)] = run_steps([(script, [])], tmp_path / "elsewhere", stderr=True)
    assert status == 0 and got.startswith("ALLOWED a1: alice wants deploy on prod"), got


# --- docs/audit.md's excerpt ------------------------------------------------------


def test_what_would_unblock_a_stop_is_what_why_prints(tmp_path: Path) -> None:
    """The page's walk-through (test_audit_docs runs it) with the owner's
    stop asserted before the force push: `ordinance why` of that decision
    prints the excerpt (its `...` line standing for the proof's lines)."""
    [shown] = blocks(section("What would unblock it", page("audit.md")))
    script = """ordinance init --claude-code demo --home owner >/dev/null && cd demo
touch -d @0 ../owner/policy.rules  # (as initialised does)
export ORDINANCE_DB=../owner/ordinance.db ORDINANCE_POLICY=../owner/policy.rules
ordinance assert 'stop("everything", 2026-01-01T00:00:00Z).' >/dev/null
echo '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
  "tool_input": {"command": "cd sub && git push -f origin main"}, "cwd": "'$PWD'"}' \\
  | ordinance hook claude-code --project . >/dev/null
ordinance why --decision 3"""
    [(got, status)] = run_steps([(script, [])], tmp_path)
    assert status == 0, got
    lines = [r"(?:.*\n)*?" if line.strip() == "..." else re.escape(line) + r"\n" for line in shown.splitlines()]
    assert re.search("^" + "".join(lines), got, re.M), got


# --- docs/design.md -----------------------------------------------------------------


def test_the_module_map_names_what_exists() -> None:
    """Statically: the map is a description, not a command; each module,
    package and file it names is there (a `name.py` in a package's line is
    in that package)."""
    pipeline, modules = blocks(page("design.md"))
    assert pipeline.startswith(".rules text -> AST")
    package = ROOT
    for line in modules.splitlines():
        first = line.split()[0] if line.strip() and not line.startswith(" ") else None
        if first:
            assert (ROOT / first).exists(), first
            package = ROOT / first if first.endswith("/") else ROOT
        for name in re.findall(r"\(([a-z_]+\.py)[:,)]", line):
            assert (package / name).exists() or list(package.glob(f"**/{name}")), (line, name)


# --- docs/cli.md: the examples of each command's help ---------------------------------


def every_command(group: click.Group = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        yield " ".join((*path, name)), command
        if isinstance(command, click.Group):
            yield from every_command(command, (*path, name))


def examples(command: click.Command) -> list[list[str]]:
    """The `ordinance ...` invocations of `command`'s help examples, as words
    (up to a pipe, a redirection or `&&`; the description after two spaces
    and a `#` comment left out)."""
    text = re.sub(r"\\\n\s*", " ", command.epilog or "")
    found = []
    for line in text.splitlines():
        line = re.split(r"\s{2,}|\s#\s", line.strip())[0]
        for part in re.split(r"\s(?:\||&&|<|>)\s?", line):
            if re.match(r"(?:xargs )?ordinance [a-z]", part.strip()):
                found.append(shlex.split(part[part.index("ordinance ") :])[1:])
    return found


def test_each_help_example_names_a_real_command_and_options() -> None:
    """Statically (cli.md is these help texts; running each example needs a
    store, a server or a user's files it does not set up): each example's
    command exists and each option it uses is one of that command's."""
    seen = 0
    for name, command in every_command():
        for words in examples(command):
            target: click.Command = cli
            while isinstance(target, click.Group) and words and words[0] in target.commands:
                target = target.commands[words.pop(0)]
            assert not isinstance(target, click.Group), (name, words)
            opts = {o for p in target.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
            for word in words:
                if word.startswith("-") and word != "-":
                    assert word.split("=")[0] in opts | {"-h", "--help"}, (name, word)
            seen += 1
    assert seen >= 2 * len(cli.commands)
