"""Every elementwise kind and comparison, through every level.

``irc.dialects.elementwise`` defines each kind once; the graph op classes,
the tile-level ops, the interpreters, folding and the Triton backend read
it. Here each kind, on each element kind it is defined on, is lowered from
a one-op graph program down to the triton level, and every level's module
(the last one as emitted Triton source, under Triton's interpreter) computes
what the kind's NumPy function computes.
"""

from __future__ import annotations

import numpy as np
import pytest

from irc.backend.triton.elementwise import COMPARISON_OPERATORS, SPELLINGS
from irc.dialects.elementwise import (
    COMPARISONS,
    REDUCTIONS,
    SEMANTICS,
    ComparisonPredicate,
    ElementwiseKind,
    ReductionKind,
)
from irc.dialects.graph import ELEMENTWISE_OPS, BinaryOp, UnaryOp
from irc.ir import default_context, parse_module
from irc.lowering.pipeline import LEVEL_NAMES, passes_after
from irc.testing.interpreters import level_of, run_module

#: One element type per element kind (``irc.dtypes.DType.kind``).
ELEMENTS = {"f": ("f32", np.float32), "i": ("i32", np.int32), "b": ("i1", np.bool_)}
SIZE = 7


def cases() -> list[tuple[ElementwiseKind, str]]:
    return [
        (kind, element)
        for kind in ElementwiseKind
        for element in "fib"
        if element in kind.semantics.domain
    ]


def test_every_kind_has_one_row_everywhere() -> None:
    """The semantics, the graph op and the Triton spelling of each kind."""
    assert set(SEMANTICS) == set(ElementwiseKind)
    assert set(ELEMENTWISE_OPS) == set(ElementwiseKind)
    assert set(SPELLINGS) == set(ElementwiseKind)
    assert set(COMPARISONS) == set(COMPARISON_OPERATORS) == set(ComparisonPredicate)
    assert set(REDUCTIONS) == set(ReductionKind)
    for reduction in REDUCTIONS.values():
        assert reduction.combine is None or reduction.combine.arity == 2
    for kind, op in ELEMENTWISE_OPS.items():
        assert op.KIND is kind
        assert issubclass(op, UnaryOp if kind.arity == 1 else BinaryOp)


def program(kind: ElementwiseKind, element: str) -> str:
    tensor = f"!graph.tensor<[N], {element}>"
    args = ", ".join(f"%x{i}: {tensor}" for i in range(kind.arity))
    operands = ", ".join(f"%x{i}" for i in range(kind.arity))
    return (
        f"func.func @main({args}) -> {tensor} {{\n"
        f"  %y = {ELEMENTWISE_OPS[kind].name} {operands} : {tensor}\n"
        f"  func.return %y : {tensor}\n"
        "}\n"
    )


def inputs(kind: ElementwiseKind, element: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sorted(ElementwiseKind).index(kind))
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
    kind: ElementwiseKind, element: str
) -> None:
    module = parse_module(program(kind, ELEMENTS[element][0]))
    arrays = inputs(kind, element)
    with np.errstate(all="ignore"):
        expected = kind.semantics.numpy(*arrays)
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
    x, y = inputs(ElementwiseKind.ADD, element)
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
