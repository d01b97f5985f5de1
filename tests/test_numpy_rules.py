"""NumPy 2's dtype and shape rules where capture once broke them: each
function here is compiled with symbolic dims and compared with NumPy, value,
shape and dtype, at two bindings, on the reference interpreter and on the
emitted Triton kernels under Triton's interpreter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import irc
from irc.errors import IrcError

BACKENDS = ("reference", "interpret")
BINDINGS = ({"N": 3, "K": 4}, {"N": 5, "K": 2})


def _array(spec: irc.TensorSpec, binding: dict[str, int], seed: int) -> np.ndarray:
    shape = tuple(binding[d] if isinstance(d, str) else d for d in spec.shape)
    rng = np.random.default_rng(seed)
    values = rng.uniform(-4.0, 4.0, shape)
    if spec.dtype.kind == "b":
        return values > 0
    return values.astype(spec.dtype.numpy)


def check(
    function: Callable[..., Any],
    specs: Sequence[irc.TensorSpec],
    bindings: Sequence[dict[str, int]] = BINDINGS,
) -> None:
    compiled = irc.compile(function, *specs)
    for binding in bindings:
        arrays = [_array(s, binding, i) for i, s in enumerate(specs)]
        expected = _results(function(*arrays))
        for backend in BACKENDS:
            results = _results(compiled(*arrays, backend=backend))
            for got, want in zip(results, expected, strict=True):
                where = f"{backend} at {binding}"
                assert got.shape == want.shape, where
                assert got.dtype == want.dtype, where
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=where)


def _results(value: Any) -> list[np.ndarray]:
    values = value if isinstance(value, tuple | list) else [value]
    return [np.asarray(v) for v in values]


F32 = irc.TensorSpec(("N", "K"), "float32")
I64 = irc.TensorSpec(("N", "K"), "int64")
SQUARE_BOOL = irc.TensorSpec(("N", "N"), "bool")


@pytest.mark.parametrize("triangle", [np.triu, np.tril])
def test_triangles_of_bool_arrays_stay_bool(triangle: Callable[..., Any]) -> None:
    check(lambda m: triangle(m, 1), [SQUARE_BOOL])


def test_squeeze_without_axis_guards_a_symbolic_dim_that_could_be_one() -> None:
    spec = irc.TensorSpec((3, "K", 5), "float32")
    compiled = irc.compile(lambda x: x.squeeze(), spec)
    for backend in BACKENDS:
        x = np.ones((3, 2, 5), np.float32)
        assert compiled(x, backend=backend).shape == (3, 2, 5)
        with pytest.raises(IrcError, match=r"K >= 2.*squeeze\(\) with no axis"):
            compiled(np.ones((3, 1, 5), np.float32), backend=backend)


def test_squeeze_without_axis_drops_static_ones_only() -> None:
    check(lambda x: x[:, None, :1].squeeze(), [F32], [{"N": 3, "K": 2}])


@pytest.mark.parametrize("reduction", [np.sum, np.prod])
@pytest.mark.parametrize("axis", [None, 0])
def test_bool_sums_and_products_are_any_and_all(
    reduction: Callable[..., Any], axis: int | None
) -> None:
    def function(x: Any) -> Any:
        return reduction(x > 0, axis=axis, dtype=bool)

    check(function, [F32])


@pytest.mark.parametrize(
    ("statistic", "dtype"),
    # np.var(..., dtype=bool) subtracts bools, which NumPy refuses.
    [(np.mean, np.bool_)]
    + [(f, t) for f in (np.mean, np.var) for t in (np.int32, np.int64)],
)
def test_mean_and_var_with_an_integer_dtype_truncate_to_it(
    statistic: Callable[..., Any], dtype: type
) -> None:
    def function(x: Any, y: Any) -> Any:
        return statistic(x, axis=0, dtype=dtype), statistic(y, dtype=dtype)

    check(function, [I64, F32])


def test_std_with_an_integer_dtype_follows_numpy() -> None:
    check(lambda x: np.std(x, dtype=np.int32), [I64])
    with pytest.raises(IrcError, match="cannot store its float square root"):
        irc.compile(lambda x: np.std(x, axis=0, dtype=np.int32), I64)


@pytest.mark.parametrize(
    "function",
    [
        lambda x: x / np.sqrt(x.shape[-1]),
        lambda x: x * np.exp(x.shape[0] * 0.1),
        lambda x: x + np.floor(x.shape[0] / 2),
        lambda x: x * np.maximum(x.shape[0], 2.5),
    ],
)
def test_numpy_functions_of_sizes_are_numpy_scalars(
    function: Callable[..., Any],
) -> None:
    """float64 as NumPy's np.float64 results, whether the dim is symbolic or
    static."""
    check(function, [F32])
    check(function, [irc.TensorSpec((3, 4), "float32")], [{}])


def test_python_operators_on_sizes_stay_weak() -> None:
    check(lambda x: x * (1 / x.shape[0]) - (-(x.shape[1] * 0.5)), [F32])


@pytest.mark.parametrize(
    "function",
    [
        lambda x: x + np.asarray(x.shape[0]),
        lambda x: x * np.array([x.shape[1], 2] * 2)[: x.shape[1] // x.shape[1]],
        lambda x: np.asarray(x, dtype=np.int32),
        lambda x: np.array([x.shape[0], 2.5]),
    ],
)
def test_asarray_of_sizes_is_a_traced_array(function: Callable[..., Any]) -> None:
    check(function, [F32])
