"""Sorting on traced arrays: ``np.sort``, ``np.argsort``, ``np.searchsorted``,
``np.unique`` and ``np.median``.

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

``np.unique`` returns as many values as the data has distinct ones, a
length no static or symbolic size can say, so irc takes the ``size=`` that
``jax.numpy.unique`` adds (NumPy's own signature has none, hence an
intercepted name, ``irc.capture.intercept``): the first ``size`` sorted
unique values, padded. It is a sort, a mark on the first of each run of
ties, a running count of the marks (each element's slot) and gathers.

``np.median`` is NumPy's: the reduced axes moved last and merged, sorted,
the middle one or the mean of the middle two (ints and bools in float64,
float16 averaged in float32), NaN where the slice holds one (sorted last).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irc.capture import layout
from irc.capture.intercept import creation
from irc.capture.numpy_api import diagonal_mask, reduce, scan
from irc.capture.ops import (
    Operand,
    as_strong,
    binary,
    cast,
    compare,
    emit,
    normalize_axes,
    normalize_axis,
    result_dtype,
    select,
    splat,
)
from irc.capture.tensor import FUNCTION_HANDLERS, Tensor
from irc.capture.trace import tracing_error
from irc.dialects import graph, sym
from irc.dtypes import FLOAT16, FLOAT32, FLOAT64, INT64
from irc.errors import IrcShapeError
from irc.primitives.builtin import ADD, AND, DIV, MUL, OR, SUB
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


def _last_axis_ranks(rows: Tensor) -> Tensor:
    """Where each element of ``rows`` goes in its row's stable sort (along
    the last, static, axis)."""
    n = int(rows.type.dims[-1])
    if n <= 1:
        return splat(0, INT64, rows.type.dims)
    mine = layout.expand_dims(rows, -1)  # [..., i, 1]
    others = layout.expand_dims(rows, -2)  # [..., 1, j]
    size = SymExpr.const(n)
    earlier = diagonal_mask(size, size, -1, "le")  # j < i
    before = binary(
        OR, _precedes(others, mine), binary(AND, _ties(others, mine), earlier)
    )
    return reduce("sum", before, -1)  # [..., i]


def _permutation(ranks: Tensor) -> Tensor:
    """The stable argsort whose ``ranks`` are given: ``i`` at ``rank[i]``."""
    n = int(ranks.type.dims[-1])
    if n <= 1:
        return ranks  # zeros
    size = SymExpr.const(n)
    positions = emit(graph.IotaOp(0, graph.TensorType((size, size), INT64.ir_type)))
    indices = emit(graph.IotaOp(1, graph.TensorType((size, size), INT64.ir_type)))
    placed = compare("eq", layout.expand_dims(ranks, -2), positions)  # [..., k, i]
    return reduce("sum", select(placed, indices, 0), -1)


def _last_axis_permutation(rows: Tensor) -> Tensor:
    """The stable argsort of ``rows`` along its last (static) axis."""
    return _permutation(_last_axis_ranks(rows))


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


def _static_size(size: Any) -> int:
    """``size=`` as the int the result's length needs, or the refusal that
    says how to pass it."""
    if size is None:
        raise tracing_error(
            "np.unique of a traced array has as many elements as the data has "
            "distinct values, a size no static or symbolic dim can give: pass "
            "size=k (a static int) for the first k sorted unique values, padded "
            "with fill_value (default: the smallest). NumPy's np.unique has no "
            "size=; irc accepts it in traced code, as jax.numpy.unique does, where "
            "the traced code looks up np.unique (not a name imported before the "
            "trace)"
        )
    if isinstance(size, bool) or not isinstance(size, int | np.integer):
        raise tracing_error(
            f"np.unique: size= must be a static int, got {size!r}", IrcShapeError
        )
    if size < 0:
        raise tracing_error(f"np.unique: size= must be >= 0, got {size}", IrcShapeError)
    return int(size)


def _fill(fill_value: Any, like: Tensor) -> Tensor:
    """``fill_value`` as a 0-d tensor of ``like``'s dtype, cast as ``np.full``
    casts it."""
    if isinstance(fill_value, Tensor):
        if fill_value.type.rank != 0:
            raise tracing_error(
                "np.unique: fill_value must be a scalar, got an array of rank "
                f"{fill_value.type.rank}",
                IrcShapeError,
            )
        return cast(fill_value, like.irc_dtype)
    constant = np.asarray(fill_value)
    if constant.ndim != 0:
        raise tracing_error(
            f"np.unique: fill_value must be a scalar, got shape {constant.shape}",
            IrcShapeError,
        )
    return splat(constant.astype(like.dtype).item(), like.irc_dtype, ())


def _iota(length: int) -> Tensor:
    size = SymExpr.const(length)
    return emit(graph.IotaOp(0, graph.TensorType((size,), INT64.ir_type)))


def _take(table: Tensor, indices: Tensor) -> Tensor:
    """``table[indices]`` along axis 0, the indices in range by construction
    (no wrapping of negative ones)."""
    return emit(graph.TakeOp(table.value, indices.value, 0))


def _run_starts(ordered: Tensor, equal_nan: bool) -> Tensor:
    """Whether each element of the sorted ``ordered`` starts a run of equal
    values (NaNs one run when ``equal_nan``, each its own otherwise)."""
    positions = _iota(int(ordered.type.dims[0]))
    earlier = select(compare("gt", positions, 0), binary(SUB, positions, 1), 0)
    previous = _take(ordered, earlier)
    same = _ties(ordered, previous) if equal_nan else compare("eq", ordered, previous)
    return binary(OR, compare("eq", positions, 0), compare("eq", same, False))


def _results(values: Tensor, extras: list[tuple[bool, Tensor]]) -> Any:
    """NumPy's return: the values alone, or a tuple with the extras asked."""
    asked = [tensor for wanted, tensor in extras if wanted]
    return (values, *asked) if asked else values


def _unique_of_empty(
    tensor: Tensor, length: int, fill: Tensor | None, returns: tuple[bool, ...]
) -> Any:
    """All padding: ``fill`` (required when there is any), index and count
    0, and an empty inverse of the input's shape."""
    if fill is None and length:
        raise tracing_error(
            "np.unique of an empty array with size > 0: there is no smallest "
            "value to pad with; pass fill_value=",
            IrcShapeError,
        )
    values = splat(0, tensor.irc_dtype, (length,))
    if fill is not None:
        values = layout.broadcast_view(fill, values.type.dims)
    zeros = splat(0, INT64, (length,))
    extras = [zeros, splat(0, INT64, tensor.type.dims), zeros]
    return _results(values, list(zip(returns, extras, strict=True)))


def unique(
    ar: Operand,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Any = None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,  # NumPy 2.3's; irc's values are always sorted
    size: Any = None,
    fill_value: Any = None,
) -> Any:
    """``np.unique`` with ``jax.numpy.unique``'s ``size=`` and ``fill_value=``:
    NumPy's values (sorted, NaNs last), the first ``size`` of them, padded
    past the last with ``fill_value`` (default: the smallest value, as JAX);
    the index of the padding is the smallest value's, its count 0, and the
    inverse is NumPy's (slots from ``size`` on where values were cut off)."""
    length = _static_size(size)
    if axis is not None:
        raise tracing_error(
            "np.unique: axis= (unique rows or slices) is not supported; irc "
            "finds the unique elements of the flattened array (axis=None)"
        )
    tensor = layout.as_tensor(ar)
    flat, _ = _sort_axis(tensor, None, "np.unique")
    fill = None if fill_value is None else _fill(fill_value, flat)
    returns = (return_index, return_inverse, return_counts)
    n = int(flat.type.dims[0])
    if n == 0:
        return _unique_of_empty(tensor, length, fill, returns)
    ranks = _last_axis_ranks(flat)
    order = _permutation(ranks)
    ordered = _take(flat, order)
    slots = scan("sum", _run_starts(ordered, equal_nan))  # 1 + each one's slot
    # starts[k]: how many sorted elements lie in the runs before run k.
    bounds = layout.expand_dims(_iota(length + 1), -1)
    starts = reduce("sum", compare("le", layout.expand_dims(slots, 0), bounds), -1)
    kept = _iota(length)
    first, following = _take(starts, kept), _take(starts, binary(ADD, kept, 1))
    valid = compare("lt", kept, _take(slots, splat(n - 1, INT64, ())))
    at = select(valid, first, 0)  # the padding gathers the smallest value
    values = _take(ordered, at)
    if fill is not None:
        values = select(valid, values, fill)
    inverse = binary(SUB, _take(slots, ranks), 1)
    extras = [
        _take(order, at),
        layout.reshape(inverse, tensor.type.dims),
        binary(SUB, following, first),
    ]
    return _results(values, list(zip(returns, extras, strict=True)))


def median(
    a: Operand,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Tensor:
    """``np.median`` over ``axis`` (an int, a tuple or None), whose merged
    extent irc can sort (static, up to ``MAX_SORT_EXTENT``): the middle
    sorted element or the mean of the middle two, NaN where the slice holds
    a NaN, NaN for an empty slice (NumPy warns). ``overwrite_input`` lets NumPy reorder
    the input in place; irc's arrays are values, so it changes nothing."""
    if out is not None:
        raise tracing_error(
            "np.median: out= is not supported; assign the result instead"
        )
    tensor = layout.as_tensor(a)
    dims, rank = tensor.type.dims, tensor.type.rank
    axes = normalize_axes(axis, rank)
    kept = [i for i in range(rank) if i not in axes]
    # NumPy's median over several axes is one over their merged extent.
    rows = layout.transpose(tensor, [*kept, *axes])
    rows = layout.reshape(
        rows, [*(dims[i] for i in kept), sym.product(dims[i] for i in axes)]
    )
    rows, _ = _sort_axis(rows, -1, "np.median")
    middle = _middle(rows)
    if keepdims:
        middle = layout.reshape(
            middle, [SymExpr.const(1) if i in axes else d for i, d in enumerate(dims)]
        )
    return as_strong(middle)


def _middle(rows: Tensor) -> Tensor:
    """The median along the last (static) axis of ``rows``, in NumPy's type:
    float64 for ints and bools (a mean's), a float's own type otherwise."""
    element = rows.irc_dtype if rows.irc_dtype.kind == "f" else FLOAT64
    n = int(rows.type.dims[-1])
    if n == 0:
        return splat(np.nan, element, rows.type.dims[:-1])
    ordered = _gather_rows(rows, _last_axis_permutation(rows))
    if n % 2:
        value = cast(_at(ordered, n // 2), element)
    else:
        # NumPy's mean of the two: their sum (float16's in float32, whose
        # mean NumPy accumulates there; -0.0 + -0.0 keeps the sign, which a
        # reduction from 0.0 would not) halved, rounded once.
        working = FLOAT32 if element == FLOAT16 else element
        lower, upper = (cast(_at(ordered, k), working) for k in (n // 2 - 1, n // 2))
        value = cast(binary(DIV, binary(ADD, lower, upper), 2), element)
    if rows.irc_dtype.kind != "f":
        return value
    # NaNs sort last: the slice holds one where its last element is one.
    last = _at(ordered, n - 1)
    return select(compare("ne", last, last), np.nan, value)


def _at(rows: Tensor, index: int) -> Tensor:
    """``rows[..., index]``."""
    axis = rows.type.rank - 1
    element = layout.slice_axis(rows, axis, SymExpr.const(index), SymExpr.const(1))
    return layout.reshape(element, rows.type.dims[:-1])


FUNCTION_HANDLERS[np.sort] = sort
FUNCTION_HANDLERS[np.argsort] = argsort
FUNCTION_HANDLERS[np.searchsorted] = searchsorted
# NumPy's dispatcher refuses size=, so the traced code's lookup of np.unique
# is intercepted; a call that still reaches NumPy's dispatch has no size=.
FUNCTION_HANDLERS[np.unique] = unique
creation("unique")(lambda original: unique)
FUNCTION_HANDLERS[np.median] = median
