"""``np.logaddexp``, ``np.logaddexp2``, ``np.hypot``, ``np.fmod``, ``np.cbrt``,
``np.sinc`` and ``np.median`` on traced arrays (irc/capture/math_functions.py,
``median`` in irc/capture/sorting.py): NumPy 2's values, dtypes and shapes on
the reference backend and in the emitted Triton kernels (under Triton's
interpreter), at zeros, infinities, NaN, subnormal and huge values; their
laws by Hypothesis; gradients against the analytic derivatives, finite
differences and JAX's at the points where a rule is chosen; clear errors."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irc
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError, IrcShapeError, IrcTypeError
from irc.testing import check_grad

BACKENDS = ("reference", "interpret")
DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")
#: Tolerances by the result's dtype: a few ulps (NumPy's 16-bit loops and
#: irc's compute in float32 and round once).
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}

BINARY: dict[str, Callable[..., Any]] = {
    "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
    "hypot": np.hypot,
    "fmod": np.fmod,
}
UNARY: dict[str, Callable[..., Any]] = {"cbrt": np.cbrt, "sinc": np.sinc}
FUNCTIONS = {**BINARY, **UNARY}


def special_floats(numpy_type: Any) -> np.ndarray:
    """Zeros of both signs, small integers and perfect cubes, fractions,
    the extremes of the type (huge, smallest normal, smallest subnormal),
    infinities and NaN, in ``numpy_type``."""
    info = ml_dtypes.finfo(numpy_type)  # NumPy's finfo, and bfloat16's
    values = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -7.0, 27.0, -8.0, 0.1, -1e-3]
    values += [float(info.max), -float(info.max), float(info.max) / 3]
    values += [float(info.tiny)]
    if numpy_type != ml_dtypes.bfloat16:
        # irc's kernels flush bfloat16 subnormals (any op, a cast too): a
        # limitation of the Triton backend, not of these functions.
        values += [-float(info.smallest_subnormal)]
    values += [math.inf, -math.inf, math.nan]
    with np.errstate(all="ignore"):
        return np.array(values, np.float64).astype(numpy_type)


def special_values(element: str) -> np.ndarray:
    numpy_type = irc_dtype(element).numpy
    if element == "bool":
        return np.array([False, True])
    if numpy_type.kind == "i":
        info = np.iinfo(numpy_type)
        values = [0, 1, -1, 2, -2, 3, -3, 7, -7, 13, int(info.min), int(info.max)]
        return np.array(values, numpy_type)
    return special_floats(numpy_type)


def numpy_result(function: Callable[..., Any], *arrays: Any) -> Any:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # empty medians
        return function(*arrays)


def run(compiled: irc.Compiled, *arrays: Any, backend: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(compiled(*arrays, backend=backend))


def assert_like_numpy(
    got: np.ndarray,
    want: np.ndarray,
    where: str,
    *,
    rtol: float | None = None,
    scale: np.ndarray | None = None,
    zero_signs: bool = True,
) -> None:
    """NumPy's dtype and shape; NaN where NumPy has NaN, infinities and
    zeros (with their signs) where NumPy has them; other values within
    ``rtol`` of the result's dtype, or exact (ints, ``rtol=0``), and an
    absolute slack of ``rtol`` times ``scale`` (the operands' magnitude,
    for results that cancel to near 0 in NumPy's formula as well); the
    signs of zeros unless not ``zero_signs``."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype}, NumPy {want.dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, NumPy {want.shape}"
    a, b = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(b)
    np.testing.assert_array_equal(np.isnan(a), nan, f"{where}: NaNs")
    exact = np.isinf(b) | (b == 0)
    if rtol is None:
        rtol = RTOL.get(want.dtype.name, 0.0)
    if rtol == 0.0:
        exact = ~nan
    np.testing.assert_array_equal(a[exact], b[exact], f"{where}: exact values")
    if zero_signs:
        np.testing.assert_array_equal(
            np.signbit(a[exact]), np.signbit(b[exact]), f"{where}: signs"
        )
    with np.errstate(all="ignore"):  # inf - inf where the checks above ran
        slack = rtol * np.abs(b)
        if scale is not None:
            slack = slack + rtol * np.broadcast_to(scale, b.shape)
        close = ~(nan | exact)
        error = np.abs(a - b)[close]
    bad = error > slack[close]
    assert not bad.any(), (
        f"{where}: {got[close][bad][:8]} against NumPy's {want[close][bad][:8]}"
    )


def magnitude(*arrays: np.ndarray) -> np.ndarray:
    """The larger operand magnitude, finite (where logaddexp's result
    cancels to near 0, both NumPy's and irc's error is relative to it)."""
    wide = [np.abs(np.asarray(x, np.float64)) for x in arrays]
    largest = functools.reduce(np.maximum, wide)
    return np.where(np.isfinite(largest), largest, 0.0)


def grid(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``values``."""
    return np.repeat(values, values.size), np.tile(values, values.size)


@functools.cache
def compiled_binary(name: str, element: str) -> irc.Compiled:
    spec = irc.TensorSpec(("N",), element)
    return irc.compile(BINARY[name], spec, spec)


@functools.cache
def compiled_unary(name: str, element: str) -> irc.Compiled:
    return irc.compile(UNARY[name], irc.TensorSpec(("N",), element))


def check_binary(
    name: str,
    element: str,
    x: np.ndarray,
    y: np.ndarray,
    backends: tuple[str, ...] = BACKENDS,
) -> None:
    want = numpy_result(BINARY[name], x, y)
    scale = magnitude(x, y) if name.startswith("logaddexp") else None
    for backend in backends:
        got = run(compiled_binary(name, element), x, y, backend=backend)
        assert_like_numpy(
            got, want, f"np.{name}({x!r}, {y!r}) of {element} on {backend}", scale=scale
        )


def check_unary(name: str, element: str, x: np.ndarray) -> None:
    want = numpy_result(UNARY[name], x)
    for backend in BACKENDS:
        got = run(compiled_unary(name, element), x, backend=backend)
        assert_like_numpy(got, want, f"np.{name} of {element} on {backend}")


# ----- values, dtypes and shapes: NumPy's, at the special values ----------------


@pytest.mark.parametrize(
    ("name", "element"),
    # NumPy's fmod of bools is int8, which irc refuses (test_clear_errors).
    [(n, e) for n in sorted(BINARY) for e in DTYPES if (n, e) != ("fmod", "bool")],
)
def test_binary_functions_match_numpy_at_special_values(name: str, element: str):
    check_binary(name, element, *grid(special_values(element)))


@pytest.mark.parametrize("element", DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_numpy_at_special_values(name: str, element: str):
    check_unary(name, element, special_values(element))


def test_the_special_values_numpy_defines() -> None:
    """The values the functions are chosen for, on both backends."""
    inf, nan = math.inf, math.nan
    x = np.array([-inf, inf, inf, -inf, 1e308, 5e-324, 3.0], np.float64)
    y = np.array([-inf, inf, nan, 2.0, 1e308, 5e-324, -3.0], np.float64)
    expected = {
        "logaddexp": [-inf, inf, nan, 2.0, 1e308 + math.log(2), math.log(2), None],
        "hypot": [inf, inf, inf, inf, math.sqrt(2) * 1e308, 5e-324, math.sqrt(18)],
    }
    for name, values in expected.items():
        for backend in BACKENDS:
            got = run(compiled_binary(name, "float64"), x, y, backend=backend)
            for g, e in zip(got, values, strict=True):
                if e is not None:
                    np.testing.assert_allclose(g, e, rtol=1e-15, err_msg=name)
    fmod = compiled_binary("fmod", "float64")
    cbrt, sinc = compiled_unary("cbrt", "float64"), compiled_unary("sinc", "float64")
    for backend in BACKENDS:
        got = run(fmod, np.array([5.0, -5.0, -4.0, 1.0]), np.array([0.0, 3.0, 2.0, inf]),
                  backend=backend)  # fmt: skip
        np.testing.assert_array_equal(got, [nan, -2.0, -0.0, 1.0])
        assert np.signbit(got[2])
        got = run(cbrt, np.array([-27.0, -0.0, 64.0, -inf]), backend=backend)
        np.testing.assert_array_equal(got, [-3.0, -0.0, 4.0, -inf])
        assert np.signbit(got[1])
        got = run(sinc, np.array([0.0, -0.0, 0.5, inf]), backend=backend)
        np.testing.assert_array_equal(got[:2], [1.0, 1.0])
        np.testing.assert_allclose(got[2], 2 / np.pi, rtol=1e-15)
        assert np.isnan(got[3])


def test_integer_fmod_is_c_fmod_and_zero_by_zero() -> None:
    """The dividend's sign; a divisor of 0 gives 0 (NumPy warns) and the
    least int by -1 gives 0, where ``|x|`` would wrap."""
    info = np.iinfo(np.int32)
    x = np.array([7, -7, 7, -7, 5, -5, info.min, info.min, info.max], np.int32)
    y = np.array([3, 3, -3, -3, 0, 0, -1, 3, info.min], np.int32)
    want = [1, -1, 1, -1, 0, 0, 0, -2, info.max]
    for backend in BACKENDS:
        got = run(compiled_binary("fmod", "int32"), x, y, backend=backend)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, numpy_result(np.fmod, x, y))


#: Operands of mixed types, Python scalars (weak, NEP 50), ``dtype=`` and
#: broadcasting: (function, the argument's dtype).
PROMOTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "hypot f32 and an int": (lambda x: np.hypot(x, 3), "float32"),
    "hypot f16 and f32": (lambda x: np.hypot(x, x.astype(np.float32)), "float16"),
    "hypot dtype=float64": (lambda x: np.hypot(x, x, dtype=np.float64), "float32"),
    "logaddexp int32 and a float": (lambda x: np.logaddexp(x, 1.5), "int32"),
    "logaddexp2 bools": (lambda x: np.logaddexp2(x, x), "bool"),
    "logaddexp int64 and f32": (
        lambda x: np.logaddexp(x, np.float32(2.0)),
        "int64",
    ),
    "fmod int32 by an int": (lambda x: np.fmod(x, 3), "int32"),
    "fmod int64 by a float": (lambda x: np.fmod(x, 2.5), "int64"),
    "fmod f16 by an int": (lambda x: np.fmod(x, 2), "float16"),
    "fmod int32 by int64": (lambda x: np.fmod(x, x.astype(np.int64) + 1), "int32"),
    "fmod dtype=float64": (lambda x: np.fmod(x, 4, dtype=np.float64), "int32"),
    "cbrt int32": (np.cbrt, "int32"),
    "cbrt bools": (np.cbrt, "bool"),
    "cbrt bfloat16": (np.cbrt, "bfloat16"),
    "sinc bools": (np.sinc, "bool"),
    "sinc int64": (np.sinc, "int64"),
    "sinc f16": (np.sinc, "float16"),
    "outer hypot": (lambda x: np.hypot(x[:, None], x[None, ::-1]), "float32"),
    "logaddexp of a 0-d": (lambda x: np.logaddexp(x[0], x), "float64"),
}


@pytest.mark.parametrize("case", sorted(PROMOTIONS))
def test_dtypes_follow_numpy_promotion(case: str) -> None:
    function, element = PROMOTIONS[case]
    x = special_values(element)[:10]
    compiled = irc.compile(function, irc.TensorSpec(("N",), element))
    want = numpy_result(function, x)
    for backend in BACKENDS:
        got = run(compiled, x, backend=backend)
        assert_like_numpy(got, want, f"{case} on {backend}", scale=magnitude(x))


# ----- laws, by Hypothesis --------------------------------------------------------

ANY_FLOAT64 = st.floats(width=64)


def pairs(width: int) -> st.SearchStrategy[tuple[np.ndarray, np.ndarray]]:
    """Two arrays of one length (1 to 24) of any floats of ``width`` bits."""
    numpy_type = np.float64 if width == 64 else np.float32
    return st.integers(1, 24).flatmap(
        lambda n: st.tuples(
            *(
                hnp.arrays(numpy_type, n, elements=st.floats(width=width))
                for _ in range(2)
            )
        )
    )


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=60, deadline=None)
@given(operands=pairs(64))
def test_binary_float64_agree_with_numpy_everywhere(name: str, operands) -> None:
    check_binary(name, "float64", *operands, backends=("reference",))


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=15, deadline=None)
@given(operands=pairs(32))
def test_binary_float32_kernels_agree_with_numpy(name: str, operands) -> None:
    check_binary(name, "float32", *operands, backends=("interpret",))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize(("width", "backend"), [(64, "reference"), (32, "interpret")])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_unary_functions_agree_with_numpy_everywhere(
    name: str, width: int, backend: str, data: st.DataObject
) -> None:
    numpy_type = np.float64 if width == 64 else np.float32
    x = data.draw(
        hnp.arrays(numpy_type, st.integers(1, 24), elements=st.floats(width=width))
    )
    want = numpy_result(UNARY[name], x)
    got = run(compiled_unary(name, f"float{width}"), x, backend=backend)
    assert_like_numpy(got, want, f"np.{name}({x!r}) on {backend}")


@settings(max_examples=40, deadline=None)
@given(operands=pairs(64))
def test_fmod_is_exact(operands) -> None:
    """C's fmod is exact, and so is irc's: equal to NumPy's bit for bit."""
    x, y = operands
    got = run(compiled_binary("fmod", "float64"), x, y, backend="reference")
    assert_like_numpy(got, numpy_result(np.fmod, x, y), "fmod", rtol=0.0)


@settings(max_examples=40, deadline=None)
@given(operands=pairs(64))
def test_hypot_and_logaddexp_are_symmetric(operands) -> None:
    """Exactly: the larger operand is chosen first, whichever it is; hypot
    depends on the magnitudes only."""
    x, y = operands
    for name in ("hypot", "logaddexp", "logaddexp2"):
        compiled = compiled_binary(name, "float64")
        forward = run(compiled, x, y, backend="reference")
        np.testing.assert_array_equal(forward, run(compiled, y, x, backend="reference"))
    hypot = compiled_binary("hypot", "float64")
    np.testing.assert_array_equal(
        run(hypot, x, y, backend="reference"),
        run(hypot, -np.abs(x), np.abs(y), backend="reference"),
    )


@settings(max_examples=40, deadline=None)
@given(
    st.floats(1e-300, 1e300),
    st.floats(1e-300, 1e300),
    st.sampled_from(BACKENDS),
)
def test_hypot_does_not_overflow_or_underflow(a: float, b: float, backend: str):
    """Within ``[max, max * sqrt(2)]`` of the larger magnitude, where
    ``sqrt(a*a + b*b)`` would overflow past 1e154 and underflow below 1e-162."""
    x, y = np.array([a, -a, a]), np.array([b, b, a])
    got = run(compiled_binary("hypot", "float64"), x, y, backend=backend)
    np.testing.assert_allclose(got, numpy_result(np.hypot, x, y), rtol=1e-15)
    larger = np.maximum(np.abs(x), np.abs(y))
    assert np.all(got >= larger) and np.all(got <= larger * math.sqrt(2) * (1 + 1e-15))


@pytest.mark.parametrize("element", ["float32", "float64"])
@settings(max_examples=30, deadline=None)
@given(root=st.integers(-255, 255))
def test_cbrt_of_a_perfect_cube_is_exact(element: str, root: int) -> None:
    """``k**3`` is exact in float32 for ``|k| < 256``; its root is ``k``."""
    x = np.array([root**3, -(root**3)], irc_dtype(element).numpy)
    for backend in BACKENDS:
        got = run(compiled_unary("cbrt", element), x, backend=backend)
        np.testing.assert_array_equal(got, [root, -root])


@settings(max_examples=40, deadline=None)
@given(operands=pairs(64))
def test_logaddexp_bounds(operands) -> None:
    """``max(a, b) <= logaddexp(a, b) <= max(a, b) + log(2)`` (to rounding),
    and equal operands give ``a + log(2)`` and ``a + 1``."""
    x, y = operands
    top = np.maximum(x, y)
    got = run(compiled_binary("logaddexp", "float64"), x, y, backend="reference")
    finite = np.isfinite(top)
    slack = 4e-16 * np.abs(top[finite]) + 1e-300
    assert np.all(got[finite] >= top[finite] - slack)
    with np.errstate(over="ignore"):  # the bound of the largest floats
        assert np.all(got[finite] <= top[finite] + math.log(2) + slack)
    same = run(compiled_binary("logaddexp", "float64"), x, x, backend="reference")
    np.testing.assert_array_equal(same, numpy_result(lambda v: v + math.log(2), x))
    same2 = run(compiled_binary("logaddexp2", "float64"), x, x, backend="reference")
    np.testing.assert_array_equal(same2, x + 1)


# ----- median ---------------------------------------------------------------------

#: (spec shape, np.median's arguments, a binding of the symbols).
MEDIANS: dict[str, tuple[tuple[Any, ...], dict[str, Any], dict[str, int]]] = {
    "odd": ((7,), {}, {}),
    "even": ((6,), {}, {}),
    "axis 0": ((4, 6), {"axis": 0}, {}),
    "axis -1 keepdims": ((4, 5), {"axis": -1, "keepdims": True}, {}),
    "axes (0, 2)": ((2, 3, 4), {"axis": (0, 2)}, {}),
    "axes (2, 0) keepdims": ((2, 3, 3), {"axis": (2, 0), "keepdims": True}, {}),
    "all keepdims": ((2, 3), {"keepdims": True}, {}),
    "symbolic rows": (("B", 5), {"axis": 1}, {"B": 3}),
    "symbolic middle": ((4, "B", 2), {"axis": (0, 2)}, {"B": 2}),
    "0-d": ((), {}, {}),
    "overwrite_input": ((5, 2), {"axis": 0, "overwrite_input": True}, {}),
}
MEDIAN_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")
#: Values that tie, sign zeros and sort NaN and the infinities.
SPECIAL = (np.nan, -np.inf, np.inf, -0.0, 0.0, -1.0, 1.0, -2.5, 2.5, 1e300)


def _shape(spec: tuple[Any, ...], binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(binding[d] if isinstance(d, str) else d for d in spec)


@functools.cache
def compiled_median(layout: str, element: str) -> irc.Compiled:
    spec, arguments, _ = MEDIANS[layout]
    return irc.compile(
        lambda x: np.median(x, **arguments), irc.TensorSpec(spec, element)
    )


def _elements(element: str) -> st.SearchStrategy[Any]:
    numpy_type = irc_dtype(element).numpy
    if element == "bool":
        return st.booleans()
    if numpy_type.kind == "i":
        info = np.iinfo(numpy_type)
        return st.integers(-3, 3) | st.sampled_from((int(info.min), int(info.max)))
    if element == "bfloat16":
        # NumPy's median checks np.inexact types for NaN, and ml_dtypes'
        # bfloat16 is not one: its NaN result is its partition's accident
        # (irc's is NaN, as for every float: test_median_of_nan_is_nan).
        return st.sampled_from(SPECIAL[1:]) | st.floats(-1e4, 1e4)
    return st.sampled_from(SPECIAL) | st.floats(-1e4, 1e4)


@st.composite
def median_problems(draw: st.DrawFn, backends: tuple[str, ...]) -> tuple:
    layout = draw(st.sampled_from(sorted(MEDIANS)))
    element = draw(st.sampled_from(MEDIAN_DTYPES))
    spec, _, binding = MEDIANS[layout]
    shape = _shape(spec, binding)
    size = math.prod(shape)
    values = draw(st.lists(_elements(element), min_size=size, max_size=size))
    with np.errstate(all="ignore"):
        x = np.array(values, np.float64 if element != "bool" else bool)
        x = x.astype(irc_dtype(element).numpy).reshape(shape)
    return layout, element, x, draw(st.sampled_from(backends))


def check_median(layout: str, element: str, x: np.ndarray, backend: str) -> None:
    """Bit for bit NumPy's median: value, NaN, dtype, shape. Not the sign
    of a zero: NumPy's partition is not stable, and which of a tied 0.0
    and -0.0 lands in the middle is its order's accident (irc's sort is
    stable; test_median_keeps_negative_zeros)."""
    _, arguments, _ = MEDIANS[layout]
    want = np.asarray(numpy_result(lambda v: np.median(v, **arguments), x))
    got = run(compiled_median(layout, element), x, backend=backend)
    where = f"median {layout} of {element} on {backend}: {x!r}"
    assert_like_numpy(got, want, where, rtol=0.0, zero_signs=False)


@settings(max_examples=120, deadline=None)
@given(median_problems(("reference",)))
def test_median_agrees_with_numpy(problem) -> None:
    check_median(*problem)


@settings(max_examples=25, deadline=None)
@given(median_problems(("interpret",)))
def test_median_agrees_with_numpy_in_kernels(problem) -> None:
    check_median(*problem)


@pytest.mark.parametrize("backend", BACKENDS)
def test_median_of_an_empty_slice_is_nan(backend: str) -> None:
    """As NumPy's (which warns of the empty mean): NaN, float64 for ints."""
    for element in ("float32", "int32"):
        compiled = irc.compile(
            lambda x: np.median(x, axis=1), irc.TensorSpec((3, 0), element)
        )
        x = np.zeros((3, 0), irc_dtype(element).numpy)
        want = numpy_result(lambda v: np.median(v, axis=1), x)
        assert_like_numpy(run(compiled, x, backend=backend), want, element)


@pytest.mark.parametrize("element", ["float16", "bfloat16", "float32", "float64"])
def test_median_of_nan_is_nan(element: str) -> None:
    x = np.array([[np.nan, 1.0, -np.inf, 2.0, 3.0], [4.0, 1.0, 0.0, 2.0, 3.0]])
    x = x.astype(irc_dtype(element).numpy)
    compiled = irc.compile(
        lambda v: np.median(v, axis=1), irc.TensorSpec((2, 5), element)
    )
    for backend in BACKENDS:
        got = run(compiled, x, backend=backend).astype(np.float64)
        np.testing.assert_array_equal(got, [np.nan, 2.0])


def test_median_keeps_negative_zeros() -> None:
    """The middle -0.0, and the mean of two (-0.0 + -0.0 is -0.0)."""
    x = np.array([[-0.0, -1.0, 1.0, -0.0], [-0.0, 3.0, -2.0, 5.0]], np.float32)
    for keep, want in ((4, [-0.0, 1.5]), (3, [-0.0, -0.0])):
        compiled = irc.compile(
            lambda v, keep=keep: np.median(v[:, :keep], axis=1),
            irc.TensorSpec((2, 4), "float32"),
        )
        for backend in BACKENDS:
            got = run(compiled, x, backend=backend)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_median_of_even_counts_is_the_mean_of_the_middle_two() -> None:
    x = np.array([[4.0, 1.0, 3.0, 2.0], [7.0, -1.0, 5.0, np.inf]], np.float32)
    compiled = irc.compile(
        lambda x: np.median(x, axis=1), irc.TensorSpec((2, 4), "float32")
    )
    for backend in BACKENDS:
        np.testing.assert_array_equal(run(compiled, x, backend=backend), [2.5, 6.0])


# ----- gradients ------------------------------------------------------------------

#: Each float function's derivatives, by operand, from NumPy.
DERIVATIVES: dict[str, Callable[..., tuple[np.ndarray, ...]]] = {
    "logaddexp": lambda a, b: (1 / (1 + np.exp(b - a)), 1 / (1 + np.exp(a - b))),
    "logaddexp2": lambda a, b: (1 / (1 + np.exp2(b - a)), 1 / (1 + np.exp2(a - b))),
    "hypot": lambda a, b: (a / np.hypot(a, b), b / np.hypot(a, b)),
    "fmod": lambda a, b: (np.ones_like(a), -np.trunc(a / b)),
    "cbrt": lambda x: (1 / (3 * np.cbrt(x) ** 2),),
    "sinc": lambda x: (
        (np.cos(np.pi * x) * np.pi * x - np.sin(np.pi * x)) / (np.pi * x * x),
    ),
}


@functools.cache
def compiled_gradient(name: str, element: str = "float64") -> irc.Compiled:
    function = FUNCTIONS[name]
    arity = 2 if name in BINARY else 1
    spec = irc.TensorSpec(("N",), element)

    def loss(*arrays: Any) -> Any:
        return function(*arrays).sum()

    return irc.compile(irc.grad(loss, argnums=tuple(range(arity))), *[spec] * arity)


def gradients(name: str, *arrays: np.ndarray, backend: str) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        result = compiled_gradient(name)(*arrays, backend=backend)
    return [np.asarray(g) for g in result]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_gradients_are_the_analytic_derivatives(name: str, backend: str) -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(-6.0, 6.0, 32)
    b = rng.uniform(0.5, 3.0, 32) * rng.choice([-1.0, 1.0], 32)
    arrays = (a, b) if name in BINARY else (a,)
    got = gradients(name, *arrays, backend=backend)
    for g, want in zip(got, DERIVATIVES[name](*arrays), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_at_the_points_where_a_rule_is_chosen(backend: str) -> None:
    """JAX's values (checked against JAX below, where it is installed):
    hypot at the origin ``(0.5, 0.5)`` (a tie of the magnitudes, each
    ``|x|`` of slope 1 at 0), logaddexp at a tie half each, an infinite
    operand none of it; sinc's slope 0 at 0; cbrt's inf at both zeros;
    fmod's slope 1 in the dividend at zero dividends."""
    inf = math.inf

    def at(name: str, *values: list[float]) -> list[np.ndarray]:
        return gradients(name, *(np.array(v) for v in values), backend=backend)

    hx, hy = at("hypot", [0.0, -0.0, 3.0, -3.0], [0.0, 0.0, 0.0, 4.0])
    np.testing.assert_allclose(hx, [0.5, 0.5, 1.0, -0.6], rtol=1e-15)
    np.testing.assert_allclose(hy, [0.5, 0.5, 0.0, 0.8], rtol=1e-15)
    for name in ("logaddexp", "logaddexp2"):
        gx, gy = at(name, [1.0, -3.0, -inf, 2.0], [1.0, -3.0, 2.0, -inf])
        np.testing.assert_array_equal(gx, [0.5, 0.5, 0.0, 1.0])
        np.testing.assert_array_equal(gy, [0.5, 0.5, 1.0, 0.0])
    (gs,) = at("sinc", [0.0, -0.0, 1.0])
    np.testing.assert_array_equal(gs, [0.0, 0.0, -1.0])
    (gc,) = at("cbrt", [0.0, -0.0, 8.0, -8.0])
    np.testing.assert_allclose(gc, [inf, inf, 1 / 12, 1 / 12], rtol=1e-15)
    fx, fy = at("fmod", [0.0, -0.0, -7.0], [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(fx, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(fy, [-0.0, -0.0, 3.0])


def test_gradients_against_finite_differences() -> None:
    spec = irc.TensorSpec(("N",), "float64")
    for function in (
        lambda x, y: np.logaddexp(x, 2 * y) * y,
        lambda x, y: np.logaddexp2(x, y - 1),
        lambda x, y: np.hypot(x, y) * x,
        lambda x, y: np.fmod(3 * x, y + 5.0),
        lambda x, y: np.cbrt(x - 5.0) + np.cbrt(y + 5.0),
        lambda x, y: np.sinc(x) * y,
    ):
        check_grad(function, spec, spec, max_examples=6)
    check_grad(
        lambda x: np.median(x, axis=1) * np.median(x, axis=0, keepdims=True).sum(),
        irc.TensorSpec((5, 4), "float64"),
        max_examples=6,
    )


def test_median_gradient_splits_an_even_middle() -> None:
    """Half the cotangent to each of the middle two (the mean's), none to
    the others; an odd count's middle gets all of it."""
    x = np.array([[4.0, 1.0, 3.0, 2.0], [9.0, -1.0, 5.0, 0.0]])
    spec = irc.TensorSpec((2, 4), "float64")
    for backend in BACKENDS:
        even = irc.compile(irc.grad(lambda v: np.median(v, axis=1).sum()), spec)
        np.testing.assert_array_equal(
            even(x, backend=backend), [[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]]
        )
        odd = irc.compile(irc.grad(lambda v: np.median(v[:, :3], axis=1).sum()), spec)
        np.testing.assert_array_equal(
            odd(x, backend=backend), [[0, 0, 1, 0], [0, 0, 1, 0]]
        )


def test_second_derivatives_at_ties_and_zero() -> None:
    """logaddexp's Hessian at a tie is the smooth function's (one select
    picks a whole branch), sinc's second derivative at 0 is ``-pi**2/3``."""
    spec = irc.TensorSpec((2,), "float64")
    hessian = irc.compile(irc.hessian(lambda v: np.logaddexp(v[0], v[1])), spec)
    np.testing.assert_allclose(
        hessian(np.array([1.0, 1.0])), [[0.25, -0.25], [-0.25, 0.25]], rtol=1e-15
    )
    curvature = irc.compile(irc.hessian(lambda v: np.sinc(v[0])), spec)
    np.testing.assert_allclose(
        curvature(np.zeros(2))[0, 0], -(np.pi**2) / 3, rtol=1e-15
    )


def test_gradients_agree_with_jax_at_special_points() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = np.array([0.0, -0.0, 1.0, -3.0, 2.5, 0.7, -0.2])
    y = np.array([0.0, 0.0, 1.0, -3.0, -1.5, 4.0, 0.9])
    for name in sorted(BINARY):
        theirs = jax.grad(
            lambda a, b, name=name: getattr(jnp, name)(a, b).sum(), argnums=(0, 1)
        )(x, y)
        for g, want in zip(gradients(name, x, y, backend="reference"), theirs):
            np.testing.assert_allclose(g, np.asarray(want), rtol=1e-14, err_msg=name)
    for name in sorted(UNARY):
        theirs = jax.grad(lambda a, name=name: getattr(jnp, name)(a).sum())(x)
        (g,) = gradients(name, x, backend="reference")
        np.testing.assert_allclose(g, np.asarray(theirs), rtol=1e-14, err_msg=name)
    z = np.array([3.0, -1.0, 2.0, 7.0, 0.5, 1.0])
    ours = irc.compile(
        irc.grad(lambda v: np.median(v.reshape(2, 3), axis=1).sum()),
        irc.TensorSpec((6,), "float64"),
    )(z)
    theirs = jax.grad(lambda v: jnp.median(v.reshape(2, 3), axis=1).sum())(z)
    np.testing.assert_array_equal(ours, np.asarray(theirs))


# ----- what irc refuses -----------------------------------------------------------

ERRORS: dict[str, tuple[Callable[..., Any], tuple[Any, ...], str, type, str]] = {
    "fmod of bools": (
        lambda x: np.fmod(x, x),
        (4,),
        "bool",
        IrcTypeError,
        r"np\.fmod of bools: NumPy computes it in int8.*astype\(np\.int32\)",
    ),
    "an int loop of hypot": (
        lambda x: np.hypot(x, x, dtype=np.int32),
        (4,),
        "float32",
        IrcTypeError,
        r"np\.hypot\(\.\.\., dtype=int32\): NumPy has no int32 loop",
    ),
    "where= of logaddexp": (
        lambda x: np.logaddexp(x, x, where=x > 0),
        (4,),
        "float32",
        IrcError,
        r"np\.logaddexp: .*where.*irc does not support it",
    ),
    "median out=": (
        lambda x: np.median(x, out=x[0]),
        (4,),
        "float32",
        IrcError,
        r"np\.median: out= is not supported",
    ),
    "median over a symbolic axis": (
        lambda x: np.median(x, axis=0),
        ("N", 3),
        "float32",
        IrcShapeError,
        r"np\.median along an axis of symbolic size N: irc sorts static extents",
    ),
    "median of a long axis": (
        lambda x: np.median(x),
        (40, 30),
        "float32",
        IrcShapeError,
        r"np\.median along an axis of 1200 elements: irc sorts by ranking",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_clear_errors(case: str) -> None:
    function, shape, element, error, message = ERRORS[case]
    with pytest.raises(error, match=message):
        irc.compile(function, irc.TensorSpec(shape, element))
