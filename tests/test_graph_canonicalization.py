"""Canonicalization of the graph dialect (``irc.passes.graph_canonicalization``).

Each pattern has a program before and the ops expected after; the reference
interpreter must then give the same results before and after, bit for bit
(NaN where NaN, the sign of every zero), on random inputs that include NaN,
infinities, signed zeros and integer bounds, at two symbol bindings. Folding
is checked with Hypothesis over the constant values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import (
    Builtin,
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.dialects.func import Func, FuncOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser
from xdsl.transforms.canonicalize import CanonicalizePass

from irc.dialects.graph import Graph, tensor_type
from irc.dialects.sym import Sym
from irc.dtypes import dtype
from irc.interpreters.graph import ExecutionError, run_graph
from irc.passes.graph_canonicalization import patterns_for


def _context() -> Context:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Func)
    ctx.load_dialect(Graph)
    ctx.load_dialect(Sym)
    return ctx


CTX = _context()
BINDINGS = ({"N": 1, "M": 2}, {"N": 3, "M": 4})
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0)


def t(dims: str, element: str) -> str:
    """The text of a ``!graph.tensor`` type."""
    return f"!graph.tensor<[{dims}], {element}>"


F32, I32, I1 = t("N", "f32"), t("N", "i32"), t("N", "i1")
F32_2D, I32_2D = t("N, M", "f32"), t("N, M", "i32")
S32 = t("", "i32")


def program(args: str, body: str, *results: str) -> str:
    """``@main(args)`` running ``body`` and returning ``%r`` (one result
    type) or ``%r0, %r1, ...`` (several)."""
    if len(results) == 1:
        return function(args, body, [("%r", results[0])])
    return function(args, body, [(f"%r{i}", r) for i, r in enumerate(results)])


def function(args: str, body: str, results: Sequence[tuple[str, str]]) -> str:
    """``@main(args)`` running ``body`` and returning ``results`` (name, type)."""
    names = ", ".join(name for name, _ in results)
    types = ", ".join(type_ for _, type_ in results)
    return (
        f"func.func @main({args}) -> ({types}) {{\n{body}\n"
        f"  func.return {names} : {types}\n}}"
    )


def parse(text: str) -> ModuleOp:
    module = Parser(CTX, text).parse_module()
    module.verify()
    return module


def canonicalize(module: ModuleOp) -> ModuleOp:
    """A canonicalized, verified copy of ``module``."""
    result = module.clone()
    CanonicalizePass().apply(CTX, result)
    result.verify()
    return result


def body_ops(module: ModuleOp) -> list[str]:
    """The names of the ops of ``@main``, without its return."""
    (function,) = (op for op in module.ops if isinstance(op, FuncOp))
    return [op.name for op in function.body.block.ops][:-1]


def random_input(
    arg: SSAValue, binding: dict[str, int], rng: np.random.Generator
) -> np.ndarray:
    """Random values for the argument ``arg``, special values mixed in."""
    tensor = tensor_type(arg)
    shape = tuple(dim.evaluate(binding) for dim in tensor.dims)
    element = dtype(tensor.element_type)
    if element.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if element.kind == "i":
        info = np.iinfo(element.numpy)
        specials = [info.min, info.max, 0, 1, -1]
        values = np.asarray(rng.integers(-100, 100, shape, dtype=element.numpy))
    else:
        specials = list(SPECIAL_FLOATS)
        values = np.asarray(rng.standard_normal(shape) * 4).astype(element.numpy)
    mask = np.asarray(rng.random(shape) < 0.4)
    values[mask] = rng.choice(np.array(specials, element.numpy), mask.sum())
    return values


def assert_identical(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same dtype and shape, same values bit for bit up to NaN payloads."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if dtype(actual.dtype).kind != "f":
        np.testing.assert_array_equal(actual, expected)
        return
    wide_actual, wide_expected = actual.astype(np.float64), expected.astype(np.float64)
    nan = np.isnan(wide_expected)
    np.testing.assert_array_equal(np.isnan(wide_actual), nan)
    np.testing.assert_array_equal(wide_actual[~nan], wide_expected[~nan])
    np.testing.assert_array_equal(
        np.signbit(wide_actual[~nan]), np.signbit(wide_expected[~nan])
    )


def assert_same_results(
    before: ModuleOp, after: ModuleOp, bindings: Sequence[dict[str, int]] = BINDINGS
) -> None:
    (function,) = (op for op in before.ops if isinstance(op, FuncOp))
    rng = np.random.default_rng(0)
    for binding in bindings:
        inputs = [random_input(arg, binding, rng) for arg in function.body.block.args]
        for old, new in zip(
            run_graph(before, inputs), run_graph(after, inputs), strict=True
        ):
            assert_identical(new, old)


# --------------------------------------------------------------------------
# One program per pattern (and per rewrite that must not happen)
# --------------------------------------------------------------------------


def case(
    name: str,
    args: str,
    body: str,
    results: str | tuple[str, ...],
    expected: list[str],
) -> object:
    """A test of ``test_pattern``: the program, and its ops expected after."""
    types = results if isinstance(results, tuple) else (results,)
    return pytest.param(program(args, body, *types), expected, id=name)


def const(value: str, element: str, type_: str) -> str:
    """A splat constant (bools print as ``true``/``false``, without a type)."""
    typed = value if element == "i1" else f"{value} : {element}"
    return f"graph.constant {typed} -> {type_}"


CASES = [
    # ----- folding
    case(
        "fold_add_f32_rounds",
        "",
        f"%a = {const('0.1', 'f32', t('', 'f32'))}\n"
        f"%b = {const('0.2', 'f32', t('', 'f32'))}\n"
        f"%r = graph.add %a, %b : {t('', 'f32')}",
        t("", "f32"),
        ["graph.constant"],
    ),
    case(
        "fold_splat_symbolic",
        f"%x: {F32}",
        f"%a = {const('3.0', 'f32', F32)}\n%s = graph.sqrt %a : {F32}\n"
        f"%n = graph.neg %s : {F32}\n%r = graph.mul %n, %x : {F32}",
        F32,
        ["graph.constant", "graph.mul"],
    ),
    case(
        "fold_int_wraps",
        "",
        f"%a = {const('2147483647', 'i32', S32)}\n%b = {const('1', 'i32', S32)}\n"
        f"%r = graph.add %a, %b : {S32}",
        S32,
        ["graph.constant"],
    ),
    case(
        "fold_int_div_by_zero_stays",
        f"%x: {I32}",
        f"%a = {const('7', 'i32', I32)}\n%b = {const('0', 'i32', I32)}\n"
        f"%q = graph.floordiv %a, %b : {I32}\n%r = graph.add %q, %x : {I32}",
        I32,
        ["graph.constant", "graph.constant", "graph.floordiv", "graph.add"],
    ),
    case(
        "fold_cmp_select_cast",
        f"%x: {I32}",
        f"%a = {const('1.5', 'f32', F32)}\n%b = {const('2.5', 'f32', F32)}\n"
        f"%c = graph.cmp lt, %a, %b : {F32}\n"
        f"%s = graph.select %c, %a, %b : {I1}, {F32}\n"
        f"%i = graph.cast %s : {F32} -> {I32}\n%r = graph.add %x, %i : {I32}",
        I32,
        ["graph.constant", "graph.add"],
    ),
    case(
        "fold_nan_cast_to_int_stays",
        "",
        f"%a = {const('0x7FC00000', 'f32', t('', 'f32'))}\n"
        f"%r = graph.cast %a : {t('', 'f32')} -> {t('', 'i32')}",
        t("", "i32"),
        ["graph.constant", "graph.cast"],
    ),
    case(
        "fold_dense",
        "",
        f"%a = graph.constant dense<[1.0, -0.0, 0x7FC00000]> : tensor<3xf32> "
        f"-> {t('3', 'f32')}\n%b = {const('2.0', 'f32', t('3', 'f32'))}\n"
        f"%r = graph.mul %a, %b : {t('3', 'f32')}",
        t("3", "f32"),
        ["graph.constant"],
    ),
    case(
        "fold_dense_uniform_to_splat",
        f"%x: {t('3', 'f32')}",
        f"%a = graph.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf32> "
        f"-> {t('3', 'f32')}\n%r = graph.mul %x, %a : {t('3', 'f32')}",
        t("3", "f32"),
        [],
    ),
    case(
        "dense_with_signed_zeros_is_not_a_splat",
        f"%x: {t('2', 'f32')}",
        f"%a = graph.constant dense<[0.0, -0.0]> : tensor<2xf32> "
        f"-> {t('2', 'f32')}\n%r = graph.add %x, %a : {t('2', 'f32')}",
        t("2", "f32"),
        ["graph.constant", "graph.add"],
    ),
    case(
        "fold_dense_reshape_transpose_broadcast",
        "",
        f"%a = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32> "
        f"-> {t('2, 3', 'i32')}\n"
        f"%b = graph.transpose %a [1, 0] : {t('2, 3', 'i32')} -> {t('3, 2', 'i32')}\n"
        f"%c = graph.reshape %b : {t('3, 2', 'i32')} -> {t('6', 'i32')}\n"
        f"%r = graph.broadcast %c : {t('6', 'i32')} -> {t('2, 6', 'i32')}",
        t("2, 6", "i32"),
        ["graph.constant"],
    ),
    # ----- additive identities and signed zeros
    case(
        "add_neg_zero",
        f"%x: {F32}",
        f"%z = {const('-0.0', 'f32', F32)}\n%r = graph.add %x, %z : {F32}",
        F32,
        [],
    ),
    case(
        "add_pos_zero_stays",
        f"%x: {F32}",
        f"%z = {const('0.0', 'f32', F32)}\n%r = graph.add %x, %z : {F32}",
        F32,
        ["graph.constant", "graph.add"],
    ),
    case(
        "zero_add_int",
        f"%x: {I32}",
        f"%z = {const('0', 'i32', I32)}\n%r = graph.add %z, %x : {I32}",
        I32,
        [],
    ),
    case(
        "sub_zero",
        f"%x: {F32}",
        f"%z = {const('0.0', 'f32', F32)}\n%r = graph.sub %x, %z : {F32}",
        F32,
        [],
    ),
    case(
        "sub_neg_zero_stays",
        f"%x: {F32}",
        f"%z = {const('-0.0', 'f32', F32)}\n%r = graph.sub %x, %z : {F32}",
        F32,
        ["graph.constant", "graph.sub"],
    ),
    case(
        "neg_zero_sub",
        f"%x: {F32}",
        f"%z = {const('-0.0', 'f32', F32)}\n%r = graph.sub %z, %x : {F32}",
        F32,
        ["graph.neg"],
    ),
    case(
        "pos_zero_sub_stays",
        f"%x: {F32}",
        f"%z = {const('0.0', 'f32', F32)}\n%r = graph.sub %z, %x : {F32}",
        F32,
        ["graph.constant", "graph.sub"],
    ),
    case(
        "zero_sub_int",
        f"%x: {I32}",
        f"%z = {const('0', 'i32', I32)}\n%r = graph.sub %z, %x : {I32}",
        I32,
        ["graph.neg"],
    ),
    case(
        "sub_self_int",
        f"%x: {I32}",
        f"%r = graph.sub %x, %x : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "sub_self_float_stays",
        f"%x: {F32}",
        f"%r = graph.sub %x, %x : {F32}",
        F32,
        ["graph.sub"],
    ),
    # ----- multiplicative identities
    case(
        "mul_one",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n%r = graph.mul %x, %c : {F32}",
        F32,
        [],
    ),
    case(
        "one_mul",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n%r = graph.mul %c, %x : {F32}",
        F32,
        [],
    ),
    case(
        "mul_zero_float_stays",
        f"%x: {F32}",
        f"%c = {const('0.0', 'f32', F32)}\n%r = graph.mul %x, %c : {F32}",
        F32,
        ["graph.constant", "graph.mul"],
    ),
    case(
        "mul_zero_int",
        f"%x: {I32}",
        f"%c = {const('0', 'i32', I32)}\n%r = graph.mul %x, %c : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "mul_minus_one",
        f"%x: {I32}",
        f"%c = {const('-1', 'i32', I32)}\n%r = graph.mul %c, %x : {I32}",
        I32,
        ["graph.neg"],
    ),
    case(
        "div_one",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n%r = graph.div %x, %c : {F32}",
        F32,
        [],
    ),
    case(
        "div_minus_one",
        f"%x: {F32}",
        f"%c = {const('-1.0', 'f32', F32)}\n%r = graph.div %x, %c : {F32}",
        F32,
        ["graph.neg"],
    ),
    case(
        "floordiv_one_int",
        f"%x: {I32}",
        f"%c = {const('1', 'i32', I32)}\n%r = graph.floordiv %x, %c : {I32}",
        I32,
        [],
    ),
    case(
        "floordiv_one_float_stays",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n%r = graph.floordiv %x, %c : {F32}",
        F32,
        ["graph.constant", "graph.floordiv"],
    ),
    case(
        "rem_minus_one_int",
        f"%x: {I32}",
        f"%c = {const('-1', 'i32', I32)}\n%r = graph.rem %x, %c : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "pow_one",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n%r = graph.pow %x, %c : {F32}",
        F32,
        [],
    ),
    case(
        "pow_zero",
        f"%x: {F32}",
        f"%c = {const('0.0', 'f32', F32)}\n%r = graph.pow %x, %c : {F32}",
        F32,
        ["graph.constant"],
    ),
    case(
        "pow_two_stays",
        f"%x: {F32}",
        f"%c = {const('2.0', 'f32', F32)}\n%r = graph.pow %x, %c : {F32}",
        F32,
        ["graph.constant", "graph.pow"],
    ),
    case("maximum_same", f"%x: {F32}", f"%r = graph.maximum %x, %x : {F32}", F32, []),
    case("minimum_same", f"%x: {F32}", f"%r = graph.minimum %x, %x : {F32}", F32, []),
    case(
        "maximum_constant_stays_left",
        f"%x: {F32}",
        f"%c = {const('0.0', 'f32', F32)}\n%r = graph.maximum %c, %x : {F32}",
        F32,
        ["graph.constant", "graph.maximum"],
    ),
    # ----- bitwise and logical
    case("and_same", f"%x: {I32}", f"%r = graph.and %x, %x : {I32}", I32, []),
    case("or_same", f"%x: {I1}", f"%r = graph.or %x, %x : {I1}", I1, []),
    case(
        "xor_same",
        f"%x: {I32}",
        f"%r = graph.xor %x, %x : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "and_all_ones",
        f"%x: {I32}",
        f"%c = {const('-1', 'i32', I32)}\n%r = graph.and %c, %x : {I32}",
        I32,
        [],
    ),
    case(
        "and_true",
        f"%x: {I1}",
        f"%c = {const('true', 'i1', I1)}\n%r = graph.and %x, %c : {I1}",
        I1,
        [],
    ),
    case(
        "and_zero",
        f"%x: {I32}",
        f"%c = {const('0', 'i32', I32)}\n%r = graph.and %x, %c : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "or_false",
        f"%x: {I1}",
        f"%c = {const('false', 'i1', I1)}\n%r = graph.or %x, %c : {I1}",
        I1,
        [],
    ),
    case(
        "or_all_ones",
        f"%x: {I32}",
        f"%c = {const('-1', 'i32', I32)}\n%r = graph.or %x, %c : {I32}",
        I32,
        ["graph.constant"],
    ),
    case(
        "xor_zero",
        f"%x: {I32}",
        f"%c = {const('0', 'i32', I32)}\n%r = graph.xor %x, %c : {I32}",
        I32,
        [],
    ),
    case(
        "xor_true",
        f"%x: {I1}",
        f"%c = {const('true', 'i1', I1)}\n%r = graph.xor %c, %x : {I1}",
        I1,
        ["graph.not"],
    ),
    # ----- unary
    case(
        "neg_neg",
        f"%x: {I32}",
        f"%n = graph.neg %x : {I32}\n%r = graph.neg %n : {I32}",
        I32,
        [],
    ),
    case(
        "not_not",
        f"%x: {I1}",
        f"%n = graph.not %x : {I1}\n%r = graph.not %n : {I1}",
        I1,
        [],
    ),
    case(
        "abs_abs",
        f"%x: {F32}",
        f"%a = graph.abs %x : {F32}\n%r = graph.abs %a : {F32}",
        F32,
        ["graph.abs"],
    ),
    case(
        "abs_neg",
        f"%x: {I32}",
        f"%n = graph.neg %x : {I32}\n%r = graph.abs %n : {I32}",
        I32,
        ["graph.abs"],
    ),
    case(
        "floor_floor",
        f"%x: {F32}",
        f"%a = graph.floor %x : {F32}\n%r = graph.floor %a : {F32}",
        F32,
        ["graph.floor"],
    ),
    # ----- comparisons and selects
    case(
        "cmp_constant_moves_right",
        f"%x: {F32}",
        f"%c = {const('0.5', 'f32', F32)}\n%r = graph.cmp lt, %c, %x : {F32}",
        I1,
        ["graph.constant", "graph.cmp"],
    ),
    case(
        "cmp_same_int",
        f"%x: {I32}",
        f"%r0 = graph.cmp le, %x, %x : {I32}\n%r1 = graph.cmp ne, %x, %x : {I32}",
        (I1, I1),
        ["graph.constant", "graph.constant"],
    ),
    case(
        "cmp_same_float_stays",
        f"%x: {F32}",
        f"%r = graph.cmp eq, %x, %x : {F32}",
        I1,
        ["graph.cmp"],
    ),
    case(
        "select_same",
        f"%c: {I1}, %x: {F32}",
        f"%r = graph.select %c, %x, %x : {I1}, {F32}",
        F32,
        [],
    ),
    case(
        "select_constant_condition",
        f"%x: {F32}, %y: {F32}",
        f"%c = {const('false', 'i1', I1)}\n%r = graph.select %c, %x, %y : {I1}, {F32}",
        F32,
        [],
    ),
    case(
        "select_not_condition",
        f"%c: {I1}, %x: {F32}, %y: {F32}",
        f"%n = graph.not %c : {I1}\n%r = graph.select %n, %x, %y : {I1}, {F32}",
        F32,
        ["graph.select"],
    ),
    case(
        "select_true_false",
        f"%c: {I1}",
        f"%t = {const('true', 'i1', I1)}\n%f = {const('false', 'i1', I1)}\n"
        f"%r0 = graph.select %c, %t, %f : {I1}, {I1}\n"
        f"%r1 = graph.select %c, %f, %t : {I1}, {I1}",
        (I1, I1),
        ["graph.not"],
    ),
    # ----- casts
    case("cast_same", f"%x: {F32}", f"%r = graph.cast %x : {F32} -> {F32}", F32, []),
    case(
        "cast_widen_then_convert",
        f"%x: {I32}",
        f"%w = graph.cast %x : {I32} -> {t('N', 'i64')}\n"
        f"%r = graph.cast %w : {t('N', 'i64')} -> {F32}",
        F32,
        ["graph.cast"],
    ),
    case(
        "cast_round_trip_exact",
        f"%x: {t('N', 'bf16')}",
        f"%w = graph.cast %x : {t('N', 'bf16')} -> {F32}\n"
        f"%r = graph.cast %w : {F32} -> {t('N', 'bf16')}",
        t("N", "bf16"),
        [],
    ),
    case(
        "cast_from_bool",
        f"%x: {I1}",
        f"%w = graph.cast %x : {I1} -> {I32}\n%r = graph.cast %w : {I32} -> {F32}",
        F32,
        ["graph.cast"],
    ),
    case(
        "cast_narrowing_round_trip_stays",
        f"%x: {F32}",
        f"%w = graph.cast %x : {F32} -> {t('N', 'f16')}\n"
        f"%r = graph.cast %w : {t('N', 'f16')} -> {F32}",
        F32,
        ["graph.cast", "graph.cast"],
    ),
    case(
        "cast_int32_to_float32_to_int32_stays",
        f"%x: {I32}",
        f"%w = graph.cast %x : {I32} -> {F32}\n%r = graph.cast %w : {F32} -> {I32}",
        I32,
        ["graph.cast", "graph.cast"],
    ),
    # ----- shape ops
    case(
        "transpose_identity",
        f"%x: {F32_2D}",
        f"%r = graph.transpose %x [0, 1] : {F32_2D} -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "transpose_transpose_identity",
        f"%x: {F32_2D}",
        f"%a = graph.transpose %x [1, 0] : {F32_2D} -> {t('M, N', 'f32')}\n"
        f"%r = graph.transpose %a [1, 0] : {t('M, N', 'f32')} -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "transpose_transpose_composed",
        f"%x: {t('N, M, 2', 'f32')}",
        f"%a = graph.transpose %x [1, 2, 0] : {t('N, M, 2', 'f32')} "
        f"-> {t('M, 2, N', 'f32')}\n"
        f"%r = graph.transpose %a [1, 2, 0] : {t('M, 2, N', 'f32')} "
        f"-> {t('2, N, M', 'f32')}",
        t("2, N, M", "f32"),
        ["graph.transpose"],
    ),
    case(
        "reshape_same",
        f"%x: {F32_2D}",
        f"%r = graph.reshape %x : {F32_2D} -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "reshape_reshape",
        f"%x: {F32_2D}",
        f"%a = graph.reshape %x : {F32_2D} -> {t('N * M', 'f32')}\n"
        f"%r = graph.reshape %a : {t('N * M', 'f32')} -> {t('M, N', 'f32')}",
        t("M, N", "f32"),
        ["graph.reshape"],
    ),
    case(
        "broadcast_same",
        f"%x: {F32_2D}",
        f"%r = graph.broadcast %x : {F32_2D} -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "broadcast_broadcast",
        f"%x: {t('1, M', 'f32')}, %binds_n: {F32}",
        f"%a = graph.broadcast %x : {t('1, M', 'f32')} -> {F32_2D}\n"
        f"%r = graph.broadcast %a : {F32_2D} -> {t('3, N, M', 'f32')}",
        t("3, N, M", "f32"),
        ["graph.broadcast"],
    ),
    case(
        "shape_ops_of_splat",
        f"%binds_n_m: {F32_2D}",
        f"%c = {const('2.5', 'f32', t('1, M', 'f32'))}\n"
        f"%a = graph.broadcast %c : {t('1, M', 'f32')} -> {F32_2D}\n"
        f"%b = graph.transpose %a [1, 0] : {F32_2D} -> {t('M, N', 'f32')}\n"
        f"%d = graph.reshape %b : {t('M, N', 'f32')} -> {t('M * N', 'f32')}\n"
        f"%r = graph.slice %d [1] [1] : {t('M * N', 'f32')} -> {t('M * N - 1', 'f32')}",
        t("M * N - 1", "f32"),
        ["graph.constant"],
    ),
    case(
        "slice_of_splat_unproven_bounds_stays",
        f"%binds_n_m: {F32_2D}",
        f"%c = {const('1.0', 'f32', t('M', 'f32'))}\n"
        f"%r = graph.slice %c [N] [1] : {t('M', 'f32')} -> {t('1', 'f32')}",
        t("1", "f32"),
        ["graph.constant", "graph.slice"],
    ),
    case(
        "full_slice",
        f"%x: {F32_2D}",
        f"%r = graph.slice %x [0, 0] [1, 1] : {F32_2D} -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "partial_slice_stays",
        f"%x: {F32}",
        f"%r = graph.slice %x [N - 1] [-1] : {F32} -> {F32}",
        F32,
        ["graph.slice"],
    ),
    case(
        "concat_single",
        f"%x: {F32_2D}",
        f"%r = graph.concat %x [1] : ({F32_2D}) -> {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "concat_drops_empty",
        f"%x: {F32_2D}, %e: {t('N, 0', 'f32')}, %y: {F32_2D}",
        f"%r0 = graph.concat %x, %e [1] : ({F32_2D}, {t('N, 0', 'f32')}) -> {F32_2D}\n"
        f"%r1 = graph.concat %x, %e, %y [1] : ({F32_2D}, {t('N, 0', 'f32')}, {F32_2D}) "
        f"-> {t('N, 2 * M', 'f32')}",
        (F32_2D, t("N, 2 * M", "f32")),
        ["graph.concat"],
    ),
    case(
        "reduce_no_axes",
        f"%x: {I32_2D}",
        f"%r = graph.reduce sum %x [] : {I32_2D} -> {I32_2D}",
        I32_2D,
        [],
    ),
    case(
        "reduce_float_sum_no_axes_stays",
        f"%x: {F32_2D}",
        f"%r = graph.reduce sum %x [] : {F32_2D} -> {F32_2D}",
        F32_2D,
        ["graph.reduce"],
    ),
    case(
        "reduce_max_unit_axis",
        f"%x: {t('N, 1', 'f32')}",
        f"%r0 = graph.reduce max %x [1] : {t('N, 1', 'f32')} -> {F32}\n"
        f"%r1 = graph.reduce prod %x [1] : {t('N, 1', 'f32')} -> {t('N, 1', 'f32')}",
        (F32, t("N, 1", "f32")),
        ["graph.reshape"],
    ),
    case(
        "reduce_sum_unit_axis_int",
        f"%x: {t('1, N', 'i32')}",
        f"%r = graph.reduce sum %x [0] : {t('1, N', 'i32')} -> {I32}",
        I32,
        ["graph.reshape"],
    ),
    case(
        "reduce_sum_unit_axis_float_stays",
        f"%x: {t('N, 1', 'f32')}",
        f"%r = graph.reduce sum %x [1] : {t('N, 1', 'f32')} -> {F32}",
        F32,
        ["graph.reduce"],
    ),
    case(
        "reduce_max_of_splat",
        f"%x: {F32_2D}",
        f"%c = {const('-0.0', 'f32', F32_2D)}\n"
        f"%m = graph.reduce min %c [0, 1] : {F32_2D} -> {t('', 'f32')}\n"
        f"%b = graph.broadcast %m : {t('', 'f32')} -> {F32_2D}\n"
        f"%r = graph.add %x, %b : {F32_2D}",
        F32_2D,
        [],
    ),
    case(
        "reduce_sum_of_splat_stays",
        f"%x: {F32}",
        f"%c = {const('1.0', 'f32', F32)}\n"
        f"%s = graph.reduce sum %c [0] : {F32} -> {t('', 'f32')}\n"
        f"%b = graph.broadcast %s : {t('', 'f32')} -> {F32}\n"
        f"%r = graph.mul %x, %b : {F32}",
        F32,
        ["graph.constant", "graph.reduce", "graph.broadcast", "graph.mul"],
    ),
    # ----- sources
    case(
        "iota_unit_axis",
        f"%x: {t('1, N', 'i64')}",
        f"%i = graph.iota [0] : {t('1, N', 'i64')}\n"
        f"%r = graph.add %x, %i : {t('1, N', 'i64')}",
        t("1, N", "i64"),
        [],
    ),
    case(
        "dim_constant",
        f"%x: {t('', 'f32')}",
        f"%d = graph.dim 4 : {t('', 'f32')}\n%r = graph.div %x, %d : {t('', 'f32')}",
        t("", "f32"),
        ["graph.constant", "graph.div"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_pattern(text: str, expected: list[str]) -> None:
    before = parse(text)
    after = canonicalize(before)
    assert body_ops(after) == expected, str(after)
    assert str(canonicalize(after)) == str(after), "not a fixed point"
    assert_same_results(before, after)


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_created_ops_keep_the_location_of_the_op_they_replace(
    text: str, expected: list[str]
) -> None:
    before = parse(text)
    (function,) = (op for op in before.ops if isinstance(op, FuncOp))
    for line, op in enumerate(function.body.block.ops, start=1):
        op.location = FileLineColLoc(StringAttr("model.py"), IntAttr(line), IntAttr(1))
    after = canonicalize(before)
    unknown = [op.name for op in after.walk() if isinstance(op.location, UnknownLoc)]
    assert unknown == ["builtin.module", "func.func"], str(after)


def test_pow_of_broadcast_exponent() -> None:
    """NumPy's power takes sqrt for a stride-0 exponent of 0.5 ((-inf) ** 0.5
    is NaN there, inf elsewhere): folding the broadcast must not change that."""
    scalar = t("", "f32")
    before = parse(
        program(
            f"%x: {F32}",
            f"%c = {const('0.5', 'f32', scalar)}\n"
            f"%b = graph.broadcast %c : {scalar} -> {F32}\n"
            f"%r = graph.pow %x, %b : {F32}",
            F32,
        )
    )
    after = canonicalize(before)
    assert body_ops(after) == ["graph.constant", "graph.pow"]
    x = np.array([-np.inf, -0.0, 4.0], np.float32)
    assert_identical(run_graph(after, [x])[0], run_graph(before, [x])[0])


# --------------------------------------------------------------------------
# Folding, with Hypothesis over the constants
# --------------------------------------------------------------------------

ELEMENT_TYPES = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f64": np.float64,
    "i32": np.int32,
    "i64": np.int64,
    "i1": np.bool_,
}
FLOAT_UNARY = [
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "sin",
    "cos",
    "floor",
]
FLOAT_BINARY = [
    "add",
    "sub",
    "mul",
    "div",
    "floordiv",
    "rem",
    "pow",
    "maximum",
    "minimum",
]
INT_UNARY = ("neg", "abs", "not")
INT_BINARY = [
    "add",
    "sub",
    "mul",
    "floordiv",
    "rem",
    "maximum",
    "minimum",
    "and",
    "or",
    "xor",
]
PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
#: Ops that may legitimately survive folding: integer division by zero, casts
#: of NaN or out-of-range floats to integers, negative integer powers.
MAY_STAY = {"graph.floordiv", "graph.rem", "graph.cast", "graph.pow"}


def scalars(element: str) -> st.SearchStrategy[float | int | bool]:
    if element == "i1":
        return st.booleans()
    if element.startswith("i"):
        info = np.iinfo(ELEMENT_TYPES[element])
        edges = [info.min, info.min + 1, info.max, -1, 0, 1, 2]
        return st.one_of(st.sampled_from(edges), st.integers(-1000, 1000))
    return st.one_of(
        st.sampled_from((*SPECIAL_FLOATS, 0.5, 2.0, 3.0, 65504.0, 1e-30)),
        st.floats(allow_nan=True, allow_infinity=True),
    )


def literal(value: float | int | bool, element: str) -> str:
    """The attribute text of one element value (rounded to the type)."""
    ir_type = dtype(np.dtype(ELEMENT_TYPES[element])).ir_type
    if element.startswith("f") or element == "bf16":
        return str(FloatAttr(float(value), ir_type))  # type: ignore[arg-type]
    return str(IntegerAttr(int(value), ir_type))  # type: ignore[arg-type]


def folding_program(element: str, a: object, b: object, condition: bool) -> str:
    """A program applying every op defined on ``element`` to constants."""
    T = t("N", element)
    lines = [
        f"%a = graph.constant {literal(a, element)} -> {T}",
        f"%b = graph.constant {literal(b, element)} -> {T}",
        f"%c = graph.constant {literal(condition, 'i1')} -> {I1}",
    ]
    results: list[tuple[str, str]] = [("%x", T)]

    def add(line: str, result_type: str) -> None:
        name = f"%v{len(lines)}"
        lines.append(f"{name} = {line}")
        results.append((name, result_type))

    if element == "i1":
        unary, binary = ["not"], ["and", "or", "xor"]
    elif element.startswith("i"):
        unary, binary = list(INT_UNARY), list(INT_BINARY)
        if int(b) >= 0:  # type: ignore[call-overload]
            binary.append("pow")
    else:
        unary, binary = list(FLOAT_UNARY), list(FLOAT_BINARY)
    for op in unary:
        add(f"graph.{op} %a : {T}", T)
    for op in binary:
        add(f"graph.{op} %a, %b : {T}", T)
    for predicate in PREDICATES:
        add(f"graph.cmp {predicate}, %a, %b : {T}", I1)
    add(f"graph.select %c, %a, %b : {I1}, {T}", T)
    for target in ELEMENT_TYPES:
        add(f"graph.cast %a : {T} -> {t('N', target)}", t("N", target))
    return function(f"%x: {T}", "\n".join(lines), results)


def assert_folds_like_interpreter(text: str, size: int) -> ModuleOp:
    before = parse(text)
    after = canonicalize(before)
    assert set(body_ops(after)) <= {"graph.constant"} | MAY_STAY, str(after)
    (arg,) = next(op for op in before.ops if isinstance(op, FuncOp)).body.block.args
    x = random_input(arg, {"N": size}, np.random.default_rng(size))
    for old, new in zip(run_graph(before, [x]), run_graph(after, [x]), strict=True):
        assert_identical(new, old)
    return after


@pytest.mark.parametrize("element", list(ELEMENT_TYPES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_folding_matches_interpreter(element: str, data: st.DataObject) -> None:
    a = data.draw(scalars(element), label="a")
    b = data.draw(scalars(element), label="b")
    condition = data.draw(st.booleans(), label="condition")
    size = data.draw(st.sampled_from([1, 3]), label="N")
    assert_folds_like_interpreter(folding_program(element, a, b, condition), size)


@settings(max_examples=25, deadline=None)
@given(
    a=st.lists(scalars("f32"), min_size=3, max_size=3),
    b=st.lists(scalars("f32"), min_size=3, max_size=3),
)
def test_dense_folding_matches_interpreter(a: list[float], b: list[float]) -> None:
    T = t("3", "f32")

    def dense(values: list[float]) -> str:
        items = ", ".join(literal(v, "f32").removesuffix(" : f32") for v in values)
        return f"graph.constant dense<[{items}]> : tensor<3xf32> -> {T}"

    lines = [f"%a = {dense(a)}", f"%b = {dense(b)}"]
    results = [("%x", T)]
    for index, op in enumerate([*FLOAT_BINARY, "cmp lt,"]):
        lines.append(f"%v{index} = graph.{op} %a, %b : {T}")
        results.append((f"%v{index}", t("3", "i1") if op.startswith("cmp") else T))
    assert_folds_like_interpreter(function(f"%x: {T}", "\n".join(lines), results), 3)


#: Identities by element kind: each line defines one result from ``%x`` and
#: the splats ``%zero`` (-0.0 on floats), ``%pzero`` (+0.0), ``%one``,
#: ``%ones`` (-1: all ones on integers, true on bool).
IDENTITIES = {
    "f": [
        "add %x, %zero",
        "add %zero, %x",
        "sub %x, %pzero",
        "sub %zero, %x",
        "mul %x, %one",
        "mul %ones, %x",
        "div %x, %one",
        "div %x, %ones",
        "pow %x, %one",
        "pow %x, %pzero",
        "maximum %x, %x",
        "minimum %x, %x",
    ],
    "i": [
        "add %zero, %x",
        "sub %x, %zero",
        "sub %zero, %x",
        "sub %x, %x",
        "mul %x, %one",
        "mul %x, %zero",
        "mul %ones, %x",
        "floordiv %x, %one",
        "rem %x, %ones",
        "pow %x, %one",
        "pow %x, %zero",
        "maximum %x, %x",
        "and %x, %ones",
        "or %x, %zero",
        "xor %x, %zero",
        "or %ones, %x",
        "xor %x, %ones",
        "xor %x, %x",
    ],
    "b": [
        "and %x, %ones",
        "and %zero, %x",
        "or %x, %zero",
        "or %x, %ones",
        "xor %ones, %x",
        "xor %x, %x",
    ],
}


@pytest.mark.parametrize("element", ["f32", "f16", "bf16", "f64", "i32", "i64", "i1"])
def test_identities_hold_for_every_element_type(element: str) -> None:
    """Every binary identity leaves no binary op behind, and keeps every bit."""
    T = t("N", element)
    kind = dtype(np.dtype(ELEMENT_TYPES[element])).kind
    lines = [
        f"%zero = graph.constant {literal(-0.0, element)} -> {T}",
        f"%pzero = graph.constant {literal(0.0, element)} -> {T}",
        f"%one = graph.constant {literal(1, element)} -> {T}",
        f"%ones = graph.constant {literal(-1, element)} -> {T}",
    ]
    results = []
    for index, expression in enumerate(IDENTITIES[kind]):
        lines.append(f"%v{index} = graph.{expression} : {T}")
        results.append((f"%v{index}", T))
    before = parse(function(f"%x: {T}", "\n".join(lines), results))
    after = canonicalize(before)
    assert set(body_ops(after)) <= {"graph.constant", "graph.neg", "graph.not"}
    assert_same_results(before, after)


def test_negative_integer_power_is_left_to_run_time() -> None:
    text = program(
        "",
        f"%a = {const('2', 'i32', t('', 'i32'))}\n"
        f"%b = {const('-1', 'i32', t('', 'i32'))}\n"
        f"%r = graph.pow %a, %b : {t('', 'i32')}",
        t("", "i32"),
    )
    after = canonicalize(parse(text))
    assert body_ops(after) == ["graph.constant", "graph.constant", "graph.pow"]
    with pytest.raises(ExecutionError):
        run_graph(after, [])


def test_patterns_for_unknown_op_is_empty() -> None:
    assert patterns_for(FuncOp) == ()
