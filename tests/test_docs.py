"""The docs' code blocks run, so that the docs say what the code does.

Each Markdown file's ```python blocks run in order in one namespace, as a
reader would paste them into one session, in a subprocess of their own (in a
temporary directory, without ``TRITON_INTERPRET``, as a user's shell has it).
The commands of its ```sh blocks (every line but comments) and ```console
blocks (the lines after a ``$`` prompt; the rest is output) run too, from
the repository root, so that the files they read exist: ``irc-opt``,
``irc-reduce`` and ``python examples/...``, each a few seconds at most. Two
HTML comments, invisible on the rendered page, steer it:

- ``<!-- doc-test setup`` ... ``-->`` holds code run before the next Python
  block: the arrays or the function a fragment takes as given;
- ``<!-- doc-test skip: reason -->`` skips the next block, saying why: a
  block that needs a GPU, the network, minutes, or stands for the reader's
  own files. A Python block or a shell command that is neither run nor
  skipped so fails (a ```py fence the runner would not see, a benchmark).

A file can also say ``<!-- doc-test needs: dot -->`` (a program on PATH) or
``<!-- doc-test needs: onnx -->`` (a module): without it, the file is skipped.
"""

from __future__ import annotations

import importlib.util
import itertools
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


def _markdown_files() -> list[Path]:
    """Every Markdown file of the repository (not in hidden folders, such
    as the virtual environment, nor in build outputs): a new doc is tested
    without being listed."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".") and not name.endswith(".egg-info")
        ]
        found += [Path(folder, name) for name in files if name.endswith(".md")]
    return sorted(found)


DOCS = _markdown_files()

#: A fenced block: its info string's first word (the language) and its text.
_FENCE = re.compile(r"^```[ \t]*([^\s`]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_SHELLS = ("sh", "console")
#: Info strings of Python a reader could paste; only ```python is run.
_PYTHON_LIKE = ("py", "python", "python3", "pycon", "ipython")
#: The programs of shell commands that run; others need a skip comment.
_TOOLS = ("irc-opt", "irc-reduce")
#: Pipes, redirections and lists, which need a shell.
_SHELL_SYNTAX = {"|", ">", "<", "&&", "||", ";"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
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
    language: str = "python"


def blocks(text: str, languages: tuple[str, ...] = ("python",)) -> list[Block]:
    """The file's blocks in ``languages`` with the setup and skip comments
    right before each (between the previous fenced block, of any language,
    and it: a comment steers the block it precedes, not one further on)."""
    found: list[Block] = []
    start = 0
    for match in _FENCE.finditer(text):
        before = text[start : match.start()]
        start = match.end()
        language, code = match.groups()
        if language not in languages:
            continue
        setup = "".join(s.group(1) for s in _SETUP.finditer(before))
        skips = _SKIP.findall(before)
        line = text.count("\n", 0, match.start()) + 2
        skip = skips[-1] if skips else None
        found.append(Block(line, code, setup, skip, language))
    return found


def commands(block: Block) -> list[str]:
    """A shell block's command lines: in a console block those after the
    ``$`` prompt (the others are output), in a sh block all but comments."""
    lines = block.code.splitlines()
    if block.language == "console":
        return [line.removeprefix("$ ") for line in lines if line.startswith("$ ")]
    return [line for line in lines if line.strip() and not line.startswith("#")]


def argv(command: str) -> tuple[dict[str, str], list[str]] | None:
    """The environment and arguments that run ``command`` with this
    interpreter's tools, or ``None`` for a command the harness does not run
    (a pipe, pip, pytest, a benchmark)."""
    words = shlex.split(command, comments=True)
    assignments = list(itertools.takewhile(_ASSIGNMENT.match, words))
    env = dict(word.split("=", 1) for word in assignments)
    program, *arguments = words[len(assignments) :]
    if _SHELL_SYNTAX & set(arguments):
        return None
    if program in _TOOLS:
        return env, [str(Path(sys.executable).with_name(program)), *arguments]
    if program == "python" and arguments and arguments[0].startswith("examples/"):
        return env, [sys.executable, *arguments]
    return None


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


def _users_environment() -> dict[str, str]:
    """This environment as a user's shell has it: without the test run's
    ``TRITON_INTERPRET``, with this checkout's irc first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


_IDS = {"ids": lambda p: str(p.relative_to(ROOT))}


@pytest.mark.parametrize("path", DOCS, **_IDS)
def test_the_python_blocks_run(path: Path, tmp_path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = blocks(text)
    if not found:
        pytest.skip("no Python blocks")
    if missing := _missing(_NEEDS.findall(text)):
        pytest.skip(f"needs {', '.join(missing)}")
    script = tmp_path / "docs_blocks.py"
    script.write_text(program(path, found), encoding="utf-8")
    env = _users_environment()
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


def _shell_commands(text: str) -> list[tuple[int, str]]:
    """The commands of the shell blocks not skipped, with their block's line."""
    return [
        (block.line, command)
        for block in blocks(text, _SHELLS)
        if block.skip is None
        for command in commands(block)
    ]


@pytest.mark.parametrize("path", DOCS, **_IDS)
def test_the_shell_commands_run(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = _shell_commands(text)
    if not found:
        pytest.skip("no shell commands")
    if missing := _missing(_NEEDS.findall(text)):
        pytest.skip(f"needs {', '.join(missing)}")
    for line, command in found:
        parsed = argv(command)
        assert parsed is not None, (
            f"{path.name}:{line}: `{command}` does not run under the doc tests; "
            "mark its block <!-- doc-test skip: why it cannot run -->"
        )
        env, arguments = parsed
        run = subprocess.run(
            arguments,
            cwd=ROOT,
            env=_users_environment() | env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert run.returncode == 0, (
            f"{path.name}:{line}: {command}\n{run.stderr[-3000:]}"
        )


def test_the_readme_shows_irc_opt_commands_that_run() -> None:
    """The quick start's irc-opt lines are the first a reader tries."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert any(c.startswith("irc-opt ") for _, c in _shell_commands(text))


@pytest.mark.parametrize("path", DOCS, **_IDS)
def test_every_python_block_is_run_or_skipped(path: Path) -> None:
    """A block fenced as ```py or ```pycon would otherwise be left out
    without a word: the runner runs ```python blocks only."""
    text = path.read_text(encoding="utf-8")
    seen = {block.line for block in blocks(text)}
    for block in blocks(text, _PYTHON_LIKE):
        assert block.line in seen, (
            f"{path.name}:{block.line}: a ```{block.language} block does not "
            "run; fence it as ```python (or skip it, saying why)"
        )


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


def test_a_skip_steers_only_the_block_right_after_it() -> None:
    text = (
        "<!-- doc-test skip: it needs the network -->\n```sh\npip install x\n```\n"
        "```python\nprint(1)\n```\n"
    )
    (shell,) = blocks(text, _SHELLS)
    (python,) = blocks(text)
    assert shell.skip == "it needs the network" and python.skip is None


def test_a_python_block_the_runner_would_not_see_is_found() -> None:
    text = "```py\nprint(1)\n```\n```python title='x'\nprint(2)\n```\n"
    assert [b.language for b in blocks(text, _PYTHON_LIKE)] == ["py", "python"]
    assert [b.code for b in blocks(text)] == ["print(2)\n"]


def test_the_commands_of_shell_blocks_are_read_as_a_shell_would() -> None:
    console = Block(1, "$ irc-opt a.mlir -p cse\noutput\n", language="console")
    assert commands(console) == ["irc-opt a.mlir -p cse"]
    env, arguments = argv("IRC_LOGS=passes python examples/q.py  # a comment")
    assert env == {"IRC_LOGS": "passes"} and arguments == [
        sys.executable,
        "examples/q.py",
    ]
    for other in ("cat a.mlir | irc-opt", "python benchmarks/gpu.py", "pytest"):
        assert argv(other) is None
