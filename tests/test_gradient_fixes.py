"""Gradient fixes of issue 33 (reliability), each against NumPy-computed
values, finite differences or analytic formulas:

- ``np.cumprod``'s gradient is exact where elements are 0 (it was NaN),
  along any axis, with symbolic dims;
- ``irc.grad``, ``irc.value_and_grad`` and ``irc.vjp`` of a function that
  writes into its array arguments follow NumPy's writes and leave the
  caller's arrays alone;
- ``np.tan`` is a primitive: values at every float dtype on the reference
  and Triton-interpreter backends, its gradient, ONNX and ATen;
- ``irc.vjp`` gives integer and bool primals zero cotangents of their shape
  and dtype, while ``irc.grad`` keeps refusing them in ``argnums``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irc
from irc.dtypes import BFLOAT16
from irc.errors import TracingError

F64 = "float64"
F32 = "float32"


def numeric_gradient(
    function: Callable[..., Any], args: list[np.ndarray], index: int, eps: float = 1e-6
) -> np.ndarray:
    """Central differences of the scalar ``function`` in float64 with respect
    to ``args[index]``; ``function`` gets fresh copies each call, since it
    may write into them."""
    base = [np.array(a, dtype=np.float64) for a in args]
    gradient = np.zeros_like(base[index])
    for position in np.ndindex(base[index].shape):
        plus, minus = [a.copy() for a in base], [a.copy() for a in base]
        plus[index][position] += eps
        minus[index][position] -= eps
        gradient[position] = (function(*plus) - function(*minus)) / (2 * eps)
    return gradient


# ----- 1. cumprod: exact at zeros ---------------------------------------------


def cumprod_vjp_numpy(x: np.ndarray, g: np.ndarray, axis: int) -> np.ndarray:
    """``dx_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k`` along
    ``axis``, term by term (no division, so exact at zeros)."""
    x, g = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    result = np.zeros_like(x)
    length = x.shape[-1]
    for i in range(length):
        for j in range(i, length):
            others = np.delete(x[..., : j + 1], i, axis=-1)
            result[..., i] += g[..., j] * np.prod(others, axis=-1)
    return np.moveaxis(result, -1, axis)


@functools.cache
def cumprod_pullback(axis: int) -> irc.Compiled:
    """The VJP of ``np.cumprod(x, axis)`` for ``x`` of symbolic shape
    ``(B, N)``, compiled once per axis."""

    def pullback(x: Any, g: Any) -> Any:
        _, back = irc.vjp(lambda x: np.cumprod(x, axis=axis), x)
        return back(g)[0]

    spec = irc.TensorSpec(("B", "N"), F64)
    return irc.compile(pullback, spec, spec)


def test_cumprod_gradient_is_exact_at_a_zero() -> None:
    # d/dx_1 of sum(cumprod) = 0.5 + 0.5*2 + 0.5*2*3: the products of the
    # others, which the old rule computed as 0/0.
    x = np.array([0.5, 0.0, 2.0, 3.0])
    gradient = irc.grad(lambda x: np.cumprod(x).sum())(x)
    np.testing.assert_array_equal(gradient, [1.0, 4.5, 0.0, 0.0])


@pytest.mark.parametrize(
    "x",
    [
        [0.0, 2.0, 3.0],  # a leading zero
        [2.0, 0.0, 3.0, 0.0, 5.0],  # two zeros: past the second, 0
        [0.0, 0.0, 0.0],
        [1.5, -2.0, 0.5],  # no zero: the old rule's case
        [0.0],
    ],
)
def test_cumprod_gradient_matches_the_products_of_the_others(x: list[float]) -> None:
    values = np.array(x)
    g = np.linspace(-1.0, 2.0, len(x))
    _, back = irc.vjp(np.cumprod, values)
    (gradient,) = back(g)
    assert np.isfinite(gradient).all()
    np.testing.assert_allclose(gradient, cumprod_vjp_numpy(values, g, 0), rtol=1e-13)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 1).flatmap(
        lambda axis: st.tuples(
            st.just(axis),
            hnp.arrays(
                np.float64,
                hnp.array_shapes(min_dims=2, max_dims=2, max_side=5),
                elements=st.sampled_from([0.0, 0.0, -1.5, 0.5, 1.0, 2.0, 3.0]),
            ),
        )
    ),
    st.integers(0, 2**32 - 1),
)
def test_cumprod_vjp_along_either_axis_with_symbolic_dims(
    axis_and_x: tuple[int, np.ndarray], seed: int
) -> None:
    axis, x = axis_and_x
    g = np.random.default_rng(seed).uniform(-2.0, 2.0, x.shape)
    gradient = cumprod_pullback(axis)(x, g)
    assert np.isfinite(gradient).all()
    expected = cumprod_vjp_numpy(x, g, axis)
    np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-12)


def test_cumprod_gradient_runs_on_the_triton_interpreter() -> None:
    compiled = cumprod_pullback(1)
    x = np.array([[0.5, 0.0, 2.0, 3.0], [0.0, -1.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0]])
    g = np.array([[1.0, -1.0, 0.5, 2.0], [1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 2.0, -1.0]])
    gradient = compiled(x, g, backend="interpret")
    np.testing.assert_allclose(gradient, cumprod_vjp_numpy(x, g, 1), rtol=1e-12)


def test_cumprod_gradient_agrees_with_finite_differences() -> None:
    spec = irc.TensorSpec(("M", "N"), F64)
    irc.testing.check_grad(
        lambda x, w: (np.cumprod(x, axis=0) * w).sum() + np.cumprod(x, axis=-1).sum(),
        spec,
        spec,
        max_examples=10,
    )


# ----- 2. functions that write into their arguments ----------------------------


def assign_first(x: Any) -> Any:
    x[0] = 1
    return (x**2).sum()


def double_in_place(x: Any) -> Any:
    x *= 2
    return x.sum()


def add_into_slice(x: Any, y: Any) -> Any:
    x[1:3] += y
    return (x**2).sum()


def mixed_writes(x: Any, y: Any) -> Any:
    """Writes through a view, a mask and an in-place op, read in between."""
    row = x[1]
    row[:2] += y
    x[x < 0] *= 3.0
    x *= x[0, 0]
    return np.sin(x).sum() + (row * y.sum()).sum()


def test_grad_of_an_item_write_follows_numpy() -> None:
    x = np.array([0.5, -1.0, 2.0, 3.0])
    before = x.copy()
    gradient = irc.grad(assign_first)(x)
    np.testing.assert_allclose(gradient, [0.0, -2.0, 4.0, 6.0])
    np.testing.assert_array_equal(x, before)  # the caller's array is untouched


def test_value_and_grad_of_an_in_place_op() -> None:
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    before = x.copy()
    value, gradient = irc.value_and_grad(double_in_place)(x)
    assert value == pytest.approx(double_in_place(before.copy()))
    np.testing.assert_allclose(gradient, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(x, before)


def test_vjp_of_a_slice_write_with_respect_to_both_arguments() -> None:
    x, y = np.array([0.5, -1.0, 2.0, 3.0]), np.array([1.0, -0.5])
    x_before = x.copy()
    value, back = irc.vjp(add_into_slice, x, y)
    assert value == pytest.approx(add_into_slice(x_before.copy(), y))
    np.testing.assert_array_equal(x, x_before)  # the forward wrote no array
    dx, dy = back(np.array(2.0))
    written = x_before.copy()
    written[1:3] += y
    np.testing.assert_allclose(dx, 4.0 * written)
    np.testing.assert_allclose(dy, 4.0 * written[1:3])


def test_grad_of_writes_through_views_and_masks_matches_finite_differences() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, 2)
    x[0, 0] = 0.7  # away from the mask's and the product's kinks
    x[np.abs(x) < 0.05] = 0.3
    dx, dy = irc.grad(mixed_writes, argnums=(0, 1))(x, y)
    args = [x, y]
    np.testing.assert_allclose(dx, numeric_gradient(mixed_writes, args, 0), atol=1e-6)
    np.testing.assert_allclose(dy, numeric_gradient(mixed_writes, args, 1), atol=1e-6)


def test_grad_of_a_write_into_a_pytree_leaf() -> None:
    def loss(params: dict[str, Any], x: Any) -> Any:
        params["w"][0] = 0.0
        return (params["w"] * x + params["b"]).sum()

    params = {"w": np.array([1.0, 2.0, 3.0]), "b": np.array(0.5)}
    x = np.array([4.0, 5.0, 6.0])
    gradient = irc.grad(loss)(params, x)
    np.testing.assert_allclose(gradient["w"], [0.0, 5.0, 6.0])
    np.testing.assert_allclose(gradient["b"], 3.0)
    np.testing.assert_array_equal(params["w"], [1.0, 2.0, 3.0])


def test_writes_under_capture_with_symbolic_dims() -> None:
    """A compiled gradient of a writing function writes into no argument;
    vjp's pullback sees the primal before the forward's writes (x *= 2 then
    x**2 is 4x**2, whose VJP is 8x g, not 16x g)."""

    def step(x: Any, g: Any) -> Any:
        value, back = irc.vjp(lambda x: double_then_square(x), x)
        return value, back(g)[0], irc.grad(assign_first)(x)

    def double_then_square(x: Any) -> Any:
        x *= 2
        return x**2

    spec = irc.TensorSpec(("N",), F64)
    compiled = irc.compile(step, spec, spec)
    for n in (3, 6):
        x, g = np.linspace(-1.0, 2.0, n), np.linspace(0.5, 1.5, n)
        before = x.copy()
        value, pulled, gradient = compiled(x, g)
        np.testing.assert_array_equal(x, before)
        np.testing.assert_allclose(value, 4 * before**2)
        np.testing.assert_allclose(pulled, 8 * before * g)
        np.testing.assert_allclose(gradient, np.r_[0.0, 2 * before[1:]])


def test_an_outer_write_before_a_gradient_is_the_callers() -> None:
    """The compiled function's own writes keep NumPy's semantics (the
    caller's array changes); the gradient is taken at the written value."""

    def outer(x: Any) -> Any:
        x[0] = 5.0
        return irc.grad(lambda x: (x**3).sum())(x)

    x = np.array([1.0, 2.0, 3.0])
    gradient = irc.compile(outer, irc.TensorSpec(("N",), F64))(x)
    np.testing.assert_array_equal(x, [5.0, 2.0, 3.0])
    np.testing.assert_allclose(gradient, 3 * x**2)


def test_a_differentiated_function_that_returns_nothing_is_refused() -> None:
    def update(x: Any) -> None:
        x *= 2

    with pytest.raises(TracingError, match="returns None"):
        irc.vjp(update, np.ones(3))


# ----- 3. np.tan ---------------------------------------------------------------

#: dtype -> relative tolerance: an ulp or two of the result's type.
TAN_DTYPES = {
    "float16": 2e-3,
    "bfloat16": 1.6e-2,
    "float32": 1e-6,
    "float64": 1e-14,
}


@pytest.mark.parametrize("backend", ["reference", "interpret"])
@pytest.mark.parametrize("dtype_name", list(TAN_DTYPES))
def test_tan_matches_numpy(dtype_name: str, backend: str) -> None:
    numpy_type = BFLOAT16.numpy if dtype_name == "bfloat16" else np.dtype(dtype_name)
    compiled = irc.compile(np.tan, irc.TensorSpec(("N",), dtype_name))
    x = np.r_[np.linspace(-1.5, 1.5, 37), 3.0, -20.0].astype(numpy_type)
    result = compiled(x, backend=backend)
    expected = np.tan(x.astype(np.float64))
    assert result.dtype == numpy_type
    np.testing.assert_allclose(
        result.astype(np.float64), expected, rtol=TAN_DTYPES[dtype_name], atol=1e-300
    )
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan]).astype(numpy_type)
    result = compiled(special, backend=backend).astype(np.float64)
    np.testing.assert_array_equal(result[:2], [0.0, -0.0])
    assert np.signbit(result[1]) and not np.signbit(result[0])
    assert np.isnan(result[2:]).all()


def test_tan_kernel_runs_on_the_triton_interpreter() -> None:
    compiled = irc.compile(lambda x: np.tan(x) * 2.0, irc.TensorSpec(("N",), F32))
    assert "tl.sin(" in compiled.triton_source
    x = np.linspace(-1.2, 1.2, 300, dtype=np.float32)
    np.testing.assert_allclose(
        compiled(x, backend="interpret"), np.tan(x) * 2.0, rtol=2e-6
    )


def test_tan_gradient_is_one_plus_tan_squared() -> None:
    x = np.linspace(-1.4, 1.4, 15)
    gradient = irc.grad(lambda x: np.tan(x).sum())(x)
    np.testing.assert_allclose(gradient, 1.0 / np.cos(x) ** 2, rtol=1e-13)
    # The second derivative, through the rule's own ops: 2 tan (1 + tan**2).
    second = irc.grad(lambda x: irc.grad(lambda x: np.tan(x).sum())(x).sum())(x)
    np.testing.assert_allclose(second, 2 * np.tan(x) / np.cos(x) ** 2, rtol=1e-12)


def test_tan_gradient_agrees_with_finite_differences() -> None:
    # sin keeps tan's operand within [-1, 1], away from its poles.
    spec = irc.TensorSpec(("N",), F64)
    irc.testing.check_grad(
        lambda x, y: (np.tan(np.sin(x)) * y).sum(), spec, spec, max_examples=10
    )


def test_tan_exports_to_onnx() -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    model = irc.onnx.export(irc.trace(np.tan, irc.TensorSpec(("N",), F32)))
    assert "Tan" in {node.op_type for node in model.graph.node}
    session = onnxruntime.InferenceSession(model.SerializeToString())
    x = np.linspace(-1.2, 1.2, 9, dtype=np.float32)
    (result,) = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(result, np.tan(x), rtol=1e-6)


def test_torch_tan_converts_through_its_aten_name() -> None:
    torch = pytest.importorskip("torch")
    import irc.torch as irc_torch

    torch._dynamo.reset()
    irc_torch.fallback_ops.clear()
    model = torch.compile(
        lambda x: torch.tan(x) + 1.0, backend="irc", options={"runtime": "reference"}
    )
    x = torch.linspace(-1.2, 1.2, 11)
    torch.testing.assert_close(model(x), torch.tan(x) + 1.0)
    assert not irc_torch.fallback_ops, irc_torch.fallback_ops


# ----- 4. vjp of integer and bool primals ---------------------------------------


def scaled(x: Any, n: Any, mask: Any) -> Any:
    return np.where(mask, x * n.astype(x.dtype), x)


def test_vjp_gives_integer_and_bool_primals_zero_cotangents() -> None:
    x = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    n = np.array([2, 3, 4], dtype=np.int64)
    mask = np.array([True, False, True])
    value, back = irc.vjp(scaled, x, n, mask)
    np.testing.assert_allclose(value, scaled(x, n, mask))
    dx, dn, dmask = back(np.ones(3, np.float32))
    np.testing.assert_allclose(dx, [2.0, 1.0, 4.0])
    for zero, primal in ((dn, n), (dmask, mask)):
        assert zero.shape == primal.shape and zero.dtype == primal.dtype
        assert not zero.any()


def test_vjp_of_integer_pytree_leaves_under_capture() -> None:
    def f(state: dict[str, Any]) -> Any:
        return state["x"] * state["step"].astype(np.float64)

    def pullback(x: Any, step: Any, g: Any) -> Any:
        _, back = irc.vjp(f, {"x": x, "step": step})
        return back(g)[0]

    compiled = irc.compile(
        pullback,
        irc.TensorSpec(("N",), F64),
        irc.TensorSpec(("N",), "int32"),
        irc.TensorSpec(("N",), F64),
    )
    for n in (2, 5):
        x, step, g = np.ones(n), np.arange(n, dtype=np.int32), np.full(n, 0.5)
        cotangent = compiled(x, step, g)
        np.testing.assert_allclose(cotangent["x"], 0.5 * step)
        assert cotangent["step"].dtype == np.int32 and not cotangent["step"].any()
        assert cotangent["step"].shape == (n,)


def test_vjp_of_python_scalars() -> None:
    """A Python int or bool primal (static in irc) is an integer input too:
    a zero of NumPy's dtype for it; a Python float cannot be differentiated
    as a static value, and the error says how to make it an array."""
    x = np.array([1.0, 2.0, 3.0])
    _, back = irc.vjp(lambda x, k, flag: x * k * flag, x, 3, True)
    dx, dk, dflag = back(np.ones(3))
    np.testing.assert_allclose(dx, [3.0, 3.0, 3.0])
    assert dk.shape == () and dk.dtype == np.asarray(3).dtype and dk == 0
    assert dflag.dtype == np.bool_ and not dflag
    _, back = irc.vjp(lambda x, k: x * k, x, 2.5)
    with pytest.raises(TracingError, match=r"pass it as an array \(np.asarray\)"):
        back(np.ones(3))


@pytest.mark.parametrize("transform", [irc.grad, irc.value_and_grad])
def test_grad_still_refuses_an_integer_argument(transform: Callable) -> None:
    """JAX's grad refuses integer inputs; only vjp gives them zeros."""
    x, n = np.ones(3), np.arange(3)
    with pytest.raises(TracingError, match="only floating-point arrays"):
        transform(lambda x, n: (x * n).sum(), argnums=1)(x, n)
