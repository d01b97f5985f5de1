"""Forward mode and Jacobians (irc.jvp, irc.jacfwd, irc.jacrev,
irc.hessian): against analytic derivatives written in NumPy and central
finite differences, first and second order, with symbolic dims (one
compilation called at two sizes), eagerly and captured, on the reference
interpreter and on Triton's interpreter, and by the laws that tie them
together (Hypothesis)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irc

F64 = "float64"
SIZES = (2, 5)


def spec(*shape: int | str, dtype: str = F64) -> irc.TensorSpec:
    return irc.TensorSpec(shape, dtype)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def numeric_jacobian(
    f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """Central finite differences, of shape ``f(x).shape + x.shape``."""
    out = np.asarray(f(x))
    jacobian = np.zeros(out.shape + x.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = eps
        column = (np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * eps)
        jacobian[(..., *index)] = column
    return jacobian


def reference(compiled: irc.Compiled, *args: Any) -> Any:
    return compiled(*args, backend="reference")


# Functions with their derivatives derived by hand -----------------------------


def elementwise(x: Any) -> Any:
    return np.tanh(x) * x**2


def elementwise_jacobian(x: np.ndarray) -> np.ndarray:
    derivative = (1 - np.tanh(x) ** 2) * x**2 + 2 * x * np.tanh(x)
    return np.diag(derivative)


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_jacobian(x: np.ndarray) -> np.ndarray:
    s = softmax(x)
    return np.diag(s) - np.outer(s, s)


def sin_times_sum(x: Any) -> Any:
    return np.sin(x) * x.sum()


def sin_times_sum_jacobian(x: np.ndarray) -> np.ndarray:
    return np.diag(np.cos(x) * x.sum()) + np.outer(np.sin(x), np.ones_like(x))


VECTOR_FUNCTIONS = {
    "elementwise": (elementwise, elementwise_jacobian),
    "softmax": (softmax, softmax_jacobian),
    "sin_times_sum": (sin_times_sum, sin_times_sum_jacobian),
}


# jvp ------------------------------------------------------------------------


@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_jvp_is_the_jacobian_times_the_tangent(name: str) -> None:
    f, jacobian = VECTOR_FUNCTIONS[name]
    compiled = irc.compile(lambda x, t: irc.jvp(f, (x,), (t,)), spec("N"), spec("N"))
    for size in SIZES:
        x, t = rng(size).standard_normal((2, size))
        out, tangent = reference(compiled, x, t)
        np.testing.assert_allclose(out, f(x), rtol=1e-12)
        np.testing.assert_allclose(tangent, jacobian(x) @ t, rtol=1e-10, atol=1e-12)


def test_the_jvp_of_an_elementwise_function_is_its_forward_mode_ops() -> None:
    """The zero cotangent of the double-VJP trick folds away: what is left
    is ``sin(x)`` and ``cos(x) * t``: no reduction, zero or transpose."""
    compiled = irc.compile(
        lambda x, t: irc.jvp(np.sin, (x,), (t,)), spec("N"), spec("N")
    )
    text = compiled.ir("graph")
    assert re.findall(r"= graph\.(\w+)", text) == ["sin", "cos", "mul"], text


def test_jvp_of_several_primals_and_pytree_outputs() -> None:
    def f(params: dict[str, Any], x: Any) -> Any:
        hidden = np.tanh(x @ params["w"])
        return {"hidden": hidden, "total": (hidden * params["b"]).sum()}

    r = rng()
    params = {"w": r.standard_normal((3, 4)), "b": r.standard_normal(4)}
    tangents = {"w": r.standard_normal((3, 4)), "b": r.standard_normal(4)}

    def program(params: Any, x: Any, dparams: Any, dx: Any) -> Any:
        return irc.jvp(f, (params, x), (dparams, dx))

    param_specs = {"w": spec(3, 4), "b": spec(4)}
    compiled = irc.compile(
        program, param_specs, spec("B", 3), param_specs, spec("B", 3)
    )
    for batch in SIZES:
        x, dx = r.standard_normal((2, batch, 3))
        out, tangent = reference(compiled, params, x, tangents, dx)
        np.testing.assert_allclose(out["hidden"], np.tanh(x @ params["w"]))
        # The same directional derivative by hand.
        hidden = np.tanh(x @ params["w"])
        dhidden = (1 - hidden**2) * (dx @ params["w"] + x @ tangents["w"])
        dtotal = (dhidden * params["b"]).sum() + (hidden * tangents["b"]).sum()
        np.testing.assert_allclose(tangent["hidden"], dhidden, rtol=1e-10)
        np.testing.assert_allclose(tangent["total"], dtotal, rtol=1e-10)


def test_jvp_eagerly_with_aux() -> None:
    def f(x: Any) -> Any:
        return np.exp(x), {"mean": x.mean()}

    x, t = rng().standard_normal((2, 4))
    out, tangent, aux = irc.jvp(f, (x,), (t,), has_aux=True)
    np.testing.assert_allclose(out, np.exp(x))
    np.testing.assert_allclose(tangent, np.exp(x) * t)
    np.testing.assert_allclose(aux["mean"], x.mean())
    # A second eager call reuses the compiled program.
    out, tangent, _ = irc.jvp(f, [x + 1], [t], has_aux=True)
    np.testing.assert_allclose(tangent, np.exp(x + 1) * t)


def test_jvp_agrees_with_vjp_by_the_adjoint_identity() -> None:
    """<u, J t> == <J^T u, t>: forward and reverse mode describe one J."""

    def f(x: Any, w: Any) -> Any:
        return softmax(x @ w)

    def program(x: Any, w: Any, dx: Any, dw: Any, u: Any) -> Any:
        _, tangent = irc.jvp(f, (x, w), (dx, dw))
        _, pullback = irc.vjp(f, x, w)
        gx, gw = pullback(u)
        return (u * tangent).sum(), (gx * dx).sum() + (gw * dw).sum()

    compiled = irc.compile(
        program, spec("B", 3), spec(3, "H"), spec("B", 3), spec(3, "H"), spec("B", "H")
    )
    r = rng()
    for batch, hidden in ((2, 4), (3, 1)):
        x, dx = r.standard_normal((2, batch, 3))
        w, dw = r.standard_normal((2, 3, hidden))
        forward, backward = reference(
            compiled, x, w, dx, dw, r.standard_normal((batch, hidden))
        )
        np.testing.assert_allclose(forward, backward, rtol=1e-10, atol=1e-12)


# Jacobians --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("name", VECTOR_FUNCTIONS)
def test_jacobians_of_vector_functions(mode: str, name: str) -> None:
    f, jacobian = VECTOR_FUNCTIONS[name]
    compiled = irc.compile(getattr(irc, mode)(f), spec("N"))
    assert "[N, N]" in compiled.ir("graph")  # one program for every size
    for size in SIZES:
        x = rng(size).standard_normal(size)
        np.testing.assert_allclose(
            reference(compiled, x), jacobian(x), rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_the_jacobian_of_a_matmul_in_both_arguments(mode: str) -> None:
    """Shapes are ``out.shape + in.shape``: ``(B, H, B, D)`` and
    ``(B, H, D, H)`` for ``x @ w``, with the batch symbolic."""
    compiled = irc.compile(
        getattr(irc, mode)(lambda x, w: x @ w, argnums=(0, 1)), spec("B", 3), spec(3, 2)
    )
    for batch in SIZES:
        x, w = rng(batch).standard_normal((batch, 3)), rng().standard_normal((3, 2))
        dx, dw = reference(compiled, x, w)
        # d(x@w)[b,h]/dx[c,d] = [b == c] w[d,h]; d/dw[d,k] = [h == k] x[b,d].
        np.testing.assert_allclose(dx, np.einsum("bc,dh->bhcd", np.eye(batch), w))
        np.testing.assert_allclose(dw, np.einsum("hk,bd->bhdk", np.eye(2), x))


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobians_of_reductions_against_finite_differences(mode: str) -> None:
    def f(x: Any) -> Any:
        return x.max(axis=1) * (x**2).sum(axis=1) + np.log(np.exp(x).mean())

    compiled = irc.compile(getattr(irc, mode)(f), spec("N", "M"))
    for rows, columns in ((2, 3), (3, 2)):
        x = rng(rows).standard_normal((rows, columns))
        result = reference(compiled, x)
        assert result.shape == (rows, rows, columns)
        np.testing.assert_allclose(result, numeric_jacobian(f, x), rtol=1e-6, atol=1e-8)


def cond_program(x: Any) -> Any:
    return irc.cond(x.sum() > 0, lambda x: x**3, lambda x: np.exp(x) * x, x)


def cond_numpy(x: np.ndarray) -> np.ndarray:
    return x**3 if x.sum() > 0 else np.exp(x) * x


def loop_program(x: Any) -> Any:
    return irc.fori_loop(0, 3, lambda i, c: np.sin(c) * x + i, x)


def loop_numpy(x: np.ndarray) -> np.ndarray:
    carry = x
    for i in range(3):
        carry = np.sin(carry) * x + i
    return carry


def scan_program(x: Any) -> Any:
    # A running product along a symbolic length, returning every state.
    def step(carry: Any, xi: Any) -> Any:
        carry = np.tanh(carry * xi + 0.5)
        return carry, carry

    return irc.scan(step, np.float64(1.0), x)[1]


def scan_numpy(x: np.ndarray) -> np.ndarray:
    carry, states = 1.0, []
    for xi in x:
        carry = np.tanh(carry * xi + 0.5)
        states.append(carry)
    return np.array(states)


CONTROL_FLOW = {
    "cond": (cond_program, cond_numpy),
    "fori_loop": (loop_program, loop_numpy),
    "scan": (scan_program, scan_numpy),
}


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("name", CONTROL_FLOW)
def test_jacobians_through_control_flow(mode: str, name: str) -> None:
    f, numpy_f = CONTROL_FLOW[name]
    compiled = irc.compile(getattr(irc, mode)(f), spec("N"))
    for size, shift in ((2, 1.0), (4, -1.0)):  # both branches of the cond
        x = rng(size).standard_normal(size) * 0.5 + shift
        np.testing.assert_allclose(
            reference(compiled, x), numeric_jacobian(numpy_f, x), rtol=1e-6, atol=1e-8
        )


def test_jacobians_of_pytrees_with_aux() -> None:
    """JAX's structure: the output's tree, each leaf holding the tree of the
    argument's Jacobians; the aux returned beside it."""

    def f(params: dict[str, Any]) -> Any:
        y = params["a"] * params["b"][0]
        return (y, y.sum() ** 2), params["b"].sum()

    a, b = rng().standard_normal(3), rng(1).standard_normal(2)
    for mode in ("jacfwd", "jacrev"):
        compiled = irc.compile(
            getattr(irc, mode)(f, has_aux=True), {"a": spec("N"), "b": spec(2)}
        )
        (dy, dsquare), aux = reference(compiled, {"a": a, "b": b})
        np.testing.assert_allclose(aux, b.sum())
        np.testing.assert_allclose(dy["a"], np.eye(3) * b[0])
        np.testing.assert_allclose(dy["b"], np.stack([a, np.zeros(3)], axis=1))
        y = a * b[0]
        np.testing.assert_allclose(dsquare["a"], 2 * y.sum() * b[0] * np.ones(3))
        np.testing.assert_allclose(dsquare["b"], [2 * y.sum() * a.sum(), 0.0])


def test_jacobians_eagerly() -> None:
    x = rng().standard_normal(4)
    np.testing.assert_allclose(irc.jacrev(softmax)(x), softmax_jacobian(x), atol=1e-12)
    np.testing.assert_allclose(irc.jacfwd(softmax)(x), softmax_jacobian(x), atol=1e-12)


def test_integer_arguments_outside_argnums_are_constants() -> None:
    def f(x: Any, ids: Any) -> Any:
        return np.take(x, ids) ** 2

    x, ids = rng().standard_normal(4), np.array([2, 0, 2])
    expected = np.zeros((3, 4))
    expected[np.arange(3), ids] = 2 * x[ids]
    for mode in ("jacfwd", "jacrev"):
        compiled = irc.compile(
            getattr(irc, mode)(f), spec("N"), spec("M", dtype="int64")
        )
        np.testing.assert_allclose(reference(compiled, x, ids), expected)


def test_jacrev_of_an_output_whose_dims_are_expressions() -> None:
    """jacrev builds each one-hot from its index inside the differentiated
    function, so an output of shape [2*N] is fine; forward mode is refused
    with a message that says what to do."""

    def flat(x: Any) -> Any:
        return np.sin(x).reshape(-1)

    compiled = irc.compile(irc.jacrev(flat), spec("N", 2))
    for rows in SIZES:
        x = rng(rows).standard_normal((rows, 2))
        np.testing.assert_allclose(
            reference(compiled, x), numeric_jacobian(flat, x), rtol=1e-6, atol=1e-8
        )
    with pytest.raises(irc.TracingError, match=r"shape \[2\*N\].*use irc.jacrev"):
        irc.compile(irc.jacfwd(flat), spec("N", 2))


def test_constant_outputs_scalars_and_keyword_arguments() -> None:
    """A NumPy constant output has a zero Jacobian; a float scalar is a 0-d
    array (not a static value); keyword arguments are not differentiated."""
    np.testing.assert_array_equal(
        irc.jacrev(lambda x: (np.ones(3), x))(np.ones(2))[0], np.zeros((3, 2))
    )
    np.testing.assert_allclose(irc.jacfwd(lambda x: x**3)(np.float64(2.0)), 12.0)
    _, tangent = irc.jvp(lambda x: x**3, (2.0,), (1.0,))
    np.testing.assert_allclose(tangent, 12.0)
    scaled = irc.jacrev(lambda x, scale=1.0: np.sin(x) * scale)
    x = rng().standard_normal(3)
    np.testing.assert_allclose(scaled(x, scale=2.0), np.diag(2 * np.cos(x)))


def test_reverse_over_forward() -> None:
    """The gradient of a JVP: d/dx <J(x) t, 1> for sin is -sin(x) * t."""

    def directional(x: Any, t: Any) -> Any:
        return irc.jvp(np.sin, (x,), (t,))[1].sum()

    compiled = irc.compile(irc.grad(directional), spec("N"), spec("N"))
    for size in SIZES:
        x, t = rng(size).standard_normal((2, size))
        np.testing.assert_allclose(reference(compiled, x, t), -np.sin(x) * t)


# Second order ------------------------------------------------------------------


def test_the_hessian_of_log_sum_exp_is_the_softmax_jacobian() -> None:
    def log_sum_exp(x: Any) -> Any:
        top = x.max()
        return np.log(np.exp(x - top).sum()) + top

    compiled = irc.compile(irc.hessian(log_sum_exp), spec("N"))
    for size in SIZES:
        x = rng(size).standard_normal(size)
        np.testing.assert_allclose(
            reference(compiled, x), softmax_jacobian(x), rtol=1e-10, atol=1e-12
        )


def test_the_hessian_of_a_quadratic_form_and_of_a_cubic() -> None:
    def f(x: Any, a: Any) -> Any:
        return x @ a @ x + (x**3).sum()

    compiled = irc.compile(irc.hessian(f), spec("N"), spec("N", "N"))
    for size in SIZES:
        x, a = rng(size).standard_normal(size), rng().standard_normal((size, size))
        np.testing.assert_allclose(
            reference(compiled, x, a), a + a.T + np.diag(6 * x), rtol=1e-10
        )


def test_second_order_through_a_loop_against_finite_differences() -> None:
    def f(x: Any) -> Any:
        return (loop_program(x) ** 2).sum()

    compiled = irc.compile(irc.hessian(f), spec("N"))
    gradient = irc.compile(irc.grad(f), spec("N"))
    for size in SIZES:
        x = rng(size).standard_normal(size) * 0.5
        expected = numeric_jacobian(lambda x: reference(gradient, x), x)
        np.testing.assert_allclose(
            reference(compiled, x), expected, rtol=1e-6, atol=1e-8
        )


def test_a_hessian_of_a_vector_function_and_of_two_arguments() -> None:
    """``hessian(f)`` of ``f: R^N -> R^N`` has shape ``(N, N, N)``; with
    ``argnums=(0, 1)`` it is JAX's nested tuple of blocks."""
    x = rng().standard_normal(3)
    # f_i = x_i^2 * sum(x): d2 f_i / dx_j dx_k by hand.
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                expected[i, j, k] = 2 * (i == j) * (i == k) * x.sum() + 2 * x[i] * (
                    (i == j) + (i == k)
                )
    np.testing.assert_allclose(irc.hessian(lambda x: x**2 * x.sum())(x), expected)

    y = rng(1).standard_normal(3)
    (dxx, dxy), (dyx, dyy) = irc.hessian(lambda x, y: (x * y).sum(), argnums=(0, 1))(
        x, y
    )
    np.testing.assert_allclose(dxx, np.zeros((3, 3)))
    np.testing.assert_allclose(dxy, np.eye(3))
    np.testing.assert_allclose(dyx, np.eye(3))
    np.testing.assert_allclose(dyy, np.zeros((3, 3)))


def test_hessian_with_aux_and_symbolic_dims() -> None:
    def f(x: Any) -> Any:
        return (np.exp(x) * x).sum(), x.max()

    compiled = irc.compile(irc.hessian(f, has_aux=True), spec("N"))
    for size in SIZES:
        x = rng(size).standard_normal(size)
        second, aux = reference(compiled, x)
        np.testing.assert_allclose(second, np.diag(np.exp(x) * (x + 2)), rtol=1e-12)
        np.testing.assert_allclose(aux, x.max())


# Triton's interpreter --------------------------------------------------------


def test_jvp_jacobians_and_hessian_on_tritons_interpreter() -> None:
    f32 = "float32"

    def program(x: Any, t: Any) -> Any:
        _, tangent = irc.jvp(sin_times_sum, (x,), (t,))
        return (
            tangent,
            irc.jacfwd(sin_times_sum)(x),
            irc.jacrev(softmax)(x),
            irc.hessian(lambda x: (np.sin(x) * x.sum()).sum())(x),
        )

    compiled = irc.compile(program, spec("N", dtype=f32), spec("N", dtype=f32))
    for size in (3, 6):
        x, t = rng(size).standard_normal((2, size)).astype(np.float32)
        tangent, forward, reverse, second = compiled(x, t, backend="interpret")
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(
            tangent, sin_times_sum_jacobian(x64) @ t, rtol=1e-4, atol=1e-5
        )
        np.testing.assert_allclose(
            forward, sin_times_sum_jacobian(x64), rtol=1e-4, atol=1e-5
        )
        np.testing.assert_allclose(reverse, softmax_jacobian(x64), rtol=1e-4, atol=1e-5)
        expected = (
            np.diag(-np.sin(x64) * x64.sum())
            + np.outer(np.cos(x64), np.ones(size))
            + np.outer(np.ones(size), np.cos(x64))
        )
        np.testing.assert_allclose(second, expected, rtol=1e-4, atol=1e-5)


# Laws (Hypothesis) ------------------------------------------------------------


def mixed(x: Any) -> Any:
    return softmax(np.sin(x) * x[::-1]) * x.sum() ** 2


LAW_FUNCTIONS = {"mixed": mixed, "cond": cond_program, "sin_times_sum": sin_times_sum}


def law_program(f: Callable[..., Any]) -> Callable[..., Any]:
    def program(x: Any, t: Any) -> Any:
        _, tangent = irc.jvp(f, (x,), (t,))
        scalar = lambda x: (f(x) * np.cos(x)).sum()  # noqa: E731
        return tangent, irc.jacfwd(f)(x), irc.jacrev(f)(x), irc.hessian(scalar)(x)

    return program


_LAW_PROGRAMS: dict[str, irc.Compiled] = {}


def compiled_law_program(name: str) -> irc.Compiled:
    """One compilation per function for all examples (dims symbolic)."""
    if name not in _LAW_PROGRAMS:
        _LAW_PROGRAMS[name] = irc.compile(
            law_program(LAW_FUNCTIONS[name]), spec("N"), spec("N")
        )
    return _LAW_PROGRAMS[name]


@settings(max_examples=12)
@given(
    name=st.sampled_from(sorted(LAW_FUNCTIONS)),
    size=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_laws_of_forward_and_reverse_mode(name: str, size: int, seed: int) -> None:
    """jvp(f, x, t) == jacfwd(f)(x) @ t; jacfwd == jacrev; a Hessian is
    symmetric (and all three agree with finite differences)."""
    x, t = rng(seed).standard_normal((2, size))
    tangent, forward, reverse, second = reference(compiled_law_program(name), x, t)
    np.testing.assert_allclose(tangent, forward @ t, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(forward, reverse, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(second, second.T, rtol=1e-9, atol=1e-10)
    f = LAW_FUNCTIONS[name] if name != "cond" else cond_numpy
    np.testing.assert_allclose(forward, numeric_jacobian(f, x), rtol=1e-5, atol=1e-7)


# Errors -----------------------------------------------------------------------


def test_integer_arguments_have_no_derivatives() -> None:
    def f(x: Any) -> Any:
        return x * 2

    for transform in (irc.jacfwd, irc.jacrev, irc.hessian):
        with pytest.raises(irc.TracingError, match="int64 array .*only floating-point"):
            irc.compile(transform(f), spec("N", dtype="int64"))
    with pytest.raises(irc.TracingError, match="int32 array .*only floating-point"):
        irc.jvp(f, (np.arange(3, dtype=np.int32),), (np.zeros(3, np.int32),))


def test_integer_outputs_are_refused_pointing_to_has_aux() -> None:
    with pytest.raises(irc.TracingError, match="output 1 is a int64 array.*has_aux"):
        irc.compile(irc.jacrev(lambda x: (x, x.argmax())), spec("N"))


def test_tangents_must_match_the_primals() -> None:
    x = np.ones(3)
    with pytest.raises(
        irc.TracingError, match=r"tangent 0 is float32\[3\].*float64\[3\]"
    ):
        irc.jvp(np.sin, (x,), (np.ones(3, np.float32),))
    with pytest.raises(irc.TracingError, match="structure"):
        irc.jvp(lambda x, y: x * y, (x, x), (x,))
    with pytest.raises(irc.TracingError, match="tuple or list"):
        irc.jvp(np.sin, x, x)
    with pytest.raises(irc.TracingError, match=r"tangent 0 is float64\[M\]"):
        irc.compile(lambda x, t: irc.jvp(np.sin, (x,), (t,)), spec("N"), spec("M"))


def test_argnums_out_of_range() -> None:
    with pytest.raises(irc.TracingError, match="argnums 1 is out of range"):
        irc.compile(irc.jacfwd(np.sin, argnums=1), spec("N"))
