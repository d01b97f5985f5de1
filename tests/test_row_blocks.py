"""Row kernels over a symbolic row length take their row block from the launch.

A row program compiled once with ``D`` symbolic runs at row lengths below,
at and past the largest block a launch may choose (``max-row-block``,
8192): ``D = 1, 3, 1000`` (one block, masked), ``8192`` (one full block)
and ``8193`` (a first block kept in registers and a masked second one read
by the loops), one row and several, on Triton's interpreter (the emitted
kernels, with the block the launcher chose) and on the loop and memory
levels' reference interpreters (which run the declared 8192-lane tiles),
all against NumPy; a Hypothesis law: the results do not depend on the
largest block or on the rows a program walks. Also: the launcher's choice
itself (a power of two between 128 and 8192, warps to match); a row that
fits its block is read once (the emitted kernel's loops over the blocks
after the first start at the block, and its tile dims are the block's
constexpr); and layer norm's and RMS norm's weights are read once per
program of 16 rows, before the loop over them.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_programs import SUITE

import irc
from irc.ir import default_context
from irc.lowering.fusion_to_loop import TilePass
from irc.lowering.pipeline import passes_after
from irc.passes.registry import get_all_passes
from irc.testing.interpreters import level_of, run_module

pytest.importorskip("torch")

ROW_PROGRAMS = (
    "softmax",
    "log_softmax",
    "logsumexp",
    "l2_normalize",
    "rms_norm",
    "layer_norm",
    "cross_entropy",
)
ROW_LENGTHS = (1, 3, 1000, 8192, 8193)
ROWS = (1, 3, 17)  # 17: a last program of one row (16 rows a program)
#: As tests/test_end_to_end.py's: float32 sums in another order than NumPy's.
RTOL, ATOL = 1e-5, 5e-6


def _sizes(name: str, rows: int, length: int) -> dict[str, int]:
    return {"N": rows, "V" if name == "cross_entropy" else "D": length}


def _assert_matches(got: Any, expected: Any, where: str) -> None:
    got_leaves = list(got) if isinstance(got, tuple | list) else [got]
    want_leaves = list(expected) if isinstance(expected, tuple | list) else [expected]
    assert len(got_leaves) == len(want_leaves), where
    for g, e in zip(got_leaves, want_leaves, strict=True):
        e = np.asarray(e)
        assert g.dtype == e.dtype, f"{where}: dtype {g.dtype} != {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=where)


@pytest.fixture(scope="module")
def compiled() -> dict[str, irc.Compiled]:
    return {name: SUITE[name].compile() for name in ROW_PROGRAMS}


@pytest.mark.parametrize("name", ROW_PROGRAMS)
def test_row_program_at_every_block_size(
    name: str, compiled: dict[str, irc.Compiled]
) -> None:
    program = SUITE[name]
    for rows in ROWS:
        for length in ROW_LENGTHS:
            sizes = _sizes(name, rows, length)
            call = program.inputs(np.random.default_rng(length), **sizes)
            expected = program.function(*call.args, **call.kwargs)
            got = compiled[name](*call.args, **call.kwargs, backend="interpret")
            _assert_matches(got, expected, f"{name} at {sizes}")


@pytest.mark.parametrize("name", ["softmax", "layer_norm", "cross_entropy"])
def test_loop_and_memory_levels_run_the_declared_block(name: str) -> None:
    """The reference interpreters of the levels that hold the row kernel run
    its declared 8192-lane tiles and ``tile.block_size`` as 8192."""
    program = SUITE[name]
    module = program.compile().module.clone()
    modules = {}
    for lowering in passes_after("graph"):
        lowering.apply(default_context(), module)
        modules[level_of(module).name] = module.clone()
    for length in (3, 8193):
        sizes = _sizes(name, 2, length)
        call = program.inputs(np.random.default_rng(length), **sizes)
        expected = program.function(*call.args, **call.kwargs)
        for level in ("loop", "memory"):
            (got,) = run_module(modules[level], list(call.args))
            _assert_matches(got, expected, f"{name} at {sizes} on the {level} level")


_BY_BLOCK: dict[tuple[str, int, int], irc.Compiled] = {}


def _compiled_with_block(name: str, block: int, per_program: int) -> irc.Compiled:
    """``name`` compiled with ``tile{max-row-block=block max-persistent=block
    rows-per-program=per_program}`` (once)."""
    key = (name, block, per_program)
    if key not in _BY_BLOCK:
        available = get_all_passes()
        passes = [available[p]()() for p in ("canonicalize", "cse", "fuse")]
        passes.append(
            TilePass(
                max_row_block=block,
                max_persistent=block,
                rows_per_program=per_program,
            )
        )
        _BY_BLOCK[key] = SUITE[name].compile(pipeline=passes)
    return _BY_BLOCK[key]


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(ROW_PROGRAMS),
    rows=st.integers(1, 20),
    length=st.integers(1, 70),
    block=st.sampled_from([1, 4, 16, 64]),
    per_program=st.sampled_from([1, 2, 16]),
)
def test_results_do_not_depend_on_the_row_block(
    name: str, rows: int, length: int, block: int, per_program: int
) -> None:
    """A law: whatever the largest row block (so however many blocks after
    the first the loops walk, on the emitted kernels under Triton's
    interpreter) and the rows a program walks (a last program with fewer),
    a row program returns NumPy's values."""
    program = SUITE[name]
    sizes = _sizes(name, rows, length)
    call = program.inputs(np.random.default_rng(length), **sizes)
    expected = program.function(*call.args, **call.kwargs)
    compiled = _compiled_with_block(name, block, per_program)
    got = compiled(*call.args, **call.kwargs, backend="interpret")
    where = f"{name} at {sizes}, blocks of {block}, {per_program} rows a program"
    _assert_matches(got, expected, where)


def test_the_launch_chooses_a_power_of_two_block_and_its_warps() -> None:
    from irc.backend.triton.prelude import _irc_launch_tile, _irc_launch_warps

    chosen = {n: _irc_launch_tile(n, 128, 8192) for n in (1, 3, 129, 1000, 4096)}
    assert chosen == {1: 128, 3: 128, 129: 256, 1000: 1024, 4096: 4096}
    assert _irc_launch_tile(8193, 128, 8192) == 8192
    assert _irc_launch_tile(3, 64, 64) == 64  # a declared block below 128
    warps = {n: _irc_launch_warps(n) for n in (128, 1024, 2048, 4096, 8192)}
    assert warps == {128: 1, 1024: 4, 2048: 8, 4096: 16, 8192: 16}


@pytest.mark.parametrize("name", ROW_PROGRAMS)
def test_emitted_row_kernel_reads_a_fitting_row_once(
    name: str, compiled: dict[str, irc.Compiled]
) -> None:
    """Every loop over a row's lanes starts after the first block, which the
    kernel reads once per row, and steps by the launch's block: no tile dim
    is spelt as the declared size."""
    source = compiled[name].triton_source
    kernels = source[: source.index("# host function")].split(
        "@triton.jit\ndef kernel_"
    )
    row_kernels = [k for k in kernels[1:] if "c_BLOCK_R: tl.constexpr" in k]
    assert row_kernels, source
    for kernel in row_kernels:
        assert "[8192]" not in kernel
        block = re.search(r"(v\d+) = tl.full\(\[\], c_BLOCK_R, tl.int64\)", kernel)
        assert block is not None, kernel
        loops = re.findall(r"for v\d+ in range\((v\d+), v\d+, (v\d+)\):", kernel)
        lane_loops = [(start, step) for start, step in loops if step == block[1]]
        assert lane_loops, kernel
        assert all(start == block[1] for start, _ in lane_loops), loops
    # The launch passes the block and warps its tuner chose, per bucket of
    # the row's length, with no declared warps (they follow the block).
    assert re.search(r"c_BLOCK_R=config_k\d+\[0\], num_warps=config_k\d+\[1\]", source)
    assert re.search(
        r"_IRC_TUNING = \{\n    'kernel_k\d+': \('\w+', \(\(128, 8192\),\), None,",
        source,
    )


@pytest.mark.parametrize(("name", "weights"), [("layer_norm", 2), ("rms_norm", 1)])
def test_weights_are_read_once_per_program(
    name: str, weights: int, compiled: dict[str, irc.Compiled]
) -> None:
    """A row kernel reading a weight of the row's length (layer norm's g and
    b) walks rows-per-program (16) rows a program, loading the weight's first
    block once, before the loop over its rows."""
    source = compiled[name].triton_source
    kernel = source[source.index("def kernel_k0") : source.index("# host function")]
    rows_loop = re.search(r"\n    for v\d+ in range\(v\d+, (v\d+), v\d+\):", kernel)
    assert rows_loop is not None, kernel
    before = kernel[: rows_loop.start()]
    lanes = re.search(r"(v\d+) = tl.arange\(0, c_BLOCK_R\)", before)
    assert lanes is not None, kernel
    loads = re.findall(rf"tl.load\(p_arg\d \+ {lanes[1]}, ", before)
    assert len(loads) == weights, before
    assert re.search(rf"{rows_loop[1]} = tl.minimum\(v\d+, v\d+\)", before)
    assert re.search(r"grid_\d+ = \(\(\(s_N \+ 15\) // 16\), 1, 1\)", source), source
