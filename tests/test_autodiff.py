"""Gradients: the ``autodiff`` pass and ``irc.grad`` / ``value_and_grad`` /
``vjp``, against NumPy's hand-derived gradients, at two bindings of the
symbolic dims, on the reference interpreter and on Triton's interpreter."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from xdsl.context import Context
from xdsl.utils.exceptions import PassFailedException

import irc
from irc import testing
from irc.dialects import graph as g
from irc.interpreters.graph import run_graph
from irc.ir import parse_module, print_module
from irc.passes.autodiff import (
    NO_GRADIENT,
    VJP_RULES,
    AutodiffPass,
    carries_no_gradient,
    vjp_rule,
)
from irc.testing import check_grad

BACKENDS = ("reference", "interpret")
F64 = "float64"


def spec(*shape: int | str, dtype: str = F64) -> irc.TensorSpec:
    return irc.TensorSpec(shape, dtype)


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# The seed examples --------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_sum_of_squares_is_twice_x(backend: str) -> None:
    def loss(x: Any) -> Any:
        return (x**2).sum()

    compiled = irc.compile(irc.grad(loss), spec("N", dtype="float32"))
    for size in (3, 8):
        x = rng().standard_normal(size).astype(np.float32)
        np.testing.assert_allclose(compiled(x, backend=backend), 2 * x, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_squared_dot_product(backend: str) -> None:
    def loss(x: Any, w: Any) -> Any:
        return np.dot(x, w) ** 2

    compiled = irc.compile(
        irc.value_and_grad(loss, argnums=(0, 1)), spec("N"), spec("N")
    )
    for size in (2, 7):
        x, w = rng().standard_normal((2, size))
        value, (dx, dw) = compiled(x, w, backend=backend)
        dot = np.dot(x, w)
        np.testing.assert_allclose(value, dot**2)
        np.testing.assert_allclose(dx, 2 * dot * w)
        np.testing.assert_allclose(dw, 2 * dot * x)


# The API -----------------------------------------------------------------------


def mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    error = hidden @ params["w2"] - y
    return (error**2).mean()


def mlp_gradients(
    params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray
) -> dict[str, np.ndarray]:
    """The MLP loss's gradients, derived by hand."""
    pre = x @ params["w1"] + params["b1"]
    hidden = np.tanh(pre)
    error = hidden @ params["w2"] - y
    d_out = 2 * error / error.size
    d_pre = (d_out @ params["w2"].T) * (1 - hidden**2)
    return {
        "w1": x.T @ d_pre,
        "b1": d_pre.sum(axis=0),
        "w2": hidden.T @ d_out,
    }


def mlp_params(generator: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": generator.standard_normal((3, 4)),
        "b1": generator.standard_normal(4),
        "w2": generator.standard_normal((4, 2)),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_pytree_gradients_of_an_mlp_in_one_module(backend: str) -> None:
    params = mlp_params(rng())
    param_specs = {k: spec(*v.shape) for k, v in params.items()}
    compiled = irc.compile(
        irc.value_and_grad(mlp_loss), param_specs, spec("B", 3), spec("B", 2)
    )
    text = compiled.ir("graph")
    assert text.count("func.func") == 1  # forward and backward together
    assert "[B, 3]" in text  # the batch stays symbolic
    for batch in (2, 5):
        generator = np.random.default_rng(batch)
        x, y = (
            generator.standard_normal((batch, 3)),
            generator.standard_normal((batch, 2)),
        )
        value, gradients = compiled(params, x, y, backend=backend)
        np.testing.assert_allclose(value, mlp_loss(params, x, y))
        assert set(gradients) == set(params)
        for name, expected in mlp_gradients(params, x, y).items():
            np.testing.assert_allclose(gradients[name], expected, err_msg=name)


def test_has_aux_returns_the_auxiliary_outputs() -> None:
    def loss(x: Any) -> Any:
        return (x * x).sum(), {"mean": x.mean()}

    x = rng().standard_normal(4)
    compiled = irc.compile(irc.grad(loss, has_aux=True), spec("N"))
    gradient, aux = compiled(x, backend="reference")
    np.testing.assert_allclose(gradient, 2 * x)
    np.testing.assert_allclose(aux["mean"], x.mean())
    (value, aux), gradient = irc.compile(
        irc.value_and_grad(loss, has_aux=True), spec("N")
    )(x, backend="reference")
    np.testing.assert_allclose(value, (x * x).sum())


def test_jit_of_a_gradient_serves_every_size_of_a_symbolic_dim() -> None:
    jitted = irc.jit(irc.grad(lambda x: np.sin(x).sum()), dims={"x": ("N",)})
    for size in (3, 6):
        x = rng().standard_normal(size)
        np.testing.assert_allclose(jitted(x, backend="reference"), np.cos(x))
    assert len(jitted.cache) == 1


def test_an_eager_call_compiles_and_runs() -> None:
    x = rng().standard_normal((2, 3))
    np.testing.assert_allclose(irc.grad(lambda x: np.exp(x).sum())(x), np.exp(x))


def test_gradients_inside_a_traced_function() -> None:
    """A gradient function called while another is captured inlines its
    joint function there."""

    def step(w: Any, x: Any) -> Any:
        return w - 0.1 * irc.grad(lambda w, x: ((x @ w) ** 2).sum())(w, x)

    w, x = rng().standard_normal((3, 2)), rng().standard_normal((4, 3))
    new = irc.compile(step, spec(3, 2), spec("B", 3))(w, x, backend="reference")
    np.testing.assert_allclose(new, w - 0.1 * 2 * x.T @ (x @ w))


def test_vjp_eagerly_and_captured() -> None:
    def f(x: Any, y: Any) -> Any:
        return x * y, np.sin(x)

    x, y = rng().standard_normal((2, 3))
    cotangents = (np.ones(3), np.full(3, 2.0))
    out, pullback = irc.vjp(f, x, y)
    np.testing.assert_allclose(out[0], x * y)
    dx, dy = pullback(cotangents)
    np.testing.assert_allclose(dx, y + 2 * np.cos(x))
    np.testing.assert_allclose(dy, x)

    def captured(x: Any, y: Any, c0: Any, c1: Any) -> Any:
        _, pull = irc.vjp(f, x, y)
        return pull((c0, c1))

    compiled = irc.compile(captured, *[spec("N")] * 4)
    dx, dy = compiled(x, y, *cotangents, backend="reference")
    np.testing.assert_allclose(dx, y + 2 * np.cos(x))


# Errors -------------------------------------------------------------------


def test_integer_arguments_have_no_gradient() -> None:
    def loss(x: Any, ids: Any) -> Any:
        return np.take(x, ids).sum()

    with pytest.raises(irc.TracingError, match="int64 array: only floating-point"):
        irc.compile(irc.grad(loss, argnums=1), spec("N"), spec("M", dtype="int64"))
    # The table's gradient: ids that repeat accumulate.
    compiled = irc.compile(irc.grad(loss), spec("N"), spec("M", dtype="int64"))
    ids = np.array([0, 2, 2, 2])
    np.testing.assert_allclose(
        compiled(np.zeros(3), ids, backend="reference"), [1.0, 0.0, 3.0]
    )


def test_the_loss_must_be_a_float_scalar() -> None:
    with pytest.raises(irc.TracingError, match=r"rank-0\s+float array, not"):
        irc.compile(irc.grad(lambda x: x * 2), spec("N"))
    with pytest.raises(irc.TracingError, match="returning one rank-0 float array"):
        irc.compile(irc.grad(lambda x: (x.sum(), x.sum())), spec("N"))
    with pytest.raises(irc.TracingError, match="must return a pair"):
        irc.compile(irc.grad(lambda x: x.sum(), has_aux=True), spec("N"))
    with pytest.raises(irc.TracingError, match="argnums 2 is out of range"):
        irc.compile(irc.grad(lambda x: x.sum(), argnums=2), spec("N"))


def test_errors_name_the_users_line() -> None:
    with pytest.raises(irc.TracingError) as caught:
        irc.compile(irc.grad(lambda x: x.sum(), argnums=0), spec("N", dtype="int32"))
    assert f"{__file__}:" in str(caught.value)


def test_torch_inputs_that_require_grad_are_refused() -> None:
    compiled = irc.compile(lambda x: x * 2, spec("N", dtype="float32"))
    tensor = torch.ones(3, requires_grad=True)
    with pytest.raises(irc.BindingError, match="requires_grad=True.*irc.grad"):
        compiled(tensor, backend="reference")
    assert torch.equal(
        compiled(tensor.detach(), backend="reference"), torch.full((3,), 2.0)
    )


# The pass -----------------------------------------------------------------------


def test_every_graph_op_has_a_rule_or_no_gradient() -> None:
    # The region ops have rules of their own (irc.passes.autodiff.control_flow),
    # over all their results; their terminator has no results.
    ops = set(g.Graph.operations) - {*g.CONTROL_FLOW_OPS, g.YieldOp}
    missing = {op for op in ops if vjp_rule(op) is None and not carries_no_gradient(op)}
    assert not missing, missing
    assert not {op for op in ops if vjp_rule(op) and carries_no_gradient(op)}
    assert not set(VJP_RULES) & NO_GRADIENT


SQUARE = """\
func.func @main(%x: !graph.tensor<[N], f64>, %i: !graph.tensor<[N], i32>) -> !graph.tensor<[N], f64> {
  %0 = graph.exp %x : !graph.tensor<[N], f64>
  func.return %0 : !graph.tensor<[N], f64>
}
"""


def apply(text: str, **options: Any) -> str:
    module = parse_module(text)
    AutodiffPass(**options).apply(Context(), module)
    module.verify()
    return print_module(module)


def test_a_missing_rule_is_an_error_naming_the_op(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_rule = dataclasses.replace(g.ExpOp.KIND, gradient=None)
    monkeypatch.setattr(g.ExpOp, "KIND", without_rule)
    with pytest.raises(PassFailedException, match="no VJP rule for graph.exp"):
        apply(SQUARE)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"wrt": (1,)}, "argument 1 of @main is !graph.tensor<\\[N\\], i32>"),
        ({"wrt": (2,)}, "wrt=2 is out of range"),
        ({"loss": 0}, "the loss must be a rank-0 float tensor"),
        ({"function": "other"}, "no function @other"),
    ],
)
def test_options_that_do_not_fit_are_errors(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(PassFailedException, match=message):
        apply(SQUARE, **options)


def test_only_float_arguments_are_differentiated_by_default() -> None:
    text = apply(SQUARE)
    assert "%cotangent0: !graph.tensor<[N], f64>" in text
    module = parse_module(text)
    x, cotangent = rng().standard_normal((2, 4))
    outputs = run_graph(module, [x, np.zeros(4, np.int32), cotangent])
    assert len(outputs) == 2
    np.testing.assert_allclose(outputs[1], cotangent * np.exp(x))


def test_backward_ops_take_the_forward_ops_locations() -> None:
    compiled = irc.compile(irc.grad(lambda x: np.tanh(x).sum()), spec("N"))
    text = compiled.ir("graph", locations=True)
    assert text.count(f'loc("{__file__}"') == 1  # the forward's tanh
    # Marked as the backward's (what fuse's min-cut reads), at tanh's line.
    assert text.count(f'loc("backward"("{__file__}"') >= 2


# Rules, one by one, against NumPy and finite differences ------------------------


def grad_of(
    function: Callable[..., Any], *specs: irc.TensorSpec, argnums: Any = 0
) -> Any:
    return irc.compile(irc.grad(function, argnums=argnums), *specs)


def test_non_differentiable_points_follow_jax() -> None:
    point = np.array([0.0, 1.0, -1.0])
    np.testing.assert_array_equal(
        grad_of(lambda x: np.abs(x).sum(), spec(3))(point, backend="reference"),
        [1.0, 1.0, -1.0],
    )
    with np.errstate(divide="ignore"):
        sqrt = grad_of(lambda x: np.sqrt(x).sum(), spec(3))(
            np.array([0.0, 1.0, 4.0]), backend="reference"
        )
    np.testing.assert_array_equal(sqrt, [np.inf, 0.5, 0.25])
    tie = grad_of(lambda x, y: np.maximum(x, y).sum(), spec(3), spec(3), argnums=(0, 1))
    dx, dy = tie(
        np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0]), backend="reference"
    )
    np.testing.assert_array_equal(dx, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(dy, [0.5, 0.0, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_clip_passes_the_gradient_at_its_bounds_as_torch_clamp(backend: str) -> None:
    """PyTorch's convention (JAX's ``jnp.clip`` gives half at a bound):
    1 on the closed interval, 0 outside it and at NaN; traced bounds get
    the gradient where ``x`` is past them."""
    nan = np.nan
    x = np.array([-2.0, -1.0, -0.5, 0.0, 1.0, 1.5, nan, 3.0])
    low = np.array([-1.0, -1.0, 0.0, 0.0, 2.0, 1.0, 0.0, nan])
    weights = np.arange(1.0, 9.0)  # a different cotangent per element

    def loss(x: Any, low: Any) -> Any:
        return (np.clip(x, low, 1.0) * weights).sum()

    dx, dlow = grad_of(loss, spec(8), spec(8), argnums=(0, 1))(x, low, backend=backend)
    tx, tlow = (torch.tensor(v, requires_grad=True) for v in (x, low))
    (torch.clamp(tx, tlow, torch.tensor(1.0)) * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(dx, tx.grad.numpy())
    np.testing.assert_array_equal(dlow, tlow.grad.numpy())
    scalar_bounds = grad_of(lambda x: (np.clip(x, -1, 1) * weights).sum(), spec(8))
    tx = torch.tensor(x, requires_grad=True)
    (torch.clamp(tx, -1, 1) * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(scalar_bounds(x, backend=backend), tx.grad.numpy())


def first_extreme_one_hot(
    x: np.ndarray, axes: tuple[int, ...], chooser: Any
) -> np.ndarray:
    """One at the first extreme element over ``axes`` (row-major), as
    ``np.argmax`` over the merged axes picks it."""
    others = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, others + list(axes))
    merged = moved.reshape(*moved.shape[: len(others)], -1)
    index = chooser(merged, axis=-1)
    hot = np.zeros_like(merged)
    np.put_along_axis(hot, index[..., None], 1.0, axis=-1)
    return np.transpose(hot.reshape(moved.shape), np.argsort(others + list(axes)))


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_and_min_pick_the_first_extreme_over_several_axes(kind: str) -> None:
    reduce = getattr(np, kind)
    x = np.round(rng().standard_normal((3, 4, 2)))  # rounded: ties
    compiled = grad_of(lambda x: reduce(x, axis=(0, 2)).sum(), spec("N", 4, "M"))
    chooser = np.argmax if kind == "max" else np.argmin
    expected = first_extreme_one_hot(x, (0, 2), chooser)
    np.testing.assert_array_equal(compiled(x, backend="reference"), expected)
    assert expected.sum() == 4  # one element per row, ties or not


def test_prod_is_exact_where_elements_are_zero() -> None:
    compiled = grad_of(lambda x: np.prod(x, axis=1).sum(), spec("N", 3))
    x = np.array([[2.0, 3.0, 4.0], [0.0, 3.0, 4.0], [0.0, 0.0, 4.0]])
    np.testing.assert_array_equal(
        compiled(x, backend="reference"),
        [[12.0, 8.0, 6.0], [12.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_slices_with_negative_and_long_strides(backend: str) -> None:
    compiled = grad_of(
        lambda x: (x[::-2, 1:] ** 2).sum() + x[1:, :1].sum(), spec("N", 3)
    )
    for size in (3, 6):
        x = rng().standard_normal((size, 3))
        expected = np.zeros_like(x)
        expected[::-1][::2, 1:] = 2 * x[::-2, 1:]
        expected[1:, :1] += 1
        if backend == "interpret" and size == 6:
            continue  # one size is enough on the slow backend
        np.testing.assert_allclose(compiled(x, backend=backend), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_gradients_accumulate_repeated_indices(backend: str) -> None:
    def loss(table: Any, ids: Any, weights: Any) -> Any:
        return (table[ids] * weights).sum()

    compiled = grad_of(loss, spec("V", 2), spec("N", dtype="int64"), spec("N", 2))
    table = rng().standard_normal((4, 2))
    ids = np.array([3, 1, 3, -1])  # -1 wraps to 3, as in NumPy
    weights = rng().standard_normal((4, 2))
    expected = np.zeros_like(table)
    np.add.at(expected, ids, weights)
    np.testing.assert_allclose(compiled(table, ids, weights, backend=backend), expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_batched_matmul_with_broadcast_batch_dims(backend: str) -> None:
    def loss(a: Any, b: Any) -> Any:
        return np.sin(a @ b).sum()

    compiled = grad_of(loss, spec("B", 1, 2, 3), spec(4, 3, 2), argnums=(0, 1))
    a, b = rng().standard_normal((2, 1, 2, 3)), rng().standard_normal((4, 3, 2))
    g_out = np.cos(a @ b)
    da, db = compiled(a, b, backend=backend)
    np.testing.assert_allclose(
        da, (g_out @ np.swapaxes(b, -1, -2)).sum(axis=1, keepdims=True)
    )
    np.testing.assert_allclose(db, (np.swapaxes(a, -1, -2) @ g_out).sum(axis=0))


def test_every_kind_of_op_against_finite_differences() -> None:
    """Hand-picked programs of the ops generated programs meet less often."""

    def program(x: Any, y: Any, ids: Any) -> Any:
        ids = ids % x.shape[0]
        s = np.concatenate([x, np.sqrt(y * y + 1)], axis=1)  # [N, 5]
        t = np.transpose(s).reshape(-1)  # [5 N]
        m = np.minimum(x, 0.5) + np.maximum(y[:, :2], -0.5) ** 3
        r = np.where(ids[:, None] > 0, m, np.log(np.abs(m) + 1))
        w = np.take(s, ids, axis=0) / (1 + np.exp(-t.sum()))
        return (
            (r * np.sin(x)).sum()
            + w.prod(axis=1).sum()
            + irc.sigmoid(t).max()
            + irc.erf(x).sum()
            + (np.float64(2.0) ** x).sum()
            + (x % 1.5).sum()
        )

    check_grad(
        program, spec("N", 2), spec("N", 3), spec("N", dtype="int64"), max_examples=20
    )


def test_check_semantics_checks_later_passes_on_the_gradients() -> None:
    """After autodiff, --check-semantics draws the cotangents and checks the
    passes that follow on every result, gradients included."""
    module = parse_module(SQUARE)
    lowered = testing.check_semantics(module, "autodiff,canonicalize,cse,fuse")
    assert "fusion.kernel" in print_module(lowered)
