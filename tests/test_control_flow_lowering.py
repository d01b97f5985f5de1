"""Structured control flow through every level to the launcher (irc issue 12).

The example programs of ``control_flow_programs`` (the classic
``fori_loop`` + ``cond`` with a traced step count, an RNN scan over a
symbolic length, Newton's ``while_loop``, greedy decoding, cumsum as a scan)
run at every level (fusion, loop, memory interpreters; the emitted Triton
source under Triton's interpreter) against NumPy at several sizes, from one
compilation; every level's IR prints, re-parses and verifies; the emitted
launcher says where each decision runs and allocates its carried buffers
once; a loop that fits one kernel runs on the device, the others on the
host; irc-opt's ``--check-semantics`` and ``--check-bounds`` and
``check_pass`` take the IR with control flow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from control_flow_programs import (
    PROGRAMS,
    _halve_or_shift_inputs,
    _newton_inputs,
    halve_or_shift_reference,
    newton_sqrt_reference,
    rnn_inputs,
    rnn_loss,
    rnn_reference,
    rnn_specs,
)
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import VerifyException

import irc
from irc.cli import irc_opt
from irc.errors import ExecutionError
from irc.interpreters.memory import run_memory
from irc.ir import default_context, parse_module, print_module
from irc.lowering.pipeline import DEFAULT_PIPELINE
from irc.passes.registry import get_all_passes
from irc.testing import CONTROL_FLOW_ACTIONS, check_pass, programs
from irc.testing.interpreters import run_module

LOWER_LEVELS = ("fusion", "loop", "memory", "triton")


@pytest.fixture(scope="module")
def compiled() -> dict[str, irc.Compiled]:
    return {name: program.compile() for name, program in PROGRAMS.items()}


def _results(value: Any) -> list[np.ndarray]:
    values = value if isinstance(value, tuple | list) else (value,)
    return [np.asarray(v) for v in values]


def _assert_matches(got: Sequence[Any], want: Any) -> None:
    expected = _results(want)
    assert len(got) == len(expected)
    for actual, reference in zip(got, expected, strict=True):
        actual = np.asarray(actual)
        assert actual.shape == reference.shape
        if np.issubdtype(reference.dtype, np.floating):
            np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(actual, reference)


def _inputs(name: str, size: int) -> tuple[Any, ...]:
    return PROGRAMS[name].inputs(np.random.default_rng(size), size)


# ----- every level runs the programs --------------------------------------------


@pytest.mark.parametrize("level", LOWER_LEVELS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_level_agrees_with_numpy(
    compiled: dict[str, irc.Compiled], name: str, level: str
) -> None:
    module = compiled[name].module_at(level)
    for size in PROGRAMS[name].sizes:
        args = _inputs(name, size)
        got = run_module(module, [np.asarray(a) for a in args])
        _assert_matches(got, PROGRAMS[name].reference(*args))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_interpret_backend_agrees_with_numpy(
    compiled: dict[str, irc.Compiled], name: str
) -> None:
    for size in PROGRAMS[name].sizes:
        args = _inputs(name, size)
        got = compiled[name](*args, backend="interpret")
        _assert_matches(_results(got), PROGRAMS[name].reference(*args))


# ----- where decisions run, and the carried buffers -------------------------------


def _launcher(compiled: irc.Compiled) -> list[str]:
    source = compiled.triton_source
    start = source.index("\ndef launch_")
    return source[start:].split("\n\n\n")[0].splitlines()


def _loop_lines(lines: list[str], header: str) -> tuple[int, list[str]]:
    """The index of the first line starting with ``header`` (stripped) and
    the lines of that loop's body (indented deeper)."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(header))
    depth = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for line in lines[start + 1 :]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        body.append(line)
    return start, body


def test_classic_loop_decides_on_the_host_and_allocates_carries_once(
    compiled: dict[str, irc.Compiled],
) -> None:
    lines = _launcher(compiled["decay_or_grow"])
    start, body = _loop_lines(lines, "while True:")
    before = lines[:start]
    # The loop's decision is one device->host read, and says so; the cond's
    # is its kernel's (a device cond: it reads the predicate itself).
    reads = [line for line in body if ".item()" in line]
    assert len(reads) == 1
    comments = [line for line in body if "# decision on the host" in line]
    assert len(comments) == 1
    assert "device->host read per iteration" in lines[start - 1]
    assert not any(re.match(r"\s+if v_decision\w*:$", line) for line in body)
    assert "device cond: each program reads the predicate" in (
        compiled["decay_or_grow"].ir("loop")
    )
    # Every buffer exists before the loop; the loop allocates nothing.
    assert not [line for line in body if "_irc_allocate" in line or "_irc_view" in line]
    carries = [line for line in before if "'carry" in line and "_irc_allocate" in line]
    assert len(carries) == 4  # current and next of the counter and of x
    assert any(".copy_(t_x)" in line for line in before)  # the initial carry
    # The carries' buffers swap at the end of each iteration (ping-pong).
    exit_test = next(i for i, line in enumerate(body) if "if not v_decision" in line)
    current = _assigned(body[exit_test - 1])[0]  # the body's (current, next)
    following = _assigned(body[-1])[1]  # what the next iteration gets
    assert sorted(following) == sorted(current) and following != current


def _assigned(line: str) -> tuple[list[str], list[str]]:
    """The names on either side of ``(a, b) = (c, d)``."""
    left, right = line.strip().split(" = ")
    return left.strip("()").split(", "), right.strip("()").split(", ")


def test_scan_with_a_matmul_runs_on_the_host_one_module_for_all_lengths(
    compiled: dict[str, irc.Compiled],
) -> None:
    rnn = compiled["rnn"]
    lines = _launcher(rnn)
    start, body = _loop_lines(lines, "for i_step in range(")
    assert "    v_trips = s_T" in lines  # the trip count is the bound symbol T
    assert "v_trips" in lines[start]
    assert "trip count comes from the bound symbols" in lines[start - 1]
    assert sum("kernel_" in line and ".run(" in line for line in body) == 3
    assert not [line for line in body if "_irc_allocate" in line]
    assert "graph.for" in rnn.ir("loop") and "scf.for" in rnn.ir("memory")


def test_elementwise_scan_runs_on_the_device_in_one_kernel(
    compiled: dict[str, irc.Compiled],
) -> None:
    cumsum = compiled["cumsum"]
    lines = _launcher(cumsum)
    assert not [line for line in lines if re.match(r"\s+(for|while) ", line)]
    says = [line for line in lines if "# loop on the device, no host decision" in line]
    assert len(says) == 1 and "the whole graph.for (N iterations)" in says[0]
    assert "graph.for N" not in cumsum.ir("loop")  # the loop is in the kernel
    assert "device loop: the whole graph.for (N iterations)" in cumsum.ir("loop")
    kernel = cumsum.triton_source.split("def kernel_k1(")[1].split("\n\n\n")[0]
    assert re.search(r"for v\w+ in range\(", kernel)
    assert cumsum.num_kernels == 2  # the zeros, then the whole scan


def test_a_map_over_the_leading_axis_is_one_device_loop() -> None:
    """A scan with no carries (a map): the kernel's shape is a slice's, not
    the stacked ys' ``[T, 6]``."""

    def sine_rows(x: Any) -> Any:
        return irc.scan(lambda c, row: (c, np.sin(row) * 2.0), (), x)[1]

    compiled = irc.compile(sine_rows, irc.TensorSpec(("T", 6), "float32"))
    assert compiled.num_kernels == 1
    for length in (1, 5):
        x = np.random.default_rng(length).standard_normal((length, 6))
        x = x.astype(np.float32)
        got = compiled(x, backend="interpret")
        np.testing.assert_allclose(got, np.sin(x) * 2.0, rtol=1e-6)


def test_a_reverse_device_loop_counts_down() -> None:
    def reverse_cumsum(xs: Any) -> Any:
        def add(total: Any, x: Any) -> Any:
            total = total + x
            return total, total

        return irc.scan(add, np.zeros_like(xs[0]), xs, reverse=True)

    compiled = irc.compile(reverse_cumsum, irc.TensorSpec(("N", "D"), "float32"))
    assert "device loop" in compiled.ir("loop")
    for n, d in ((1, 3), (5, 1200)):
        xs = np.random.default_rng(n).standard_normal((n, d)).astype(np.float32)
        total, sums = compiled(xs, backend="interpret")
        expected = np.cumsum(xs[::-1], axis=0)[::-1]
        np.testing.assert_allclose(sums, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(total, expected[0], rtol=1e-5, atol=1e-5)


#: The new row ``buf[i]`` of a ``fori_loop`` over the rows, and whether the
#: loop runs on the device: a row read where it is written, or from a
#: closed-over input, is read at each lane's own element; the previous row,
#: the row reversed and a mean over the row are not.
_ROW_UPDATES: dict[str, tuple[Callable[..., Any], bool]] = {
    "own row and an input's": (lambda b, x, w, i: 0.5 * b[i] + x[i] * w, True),
    "an input's row only": (lambda b, x, w, i: np.tanh(x[i]) * w, True),
    "own row twice": (lambda b, x, w, i: b[i] * b[i] - w, True),
    "previous row": (lambda b, x, w, i: 0.5 * b[i - 1] + x[i], False),
    "own row reversed": (lambda b, x, w, i: b[i][::-1] + w, False),
    "own row centred": (lambda b, x, w, i: b[i] - b[i].mean(), False),
}


@pytest.mark.parametrize("case", sorted(_ROW_UPDATES))
def test_a_row_update_is_a_device_loop_where_it_reads_its_own_row(case: str) -> None:
    """``buf[i] = f(buf[i], x[i])`` over a symbolic count is one launch; a
    body reading the carry anywhere else keeps its loop on the host. Both
    agree with NumPy, past one program's 1024 lanes."""
    new_row, on_device = _ROW_UPDATES[case]

    def update_rows(buf: Any, x: Any, w: Any) -> Any:
        def update(i: Any, buf: Any) -> Any:
            buf[i] = new_row(buf, x, w, i)
            return buf

        return irc.fori_loop(0, x.shape[0], update, buf)

    def reference(buf: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        buf = buf.copy()
        for i in range(x.shape[0]):
            buf[i] = new_row(buf, x, w, i)
        return buf

    rows = irc.TensorSpec(("N", 3), "float32")
    compiled = irc.compile(update_rows, rows, rows, irc.TensorSpec((3,), "float32"))
    assert ("device loop" in compiled.ir("loop")) is on_device
    host_loops = [line for line in _launcher(compiled) if re.match(r"\s+for ", line)]
    assert bool(host_loops) is not on_device
    if on_device:
        assert compiled.num_kernels == 1
    for n in (1, 2, 5, 400) if on_device else (1, 2, 5):
        rng = np.random.default_rng(n)
        args = [rng.standard_normal(s).astype(np.float32) for s in ((n, 3), (n, 3), 3)]
        expected = reference(*args)
        for backend in ("reference", "interpret"):
            got = compiled(*args, backend=backend)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_column_update_is_a_device_loop() -> None:
    """``buf[:, j] = 2 * buf[:, j] + x[:, j]`` over the columns: the row
    rule along axis 1."""

    def update_columns(buf: Any, x: Any) -> Any:
        def update(j: Any, buf: Any) -> Any:
            buf[:, j] = 2.0 * buf[:, j] + x[:, j]
            return buf

        return irc.fori_loop(0, buf.shape[1], update, buf)

    spec = irc.TensorSpec(("N", "D"), "float32")
    compiled = irc.compile(update_columns, spec, spec)
    assert compiled.num_kernels == 1 and "device loop" in compiled.ir("loop")
    for n, d in ((1, 1), (3, 4), (7, 300)):
        rng = np.random.default_rng(n)
        buf, x = (rng.standard_normal((n, d)).astype(np.float32) for _ in range(2))
        got = compiled(buf, x, backend="interpret")
        np.testing.assert_allclose(got, 2.0 * buf + x, rtol=1e-5, atol=1e-6)


def _halve_until_small(x: Any) -> Any:
    return irc.while_loop(lambda x: np.sqrt((x * x).sum()) >= 1.0, lambda x: x * 0.5, x)


@pytest.mark.parametrize("iterations", [0, 1, 7, 8, 9, 20])
def test_a_while_loop_reads_its_predicate_once_every_8_iterations(
    iterations: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Halving until the norm is below 1, on the emitted kernels: the host
    decides (one device->host read, ``.item()``) once per 8 iterations and
    once more to stop, not once per iteration, and the result is the
    loop's, however many iterations the last 8 overran."""
    compiled = irc.compile(_halve_until_small, irc.TensorSpec(("N",), "float32"))
    reads = 0
    item = torch.Tensor.item

    def counted(tensor: torch.Tensor) -> Any:
        nonlocal reads
        reads += 1
        return item(tensor)

    monkeypatch.setattr(torch.Tensor, "item", counted)
    # A norm of 0.9 * 2**iterations: that many halvings, exactly.
    x = np.full(4, 0.45 * 2.0**iterations, np.float32)
    got = compiled(x, backend="interpret")
    np.testing.assert_array_equal(got, x / 2.0**iterations)
    assert reads == -(-iterations // 8) + 1  # one per iteration: iterations + 1


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the launcher's device->host reads (``.item()``): one per host
    decision."""
    reads = [0]
    item = torch.Tensor.item

    def counted(tensor: torch.Tensor) -> Any:
        reads[0] += 1
        return item(tensor)

    monkeypatch.setattr(torch.Tensor, "item", counted)
    return reads


@pytest.mark.parametrize("iterations", [0, 1, 7, 8, 9, 20])
def test_a_while_loop_that_fits_one_program_runs_on_the_device(
    iterations: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Halving a static vector of 1000 until its norm is below 1 is one
    kernel of one program with an ``scf.while`` inside: one launch a call,
    no host decision (no ``.item()``), fuse leaves the loop as it is (no
    unrolling), and the result is the loop's exactly."""
    compiled = irc.compile(_halve_until_small, irc.TensorSpec((1000,), "float32"))
    assert compiled.num_kernels == 1 and compiled.launch_sites == 1
    assert "graph.and" not in compiled.ir("fusion")
    loop_ir = compiled.ir("loop")
    assert "scf.while" in loop_ir and "= graph.while" not in loop_ir
    assert "while " in compiled.triton_source.split("# host function")[0]
    reads = _counting_reads(monkeypatch)
    # A norm of 0.9 * 2**iterations: that many halvings, exactly.
    x = np.full(1000, 0.9 * 2.0**iterations / np.sqrt(1000), np.float32)
    expected = x.copy()
    while np.sqrt((expected * expected).sum()) >= 1.0:
        expected = expected * np.float32(0.5)
    for backend in ("reference", "interpret"):
        np.testing.assert_array_equal(compiled(x, backend=backend), expected)
    assert reads[0] == 0


def _approach(x: Any, target: Any) -> Any:
    """Halve the gap to ``target`` until every element is within 1e-3."""
    return irc.while_loop(
        lambda v: np.abs(v - target).max() > 1e-3,
        lambda v: v + np.float32(0.5) * (target - v),
        x,
    )


@pytest.mark.parametrize("shape", [(2,), (7, 9), (2, 3, 64), (4096,)])
def test_a_device_while_loop_reads_what_it_does_not_change_in_place(
    shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A closed-over target (a carry the body yields unchanged) is read once,
    in place; a carry of any rank up to 4096 elements runs on the device,
    and the result is NumPy's loop's exactly (a max is exact in any order)."""
    spec = irc.TensorSpec(shape, "float32")
    compiled = irc.compile(_approach, spec, spec)
    assert "device loop: the whole graph.while" in compiled.ir("loop")
    reads = _counting_reads(monkeypatch)
    rng = np.random.default_rng(len(shape))
    x, target = (10 * rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    expected = x.copy()
    while np.abs(expected - target).max() > 1e-3:
        expected = expected + np.float32(0.5) * (target - expected)
    for backend in ("reference", "interpret"):
        np.testing.assert_array_equal(compiled(x, target, backend=backend), expected)
    assert reads[0] == 0


@pytest.mark.parametrize("n", [1, 2, 127, 128, 129, 4095, 4096])
def test_a_while_loop_over_a_size_the_facts_bound_runs_on_the_device(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Newton's square root over ``N <= 4096`` elements (a declared fact) runs
    in one program, its iteration counter a whole carry beside the lanewise
    root; the launch takes the next power of two of ``N`` as the program's
    block (at least 128): at the buckets' edges the roots and the counts are
    NumPy's loop's, with no host decision."""
    compiled = PROGRAMS["newton_sqrt_bounded"].compile()
    loop_ir = compiled.ir("loop")
    assert "device loop: the whole graph.while" in loop_ir
    assert "in a block of 4096 (chosen at launch)" in loop_ir
    reads = _counting_reads(monkeypatch)
    (a,) = _newton_inputs(np.random.default_rng(n), n)
    root, count = newton_sqrt_reference(a)
    for backend in ("reference", "interpret"):
        got_root, got_count = compiled(a, backend=backend)
        assert got_count == count
        np.testing.assert_allclose(got_root, root, rtol=1e-6)
    assert reads[0] == 0


def test_a_device_while_loop_body_may_reduce_its_carries_whole() -> None:
    """A body that divides by the norm of its carry (a whole reduction) is
    two kernels, a row kernel and a pointwise one, yet one program holds
    them both: one launch, the loop's result."""

    def rescale(x: Any) -> Any:
        return irc.while_loop(
            lambda v: v.max() > 1.0,
            lambda v: v / np.sqrt((v * v).sum()) * np.float32(1.5),
            x,
        )

    compiled = irc.compile(rescale, irc.TensorSpec((50,), "float32"))
    assert compiled.num_kernels == 1
    x = np.random.default_rng(0).uniform(0, 10, 50).astype(np.float32)
    expected = x.copy()
    while expected.max() > 1.0:
        expected = expected / np.sqrt((expected * expected).sum()) * np.float32(1.5)
    np.testing.assert_allclose(compiled(x, backend="interpret"), expected, rtol=1e-6)


def _constant_next(x: Any, n: Any) -> Any:
    return irc.while_loop(
        lambda s: s[1] < 3, lambda s: (np.ones(16, np.float32) * 2.0, s[1] + 1), (x, n)
    )


def _spread_sum_next(x: Any, n: Any) -> Any:
    return irc.while_loop(
        lambda s: s[1] < 3,
        lambda s: (np.broadcast_to(s[0].sum() * np.float32(0.5), s[0].shape), s[1] + 1),
        (x, n),
    )


def _sum_of_spread_counter(x: Any, n: Any) -> Any:
    return irc.while_loop(
        lambda s: np.broadcast_to(s[1].astype(np.float32), s[0].shape).sum() < 100.0,
        lambda s: (s[0] + np.float32(1), s[1] + 1),
        (x, n),
    )


def _numpy_spread_sum(x: np.ndarray) -> tuple[np.ndarray, np.int64]:
    for _ in range(3):
        x = np.full_like(x, x.sum() * np.float32(0.5))
    return x, np.int64(3)


#: What NumPy's loops give on ``arange(16)`` and a counter from 0.
_NUMPY_LOOPS: dict[str, Callable[[np.ndarray], tuple[np.ndarray, np.int64]]] = {
    "_constant_next": lambda x: (np.full_like(x, 2.0), np.int64(3)),
    "_spread_sum_next": _numpy_spread_sum,
    # 16 * count < 100 holds up to count 6: 7 iterations.
    "_sum_of_spread_counter": lambda x: (x + np.float32(7), np.int64(7)),
}


@pytest.mark.parametrize(
    "function", [_constant_next, _spread_sum_next, _sum_of_spread_counter]
)
def test_a_device_while_loop_holds_a_lanewise_carry_as_a_tile(
    function: Callable[..., Any],
) -> None:
    """A lanewise carry whose next value is computed from whole values or
    constants alone, and a whole reduction of such a value over 16 lanes
    (no mask), are tiles of the lanes: the loop carries one type (the
    verifier checks it; Triton compiles no other loop), and the result is
    NumPy's loop's. (Review of the device while loops: a scalar yielded for
    a tile, and a reduction of a scalar.)"""
    compiled = irc.compile(
        function, irc.TensorSpec((16,), "float32"), irc.TensorSpec((), "int64")
    )
    assert "device loop: the whole graph.while" in compiled.ir("loop")
    x, n = np.arange(16, dtype=np.float32), np.int64(0)
    expected = _NUMPY_LOOPS[function.__name__](x)
    for backend in ("reference", "interpret"):
        got = compiled(x, n, backend=backend)
        for array, want in zip(got, expected, strict=True):
            np.testing.assert_array_equal(array, want)


def test_a_while_loop_that_only_moves_its_carries_is_lowered() -> None:
    """A loop whose regions hold no kernel (it swaps two carries) is no
    device while loop as it is (the tiler needs a kernel); ``fuse`` unrolls
    it, and its unrolled form, whose selects are kernels, runs on the
    device. (Review of the device while loops: the tiler crashed.)"""
    spec = irc.TensorSpec((), "bool")
    compiled = irc.compile(
        lambda a, b: irc.while_loop(lambda s: s[0], lambda s: (s[1], s[0]), (a, b)),
        spec,
        spec,
    )
    assert "graph.and" in compiled.ir("fusion")  # unrolled
    got = compiled(np.bool_(True), np.bool_(False), backend="interpret")
    assert [bool(v) for v in got] == [False, True]


@pytest.mark.parametrize("n", [1, 2, 1023, 1024, 1025])
def test_a_cond_of_pointwise_branches_decides_on_the_device(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cond whose branches are pointwise kernels (one of them two kernels,
    the other passing an operand on) is one kernel: each program reads the
    predicate the sum's kernel wrote and computes the taken branch; no
    host decision, NumPy's values either way."""
    compiled = PROGRAMS["halve_or_shift"].compile()
    assert compiled.num_kernels == 2
    assert "device cond: each program reads the predicate" in compiled.ir("loop")
    assert "scf.if" in compiled.ir("loop")
    reads = _counting_reads(monkeypatch)
    for size in (n, n + 1):  # either sign of the sum
        x, y = _halve_or_shift_inputs(np.random.default_rng(size), size)
        expected = halve_or_shift_reference(x, y)
        for backend in ("reference", "interpret"):
            got = compiled(x, y, backend=backend)
            for array, want in zip(got, expected, strict=True):
                np.testing.assert_array_equal(array, want)
    assert reads[0] == 0


@pytest.mark.parametrize("shape", [("N",), (4097,)])
def test_a_while_loop_that_may_not_fit_one_program_decides_on_the_host(
    shape: tuple[Any, ...],
) -> None:
    """Carries of a symbolic size, or of more than 4096 elements, do not fit
    one program's registers: the loop stays on the host, 8 iterations per
    decision."""
    compiled = irc.compile(_halve_until_small, irc.TensorSpec(shape, "float32"))
    assert "graph.and" in compiled.ir("fusion")
    assert "scf.while" not in compiled.ir("loop")
    assert "while_0" in str(compiled.launches)


def test_a_while_loop_unrolled_or_not_agrees_with_numpy() -> None:
    """The same loop compiled with ``fuse{while-factor=1}`` reads its predicate
    every iteration, and both agree with NumPy's loop at sizes and norms
    past 8 iterations."""
    spec = irc.TensorSpec(("N",), "float32")
    unrolled = irc.compile(_halve_until_small, spec)
    plain = irc.compile(
        _halve_until_small,
        spec,
        pipeline=DEFAULT_PIPELINE.replace("fuse", "fuse{while-factor=1}"),
    )
    # The unrolled loop's condition is ``alive & cond(c)``.
    assert "graph.and" in unrolled.ir("fusion")
    assert "graph.and" not in plain.ir("fusion")
    for n, scale in ((1, 0.3), (5, 40.0), (1500, 3000.0)):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32) * scale
        expected = x.copy()
        while np.sqrt((expected * expected).sum()) >= 1.0:
            expected = expected * np.float32(0.5)
        for compiled in (unrolled, plain):
            got = compiled(x, backend="interpret")
            np.testing.assert_array_equal(got, expected)


# ----- gradients ---------------------------------------------------------------------


def _numeric_gradient(args: Sequence[np.ndarray], position: int) -> np.ndarray:
    """The central difference of the RNN loss in float64 along every
    element of argument ``position``."""

    def loss(*values: np.ndarray) -> float:
        last, states = rnn_reference(*values)
        return float((states * states).sum() + last.sum())

    values = [np.asarray(a, np.float64) for a in args]
    gradient = np.zeros_like(values[position])
    step = 1e-6
    for index in np.ndindex(gradient.shape):
        plus = [v.copy() for v in values]
        minus = [v.copy() for v in values]
        plus[position][index] += step
        minus[position][index] -= step
        gradient[index] = (loss(*plus) - loss(*minus)) / (2 * step)
    return gradient


def test_rnn_gradient_over_a_symbolic_length_at_every_level() -> None:
    """The gradient of a loss of every RNN state (a reverse graph.for over T
    after the forward one): one compilation, every level and the emitted
    kernels agree with the graph level and with central differences."""
    compiled = irc.compile(irc.grad(rnn_loss, argnums=(0, 1, 2, 3)), *rnn_specs())
    for length in (1, 4):
        args = rnn_inputs(np.random.default_rng(length), length)
        expected = [_numeric_gradient(args, i) for i in range(4)]
        for level in ("graph", *LOWER_LEVELS):
            got = run_module(compiled.module_at(level), list(args))
            for actual, numeric in zip(got, expected, strict=True):
                np.testing.assert_allclose(actual, numeric, rtol=1e-3, atol=1e-4)
        got = compiled(*args, backend="interpret")
        for actual, numeric in zip(got, expected, strict=True):
            np.testing.assert_allclose(actual, numeric, rtol=1e-3, atol=1e-4)
    assert "scf.for" in compiled.ir("memory")  # both loops run on the host


# ----- nesting -----------------------------------------------------------------------


def _nested_loops(x: Any, w: Any) -> Any:
    """A fori_loop over a symbolic dim around a static one around a cond."""

    def outer(i: Any, x: Any) -> Any:
        def inner(j: Any, x: Any) -> Any:
            return irc.cond(x.sum() > 0, lambda x: x @ w * 0.5, lambda x: x + 1.0, x)

        return irc.fori_loop(0, 2, inner, x) + 1.0

    return irc.fori_loop(0, x.shape[0], outer, x)


def _nested_loops_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    for _ in range(x.shape[0]):
        for _ in range(2):
            x = x @ w * np.float32(0.5) if x.sum() > 0 else x + np.float32(1.0)
        x = x + np.float32(1.0)
    return x


def _while_in_cond(x: Any, n: Any) -> Any:
    def doubled(x: Any, n: Any) -> Any:
        state = (x, np.int64(0))
        return irc.while_loop(
            lambda s: s[1] < n, lambda s: (s[0] * 2.0, s[1] + 1), state
        )[0]

    return irc.cond(n > 2, doubled, lambda x, n: x - 1.0, x, n)


def _while_in_cond_reference(x: np.ndarray, n: np.int64) -> np.ndarray:
    return x * np.float32(2.0**n) if n > 2 else x - np.float32(1.0)


def _invariant_carry(a: Any, xs: Any) -> Any:
    """A scan whose second carry never changes (read in place), with two ys."""

    def body(carry: Any, x: Any) -> Any:
        s, k = carry
        t = s * k + x
        return (t, k), (t, x.sum())

    (s, k), (ys, sums) = irc.scan(body, (a, a * 0 + 2.0), xs)
    return s, k, ys, sums


def _invariant_carry_reference(a: np.ndarray, xs: np.ndarray) -> Any:
    s, k = a, a * 0 + np.float32(2.0)
    states = []
    for x in xs:
        s = s * k + x
        states.append(s)
    return s, k, np.stack(states), xs.sum(axis=1)


def _body_temporaries(h: Any, xs: Any, w: Any) -> Any:
    """A scan body of chained matmuls and a branch, whose temporaries share
    buffers (bufferize's liveness inside a region)."""

    def cell(h: Any, x: Any) -> Any:
        a = h @ w
        b = np.tanh(a) @ w
        c = irc.cond(b.sum() > 0, lambda b: np.tanh(b) @ w, lambda b: b @ w * 0.5, b)
        d = np.tanh(c) @ w
        return np.tanh(d + x), d.sum()

    return irc.scan(cell, h, xs)


def _body_temporaries_reference(h: np.ndarray, xs: np.ndarray, w: np.ndarray) -> Any:
    sums = []
    for x in xs:
        b = np.tanh(h @ w) @ w
        c = np.tanh(b) @ w if b.sum() > 0 else b @ w * np.float32(0.5)
        d = np.tanh(c) @ w
        h = np.tanh(d + x)
        sums.append(d.sum())
    return h, np.array(sums, np.float32)


NESTED = {
    "body_temporaries": (
        _body_temporaries,
        _body_temporaries_reference,
        (
            irc.TensorSpec(("B", 4), "float32"),
            irc.TensorSpec(("T", "B", 4), "float32"),
            irc.TensorSpec((4, 4), "float32"),
        ),
        lambda rng, n: (
            rng.standard_normal((n, 4)).astype(np.float32),
            rng.standard_normal((n + 1, n, 4)).astype(np.float32),
            (0.5 * rng.standard_normal((4, 4))).astype(np.float32),
        ),
    ),
    "nested_loops": (
        _nested_loops,
        _nested_loops_reference,
        (irc.TensorSpec(("N", "N"), "float32"),) * 2,
        lambda rng, n: tuple(
            (0.3 * rng.standard_normal((n, n))).astype(np.float32) for _ in range(2)
        ),
    ),
    "while_in_cond": (
        _while_in_cond,
        _while_in_cond_reference,
        (irc.TensorSpec(("N",), "float32"), irc.TensorSpec((), "int64")),
        lambda rng, n: (rng.standard_normal(n).astype(np.float32), np.int64(n)),
    ),
    "invariant_carry": (
        _invariant_carry,
        _invariant_carry_reference,
        (irc.TensorSpec(("D",), "float32"), irc.TensorSpec(("T", "D"), "float32")),
        lambda rng, n: (
            rng.standard_normal(3).astype(np.float32),
            rng.standard_normal((n, 3)).astype(np.float32),
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_control_flow_at_every_level(name: str) -> None:
    function, reference, specs, inputs = NESTED[name]
    compiled = irc.compile(function, *specs)
    for size in (1, 2, 4):
        args = inputs(np.random.default_rng(size), size)
        for level in LOWER_LEVELS:
            got = run_module(compiled.module_at(level), [np.asarray(a) for a in args])
            _assert_matches(got, reference(*args))
        got = compiled(*args, backend="interpret")
        _assert_matches(_results(got), reference(*args))


def _chained(h: Any, xs: Any, w: Any) -> Any:
    def cell(h: Any, x: Any) -> Any:
        a = h @ w
        b = np.tanh(a) @ w
        c = np.tanh(b) @ w
        return np.tanh(np.tanh(c) @ w + x), None

    return irc.scan(cell, h, xs)[0]


def test_a_loop_body_s_dead_temporaries_share_buffers() -> None:
    """The body's three temporaries of one type (a, b, c) need two buffers:
    a is dead once b is computed, so c takes its buffer."""
    specs = (
        irc.TensorSpec(("B", 8), "float32"),
        irc.TensorSpec(("T", "B", 8), "float32"),
        irc.TensorSpec((8, 8), "float32"),
    )
    compiled = irc.compile(_chained, *specs)
    host = compiled.ir("memory").split("func.func @_chained")[1]
    loop = host.split("scf.for")[1].split("scf.yield")[0]
    written = re.findall(r"memory.launch @\w+\(.*, (%\w+)\) :", loop)
    assert len(written) == 4 and written[0] == written[2] != written[1], loop
    before_loop = host.split("scf.for")[0]
    # The carry's two buffers, the two temporaries' (the returned copy after).
    assert before_loop.count("memory.alloc") == 4
    rng = np.random.default_rng(5)
    h, w = rng.standard_normal((3, 8)), 0.3 * rng.standard_normal((8, 8))
    xs = rng.standard_normal((4, 3, 8))
    h, xs, w = (a.astype(np.float32) for a in (h, xs, w))
    expected = h
    for x in xs:
        expected = np.tanh(np.tanh(np.tanh(np.tanh(expected @ w) @ w) @ w) @ w + x)
    got = compiled(h, xs, w, backend="interpret")
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_an_invariant_carry_is_read_in_place() -> None:
    function, _, specs, _ = NESTED["invariant_carry"]
    memory_ir = irc.compile(function, *specs).ir("memory")
    # One pair of buffers: the changing carry's; the constant 2 is not copied.
    assert memory_ir.count("%carry = memory.alloc") == 1
    assert "%carry_1" not in memory_ir


# ----- tools on IR with control flow ------------------------------------------------


@pytest.mark.parametrize("name", ["decay_or_grow", "rnn"])
def test_irc_opt_checks_semantics_and_bounds_of_the_lowering(
    compiled: dict[str, irc.Compiled],
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(compiled[name].ir("graph"))
    pipeline = "fuse,tile,bufferize,lower-memory-to-triton"
    flags = ["--check-semantics", "--check-semantics-runs=2", "--check-bounds"]
    status = irc_opt.main([str(source), "-p", pipeline, *flags])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "scf.for" in captured.out or "scf.while" in captured.out


@pytest.mark.parametrize(
    ("passes", "level"),
    [
        ("fuse", "graph"),
        ("tile", "fusion"),
        ("bufferize", "loop"),
        ("lower-memory-to-triton", "memory"),
    ],
)
def test_check_pass_on_the_programs(
    compiled: dict[str, irc.Compiled], passes: str, level: str
) -> None:
    # Random inputs would index greedy_decode's table out of range.
    programs = [c.ir(level) for n, c in compiled.items() if n != "greedy_decode"]
    report = check_pass(passes, programs, max_examples=6)
    control_flow = {"graph.cond", "graph.while", "graph.for", "scf.while", "scf.for"}
    assert report.examples > 0 and control_flow & set(report.op_kinds)


# ----- the real launch path ---------------------------------------------------------


def test_host_and_device_loops_launch_on_the_real_path(tmp_path: Path) -> None:
    """The RNN's kernels and the row update's go through Triton's binder and
    compiler (sm_90 PTX and a cubin) under the fake CUDA driver, with
    NumPy's result shapes and dtypes: the RNN's launched once per iteration
    by the launcher's host loop, the row update's device loop and the
    halving's device while loop once a call."""
    from fake_gpu_control_flow import LENGTHS
    from fake_gpu_control_flow import __file__ as script
    from fake_gpu_suite import run_compiling

    out = tmp_path / "report.json"
    completed = run_compiling([script, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(out.read_text())
    for name, result in report.items():
        assert "error" not in result, f"{name}: {result.get('error')}"
        assert [call["length"] for call in result["calls"]] == list(LENGTHS)
        for call in result["calls"]:
            assert call["outputs"] == call["numpy"]
            # ``Compiled.launches`` at the call's sizes is what ran.
            assert len(call["launches"]) == call["expected"], (name, call["length"])
            for launch in call["launches"]:
                assert launch["binary"]["sm_90"]
                assert launch["binary"]["cubin_bytes"] > 0
    # Every kernel of the RNN is in the loop body: one launch each per
    # iteration.
    assert report["rnn"]["per_call"] == f"{report['rnn']['sites']}*T"
    for call in report["rnn"]["calls"]:
        for launch in call["launches"]:
            # Rows of xs are views at a row's offset: pointers, not always
            # 16-byte aligned (Triton specialises on that per launch).
            assert any(a["kind"] == "pointer" for a in launch["args"].values())
    # The row update's loop is in its one kernel, whatever the length.
    assert report["row_update"]["per_call"] == "1"
    assert [len(c["launches"]) for c in report["row_update"]["calls"]] == [1, 1]
    # So is the halving's while loop, decided inside the kernel.
    assert report["halve_to_unit_norm"]["per_call"] == "1"
    assert [len(c["launches"]) for c in report["halve_to_unit_norm"]["calls"]] == [1, 1]
    # Newton's loop too, its counter's initial 0 filled by a kernel of its own.
    assert report["newton_sqrt_bounded"]["per_call"] == "2"
    # A device cond: the predicate's kernel and the cond's, no decision.
    assert report["halve_or_shift"]["per_call"] == "2"


# ----- generated programs with control flow -------------------------------------------

#: Bounded steps a generated body chains (values stay in [-2, 2]).
_STEPS: dict[str, Any] = {
    "tanh": np.tanh,
    "halve_and_shift": lambda v: v * 0.5 + 0.25,
    "center_rows": lambda v: v - v.mean(axis=-1, keepdims=True),
    "sin": np.sin,
}


@st.composite
def control_flow_modules(draw: st.DrawFn) -> ModuleOp:
    """Graph modules of ``f(x: [N, D], w: [D, D])`` with a loop or a cond
    (an ``irc.fori_loop`` over a static or symbolic count, or updating each
    row ``x[i]`` from a row (device or host loops), an ``irc.scan``
    over the rows of ``x``, an ``irc.while_loop``, an ``irc.cond`` on a
    reduction), optionally holding a cond, around bodies of bounded steps
    and, optionally, a matmul, over sizes the facts may bound: host loops,
    device loops and decisions."""
    steps = draw(st.lists(st.sampled_from(sorted(_STEPS)), min_size=1, max_size=3))
    use_matmul = draw(st.booleans())
    inner_cond = draw(st.booleans())
    kind = draw(
        st.sampled_from(
            ["fori_static", "fori_symbolic", "fori_rows", "scan", "while", "cond"]
        )
    )
    # A row update's new row: from its own row (a device loop unless a step
    # reads across the row), an input's row, or the previous row (host).
    row_source = draw(st.sampled_from(["own", "input", "previous"]))

    def body(v: Any, w: Any) -> Any:
        for step in steps:
            v = _STEPS[step](v)
        if use_matmul and v.ndim == 2:
            v = np.tanh(v @ w)
        if inner_cond:
            # A max is exact in any order (a sum of centred rows is 0 up to
            # rounding, which the levels may order differently).
            v = irc.cond(v.max() > 0.25, lambda u: u * 0.5, lambda u: u - 0.5, v)
        return v

    def function(x: Any, w: Any) -> Any:
        if kind == "fori_static":
            return irc.fori_loop(0, 2, lambda i, v: body(v, w), x)
        if kind == "fori_symbolic":
            return irc.fori_loop(0, x.shape[0], lambda i, v: body(v, w), x)
        if kind == "fori_rows":

            def update(i: Any, v: Any) -> Any:
                rows = {"own": v[i], "input": x[i], "previous": v[i - 1]}
                v[i] = body(rows[row_source], w)
                return v

            return irc.fori_loop(0, x.shape[0], update, x)
        if kind == "scan":
            step = lambda c, row: (body(c + row, w), c)  # noqa: E731
            return irc.scan(step, x[0] * 0.0, x)
        if kind == "while":
            state = (x, np.int64(0))
            grown = lambda s: (body(s[0], w), s[1] + 1)  # noqa: E731
            return irc.while_loop(lambda s: s[1] < 3, grown, state)[0]
        return irc.cond(x.max() > 0, lambda v: body(v, w), lambda v: v * 2.0, x)

    specs = (
        irc.TensorSpec(("N", "D"), "float32"),
        irc.TensorSpec(("D", "D"), "float32"),
    )
    # Bounded sizes let a while loop whose body is lanewise run on the device.
    facts = ("N <= 16", "D <= 16") if draw(st.booleans()) else ()
    return irc.compile(function, *specs, facts=facts).module_at("graph")


def test_check_pass_of_the_lowering_on_generated_control_flow() -> None:
    report = check_pass(
        "fuse,tile,bufferize,lower-memory-to-triton",
        control_flow_modules(),
        max_examples=10,
    )
    kinds = set(report.op_kinds)
    assert {"graph.cond", "scf.for", "scf.while", "scf.if"} & kinds


#: Lanewise steps a device while loop's body chains (values stay bounded).
_LANEWISE_STEPS: dict[str, Any] = {
    "tanh": np.tanh,
    "halve_and_shift": lambda v: v * 0.5 + 0.25,
    "sin": np.sin,
    "clip": lambda v: np.clip(v, -1.0, 1.0),
}

#: Whole reductions a device while loop reads (a max is exact in any order;
#: a sum's rounding may differ between levels, so its tests leave margins).
_WHOLE_REDUCTIONS: dict[str, Any] = {
    "max": lambda v: np.abs(v).max(),
    "mean": lambda v: (v * v).mean(),
}


@st.composite
def device_while_modules(draw: st.DrawFn) -> ModuleOp:
    """Graph modules of ``f(x: [N, D], w: [D])`` over ``N, D <= 16`` with a
    while loop that fits one program: a counter and the lanewise carry,
    a condition on the counter and, optionally, a whole reduction of the
    carry, a body of lanewise steps, optionally rescaled by a whole
    reduction, reading ``w`` (an unchanged carry) broadcast along the rows."""
    steps = draw(
        st.lists(st.sampled_from(sorted(_LANEWISE_STEPS)), min_size=1, max_size=3)
    )
    test = draw(st.sampled_from([None, *sorted(_WHOLE_REDUCTIONS)]))
    rescale = draw(st.sampled_from([None, *sorted(_WHOLE_REDUCTIONS)]))
    trips = draw(st.integers(0, 4))

    def function(x: Any, w: Any) -> Any:
        def condition(state: Any) -> Any:
            v, count = state
            more = count < trips
            if test is None:
                return more
            return more & (_WHOLE_REDUCTIONS[test](v) < 1e6)

        def step(state: Any) -> Any:
            v, count = state
            for name in steps:
                v = _LANEWISE_STEPS[name](v)
            v = v + 0.125 * w
            if rescale is not None:
                v = v / (_WHOLE_REDUCTIONS[rescale](v) + 1.0)
            return v, count + 1

        return irc.while_loop(condition, step, (x, np.int64(0)))

    specs = (irc.TensorSpec(("N", "D"), "float32"), irc.TensorSpec(("D",), "float32"))
    compiled = irc.compile(function, *specs, facts=("N <= 16", "D <= 16"))
    assert "device loop: the whole graph.while" in compiled.ir("loop")
    return compiled.module_at("graph")


def test_device_while_loops_keep_the_loops_meaning() -> None:
    """Through every level of the lowering, a while loop run inside one
    program computes what the graph's loop does (law: ``check_pass``, the
    bounds checker included)."""
    report = check_pass(
        "fuse,tile,bufferize,lower-memory-to-triton",
        device_while_modules(),
        max_examples=10,
    )
    assert report.examples > 0 and "graph.while" in report.op_kinds


# ----- the host ops' verifiers and checks ---------------------------------------------

_HOST_OP_ERRORS = {
    "a decision reads a 0-d buffer": (
        "%p = memory.alloc : !memory.buffer<[4], [1], i1>\n"
        "%d = memory.read_scalar %p : !memory.buffer<[4], [1], i1> -> i1",
        "memory.read_scalar moves one element: its buffer must be 0-d",
    ),
    "of its own element type": (
        "%p = memory.alloc : !memory.buffer<[], [], i64>\n"
        "%d = memory.read_scalar %p : !memory.buffer<[], [], i64> -> i1",
        "memory.read_scalar: the buffer holds i64 but the scalar is i1",
    ),
    "a copy keeps the shape": (
        "%a = memory.alloc : !memory.buffer<[N], [1], f32>\n"
        "%b = memory.alloc : !memory.buffer<[M], [1], f32>\n"
        "memory.copy %a, %b : !memory.buffer<[N], [1], f32>, !memory.buffer<[M], [1], f32>",
        "memory.copy needs the same shape and element type",
    ),
    "a row drops the leading dim": (
        "%a = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>\n"
        "%i = memory.size 0 : i64\n"
        "%r = memory.row %a[%i] : !memory.buffer<[N, D], [D, 1], f32>[i64] -> "
        "!memory.buffer<[N], [1], f32>",
        "memory.row of !memory.buffer<[N, D], [D, 1], f32> is a buffer of its trailing",
    ),
}


@pytest.mark.parametrize("case", sorted(_HOST_OP_ERRORS))
def test_host_ops_refuse_what_they_cannot_do(case: str) -> None:
    body, message = _HOST_OP_ERRORS[case]
    text = f"func.func @f() {{\n{body}\nfunc.return\n}}"
    with pytest.raises(VerifyException, match=re.escape(message)):
        parse_module(text).verify()


def test_a_decision_on_a_predicate_no_kernel_wrote_is_an_error() -> None:
    text = """
func.func @f(%x: !memory.buffer<[N], [1], f32>) -> !memory.buffer<[N], [1], f32> {
  %p = memory.alloc : !memory.buffer<[], [], i1>
  %d = memory.read_scalar %p : !memory.buffer<[], [], i1> -> i1
  scf.if %d {
  } else {
  }
  func.return %x : !memory.buffer<[N], [1], f32>
}
"""
    with pytest.raises(ExecutionError, match="the scalar read by the host has 1"):
        run_memory(parse_module(text), [np.ones(3, np.float32)])


def test_cumsum_as_a_scan_matches_np_cumsum_compiled(
    compiled: dict[str, irc.Compiled],
) -> None:
    """The same running sums two ways: ``irc.scan`` (a device loop over the
    rows) and ``np.cumsum`` (a graph.scan kernel), both emitted and
    interpreted, at several lengths of one compilation each."""
    spec = irc.TensorSpec(("N", 3), "float32")
    cumsum = irc.compile(lambda xs: np.cumsum(xs, axis=0), spec)
    for length in (1, 5, 40):
        xs = np.random.default_rng(length).standard_normal((length, 3))
        xs = xs.astype(np.float32)
        by_scan = compiled["cumsum"](xs, backend="interpret")
        np.testing.assert_allclose(
            by_scan, cumsum(xs, backend="interpret"), rtol=1e-5, atol=1e-5
        )


#: The generator's steps for programs mostly of region ops (as
#: tests/test_control_flow.py draws them), with a matmul and a take so that
#: bodies hold several kernel kinds.
_GENERATED_STEPS = (
    *CONTROL_FLOW_ACTIONS,
    "binary",
    "unary",
    "reduce",
    "matmul",
    "guard",
)


@pytest.mark.parametrize(
    "passes", ["fuse", "fuse,tile", "fuse,tile,bufferize", "lower-to-triton"]
)
def test_check_pass_of_each_lowering_on_irc_testing_programs(passes: str) -> None:
    """``irc.testing.programs`` with ``CONTROL_FLOW_ACTIONS``: graph.cond on
    bool arguments and symbolic sizes, graph.for over 0 to 3, ``N`` or
    ``N - 1`` iterations, graph.while with a counter, around other ops."""
    report = check_pass(passes, programs(actions=_GENERATED_STEPS), max_examples=12)
    assert {"graph.cond", "graph.for", "graph.while"} & set(report.op_kinds)


_PASS_THROUGH = """
func.func @main(%a: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = graph.neg %a : !graph.tensor<[N], f32>
  %r:2 = graph.for 2 carries (%y) : (!graph.tensor<[N], f32>) xs () : () -> (!graph.tensor<[N], f32>, !graph.tensor<[2, N], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %c: !graph.tensor<[N], f32>):
    graph.yield %c, %c : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  %z = graph.exp %r#0 : !graph.tensor<[N], f32>
  func.return %z : !graph.tensor<[N], f32>
}
"""


def test_a_pass_through_carry_keeps_its_buffer_alive_after_the_loop() -> None:
    """The loop's result is the initial carry's buffer, read in place: it
    is not deallocated (nor reused) while the result may be read."""
    module = parse_module(_PASS_THROUGH)
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    for name in ("fuse", "tile", "bufferize", "lower-memory-to-triton"):
        get_all_passes()[name]()().apply(default_context(), module)
        np.testing.assert_allclose(run_module(module, [x])[0], np.exp(-x), rtol=1e-6)
    assert "memory.dealloc" not in print_module(module)
