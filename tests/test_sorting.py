"""``np.sort``, ``np.argsort``, ``np.searchsorted`` and ``np.unique`` (with
irc's ``size=``) on traced arrays agree with NumPy bit for bit (ties in
NumPy's stable order, NaNs last, ``-0.0`` where it came), on the reference
and the Triton interpreter backends; the gradient of a sort is torch's; what
irc cannot sort is a clear error."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irc
from irc.capture.sorting import MAX_SORT_EXTENT

#: Where the sorted axis is, in a spec whose other axes are symbolic: the
#: spec's shape, the axis sorted, and a binding of the symbols.
LAYOUTS: dict[str, tuple[tuple[Any, ...], int | None, dict[str, int]]] = {
    "last": (("B", 5), -1, {"B": 3}),
    "first": ((4, "B"), 0, {"B": 2}),
    "middle": (("B", 3, "C"), 1, {"B": 2, "C": 3}),
    "flattened": ((2, 3), None, {}),
}
DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool")
#: Values that tie, sign zeros and sort NaN and the infinities.
SPECIAL = (np.nan, -np.inf, np.inf, -0.0, 0.0, -1.0, 1.0, -2.5, 2.5)


def _elements(dtype: str) -> st.SearchStrategy[Any]:
    kind = np.dtype(dtype).kind
    if kind == "f":
        width = np.finfo(dtype).bits
        return st.sampled_from(SPECIAL) | st.floats(width=width, allow_nan=True)
    if kind == "i":
        info = np.iinfo(dtype)
        return st.integers(-3, 3) | st.sampled_from((int(info.min), int(info.max)))
    return st.booleans()


def _shape(spec: tuple[Any, ...], binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(binding[d] if isinstance(d, str) else d for d in spec)


@st.composite
def arrays(draw: st.DrawFn, spec: tuple[Any, ...], binding: dict[str, int], dtype: str):
    shape = _shape(spec, binding)
    values = draw(
        st.lists(
            _elements(dtype), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))
        )
    )
    return np.array(values, dtype=dtype).reshape(shape)


@cache
def _sorter(layout: str, dtype: str) -> irc.Compiled:
    """One compilation per layout and dtype, serving every example."""
    spec, axis, _ = LAYOUTS[layout]
    return irc.compile(
        lambda x: (np.sort(x, axis=axis), np.argsort(x, axis=axis)),
        irc.TensorSpec(spec, dtype),
    )


def assert_identical(got: np.ndarray, expected: np.ndarray, where: str) -> None:
    """Equal values, shapes and dtypes, NaNs where NumPy has them and zeros
    with NumPy's signs."""
    assert got.shape == expected.shape and got.dtype == expected.dtype, where
    np.testing.assert_array_equal(got, expected, err_msg=where)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected), where)


def check_sort(layout: str, dtype: str, x: np.ndarray, backend: str) -> None:
    _, axis, _ = LAYOUTS[layout]
    values, order = _sorter(layout, dtype)(x, backend=backend)
    where = f"{layout} {dtype} on {backend}: {x!r}"
    assert_identical(values, np.sort(x, axis=axis, kind="stable"), where)
    assert_identical(order, np.argsort(x, axis=axis, kind="stable"), where)


@st.composite
def sort_problems(draw: st.DrawFn, layouts: tuple[str, ...], dtypes: tuple[str, ...]):
    layout, dtype = draw(st.sampled_from(layouts)), draw(st.sampled_from(dtypes))
    spec, _, binding = LAYOUTS[layout]
    return layout, dtype, draw(arrays(spec, binding, dtype))


@settings(max_examples=80, deadline=None)
@given(sort_problems(tuple(LAYOUTS), DTYPES))
def test_sort_and_argsort_agree_with_numpy(problem) -> None:
    check_sort(*problem, backend="reference")


@settings(max_examples=10, deadline=None)
@given(sort_problems(("last", "first"), ("float32", "int32")))
def test_sort_and_argsort_agree_with_numpy_in_kernels(problem) -> None:
    pytest.importorskip("torch")  # the Triton interpreter backend runs on torch
    check_sort(*problem, backend="interpret")


@pytest.mark.parametrize("kind", [None, "quicksort", "mergesort", "heapsort", "stable"])
def test_every_kind_is_the_stable_sort(kind: str | None) -> None:
    """A stable order is a valid result of every kind NumPy has."""
    x = np.array([2.0, 1.0, 2.0, -0.0, 0.0, 1.0], np.float32)
    compiled = irc.compile(
        lambda x: (np.sort(x, kind=kind), np.argsort(x, kind=kind)),
        irc.TensorSpec((6,), "float32"),
    )
    values, order = compiled(x, backend="reference")
    assert_identical(order, np.argsort(x, kind="stable"), str(kind))
    assert_identical(values, np.sort(x, kind="stable"), str(kind))


def test_methods_sort_in_place_and_argsort() -> None:
    def function(x):
        order = x.argsort(stable=True)
        x.sort()
        return order

    x = np.array([[3, 1, 2], [0, 0, -1]], np.int32)
    compiled = irc.compile(function, irc.TensorSpec(("B", 3), "int32"))
    order = compiled(x, backend="reference")
    np.testing.assert_array_equal(order, [[1, 2, 0], [2, 0, 1]])
    np.testing.assert_array_equal(x, [[1, 2, 3], [-1, 0, 0]])


@pytest.mark.parametrize("shape", [(3, 1), (3, 0), (0, 4), (1,)])
def test_short_axes_sort_into_new_arrays(shape: tuple[int, ...]) -> None:
    """An axis of 0 or 1 elements is sorted too: into a new array, which a
    write does not share with the input."""

    def function(x):
        values = np.sort(x)
        values[...] = 7
        return np.argsort(x), values, x

    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    compiled = irc.compile(function, irc.TensorSpec(shape, "float32"))
    order, values, same = compiled(x, backend="reference")
    assert_identical(order, np.argsort(x), str(shape))
    assert_identical(values, np.full(shape, 7, np.float32), str(shape))
    assert_identical(same, x, str(shape))


def test_sort_is_ranking_with_existing_graph_ops() -> None:
    text = irc.compile(np.sort, irc.TensorSpec(("B", 8), "float32")).ir("graph")
    assert "graph.take" in text and "graph.reduce sum" in text
    assert "!graph.tensor<[B, 8, 8], i1>" in text


# ----- searchsorted ------------------------------------------------------------


@cache
def _searcher(side: str) -> irc.Compiled:
    return irc.compile(
        lambda a, v: np.searchsorted(a, v, side=side),
        irc.TensorSpec(("N",), "float32"),
        irc.TensorSpec(("M", 2), "float32"),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_elements("float32"), min_size=1, max_size=8),
    st.lists(st.tuples(_elements("float32"), _elements("float32")), min_size=1),
    st.sampled_from(("left", "right")),
)
def test_searchsorted_agrees_with_numpy_at_a_symbolic_length(
    a: list[float], v: list[tuple[float, float]], side: str
) -> None:
    table = np.sort(np.array(a, np.float32))
    needles = np.array(v, np.float32)
    got = _searcher(side)(table, needles, backend="reference")
    assert_identical(got, np.searchsorted(table, needles, side=side), f"{a} {v}")


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_in_kernels_and_of_scalars(side: str) -> None:
    pytest.importorskip("torch")
    table = np.array([-1, 0, 0, 2, 5, 5], np.int64)

    def function(a, v):
        return np.searchsorted(a, v, side=side), np.searchsorted(a, 2.5, side=side)

    compiled = irc.compile(
        function, irc.TensorSpec(("N",), "int64"), irc.TensorSpec(("M",), "int32")
    )
    v = np.array([-2, 0, 5, 6, 2], np.int32)
    for backend in ("reference", "interpret"):
        counts, scalar = compiled(table, v, backend=backend)
        assert_identical(counts, np.searchsorted(table, v, side=side), backend)
        assert scalar == np.searchsorted(table, 2.5, side=side)


# ----- unique with a static size ------------------------------------------------


def padded_unique(x: np.ndarray, size: int, fill: Any, equal_nan: bool) -> tuple:
    """NumPy's ``np.unique`` cut or padded to ``size`` as irc documents it:
    values padded with ``fill`` (None: the smallest), indices with the
    smallest's, counts with 0; the inverse as NumPy's. ``return_index``
    makes NumPy sort stably, so a run of zeros keeps its first one's sign."""
    values, index, inverse, counts = np.unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        equal_nan=equal_nan,
    )
    pad = size - min(size, values.size)

    def cut(array: np.ndarray, padding: Any) -> np.ndarray:
        return np.concatenate([array[:size], np.full(pad, padding, array.dtype)])

    fill = values[0] if fill is None else fill
    return cut(values, fill), cut(index, index[0]), inverse, cut(counts, 0)


@cache
def _uniquer(shape: tuple[int, ...], dtype: str, size: int, fill: Any, equal_nan: bool):
    def function(x):
        return np.unique(
            x,
            return_index=True,
            return_inverse=True,
            return_counts=True,
            equal_nan=equal_nan,
            size=size,
            fill_value=fill,
        )

    return irc.compile(function, irc.TensorSpec(shape, dtype))


def check_unique(
    x: np.ndarray, size: int, fill: Any, equal_nan: bool, backend: str
) -> None:
    compiled = _uniquer(x.shape, x.dtype.name, size, fill, equal_nan)
    got = compiled(x, backend=backend)
    expected = padded_unique(x, size, fill, equal_nan)
    where = f"size={size} fill={fill} equal_nan={equal_nan} on {backend}: {x!r}"
    for name, a, b in zip(("values", "index", "inverse", "counts"), got, expected):
        assert_identical(a, b, f"{name} of {where}")


@st.composite
def unique_problems(draw: st.DrawFn, dtypes: tuple[str, ...]):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(st.sampled_from(((6,), (2, 3))))
    x = draw(arrays(shape, {}, dtype))
    size = draw(st.sampled_from((1, 3, 6, 8)))  # fewer, as many, more than x
    fill = draw(st.sampled_from((None, 0, 7)))
    return x, size, fill, draw(st.booleans())


@settings(max_examples=80, deadline=None)
@given(unique_problems(DTYPES))
def test_unique_with_size_is_numpys_cut_or_padded(problem) -> None:
    check_unique(*problem, backend="reference")


@settings(max_examples=6, deadline=None)
@given(unique_problems(("float32", "int32")))
def test_unique_with_size_in_kernels(problem) -> None:
    pytest.importorskip("torch")
    check_unique(*problem, backend="interpret")


@pytest.mark.parametrize(
    "returns", [(False, False, False), (True, False, False), (False, True, True)]
)
def test_unique_returns_what_is_asked_in_numpys_order(returns: tuple) -> None:
    x = np.array([[2, 0, 2], [5, 0, 0]], np.int64)

    def function(x):
        return np.unique(x, *returns, size=4, fill_value=-1)

    got = irc.compile(function, irc.TensorSpec((2, 3), "int64"))(x, backend="reference")
    values, *extras = padded_unique(x, 4, -1, equal_nan=True)
    expected = [values] + [e for wanted, e in zip(returns, extras) if wanted]
    got = list(got) if any(returns) else [got]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert_identical(a, b, str(returns))


def test_unique_fill_values_are_cast_to_the_arrays_dtype() -> None:
    """As ``np.full`` casts; a traced scalar fills too."""

    def function(x):
        return np.unique(x, size=4, fill_value=2.7), np.unique(
            x, size=3, fill_value=x.max()
        )

    x = np.array([5, 5, 1], np.int32)
    cast, traced = irc.compile(function, irc.TensorSpec((3,), "int32"))(
        x, backend="reference"
    )
    assert_identical(cast, np.array([1, 5, 2, 2], np.int32), "cast")
    assert_identical(traced, np.array([1, 5, 5], np.int32), "traced")


def test_unique_of_an_empty_array_is_all_padding() -> None:
    def function(x):
        return np.unique(
            x, return_inverse=True, return_counts=True, size=2, fill_value=3
        )

    values, inverse, counts = irc.compile(function, irc.TensorSpec((0, 3), "float32"))(
        np.zeros((0, 3), np.float32), backend="reference"
    )
    assert_identical(values, np.array([3, 3], np.float32), "values")
    assert_identical(inverse, np.zeros((0, 3), np.int64), "inverse")
    assert_identical(counts, np.zeros(2, np.int64), "counts")


#: NumPy's own np.unique, looked up before any trace: not intercepted.
_numpys_unique = np.unique


# ----- gradients -----------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0])
def test_sort_gradient_is_torchs(axis: int) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, (4, 5)).astype(np.float32)  # many ties
    weights = rng.standard_normal((4, 5)).astype(np.float32)

    def loss(x, w):
        return (np.sort(x, axis=axis) * w).sum()

    spec = irc.TensorSpec((4, 5), "float32")
    got = irc.compile(irc.grad(loss), spec, spec)(x, weights, backend="reference")
    leaf = torch.tensor(x, requires_grad=True)
    ranked = torch.sort(leaf, dim=axis, stable=True).values
    (ranked * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(got, leaf.grad.numpy(), rtol=1e-6)


# ----- what irc cannot sort ------------------------------------------------------


ERRORS: dict[str, tuple[Callable[..., Any], type[Exception], str]] = {
    "symbolic axis": (
        lambda x: np.sort(x, axis=0),
        irc.IrcShapeError,
        r"np\.sort along an axis of symbolic size N: irc sorts static extents "
        r"only .*other axes may stay symbolic",
    ),
    "flattened symbolic": (
        lambda x: np.argsort(x, axis=None),
        irc.IrcShapeError,
        r"np\.argsort along an axis of symbolic size 3\*N",
    ),
    "too long": (
        lambda x: np.sort(np.broadcast_to(x[:1], (MAX_SORT_EXTENT + 1, 3)), axis=0),
        irc.IrcShapeError,
        rf"{MAX_SORT_EXTENT + 1} elements: irc sorts by ranking, n\*n "
        rf"comparisons, up to {MAX_SORT_EXTENT}",
    ),
    "order": (
        lambda x: np.sort(x, order="a"),
        irc.TracingError,
        r"order= sorts structured arrays",
    ),
    "unknown kind": (
        lambda x: np.sort(x, kind="bogus"),
        irc.TracingError,
        r"sort kind must be 'quicksort', 'mergesort', 'heapsort' or 'stable', "
        r"got 'bogus'",
    ),
    "kind and stable": (
        lambda x: np.argsort(x, kind="stable", stable=True),
        irc.TracingError,
        r"kind= and stable= cannot both be given",
    ),
    "0-d": (
        lambda x: np.sort(x.sum()),
        irc.IrcShapeError,
        r"a 0-d array has no axis -1; pass axis=None",
    ),
    "sorter": (
        lambda x: np.searchsorted(x[0], x, sorter=np.arange(3)),
        irc.TracingError,
        r"sorter= is not supported",
    ),
    "side": (
        lambda x: np.searchsorted(x[0], x, side="middle"),
        irc.TracingError,
        r"side must be 'left' or 'right', got 'middle'",
    ),
    "searchsorted rank": (
        lambda x: np.searchsorted(x, x),
        irc.IrcShapeError,
        r"needs a 1-D sorted array, got rank 2",
    ),
    "unique without size": (
        lambda x: np.unique(x, return_counts=True),
        irc.TracingError,
        r"np\.unique .* distinct values, a size no static or symbolic dim can give: "
        r"pass size=k \(a static int\).* NumPy's np\.unique has no size=; irc "
        r"accepts it in traced code, as jax\.numpy\.unique does",
    ),
    "unique not intercepted": (
        lambda x: _numpys_unique(x),
        irc.TracingError,
        r"np\.unique .* pass size=k",
    ),
    "unique symbolic size": (
        lambda x: np.unique(x[0], size=x.shape[0]),
        irc.IrcShapeError,
        r"np\.unique: size= must be a static int, got",
    ),
    "unique negative size": (
        lambda x: np.unique(x[0], size=-1),
        irc.IrcShapeError,
        r"np\.unique: size= must be >= 0, got -1",
    ),
    "unique axis": (
        lambda x: np.unique(x[0], axis=0, size=2),
        irc.TracingError,
        r"np\.unique: axis= .* is not supported; irc finds the unique elements of "
        r"the flattened array",
    ),
    "unique symbolic extent": (
        lambda x: np.unique(x, size=2),
        irc.IrcShapeError,
        r"np\.unique along an axis of symbolic size 3\*N",
    ),
    "unique array fill": (
        lambda x: np.unique(x[0], size=2, fill_value=x[0]),
        irc.IrcShapeError,
        r"np\.unique: fill_value must be a scalar, got an array of rank 1",
    ),
    "unique of empty without fill": (
        lambda x: np.unique(x[:0, 0], size=2),
        irc.IrcShapeError,
        r"np\.unique of an empty array with size > 0: .* pass fill_value=",
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_say_what_to_change(name: str) -> None:
    function, error, message = ERRORS[name]
    with pytest.raises(error, match=message) as info:
        irc.trace(function, irc.TensorSpec(("N", 3), "float32"))
    assert re.match(rf"{re.escape(__file__)}:\d+: ", str(info.value))
