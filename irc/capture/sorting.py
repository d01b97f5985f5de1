"""Sorting on traced arrays: ``np.sort``, ``np.argsort``, ``np.searchsorted``.

irc has no sort primitive. Each function here is built from graph ops that
every level already lowers, fuses and differentiates (comparisons, sums,
iota, take), so no new op has to cross every level.

A sort along an axis of static extent ``n`` ranks each element by counting
what precedes it (``n * n`` comparisons per row, hence ``MAX_SORT_EXTENT``):
``rank[i]`` is the number of ``x[j] < x[i]`` plus the number of ``x[j] ==
x[i]`` with ``j < i``, NaN counting as greater than every number and NaNs as
equal, so the order is NumPy's stable one with NaNs last. The permutation
holds ``i`` at position ``rank[i]`` (a one-hot sum over ``i``), and the
sorted array is ``x`` gathered by it: its gradient is ``np.take``'s, a
scatter back through the permutation.

``np.unique`` is refused: its result's length is the number of distinct
values, which the data decides and no static or symbolic size can say.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from irc.capture import layout
from irc.capture.numpy_api import diagonal_mask, reduce
from irc.capture.ops import (
    Operand,
    binary,
    cast,
    compare,
    emit,
    normalize_axis,
    result_dtype,
    select,
    splat,
)
from irc.capture.tensor import FUNCTION_HANDLERS, Tensor
from irc.capture.trace import tracing_error
from irc.dialects import graph, sym
from irc.dtypes import INT64
from irc.errors import IrcShapeError
from irc.primitives.builtin import ADD, AND, MUL, OR
from irc.shapes import SymExpr

#: The longest axis irc sorts: ranking costs ``n * n`` comparisons per row.
MAX_SORT_EXTENT = 1024

#: NumPy's sort kinds, by the first letter NumPy reads of ``kind``.
_KIND_LETTERS = "qmhs"


def _precedes(a: Tensor, b: Tensor) -> Tensor:
    """``a < b`` in NumPy's sort order, where NaN follows every number."""
    less = compare("lt", a, b)
    if result_dtype([a, b]).kind != "f":
        return less
    nan_after_number = binary(AND, compare("ne", b, b), compare("eq", a, a))
    return binary(OR, less, nan_after_number)


def _ties(a: Tensor, b: Tensor) -> Tensor:
    """``a == b`` in NumPy's sort order, where NaNs are equal (and ``-0.0``
    equals ``0.0``, keeping the order it came in, as a stable sort does)."""
    equal = compare("eq", a, b)
    if result_dtype([a, b]).kind != "f":
        return equal
    both_nan = binary(AND, compare("ne", a, a), compare("ne", b, b))
    return binary(OR, equal, both_nan)


def _check_kind(function: str, kind: Any, stable: Any) -> None:
    """Every kind of sort is accepted: irc's sort is stable, and a stable
    order is a valid result of NumPy's unstable kinds too."""
    if kind is not None and stable is not None:
        raise tracing_error(
            f"{function}: kind= and stable= cannot both be given (as in NumPy)"
        )
    if kind is not None and not (
        isinstance(kind, str) and kind[:1].lower() in _KIND_LETTERS
    ):
        raise tracing_error(
            f"{function}: sort kind must be 'quicksort', 'mergesort', 'heapsort' "
            f"or 'stable', got {kind!r}"
        )


def _refuse_order(function: str, order: Any) -> None:
    if order is not None:
        raise tracing_error(
            f"{function}: order= sorts structured arrays by field, which irc does "
            "not have; sort a plain array"
        )


def _sort_axis(tensor: Tensor, axis: Any, function: str) -> tuple[Tensor, int]:
    """The array and the axis it is sorted along (``None``: the flattened
    array), checked to have a static extent irc can rank."""
    if axis is None:
        tensor, axis = layout.reshape(tensor, (-1,)), 0
    elif tensor.type.rank == 0:
        raise tracing_error(
            f"{function}: a 0-d array has no axis {axis}; pass axis=None",
            IrcShapeError,
        )
    axis = normalize_axis(axis, tensor.type.rank)
    extent = tensor.type.dims[axis]
    if not extent.is_constant:
        raise tracing_error(
            f"{function} along an axis of symbolic size {extent}: irc sorts "
            f"static extents only (up to {MAX_SORT_EXTENT}); give that axis a "
            "static size in the TensorSpec (other axes may stay symbolic)",
            IrcShapeError,
        )
    if int(extent) > MAX_SORT_EXTENT:
        raise tracing_error(
            f"{function} along an axis of {int(extent)} elements: irc sorts by "
            f"ranking, n*n comparisons, up to {MAX_SORT_EXTENT} elements",
            IrcShapeError,
        )
    return tensor, axis


def _to_last(tensor: Tensor, axis: int) -> Tensor:
    """``tensor`` with ``axis`` moved last, or back from last (a swap)."""
    permutation = list(range(tensor.type.rank))
    permutation[axis], permutation[-1] = permutation[-1], permutation[axis]
    return layout.transpose(tensor, permutation)


def _last_axis_permutation(rows: Tensor) -> Tensor:
    """The stable argsort of ``rows`` along its last (static) axis."""
    n = int(rows.type.dims[-1])
    dims = rows.type.dims
    if n <= 1:
        return splat(0, INT64, dims)
    mine = layout.expand_dims(rows, -1)  # [..., i, 1]
    others = layout.expand_dims(rows, -2)  # [..., 1, j]
    size = SymExpr.const(n)
    earlier = diagonal_mask(size, size, -1, "le")  # j < i
    before = binary(
        OR, _precedes(others, mine), binary(AND, _ties(others, mine), earlier)
    )
    ranks = reduce("sum", before, -1)  # [..., i]
    positions = emit(graph.IotaOp(0, graph.TensorType((size, size), INT64.ir_type)))
    indices = emit(graph.IotaOp(1, graph.TensorType((size, size), INT64.ir_type)))
    placed = compare("eq", layout.expand_dims(ranks, -2), positions)  # [..., k, i]
    return reduce("sum", select(placed, indices, 0), -1)


def _gather_rows(rows: Tensor, permutation: Tensor) -> Tensor:
    """``np.take_along_axis(rows, permutation, -1)``: one ``graph.take`` from
    the flattened rows at each row's offset plus its permuted index."""
    dims = rows.type.dims
    n = int(dims[-1])
    count = sym.product(dims[:-1])
    flat = layout.reshape(rows, (-1,))
    starts = emit(graph.IotaOp(0, graph.TensorType((count, 1), INT64.ir_type)))
    offsets = binary(
        ADD, binary(MUL, starts, n), layout.reshape(permutation, (count, n))
    )
    # In range by construction: no wrapping of negative indices.
    return layout.reshape(emit(graph.TakeOp(flat.value, offsets.value, 0)), dims)


def argsort(
    value: Operand,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    *,
    stable: Any = None,
) -> Tensor:
    """``np.argsort``: the stable permutation, int64, for every ``kind``."""
    _check_kind("np.argsort", kind, stable)
    _refuse_order("np.argsort", order)
    tensor, axis = _sort_axis(layout.as_tensor(value), axis, "np.argsort")
    rows = _to_last(tensor, axis)
    return _to_last(_last_axis_permutation(rows), axis)


def sort(
    value: Operand,
    axis: Any = -1,
    kind: Any = None,
    order: Any = None,
    *,
    stable: Any = None,
) -> Tensor:
    """``np.sort``: the array gathered by its stable argsort, NaNs last."""
    _check_kind("np.sort", kind, stable)
    _refuse_order("np.sort", order)
    tensor, axis = _sort_axis(layout.as_tensor(value), axis, "np.sort")
    rows = _to_last(tensor, axis)
    return _to_last(_gather_rows(rows, _last_axis_permutation(rows)), axis)


def searchsorted(
    a: Operand, v: Operand, side: Any = "left", sorter: Any = None
) -> Tensor:
    """``np.searchsorted`` of a sorted 1-D ``a`` (static or symbolic
    length): the number of elements of ``a`` before each ``v`` (``side=
    'left'``) or not after it (``'right'``), in NumPy's order (NaN last), as
    a sum over a broadcast comparison rather than a binary search."""
    if sorter is not None:
        raise tracing_error(
            "np.searchsorted: sorter= is not supported; pass the sorted array "
            "(np.take(a, sorter))"
        )
    if side not in ("left", "right"):
        raise tracing_error(
            f"np.searchsorted: side must be 'left' or 'right', got {side!r}"
        )
    table = layout.as_tensor(a)
    if table.type.rank != 1:
        raise tracing_error(
            f"np.searchsorted needs a 1-D sorted array, got rank {table.type.rank}",
            IrcShapeError,
        )
    element = result_dtype([table, v])
    needles = layout.expand_dims(cast(layout.as_tensor(v), element), -1)
    table = cast(table, element)
    if side == "left":
        counted = _precedes(table, needles)
    else:
        counted = compare("eq", _precedes(needles, table), False)
    return reduce("sum", counted, -1)


def _unique(value: Operand, *args: Any, **kwargs: Any) -> NoReturn:
    raise tracing_error(
        "np.unique of a traced array has as many elements as the data has "
        "distinct values, a size no static or symbolic dim can give; sort "
        "(np.sort) and mark the first of each run (s[1:] != s[:-1]) instead"
    )


FUNCTION_HANDLERS[np.sort] = sort
FUNCTION_HANDLERS[np.argsort] = argsort
FUNCTION_HANDLERS[np.searchsorted] = searchsorted
FUNCTION_HANDLERS[np.unique] = _unique
