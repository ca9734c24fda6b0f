"""The package's type hints are checked by mypy (configured in pyproject)."""

from pathlib import Path

from mypy import api

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_passes_on_the_package() -> None:
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "ordinance")])
    assert status == 0, out + err
