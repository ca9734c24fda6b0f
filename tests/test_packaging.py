"""Packaging: a wheel built from the tree runs `ordinance demo` once
installed, with the seed scenarios as package data and without psycopg (the
PostgreSQL driver is the optional `postgres` extra)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_demo_runs_from_an_installed_wheel_without_psycopg(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: building never writes into the work tree
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "ordinance", source / "ordinance", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        # the test extra holds the build backend: no isolated build environment from the index
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("ordinance-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    scenarios = sorted(p.name for p in (ROOT / "ordinance/testing/scenarios").glob("*.toml"))
    shipped = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith("ordinance/testing/scenarios/"))
    assert scenarios and [n for n in shipped if n.endswith(".toml")] == scenarios  # every one is package data
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: psycopg")]
    assert requires and all("extra ==" in line for line in requires), requires  # never a plain dependency

    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"  # no policy, no store, no scenarios around
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORDINANCE_") or k == "ORDINANCE_CACHE"}
    env["PYTHONPATH"] = str(site)  # before the work tree's editable install
    program = (
        "import sys\n"
        "sys.modules['psycopg'] = None  # as if `ordinance[postgres]` were not installed\n"
        "import ordinance\n"
        "print(ordinance.__file__, file=sys.stderr)\n"
        "from ordinance.cli import main\n"
        "main()\n"
    )
    demo = subprocess.run(
        # one scenario, read from the wheel's package data (tests/test_fixtures.py plays every one)
        [sys.executable, "-c", program, "demo", "--brief", "arc_c"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert demo.stderr.splitlines()[0].startswith(str(site))  # the wheel's copy ran, not the tree
    assert "1 of 1 scenarios behaved as their story says" in demo.stdout
    assert list(elsewhere.iterdir()) == []  # the demo's store is a temporary one
