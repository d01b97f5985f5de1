"""``np.cumsum`` / ``np.cumprod`` (``graph.scan``) against NumPy.

Values, shapes and dtypes as NumPy 2 gives them (bools and ints accumulate
in int64, ``dtype=`` is honoured, float16 stays float16, ``axis=None``
flattens), at two bindings of the symbols: a short row (one tile) and a
symbolic row of 2100 lanes, three blocks of 1024, so that the running carry
between blocks is exercised. Every level's reference interpreter runs the
program (graph, fusion, loop, memory) and so does Triton's interpreter on
the emitted kernels (the triton level); the public call runs the reference
and ``interpret`` backends.

16-bit float scans accumulate in float32 and round once per element, as
irc's reductions do; NumPy rounds each running value to float16 (up to ~1%
away after 2000 elements), so 16-bit results are compared with NumPy's scan
of the float32 values rounded to their type, and their dtype with NumPy's
own (bfloat16 through ``ml_dtypes``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irc
from irc.ir import default_context, parse_module, print_module
from irc.lowering.fusion_to_loop import TilePass
from irc.lowering.graph_to_fusion import FusePass
from irc.lowering.pipeline import LEVEL_NAMES, passes_after
from irc.testing.interpreters import level_of, run_module

#: A row of one tile, and a symbolic row of three blocks of 1024 lanes.
BINDINGS = ({"N": 3, "D": 5}, {"N": 2, "D": 2100})
DTYPES = ("bool", "int32", "int64", "float16", "bfloat16", "float32", "float64")
SIXTEEN_BIT_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _array(rng: np.random.Generator, shape: Sequence[int], dtype: str, kind: str):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    if kind == "prod":  # running products of 2100 factors stay finite
        return (rng.uniform(0.99, 1.01, shape) * rng.choice([-1, 1], shape)).astype(
            dtype
        )
    return rng.standard_normal(shape).astype(dtype)


def _shape(dims: Sequence[str | int], binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(binding[d] if isinstance(d, str) else d for d in dims)


def _reference(function: Callable[..., Any], *arrays: np.ndarray) -> list[Any]:
    """NumPy's results, 16-bit float inputs scanned in float32 and rounded
    to their type (irc's semantics, see the module docstring)."""
    wide = [
        a.astype(np.float32) if a.dtype in SIXTEEN_BIT_FLOATS else a for a in arrays
    ]
    results = function(*wide)
    narrow = function(*arrays)
    results = results if isinstance(results, tuple) else (results,)
    narrow = narrow if isinstance(narrow, tuple) else (narrow,)
    return [np.asarray(r).astype(np.asarray(n).dtype) for r, n in zip(results, narrow)]


def _assert_matches(got: Any, want: Any, where: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (where, got.shape, want.shape)
    assert got.dtype == want.dtype, (where, got.dtype, want.dtype)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=where)
        return
    tolerance = {
        "float16": 2e-3,
        "bfloat16": 1.6e-2,
        "float32": 2e-5,
        "float64": 1e-12,
    }[want.dtype.name]
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(
        got, want, rtol=tolerance, atol=tolerance * scale, err_msg=where
    )


def _check_every_level(
    function: Callable[..., Any],
    dims: Sequence[Sequence[str | int]],
    dtype: str,
    kind: str = "sum",
) -> None:
    """``function`` compiled once for ``dims`` agrees with NumPy at every
    level (the triton level runs the emitted kernels on Triton's
    interpreter) at each binding."""
    specs = [irc.TensorSpec(tuple(d), dtype) for d in dims]
    module = irc.compile(function, *specs).module.clone()
    modules = {"graph": module.clone()}
    for lowering in passes_after("graph"):
        lowering.apply(default_context(), module)
        module.verify()
        modules[level_of(module).name] = module.clone()
    assert tuple(modules) == LEVEL_NAMES
    rng = np.random.default_rng(0)
    for binding in BINDINGS:
        arrays = [_array(rng, _shape(d, binding), dtype, kind) for d in dims]
        expected = _reference(function, *arrays)
        for level, lowered in modules.items():
            results = run_module(lowered, arrays)
            assert len(results) == len(expected)
            for number, (got, want) in enumerate(zip(results, expected)):
                _assert_matches(got, want, f"{level} at {binding}, result {number}")


# ----- dtypes and axes, at every level --------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["sum", "prod"])
def test_scan_of_every_dtype_at_every_level(kind: str, dtype: str) -> None:
    scan = np.cumsum if kind == "sum" else np.cumprod
    _check_every_level(lambda x: scan(x, axis=1), [("N", "D")], dtype, kind)


@pytest.mark.parametrize("axis", [0, 1, -1, -2, None])
def test_cumsum_along_every_axis_at_every_level(axis: int | None) -> None:
    _check_every_level(lambda x: np.cumsum(x, axis=axis), [("N", "D")], "float32")


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumprod_along_each_axis_of_three(axis: int) -> None:
    """The rows of a middle axis interleave the kept dims on both sides."""
    _check_every_level(
        lambda x: np.cumprod(x, axis=axis), [(2, "D", "N")], "float64", "prod"
    )


def test_scans_of_scans_and_their_consumers_at_every_level() -> None:
    def program(x, y):
        inner = np.cumsum(x * y, axis=1)
        return np.cumsum(inner, axis=1) - y, np.cumprod(np.tanh(x), axis=1)

    _check_every_level(program, [("N", "D"), ("N", "D")], "float32")


def test_scans_next_to_reductions_and_layout_at_every_level() -> None:
    """A reduction of a scan, a scan normalised by a reduction, a transpose
    of a scan and a scan of a broadcast row value: the kernels fusion may
    not form (a reduction and a scan in one) are split, and compute NumPy's
    values."""

    def program(x):
        total = np.cumsum(x, axis=1).sum(axis=1)
        share = np.cumsum(x, axis=1) / x.sum(axis=1, keepdims=True)
        flipped = np.cumsum(x, axis=1).T
        steps = np.cumsum(np.broadcast_to(x.max(axis=1, keepdims=True), x.shape), 1)
        return total, share, flipped, steps

    _check_every_level(program, [("N", "D")], "float32")


# ----- NumPy's functions and methods, on the public backends --------------------


def _check_backends(
    function: Callable[..., Any], dims: Sequence[str | int], dtype: str
):
    compiled = irc.compile(function, irc.TensorSpec(tuple(dims), dtype))
    rng = np.random.default_rng(1)
    for binding in BINDINGS:
        x = _array(rng, _shape(dims, binding), dtype, "sum")
        expected = _reference(function, x)
        for backend in ("reference", "interpret"):
            result = compiled(x, backend=backend)
            results = result if isinstance(result, tuple | list) else [result]
            for got, want in zip(results, expected, strict=True):
                _assert_matches(got, want, f"{backend} at {binding}")
    return compiled


@pytest.mark.parametrize(
    ("function", "dtype"),
    [
        (lambda x: (x.cumsum(1), x.cumprod(axis=0), x.cumsum()), "float32"),
        (lambda x: np.cumsum(x, axis=1, dtype=np.float32), "int32"),
        (lambda x: np.cumsum(x, axis=-1, dtype=np.float64), "float16"),
        (lambda x: np.cumprod(x, dtype=np.int32), "bool"),
        (lambda x: x.cumsum(dtype=np.float16), "int64"),
        (lambda x: np.cumsum(x.sum()), "float32"),  # a rank-0 array scans as [1]
        (lambda x: np.cumulative_sum(x, axis=1, include_initial=True), "int32"),
        (lambda x: np.cumulative_prod(x, axis=0, include_initial=True), "float32"),
        (lambda x: np.cumulative_sum(x[0], dtype=np.int64), "bool"),
        (lambda x: np.cumulative_prod(x, axis=-1), "float64"),
    ],
)
def test_numpy_functions_and_methods(function: Callable[..., Any], dtype: str) -> None:
    _check_backends(function, ("N", "D"), dtype)


def test_fused_scan_is_one_kernel() -> None:
    """Elementwise producers and consumers join the scan's kernel."""
    compiled = _check_backends(
        lambda x: np.cumsum(np.exp(x), axis=1) * 2 + x, ("N", "D"), "float32"
    )
    assert compiled.num_kernels == 1
    assert compiled.triton_source.count("@triton.jit\ndef kernel_") == 1
    assert "tl.cumsum(" in compiled.triton_source
    fusion = compiled.ir("fusion")
    assert "row scan over [1] of [N, D]" in fusion
    assert "producers: graph.exp" in fusion and "consumers: graph.mul" in fusion


def test_symbolic_rows_loop_with_a_carry_and_static_rows_take_one_tile() -> None:
    looped = irc.compile(lambda x: np.cumsum(x, 1), irc.TensorSpec(("N", "D"), "f4"))
    loop_ir = looped.ir("loop")
    assert "looped scan over D lanes per row, 1024 at a time" in loop_ir
    assert "iter_args" in loop_ir and "tile.scan sum" in loop_ir
    static = irc.compile(lambda x: np.cumsum(x, 1), irc.TensorSpec(("N", 5), "f4"))
    static_ir = static.ir("loop")
    assert "persistent scan of 5 lanes per row" in static_ir
    assert "scf.for" not in static_ir and "tiles {BLOCK_R = 8}" in static_ir


def test_scan_along_a_unit_axis_is_canonicalised_away() -> None:
    compiled = irc.compile(
        lambda x: np.cumprod(x, axis=1), irc.TensorSpec(("N", 1), "float32")
    )
    assert "graph.scan" not in compiled.ir("graph")
    x = np.arange(4, dtype=np.float32).reshape(4, 1) - 2
    np.testing.assert_array_equal(compiled(x, backend="interpret"), np.cumprod(x, 1))


def test_every_level_round_trips_with_scans() -> None:
    def program(x):
        return np.cumsum(np.exp(x), axis=1), np.cumprod(x, axis=0)

    compiled = irc.compile(program, irc.TensorSpec(("N", "D"), "float16"))
    for level in LEVEL_NAMES:
        for locations in (False, True):
            text = compiled.ir(level, locations=locations)
            module = parse_module(text)
            module.verify()
            assert print_module(module, locations=locations) == text
            generic = print_module(module, generic=True, locations=locations)
            assert print_module(parse_module(generic), locations=locations) == text
    assert "tile.scan sum" in compiled.ir("triton")


# ----- errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (lambda x: np.cumsum(x, out=x), r"np.cumsum: the argument\(s\) out"),
        (
            lambda x: np.cumprod(x, axis=2),
            "axis 2 is out of bounds for an array of rank 2",
        ),
        (lambda x: x.cumsum(axis=(0, 1)), "axis must be an int"),
        (
            lambda x: np.cumulative_sum(x),
            r"np.cumulative_sum of an array of rank 2 needs an axis: pass axis=\.\.\., "
            r"or flatten first \(np.cumsum flattens\)",
        ),
    ],
)
def test_user_errors_name_the_line(function: Callable[..., Any], message: str) -> None:
    with pytest.raises(irc.TracingError, match=message) as info:
        irc.compile(function, irc.TensorSpec(("N", "D"), "float32"))
    assert str(info.value).startswith(f"{__file__}:")


# ----- compiled for an H100 and launched through Triton's real path ---------------


def test_scan_kernels_compile_for_h100_and_launch(tmp_path: Path) -> None:
    """The kernels of ``fake_gpu_scans.py``'s programs go through Triton's
    binder and compiler (sm_90 PTX and a cubin) under the fake CUDA driver,
    launching as many kernels as irc's plan says, with NumPy's shapes and
    dtypes."""
    from fake_gpu_scans import __file__ as script
    from fake_gpu_suite import run_compiling

    out = tmp_path / "report.json"
    completed = run_compiling([script, str(out)], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = json.loads(out.read_text())
    assert report, "no program ran"
    for name, result in report.items():
        assert "error" not in result, (name, result.get("error"))
        for call in result["calls"]:
            assert call["outputs"] == call["numpy"], (name, call["sizes"])
            assert len(call["launches"]) == result["kernels"], (name, call["sizes"])
            for launch in call["launches"]:
                binary = launch["binary"]
                assert binary["sm_90"] and binary["entry"], (name, launch["kernel"])
                assert binary["cubin_bytes"] > 0, (name, launch["kernel"])


def test_signed_zeros_and_nan_carry_across_blocks_at_every_level() -> None:
    """A running sum of ``-0.0`` stays ``-0.0`` past a block boundary (the
    carry starts at ``-0.0`` and is picked exactly), and a NaN stays NaN."""
    function = lambda x: (np.cumsum(x, 1), np.cumprod(x, 1))  # noqa: E731
    module = irc.compile(function, irc.TensorSpec(("N", "D"), "float32")).module
    x = np.full((3, 2100), -0.0, np.float32)
    x[1, 1500:] = 1.0
    x[2, 1100] = np.nan
    expected = function(x)
    module = module.clone()
    for lowering in [None, *passes_after("graph")]:
        if lowering is not None:
            lowering.apply(default_context(), module)
        level = level_of(module).name
        for got, want in zip(run_module(module, [x]), expected, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=level)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), level)


# ----- a law: the carried scan is NumPy's whatever the block size ---------------


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 3),
    extent=st.integers(1, 70),
    block=st.sampled_from([1, 2, 4, 16]),
    kind=st.sampled_from(["sum", "prod"]),
    axis=st.sampled_from([0, 1]),
    seed=st.integers(0, 2**16),
)
def test_tiled_scan_is_numpys_for_any_block_size(
    rows: int, extent: int, block: int, kind: str, axis: int, seed: int
) -> None:
    """Integer scans are exact, so any lane or carry wrong at a block
    boundary shows: a symbolic row of ``extent`` lanes tiled in blocks of
    ``block`` (one lane included) is NumPy's running sum or product."""
    scan = np.cumsum if kind == "sum" else np.cumprod
    module = irc.compile(
        lambda x: scan(x, axis=axis), irc.TensorSpec(("N", "D"), "int64")
    ).module.clone()
    FusePass().apply(default_context(), module)
    TilePass(reduction_block=block, max_persistent=block).apply(
        default_context(), module
    )
    shape = (rows, extent) if axis == 1 else (extent, rows)
    x = np.random.default_rng(seed).integers(-2, 3, shape)
    (got,) = run_module(module, [x])
    np.testing.assert_array_equal(got, scan(x, axis=axis))
