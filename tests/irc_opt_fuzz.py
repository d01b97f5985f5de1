"""A mutation fuzzer of ``irc-opt``: mutants of the FileCheck inputs of every
level, custom and generic form, run with the flags of their RUN lines.

``irc-opt`` must end every run quickly, with exit status 0 or 1, and with
status 1 only after printing located diagnostics (``file:line:col: error:``):
never a traceback, never an "internal error". The runs happen in a worker
process (``python tests/irc_opt_fuzz.py --worker``) that calls
``irc.cli.irc_opt.main`` in-process for each mutant, so that a run costs
milliseconds instead of irc-opt's half-second start-up; the test reads each
answer with a time limit, which only detects a hang (the worker is then
killed and restarted).

Everything is derived from one seed, so a run is reproducible: a failure
names the mutant's index, its seed input and its mutations.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import random
import re
import select
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPOSITORY = TESTS.parent
FILECHECK = TESTS / "filecheck"
SEED_DIRECTORIES = ("dialects", "transforms")

#: Flags of RUN lines that would change what a run's status means
#: (diagnostics expected or printed to stdout) or that the fuzzer does itself.
_DROPPED_FLAGS = frozenset(
    {"--split-input-file", "--verify-diagnostics", "--parsing-diagnostics"}
)

_LOCATED = re.compile(r"^\S.*?:\d+:\d+: error: ")
_DIAGNOSTIC = re.compile(r"^\S.*?: error: ")


# Seeds ---------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """One input to mutate: a chunk of a FileCheck file and the irc-opt
    flags one of its RUN lines uses."""

    name: str
    text: str
    args: tuple[str, ...]


#: The rest of the pipeline from each level, to Triton source.
_TO_TRITON = {
    "graph": ("-p", "lower-to-triton", "-t", "triton"),
    "fusion": ("-p", "tile,bufferize,lower-memory-to-triton", "-t", "triton"),
    "loop": ("-p", "bufferize,lower-memory-to-triton", "-t", "triton"),
    "memory": ("-p", "lower-memory-to-triton", "-t", "triton"),
    "triton": ("-t", "triton"),
}

#: The level of the input of each FileCheck file that is not in a level's
#: directory (the passes' tests, named after the pass).
_PASS_INPUT_LEVELS = {
    "canonicalize": "graph",
    "canonicalize-run-time-errors": "graph",
    "fuse": "graph",
    "tile": "fusion",
    "bufferize": "loop",
    "lower-memory-to-triton": "memory",
}


def level_of(path: Path) -> str | None:
    """The level of a FileCheck file's inputs, from its directory or name."""
    if path.parent.name in _TO_TRITON:
        return path.parent.name
    return _PASS_INPUT_LEVELS.get(path.stem)


def run_line_args(text: str) -> list[tuple[str, ...]]:
    """The flags of each distinct ``irc-opt %s ...`` RUN line of a file, up
    to its first pipe or redirection, without :data:`_DROPPED_FLAGS`."""
    found: list[tuple[str, ...]] = []
    for line in text.splitlines():
        match = re.match(r"\s*//\s*RUN:\s*(?:not\s+)?irc-opt\s+%s(.*)", line)
        if match is None:
            continue
        command = re.split(r"\||>|2>&1", match.group(1))[0]
        words = shlex.split(command)
        args = tuple(w for w in words if w not in _DROPPED_FLAGS)
        if args not in found:
            found.append(args)
    return found or [()]


def _code_of(chunk: str) -> str:
    """A chunk without its comment-only lines (RUN, CHECK, notes), which
    mutations would mostly waste themselves on."""
    lines = [line for line in chunk.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(lines).strip("\n") + "\n"


def seeds() -> list[Seed]:
    """Every chunk of every FileCheck input of the dialects and passes, once
    with each RUN line's flags and once lowered from its level to Triton
    source."""
    found = []
    for directory in SEED_DIRECTORIES:
        for path in sorted((FILECHECK / directory).rglob("*.mlir")):
            if {"Inputs", "Output"} & set(path.relative_to(FILECHECK).parts):
                continue  # lit's outputs, not tests
            text = path.read_text()
            name = path.relative_to(FILECHECK).as_posix()
            chunks = [_code_of(c) for c in text.split("// -----")]
            variants = run_line_args(text)
            level = level_of(path)
            if level is not None:
                variants.append(_TO_TRITON[level])
            for args in variants:
                for index, chunk in enumerate(chunks):
                    if chunk.strip():
                        found.append(Seed(f"{name}#{index}", chunk, args))
    return found


def generic_seeds(custom: list[Seed]) -> list[Seed]:
    """The seeds that parse and verify, printed in generic form."""
    from irc.ir import parse_module, print_module, verify_module

    found, texts = [], {}
    for seed in custom:
        if seed.text in texts:
            if texts[seed.text] is not None:
                found.append(Seed(f"{seed.name}(generic)", texts[seed.text], seed.args))
            continue
        texts[seed.text] = None
        try:
            module = parse_module(seed.text)
            verify_module(module)
            text = print_module(module, generic=True)
        except Exception:
            continue
        texts[seed.text] = text
        found.append(Seed(f"{seed.name}(generic)", text, seed.args))
    return found


# Mutations -----------------------------------------------------------------

_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|[%^#!@][\w$.-]*|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\w[\w$.]*|->|\S'
)
_INTEGER = re.compile(r"(?<![\w.%#^!@])\d+(?![\w.])")
_SSA = re.compile(r"%[\w$.-]+")

_INSERTIONS = (
    '"',
    '"abc',
    '"a\\q"',
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    "%",
    "%0",
    "%x#7",
    "^bb1",
    "#",
    "!",
    "@",
    "\\",
    "\n",
    ":",
    ",",
    "=",
    "->",
    "loc(",
    "0x",
    "-",
    "?",
    "...",
    "{-#",
    "// -----\n",
    "dense<[1, 2]>",
    "array<i64: 1>",
    "affine_map<(d0) -> (d0)>",
    "tuple<i32>",
    "i0",
    "i1024",
)
_NUMBERS = (
    "0",
    "-1",
    "1",
    "2",
    "3",
    "16",
    "128",
    "1024",
    "2147483648",
    "4294967296",
    "9223372036854775808",
    "18446744073709551616",
    "9" * 5000,
    "0x" + "f" * 4000,
    "1e999",
)
_BYTES = (b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\xed\xa0\x80")


#: Each mutation and how often it is chosen: those that keep the text
#: parsable (names, numbers, lines moved) often, so that many mutants reach
#: the verifier and the passes.
_MUTATIONS = {
    "delete-token": 3,
    "delete-chars": 1,
    "duplicate-token": 1,
    "insert": 3,
    "swap-tokens": 1,
    "replace-token": 4,
    "number": 3,
    "swap-ssa": 4,
    "swap-lines": 2,
    "duplicate-line": 1,
    "delete-line": 2,
    "truncate": 1,
    "nest": 1,
    "unclose-string": 1,
}


def _kind_of(token: str) -> str:
    """A token's kind, for replacing it by one alike."""
    if token[0] in '%^#!@"':
        return token[0]
    if token[0].isdigit() or (token[0] == "-" and token[1:2].isdigit()):
        return "number"
    return "word" if token[0].isalpha() or token[0] == "_" else "punctuation"


@dataclass
class Mutant:
    """A mutated input and the mutations that made it."""

    seed: Seed
    data: bytes
    mutations: list[str] = field(default_factory=list)


def _tokens(text: str) -> list[re.Match[str]]:
    return list(_TOKEN.finditer(text))


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


#: Mutations that mostly keep the text parsable, for mutants meant to reach
#: the verifier and the passes.
_GENTLE = frozenset({"replace-token", "number", "swap-ssa", "duplicate-line"})

_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i32", "i64", "index")


def _mutate_text(
    text: str, rng: random.Random, gentle: bool = False
) -> tuple[str, str]:
    """One text mutation: the new text and a description."""
    tokens = _tokens(text)
    if not tokens:
        return text + rng.choice(_INSERTIONS), "append"
    choices = {k: w for k, w in _MUTATIONS.items() if not gentle or k in _GENTLE}
    kind = rng.choices(list(choices), list(choices.values()))[0]
    token = rng.choice(tokens)
    if kind == "delete-token":
        return _splice(text, token.start(), token.end(), ""), f"{kind} {token[0]!r}"
    if kind == "delete-chars":
        start = rng.randrange(len(text))
        length = rng.randint(1, 8)
        return _splice(text, start, start + length, ""), f"{kind} @{start}+{length}"
    if kind == "duplicate-token":
        return _splice(text, token.end(), token.end(), " " + token[0]), kind
    if kind == "insert":
        where = rng.randrange(len(text) + 1)
        new = rng.choice(_INSERTIONS)
        return _splice(text, where, where, new), f"{kind} {new!r} @{where}"
    if kind == "swap-tokens":
        other = rng.choice(tokens)
        first, second = sorted((token, other), key=lambda m: m.start())
        if first.end() > second.start():
            return text, kind
        swapped = (
            text[: first.start()]
            + second[0]
            + text[first.end() : second.start()]
            + first[0]
            + text[second.end() :]
        )
        return swapped, f"{kind} {first[0]!r} {second[0]!r}"
    if kind == "replace-token":  # mostly by a token of the same kind
        if token[0] in _TYPES:
            new = rng.choice(_TYPES)
        else:
            alike = [t for t in tokens if _kind_of(t[0]) == _kind_of(token[0])]
            new = rng.choice(alike if gentle or rng.random() < 0.7 else tokens)[0]
        return _splice(text, token.start(), token.end(), new), f"{kind} -> {new!r}"
    if kind == "number":
        numbers = list(_INTEGER.finditer(text))
        if not numbers:
            return text, kind
        number = rng.choice(numbers)
        new = rng.choice(_NUMBERS)
        return _splice(text, number.start(), number.end(), new), f"{kind} {new[:12]}"
    if kind == "swap-ssa":
        names = list(_SSA.finditer(text))
        if len(names) < 2:
            return text, kind
        use = rng.choice(names)
        new = rng.choice(names)[0]
        return _splice(text, use.start(), use.end(), new), f"{kind} {use[0]}->{new}"
    lines = text.split("\n")
    line = rng.randrange(len(lines))
    if kind == "swap-lines":
        other = rng.randrange(len(lines))
        lines[line], lines[other] = lines[other], lines[line]
        return "\n".join(lines), f"{kind} {line} {other}"
    if kind == "duplicate-line":
        lines.insert(line, lines[line])
        return "\n".join(lines), f"{kind} {line}"
    if kind == "delete-line":
        del lines[line]
        return "\n".join(lines), f"{kind} {line}"
    if kind == "truncate":
        where = rng.randrange(len(text))
        return text[:where], f"{kind} @{where}"
    if kind == "nest":
        depth = rng.choice((70, 150, 400))
        opening, closing = rng.choice((("[", "]"), ("(", ")"), ("{", "}"), ("<", ">")))
        new = opening * depth + token[0] + closing * depth
        return _splice(
            text, token.start(), token.end(), new
        ), f"{kind} {opening}x{depth}"
    # unclose-string: drop the closing quote of a string, or add an opening one
    strings = [t for t in tokens if t[0].startswith('"')]
    if strings:
        string = rng.choice(strings)
        return _splice(text, string.end() - 1, string.end(), ""), kind
    return _splice(text, token.start(), token.start(), '"'), kind


def mutants(count: int, seed: int = 0) -> Iterator[Mutant]:
    """``count`` mutants, the same ones for the same ``seed``: each of one to
    three mutations of a seed input (half of them only mutations that tend
    to keep the text parsable), sometimes with a non-UTF-8 byte, run
    sometimes with ``--print-op-generic``."""
    custom = seeds()
    inputs = custom + generic_seeds(custom)
    rng = random.Random(seed)
    for _ in range(count):
        base = rng.choice(inputs)
        text, mutations = base.text, []
        gentle = rng.random() < 0.5
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            text, description = _mutate_text(text, rng, gentle)
            mutations.append(description)
        data = text.encode()
        if rng.random() < 0.06:
            where = rng.randrange(len(data) + 1)
            byte = rng.choice(_BYTES)
            data = data[:where] + byte + data[where:]
            mutations.append(f"byte {byte!r} @{where}")
        args = base.args
        if rng.random() < 0.15 and "--print-op-generic" not in args:
            args = (*args, "--print-op-generic")
        yield Mutant(Seed(base.name, base.text, args), data, mutations)


# Running -------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How one irc-opt run ended (``hang``: no answer within the limit;
    ``escaped``: the traceback of an exception that left ``main``)."""

    status: int | None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    escaped: str | None = None
    hang: bool = False

    def problems(self) -> list[str]:
        """What is wrong with the run; empty when it ended as it must."""
        if self.hang:
            return ["hang: no answer within the time limit"]
        found = []
        if self.escaped is not None:
            found.append("an exception escaped main:\n" + self.escaped)
        if self.status not in (0, 1):
            found.append(f"exit status {self.status}")
        for stream in (self.stdout, self.stderr):
            if "Traceback" in stream:
                found.append("a traceback in the output")
        if "internal error" in self.stderr:
            found.append("an internal error")
        if self.status == 1:
            diagnostics = [
                line for line in self.stderr.splitlines() if _DIAGNOSTIC.match(line)
            ]
            if not diagnostics:
                found.append("exit status 1 without a diagnostic")
            found.extend(
                f"a diagnostic without line:col: {line}"
                for line in diagnostics
                if not _LOCATED.match(line)
            )
        return found


class Worker:
    """A process running irc-opt's ``main`` on one input after another."""

    def __init__(self, limit: float):
        self.limit = limit
        self.process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ, PYTHONPATH=str(REPOSITORY))
        return subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=REPOSITORY,
        )

    def run(self, data: bytes, args: tuple[str, ...]) -> Outcome:
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        assert self.process.stdin is not None and self.process.stdout is not None
        request = {"input": base64.b64encode(data).decode(), "args": list(args)}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        started = time.perf_counter()
        ready, _, _ = select.select([self.process.stdout], [], [], self.limit)
        if not ready:
            self.close()
            return Outcome(None, seconds=time.perf_counter() - started, hang=True)
        line = self.process.stdout.readline()
        if not line:  # the worker died (a crash of the interpreter)
            status = self.process.wait()
            self.process = None
            return Outcome(status, escaped=f"the worker process died ({status})")
        return Outcome(**json.loads(line))

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def _serve() -> None:
    """The worker's loop: one JSON request a line in, one outcome out."""
    sys.path.insert(0, str(REPOSITORY))
    from irc.cli import irc_opt

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "mutant.mlir"
        answers = sys.stdout
        for line in sys.stdin:
            request = json.loads(line)
            path.write_bytes(base64.b64decode(request["input"]))
            out, err = io.StringIO(), io.StringIO()
            escaped, status = None, None
            started = time.perf_counter()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = irc_opt.main([str(path), *request["args"]])
                except SystemExit as error:
                    status = error.code if isinstance(error.code, int) else 2
                except BaseException:
                    escaped = traceback.format_exc()
            stdout = out.getvalue()
            answer = {
                "status": status,
                # the printed IR is long; a traceback in it would be at its end
                "stdout": stdout if len(stdout) < 4000 else "..." + stdout[-4000:],
                "stderr": err.getvalue().replace(str(path), "mutant.mlir"),
                "seconds": time.perf_counter() - started,
                "escaped": escaped,
            }
            answers.write(json.dumps(answer) + "\n")
            answers.flush()


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _serve()
