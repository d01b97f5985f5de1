"""irc.testing.reduce and irc-reduce, against passes broken on purpose.

As PyTorch tests its minifier with backends that fail by design, a plugin
file plants the bugs: a pass that crashes when a ``graph.exp`` feeds a
``graph.reduce`` (the softmax's ``exp`` and ``sum``), one that kills its
process there, one that hangs on any ``graph.exp``, and a pass that
miscompiles ``x - broadcast(y)`` into ``x + broadcast(y)`` (the centring of a
layer norm). The reducer must bring a captured MLP block of about thirty
ops down to the few that show each bug, still valid and still failing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irc
from irc.ir import parse_module, print_module, verify_module
from irc.testing.reduce import (
    Crash,
    ErrorMatches,
    Miscompile,
    ReduceError,
    Script,
    count_ops,
    reduce,
)

BUGS = """
import os
import signal
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irc.dialects import graph


@dataclass(frozen=True)
class CrashOnExpReduce(ModulePass):
    name = "crash-on-exp-reduce"

    def apply(self, ctx, op) -> None:
        for inner in op.walk():
            if isinstance(inner, graph.ExpOp) and any(
                isinstance(use.operation, graph.ReduceOp)
                for use in inner.results[0].uses
            ):
                raise RuntimeError("planted bug: an exp feeding a reduce")


@dataclass(frozen=True)
class SegfaultOnExpReduce(ModulePass):
    name = "segfault-on-exp-reduce"

    def apply(self, ctx, op) -> None:
        try:
            CrashOnExpReduce().apply(ctx, op)
        except RuntimeError:
            os.kill(os.getpid(), signal.SIGSEGV)


@dataclass(frozen=True)
class HangOnExp(ModulePass):
    name = "hang-on-exp"

    def apply(self, ctx, op) -> None:
        while any(isinstance(inner, graph.ExpOp) for inner in op.walk()):
            pass


@dataclass(frozen=True)
class SubOfBroadcastToAdd(ModulePass):
    name = "sub-of-broadcast-to-add"

    def apply(self, ctx, op) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, graph.SubOp) and isinstance(
                inner.rhs.owner, graph.BroadcastOp
            ):
                Rewriter.replace_op(inner, graph.AddOp(inner.lhs, inner.rhs))
"""


def block(x, w1, w2):
    """An MLP, a layer norm and a softmax: 28 graph ops once captured."""
    h = np.maximum(x @ w1, 0) @ w2
    mu = h.mean(axis=-1, keepdims=True)
    c = h - mu
    var = (c * c).mean(axis=-1, keepdims=True)
    y = c / np.sqrt(var + 1e-5)
    s = y - y.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def program() -> str:
    module = irc.trace(
        block,
        irc.TensorSpec(("N", "D"), "float32"),
        irc.TensorSpec(("D", "H"), "float32"),
        irc.TensorSpec(("H", "D"), "float32"),
    )
    return print_module(module)


@pytest.fixture
def plugin(tmp_path: Path) -> str:
    path = tmp_path / "bugs.py"
    path.write_text(BUGS)
    return str(path)


def _ops(text: str) -> list[str]:
    """The names of the ops inside the functions of IR text."""
    return [
        op.name
        for op in parse_module(text).walk()
        if op.name not in ("builtin.module", "func.func")
    ]


def test_reduces_a_crash_to_the_ops_that_trigger_it(
    program: str, plugin: str, tmp_path: Path
) -> None:
    test = Crash(passes="crash-on-exp-reduce", plugins=(plugin,))
    result = reduce(program, test, output=tmp_path / "crash.mlir")
    assert result.ops_before == count_ops(parse_module(program)) >= 25
    assert sorted(_ops(result.text)) == ["func.return", "graph.exp", "graph.reduce"]
    assert result.ops_after == 3 and not result.exhausted
    assert result.tests_run < 60, result
    verify_module(parse_module(result.text))
    assert (tmp_path / "crash.mlir").read_text() == result.text
    # Still interesting, through the repro command.
    assert result.repro.startswith(f"irc-opt {tmp_path / 'crash.mlir'} -p ")
    assert test.is_interesting(test.run(tmp_path / "crash.mlir", timeout=30))


def test_a_hard_crash_is_a_crash_and_a_hang_is_not(
    program: str, plugin: str, tmp_path: Path
) -> None:
    """The tests run in their own processes: a pass that kills its process
    or never returns costs the reducer one candidate."""
    test = Crash(passes="segfault-on-exp-reduce", plugins=(plugin,))
    result = reduce(program, test, output=tmp_path / "segv.mlir")
    assert sorted(_ops(result.text)) == ["func.return", "graph.exp", "graph.reduce"]
    hangs = Crash(passes="hang-on-exp", plugins=(plugin,))
    with pytest.raises(ReduceError, match="it timed out"):
        reduce(program, hangs, output=tmp_path / "hang.mlir", timeout=1)


def test_reduces_a_miscompile(program: str, plugin: str, tmp_path: Path) -> None:
    test = Miscompile(passes="sub-of-broadcast-to-add", plugins=(plugin,))
    result = reduce(program, test, output=tmp_path / "wrong.mlir")
    assert sorted(_ops(result.text)) == [
        "func.return",
        "graph.broadcast",
        "graph.sub",
    ]
    assert result.tests_run < 100, result
    verify_module(parse_module(result.text))
    assert "--check-semantics" in result.repro
    assert test.is_interesting(test.run(tmp_path / "wrong.mlir", timeout=30))


def test_inlines_kernels_of_fusion_level_ir(
    program: str, plugin: str, tmp_path: Path
) -> None:
    """At the fusion level the ops sit in kernels: inlined, then cut."""
    fused = irc.compile(block, *program_specs()).ir("fusion")
    assert "fusion.kernel" in fused
    test = Crash(passes="crash-on-exp-reduce", plugins=(plugin,))
    result = reduce(fused, test, output=tmp_path / "fused.mlir")
    assert sorted(_ops(result.text)) == ["func.return", "graph.exp", "graph.reduce"]


def program_specs() -> tuple[irc.TensorSpec, ...]:
    return (
        irc.TensorSpec(("N", "D"), "float32"),
        irc.TensorSpec(("D", "H"), "float32"),
        irc.TensorSpec(("H", "D"), "float32"),
    )


def test_a_script_decides_and_the_budget_bounds_the_tests(
    program: str, tmp_path: Path
) -> None:
    script = tmp_path / "has_exp.py"
    script.write_text(
        "import sys\nsys.exit(0 if 'graph.exp' in open(sys.argv[1]).read() else 1)\n"
    )
    test = Script((sys.executable, str(script)))
    result = reduce(program, test, output=tmp_path / "exp.mlir")
    assert _ops(result.text) == ["graph.exp", "func.return"]
    bounded = reduce(program, test, output=tmp_path / "b.mlir", max_tests=4)
    assert bounded.exhausted and bounded.tests_run == 4
    assert "graph.exp" in bounded.text


def test_a_hang_is_not_interesting_and_does_not_stop_the_reducer(
    tmp_path: Path,
) -> None:
    script = tmp_path / "hang.sh"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(0o755)
    text = "func.func @f(%x: !graph.tensor<[N], f32>) {\n  func.return\n}\n"
    with pytest.raises(ReduceError, match="timed out"):
        reduce(text, Script((str(script),)), output=tmp_path / "h.mlir", timeout=1)


def test_refuses_an_input_the_test_does_not_hold_on(
    program: str, tmp_path: Path
) -> None:
    with pytest.raises(ReduceError, match="not interesting on the input"):
        reduce(program, Crash(passes="cse"), output=tmp_path / "r.mlir")
    with pytest.raises(ReduceError, match="cannot parse the input"):
        reduce("func.func @f(", Crash(passes="cse"), output=tmp_path / "r.mlir")


def _irc_reduce(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "irc.cli.irc_reduce", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_cli_end_to_end(program: str, plugin: str, tmp_path: Path) -> None:
    (tmp_path / "block.mlir").write_text(program)
    done = _irc_reduce(
        "block.mlir",
        "--error",
        "changed the results",
        "-p",
        "sub-of-broadcast-to-add",
        "--load-pass-plugin",
        plugin,
        "--",
        "--check-semantics",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "irc-reduce: reduced 28 ops to 3 in" in done.stderr
    reduced = (tmp_path / "block.reduced.mlir").read_text()
    assert "graph.sub" in reduced
    # The repro line, run as printed, shows the failure on the reduced file.
    repro = done.stdout.strip()
    assert repro == (
        "irc-opt block.reduced.mlir -p sub-of-broadcast-to-add "
        f"--load-pass-plugin {plugin} --check-semantics"
    )
    irc_opt = Path(sys.executable).parent / "irc-opt"
    shown = subprocess.run(
        [str(irc_opt), *repro.split()[1:]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert shown.returncode == 1 and "changed the results" in shown.stderr


def test_cli_user_errors(program: str, tmp_path: Path) -> None:
    (tmp_path / "block.mlir").write_text(program)
    missing = _irc_reduce("nope.mlir", "--crash", "-p", "cse", cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stderr == (
        "nope.mlir: error: cannot read input file: No such file or directory\n"
    )
    dull = _irc_reduce("block.mlir", "--crash", "-p", "cse", cwd=tmp_path)
    assert dull.returncode == 1 and "Traceback" not in dull.stderr
    assert dull.stderr.startswith(
        "block.mlir: error: the test is not interesting on the input, so there is "
        "nothing to reduce: it exited with status 0"
    )
    (tmp_path / "bad.mlir").write_text("func.func @f(\n")
    bad = _irc_reduce("bad.mlir", "--crash", cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stderr.startswith("bad.mlir: error: cannot parse the input:\nbad.mlir:")
    assert _irc_reduce("block.mlir", cwd=tmp_path).returncode == 2  # no test


def test_error_regex_on_a_verifier_error_keeps_invalid_input_reducible(
    tmp_path: Path,
) -> None:
    """An input that does not verify may be reduced through invalid
    candidates: the failure being reduced can be the verifier's."""
    text = """\
func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[M], f32> {
  %a = graph.exp %x : !graph.tensor<[N], f32>
  %b = graph.neg %a : !graph.tensor<[N], f32>
  %c = graph.reshape %b : !graph.tensor<[N], f32> -> !graph.tensor<[M], f32>
  func.return %c : !graph.tensor<[M], f32>
}
"""
    test = ErrorMatches(pattern="cannot reshape")
    result = reduce(text, test, output=tmp_path / "v.mlir")
    assert "graph.reshape" in result.text and result.ops_after == 2
