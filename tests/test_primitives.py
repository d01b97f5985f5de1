"""Every primitive and comparison, through every level.

``irc.primitives`` declares each primitive once; the graph op classes, the
tile-level ops, the interpreters, folding and the Triton backend read it.
Here each primitive, on each element kind it is defined on, is lowered from
a one-op graph program down to the triton level, and every level's module
(the last one as emitted Triton source, under Triton's interpreter) computes
what the primitive's NumPy function computes.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import irc
from irc.backend.triton.elementwise import COMPARISON_OPERATORS
from irc.dialects.elementwise import (
    COMPARISONS,
    REDUCTIONS,
    ComparisonPredicate,
    ReductionKind,
)
from irc.dialects.graph import BinaryOp, UnaryOp, elementwise_op
from irc.dtypes import BFLOAT16
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError
from irc.ir import default_context, parse_module
from irc.lowering.pipeline import LEVEL_NAMES, passes_after
from irc.primitives import Primitive, primitives
from irc.primitives import builtin as K
from irc.testing.interpreters import level_of, run_module

#: One element type per element kind (``irc.dtypes.DType.kind``).
ELEMENTS = {"f": ("f32", np.float32), "i": ("i32", np.int32), "b": ("i1", np.bool_)}
SIZE = 7


def cases() -> list[tuple[Primitive, str]]:
    return [
        (kind, element)
        for kind in primitives()
        for element in "fib"
        if element in kind.domain
    ]


SPELLING_FIELDS = {"f": "floats", "i": "integers", "b": "bools"}


def test_every_primitive_has_an_op_and_a_spelling_on_its_domain() -> None:
    """The graph op of each primitive, and a Triton spelling for each element
    kind it is defined on; comparisons and reductions have their rows."""
    assert set(COMPARISONS) == set(COMPARISON_OPERATORS) == set(ComparisonPredicate)
    assert set(REDUCTIONS) == set(ReductionKind)
    for reduction in REDUCTIONS.values():
        assert reduction.combine is None or reduction.combine.arity == 2
    for kind in primitives():
        op = elementwise_op(kind)
        assert op.KIND is kind and op.name == kind.op_name
        assert issubclass(op, UnaryOp if kind.arity == 1 else BinaryOp)
        for element in kind.domain:
            assert getattr(kind.triton, SPELLING_FIELDS[element]), (kind, element)


def program(kind: Primitive, element: str) -> str:
    tensor = f"!graph.tensor<[N], {element}>"
    args = ", ".join(f"%x{i}: {tensor}" for i in range(kind.arity))
    operands = ", ".join(f"%x{i}" for i in range(kind.arity))
    return (
        f"func.func @main({args}) -> {tensor} {{\n"
        f"  %y = {elementwise_op(kind).name} {operands} : {tensor}\n"
        f"  func.return %y : {tensor}\n"
        "}\n"
    )


def inputs(kind: Primitive, element: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sorted(primitives()).index(kind))
    numpy_type = ELEMENTS[element][1]
    if element == "b":
        return [rng.integers(0, 2, SIZE).astype(np.bool_) for _ in range(kind.arity)]
    if element == "i":
        # Positive operands: a negative integer power is an error, and a
        # zero divisor is a GPU's choice, not NumPy's.
        return [rng.integers(1, 5, SIZE).astype(numpy_type) for _ in range(kind.arity)]
    return [rng.uniform(0.25, 3.0, SIZE).astype(numpy_type) for _ in range(kind.arity)]


@pytest.mark.parametrize(("kind", "element"), cases())
def test_kind_computes_its_numpy_function_at_every_level(
    kind: Primitive, element: str
) -> None:
    module = parse_module(program(kind, ELEMENTS[element][0]))
    arrays = inputs(kind, element)
    with np.errstate(all="ignore"):
        expected = kind.numpy(*arrays)
    seen = []
    for lowering in [None, *passes_after("graph")]:
        if lowering is not None:
            lowering.apply(default_context(), module)
            module.verify()
        level = level_of(module).name
        if seen and seen[-1] == level:
            continue  # a clean-up pass (cse) at the same level
        seen.append(level)
        (result,) = run_module(module, arrays)
        np.testing.assert_allclose(
            result, expected, rtol=2e-6, err_msg=f"{kind} on {element} at {level}"
        )
        assert result.dtype == expected.dtype, level
    assert tuple(seen) == LEVEL_NAMES


@pytest.mark.parametrize("element", ["f", "i"])
@pytest.mark.parametrize("predicate", list(ComparisonPredicate))
def test_comparison_computes_its_numpy_function_at_every_level(
    predicate: ComparisonPredicate, element: str
) -> None:
    operand = f"!graph.tensor<[N], {ELEMENTS[element][0]}>"
    result = "!graph.tensor<[N], i1>"
    module = parse_module(
        f"func.func @main(%x0: {operand}, %x1: {operand}) -> {result} {{\n"
        f"  %y = graph.cmp {predicate}, %x0, %x1 : {operand}\n"
        f"  func.return %y : {result}\n"
        "}\n"
    )
    x, y = inputs(K.ADD, element)
    y[::2] = x[::2]  # ties, where eq, le and ge differ from ne, lt and gt
    expected = predicate.numpy(x, y)
    levels = []
    for lowering in [None, *passes_after("graph")]:
        if lowering is not None:
            lowering.apply(default_context(), module)
        levels.append(level_of(module).name)
        (computed,) = run_module(module, [x, y])
        np.testing.assert_array_equal(computed, expected, err_msg=levels[-1])
    assert set(levels) == set(LEVEL_NAMES)


# ----- the kinds of irc issue 10, at every float dtype -------------------------

#: Each kind with the interval its operands are drawn from and the special
#: values it must get right (zeros of both signs, infinities, NaN, the edges
#: of its domain, the points where an implementation switches formulas).
FLOAT_KINDS: dict[Primitive, tuple[tuple[float, float], list[float]]] = {
    K.CEIL: ((-4.0, 4.0), [-0.0, -0.5, 0.5, 2.0, -2.0]),
    K.TRUNC: ((-4.0, 4.0), [-0.0, -0.5, 0.5, 2.0, -2.0]),
    K.RINT: ((-4.0, 4.0), [-0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.4999]),
    K.LOG1P: ((-0.9, 4.0), [-1.0, -0.0, 1e-5, -1e-5, -2.0]),
    K.EXPM1: ((-4.0, 4.0), [-0.0, 1e-5, -1e-5, -40.0, 40.0]),
    K.LOG2: ((0.01, 9.0), [1.0, 2.0, 8.0, 0.0, -1.0]),
    K.LOG10: ((0.01, 9.0), [1.0, 10.0, 1000.0, 0.0, -1.0]),
    K.SINH: ((-4.0, 4.0), [-0.0, 1e-5, -21.0, 25.0, 100.0]),
    K.COSH: ((-4.0, 4.0), [-0.0, -21.0, 25.0, 100.0]),
    K.ATAN: ((-4.0, 4.0), [-0.0, 0.66, 0.67, 2.41, 2.42, -1e6]),
    K.ASIN: ((-1.0, 1.0), [-0.0, 1.0, -1.0, 0.999, 1.5]),
    K.ACOS: ((-1.0, 1.0), [-0.0, 1.0, -1.0, -0.999, 1.5]),
    K.ATAN2: ((-4.0, 4.0), [-0.0, 1.0, -1.0]),
}
NONFINITE = [np.inf, -np.inf, np.nan]
FLOAT_DTYPES = {
    "f16": (np.float16, 2e-3),
    "bf16": (BFLOAT16.numpy, 1.6e-2),
    "f32": (np.float32, 2e-6),
    "f64": (np.float64, 1e-14),
}
SIZES = (5, 40)


def special_inputs(kind: Primitive, numpy_type: Any, size: int) -> list[Any]:
    """``size`` values of the kind's interval with its special values first;
    for arctan2 every pair of special values and random ones."""
    (low, high), special = FLOAT_KINDS[kind]
    rng = np.random.default_rng(size)
    special = [*special, *NONFINITE]
    if kind.arity == 1:
        values = np.concatenate([special, rng.uniform(low, high, size)])
        return [values.astype(numpy_type)]
    operands = [*special, 0.0]
    pairs = [(a, b) for a in operands for b in operands]
    a, b = (np.array(side) for side in zip(*pairs, strict=True))
    randoms = rng.uniform(low, high, (2, size))
    return [
        np.concatenate([a, randoms[0]]).astype(numpy_type),
        np.concatenate([b, randoms[1]]).astype(numpy_type),
    ]


def assert_like_numpy(
    result: np.ndarray,
    expected: np.ndarray,
    rtol: float,
    where: str,
    atol: float | None = None,
) -> None:
    """Values within ``rtol`` (and ``atol``: by default the dtype's epsilon,
    for results near 0), NaN where NumPy has NaN, infinities exact, the same
    dtype and the same sign on zeros."""
    assert result.dtype == expected.dtype, where
    wide, want = result.astype(np.float64), expected.astype(np.float64)
    if atol is None:
        atol = 0.0
        if result.dtype.kind == "f" or result.dtype == BFLOAT16.numpy:
            wide_type = np.float32 if result.dtype.itemsize == 2 else result.dtype
            atol = max(float(np.finfo(wide_type).eps), rtol / 8)
    np.testing.assert_allclose(wide, want, rtol=rtol, atol=atol, err_msg=where)
    zeros = want == 0
    np.testing.assert_array_equal(
        np.signbit(wide[zeros]), np.signbit(want[zeros]), where
    )


@pytest.mark.parametrize("element", sorted(FLOAT_DTYPES))
@pytest.mark.parametrize("kind", list(FLOAT_KINDS))
def test_new_kinds_match_numpy_at_every_float_dtype_and_level(
    kind: Primitive, element: str
) -> None:
    numpy_type, rtol = FLOAT_DTYPES[element]
    module = parse_module(program(kind, element))
    cases = [special_inputs(kind, numpy_type, size) for size in SIZES]
    with np.errstate(all="ignore"):
        expected = [kind.numpy(*arrays) for arrays in cases]
    seen = []
    for lowering in [None, *passes_after("graph")]:
        if lowering is not None:
            lowering.apply(default_context(), module)
        level = level_of(module).name
        if seen and seen[-1] == level:
            continue
        seen.append(level)
        for arrays, want in zip(cases, expected, strict=True):
            with np.errstate(all="ignore"):
                (result,) = run_module(module, arrays)
            where = f"{kind} on {element} at {level}, N = {arrays[0].size}"
            assert_like_numpy(result, want, rtol, where)
    assert tuple(seen) == LEVEL_NAMES


# ----- the NumPy functions of those kinds, captured at every dtype --------------

#: Each function of one array with the interval its values are drawn from.
UFUNCS: dict[str, tuple[Any, tuple[float, float]]] = {
    "log1p": (np.log1p, (-0.9, 4.0)),
    "expm1": (np.expm1, (-4.0, 4.0)),
    "log2": (np.log2, (1.0, 9.0)),
    "log10": (np.log10, (1.0, 9.0)),
    "sinh": (np.sinh, (-4.0, 4.0)),
    "cosh": (np.cosh, (-4.0, 4.0)),
    "arctan": (np.arctan, (-4.0, 4.0)),
    "arcsin": (np.arcsin, (-1.0, 1.0)),
    "arccos": (np.arccos, (-1.0, 1.0)),
    "floor": (np.floor, (-4.0, 4.0)),
    "ceil": (np.ceil, (-4.0, 4.0)),
    "trunc": (np.trunc, (-4.0, 4.0)),
    "rint": (np.rint, (-4.0, 4.0)),
    "round": (np.round, (-4.0, 4.0)),
    "round_1": (lambda x: np.round(x, 1), (-40.0, 40.0)),
    "around_-1": (lambda x: np.around(x, -1), (-400.0, 400.0)),
    "method_round_2": (lambda x: x.round(2), (-4.0, 4.0)),
    "isnan": (np.isnan, (-4.0, 4.0)),
    "isinf": (np.isinf, (-4.0, 4.0)),
    "isfinite": (np.isfinite, (-4.0, 4.0)),
    "arctan2": (lambda x: np.arctan2(x, x[::-1]), (-4.0, 4.0)),
    "float_power": (lambda x: np.float_power(np.abs(x), x[::-1]), (-4.0, 4.0)),
    "float_power_scalar": (lambda x: np.float_power(x, 2), (-4.0, 4.0)),
}
CAPTURE_DTYPES = ("float16", "bfloat16", "float32", "float64", "int32", "int64", "bool")
#: Tolerances by the result's dtype.
RESULT_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}


def capture_inputs(name: str, element: str, size: int) -> np.ndarray:
    """``size`` values of ``element`` in the function's interval, the
    non-finite values first for floats."""
    low, high = UFUNCS[name][1]
    rng = np.random.default_rng(size)
    numpy_type = irc_dtype(element).numpy
    if element == "bool":
        return rng.integers(0, 2, size).astype(np.bool_)
    if numpy_type.kind == "i":
        return rng.integers(int(low), int(high) + 1, size).astype(numpy_type)
    values = np.concatenate([NONFINITE, rng.uniform(low, high, size)])[:size]
    return values.astype(numpy_type)


def numpy_accepts(function: Any, array: np.ndarray) -> bool:
    try:
        with np.errstate(all="ignore"):
            function(array)
    except TypeError:  # np.round(bools, 1), bool arithmetic
        return False
    return True


@pytest.mark.parametrize("element", CAPTURE_DTYPES)
@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_new_functions_capture_with_numpy_dtypes(name: str, element: str) -> None:
    """Compiled with a symbolic size, at two sizes, on both backends: the
    values and dtype NumPy gives, or a TracingError where NumPy refuses."""
    function = UFUNCS[name][0]
    spec = irc.TensorSpec(("N",), element)
    if not numpy_accepts(function, capture_inputs(name, element, 5)):
        with pytest.raises(IrcError):
            irc.compile(function, spec)
        return
    compiled = irc.compile(function, spec)
    for size in (5, 9):
        x = capture_inputs(name, element, size)
        with np.errstate(all="ignore"):
            expected = np.asarray(function(x))
        for backend in ("reference", "interpret"):
            with np.errstate(all="ignore"):
                result = np.asarray(compiled(x, backend=backend))
            rtol = RESULT_RTOL.get(irc_dtype(expected.dtype).name, 0.0)
            where = f"{name} of {element} on {backend}, N = {size}"
            assert_like_numpy(result, expected, rtol, where)


def test_float_predicates_are_comparisons_that_fuse() -> None:
    """isnan/isinf/isfinite are bool-valued, where a kind keeps its operand's
    type: comparisons, one kernel with the arithmetic around them."""
    spec = irc.TensorSpec(("N",), "float32")
    compiled = irc.compile(
        lambda x: np.isnan(x) | np.isinf(x * 2) | ~np.isfinite(x), spec
    )
    text = compiled.ir("graph")
    assert "graph.cmp ne, %x, %x" in text
    assert "graph.cmp eq" in text and "graph.cmp lt" in text
    assert compiled.num_kernels == 1


@functools.cache
def triton_level(kind: Primitive) -> Any:
    """The one-op float64 program of ``kind``, lowered to the triton level
    (run as emitted Triton source under Triton's interpreter)."""
    module = parse_module(program(kind, "f64"))
    for lowering in passes_after("graph"):
        lowering.apply(default_context(), module)
    assert level_of(module).name == LEVEL_NAMES[-1]
    return module


ANY_FLOAT64 = hnp.arrays(np.float64, st.integers(1, 24), elements=st.floats(width=64))


@pytest.mark.parametrize("kind", list(FLOAT_KINDS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_new_kinds_match_numpy_on_any_float64(
    kind: Primitive, data: st.DataObject
) -> None:
    """The emitted kernel of each new kind agrees with NumPy on every
    float64 (subnormals, huge values, both zeros, infinities, NaN) to 2 ulp
    (rtol 1e-14 leaves room, no absolute slack), and exactly on NaN,
    infinities and zeros."""
    arrays = [data.draw(ANY_FLOAT64, label="x")]
    if kind.arity == 2:
        arrays.append(
            data.draw(
                hnp.arrays(np.float64, arrays[0].shape, elements=st.floats(width=64)),
                label="y",
            )
        )
    with np.errstate(all="ignore"):
        expected = kind.numpy(*arrays)
        (result,) = run_module(triton_level(kind), arrays)
    assert_like_numpy(result, expected, 1e-14, f"{kind} of {arrays}", atol=0.0)
