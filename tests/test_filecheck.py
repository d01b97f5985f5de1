"""Runs the FileCheck tests under ``tests/filecheck`` from pytest.

lit runs all of them once per session (in parallel, as it does from the
command line) and writes a JSON report; each ``.mlir`` file is then one
pytest test that passes or fails with lit's output for that file, so that
the single ``pytest`` command runs everything and names what broke.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FILECHECK_DIR = Path(__file__).parent / "filecheck"
TEST_FILES = sorted(
    path
    for path in FILECHECK_DIR.rglob("*.mlir")
    if not {"Inputs", "Output"} & set(path.relative_to(FILECHECK_DIR).parts)
)
_PASSING_CODES = {"PASS", "XFAIL"}


def _name(path: Path) -> str:
    """How lit names a test: its path inside the suite."""
    return path.relative_to(FILECHECK_DIR).as_posix()


@pytest.fixture(scope="session")
def lit_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each test's lit result (``code``, ``output``) by its name in the suite."""
    report = tmp_path_factory.mktemp("lit") / "results.json"
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from lit.main import main; sys.exit(main())",
            "--output",
            str(report),
            str(FILECHECK_DIR),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if not report.exists():
        pytest.fail(f"lit did not run:\n{completed.stdout}{completed.stderr}")
    tests = json.loads(report.read_text())["tests"]
    return {test["name"].split(" :: ", 1)[1]: test for test in tests}


@pytest.mark.parametrize("path", TEST_FILES, ids=_name)
def test_filecheck(path: Path, lit_results: dict[str, dict[str, Any]]) -> None:
    result = lit_results.get(_name(path))
    if result is None:
        pytest.fail(f"lit did not run {_name(path)}", pytrace=False)
    if result["code"] == "UNSUPPORTED":
        pytest.skip(f"{_name(path)} is unsupported here")
    if result["code"] not in _PASSING_CODES:
        pytest.fail(
            f"{result['code']}: {_name(path)}\n{result['output']}", pytrace=False
        )
