"""The NumPy reference interpreter of the loop dialect.

Hand-written loop-level modules, shaped like what ``tile`` produces, run
against NumPy and against the graph interpreter at several bindings of
their symbols (1 and sizes that are not powers of two included, where
masks and partial tiles matter). Elementwise kinds must match the graph
level bit for bit: the loop interpreter reuses its functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter

from irc.dialects import loop
from irc.dialects.elementwise import ComparisonPredicate
from irc.errors import BindingError, ExecutionError
from irc.interpreters.graph import find_function, run_graph
from irc.interpreters.loop import (
    LoopTileFunctions,
    ProgramContext,
    run_loop,
    set_program_context,
)
from irc.ir import parse_module
from irc.primitives import Primitive, primitives
from irc.primitives.declaration import as_primitive
from irc.testing.interpreters import entry_signature, level_of, run_module

# Arithmetic on NaN, infinities and zero divisors must not warn.
pytestmark = pytest.mark.filterwarnings("error")

BF16 = np.dtype(ml_dtypes.bfloat16)
NUMPY = {
    "f16": np.dtype(np.float16),
    "bf16": BF16,
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
}
RNG = np.random.default_rng(0)


def parse(text: str) -> ModuleOp:
    module = parse_module(text)
    module.verify()
    return module


def t(dims: str, element: str) -> str:
    """The text of a ``!graph.tensor`` type."""
    return f"!graph.tensor<[{dims}], {element}>"


def tile(dims: str, element: str) -> str:
    """The text of a ``!loop.tile`` type."""
    return f"!loop.tile<[{dims}], {element}>"


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype, same shape, same values (NaNs in the same places; 16-bit
    floats compared exactly through float64, where NumPy knows their NaNs)."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
    if actual.dtype.kind in "fV":  # bfloat16 is a "V" (void) kind to NumPy
        actual, expected = actual.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(actual, expected, strict=True)


def values(element: str, size: int, *, positive: bool = False) -> np.ndarray:
    """``size`` test values of ``element``: special floats (NaN, infinities,
    signed zeros) first, then random ones; small ints, zeros included."""
    dtype = NUMPY[element]
    if element == "i1":
        return RNG.integers(0, 2, size).astype(dtype)
    if dtype.kind == "i":
        low = 0 if positive else -9
        return RNG.integers(low, 10, size).astype(dtype)
    special = [] if positive else [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5]
    random = RNG.uniform(0.25 if positive else -4.0, 4.0, size)
    return np.concatenate([special, random])[:size].astype(dtype)


# --------------------------------------------------------------------------
# A pointwise kernel over [N], for the elementwise kinds
# --------------------------------------------------------------------------


def pointwise(
    inputs: Sequence[str], result: str, compute: str, scalar_last: bool = False
) -> ModuleOp:
    """``@main`` over ``[N]`` inputs of the given elements: one kernel whose
    programs read a masked 8-lane tile ``%v0, %v1, ...`` of each input,
    run ``compute`` (which defines ``%r`` of element ``result``) and write
    it. With ``scalar_last`` the last input is a ``[1]`` tensor read as a
    scalar ``%v<k>``, so that the compute broadcasts a scalar."""
    count = len(inputs)
    arg_types = [
        t("1" if scalar_last and i == count - 1 else "N", e)
        for i, e in enumerate(inputs)
    ]
    args = ", ".join(f"%x{i}: {ty}" for i, ty in enumerate(arg_types))
    block_args = ", ".join(f"%a{i}: {ty}" for i, ty in enumerate(arg_types))
    reads = []
    for i, (element, ty) in enumerate(zip(inputs, arg_types)):
        if scalar_last and i == count - 1:
            reads.append(f"    %v{i} = loop.read %a{i}[%c0] : {ty}[i64] -> {element}")
        else:
            reads.append(
                f"    %v{i} = loop.read %a{i}[%i] mask %m : {ty}"
                f"[{tile('8', 'i64')}] mask {tile('8', 'i1')} -> {tile('8', element)}"
            )
    out = t("N", result)
    return parse(
        f"""
func.func @main({args}) -> {out} {{
  %0 = loop.kernel @k pointwise ({", ".join(f"%x{i}" for i in range(count))}) grid [(N + 7) floordiv 8] tiles {{B = 8}} symbols [N] reason "test" : ({", ".join(arg_types)}) -> ({out}) {{
  ^bb0({block_args}):
    %p = tile.program_id 0 : i64
    %lanes = tile.range "B" : {tile("8", "i64")}
    %c0 = tile.constant 0 : i64
    %c8 = tile.constant 8 : i64
    %base = tile.binary mul %p, %c8 : (i64, i64) -> i64
    %i = tile.binary add %lanes, %base : ({tile("8", "i64")}, i64) -> {tile("8", "i64")}
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : ({tile("8", "i64")}, i64) -> {tile("8", "i1")}
{chr(10).join(reads)}
    {compute}
    loop.write %r to 0[%i] mask %m : {tile("8", result)}[{tile("8", "i64")}] mask {tile("8", "i1")}
  }}
  func.return %0 : {out}
}}"""
    )


def graph_op(inputs: Sequence[str], result: str, body: str) -> ModuleOp:
    """``@main`` over ``[N]`` inputs whose one graph op ``body`` defines
    ``%r`` from ``%x0, %x1, ...``."""
    args = ", ".join(f"%x{i}: {t('N', e)}" for i, e in enumerate(inputs))
    out = t("N", result)
    return parse(
        f"func.func @main({args}) -> {out} {{\n  {body}\n  func.return %r : {out}\n}}"
    )


SIZES = (1, 5, 8, 13)

FLOATS = ("f16", "bf16", "f32", "f64")
UNARY_FLOAT = sorted(k for k in primitives(1) if "f" in k.domain)
UNARY_CASES = (
    [(kind, e) for kind in UNARY_FLOAT for e in FLOATS]
    + [(kind, e) for kind in ("neg", "abs", "not") for e in ("i32", "i64")]
    + [("not", "i1")]
)


@pytest.mark.parametrize(("kind", "element"), UNARY_CASES)
def test_unary_kinds_match_the_graph_interpreter(
    kind: Primitive | str, element: str
) -> None:
    tiled = pointwise(
        [element], element, f"%r = tile.unary {kind} %v0 : {tile('8', element)}"
    )
    reference = graph_op(
        [element], element, f"%r = {as_primitive(kind).op_name} %x0 : {t('N', element)}"
    )
    for n in SIZES:
        x = values(element, n)
        assert_same(run_loop(tiled, [x])[0], run_graph(reference, [x])[0])


BINARY_FLOAT = sorted(k for k in primitives(2) if "f" in k.domain)
BINARY_INT = sorted(k for k in primitives(2) if "i" in k.domain)
BINARY_CASES = (
    [(kind, e) for kind in BINARY_FLOAT for e in FLOATS]
    + [(kind, e) for kind in BINARY_INT for e in ("i32", "i64")]
    + [(kind, "i1") for kind in ("and", "or", "xor")]
)


@pytest.mark.parametrize("scalar_rhs", [False, True], ids=["tile", "scalar"])
@pytest.mark.parametrize(("kind", "element"), BINARY_CASES)
def test_binary_kinds_match_the_graph_interpreter(
    kind: Primitive | str, element: str, scalar_rhs: bool
) -> None:
    rhs = element if scalar_rhs else tile("8", element)
    tiled = pointwise(
        [element, element],
        element,
        f"%r = tile.binary {kind} %v0, %v1 : ({tile('8', element)}, {rhs}) -> "
        f"{tile('8', element)}",
        scalar_last=scalar_rhs,
    )
    name = as_primitive(kind).op_name
    reference = graph_op(
        [element, element], element, f"%r = {name} %x0, %x1 : {t('N', element)}"
    )
    for n in SIZES:
        x = values(element, n, positive=str(kind) == "pow")
        y = values(element, 1 if scalar_rhs else n, positive=str(kind) == "pow")
        expected = run_graph(reference, [x, np.broadcast_to(y, (n,)).copy()])[0]
        assert_same(run_loop(tiled, [x, y])[0], expected)


@pytest.mark.parametrize("exponent", [0.5, 2.0, -1.0, 3.0])
def test_pow_by_a_scalar_takes_no_numpy_shortcut(exponent: float) -> None:
    """NumPy computes ``x ** 0.5`` with a scalar exponent as ``sqrt`` (and
    ``-1`` as ``reciprocal``), which rounds differently from the general
    ``pow`` the graph level runs on whole arrays."""
    tiled = pointwise(
        ["f32", "f32"],
        "f32",
        f"%r = tile.binary pow %v0, %v1 : ({tile('8', 'f32')}, f32) -> "
        f"{tile('8', 'f32')}",
        scalar_last=True,
    )
    reference = graph_op(
        ["f32", "f32"], "f32", f"%r = graph.pow %x0, %x1 : {t('N', 'f32')}"
    )
    x = RNG.uniform(0.1, 10.0, 13).astype(np.float32)
    y = np.array([exponent], np.float32)
    expected = run_graph(reference, [x, np.full(13, exponent, np.float32)])[0]
    assert_same(run_loop(tiled, [x, y])[0], expected)


def test_integer_to_a_negative_power_is_an_irc_error() -> None:
    tiled = pointwise(
        ["i64", "i64"],
        "i64",
        f"%r = tile.binary pow %v0, %v1 : ({tile('8', 'i64')}, {tile('8', 'i64')})"
        f" -> {tile('8', 'i64')}",
    )
    x, y = np.array([2, 3], np.int64), np.array([1, -2], np.int64)
    with pytest.raises(ExecutionError, match=r"tile.binary in @main .*negative power"):
        run_loop(tiled, [x, y])


@pytest.mark.parametrize("element", ["f32", "bf16", "i32", "i64"])
@pytest.mark.parametrize("kind", sorted(ComparisonPredicate))
def test_compare_kinds_match_the_graph_interpreter(kind: str, element: str) -> None:
    tiled = pointwise(
        [element, element],
        "i1",
        f"%r = tile.cmp {kind} %v0, %v1 : ({tile('8', element)}, "
        f"{tile('8', element)}) -> {tile('8', 'i1')}",
    )
    reference = graph_op(
        [element, element],
        "i1",
        f'%r = "graph.cmp"(%x0, %x1) <{{predicate = #elementwise<predicate {kind}>}}> : '
        f"({t('N', element)}, {t('N', element)}) -> {t('N', 'i1')}",
    )
    for n in SIZES:
        x = values(element, n)
        y = x.copy()
        y[::2] = values(element, n)[::2]  # equal and unequal lanes
        assert_same(run_loop(tiled, [x, y])[0], run_graph(reference, [x, y])[0])


def test_select_with_a_scalar_branch() -> None:
    tiled = pointwise(
        ["i1", "bf16", "bf16"],
        "bf16",
        f"%r = tile.select %v0, %v1, %v2 : ({tile('8', 'i1')}, {tile('8', 'bf16')}, "
        f"bf16) -> {tile('8', 'bf16')}",
        scalar_last=True,
    )
    for n in SIZES:
        c, x, y = values("i1", n), values("bf16", n), values("bf16", 1)
        assert_same(run_loop(tiled, [c, x, y])[0], np.where(c, x, y[0]))


CASTS = [
    ("f32", "i32", [-1.7, -0.5, 0.5, 2.9, np.nan, 3e9]),
    ("f32", "i1", [0.0, -0.0, 0.1, np.nan]),
    ("i1", "f32", [True, False]),
    ("i64", "bf16", [1, 257, -3, 1 << 20]),
    ("bf16", "f32", [1.5, -2.25, np.inf]),
    ("f32", "bf16", [1.0 + 2**-9, 3.14159, -1e38, 1e39]),
    ("f32", "f16", [1e-8, 70000.0, 1.0]),
    ("bf16", "i64", [3.75, -3.75]),
    ("i64", "i32", [2**31, -(2**31) - 1, 7]),
    ("f16", "f64", [0.1, -65504.0]),
]


@pytest.mark.parametrize(("source", "target", "inputs"), CASTS)
def test_cast_is_the_graph_cast(source: str, target: str, inputs: list) -> None:
    tiled = pointwise(
        [source],
        target,
        f"%r = tile.cast %v0 : {tile('8', source)} -> {tile('8', target)}",
    )
    reference = graph_op(
        [source], target, f"%r = graph.cast %x0 : {t('N', source)} -> {t('N', target)}"
    )
    with np.errstate(all="ignore"):
        x = np.array(inputs).astype(NUMPY[source])
    expected = run_graph(reference, [x])[0]
    assert_same(run_loop(tiled, [x])[0], expected)
    with np.errstate(all="ignore"):
        assert_same(expected, x.astype(NUMPY[target]))


# --------------------------------------------------------------------------
# Reductions and dots on one 2-D tile
# --------------------------------------------------------------------------


def one_tile(element: str, result: str, compute: str, axis: int) -> ModuleOp:
    """``@main`` reading a whole ``[4, 8]`` tensor as one tile ``%v`` and
    writing ``%r`` (``[8]`` for ``axis`` 0, ``[4]`` for axis 1)."""
    kept = "8" if axis == 0 else "4"
    source, out = t("4, 8", element), t(kept, result)
    return parse(
        f"""
func.func @main(%x: {source}) -> {out} {{
  %0 = loop.kernel @k reduction (%x) grid [1] tiles {{R = 4, C = 8}} symbols [] reason "" : ({source}) -> ({out}) {{
  ^bb0(%a: {source}):
    %rows = tile.range "R" : {tile("4, 1", "i64")}
    %cols = tile.range "C" : {tile("1, 8", "i64")}
    %v = loop.read %a[%rows, %cols] : {source}[{tile("4, 1", "i64")}, {tile("1, 8", "i64")}] -> {tile("4, 8", element)}
    {compute}
    %k = tile.range "{"C" if axis == 0 else "R"}" : {tile(kept, "i64")}
    loop.write %r to 0[%k] : {tile(kept, result)}[{tile(kept, "i64")}]
  }}
  func.return %0 : {out}
}}"""
    )


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("element", ["f32", "f16", "bf16", "i32"])
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_reduce_matches_the_graph_interpreter(
    kind: str, element: str, axis: int
) -> None:
    kept = "8" if axis == 0 else "4"
    module = one_tile(
        element,
        element,
        f"%r = tile.reduce {kind} %v {axis} : {tile('4, 8', element)} -> "
        f"{tile(kept, element)}",
        axis,
    )
    reference = parse(
        f"func.func @main(%x: {t('4, 8', element)}) -> {t(kept, element)} {{\n"
        f"  %r = graph.reduce {kind} %x [{axis}] : {t('4, 8', element)} -> "
        f"{t(kept, element)}\n  func.return %r : {t(kept, element)}\n}}"
    )
    x = values(element, 32).reshape(4, 8)
    if element != "i32":
        x[0, :] = RNG.uniform(-2, 2, 8)  # a row and column without NaN
        x[:, 0] = RNG.uniform(-2, 2, 4)
    assert_same(run_loop(module, [x])[0], run_graph(reference, [x])[0])


@pytest.mark.parametrize("index", ["i32", "i64"])
@pytest.mark.parametrize("axis", [0, 1])
def test_argmax_takes_the_first_maximum(axis: int, index: str) -> None:
    kept = "8" if axis == 0 else "4"
    module = one_tile(
        "f32",
        index,
        f"%r = tile.reduce argmax %v {axis} : {tile('4, 8', 'f32')} -> "
        f"{tile(kept, index)}",
        axis,
    )
    x = RNG.integers(0, 3, (4, 8)).astype(np.float32)  # many ties
    x[1, 1] = np.nan  # NaN is the maximum, as in np.argmax
    expected = np.argmax(x, axis=axis).astype(NUMPY[index])
    assert_same(run_loop(module, [x])[0], expected)


@pytest.mark.parametrize(
    ("element", "acc"), [("f32", "f32"), ("bf16", "f32"), ("i32", "i64")]
)
def test_dot_accumulates_in_the_accumulator_type(element: str, acc: str) -> None:
    """``acc + a @ b`` with ``a`` the [4, 8] input and ``b`` its [8, 4]
    transpose, read through swapped index tiles."""
    source, out = t("4, 8", element), t("4, 4", acc)
    index = {"r": tile("4, 1", "i64"), "c": tile("1, 8", "i64")}
    module = parse(
        f"""
func.func @main(%x: {source}) -> {out} {{
  %0 = loop.kernel @k matmul (%x) grid [1] tiles {{R = 4, C = 8}} symbols [] reason "" : ({source}) -> ({out}) {{
  ^bb0(%a: {source}):
    %rows = tile.range "R" : {index["r"]}
    %cols = tile.range "C" : {index["c"]}
    %krow = tile.range "C" : {tile("8, 1", "i64")}
    %ncol = tile.range "R" : {tile("1, 4", "i64")}
    %lhs = loop.read %a[%rows, %cols] : {source}[{index["r"]}, {index["c"]}] -> {tile("4, 8", element)}
    %rhs = loop.read %a[%ncol, %krow] : {source}[{tile("1, 4", "i64")}, {tile("8, 1", "i64")}] -> {tile("8, 4", element)}
    %one = tile.constant 1 : {acc}
    %init = tile.splat %one : {acc} -> {tile("4, 4", acc)}
    %r = tile.dot %lhs, %rhs, %init : ({tile("4, 8", element)}, {tile("8, 4", element)}, {tile("4, 4", acc)}) -> {tile("4, 4", acc)}
    loop.write %r to 0[%rows, %ncol] : {tile("4, 4", acc)}[{index["r"]}, {tile("1, 4", "i64")}]
  }}
  func.return %0 : {out}
}}"""
    )
    x = values(element, 32, positive=True).reshape(4, 8)
    wide = x.astype(NUMPY[acc])
    expected = 1 + wide @ wide.T
    (result,) = run_loop(module, [x])
    if acc == "i64":
        assert_same(result, expected)
    else:
        np.testing.assert_allclose(result, expected, rtol=1e-6, strict=True)


# --------------------------------------------------------------------------
# Whole kernels, as `tile` makes them
# --------------------------------------------------------------------------

SOFTMAX = """
func.func @softmax(%x: !graph.tensor<[N, 128], f32>) -> !graph.tensor<[N, 128], f32> {
  %0 = loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 128} symbols [N] reason "rows fit a tile" : (!graph.tensor<[N, 128], f32>) -> (!graph.tensor<[N, 128], f32>) {
  ^bb0(%a: !graph.tensor<[N, 128], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "BLOCK_R" : !loop.tile<[128], i64>
    %c128 = tile.size 128 : i64
    %m = tile.cmp lt %r, %c128 : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
    %v = loop.read %a[%row, %r] mask %m : !graph.tensor<[N, 128], f32>[i64, !loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    %ninf = tile.constant 0xFF800000 : f32
    %vm = tile.select %m, %v, %ninf : (!loop.tile<[128], i1>, !loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
    %mx = tile.reduce max %vm 0 : !loop.tile<[128], f32> -> f32
    %d = tile.binary sub %v, %mx : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
    %e = tile.unary exp %d : !loop.tile<[128], f32>
    %zero = tile.constant 0.000000e+00 : f32
    %em = tile.select %m, %e, %zero : (!loop.tile<[128], i1>, !loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
    %s = tile.reduce sum %em 0 : !loop.tile<[128], f32> -> f32
    %y = tile.binary div %e, %s : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
    loop.write %y to 0[%row, %r] mask %m : !loop.tile<[128], f32>[i64, !loop.tile<[128], i64>] mask !loop.tile<[128], i1>
  }
  func.return %0 : !graph.tensor<[N, 128], f32>
}
"""


@pytest.mark.parametrize("n", [1, 3, 7])
def test_persistent_softmax(n: int) -> None:
    module = parse(SOFTMAX)
    x = RNG.normal(0, 3, (n, 128)).astype(np.float32)
    (y,) = run_loop(module, [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert y.dtype == np.float32 and y.shape == (n, 128)
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


ROW_SUM = """
func.func @rowsum(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N], f32> {
  %0 = loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK = 4} symbols [D, N] reason "looped" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "BLOCK" : !loop.tile<[4], i64>
    %d = tile.size D : i64
    %c0 = tile.constant 0 : i64
    %c4 = tile.constant 4 : i64
    %z = tile.constant 0.0 : f32
    %init = tile.splat %z : f32 -> !loop.tile<[4], f32>
    %acc = scf.for %k = %c0 to %d step %c4 iter_args(%s = %init) -> (!loop.tile<[4], f32>) : i64 {
      %col = tile.binary add %r, %k : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i64>
      %m = tile.cmp lt %col, %d : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i1>
      %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[4], i64>] mask !loop.tile<[4], i1> -> !loop.tile<[4], f32>
      %n = tile.binary add %s, %v : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
      scf.yield %n : !loop.tile<[4], f32>
    }
    %sum = tile.reduce sum %acc 0 : !loop.tile<[4], f32> -> f32
    loop.write %sum to 0[%row] : f32[i64]
  }
  func.return %0 : !graph.tensor<[N], f32>
}
"""


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 5), (2, 8), (4, 13), (1, 3)])
def test_looped_row_sum_over_a_symbolic_dim(n: int, d: int) -> None:
    x = RNG.normal(0, 1, (n, d)).astype(np.float32)
    (y,) = run_loop(parse(ROW_SUM), [x])
    assert y.dtype == np.float32 and y.shape == (n,)
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_a_loop_that_runs_zero_times_yields_its_initial_values() -> None:
    text = ROW_SUM.replace("%c0 to %d", "%d to %c0")
    x = RNG.normal(0, 1, (3, 5)).astype(np.float32)
    assert_same(run_loop(parse(text), [x])[0], np.zeros(3, np.float32))


FLAT = """
func.func @scale(%x: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[D], f32>) -> !graph.tensor<[N, D], f32> {
  %0 = loop.kernel @k0 pointwise (%x, %b) grid [(D*N + 15) floordiv 16] tiles {BLOCK = 16} symbols [D, N] reason "flattened" : (!graph.tensor<[N, D], f32>, !graph.tensor<[D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>, %bias: !graph.tensor<[D], f32>):
    %p = tile.program_id 0 : i32
    %r = tile.range "BLOCK" : !loop.tile<[16], i32>
    %c16 = tile.constant 16 : i32
    %base = tile.binary mul %p, %c16 : (i32, i32) -> i32
    %offs = tile.binary add %base, %r : (i32, !loop.tile<[16], i32>) -> !loop.tile<[16], i32>
    %numel = tile.size D*N : i32
    %m = tile.cmp lt %offs, %numel : (!loop.tile<[16], i32>, i32) -> !loop.tile<[16], i1>
    %d = tile.size D : i32
    %row = tile.binary floordiv %offs, %d : (!loop.tile<[16], i32>, i32) -> !loop.tile<[16], i32>
    %col = tile.binary rem %offs, %d : (!loop.tile<[16], i32>, i32) -> !loop.tile<[16], i32>
    %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[!loop.tile<[16], i32>, !loop.tile<[16], i32>] mask !loop.tile<[16], i1> -> !loop.tile<[16], f32>
    %w = loop.read %bias[%col] mask %m : !graph.tensor<[D], f32>[!loop.tile<[16], i32>] mask !loop.tile<[16], i1> -> !loop.tile<[16], f32>
    %s = tile.unary sigmoid %v : !loop.tile<[16], f32>
    %y = tile.binary mul %s, %w : (!loop.tile<[16], f32>, !loop.tile<[16], f32>) -> !loop.tile<[16], f32>
    loop.write %y to 0[%row, %col] mask %m : !loop.tile<[16], f32>[!loop.tile<[16], i32>, !loop.tile<[16], i32>] mask !loop.tile<[16], i1>
  }
  func.return %0 : !graph.tensor<[N, D], f32>
}
"""

FLAT_GRAPH = """
func.func @scale(%x: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %s = graph.sigmoid %x : !graph.tensor<[N, D], f32>
  %r = graph.mul %s, %b : !graph.tensor<[N, D], f32>
  func.return %r : !graph.tensor<[N, D], f32>
}
"""


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 5), (7, 3), (2, 16), (5, 7)])
def test_flattened_pointwise_with_i32_div_mod_indices(n: int, d: int) -> None:
    x = RNG.normal(0, 2, (n, d)).astype(np.float32)
    b = RNG.normal(0, 2, d).astype(np.float32)
    (y,) = run_loop(parse(FLAT), [x, b])
    expected = run_graph(parse(FLAT_GRAPH), [x, np.broadcast_to(b, (n, d)).copy()])
    assert_same(y, expected[0])


def matmul_module(element: str) -> ModuleOp:
    """Batched ``[B, M, K] x [B, K, N]`` with 4x4 output tiles (grid axis 0
    over the tiles of M*N, axis 1 over the batch) and a K loop of 8."""
    a, b, c = t("B, M, K", element), t("B, K, N", element), t("B, M, N", element)
    col, row = tile("4, 1", "i64"), tile("1, 4", "i64")
    kcol, krow = tile("8, 1", "i64"), tile("1, 8", "i64")
    acc = tile("4, 4", "f32")
    if element == "f32":
        result, cast = "%acc", ""
    else:
        result, cast = (
            "%out",
            f"%out = tile.cast %acc : {acc} -> {tile('4, 4', element)}",
        )
    return parse(
        f"""
func.func @bmm(%x: {a}, %y: {b}) -> {c} {{
  %0 = loop.kernel @k0 matmul (%x, %y) grid [((M + 3) floordiv 4) * ((N + 3) floordiv 4), B] tiles {{BM = 4, BN = 4, BK = 8}} symbols [B, K, M, N] reason "" : ({a}, {b}) -> ({c}) {{
  ^bb0(%lhs: {a}, %rhs: {b}):
    %pid = tile.program_id 0 : i64
    %batch = tile.program_id 1 : i64
    %m = tile.size M : i64
    %n = tile.size N : i64
    %k = tile.size K : i64
    %ntiles = tile.size (N + 3) floordiv 4 : i64
    %c0 = tile.constant 0 : i64
    %c4 = tile.constant 4 : i64
    %c8 = tile.constant 8 : i64
    %pm = tile.binary floordiv %pid, %ntiles : (i64, i64) -> i64
    %pn = tile.binary rem %pid, %ntiles : (i64, i64) -> i64
    %bm = tile.binary mul %pm, %c4 : (i64, i64) -> i64
    %bn = tile.binary mul %pn, %c4 : (i64, i64) -> i64
    %ar = tile.range "BM" : {col}
    %ac = tile.range "BN" : {row}
    %rm = tile.binary add %ar, %bm : ({col}, i64) -> {col}
    %rn = tile.binary add %ac, %bn : ({row}, i64) -> {row}
    %mm = tile.cmp lt %rm, %m : ({col}, i64) -> {tile("4, 1", "i1")}
    %mn = tile.cmp lt %rn, %n : ({row}, i64) -> {tile("1, 4", "i1")}
    %kr = tile.range "BK" : {krow}
    %kc = tile.range "BK" : {kcol}
    %f0 = tile.constant 0.0 : f32
    %zeros = tile.splat %f0 : f32 -> {acc}
    %acc = scf.for %k0 = %c0 to %k step %c8 iter_args(%sum = %zeros) -> ({acc}) : i64 {{
      %ka = tile.binary add %kr, %k0 : ({krow}, i64) -> {krow}
      %kb = tile.binary add %kc, %k0 : ({kcol}, i64) -> {kcol}
      %ina = tile.cmp lt %ka, %k : ({krow}, i64) -> {tile("1, 8", "i1")}
      %inb = tile.cmp lt %kb, %k : ({kcol}, i64) -> {tile("8, 1", "i1")}
      %ma = tile.binary and %mm, %ina : ({tile("4, 1", "i1")}, {tile("1, 8", "i1")}) -> {tile("4, 8", "i1")}
      %mb = tile.binary and %inb, %mn : ({tile("8, 1", "i1")}, {tile("1, 4", "i1")}) -> {tile("8, 4", "i1")}
      %ta = loop.read %lhs[%batch, %rm, %ka] mask %ma : {a}[i64, {col}, {krow}] mask {tile("4, 8", "i1")} -> {tile("4, 8", element)}
      %tb = loop.read %rhs[%batch, %kb, %rn] mask %mb : {b}[i64, {kcol}, {row}] mask {tile("8, 4", "i1")} -> {tile("8, 4", element)}
      %next = tile.dot %ta, %tb, %sum : ({tile("4, 8", element)}, {tile("8, 4", element)}, {acc}) -> {acc}
      scf.yield %next : {acc}
    }}
    {cast}
    %mo = tile.binary and %mm, %mn : ({tile("4, 1", "i1")}, {tile("1, 4", "i1")}) -> {tile("4, 4", "i1")}
    loop.write {result} to 0[%batch, %rm, %rn] mask %mo : {tile("4, 4", element)}[i64, {col}, {row}] mask {tile("4, 4", "i1")}
  }}
  func.return %0 : {c}
}}"""
    )


@pytest.mark.parametrize("element", ["f32", "bf16"])
@pytest.mark.parametrize(
    ("b", "m", "k", "n"), [(1, 1, 1, 1), (2, 5, 9, 3), (1, 4, 8, 4), (3, 7, 17, 6)]
)
def test_batched_matmul_with_a_k_loop(
    element: str, b: int, m: int, k: int, n: int
) -> None:
    dtype = NUMPY[element]
    x = RNG.uniform(-1, 1, (b, m, k)).astype(dtype)
    y = RNG.uniform(-1, 1, (b, k, n)).astype(dtype)
    (z,) = run_loop(matmul_module(element), [x, y])
    expected = (x.astype(np.float32) @ y.astype(np.float32)).astype(dtype)
    assert z.dtype == dtype and z.shape == (b, m, n)
    tolerance = 1e-6 if element == "f32" else 1e-2
    np.testing.assert_allclose(
        z.astype(np.float32),
        expected.astype(np.float32),
        rtol=tolerance,
        atol=tolerance,
    )


GRID_3D = """
func.func @ids(%x: !graph.tensor<[A, B, C], i64>) -> !graph.tensor<[A, B, C], i64> {
  %0 = loop.kernel @k0 pointwise (%x) grid [A, B, C] tiles {} symbols [] reason "" : (!graph.tensor<[A, B, C], i64>) -> (!graph.tensor<[A, B, C], i64>) {
  ^bb0(%a: !graph.tensor<[A, B, C], i64>):
    %p0 = tile.program_id 0 : i64
    %p1 = tile.program_id 1 : i64
    %p2 = tile.program_id 2 : i64
    %c10 = tile.constant 10 : i64
    %c100 = tile.constant 100 : i64
    %h = tile.binary mul %p0, %c100 : (i64, i64) -> i64
    %t = tile.binary mul %p1, %c10 : (i64, i64) -> i64
    %ht = tile.binary add %h, %t : (i64, i64) -> i64
    %id = tile.binary add %ht, %p2 : (i64, i64) -> i64
    %v = loop.read %a[%p0, %p1, %p2] : !graph.tensor<[A, B, C], i64>[i64, i64, i64] -> i64
    %r = tile.binary add %id, %v : (i64, i64) -> i64
    loop.write %r to 0[%p0, %p1, %p2] : i64[i64, i64, i64]
  }
  func.return %0 : !graph.tensor<[A, B, C], i64>
}
"""


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 5), (5, 1, 2)])
def test_program_ids_on_a_3d_grid(shape: tuple[int, int, int]) -> None:
    x = RNG.integers(0, 1000, shape).astype(np.int64) * 1000
    expected = x + np.fromfunction(
        lambda a, b, c: 100 * a + 10 * b + c, shape, dtype=np.int64
    )
    assert_same(run_loop(parse(GRID_3D), [x])[0], expected)


# --------------------------------------------------------------------------
# Masks, bounds and coverage
# --------------------------------------------------------------------------


def shifted_read(
    mask: bool,
    out: str = "8",
    write_index: str = "%j",
    write_index_type: str = tile("8", "i64"),
) -> ModuleOp:
    """``@main(%x: [N])``: lane ``j`` of one 8-lane program reads
    ``x[j - 2]`` (masked to ``[0, N)`` when ``mask``) and writes it to
    ``out[j]`` (or ``out[write_index]``)."""
    tile8 = tile("8", "i64")
    masked = " mask %m" if mask else ""
    mask_type = f" mask {tile('8', 'i1')}" if mask else ""
    return parse(
        f"""
func.func @main(%x: {t("N", "f32")}) -> {t(out, "f32")} {{
  %0 = loop.kernel @k0 pointwise (%x) grid [1] tiles {{B = 8}} symbols [N] reason "" : ({t("N", "f32")}) -> ({t(out, "f32")}) {{
  ^bb0(%a: {t("N", "f32")}):
    %j = tile.range "B" : {tile8}
    %c2 = tile.constant 2 : i64
    %c0 = tile.constant 0 : i64
    %n = tile.size N : i64
    %i = tile.binary sub %j, %c2 : ({tile8}, i64) -> {tile8}
    %low = tile.cmp ge %i, %c0 : ({tile8}, i64) -> {tile("8", "i1")}
    %high = tile.cmp lt %i, %n : ({tile8}, i64) -> {tile("8", "i1")}
    %m = tile.binary and %low, %high : ({tile("8", "i1")}, {tile("8", "i1")}) -> {tile("8", "i1")}
    %v = loop.read %a[%i]{masked} : {t("N", "f32")}[{tile8}]{mask_type} -> {tile("8", "f32")}
    loop.write %v to 0[{write_index}] : {tile("8", "f32")}[{write_index_type}]
  }}
  func.return %0 : {t(out, "f32")}
}}"""
    )


@pytest.mark.parametrize("n", [1, 3, 6, 20])
def test_masked_lanes_read_zero_even_out_of_bounds(n: int) -> None:
    x = RNG.uniform(1, 2, n).astype(np.float32)
    expected = np.zeros(8, np.float32)
    expected[2 : 2 + n] = x[:6]
    assert_same(run_loop(shifted_read(mask=True), [x])[0], expected)


def test_an_unmasked_out_of_bounds_read_is_an_irc_error() -> None:
    module = shifted_read(mask=False)
    x = np.ones(6, np.float32)
    with pytest.raises(
        ExecutionError,
        match=r"loop.read in @main reads index \(-2,\) of a tensor of shape \(6,\) "
        r"at lane \(0,\) of program \(0, 0, 0\).*out of bounds.*\(2 such lane",
    ):
        run_loop(module, [x])


def test_an_unmasked_out_of_bounds_write_is_an_irc_error() -> None:
    module = parse(
        f"""
func.func @main(%x: {t("N", "f32")}) -> {t("N", "f32")} {{
  %0 = loop.kernel @k0 pointwise (%x) grid [1] tiles {{B = 8}} symbols [] reason "" : ({t("N", "f32")}) -> ({t("N", "f32")}) {{
  ^bb0(%a: {t("N", "f32")}):
    %j = tile.range "B" : {tile("8", "i64")}
    %z = tile.constant 0.0 : f32
    loop.write %z to 0[%j] : f32[{tile("8", "i64")}]
  }}
  func.return %0 : {t("N", "f32")}
}}"""
    )
    assert_same(run_loop(module, [np.ones(8, np.float32)])[0], np.zeros(8, np.float32))
    with pytest.raises(
        ExecutionError, match=r"loop.write in @main writes index \(5,\)"
    ):
        run_loop(module, [np.ones(5, np.float32)])


def test_an_output_element_no_program_writes_is_an_irc_error() -> None:
    module = shifted_read(mask=True, out="9")
    with pytest.raises(
        ExecutionError, match=r"leaves 1 element\(s\) of output 0 .* first at \(8,\)"
    ):
        run_loop(module, [np.ones(3, np.float32)])


def test_writing_an_element_twice_is_an_irc_error() -> None:
    """Program 2 of 3 writes row min(2, 1) = 1 again."""
    twice = SOFTMAX.replace("grid [N]", "grid [N + 1]").replace(
        "%row = tile.program_id 0 : i64",
        "%pid = tile.program_id 0 : i64\n"
        "    %one = tile.constant 1 : i64\n"
        "    %row = tile.binary min %pid, %one : (i64, i64) -> i64",
    )
    with pytest.raises(
        ExecutionError,
        match=r"program \(2, 0, 0\) writes element \(1, 0\) of output 0, which an "
        "earlier program already wrote",
    ):
        run_loop(parse(twice), [np.ones((2, 128), np.float32)])


def test_lanes_of_one_program_writing_one_element_is_an_irc_error() -> None:
    module = shifted_read(mask=True, write_index="%c0", write_index_type="i64")
    with pytest.raises(ExecutionError, match="same output element from several lanes"):
        run_loop(module, [np.ones(8, np.float32)])


# --------------------------------------------------------------------------
# Function level: guards, dense constants, rank 0, binding
# --------------------------------------------------------------------------

FUNCTION_LEVEL = """
func.func @main(%s: !graph.tensor<[], f32>, %y: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[], f32>) {
  sym.guard N <= 4
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> !graph.tensor<[4], f32>
  %0, %1 = loop.kernel @k0 pointwise (%s, %y, %c) grid [1] tiles {B = 4} symbols [N] reason "" : (!graph.tensor<[], f32>, !graph.tensor<[N], f32>, !graph.tensor<[4], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[], f32>) {
  ^bb0(%as: !graph.tensor<[], f32>, %ay: !graph.tensor<[N], f32>, %ac: !graph.tensor<[4], f32>):
    %i = tile.range "B" : !loop.tile<[4], i64>
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i1>
    %sv = loop.read %as[] : !graph.tensor<[], f32>[] -> f32
    %yv = loop.read %ay[%i] mask %m : !graph.tensor<[N], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i1> -> !loop.tile<[4], f32>
    %cv = loop.read %ac[%i] : !graph.tensor<[4], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f32>
    %p = tile.binary mul %yv, %sv : (!loop.tile<[4], f32>, f32) -> !loop.tile<[4], f32>
    %r = tile.binary add %p, %cv : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
    loop.write %r to 0[%i] mask %m : !loop.tile<[4], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i1>
    %t = tile.reduce sum %r 0 : !loop.tile<[4], f32> -> f32
    loop.write %t to 1[] : f32[]
  }
  func.return %0, %1 : !graph.tensor<[N], f32>, !graph.tensor<[], f32>
}
"""


@pytest.mark.parametrize("n", [1, 3, 4])
def test_guards_dense_constants_and_rank_0_tensors(n: int) -> None:
    module = parse(FUNCTION_LEVEL)
    s = np.array(2.0, np.float32)
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    out, total = run_loop(module, [s, y])
    full = np.zeros(4, np.float32)
    full[:n] = y * 2
    full += np.array([1, 2, 3, 4], np.float32)
    assert_same(out, full[:n])
    assert total.shape == () and total.dtype == np.float32
    np.testing.assert_allclose(total, full.sum(), rtol=1e-6)


def test_a_broken_guard_and_a_wrong_dtype_are_binding_errors() -> None:
    module = parse(FUNCTION_LEVEL)
    s = np.array(2.0, np.float32)
    with pytest.raises(BindingError, match=r"guard `N <= 4` does not hold with N = 5"):
        run_loop(module, [s, np.ones(5, np.float32)])
    with pytest.raises(BindingError, match="argument 'y' has dtype float64"):
        run_loop(module, [s, np.ones(3)])
    with pytest.raises(BindingError, match="pass a NumPy array"):
        run_loop(module, [2.0, np.ones(3, np.float32)])


def test_outputs_are_fresh_arrays_and_inputs_are_untouched() -> None:
    module = parse(FLAT)
    x, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    before = x.copy(), b.copy()
    (first,) = run_loop(module, [x, b])
    first[...] = 7
    (second,) = run_loop(module, [x, b])
    assert not np.shares_memory(second, x)
    assert_same(x, before[0])
    assert_same(b, before[1])
    assert (second != 7).all()


def test_the_loop_level_is_registered_for_the_checkers() -> None:
    module = parse(ROW_SUM)
    assert level_of(module).name == "loop"
    arguments = find_function(module).function_type.inputs.data
    assert entry_signature(module) == list(arguments)
    x = RNG.normal(0, 1, (3, 5)).astype(np.float32)
    assert_same(run_module(module, [x])[0], run_loop(module, [x])[0])
    graph_level = parse(FLAT_GRAPH)
    assert level_of(graph_level).name == "graph"


# --------------------------------------------------------------------------
# Reuse of the tile functions by another level
# --------------------------------------------------------------------------


def test_tile_functions_run_under_a_program_context_set_by_the_caller() -> None:
    """The memory level registers ``LoopTileFunctions`` alone and installs a
    ``ProgramContext`` per program; nothing else is needed to run them."""
    module = parse(FLAT)
    kernel = next(op for op in module.walk() if isinstance(op, loop.KernelOp))
    ops = {op.results[0].name_hint: op for op in kernel.body.walk() if op.results}
    interpreter = Interpreter(module)
    interpreter.register_implementations(LoopTileFunctions())
    with pytest.raises(ExecutionError, match="outside a kernel launch"):
        interpreter.run_op(ops["p"], ())
    set_program_context(interpreter, ProgramContext({"N": 3, "D": 5}, (2, 0, 0)))
    (p,) = interpreter.run_op(ops["p"], ())
    (numel,) = interpreter.run_op(ops["numel"], ())
    (lanes,) = interpreter.run_op(ops["r"], ())
    (offsets,) = interpreter.run_op(ops["offs"], (np.int32(32), lanes))
    assert (p, numel) == (np.int32(2), np.int32(15))
    assert type(p) is np.int32 and type(numel) is np.int32
    assert_same(offsets, np.arange(32, 48, dtype=np.int32))


def test_erf_kind_uses_math_erf() -> None:
    """A spot check of one composite function against its definition."""
    tiled = pointwise(["f64"], "f64", f"%r = tile.unary erf %v0 : {tile('8', 'f64')}")
    x = np.array([-1.0, 0.0, 0.5, 3.0])
    assert_same(run_loop(tiled, [x])[0], np.array([math.erf(v) for v in x]))
