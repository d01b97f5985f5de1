"""The docs' Python code blocks run, so that the docs say what the code does.

Each Markdown file's ```python blocks run in order in one namespace, as a
reader would paste them into one session, in a subprocess of their own (in a
temporary directory, without ``TRITON_INTERPRET``, as a user's shell has it).
Two HTML comments, invisible on the rendered page, steer it:

- ``<!-- doc-test setup`` ... ``-->`` holds code run before the next block:
  the arrays or the function a fragment takes as given;
- ``<!-- doc-test skip: reason -->`` skips the next block, saying why.

The README's ``irc-opt`` commands (in its ```sh blocks) run too, from the
repository root, so that the files they read exist.

A file can also say ``<!-- doc-test needs: dot -->`` (a program on PATH) or
``<!-- doc-test needs: onnx -->`` (a module): without it, the file is skipped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted(
    [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        ROOT / "benchmarks" / "README.md",
    ]
)

_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_SHELL = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
_SETUP = re.compile(r"^<!-- doc-test setup\n(.*?)^-->", re.S | re.M)
_SKIP = re.compile(r"^<!-- doc-test skip: (.+?) -->\s*$", re.M)
_NEEDS = re.compile(r"^<!-- doc-test needs: (\S+) -->\s*$", re.M)

#: What a block may take: every block of a file together.
TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    line: int
    code: str
    setup: str = ""
    skip: str | None = None


def blocks(text: str) -> list[Block]:
    """The file's Python blocks with the setup and skip comments right
    before each (between the previous block and it)."""
    found: list[Block] = []
    start = 0
    for match in _FENCE.finditer(text):
        before = text[start : match.start()]
        setup = "".join(s.group(1) for s in _SETUP.finditer(before))
        skips = _SKIP.findall(before)
        line = text.count("\n", 0, match.start()) + 2
        found.append(Block(line, match.group(1), setup, skips[-1] if skips else None))
        start = match.end()
    return found


def program(path: Path, found: list[Block]) -> str:
    """One script running the blocks in order, each under a marker that
    names its line, so that a failure says which block failed."""
    parts = [
        "import sys, traceback, webbrowser",
        "webbrowser.open = lambda *a, **k: True  # show() must not start a browser",
        "__namespace = {'__name__': '__docs__'}",
    ]
    for block in found:
        if block.skip is not None:
            continue
        source = block.setup + block.code
        parts.append(
            f"try:\n    exec(compile({source!r}, {f'{path.name}:{block.line}'!r}, 'exec'), "
            "__namespace)\nexcept BaseException:\n"
            f"    print('doc block at {path.name} line {block.line} failed:', "
            "file=sys.stderr)\n    traceback.print_exc()\n    sys.exit(1)"
        )
    return "\n".join(parts) + "\n"


def _missing(needs: list[str]) -> list[str]:
    return [
        need
        for need in needs
        if shutil.which(need) is None and importlib.util.find_spec(need) is None
    ]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_python_blocks_run(path: Path, tmp_path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = blocks(text)
    if not found:
        pytest.skip("no Python blocks")
    if missing := _missing(_NEEDS.findall(text)):
        pytest.skip(f"needs {', '.join(missing)}")
    script = tmp_path / "docs_blocks.py"
    script.write_text(program(path, found), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["MPLBACKEND"] = "Agg"
    run = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stderr[-6000:]


def test_the_readme_irc_opt_commands_run() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = [
        line
        for block in _SHELL.findall(text)
        for line in block.splitlines()
        if line.startswith("irc-opt ")
    ]
    assert commands, "the README shows no irc-opt command"
    irc_opt = Path(sys.executable).with_name("irc-opt")
    for command in commands:
        arguments = shlex.split(command, comments=True)[1:]
        run = subprocess.run(
            [str(irc_opt), *arguments],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert run.returncode == 0, f"{command}\n{run.stderr[-3000:]}"


def test_every_skip_says_why() -> None:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for reason in _SKIP.findall(text):
            assert len(reason.split()) >= 3, f"{path.name}: skip without a reason"


def test_the_comments_are_found() -> None:
    """The parser sees setup and skip comments and the blocks they steer."""
    text = (
        "<!-- doc-test setup\nx = 1\n-->\n\n```python\nprint(x)\n```\n\n"
        "<!-- doc-test skip: it needs a GPU -->\n```python\nboom()\n```\n"
    )
    first, second = blocks(text)
    assert (first.setup, first.code, first.skip) == ("x = 1\n", "print(x)\n", None)
    assert second.skip == "it needs a GPU" and second.setup == ""
