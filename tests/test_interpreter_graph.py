"""The NumPy reference interpreter of the graph dialect, and symbol binding.

Each test parses a small module and compares the interpreter with NumPy at
several bindings of its symbols, 1 included (the size where broadcasting and
empty-looking edge cases hide).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, f32, i64
from xdsl.parser import Parser

from irc.dialects.graph import TensorType
from irc.dialects.sym import GuardOp
from irc.errors import BindingError, ExecutionError, IrcError
from irc.interpreters.graph import find_function, run_graph
from irc.ir import default_context
from irc.runtime.binding import (
    bind_arguments,
    bind_symbols,
    check_dtypes,
    check_guards,
)
from irc.shapes import parse_expr

BF16 = np.dtype(ml_dtypes.bfloat16)
SIZES = (1, 4)
RNG = np.random.default_rng(0)


CTX = default_context()


def parse(text: str) -> ModuleOp:
    module = Parser(CTX, text).parse_module()
    module.verify()
    return module


def t(dims: str, element: str) -> str:
    """The text of a ``!graph.tensor`` type."""
    return f"!graph.tensor<[{dims}], {element}>"


def main(args: dict[str, str], body: str, result: str) -> ModuleOp:
    """``@main(args) -> result`` whose body defines ``%r``."""
    signature = ", ".join(f"%{name}: {type_}" for name, type_ in args.items())
    return parse(
        f"func.func @main({signature}) -> {result} {{\n{body}\n"
        f"  func.return %r : {result}\n}}"
    )


def run1(module: ModuleOp, *inputs: np.ndarray) -> np.ndarray:
    (output,) = run_graph(module, inputs)
    return output


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, same shape, same values (NaNs in the same places)."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray)
    np.testing.assert_array_equal(actual, expected, strict=True)


def floats(
    shape: tuple[int, ...],
    dtype: object = np.float32,
    low: float = -2.0,
    high: float = 2.0,
) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(dtype)


def ints(
    shape: tuple[int, ...], dtype: object = np.int32, low: int = -9, high: int = 10
) -> np.ndarray:
    return RNG.integers(low, high, shape).astype(dtype)


# --------------------------------------------------------------------------
# Elementwise ops
# --------------------------------------------------------------------------

_erf = np.vectorize(math.erf)

UNARY_FLOAT: dict[str, tuple[Callable[[np.ndarray], np.ndarray], bool]] = {
    # op: (float64 reference, needs positive inputs)
    "neg": (np.negative, False),
    "abs": (np.abs, False),
    "exp": (np.exp, False),
    "log": (np.log, True),
    "sqrt": (np.sqrt, True),
    "rsqrt": (lambda x: 1 / np.sqrt(x), True),
    "tanh": (np.tanh, False),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), False),
    "erf": (_erf, False),
    "sin": (np.sin, False),
    "cos": (np.cos, False),
    "floor": (np.floor, False),
}
TOLERANCE = {"f32": 2e-6, "f16": 1e-3, "bf16": 8e-3}
NUMPY = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": BF16}


@pytest.mark.parametrize("element", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("op", sorted(UNARY_FLOAT))
def test_unary_float_ops_match_float64_reference(op: str, element: str) -> None:
    reference, positive = UNARY_FLOAT[op]
    type_ = t("N, 3", element)
    module = main({"x": type_}, f"  %r = graph.{op} %x : {type_}", type_)
    for n in SIZES:
        low = 0.25 if positive else -3.0
        x = floats((n, 3), NUMPY[element], low, 3.0)
        y = run1(module, x)
        assert y.dtype == NUMPY[element] and y.shape == (n, 3)
        expected = reference(x.astype(np.float64))
        tolerance = TOLERANCE[element]
        np.testing.assert_allclose(
            y.astype(np.float64), expected, rtol=tolerance, atol=tolerance
        )


def test_single_numpy_functions_match_numpy_exactly_in_bfloat16() -> None:
    type_ = t("N", "bf16")
    body = f"  %e = graph.exp %x : {type_}\n  %r = graph.add %e, %x : {type_}"
    module = main({"x": type_}, body, type_)
    x = floats((5,), BF16)
    assert_same(run1(module, x), np.exp(x) + x)


def test_composite_functions_round_once_in_16_bit() -> None:
    type_ = t("N", "f16")
    module = main({"x": type_}, f"  %r = graph.rsqrt %x : {type_}", type_)
    x = floats((64,), np.float16, 0.1, 9.0)
    expected = (1 / np.sqrt(x.astype(np.float32))).astype(np.float16)
    assert_same(run1(module, x), expected)


@pytest.mark.parametrize(("op", "element"), [("neg", "i32"), ("abs", "i64")])
def test_unary_integer_ops(op: str, element: str) -> None:
    type_ = t("N", element)
    module = main({"x": type_}, f"  %r = graph.{op} %x : {type_}", type_)
    x = ints((6,), np.int32 if element == "i32" else np.int64)
    assert_same(run1(module, x), np.negative(x) if op == "neg" else np.abs(x))


@pytest.mark.parametrize(("element", "dtype"), [("i1", np.bool_), ("i32", np.int32)])
def test_not_is_logical_on_bool_and_bitwise_on_ints(element: str, dtype) -> None:
    type_ = t("N", element)
    module = main({"x": type_}, f"  %r = graph.not %x : {type_}", type_)
    x = ints((7,), dtype, 0, 2) if dtype is np.bool_ else ints((7,), dtype)
    assert_same(run1(module, x), np.invert(x))


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.true_divide,
    "floordiv": np.floor_divide,
    "rem": np.remainder,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("element", ["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_float_ops_match_numpy(op: str, element: str) -> None:
    dtype = {"f64": np.dtype(np.float64), **NUMPY}[element]
    type_ = t("N, 2", element)
    module = main(
        {"x": type_, "y": type_}, f"  %r = graph.{op} %x, %y : {type_}", type_
    )
    for n in SIZES:
        x = floats((n, 2), dtype, 0.5 if op == "pow" else -4.0, 4.0)
        y = floats((n, 2), dtype, -3.0, 3.0)
        with np.errstate(all="ignore"):
            assert_same(run1(module, x, y), BINARY[op](x, y))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("op", sorted(set(BINARY) - {"div"}))
def test_binary_integer_ops_match_numpy(op: str, dtype) -> None:
    element = "i32" if dtype is np.int32 else "i64"
    type_ = t("N", element)
    module = main(
        {"x": type_, "y": type_}, f"  %r = graph.{op} %x, %y : {type_}", type_
    )
    x = ints((40,), dtype)
    y = ints((40,), dtype, 0, 4) if op == "pow" else ints((40,), dtype)
    if op in ("floordiv", "rem"):
        y[y == 0] = 3  # a zero divisor is tested separately
    assert_same(run1(module, x, y), BINARY[op](x, y))


def test_integer_division_by_zero_gives_numpy_results() -> None:
    type_ = t("N", "i32")
    body = (
        f"  %q = graph.floordiv %x, %y : {type_}\n"
        f"  %m = graph.rem %x, %y : {type_}\n"
        f"  %r = graph.add %q, %m : {type_}"
    )
    module = main({"x": type_, "y": type_}, body, type_)
    x, y = np.array([7, -7], np.int32), np.zeros(2, np.int32)
    assert_same(run1(module, x, y), np.zeros(2, np.int32))


def test_floordiv_and_rem_follow_python_signs() -> None:
    type_ = t("N", "f32")
    body = (
        f"  %q = graph.floordiv %x, %y : {type_}\n"
        f"  %m = graph.rem %x, %y : {type_}\n"
        f"  %p = graph.mul %q, %y : {type_}\n"
        f"  %r = graph.add %p, %m : {type_}"
    )
    module = main({"x": type_, "y": type_}, body, type_)
    x = np.array([7.0, -7.0, 7.0, -7.0], np.float32)
    y = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    assert_same(run1(module, x, y), x)  # (x // y) * y + x % y == x, as in Python


def test_maximum_and_minimum_propagate_nan() -> None:
    type_ = t("N", "f32")
    body = (
        f"  %a = graph.maximum %x, %y : {type_}\n"
        f"  %b = graph.minimum %y, %x : {type_}\n"
        f"  %r = graph.add %a, %b : {type_}"
    )
    module = main({"x": type_, "y": type_}, body, type_)
    x = np.array([np.nan, 1.0, 2.0], np.float32)
    y = np.array([0.0, np.nan, 3.0], np.float32)
    assert_same(run1(module, x, y), np.array([np.nan, np.nan, 5.0], np.float32))


def test_integer_to_negative_power_is_an_irc_error() -> None:
    type_ = t("N", "i64")
    module = main({"x": type_, "y": type_}, f"  %r = graph.pow %x, %y : {type_}", type_)
    x, y = np.array([2, 3], np.int64), np.array([1, -2], np.int64)
    with pytest.raises(ExecutionError, match=r"graph.pow in @main .*negative power"):
        run1(module, x, y)


@pytest.mark.parametrize(
    ("op", "function"),
    [("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)],
)
@pytest.mark.parametrize(("element", "dtype"), [("i1", np.bool_), ("i64", np.int64)])
def test_logical_and_bitwise_ops(op: str, function, element: str, dtype) -> None:
    type_ = t("N", element)
    module = main(
        {"x": type_, "y": type_}, f"  %r = graph.{op} %x, %y : {type_}", type_
    )
    low, high = (0, 2) if dtype is np.bool_ else (-50, 50)
    x, y = ints((9,), dtype, low, high), ints((9,), dtype, low, high)
    assert_same(run1(module, x, y), function(x, y))


COMPARISONS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@pytest.mark.parametrize("element", ["f32", "i32"])
@pytest.mark.parametrize("predicate", sorted(COMPARISONS))
def test_cmp_predicates(predicate: str, element: str) -> None:
    type_, result = t("N", element), t("N", "i1")
    # Generic syntax: the custom parser of graph.cmp calls a deprecated xDSL
    # API, which the test settings turn into an error (see the report).
    body = (
        f'  %r = "graph.cmp"(%x, %y) <{{predicate = #elementwise<predicate {predicate}>}}>'
        f" : ({type_}, {type_}) -> {result}"
    )
    module = main({"x": type_, "y": type_}, body, result)
    if element == "f32":
        x = np.array([1.0, 2.0, 3.0, np.nan, 1.0], np.float32)
        y = np.array([1.0, 3.0, 2.0, 1.0, np.nan], np.float32)
    else:
        x, y = ints((20,), np.int32, -2, 3), ints((20,), np.int32, -2, 3)
    assert_same(run1(module, x, y), COMPARISONS[predicate](x, y))


def test_select_is_numpy_where() -> None:
    type_ = t("N, M", "bf16")
    body = f"  %r = graph.select %c, %x, %y : {t('N, M', 'i1')}, {type_}"
    module = main({"c": t("N, M", "i1"), "x": type_, "y": type_}, body, type_)
    for n in SIZES:
        c = ints((n, 3), np.bool_, 0, 2)
        x, y = floats((n, 3), BF16), floats((n, 3), BF16)
        assert_same(run1(module, c, x, y), np.where(c, x, y))


@pytest.mark.parametrize(
    ("source", "target", "values"),
    [
        ("f32", "i32", np.array([-1.7, -0.5, 0.5, 2.9], np.float32)),
        ("f32", "i1", np.array([0.0, -0.0, 0.1, np.nan], np.float32)),
        ("i1", "f32", np.array([True, False])),
        ("i64", "bf16", np.array([1, 257, -3, 1 << 20], np.int64)),
        ("bf16", "f32", np.array([1.5, -2.25], BF16)),
        ("f32", "f16", np.array([1e-8, 70000.0, 1.0], np.float32)),
        ("bf16", "i64", np.array([3.75, -3.75], BF16)),
    ],
)
def test_cast_is_numpy_astype(source: str, target: str, values: np.ndarray) -> None:
    module = main(
        {"x": t("N", source)},
        f"  %r = graph.cast %x : {t('N', source)} -> {t('N', target)}",
        t("N", target),
    )
    target_dtype = {
        "i32": np.int32,
        "i1": np.bool_,
        "f32": np.float32,
        "bf16": BF16,
        "f16": np.float16,
        "i64": np.int64,
    }[target]
    with np.errstate(all="ignore"):
        assert_same(run1(module, values), values.astype(target_dtype))


# --------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("literal", "element", "value", "dtype"),
    [
        ("5.000000e-01 : f32", "f32", 0.5, np.float32),
        ("-3 : i32", "i32", -3, np.int32),
        ("true", "i1", True, np.bool_),
        ("1.250000e+00 : bf16", "bf16", 1.25, BF16),
    ],
)
def test_splat_constant_fills_a_symbolic_shape(
    literal: str, element: str, value: object, dtype
) -> None:
    module = main(
        {"x": t("N, 2", element)},
        f"  %r = graph.constant {literal} -> {t('N, 2', element)}",
        t("N, 2", element),
    )
    for n in SIZES:
        x = np.zeros((n, 2), dtype)
        assert_same(run1(module, x), np.full((n, 2), value, dtype))


def test_dense_constant() -> None:
    type_ = t("2, 2", "i64")
    module = main(
        {},
        f"  %r = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64> -> {type_}",
        type_,
    )
    assert_same(run1(module), np.array([[1, 2], [3, 4]], np.int64))


def test_rank_0_results_are_0_d_arrays() -> None:
    type_ = t("", "f32")
    module = main({}, f"  %r = graph.constant 2.000000e+00 : f32 -> {type_}", type_)
    result = run1(module)
    assert type(result) is np.ndarray and result.shape == () and result == 2.0


@pytest.mark.parametrize("axis", [0, 1])
def test_iota_counts_along_one_axis(axis: int) -> None:
    type_ = t("N, 3", "i32")
    # Generic syntax: the custom form of graph.iota does not parse (see report).
    iota = f'  %r = "graph.iota"() <{{axis = {axis} : i64}}> : () -> {type_}'
    module = main({"x": type_}, iota, type_)
    for n in SIZES:
        expected = np.indices((n, 3), np.int32)[axis]
        assert_same(run1(module, np.zeros((n, 3), np.int32)), expected)


@pytest.mark.parametrize(("element", "dtype"), [("f32", np.float32), ("i64", np.int64)])
def test_dim_evaluates_a_symbolic_expression(element: str, dtype) -> None:
    type_ = t("", element)
    module = main(
        {"x": t("N, D", "f32")}, f"  %r = graph.dim N * D + 1 : {type_}", type_
    )
    for n in SIZES:
        assert_same(
            run1(module, np.zeros((n, 3), np.float32)), np.array(n * 3 + 1, dtype)
        )


# --------------------------------------------------------------------------
# Shape ops
# --------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["N", "1, N"])
def test_broadcast_adds_and_stretches_dims(source: str) -> None:
    target = t("M, N", "f32")
    body = (
        f"  %b = graph.broadcast %x : {t(source, 'f32')} -> {target}\n"
        f"  %r = graph.add %b, %y : {target}"
    )
    module = main({"x": t(source, "f32"), "y": target}, body, target)
    for n in SIZES:
        for m in SIZES:
            x = floats((n,) if source == "N" else (1, n))
            y = floats((m, n))
            assert_same(run1(module, x, y), x + y)


@pytest.mark.parametrize("target", ["N, 2, 3", "N * 6", "2, N * 3"])
def test_reshape(target: str) -> None:
    body = f"  %r = graph.reshape %x : {t('N, 6', 'f32')} -> {t(target, 'f32')}"
    module = main({"x": t("N, 6", "f32")}, body, t(target, "f32"))
    for n in SIZES:
        x = floats((n, 6))
        shape = tuple(parse_expr(d).evaluate({"N": n}) for d in target.split(", "))
        assert_same(run1(module, x), x.reshape(shape))


REDUCTIONS = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 2)])
@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_reduce_float32(kind: str, axes: tuple[int, ...], keepdims: bool) -> None:
    shape = ("N", "3", "M")
    out = [
        ("1" if i in axes else d)
        for i, d in enumerate(shape)
        if keepdims or i not in axes
    ]
    source, result = t(", ".join(shape), "f32"), t(", ".join(out), "f32")
    body = f"  %r = graph.reduce {kind} %x {list(axes)} : {source} -> {result}"
    module = main({"x": source}, body, result)
    for n in SIZES:
        x = floats((n, 3, 2), np.float32, 0.5, 1.5)
        expected = REDUCTIONS[kind](x, axis=axes, keepdims=keepdims)
        np.testing.assert_allclose(run1(module, x), expected, rtol=1e-6)
        assert run1(module, x).dtype == np.float32


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_reduce_int32_keeps_int32_and_wraps(kind: str) -> None:
    source, result = t("N", "i32"), t("", "i32")
    module = main(
        {"x": source},
        f"  %r = graph.reduce {kind} %x [0] : {source} -> {result}",
        result,
    )
    x = np.array([2**30, 2**30, 3, -5], np.int32)
    expected = REDUCTIONS[kind](
        x, **({} if kind in ("max", "min") else {"dtype": np.int32})
    )
    assert_same(run1(module, x), expected)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_16_bit_sums_accumulate_in_float32(dtype) -> None:
    element = "f16" if dtype is np.float16 else "bf16"
    source, result = t("N, K", element), t("N", element)
    module = main(
        {"x": source}, f"  %r = graph.reduce sum %x [1] : {source} -> {result}", result
    )
    x = np.full((2, 4096), 1.0, dtype)
    expected = x.astype(np.float32).sum(axis=1).astype(dtype)
    assert_same(run1(module, x), expected)  # 4096, where bf16 steps would stall at 256


def test_max_over_an_empty_axis_is_an_irc_error() -> None:
    source, result = t("N, 0", "f32"), t("N", "f32")
    module = main(
        {"x": source}, f"  %r = graph.reduce max %x [1] : {source} -> {result}", result
    )
    with pytest.raises(ExecutionError, match=r"graph.reduce in @main reduces axis 1"):
        run1(module, np.zeros((2, 0), np.float32))


@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_takes_the_first_maximum(keepdims: bool) -> None:
    result = t("N, 1" if keepdims else "N", "i64")
    module = main(
        {"x": t("N, K", "f32")},
        f"  %r = graph.argmax %x [1] : {t('N, K', 'f32')} -> {result}",
        result,
    )
    x = np.array([[1, 3, 3], [5, 0, 5], [np.nan, 9, np.nan]], np.float32)
    assert_same(
        run1(module, x), np.argmax(x, axis=1, keepdims=keepdims).astype(np.int64)
    )


def test_argmax_of_a_vector_is_rank_0() -> None:
    module = main(
        {"x": t("N", "i32")},
        f"  %r = graph.argmax %x [0] : {t('N', 'i32')} -> {t('', 'i64')}",
        t("", "i64"),
    )
    for n in SIZES:
        x = ints((n,))
        assert_same(run1(module, x), np.array(np.argmax(x), np.int64))


def test_transpose() -> None:
    source, result = t("N, 2, M", "f32"), t("M, N, 2", "f32")
    module = main(
        {"x": source},
        f"  %r = graph.transpose %x [2, 0, 1] : {source} -> {result}",
        result,
    )
    for n in SIZES:
        x = floats((n, 2, 3))
        assert_same(run1(module, x), np.transpose(x, (2, 0, 1)))


@pytest.mark.parametrize(
    ("offsets", "strides", "result", "index"),
    [
        ("[0, 1]", "[1, 2]", "N, 2", lambda n: np.s_[:, 1:5:2]),
        ("[N - 1, 4]", "[-1, -1]", "N, 5", lambda n: np.s_[::-1, ::-1]),
        ("[N - 1, 0]", "[1, 3]", "1, 2", lambda n: np.s_[n - 1 :, ::3]),
    ],
)
def test_slice_with_symbolic_offsets(offsets, strides, result, index) -> None:
    source = t("N, 5", "f32")
    body = f"  %r = graph.slice %x {offsets} {strides} : {source} -> {t(result, 'f32')}"
    module = main({"x": source}, body, t(result, "f32"))
    for n in SIZES:
        x = floats((n, 5))
        assert_same(run1(module, x), x[index(n)])


def test_slice_outside_the_input_is_an_irc_error() -> None:
    # The verifier cannot compare M with N, so the bound is checked at run time.
    body = f"  %r = graph.slice %x [0] [1] : {t('N', 'f32')} -> {t('M', 'f32')}"
    module = main({"x": t("N", "f32"), "y": t("M", "f32")}, body, t("M", "f32"))
    x, y = floats((5,)), floats((3,))
    assert_same(run1(module, x, y), x[:3])
    with pytest.raises(
        ExecutionError, match=r"reads indices 0 to 5 of axis 0, outside \[0, 5\)"
    ):
        run1(module, x, floats((6,)))


@pytest.mark.parametrize(
    ("offsets", "strides", "source", "index"),
    [
        ("[0, 1]", "[1, 2]", "N, 2", lambda n: np.s_[:, 1:5:2]),
        ("[N - 1, 4]", "[-1, -1]", "N, 5", lambda n: np.s_[::-1, ::-1]),
        ("[N - 1, 0]", "[1, 3]", "1, 2", lambda n: np.s_[n - 1 :, ::3]),
        ("[0, 2]", "[1, 1]", "0, 3", lambda n: np.s_[0:0, 2:5]),
    ],
)
def test_insert_slice_with_symbolic_offsets(offsets, strides, source, index) -> None:
    dest = t("N, 5", "f32")
    body = (
        f"  %r = graph.insert_slice %v into %x {offsets} {strides} : "
        f"{t(source, 'f32')} -> {dest}"
    )
    module = main({"x": dest, "v": t(source, "f32")}, body, dest)
    for n in SIZES:
        x = floats((n, 5))
        expected = x.copy()
        v = floats(expected[index(n)].shape)
        expected[index(n)] = v
        assert_same(run1(module, x, v), expected)


def test_insert_slice_outside_the_destination_is_an_irc_error() -> None:
    dest, source = t("N", "i32"), t("M", "i32")
    body = f"  %r = graph.insert_slice %v into %x [1] [1] : {source} -> {dest}"
    module = main({"x": dest, "v": source}, body, dest)
    x, v = ints((5,)), ints((4,))
    expected = x.copy()
    expected[1:] = v
    assert_same(run1(module, x, v), expected)
    with pytest.raises(
        ExecutionError, match=r"writes indices 1 to 5 of axis 0, outside \[0, 5\)"
    ):
        run1(module, x, ints((5,)))


def test_a_negative_result_dim_is_an_irc_error() -> None:
    source, result = t("N", "f32"), t("N - 3", "f32")
    body = f"  %r = graph.slice %x [0] [1] : {source} -> {result}"
    module = main({"x": source}, body, result)
    x = floats((4,))
    assert_same(run1(module, x), x[:1])
    with pytest.raises(ExecutionError, match=r"result dim N - 3 is -1 under"):
        run1(module, floats((2,)))


def test_concat() -> None:
    a, b, out = t("N, 2", "i32"), t("M, 2", "i32"), t("N + M, 2", "i32")
    body = f"  %r = graph.concat %x, %y [0] : ({a}, {b}) -> {out}"
    module = main({"x": a, "y": b}, body, out)
    for n in SIZES:
        x, y = ints((n, 2)), ints((3, 2))
        assert_same(run1(module, x, y), np.concatenate([x, y]))


@pytest.mark.parametrize(
    ("axis", "indices_dims", "result"), [(0, "K", "K, 3"), (1, "2, 2", "N, 2, 2")]
)
def test_take(axis: int, indices_dims: str, result: str) -> None:
    table, indices = t("N, 3", "f32"), t(indices_dims, "i64")
    body = f"  %r = graph.take %x, %i [{axis}] : ({table}, {indices}) -> {t(result, 'f32')}"
    module = main({"x": table, "i": indices}, body, t(result, "f32"))
    for n in SIZES:
        x = floats((n, 3))
        shape = (5,) if indices_dims == "K" else (2, 2)
        i = RNG.integers(0, x.shape[axis], shape).astype(np.int64)
        assert_same(run1(module, x, i), np.take(x, i, axis=axis))


@pytest.mark.parametrize("bad", [4, -1])
def test_take_with_an_index_out_of_range_is_an_irc_error(bad: int) -> None:
    table, indices = t("N", "f32"), t("K", "i32")
    body = f"  %r = graph.take %x, %i [0] : ({table}, {indices}) -> {t('K', 'f32')}"
    module = main({"x": table, "i": indices}, body, t("K", "f32"))
    with pytest.raises(
        ExecutionError,
        match=rf"graph.take in @main: index {bad} at position \(1,\) is out of "
        r"range for axis 0 of size 4",
    ):
        run1(module, floats((4,)), np.array([0, bad], np.int32))


def test_matmul_float32() -> None:
    a, b, c = t("N, K", "f32"), t("K, M", "f32"), t("N, M", "f32")
    module = main(
        {"a": a, "b": b}, f"  %r = graph.matmul %a, %b : ({a}, {b}) -> {c}", c
    )
    for n in SIZES:
        x, y = floats((n, 3)), floats((3, 2))
        np.testing.assert_allclose(run1(module, x, y), x @ y, rtol=1e-6)


def test_batched_matmul_broadcasts_batch_dims() -> None:
    a, b, c = t("B, N, K", "i32"), t("1, K, M", "i32"), t("B, N, M", "i32")
    module = main(
        {"a": a, "b": b}, f"  %r = graph.matmul %a, %b : ({a}, {b}) -> {c}", c
    )
    x, y = ints((2, 3, 4)), ints((1, 4, 5))
    assert_same(run1(module, x, y), x @ y)


def test_bfloat16_matmul_accumulates_in_float32() -> None:
    a, b, c = t("N, K", "bf16"), t("K, M", "bf16"), t("N, M", "bf16")
    module = main(
        {"a": a, "b": b}, f"  %r = graph.matmul %a, %b : ({a}, {b}) -> {c}", c
    )
    x, y = floats((3, 64), BF16), floats((64, 2), BF16)
    expected = (x.astype(np.float32) @ y.astype(np.float32)).astype(BF16)
    assert_same(run1(module, x, y), expected)


# --------------------------------------------------------------------------
# Functions, calls, outputs
# --------------------------------------------------------------------------

# func.call needs the argument types to equal the callee's, symbols included.
CALLS = f"""
func.func @main(%x: {t("N", "f32")}, %y: {t("M", "f32")}) -> {t("", "i64")} {{
  %h = func.call @helper(%y) : ({t("M", "f32")}) -> {t("", "i64")}
  %n = graph.dim N : {t("", "i64")}
  %r = graph.add %h, %n : {t("", "i64")}
  func.return %r : {t("", "i64")}
}}
func.func private @helper(%a: {t("M", "f32")}) -> {t("", "i64")} {{
  %m = graph.dim M * 10 : {t("", "i64")}
  func.return %m : {t("", "i64")}
}}
"""


def test_calls_bind_the_callee_symbols_and_restore_the_caller_ones() -> None:
    module = parse(CALLS)
    for n in SIZES:
        result = run1(module, floats((n,)), floats((3,)))
        assert_same(result, np.array(30 + n, np.int64))


def test_function_selection() -> None:
    module = parse(CALLS)
    assert find_function(module).sym_name.data == "main"
    assert_same(run_graph(module, [floats((2,))], "helper")[0], np.array(20, np.int64))
    with pytest.raises(
        IrcError, match=r"no function @nope to run \(functions: @main, @helper\)"
    ):
        run_graph(module, [floats((2,))], "nope")


def test_a_symbol_no_argument_binds_is_reported_at_the_op() -> None:
    type_ = t("K", "f32")
    module = main({}, f"  %r = graph.constant 1.000000e+00 : f32 -> {type_}", type_)
    with pytest.raises(ExecutionError, match=r"graph.constant in @main: .*\bK\b"):
        run1(module)


def test_ops_of_other_levels_are_an_irc_error() -> None:
    module = Parser(
        CTX,
        "func.func @main() -> i64 {\n  %c = arith.constant 1 : i64\n"
        "  func.return %c : i64\n}",
    ).parse_module()
    with pytest.raises(IrcError, match=r"arith.constant.*graph and func ops only"):
        run_graph(module, [])


def test_calling_a_declaration_is_an_irc_error() -> None:
    type_ = t("N", "f32")
    module = parse(
        f"func.func @main(%x: {type_}) -> {type_} {{\n"
        f"  %r = func.call @external(%x) : ({type_}) -> {type_}\n"
        f"  func.return %r : {type_}\n}}\n"
        f"func.func private @external({type_}) -> {type_}"
    )
    with pytest.raises(ExecutionError, match="@external is declared without a body"):
        run1(module, floats((2,)))


def test_outputs_are_fresh_arrays() -> None:
    type_ = t("N", "f32")
    module = main({"x": type_}, f"  %r = graph.reshape %x : {type_} -> {type_}", type_)
    x = floats((3,))
    y = run1(module, x)
    assert not np.shares_memory(x, y) and y.flags.writeable


# --------------------------------------------------------------------------
# Binding symbols
# --------------------------------------------------------------------------

TWO_ARGS = main(
    {"x": t("N, 4", "f32"), "y": t("N", "f32")},
    f"  %r = graph.reduce sum %x [1] : {t('N, 4', 'f32')} -> {t('N', 'f32')}",
    t("N", "f32"),
)


def test_symbol_mismatch_across_arguments() -> None:
    with pytest.raises(
        BindingError,
        match=r"argument 'y' axis 0: symbol N is 7 here but 5 from argument 'x' axis 0",
    ):
        run_graph(TWO_ARGS, [floats((5, 4)), floats((7,))])


def test_wrong_rank() -> None:
    with pytest.raises(
        BindingError,
        match=r"argument 'y' has rank 2 \(shape \(5, 1\)\) but the function expects "
        r"rank 1: \[N\]",
    ):
        run_graph(TWO_ARGS, [floats((5, 4)), floats((5, 1))])


def test_wrong_static_dim() -> None:
    with pytest.raises(
        BindingError, match=r"argument 'x' axis 1: expected size 4, got 3"
    ):
        run_graph(TWO_ARGS, [floats((5, 3)), floats((5,))])


def test_wrong_dtype() -> None:
    with pytest.raises(
        BindingError,
        match=r"argument 'x' has dtype float64 but the function expects float32",
    ):
        run_graph(TWO_ARGS, [floats((5, 4), np.float64), floats((5,))])


def test_unsupported_dtype() -> None:
    with pytest.raises(
        BindingError, match="argument 'x': dtype .*uint8.* not supported"
    ):
        run_graph(TWO_ARGS, [np.zeros((5, 4), np.uint8), floats((5,))])


def test_wrong_argument_count_and_kind() -> None:
    with pytest.raises(
        BindingError, match=r"takes 2 argument\(s\) \(x, y\) but was called with 1"
    ):
        run_graph(TWO_ARGS, [floats((5, 4))])
    with pytest.raises(
        BindingError, match=r"argument 'y' is a list; pass a NumPy array"
    ):
        run_graph(TWO_ARGS, [floats((5, 4)), [1.0] * 5])


def test_unnamed_arguments_are_called_arg_n() -> None:
    module = parse(
        f"func.func @main(%0: {t('N', 'f32')}) -> {t('N', 'f32')} {{\n"
        f"  func.return %0 : {t('N', 'f32')}\n}}"
    )
    with pytest.raises(BindingError, match="argument 'arg0' has dtype int32"):
        run_graph(module, [ints((3,))])


def test_expression_dims_are_checked_after_binding() -> None:
    x, y = TensorType(["N", "2 * N"], f32), TensorType(["N + 1"], f32)
    # y comes first: its expression is checked once x has bound N.
    assert bind_symbols([y, x], [(4,), (3, 6)], ["y", "x"]) == {"N": 3}
    with pytest.raises(
        BindingError,
        match=r"argument 'y' axis 0: dim N \+ 1 is 4 with N = 3 \(from argument "
        r"'x' axis 0\), but the array has size 5",
    ):
        bind_symbols([y, x], [(5,), (3, 6)], ["y", "x"])


def test_a_symbol_only_inside_expressions_cannot_be_bound() -> None:
    with pytest.raises(BindingError, match=r"uses symbol N, which is not the whole"):
        bind_symbols([TensorType(["2 * N"], f32)], [(6,)], ["x"])


def test_bind_arguments_and_check_dtypes_accept_any_dtype_spelling() -> None:
    check_dtypes([TensorType(["N"], i64)], ["int64"], ["x"])
    func = find_function(TWO_ARGS)
    assert bind_arguments(func, [floats((2, 4)), floats((2,))]) == {"N": 2}


# --------------------------------------------------------------------------
# Guards
# --------------------------------------------------------------------------

GUARDED = parse(
    f"""
func.func @main(%x: {t("N, D", "f32")}) -> {t("N, D", "f32")} {{
  %r = graph.exp %x : {t("N, D", "f32")}
  sym.guard N * D mod 4 == 0, "rows are packed by 4" loc("model.py":12:5)
  sym.guard D <= 8
  func.return %r : {t("N, D", "f32")}
}}
"""
)


def test_guards_that_hold_let_the_function_run() -> None:
    x = floats((2, 2))
    np.testing.assert_allclose(run1(GUARDED, x), np.exp(x), rtol=1e-6)


def test_a_broken_guard_names_the_fact_values_reason_and_location() -> None:
    fact = str(next(op for op in GUARDED.walk() if isinstance(op, GuardOp)).fact)
    with pytest.raises(
        BindingError,
        match=rf"guard `{re.escape(fact)}` does not hold with D = 3, N = 1: rows are "
        r"packed by 4 \(sym.guard in @main at model.py:12:5\)",
    ):
        run1(GUARDED, floats((1, 3)))
    with pytest.raises(
        BindingError, match=r"guard `D <= 8` does not hold with D = 12 \("
    ):
        run1(GUARDED, floats((1, 12)))


def test_guards_with_unbound_symbols_are_reported() -> None:
    guards = [op for op in GUARDED.walk() if isinstance(op, GuardOp)]
    with pytest.raises(
        BindingError, match="uses symbol D, which no argument's shape binds"
    ):
        check_guards(guards, {"N": 4})


def test_a_symbol_cannot_be_zero() -> None:
    f32 = t("N", "f32")
    module = main({"x": f32}, f"  %r = graph.neg %x : {f32}", f32)
    with pytest.raises(BindingError, match="symbol N would be 0"):
        run1(module, np.zeros(0, np.float32))
