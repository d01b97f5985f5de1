"""Canonicalization of the graph dialect (``irc.passes.graph_canonicalization``).

The cases, one per pattern and per rewrite that must not happen, are the
FileCheck files ``tests/filecheck/transforms/canonicalize.mlir`` and
``canonicalize-run-time-errors.mlir``, whose CHECK lines say what the IR
becomes. Here each of their cases runs through the pass again: the result must
be a fixed point, the ops the patterns create must keep the location of the op
they replace, and the reference interpreter must give the same results before
and after, bit for bit (NaN where NaN, the sign of every zero), on random
inputs that include NaN, infinities, signed zeros and integer bounds, at two
symbol bindings (``irc-opt --check-semantics`` compares within a tolerance, on
moderate values). Folding is checked with Hypothesis over the constant values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.transforms.canonicalize import CanonicalizePass

from irc.dialects.graph import ConcatOp, ConstantOp, tensor_type
from irc.dtypes import dtype
from irc.interpreters.graph import ExecutionError, run_graph
from irc.ir import default_context
from irc.passes.graph_canonicalization import ElementwiseOfConcats, patterns_for

CTX = default_context()
BINDINGS = ({"N": 1, "M": 2}, {"N": 3, "M": 4})
SPECIAL_FLOATS = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0)


def t(dims: str, element: str) -> str:
    """The text of a ``!graph.tensor`` type."""
    return f"!graph.tensor<[{dims}], {element}>"


I1 = t("N", "i1")


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
# The cases of the FileCheck files, run here on special values
# --------------------------------------------------------------------------

TRANSFORMS = Path(__file__).parent / "filecheck" / "transforms"
#: One case per pattern (and per rewrite that must not happen), each with
#: the IR expected after the pass in its CHECK lines.
CASES_FILE = TRANSFORMS / "canonicalize.mlir"
#: Cases whose programs fail at run time (--check-semantics cannot run them).
RUN_TIME_ERRORS_FILE = TRANSFORMS / "canonicalize-run-time-errors.mlir"


def file_cases(path: Path) -> dict[str, str]:
    """The chunks of ``path`` as ``--split-input-file`` cuts it, by the name
    of the function each chunk holds."""
    chunks = re.split(r"^// -----$", path.read_text(), flags=re.MULTILINE)
    cases = {}
    for chunk in chunks:
        (name,) = re.findall(r"^func\.func @(\w+)\(", chunk, flags=re.MULTILINE)
        cases[name] = chunk
    return cases


def params(cases: dict[str, str]) -> list[object]:
    return [pytest.param(text, id=name) for name, text in cases.items()]


#: A case the FileCheck file cannot hold: xDSL prints ``dense<[0.0, -0.0]>``
#: as the splat ``dense<0.000000e+00>``, so the printed IR after the pass
#: cannot show what stays, and parsing it back changes what it computes.
DENSE_WITH_SIGNED_ZEROS = program(
    f"%x: {t('2', 'f32')}",
    f"%a = graph.constant dense<[0.0, -0.0]> : tensor<2xf32> -> {t('2', 'f32')}\n"
    f"%r = graph.add %x, %a : {t('2', 'f32')}",
    t("2", "f32"),
)
CASES = file_cases(CASES_FILE)
RUN_TIME_ERRORS = file_cases(RUN_TIME_ERRORS_FILE)


def assert_fixed_point(module: ModuleOp) -> None:
    """A second canonicalization leaves ``module`` as it is (without the
    print and parse that the FileCheck file's fixed-point RUN line adds)."""
    assert str(canonicalize(module)) == str(module), "not a fixed point"


@pytest.mark.parametrize(
    "text",
    [*params(CASES), pytest.param(DENSE_WITH_SIGNED_ZEROS, id="dense_signed_zeros")],
)
def test_case_keeps_every_bit(text: str) -> None:
    before = parse(text)
    after = canonicalize(before)
    assert_fixed_point(after)
    assert_same_results(before, after)


@pytest.mark.parametrize("text", params(RUN_TIME_ERRORS))
def test_run_time_errors_stay_for_run_time(text: str) -> None:
    before = parse(text)
    after = canonicalize(before)
    assert_fixed_point(after)
    (function,) = (op for op in before.ops if isinstance(op, FuncOp))
    rng = np.random.default_rng(0)
    inputs = [random_input(arg, BINDINGS[0], rng) for arg in function.body.block.args]
    for module in (before, after):
        with pytest.raises(ExecutionError):
            run_graph(module, inputs)


@pytest.mark.parametrize(
    "text",
    [
        *params(CASES),
        *params(RUN_TIME_ERRORS),
        pytest.param(DENSE_WITH_SIGNED_ZEROS, id="dense_signed_zeros"),
    ],
)
def test_created_ops_keep_the_location_of_the_op_they_replace(text: str) -> None:
    before = parse(text)
    (function,) = (op for op in before.ops if isinstance(op, FuncOp))
    for line, op in enumerate(function.body.block.ops, start=1):
        op.location = FileLineColLoc(StringAttr("model.py"), IntAttr(line), IntAttr(1))
    after = canonicalize(before)
    unknown = [op.name for op in after.walk() if isinstance(op.location, UnknownLoc)]
    assert unknown == ["builtin.module", "func.func"], str(after)


def test_dense_with_signed_zeros_is_not_a_splat() -> None:
    """``[0.0, -0.0]`` is not a splat of either zero: ``x + [0.0, -0.0]``
    stays, with its constant as it was."""
    after = canonicalize(parse(DENSE_WITH_SIGNED_ZEROS))
    assert body_ops(after) == ["graph.constant", "graph.add"], str(after)
    (constant,) = (op for op in after.walk() if isinstance(op, ConstantOp))
    assert not constant.is_splat
    np.testing.assert_array_equal(np.signbit(constant.literal()), [False, True])


def test_pow_of_broadcast_exponent() -> None:
    """NumPy's power takes sqrt for a stride-0 exponent of 0.5 ((-inf) ** 0.5
    is NaN there, inf elsewhere): folding the broadcast must not change that.
    (canonicalize.mlir checks the IR after the pass.)"""
    before = parse(CASES["pow_of_broadcast_exponent"])
    after = canonicalize(before)
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


def test_patterns_for_unknown_op_is_empty() -> None:
    assert patterns_for(FuncOp) == ()


def concat_of_pieces(
    name: str, widths: Sequence[int], splats: Sequence[float | None], args: list[str]
) -> list[str]:
    """Lines computing ``%<name>``: a concat along axis 1 of ``[N, width]``
    pieces, each a splat of its value or (None) a new argument."""
    lines, pieces = [], []
    for index, (width, splat) in enumerate(zip(widths, splats, strict=True)):
        piece = f"%{name}{index}"
        if splat is None:
            args.append(f"{piece}: {t(f'N, {width}', 'f32')}")
        else:
            lines.append(
                f"{piece} = graph.constant {literal(splat, 'f32')} "
                f"-> {t(f'N, {width}', 'f32')}"
            )
        pieces.append(piece)
    types = ", ".join(t(f"N, {w}", "f32") for w in widths)
    lines.append(
        f"%{name} = graph.concat {', '.join(pieces)} [1] : ({types}) "
        f"-> {t(f'N, {sum(widths)}', 'f32')}"
    )
    return lines


def pieces(total: int) -> st.SearchStrategy[tuple[list[int], list[float | None]]]:
    """Two or more widths summing to ``total``, each piece a splat or an
    argument."""
    splat = st.none() | st.sampled_from(SPECIAL_FLOATS) | st.floats(-4, 4, width=32)

    @st.composite
    def draw(data: st.DrawFn) -> tuple[list[int], list[float | None]]:
        cuts = sorted(data(st.sets(st.integers(1, total - 1), min_size=1)))
        ends = [*cuts, total]
        widths = [end - start for start, end in zip([0, *cuts], ends, strict=True)]
        return widths, [data(splat) for _ in widths]

    return draw()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    left=pieces(6),
    right=pieces(6),
    kind=st.sampled_from(["add", "sub", "mul", "maximum", "div"]),
)
def test_elementwise_of_concats_keeps_every_bit(
    left: tuple[list[int], list[float | None]],
    right: tuple[list[int], list[float | None]],
    kind: str,
) -> None:
    """An elementwise op of two concats, whatever their pieces: distributed
    over the pieces where they meet, or left as it is where a piece that is
    no splat would be cut; the same bits either way."""
    args = [f"%n: {t('N, 1', 'f32')}"]  # binds N where every piece is a splat
    lines = [
        *concat_of_pieces("l", *left, args),
        *concat_of_pieces("m", *right, args),
        f"%r = graph.{kind} %l, %m : {t('N, 6', 'f32')}",
    ]
    before = parse(program(", ".join(args), "\n".join(lines), t("N, 6", "f32")))
    after = canonicalize(before)
    cuts = {*accumulate(left[0]), *accumulate(right[0])}
    cuts_an_argument = any(
        splat is None and any(end - width < cut < end for cut in cuts)
        for widths, splats in (left, right)
        for end, width, splat in zip(accumulate(widths), widths, splats, strict=True)
    )
    of_concats = [
        op
        for op in after.walk()
        if op.name == f"graph.{kind}"
        and any(isinstance(o.owner, ConcatOp) for o in op.operands)
    ]
    assert bool(of_concats) == cuts_an_argument
    assert_same_results(before, after)


def test_elementwise_of_concats_leaves_empty_pieces_to_concat_drop_empty() -> None:
    """Regression (review): a piece of width 0 made the cuts run out. The
    pattern alone leaves such concats as they are."""
    module = parse(
        program(
            f"%a: {t('N, 2', 'f32')}, %e: {t('N, 0', 'f32')}, %b: {t('N, 3', 'f32')}, "
            f"%c: {t('N, 2', 'f32')}, %d: {t('N, 3', 'f32')}",
            f"%l = graph.concat %a, %e, %b [1] : ({t('N, 2', 'f32')}, "
            f"{t('N, 0', 'f32')}, {t('N, 3', 'f32')}) -> {t('N, 5', 'f32')}\n"
            f"%m = graph.concat %c, %d [1] : ({t('N, 2', 'f32')}, "
            f"{t('N, 3', 'f32')}) -> {t('N, 5', 'f32')}\n"
            f"%r = graph.add %l, %m : {t('N, 5', 'f32')}",
            t("N, 5", "f32"),
        )
    )
    before = str(module)
    PatternRewriteWalker(ElementwiseOfConcats()).rewrite_module(module)
    assert str(module) == before
    assert_same_results(module, canonicalize(module))
