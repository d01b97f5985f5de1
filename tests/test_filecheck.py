"""Runs the FileCheck tests under ``tests/filecheck`` from pytest.

lit runs all of them once per session (in parallel, as it does from the
command line, with ``irc-opt`` and ``filecheck`` served by a process that
has imported them once: ``filecheck/tool_server.py``) and writes a JSON
report; each ``.mlir`` file is then one
pytest test that passes or fails with lit's output for that file, so that
the single ``pytest`` command runs everything and names what broke.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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
    run_directory = tmp_path_factory.mktemp("lit")
    report = run_directory / "results.json"
    with tool_server() as server_env:
        completed = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from lit.main import main; sys.exit(main())",
                "--output",
                str(report),
                "--param",
                f"exec_root={run_directory / 'exec'}",
                str(FILECHECK_DIR),
            ],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **server_env},
        )
    if not report.exists():
        pytest.fail(f"lit did not run:\n{completed.stdout}{completed.stderr}")
    tests = json.loads(report.read_text())["tests"]
    return {test["name"].split(" :: ", 1)[1]: test for test in tests}


@contextmanager
def tool_server() -> Iterator[dict[str, str]]:
    """``filecheck/tool_server.py`` serving irc-opt and filecheck while the
    block runs, as the environment that tells lit to use it; an empty one
    (lit starts the tools itself) where processes cannot fork."""
    if not hasattr(os, "fork") or not hasattr(socket, "AF_UNIX"):
        yield {}
        return
    # A short directory: a Unix socket's path has a limit of about 100 bytes.
    with tempfile.TemporaryDirectory(prefix="irc-lit-") as directory:
        path = os.path.join(directory, "tools.sock")
        server = subprocess.Popen(
            [sys.executable, str(FILECHECK_DIR / "tool_server.py"), "serve", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            if server.stdout is None or server.stdout.readline() != "ready\n":
                pytest.fail("the FileCheck tests' tool server did not start")
            yield {"IRC_TOOL_SERVER": path}
        finally:
            server.terminate()
            server.wait()


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


def test_the_tool_server_runs_irc_opt_as_the_installed_script() -> None:
    """What a RUN line sees through the server (output, diagnostics, exit
    status) is what the installed ``irc-opt`` gives."""
    irc_opt = str(Path(sys.executable).parent / "irc-opt")
    roundtrip = str(FILECHECK_DIR / "dialects" / "graph" / "roundtrip.mlir")
    runs = [([roundtrip, "-p", "canonicalize"], ""), ([], "func.func @f(\n")]
    with tool_server() as server_env:
        if not server_env:
            pytest.skip("no tool server where processes cannot fork")
        client = [
            sys.executable,
            "-S",
            str(FILECHECK_DIR / "tool_server.py"),
            "connect",
            server_env["IRC_TOOL_SERVER"],
            "irc-opt",
        ]
        for args, stdin in runs:
            served = subprocess.run(
                [*client, *args], input=stdin, capture_output=True, text=True
            )
            direct = subprocess.run(
                [irc_opt, *args], input=stdin, capture_output=True, text=True
            )
            assert (served.returncode, served.stdout, served.stderr) == (
                direct.returncode,
                direct.stdout,
                direct.stderr,
            )
