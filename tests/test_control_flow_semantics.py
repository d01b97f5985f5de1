"""Control flow where irc must agree with ``jax.lax`` (irc issue 33).

Each feature runs against a plain Python/NumPy loop computing the same
thing (JAX is not installed here), on the reference interpreter and, for at
least one program per feature, on the emitted Triton kernels under
Triton's interpreter (``backend="interpret"``):

1. ``irc.grad`` through a ``while_loop`` that the input reaches only
   through its predicate or an integer carry (no derivative flows: the trip
   count counts as a constant, as in JAX), also nested in a ``scan``; and
   the error where a derivative would flow through a float carry;
2. ``irc.cond`` with an integer predicate (``pred != 0``);
3. ``irc.switch`` (the index clamped into range), and its gradient;
4. ``irc.scan(..., unroll=...)``, a hint that leaves the results alone;
5. ``buf[i] = v`` at a traced 0-d index ``i``, in a loop body and out of
   one, and its gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import irc
from irc.ir import print_module
from irc.testing import check_grad

F32 = np.float32
VECTOR = irc.TensorSpec(("N",), "float32")
VECTOR64 = irc.TensorSpec(("N",), "float64")
INT32 = irc.TensorSpec((), "int32")


def _close(got: Any, want: Any, rtol: float = 1e-5) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


# ----- 1. gradients through while loops without a derivative inside --------------


def _doublings(x: Any) -> tuple[Any, Any]:
    """``y = 1; k = 0; while k < x.sum(): k += 1; y *= 2``: x reaches the loop
    only through its predicate."""

    def keep_going(carry: Any) -> Any:
        return carry[0].astype(np.float32) < x.sum()

    return irc.while_loop(
        keep_going, lambda c: (c[0] + 1, c[1] * 2.0), (np.int32(0), F32(1))
    )


def _doublings_reference(x: np.ndarray) -> tuple[int, float]:
    count, y = 0, 1.0
    while count < x.sum():
        count, y = count + 1, y * 2.0
    return count, y


def predicate_loss(x: Any) -> Any:
    _, y = _doublings(x)
    return (y * x).sum()


@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_a_while_predicate_reading_the_input_passes_no_derivative(
    backend: str,
) -> None:
    """d/dx of ``y(x) * sum(x)`` is ``y``: the trip count is piecewise
    constant, so the loop adds nothing (JAX gives the same)."""
    compiled = irc.compile(irc.value_and_grad(predicate_loss), VECTOR)
    for x in (np.array([1.0, 2.0, 0.5], F32), np.array([0.25, -1.0, 3.5, 2.0], F32)):
        count, y = _doublings_reference(x)
        assert count > 2  # the loop runs, so a wrong trip count would show
        value, gradient = compiled(x, backend=backend)
        _close(value, y * x.sum())
        _close(gradient, np.full_like(x, y))


def test_an_integer_carry_computed_from_the_input_passes_no_derivative() -> None:
    def loss(x):
        def body(c):
            step = (x.sum() > c[0].astype(np.float32)).astype(np.int32)
            return c[0] + 1 + step, c[1] + 0.5

        steps, total = irc.while_loop(lambda c: c[0] < 12, body, (np.int32(0), F32(0)))
        return total * (x * x).sum() + steps.astype(np.float32)

    def reference(x):
        steps, total = 0, 0.0
        while steps < 12:
            steps, total = steps + 1 + int(x.sum() > steps), total + 0.5
        return total * (x * x).sum() + steps, total * 2 * x

    grad = irc.compile(irc.value_and_grad(loss), VECTOR)
    for x in (np.array([1.0, 2.0], F32), np.array([4.0, 3.0, 2.5], F32)):
        want_value, want_gradient = reference(x)
        value, gradient = grad(x, backend="reference")
        _close(value, want_value)
        _close(gradient, want_gradient)


def test_a_loss_only_through_the_loop_has_a_zero_gradient() -> None:
    gradient = irc.grad(lambda x: _doublings(x)[1])(np.array([1.0, 1.5], F32))
    np.testing.assert_array_equal(gradient, np.zeros(2, F32))


def test_a_vjp_seeding_a_loop_result_with_no_derivative_inside() -> None:
    """A cotangent for the loop's own float result (``vjp`` seeds every
    float output) finds no derivative through the loop: zeros from it."""

    def outputs(x):
        _, y = _doublings(x)
        return y, x * y

    x = np.array([1.0, 2.0], F32)
    (y, scaled), pullback = irc.vjp(outputs, x)
    (gradient,) = pullback((np.array(5.0, F32), np.ones(2, F32)))
    _close(y, 8.0)
    _close(scaled, x * 8.0)
    _close(gradient, np.full(2, 8.0, F32))


def test_a_traced_fori_loop_bound_passes_no_derivative() -> None:
    x = np.array([2.0, 3.0], F32)

    def bounded(x, n):
        stop = (x.sum() * n).astype(np.int32)  # the bound depends on x
        return irc.fori_loop(0, stop, lambda i, a: a * 1.5, F32(1)) * x[0]

    for n in (1, 2):
        steps = int(x.sum() * n)
        gradient = irc.grad(bounded)(x, np.int32(n), backend="reference")
        _close(gradient, np.array([1.5**steps, 0.0], F32))


def test_a_derivative_through_a_float_carry_is_refused_as_jax_refuses_it() -> None:
    """The issue's example: ``x`` is a float carry, so its derivative would
    run through the loop (jax.lax.while_loop's reverse mode refuses it)."""

    def carried(x):
        def keep_going(c):
            return c[0].astype(np.float32) < x.sum()

        result = irc.while_loop(keep_going, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))
        return result[1].sum()

    def closed_over(x):
        _, y = irc.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x[0]), (0, F32(1))
        )
        return y

    for loss in (carried, closed_over):
        with pytest.raises(irc.IrcError) as info:
            irc.grad(loss)(np.array([1.0, 2.0], F32), backend="reference")
        message = str(info.value)
        assert "float carry 1" in message
        assert "only when the differentiated inputs reach just its predicate" in message
        assert "irc.fori_loop with int or symbolic bounds" in message
        assert "irc.scan" in message


def _ceil_scan(c0: Any, xs: Any) -> Any:
    """A scan whose body runs a while loop whose predicate reads the carry
    (``t``, a float, counts up to ``c``: ``ceil(c)``)."""

    def step(c, x):
        t = irc.while_loop(lambda t: t < c, lambda t: t + F32(1), F32(0))
        return c * 0.5 + x * t, t

    return irc.scan(step, c0, xs)


def _ceil_scan_reference(c0: float, xs: np.ndarray) -> tuple[float, list[float]]:
    c, ts = c0, []
    for x in xs:
        t = 0.0
        while t < c:
            t += 1.0
        ts.append(t)
        c = c * 0.5 + x * t
    return c, ts


@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_a_while_loop_inside_a_scan_body_reading_its_carry(backend: str) -> None:
    def loss(c0, xs):
        last, _ = _ceil_scan(c0, xs)
        return last

    grad = irc.compile(
        irc.grad(loss, argnums=(0, 1)), irc.TensorSpec((), "float32"), VECTOR
    )
    for xs in (np.array([1.0, 2.0, 3.0], F32), np.array([0.5, -0.25, 2.0, 1.0], F32)):
        _, ts = _ceil_scan_reference(3.0, xs)
        length = len(xs)
        # c_n = 0.5**n c_0 + sum_k 0.5**(n-1-k) t_k x_k, the t_k held constant
        want_xs = [ts[k] * 0.5 ** (length - 1 - k) for k in range(length)]
        d_c0, d_xs = grad(F32(3.0), xs, backend=backend)
        _close(d_c0, 0.5**length)
        _close(d_xs, np.array(want_xs, F32))


# ----- 2. cond with an integer predicate ------------------------------------------


def _int_cond(x: Any, n: Any) -> Any:
    return irc.cond(n, lambda a: a * 2.0, lambda a: a - 1.0, x)


@pytest.mark.parametrize("backend", ["reference", "interpret"])
@pytest.mark.parametrize("int_type", ["int32", "int64"])
def test_cond_takes_an_integer_predicate_as_pred_not_zero(
    int_type: str, backend: str
) -> None:
    compiled = irc.compile(_int_cond, VECTOR, irc.TensorSpec((), int_type))
    x = np.array([1.0, -2.0, 0.5], F32)
    for n in (0, 1, -3, 7):
        want = x * 2.0 if n != 0 else x - 1.0
        _close(compiled(x, np.dtype(int_type).type(n), backend=backend), want)


def test_cond_takes_python_and_numpy_integers() -> None:
    x = np.array([1.0, 3.0], F32)
    for n, want in ((0, x - 1.0), (2, x * 2.0), (np.int64(0), x - 1.0)):
        compiled = irc.compile(lambda a, n=n: _int_cond(a, n), VECTOR)
        _close(compiled(x, backend="reference"), want)


def test_cond_and_switch_take_a_symbolic_size() -> None:
    """A size (``x.shape[0] % 2``) stands for a Python int: one compilation
    picks the branch from the bound size."""

    def parity(x):
        return irc.cond(x.shape[0] % 2, lambda a: a, lambda a: a * 2.0, x)

    def by_size(x):
        return irc.switch(
            x.shape[0] - 2, [lambda a: a, lambda a: a * 2.0, lambda a: -a], x
        )

    odd_even, sized = irc.compile(parity, VECTOR), irc.compile(by_size, VECTOR)
    for size in (1, 2, 3, 4, 7):
        x = np.linspace(-1.0, 1.0, size).astype(F32)
        _close(odd_even(x, backend="reference"), x if size % 2 else x * 2.0)
        want = [x, x * 2.0, -x][_clamp(size - 2, 3)]
        _close(sized(x, backend="reference"), want)


def test_the_gradient_of_a_cond_on_an_integer() -> None:
    grad = irc.grad(lambda x, n: (_int_cond(x, n) ** 2).sum())
    x = np.array([1.0, -2.0], F32)
    _close(grad(x, np.int32(5), backend="reference"), 8.0 * x)
    _close(grad(x, np.int32(0), backend="reference"), 2.0 * (x - 1.0))


def test_float_predicates_stay_refused_and_while_wants_a_bool() -> None:
    with pytest.raises(
        irc.IrcTypeError, match="scalar bool or integer .* got a float32"
    ):
        irc.trace(lambda x: _int_cond(x, x.sum()), VECTOR)
    with pytest.raises(irc.IrcTypeError, match=r"got a int32\[N\] array"):
        irc.trace(lambda x, n: _int_cond(x, n), VECTOR, irc.TensorSpec(("N",), "int32"))
    # lax.while_loop takes no integer from cond_fun, and neither does irc
    with pytest.raises(
        irc.IrcTypeError, match="cond_fun's result must be a scalar bool"
    ):
        irc.trace(lambda n: irc.while_loop(lambda k: k, lambda k: k - 1, n), INT32)


# ----- 3. switch ------------------------------------------------------------------

BRANCHES: list[Callable[[Any, Any], Any]] = [
    lambda x, s: x * s,
    lambda x, s: x - s,
    lambda x, s: np.sin(x) + s,
    lambda x, s: x * x,
    lambda x, s: np.exp(x) * 0.5,
]
NUMPY_BRANCHES: list[Callable[[np.ndarray, float], np.ndarray]] = [
    lambda x, s: x * s,
    lambda x, s: x - s,
    lambda x, s: np.sin(x) + s,
    lambda x, s: x * x,
    lambda x, s: np.exp(x) * 0.5,
]
#: d/dx of each branch's sum, for the gradient test.
BRANCH_GRADIENTS: list[Callable[[np.ndarray, float], np.ndarray]] = [
    lambda x, s: np.full_like(x, s),
    lambda x, s: np.ones_like(x),
    lambda x, s: np.cos(x),
    lambda x, s: 2 * x,
    lambda x, s: np.exp(x) * 0.5,
]


def _switched(index: Any, x: Any, scale: Any) -> Any:
    return irc.switch(index, BRANCHES, x, scale)


def _clamp(index: int, count: int) -> int:
    return min(max(index, 0), count - 1)


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_switch_runs_the_clamped_branch(count: int) -> None:
    def f(index, x, scale):
        return irc.switch(index, BRANCHES[:count], x, scale)

    compiled = irc.compile(f, INT32, VECTOR, irc.TensorSpec((), "float32"))
    x = np.array([0.5, -1.0, 2.0], F32)
    for index in range(-2, count + 2):
        want = NUMPY_BRANCHES[_clamp(index, count)](x, 3.0)
        _close(compiled(np.int32(index), x, F32(3.0), backend="reference"), want)


def test_switch_on_the_triton_interpreter() -> None:
    compiled = irc.compile(_switched, INT32, VECTOR, irc.TensorSpec((), "float32"))
    x = np.array([0.5, -1.0, 2.0, 0.25], F32)
    for index in (-1, 1, 2, 4, 6):
        want = NUMPY_BRANCHES[_clamp(index, 5)](x, 3.0)
        _close(compiled(np.int32(index), x, F32(3.0), backend="interpret"), want)


def test_switch_is_a_balanced_tree_of_conds() -> None:
    text = print_module(
        irc.trace(_switched, INT32, VECTOR, irc.TensorSpec((), "float32"))
    )
    assert text.count("graph.cond") == 4  # five leaves, two levels and a half
    # a constant index folds to its branch
    folded = irc.compile(lambda x: irc.switch(7, BRANCHES, x, F32(2)), VECTOR)
    assert "graph.cond" not in folded.ir("graph")
    x = np.array([1.0, 2.0], F32)
    _close(folded(x, backend="reference"), np.exp(x) * 0.5)


def test_switch_with_pytrees_and_a_python_int_index() -> None:
    def f(x):
        pick = [
            lambda p: {"a": p[0] + p[1], "b": p[0]},
            lambda p: {"a": p[1], "b": p[1] * 2},
        ]
        return irc.switch(1, pick, (x, x * 3))

    result = irc.compile(f, VECTOR)(np.array([1.0, 2.0], F32), backend="reference")
    _close(result["a"], np.array([3.0, 6.0], F32))
    _close(result["b"], np.array([6.0, 12.0], F32))


def test_the_gradient_of_a_switch() -> None:
    def loss(x, scale, index):
        return _switched(index, x, scale).sum()

    grad = irc.compile(
        irc.grad(loss, argnums=(0, 1)), VECTOR, irc.TensorSpec((), "float32"), INT32
    )
    x = np.array([0.5, -1.0, 2.0], F32)
    scale_gradients = [x.sum(), -len(x), len(x), 0.0, 0.0]
    for index in range(-1, 6):
        branch = _clamp(index, 5)
        dx, dscale = grad(x, F32(3.0), np.int32(index), backend="reference")
        _close(dx, BRANCH_GRADIENTS[branch](x, 3.0))
        _close(dscale, scale_gradients[branch])


def test_switch_errors_name_the_branch_and_the_index() -> None:
    def mismatched(index, x):
        return irc.switch(
            index, [lambda a: a, lambda a: a, lambda a: a.astype(np.int32)], x
        )

    with pytest.raises(irc.IrcTypeError, match=r"irc.switch: branches\[2\]'s result"):
        irc.trace(mismatched, INT32, VECTOR)
    with pytest.raises(irc.IrcTypeError, match="index must be a scalar integer"):
        irc.trace(lambda x: irc.switch(x.sum(), BRANCHES, x, F32(1)), VECTOR)
    with pytest.raises(irc.TracingError, match="branches is empty"):
        irc.trace(lambda i, x: irc.switch(i, [], x), INT32, VECTOR)


# ----- 4. scan's unroll ------------------------------------------------------------


def _running(xs: Any, unroll: Any) -> Any:
    def step(c, x):
        c = c * 0.9 + x
        return c, c * c

    return irc.scan(step, np.zeros(xs.shape[1:], F32), xs, unroll=unroll)


def _running_reference(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c, ys = np.zeros(xs.shape[1:], F32), []
    for x in xs:
        c = c * F32(0.9) + x
        ys.append(c * c)
    return c, np.stack(ys)


@pytest.mark.parametrize("unroll", [1, 2, 3, 7, True, False])
def test_scan_unroll_gives_the_same_results(unroll: Any) -> None:
    spec = irc.TensorSpec(("T", 2), "float32")
    compiled = irc.compile(lambda xs: _running(xs, unroll), spec)
    for length in (1, 4, 5):
        xs = np.random.default_rng(length).standard_normal((length, 2)).astype(F32)
        last, ys = compiled(xs, backend="reference")
        want_last, want_ys = _running_reference(xs)
        _close(last, want_last)
        _close(ys, want_ys)


def test_scan_unroll_is_a_hint_and_runs_on_the_triton_interpreter() -> None:
    spec = irc.TensorSpec(("T", 2), "float32")
    plain = print_module(irc.trace(lambda xs: _running(xs, 1), spec))
    assert print_module(irc.trace(lambda xs: _running(xs, 4), spec)) == plain
    compiled = irc.compile(lambda xs: _running(xs, 2), spec)
    xs = np.random.default_rng(0).standard_normal((5, 2)).astype(F32)
    last, ys = compiled(xs, backend="interpret")
    want_last, want_ys = _running_reference(xs)
    _close(last, want_last)
    _close(ys, want_ys)


def test_scan_unroll_is_checked_as_jax_checks_it() -> None:
    spec = irc.TensorSpec((3, 2), "float32")
    for bad in (0, -1):
        with pytest.raises(
            irc.TracingError, match="unroll must be a bool or a positive int"
        ):
            irc.trace(lambda xs, bad=bad: _running(xs, bad), spec)
    with pytest.raises(irc.IrcTypeError, match="unroll must be .* got 1.5"):
        irc.trace(lambda xs: _running(xs, 1.5), spec)


# ----- 5. writes at a traced index ---------------------------------------------------


def _fill(x: Any, w: Any) -> Any:
    """Row ``i`` of a carried buffer set from ``x[i]``, and a counter added
    at row ``-1 - i`` (a negative traced index)."""

    def body(i, buf):
        buf[i] = x[i] * w
        buf[-1 - i, 0] += 1.0
        return buf

    return irc.fori_loop(0, x.shape[0], body, np.zeros((x.shape[0], 3), x.dtype))


def _fill_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    buf = np.zeros((x.shape[0], 3), x.dtype)
    for i in range(x.shape[0]):
        buf[i] = x[i] * w
        buf[-1 - i, 0] += 1.0
    return buf


@pytest.mark.parametrize("backend", ["reference", "interpret"])
def test_a_write_at_the_loop_index_into_a_carry(backend: str) -> None:
    compiled = irc.compile(_fill, VECTOR, irc.TensorSpec((3,), "float32"))
    w = np.array([1.0, -2.0, 0.5], F32)
    for size in (1, 4, 5):
        x = np.random.default_rng(size).standard_normal(size).astype(F32)
        _close(compiled(x, w, backend=backend), _fill_reference(x, w))


def test_writes_at_traced_indices_outside_loops() -> None:
    def columns(x, j, k):
        y = x.copy()
        y[:, j] = 5.0  # a column
        y[k, j] = -1.0  # two traced indices
        y[None, k, 0] *= 3.0  # with a new axis in the key
        return y

    compiled = irc.compile(
        columns, irc.TensorSpec((3, 4), "float32"), INT32, irc.TensorSpec((), "int64")
    )
    x = np.arange(12, dtype=F32).reshape(3, 4)
    for j, k in ((0, 0), (-1, 2), (2, -3), (3, 1)):
        want = x.copy()
        want[:, j] = 5.0
        want[k, j] = -1.0
        want[None, k, 0] *= 3.0
        got = compiled(x, np.int32(j), np.int64(k), backend="reference")
        _close(got, want)


def test_a_write_at_a_traced_index_into_an_argument_reaches_the_caller() -> None:
    def zero_one(x, i):
        x[i] = 0.0
        return x.sum()

    compiled = irc.compile(zero_one, VECTOR, irc.TensorSpec((), "int64"))
    for i in (0, 2, -1):
        x = np.arange(1.0, 5.0, dtype=F32)
        want = x.copy()
        want[i] = 0.0
        _close(compiled(x, np.int64(i), backend="reference"), want.sum())
        _close(x, want)  # NumPy would have written the caller's array


def test_a_write_at_a_while_loop_counter() -> None:
    def squares(x):
        def body(c):
            k, buf = c
            buf[k] = (k * k).astype(np.float32) + buf[k]
            return k + 1, buf

        return irc.while_loop(lambda c: c[0] < x.shape[0] - 1, body, (np.int64(0), x))[
            1
        ]

    x = np.array([1.0, 2.0, 3.0, 4.0], F32)
    want = x.copy()
    want[:-1] += np.arange(3, dtype=F32) ** 2
    _close(irc.compile(squares, VECTOR)(x, backend="reference"), want)


def test_the_gradient_of_writes_at_the_loop_index() -> None:
    check_grad(
        lambda x, w: _fill(x, w) * 1.5,
        VECTOR64,
        irc.TensorSpec((3,), "float64"),
        max_examples=6,
    )
    # and against NumPy: d/dx_i sum(buf**2) = 2 buf[i] . w, the counters apart
    x, w = np.array([1.0, 2.0, 0.5], F32), np.array([1.0, -2.0, 0.5], F32)
    dx = irc.grad(lambda x, w: (_fill(x, w) ** 2).sum())(x, w, backend="reference")
    _close(dx, np.array([2 * (_fill_reference(x, w)[i] * w).sum() for i in range(3)]))


def test_writes_through_an_index_array_are_numpys() -> None:
    # An array of indices (not a 0-d one) is a scatter: NumPy's last write
    # wins (tests/test_advanced_indexing.py has the rest).
    def scatter(x, idx):
        y = x.copy()
        y[idx] = np.arange(2, dtype=np.float32) + 7
        return y

    compiled = irc.compile(scatter, VECTOR, irc.TensorSpec((2,), "int64"))
    x, idx = np.arange(3, dtype=F32), np.array([1, 1])
    want = x.copy()
    want[idx] = np.arange(2, dtype=np.float32) + 7
    _close(compiled(x, idx, backend="reference"), want)
