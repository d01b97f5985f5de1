"""Structured control flow at the graph level: ``irc.cond``,
``irc.while_loop``, ``irc.fori_loop`` and ``irc.scan`` captured into
graph.cond / graph.while / graph.for and run on the reference interpreter,
against plain Python/NumPy at several sizes (``control_flow_programs``);
their pytrees, closures, bounds and the errors a user can cause."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from control_flow_programs import (
    PROGRAMS,
    rnn_inputs,
    rnn_loss,
    rnn_reference,
    rnn_specs,
)
from hypothesis import given, settings

import irc
from irc import pytree
from irc.ir import print_module
from irc.testing import (
    CONTROL_FLOW_ACTIONS,
    check_grad,
    check_pass,
    differentiable_programs,
    programs,
)

N = irc.TensorSpec(("N",), "float32")


def _assert_same(got: Any, want: Any) -> None:
    got_leaves, got_tree = pytree.flatten(got)
    want_leaves, want_tree = pytree.flatten(want)
    assert got_tree == want_tree
    for have, expected in zip(got_leaves, want_leaves, strict=True):
        have, expected = np.asarray(have), np.asarray(expected)
        assert have.dtype == expected.dtype
        assert have.shape == expected.shape
        np.testing.assert_allclose(have, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_agrees_with_python_at_several_sizes(name: str) -> None:
    program = PROGRAMS[name]
    compiled = program.compile()
    for size in program.sizes:
        args = program.inputs(np.random.default_rng(size), size)
        _assert_same(compiled(*args, backend="reference"), program.reference(*args))


def test_programs_capture_their_region_ops() -> None:
    expected = {
        "decay_or_grow": ("graph.while", "graph.cond"),
        "rnn": ("graph.for T carries",),
        "newton_sqrt": ("graph.while",),
        "greedy_decode": ("graph.for 5 carries",),
        "cumsum": ("graph.for N carries",),
    }
    for name, ops in expected.items():
        text = print_module(irc.trace(PROGRAMS[name].function, *PROGRAMS[name].specs()))
        for op in ops:
            assert op in text, (name, op)


def test_the_programs_do_not_stop_early() -> None:
    """The inputs make the loops iterate and branch (so the checks can fail)."""
    newton = PROGRAMS["newton_sqrt"]
    _, count = newton.reference(*newton.inputs(np.random.default_rng(6), 6))
    assert count > 3
    decode = PROGRAMS["greedy_decode"]
    tokens = decode.reference(*decode.inputs(np.random.default_rng(3), 3))
    assert len(set(tokens.tolist())) > 1
    x, _ = PROGRAMS["decay_or_grow"].inputs(np.random.default_rng(9), 9)
    assert x.sum() < 0  # grows first, then decays


# ----- semantics ------------------------------------------------------------------


def _run(function: Any, *args: np.ndarray, specs: Any = None) -> Any:
    specs = specs or [irc.TensorSpec(a.shape, str(a.dtype)) for a in args]
    return irc.compile(function, *specs)(*args, backend="reference")


def test_cond_takes_the_branch_the_predicate_says() -> None:
    def f(x):
        return irc.cond(x[0] > 0, lambda a: a * 2, lambda a: a - 1, x)

    spec = [irc.TensorSpec(("N",), "float32")]
    compiled = irc.compile(f, *spec)
    for x in (np.array([1.0, 2.0], np.float32), np.array([-1.0, 5.0, 3.0], np.float32)):
        want = x * 2 if x[0] > 0 else x - 1
        np.testing.assert_array_equal(compiled(x, backend="reference"), want)


def test_cond_with_a_python_bool_and_pytrees() -> None:
    def f(x, y):
        def left(p):
            return {"sum": p["a"] + p["b"], "pair": (p["a"], 1.5)}

        def right(p):
            return {"sum": p["a"] - p["b"], "pair": (p["b"], np.float32(0))}

        return irc.cond(True, left, right, {"a": x, "b": y})

    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    result = _run(f, x, y)
    np.testing.assert_array_equal(result["sum"], x + y)
    np.testing.assert_array_equal(result["pair"][0], x)
    assert result["pair"][1].dtype == np.float32 and result["pair"][1] == 1.5


def test_closed_over_values_become_operands() -> None:
    def f(x, scale):
        offset = scale * 2  # a value of the enclosing trace

        def body(i, acc):
            return irc.cond(
                acc.sum() > 100, lambda a: a, lambda a: a * scale + offset, acc
            )

        return irc.fori_loop(0, 4, body, x)

    module = irc.trace(f, N, irc.TensorSpec((), "float32"))
    module.verify()
    x, scale = np.array([1.0, 2.0], np.float32), np.float32(1.5)
    want = x
    for _ in range(4):
        want = want if want.sum() > 100 else want * scale + scale * 2
    np.testing.assert_allclose(_run(f, x, scale), want, rtol=1e-6)


def test_fori_loop_with_symbolic_bounds_offsets_the_index() -> None:
    def f(x):
        def body(i, total):
            return total + x[i] * i  # i is weak: float32 stays float32

        return irc.fori_loop(1, x.shape[0], body, np.float32(0))

    text = print_module(irc.trace(f, N))
    assert "graph.for N - 1 carries" in text
    compiled = irc.compile(f, N)
    for size in (1, 2, 5):
        x = np.arange(size, dtype=np.float32) + 1
        want = np.float32(sum(x[i] * i for i in range(1, size)))
        got = compiled(x, backend="reference")
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want)


def test_fori_loop_with_traced_bounds_runs_from_lower_to_upper() -> None:
    def f(lower, upper):
        return irc.fori_loop(lower, upper, lambda i, s: s + i, np.int32(0))

    compiled = irc.compile(f, irc.TensorSpec((), "int32"), irc.TensorSpec((), "int32"))
    for lower, upper in ((0, 0), (2, 7), (5, 3)):
        got = compiled(np.int32(lower), np.int32(upper), backend="reference")
        assert got.dtype == np.int32 and got == sum(range(lower, upper))


def test_reverse_scan_keeps_the_ys_in_order_of_xs() -> None:
    def f(xs):
        return irc.scan(lambda c, x: (c + x, c + x), np.float32(0), xs, reverse=True)

    xs = np.arange(1, 5, dtype=np.float32)
    last, ys = _run(f, xs, specs=[N])
    np.testing.assert_array_equal(ys, np.cumsum(xs[::-1])[::-1])
    assert last == xs.sum()


def test_scan_of_pytrees_and_a_none_output() -> None:
    def f(xs, ws):
        def step(carry, x):
            total, count = carry
            return (total + x["v"] * x["w"], count + 1), None

        carry, ys = irc.scan(step, (np.float32(0), np.int64(0)), {"v": xs, "w": ws})
        assert ys is None
        return carry

    xs, ws = np.arange(3, dtype=np.float32), np.full(3, 2, np.float32)
    total, count = _run(f, xs, ws, specs=[N, N])
    assert count == 3 and total == (xs * ws).sum()


def test_scan_without_xs_takes_a_symbolic_length() -> None:
    def f(x):
        _, ys = irc.scan(lambda c, _: (c * 2, c), np.int64(1), length=x.shape[0])
        return ys

    compiled = irc.compile(f, N)
    got = compiled(np.zeros(4, np.float32), backend="reference")
    np.testing.assert_array_equal(got, [1, 2, 4, 8])


def test_nested_loops_capture_through_both_levels() -> None:
    def f(x):
        def outer(i, acc):
            return irc.fori_loop(0, 3, lambda j, a: a + x, acc)  # x: two levels up

        return irc.fori_loop(0, 2, outer, np.zeros_like(x))

    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(_run(f, x, specs=[N]), 6 * x)


# ----- errors ---------------------------------------------------------------------


def _line_of(function: Any, text: str) -> str:
    import inspect

    lines, first = inspect.getsourcelines(function)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"{__file__}:{first + offset}"


def test_branches_of_different_structure() -> None:
    def f(x):
        return irc.cond(x[0] > 0, lambda a: (a, a), lambda a: [a, a], x)

    with pytest.raises(
        irc.IrcTypeError,
        match=r"false_fun's result has the structure \[\*, \*\], but it must be \(\*, \*\)",
    ) as info:
        irc.trace(f, N)
    assert _line_of(f, "irc.cond") in str(info.value)


def test_branches_of_different_dtypes_or_shapes() -> None:
    def dtypes(x):
        return irc.cond(x[0] > 0, lambda a: a, lambda a: a.astype(np.int32), x)

    with pytest.raises(
        irc.IrcTypeError, match=r"is int32\[N\] but must be float32\[N\]"
    ):
        irc.trace(dtypes, N)

    def shapes(x):
        return irc.cond(x[0] > 0, lambda a: a, lambda a: a[1:], x)

    with pytest.raises(
        irc.IrcShapeError, match=r"is float32\[N - 1\] but must be float32\[N\]"
    ):
        irc.trace(shapes, N)


def test_a_carry_that_changes_type() -> None:
    def f(x):
        return irc.fori_loop(
            0, 3, lambda i, a: a * 0.5, np.int64(1) + x.astype(np.int64)
        )

    with pytest.raises(
        irc.IrcTypeError,
        match=r"the body's carry is float64\[N\] but must be int64\[N\]; a carry keeps its dtype",
    ) as info:
        irc.trace(f, N)
    assert _line_of(f, "irc.fori_loop") in str(info.value)


def test_a_predicate_that_is_not_a_scalar_bool() -> None:
    def vector(x):
        return irc.cond(x > 0, lambda a: a, lambda a: -a, x)

    with pytest.raises(
        irc.IrcTypeError, match=r"pred must be a scalar bool .* got a bool\[N\] array"
    ) as info:
        irc.trace(vector, N)
    assert _line_of(vector, "irc.cond") in str(info.value)

    def number(x):
        return irc.while_loop(lambda a: a.sum(), lambda a: a, x)

    with pytest.raises(
        irc.IrcTypeError, match=r"cond_fun's result must be a scalar bool"
    ):
        irc.trace(number, N)


def test_scan_errors_name_what_to_pass() -> None:
    with pytest.raises(irc.IrcShapeError, match="pass length="):
        irc.trace(lambda x: irc.scan(lambda c, _: (c, c), x), N)

    def mismatched(x, y):
        return irc.scan(lambda c, v: (c, v), np.float32(0), (x, y))

    with pytest.raises(
        irc.IrcShapeError, match="every xs leaf must have the same leading dim"
    ):
        irc.trace(mismatched, N, irc.TensorSpec(("M",), "float32"))

    with pytest.raises(irc.IrcTypeError, match=r"must return a pair \(carry, y\)"):
        irc.trace(lambda x: irc.scan(lambda c, v: c, np.float32(0), x), N)


def test_traced_if_names_the_control_flow_functions() -> None:
    def bad(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(irc.TracingError) as info:
        irc.trace(bad, N)
    message = str(info.value)
    for name in ("np.where", "irc.cond", "irc.while_loop", "irc.fori_loop"):
        assert name in message
    assert re.search(r"test_control_flow.py:\d+", message)


# ----- gradients --------------------------------------------------------------


def test_rnn_gradient_matches_finite_differences() -> None:
    check_grad(rnn_loss, *rnn_specs("float64"), max_examples=5)


def test_rnn_gradient_against_numpy_at_several_lengths() -> None:
    """The gradient of the RNN's loss w.r.t. ``w`` by the reverse scan, against
    central differences of the NumPy reference at several sequence lengths."""
    gradient = irc.grad(rnn_loss, argnums=2)
    for length in (1, 3, 6):
        h0, xs, w, u = rnn_inputs(np.random.default_rng(length), length, np.float64)
        numeric = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            step = np.zeros_like(w)
            step[index] = 1e-6
            numeric[index] = (
                _reference_loss(h0, xs, w + step, u)
                - _reference_loss(h0, xs, w - step, u)
            ) / 2e-6
        got = gradient(h0, xs, w, u, backend="reference")
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-8)


def _reference_loss(
    h0: np.ndarray, xs: np.ndarray, w: np.ndarray, u: np.ndarray
) -> float:
    last, states = rnn_reference(h0, xs, w, u)
    return float((states * states).sum() + last.sum())


def test_cond_gradient_matches_finite_differences() -> None:
    def program(x, y):
        return irc.cond(
            x.sum() > 0, lambda a, b: np.sin(a) * b, lambda a, b: a * a + b, x, y
        )

    vector = irc.TensorSpec(("N",), "float64")
    check_grad(program, vector, vector, max_examples=10)


def test_fori_loop_and_reverse_scan_gradients() -> None:
    def fori(x, w):
        return irc.fori_loop(1, x.shape[0], lambda i, a: np.tanh(a * w + i), x)

    def reverse(xs):
        step = lambda c, x: (c * x + 1.0, c * c)  # noqa: E731
        return irc.scan(step, np.float64(0.5), xs, reverse=True)

    vector = irc.TensorSpec(("N",), "float64")
    check_grad(fori, vector, vector, max_examples=10)
    check_grad(reverse, vector, max_examples=10)


def test_an_unused_result_with_no_finite_derivative_gives_no_nan() -> None:
    """Found by the JAX oracle: a region result nobody reads has a zero
    cotangent, and is not differentiated at all (JAX's symbolic zeros),
    rather than by multiplying that zero by its derivative, NaN for
    ``arctan2`` at (0, 0). A scan's ys, a carry that reaches nothing
    differentiated, and a cond's results alike."""

    def through_scan(x):
        step = lambda c, _: (c * 0.5, np.arctan2(c, c))  # noqa: E731
        last, _ = irc.scan(step, x, x)
        return last.sum()

    def through_a_carry(x):
        # The second carry reaches neither the loss nor the first carry.
        step = lambda c, _: ((c[0] * 0.5, np.arctan2(c[1], c[1])), None)  # noqa: E731
        (last, _), _ = irc.scan(step, (x, x * 0.0), x)
        return last.sum()

    def through_cond(x):
        both = lambda a: (a * 2.0, np.arctan2(a, a))  # noqa: E731
        doubled, _ = irc.cond(x.sum() >= 0, both, both, x)
        return doubled.sum()

    x = np.zeros(3)
    for loss, gradient in (
        (through_scan, 0.125),
        (through_a_carry, 0.125),
        (through_cond, 2.0),
    ):
        np.testing.assert_array_equal(
            irc.grad(loss)(x, backend="reference"), np.full(3, gradient)
        )


def test_while_loop_gradient_is_refused_naming_the_alternatives() -> None:
    def program(x):
        return irc.while_loop(lambda a: a.sum() < 10, lambda a: a * 2, x).sum()

    with pytest.raises(
        irc.IrcError, match="irc.fori_loop with int or symbolic bounds"
    ) as info:
        irc.grad(program)(np.ones(3), backend="reference")
    assert "while loop" in str(info.value)


# ----- generated programs with control flow -------------------------------------

#: Steps that make programs mostly of region ops, with a few others to feed them.
CONTROL_FLOW_STEPS = (*CONTROL_FLOW_ACTIONS, "binary", "unary", "reduce", "guard")


def test_generated_programs_hold_every_region_op() -> None:
    seen: set[str] = set()

    @settings(max_examples=40, deadline=None, database=None)
    @given(programs(actions=CONTROL_FLOW_STEPS))
    def collect(module: Any) -> None:
        text = print_module(module)
        seen.update(
            op for op in ("graph.cond", "graph.for", "graph.while") if op in text
        )

    collect()
    assert seen == {"graph.cond", "graph.for", "graph.while"}


@pytest.mark.parametrize(
    "pipeline", ["canonicalize", "cse", "dce", "canonicalize,cse,dce"]
)
def test_graph_passes_keep_the_meaning_of_programs_with_control_flow(
    pipeline: str,
) -> None:
    check_pass(
        pipeline,
        programs(actions=CONTROL_FLOW_STEPS),
        max_examples=25,
        require_change=False,
    )


def test_autodiff_keeps_the_meaning_of_programs_with_control_flow() -> None:
    check_pass(
        "autodiff",
        differentiable_programs(actions=("cond", "for", "binary", "unary", "reduce")),
        max_examples=20,
        require_change=False,
    )


def test_gradients_of_generated_programs_with_control_flow() -> None:
    check_grad(
        differentiable_programs(actions=("cond", "for", "binary", "unary", "reduce")),
        max_examples=20,
    )


def test_writing_a_closed_over_array_says_to_return_it() -> None:
    def f(x):
        total = np.zeros_like(x)

        def body(i, acc):
            total[0] = acc[0]  # a write into the enclosing function's array
            return acc

        return irc.fori_loop(0, 2, body, x) + total

    with pytest.raises(irc.TracingError, match="return the new array instead") as info:
        irc.trace(f, N)
    assert _line_of(f, "total[0] = acc[0]") in str(info.value)


def test_a_dead_carry_whose_ys_are_dropped_too_is_removed() -> None:
    """The counter ``k[0]`` feeds only the ys, and nothing reads the ys: the
    carry, the ys and the ops computing them go together."""

    def total(x: Any) -> Any:
        (_, s), _ = irc.scan(
            lambda k, xi: ((k[0] + 1.0, k[1] + xi), k[0] * 2.0),
            (np.float32(0), np.float32(0)),
            x,
        )
        return s

    compiled = irc.compile(total, irc.TensorSpec(("T",), "float32"))
    graph_ir = compiled.ir("graph")
    assert graph_ir.count("carries (%") == 1 and "graph.mul" not in graph_ir
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(compiled(x, backend="reference"), x.sum())
