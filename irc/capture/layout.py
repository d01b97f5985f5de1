"""Ops that move elements without computing: reshape, transpose, slicing and
indexing, concatenation, splitting and gathering.

Where NumPy returns a view (basic indexing, reshape of a contiguous array,
transpose, squeeze, expand_dims, split, broadcast_to), so does capture
(``irc.capture.views``): writes through it reach the array it views."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from irc.capture.ops import (
    as_dim,
    as_size,
    binary,
    cast,
    compare,
    dense_constant,
    emit,
    equal_if,
    normalize_axis,
    result_dtype,
    select,
)
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import current_trace, tracing_error
from irc.capture.views import Broadcast, Reshape, Transpose, Window, copy, view_of
from irc.dialects import graph, sym
from irc.errors import IrcShapeError
from irc.primitives.builtin import ADD, MUL
from irc.shapes import ShapeError, SymExpr


def as_tensor(value: Any) -> Tensor:
    """A traced value, or a NumPy constant (only arrays can be laid out)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray | np.generic | bool | int | float | list | tuple):
        return dense_constant(np.asarray(value))
    raise tracing_error(f"expected an array, got {type(value).__name__}")


def reshape(value: Tensor, shape: Sequence[Any]) -> Tensor:
    """``np.reshape``: one ``-1`` dim is inferred by exact symbolic division."""
    if isinstance(shape, int | np.integer | SymDim):
        shape = (shape,)
    dims: list[SymExpr | None] = []
    for dim in shape:
        if isinstance(dim, int | np.integer) and dim == -1:
            dims.append(None)
        else:
            dims.append(as_size(dim, "a reshape dim"))
    if dims.count(None) > 1:
        raise tracing_error("reshape can infer only one -1 dim", IrcShapeError)
    total = sym.product(value.type.dims)
    known = sym.product([d for d in dims if d is not None])
    if None in dims:
        try:
            inferred = total.exact_div(known, current_trace().facts)
        except ShapeError as err:
            raise tracing_error(
                f"cannot reshape {_text(value.type.dims)} to {_shape_text(dims)}: "
                f"{err}",
                IrcShapeError,
            ) from None
        dims[dims.index(None)] = inferred
    elif not current_trace().facts.prove_eq(total, known):
        raise tracing_error(
            f"cannot reshape {_text(value.type.dims)} ({total} elements) to "
            f"{_shape_text(dims)} ({known} elements){equal_if(total, known)}",
            IrcShapeError,
        )
    target = tuple(d for d in dims if d is not None)
    if target == value.type.dims:
        return value
    return _reshaped_view(value, target)


def _reshaped_view(value: Tensor, dims: Sequence[SymExpr]) -> Tensor:
    """A reshape as NumPy's view: certain for a contiguous array or where only
    size-1 dims come and go; otherwise NumPy's choice of a view or a copy
    depends on the strides, and the view is marked inexact (a write through
    it, or a read after a write to what it views, is refused)."""
    exact = (
        value.view is None
        or value.view.contiguous
        or _without_units(value.type.dims) == _without_units(dims)
    )
    return view_of(value, Reshape(tuple(dims), exact))


def _without_units(dims: Sequence[SymExpr]) -> list[SymExpr]:
    return [d for d in dims if d != 1]


def transpose(value: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    rank = value.type.rank
    if axes is None:
        permutation = tuple(reversed(range(rank)))
    else:
        permutation = tuple(normalize_axis(a, rank) for a in axes)
        if sorted(permutation) != list(range(rank)):
            raise tracing_error(
                f"axes {tuple(axes)} are not a permutation of {rank} axes",
                IrcShapeError,
            )
    if permutation == tuple(range(rank)):
        return value
    return view_of(value, Transpose(permutation))


def expand_dims(value: Tensor, axis: int) -> Tensor:
    dims = list(value.type.dims)
    dims.insert(normalize_axis(axis, len(dims) + 1), SymExpr.const(1))
    return _reshaped_view(value, dims)


def broadcast_view(value: Tensor, dims: Sequence[SymExpr]) -> Tensor:
    """``np.broadcast_to``: a read-only view."""
    return view_of(value, Broadcast(tuple(dims)))


def squeeze(value: Tensor, axis: Any = None) -> Tensor:
    dims = value.type.dims
    if axis is None:
        drop = {i for i, d in enumerate(dims) if _is_unit(d)}
    else:
        axes = axis if isinstance(axis, tuple | list) else (axis,)
        drop = {normalize_axis(a, len(dims)) for a in axes}
        for index in drop:
            if dims[index] != 1:
                raise tracing_error(
                    f"cannot squeeze axis {index} of size {dims[index]}", IrcShapeError
                )
    return reshape(value, [d for i, d in enumerate(dims) if i not in drop])


def _is_unit(dim: SymExpr) -> bool:
    """Whether ``squeeze()`` drops an axis of size ``dim``. NumPy drops it
    when it is 1 at run time; a symbolic dim that could be 1 is kept, under
    a guard that it is not, so that a call with it 1 is an error, never a
    silently different shape."""
    facts = current_trace().facts
    if facts.prove_eq(dim, 1):
        return True
    if not facts.prove_le(2, dim):
        guard(
            dim,
            ">=",
            2,
            f"squeeze() with no axis keeps the axis of symbolic size {dim}, "
            "which NumPy drops when it is 1 (make that dim static to drop it)",
        )
    return False


def slice_axis(
    value: Tensor, axis: int, start: SymExpr, size: SymExpr, step: int = 1
) -> Tensor:
    """Take ``size`` elements along ``axis`` from ``start`` by ``step``."""
    rank = value.type.rank
    offsets = [SymExpr.const(0)] * rank
    sizes = list(value.type.dims)
    strides = [1] * rank
    offsets[axis], sizes[axis], strides[axis] = start, size, step
    if offsets[axis] == 0 and step == 1 and sizes[axis] == value.type.dims[axis]:
        return value
    return emit(graph.SliceOp(value.value, offsets, sizes, strides))


# ----- basic and advanced indexing ----------------------------------------


def getitem(value: Tensor, key: Any) -> Any:
    """``x[key]`` with NumPy's rules, for ints, slices (symbolic bounds too),
    ``None``, ``...``, one integer array (a ``graph.take``) and a boolean
    mask (a ``MaskRead``, which only a write under the same mask consumes).

    Basic indexing (no array in the key) is a view of ``x``: one window, then
    a reshape dropping the int axes and adding the ``None`` ones.
    """
    items = key if isinstance(key, tuple) else (key,)
    mask = boolean_mask(items)
    if mask is not None:
        from irc.capture.writes import MaskRead

        return MaskRead.of(value, mask)
    items = expand_key(items, value.type.rank)
    if any(is_index_array(item) for item in items):
        return _advanced_getitem(value, items)
    window, dims = basic_window(value, items)
    result = value
    if not window.is_whole(value.type.dims):
        result = view_of(value, window)
    if dims != result.type.dims:
        result = view_of(result, Reshape(dims))
    return result


def basic_window(value: Tensor, key: tuple) -> tuple[Window, tuple[SymExpr, ...]]:
    """The window of ``value`` that a basic index (expanded by
    ``expand_key``) selects, and the shape of ``value[key]``."""
    offsets: list[SymExpr] = []
    sizes: list[SymExpr] = []
    strides: list[int] = []
    dims: list[SymExpr] = []
    for item in key:
        if item is None:
            dims.append(SymExpr.const(1))
            continue
        extent = value.type.dims[len(offsets)]
        if isinstance(item, slice):
            start, size, step = _slice_window(extent, item)
            dims.append(size)
        else:
            start = _normalize_index(as_dim(item, "an index"), extent)
            size, step = SymExpr.const(1), 1
        offsets.append(start)
        sizes.append(size)
        strides.append(step)
    return Window(tuple(offsets), tuple(sizes), tuple(strides)), tuple(dims)


def boolean_mask(items: tuple) -> Tensor | None:
    """The boolean mask (traced, or a NumPy constant) that is the whole key,
    if it is one."""
    masks = [i for i in items if _is_boolean(i)]
    if not masks:
        return None
    if len(items) != 1:
        raise tracing_error(
            "a boolean mask combined with other indices is not supported; index "
            "with the mask alone (x[mask]) or use np.where(mask, x, 0)"
        )
    return as_tensor(masks[0])


def _is_boolean(item: Any) -> bool:
    if isinstance(item, Tensor):
        return item.irc_dtype.kind == "b"
    return isinstance(item, np.ndarray) and item.dtype == np.bool_


def _advanced_getitem(value: Tensor, key: tuple) -> Tensor:
    """``x[key]`` for a key with one integer array (several:
    ``irc.capture.advanced_indexing``).

    Each axis is indexed in place first (an int keeps a size-1 axis); then one
    transpose and one reshape put the result's axes where NumPy puts them:
    ``None`` axes at their place in the key, int axes dropped, and the index
    array's axes first when an int and the array are not adjacent in the key
    (NumPy's rule for separated advanced indices).
    """
    if sum(1 for item in key if is_index_array(item)) > 1:
        from irc.capture.advanced_indexing import gather

        return gather(value, key)
    result, axis = value, 0
    placement: list[int | None] = []  # per result axis: an axis of `result`, or new
    array_axes: list[int] = []
    advanced: list[int] = []  # key positions of ints and the array
    for position, item in enumerate(key):
        if item is None:
            placement.append(None)
        elif isinstance(item, slice):
            result = _slice(result, axis, item)
            placement.append(axis)
            axis += 1
        elif is_index_array(item):
            rank_before = result.type.rank
            result = take(result, item, axis)
            index_rank = result.type.rank - rank_before + 1
            array_axes = list(range(axis, axis + index_rank))
            placement.extend(array_axes)
            advanced.append(position)
            axis += index_rank
        else:
            index = _normalize_index(as_dim(item, "an index"), result.type.dims[axis])
            result = slice_axis(result, axis, index, SymExpr.const(1))
            advanced.append(position)
            axis += 1
    if array_axes and advanced != list(range(advanced[0], advanced[-1] + 1)):
        placement = array_axes + [p for p in placement if p not in array_axes]
    return _place_axes(result, placement)


def _place_axes(value: Tensor, placement: list[int | None]) -> Tensor:
    """Reorder ``value``'s axes as ``placement`` says, dropping the axes it
    does not name (all of size 1) and adding size-1 axes for ``None``."""
    kept = [p for p in placement if p is not None]
    dropped = [a for a in range(value.type.rank) if a not in kept]
    dims = [SymExpr.const(1) if p is None else value.type.dims[p] for p in placement]
    result = transpose(value, kept + dropped)
    if result.type.dims == tuple(dims):
        return result
    return emit(graph.ReshapeOp(result.value, dims))


def _wrapped_indices(indices: Tensor, extent: SymExpr) -> Tensor:
    """Indices with NumPy's wrapping of negative ones: ``graph.take`` needs
    them in ``[0, extent)``.

    Constant indices are wrapped at trace time; traced ones in the IR, as
    ``where(i < 0, i + extent, i)``, so that every backend reads NumPy's row.
    """
    owner = indices.value.owner
    if not isinstance(owner, graph.ConstantOp) or owner.is_splat:
        wrapped = binary(ADD, indices, SymDim(extent))
        return select(compare("lt", indices, 0), wrapped, indices)
    values = owner.literal()
    if not (values < 0).any():
        return indices
    if extent.is_constant:
        return dense_constant(np.where(values < 0, values + int(extent), values))
    negative = dense_constant((values < 0).astype(values.dtype))
    shift = binary(MUL, negative, SymDim(extent))
    return binary(ADD, indices, shift)


def is_index_array(item: Any) -> bool:
    return isinstance(item, Tensor | np.ndarray | list)


def expand_key(key: tuple, rank: int) -> tuple:
    ellipses = sum(1 for k in key if k is Ellipsis)
    if ellipses > 1:
        raise tracing_error("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > rank:
        raise tracing_error(
            f"too many indices: {used} for an array of rank {rank}", IrcShapeError
        )
    fill = (slice(None),) * (rank - used)
    if ellipses:
        # not key.index(Ellipsis): that compares traced arrays with ==
        position = next(k for k, item in enumerate(key) if item is Ellipsis)
        return key[:position] + fill + key[position + 1 :]
    return key + fill


def _normalize_index(index: SymExpr, extent: SymExpr) -> SymExpr:
    """A NumPy index as an offset: negative ones count from the end. What
    cannot be proven in range is guarded; what is provably out of range is an
    error."""
    facts = current_trace().facts
    zero = SymExpr.const(0)
    if facts.prove_lt(index, zero):
        index = index + extent
    if facts.prove_lt(index, zero) or facts.prove_le(extent, index):
        raise tracing_error(
            f"index {index} is out of bounds for an axis of size {extent}",
            IrcShapeError,
        )
    if not facts.prove_le(zero, index):
        guard(index, ">=", 0, f"index {index} must not be negative")
    if not facts.prove_lt(index, extent):
        guard(index, "<", extent, f"index {index} must be less than {extent}")
    return index


def _slice(value: Tensor, axis: int, item: slice) -> Tensor:
    start, size, step = _slice_window(value.type.dims[axis], item)
    return slice_axis(value, axis, start, size, step)


def _slice_window(extent: SymExpr, item: slice) -> tuple[SymExpr, SymExpr, int]:
    """(start, size, step) of a slice of an axis of ``extent``."""
    step = 1 if item.step is None else item.step
    if isinstance(step, np.integer):
        step = int(step)
    if not isinstance(step, int) or isinstance(step, bool) or step == 0:
        raise tracing_error(f"slice step must be a non-zero int, got {step!r}")
    if extent.is_constant and all(
        isinstance(b, int | np.integer | None) for b in (item.start, item.stop)
    ):
        start, stop, step = slice(item.start, item.stop, step).indices(int(extent))
        size = len(range(start, stop, step))
        return SymExpr.const(start), SymExpr.const(size), step
    if step < 0:
        if item.start is not None or item.stop is not None:
            raise tracing_error(
                "a negative slice step with symbolic bounds is not supported; "
                "reverse with x[::-1] and slice with a positive step"
            )
        return extent - 1, (extent).ceildiv(-step), step
    start = _bound(item.start, extent, SymExpr.const(0))
    stop = _bound(item.stop, extent, extent)
    facts = current_trace().facts
    if facts.prove_le(stop, start):
        size = SymExpr.const(0)  # an empty slice, as in NumPy
    else:
        if not facts.prove_le(start, stop):
            guard(start, "<=", stop, f"slice start {start} must not pass its stop")
        size = (stop - start).ceildiv(step)
    return start, size, step


def _bound(bound: Any, extent: SymExpr, default: SymExpr) -> SymExpr:
    """A slice bound in ``[0, extent]``; what cannot be proven is guarded
    (NumPy would clamp, which would make the shape depend on the values)."""
    if bound is None:
        return default
    facts = current_trace().facts
    value = as_dim(bound, "a slice bound")
    if facts.prove_lt(value, SymExpr.const(0)):
        value = value + extent
    if not facts.prove_le(SymExpr.const(0), value):
        guard(value, ">=", 0, f"slice bound {bound} must not be negative")
    if not facts.prove_le(value, extent):
        guard(value, "<=", extent, f"slice bound {value} must be at most {extent}")
    return value


def guard(lhs: SymExpr | int, predicate: str, rhs: SymExpr | int, reason: str) -> None:
    """State a fact the runtime will check, and assume it from here on."""
    fact = sym.FactAttr(lhs, predicate, rhs)
    current_trace().assume(fact, reason)


# ----- joining, splitting, gathering ----------------------------------------


def concatenate(values: Sequence[Any], axis: int | None = 0) -> Tensor:
    tensors = [as_tensor(v) for v in values]
    if not tensors:
        raise tracing_error("need at least one array to concatenate")
    if axis is None:
        tensors = [reshape(t, (-1,)) for t in tensors]
        axis = 0
    rank = tensors[0].type.rank
    if rank == 0:
        raise tracing_error("zero-dimensional arrays cannot be concatenated")
    axis = normalize_axis(axis, rank)
    element = result_dtype(tensors)
    tensors = [cast(t, element) for t in tensors]
    for index, tensor in enumerate(tensors):
        if tensor.type.rank != rank:
            raise tracing_error(
                f"concatenate: array {index} has rank {tensor.type.rank}, array 0 "
                f"has rank {rank}",
                IrcShapeError,
            )
    first = tensors[0].type.dims
    for index, tensor in enumerate(tensors[1:], 1):
        dims = list(first)
        dims[axis] = tensor.type.dims[axis]
        facts = current_trace().facts
        if any(not facts.prove_eq(a, b) for a, b in zip(dims, tensor.type.dims)):
            raise tracing_error(
                f"concatenate along axis {axis}: array {index} has shape "
                f"{_text(tensor.type.dims)}, array 0 has {_text(first)}",
                IrcShapeError,
            )
    if len(tensors) == 1:
        return copy(tensors[0])  # NumPy's concatenate always copies
    return emit(graph.ConcatOp([t.value for t in tensors], axis))


def stack(values: Sequence[Any], axis: int = 0) -> Tensor:
    tensors = [as_tensor(v) for v in values]
    if not tensors:
        raise tracing_error("need at least one array to stack")
    return concatenate([expand_dims(t, axis) for t in tensors], axis)


def split(value: Tensor, sections: Any, axis: int = 0) -> list[Tensor]:
    """``np.split``: equal parts need provable divisibility; a list gives the
    split points, which must be in order and within the axis (guarded when
    that cannot be proven)."""
    axis = normalize_axis(axis, value.type.rank)
    extent = value.type.dims[axis]
    if isinstance(sections, int | np.integer | SymDim) and not isinstance(
        sections, bool
    ):
        starts, sizes = _equal_parts(extent, as_dim(sections, "the number of sections"))
    else:
        points = [as_dim(p, "a split point") for p in sections]
        starts, sizes = _parts_between(extent, points)
    return [_axis_view(value, axis, s, n) for s, n in zip(starts, sizes)]


def _axis_view(value: Tensor, axis: int, start: SymExpr, size: SymExpr) -> Tensor:
    """The view of ``size`` elements along ``axis`` from ``start``."""
    offsets = [SymExpr.const(0)] * value.type.rank
    sizes = list(value.type.dims)
    offsets[axis], sizes[axis] = start, size
    window = Window(tuple(offsets), tuple(sizes), (1,) * value.type.rank)
    return value if window.is_whole(value.type.dims) else view_of(value, window)


def _equal_parts(
    extent: SymExpr, count: SymExpr
) -> tuple[list[SymExpr], list[SymExpr]]:
    if not count.is_constant or int(count) < 1:
        raise tracing_error(
            f"the number of sections must be a positive static int, got {count}"
        )
    try:
        size = extent.exact_div(count, current_trace().facts)
    except ShapeError as err:
        raise tracing_error(
            f"np.split of an axis of size {extent} into {count} equal parts: "
            f"{err}; declare a divisibility fact (facts=['{extent} % {count} "
            "== 0']) or pass split points",
            IrcShapeError,
        ) from None
    return [size * i for i in range(int(count))], [size] * int(count)


def _parts_between(
    extent: SymExpr, points: list[SymExpr]
) -> tuple[list[SymExpr], list[SymExpr]]:
    """The parts between split points, as NumPy cuts them; points are not
    clamped (that would make the shapes depend on the values): they must lie
    in order in ``[0, extent]``."""
    facts = current_trace().facts
    bounds = [SymExpr.const(0), *points, extent]
    for low, high in itertools.pairwise(bounds):
        if facts.prove_lt(high, low):
            raise tracing_error(
                f"split points must be in order within [0, {extent}]: {low} comes "
                f"before {high}",
                IrcShapeError,
            )
        if not facts.prove_le(low, high):
            guard(low, "<=", high, f"split point {low} must not pass {high}")
    return bounds[:-1], [high - low for low, high in itertools.pairwise(bounds)]


def take(value: Tensor, indices: Any, axis: int | None = None) -> Tensor:
    if axis is None:
        value, axis = reshape(value, (-1,)), 0
    axis = normalize_axis(axis, value.type.rank)
    index_tensor = as_tensor(indices)
    if index_tensor.irc_dtype.kind != "i":
        raise tracing_error(
            f"indices must be integers, got {index_tensor.irc_dtype}; cast them with "
            ".astype(np.int64)"
        )
    index_tensor = _wrapped_indices(index_tensor, value.type.dims[axis])
    return emit(graph.TakeOp(value.value, index_tensor.value, axis))


def _text(dims: Sequence[SymExpr]) -> str:
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _shape_text(dims: Sequence[SymExpr | None]) -> str:
    return "(" + ", ".join("-1" if d is None else str(d) for d in dims) + ")"
