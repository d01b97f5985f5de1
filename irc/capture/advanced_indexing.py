"""NumPy's advanced indexing with integer arrays: reads with several index
arrays (``x[np.arange(B), labels]``, ``x[i, :, j]``), writes through index
arrays (``x[idx] = v``, ``x[idx] += v``) and ``np.add.at`` with any index.

A key is taken apart into its *basic* part (slices and ints: one window of
``x``, the int axes then dropped) and its *components*: the integer arrays,
which broadcast together to one index shape ``S``. NumPy puts the ``S`` axes
where the first advanced index (array or int) stands when the advanced
indices are adjacent in the key, and first otherwise; every form below
computes the *gather form* ``[S..., slice axes...]`` and one transpose and
reshape move it to NumPy's placement (``None`` axes included).

Two forms, both from ops every level has (so they lower, fuse and
differentiate like any other):

- **linear** (no component is a batch index, below): the indexed axes are
  moved first and merged into one of size ``E`` (their product); the
  components become one linear index ``sum_j i_j * stride_j`` (int64, each
  ``i_j`` wrapped as NumPy wraps negative indices) and a read is one
  ``graph.take`` along the merged axis, ``np.add.at`` one
  ``graph.scatter_add``. A component outside ``[-n, n)`` makes the linear
  index -1, which the reference interpreter reports (``ExecutionError``)
  and the compiled kernels mask (a read gives 0, an add adds nothing).
- **one-hot** (some component is a *batch index*: an ``np.arange`` of the
  indexed axis along an axis of ``S``, as in ``logp[np.arange(B), labels]``):
  the batch axes of ``x`` are aligned with their ``S`` axes, and every other
  indexed axis is matched by a comparison of an iota with its component, so
  ``x[arange(B), labels]`` is ``sum(where(iota == labels[:, None], x, 0),
  -1)``: one row reduction that fuses with what makes ``x``, whose gradient
  is an elementwise select (a linear ``take`` would merge ``B`` into the
  gathered axis, and its gradient's ``scatter_add`` would cost ``B`` times
  ``B * V``). An index outside ``[-n, n)`` matches no position: a read gives
  0, a write writes nothing, on every backend.

Writes ``x[key] = v`` follow NumPy's observed rule for repeated positions,
the last update (in the C order of ``S``) wins: each target position finds
the greatest order of the updates naming it (a one-hot ``max`` reduction)
and takes that update's value; ``x[idx] += v`` is Python's read, add and
write, so a repeated index adds once, as in NumPy, where ``np.add.at``
accumulates. A write compares every update with every position of the
indexed axes, so it costs ``|S|`` times their size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from irc.capture import layout
from irc.capture.ops import (
    as_dim,
    binary,
    broadcast_shapes,
    broadcast_to,
    cast,
    compare,
    emit,
    materialize,
    select,
    splat,
)
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import current_trace, tracing_error
from irc.capture.views import Window, assign
from irc.dialects import graph, sym
from irc.dtypes import BOOL, INT32, INT64, DType
from irc.dtypes import dtype as to_dtype
from irc.errors import IrcShapeError, IrcTypeError
from irc.primitives.builtin import ADD, AND, MUL
from irc.shapes import SymExpr

__all__ = ["add_at", "gather", "scatter_set"]

_ONE = SymExpr.const(1)


@dataclass
class IndexKey:
    """A key with index arrays, taken apart against an array of ``dims``."""

    window: Window  # the basic part: slices, ints (size 1), whole indexed axes
    window_dims: tuple[SymExpr, ...]  # the window's shape (x's rank)
    core_dims: tuple[SymExpr, ...]  # the window's shape, int axes dropped
    array_axes: list[int]  # core axes indexed by the components, in key order
    slice_axes: list[int]  # core axes kept (slices), in order
    components: list[Tensor]  # the integer index arrays, in key order
    shape: tuple[SymExpr, ...]  # S: the components' broadcast shape
    slices_before: int  # slice axes NumPy puts before the S axes
    nones: list[int]  # result axes that are None's new axes

    @property
    def extents(self) -> list[SymExpr]:
        return [self.core_dims[a] for a in self.array_axes]

    @property
    def slice_dims(self) -> list[SymExpr]:
        return [self.core_dims[a] for a in self.slice_axes]

    @property
    def result_dims(self) -> tuple[SymExpr, ...]:
        """The shape of ``x[key]``, as NumPy gives it."""
        slices = self.slice_dims
        dims = [*slices[: self.slices_before], *self.shape]
        dims += slices[self.slices_before :]
        for position in self.nones:
            dims.insert(position, _ONE)
        return tuple(dims)


def parse(dims: Sequence[SymExpr], items: tuple) -> IndexKey:
    """Take apart a key (expanded by ``layout.expand_key``) with at least one
    index array, for an array of shape ``dims``."""
    windows: list[tuple[SymExpr, SymExpr, int]] = []  # (offset, size, stride)
    kinds: list[str] = []  # per key item: "none", "slice", "array" or "int"
    components: list[Tensor] = []
    for item in items:
        if item is None:
            kinds.append("none")
            continue
        kind, window, component = _item(item, dims[len(windows)])
        kinds.append(kind)
        windows.append(window)
        if component is not None:
            components.append(component)
    offsets, sizes, strides = zip(*windows)
    core = [k for k in kinds if k in ("slice", "array")]
    advanced = [p for p, k in enumerate(kinds) if k in ("array", "int")]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    before = kinds[: advanced[0]] if adjacent else []
    shape = broadcast_shapes(*(c.type.dims for c in components))
    return IndexKey(
        window=Window(offsets, sizes, strides),
        window_dims=sizes,
        core_dims=tuple(s for s, k in zip(sizes, _axis_kinds(kinds)) if k != "int"),
        array_axes=[a for a, k in enumerate(core) if k == "array"],
        slice_axes=[a for a, k in enumerate(core) if k == "slice"],
        components=components,
        shape=shape,
        slices_before=before.count("slice"),
        nones=_none_positions(kinds, adjacent, len(shape)),
    )


def _item(
    item: Any, extent: SymExpr
) -> tuple[str, tuple[SymExpr, SymExpr, int], Tensor | None]:
    """One key item's kind, its window on an axis of ``extent`` (an index
    array takes the whole axis, an int one element), and its index array."""
    if isinstance(item, slice):
        return "slice", layout._slice_window(extent, item), None
    if layout.is_index_array(item):
        return "array", (SymExpr.const(0), extent, 1), _component(item, extent)
    start = layout._normalize_index(as_dim(item, "an index"), extent)
    return "int", (start, _ONE, 1), None


def _axis_kinds(kinds: list[str]) -> list[str]:
    return [k for k in kinds if k != "none"]


def _none_positions(kinds: list[str], adjacent: bool, rank: int) -> list[int]:
    """The result axes of the key's ``None`` items: the S block stands at
    the first advanced item when the advanced items are adjacent, first
    otherwise."""
    positions, axis, placed = [], 0, False
    if not adjacent:
        axis, placed = rank, True
    for kind in kinds:
        if kind == "none":
            positions.append(axis)
            axis += 1
        elif kind == "slice":
            axis += 1
        elif not placed:
            axis, placed = axis + rank, True
    return positions


def _component(item: Any, extent: SymExpr) -> Tensor:
    """An index array as a traced integer array; constant indices outside
    ``[-extent, extent)`` are NumPy's IndexError at trace time."""
    if isinstance(item, list | tuple):
        array = np.asarray(item)
        item = array.astype(np.int64) if array.size == 0 else array
    if isinstance(item, np.ndarray):
        if item.dtype.kind not in "iu":
            raise tracing_error(
                f"arrays used as indices must be of integer type, got {item.dtype}",
                IrcTypeError,
            )
        if extent.is_constant and item.size:
            bad = (item < -int(extent)) | (item >= int(extent))
            if bad.any():
                raise tracing_error(
                    f"index {item[bad].flat[0]} is out of bounds for an axis of "
                    f"size {extent} (NumPy: IndexError)",
                    IrcShapeError,
                )
        item = layout.as_tensor(item.astype(np.int64))
    if item.irc_dtype.kind != "i":
        raise tracing_error(
            f"arrays used as indices must be of integer type, got "
            f"{item.irc_dtype.name}; cast them with .astype(np.int64)",
            IrcTypeError,
        )
    return item


# ----- the parts every form shares ---------------------------------------------


def _core(x: Tensor, key: IndexKey) -> Tensor:
    """``x``'s window, its int axes dropped."""
    window = Tensor(key.window.forward(x.value))
    return _reshape(window, key.core_dims)


def _reshape(value: Tensor, dims: Sequence[SymExpr]) -> Tensor:
    if value.type.dims == tuple(dims):
        return value
    return emit(graph.ReshapeOp(value.value, dims))


def _transpose(value: Tensor, permutation: Sequence[int]) -> Tensor:
    if list(permutation) == list(range(len(permutation))):
        return value
    return emit(graph.TransposeOp(value.value, list(permutation)))


def _inverse(permutation: Sequence[int]) -> list[int]:
    return [list(permutation).index(axis) for axis in range(len(permutation))]


def _placement(key: IndexKey) -> list[int]:
    """The permutation from the gather form ``[S..., slices...]`` to NumPy's
    order of the result's axes (``None`` axes aside)."""
    rank, before = len(key.shape), key.slices_before
    slices = [rank + j for j in range(len(key.slice_axes))]
    return slices[:before] + list(range(rank)) + slices[before:]


def _to_result(gathered: Tensor, key: IndexKey) -> Tensor:
    placed = _transpose(gathered, _placement(key))
    return _reshape(placed, key.result_dims)


def _from_result(value: Tensor, key: IndexKey) -> Tensor:
    """A value of ``x[key]``'s shape in the gather form."""
    placement = _placement(key)
    dims = [d for a, d in enumerate(key.result_dims) if a not in key.nones]
    placed = _reshape(value, dims)
    return _transpose(placed, _inverse(placement))


def _wrapped(component: Tensor, extent: SymExpr) -> tuple[Tensor, Tensor]:
    """A component in int64 with NumPy's wrapping of negative indices, and
    whether it lies in ``[0, extent)`` then."""
    index = cast(component, INT64)
    shifted = binary(ADD, index, SymDim(extent))
    index = select(compare("lt", index, 0), shifted, index)
    valid = binary(AND, compare("ge", index, 0), compare("lt", index, SymDim(extent)))
    return index, valid


def _iota(dims: Sequence[SymExpr], axis: int) -> Tensor:
    return emit(graph.IotaOp(axis, graph.TensorType(list(dims), INT64.ir_type)))


def _reduce(kind: str, value: Tensor, axes: Sequence[int]) -> Tensor:
    if not axes:
        return value
    return emit(graph.ReduceOp(kind, value.value, list(axes)))


# ----- batch components --------------------------------------------------------


def _batch_axes(key: IndexKey) -> dict[int, int]:
    """Component -> the ``S`` axis it is a batch index along: an
    ``np.arange`` of its indexed axis's whole extent along that axis of
    ``S`` (each ``S`` axis claimed once)."""
    facts = current_trace().facts
    batch: dict[int, int] = {}
    for number, component in enumerate(key.components):
        own = _iota_axis(component.value)
        if own is None:
            continue
        axis = own + len(key.shape) - component.type.rank
        extent = key.extents[number]
        if axis in batch.values() or not facts.prove_eq(key.shape[axis], extent):
            continue
        batch[number] = axis
    return batch


def _iota_axis(value: SSAValue, depth: int = 8) -> int | None:
    """The axis along which ``value`` counts ``0, 1, ...`` (its index along
    that axis at every position, an axis not of size 1), if it is one."""
    owner = value.owner
    dims = graph.tensor_type(value).dims
    if depth == 0:
        return None
    if isinstance(owner, graph.IotaOp):
        axis = owner.axis.value.data
        return None if dims[axis] == 1 else axis
    if isinstance(owner, graph.CastOp):
        # a narrower integer could wrap the count (np.int8 past 127)
        wide = to_dtype(graph.tensor_type(value).element_type) in (INT32, INT64)
        return _iota_axis(owner.operands[0], depth - 1) if wide else None
    if isinstance(owner, graph.ReshapeOp | graph.BroadcastOp):
        source = owner.operands[0]
        inner = _iota_axis(source, depth - 1)
        if inner is None:
            return None
        return _moved_axis(graph.tensor_type(source).dims, dims, inner, owner)
    if isinstance(owner, graph.ConstantOp) and not owner.is_splat:
        return _constant_iota_axis(owner.literal())
    return None


def _moved_axis(
    source: Sequence[SymExpr], result: Sequence[SymExpr], axis: int, op: Any
) -> int | None:
    """Where a reshape that only adds or drops size-1 axes, or a broadcast,
    moves ``axis``."""
    if isinstance(op, graph.BroadcastOp):
        moved = axis + len(result) - len(source)
        return moved if result[moved] == source[axis] else None
    if [d for d in source if d != 1] != [d for d in result if d != 1]:
        return None
    before = sum(1 for d in source[:axis] if d != 1)
    kept = [a for a, d in enumerate(result) if d != 1]
    return kept[before]


def _constant_iota_axis(values: np.ndarray) -> int | None:
    for axis, size in enumerate(values.shape):
        if size == 1:
            continue
        shape = [1] * values.ndim
        shape[axis] = size
        counting = np.broadcast_to(np.arange(size).reshape(shape), values.shape)
        if np.array_equal(values, counting):
            return axis
    return None


# ----- the linear form ------------------------------------------------------------


def _merged(core: Tensor, key: IndexKey) -> tuple[Tensor, list[int]]:
    """``core`` with its indexed axes first, merged into one; and the
    permutation that moved them."""
    permutation = key.array_axes + key.slice_axes
    moved = _transpose(core, permutation)
    merged_dims = [sym.product(key.extents), *key.slice_dims]
    return _reshape(moved, merged_dims), permutation


def _linear_index(key: IndexKey) -> Tensor:
    """One int64 index into the merged axis per position of ``S``; -1 where
    a component is out of range."""
    total: Tensor | None = None
    valid: Tensor | None = None
    for component, extent in zip(key.components, key.extents):
        index, ok = _wrapped(component, extent)
        if total is None:
            total, valid = index, ok
        else:
            assert valid is not None
            total = binary(ADD, binary(MUL, total, SymDim(extent)), index)
            valid = binary(AND, valid, ok)
    assert total is not None and valid is not None
    total = select(valid, total, splat(-1, INT64, ()))
    return broadcast_to(total, key.shape)


def _linear_gather(core: Tensor, key: IndexKey) -> Tensor:
    merged, _ = _merged(core, key)
    return emit(graph.TakeOp(merged.value, _linear_index(key).value, 0))


def _linear_scatter_add(core: Tensor, key: IndexKey, updates: Tensor) -> Tensor:
    """What ``np.add.at`` adds to ``core``, in ``core``'s layout."""
    merged, permutation = _merged(core, key)
    index = _linear_index(key)
    added = emit(graph.ScatterAddOp(updates.value, index.value, 0, merged.type))
    moved_dims = [core.type.dims[a] for a in permutation]
    return _transpose(_reshape(added, moved_dims), _inverse(permutation))


# ----- the one-hot form -----------------------------------------------------------


@dataclass
class OneHot:
    """The one-hot frame of a key with batch components.

    The frame orders ``core``'s axes as ``[batch..., gathered..., slices...]``
    (the batch axes in the order of their ``S`` axes): ``frame_dims``.
    ``hits`` is the ``[S..., gathered...]`` mask of the positions each
    index names."""

    key: IndexKey
    batch: dict[int, int]  # component -> its S axis
    permutation: list[int]  # core axes in the frame's order
    gathered: list[int]  # components that are matched, not aligned
    hits: Tensor | None  # None: every position (no gathered component)

    @property
    def rank(self) -> int:
        return len(self.key.shape)

    @property
    def free_axes(self) -> list[int]:
        """The S axes no batch component aligns: reduced over by a write."""
        return [a for a in range(self.rank) if a not in self.batch.values()]

    @property
    def gathered_dims(self) -> list[SymExpr]:
        return [self.key.extents[c] for c in self.gathered]

    def spread_dims(self) -> list[SymExpr]:
        """``[S..., gathered..., slices...]``."""
        return [*self.key.shape, *self.gathered_dims, *self.key.slice_dims]

    def expand(self, value: Tensor, present: Sequence[int]) -> Tensor:
        """``value``, whose axes are those of the spread form named by
        ``present`` (in order), broadcast to the spread form."""
        dims = self.spread_dims()
        shape = [d if a in present else _ONE for a, d in enumerate(dims)]
        return broadcast_to(_reshape(value, shape), dims)

    def frame(self, core: Tensor) -> Tensor:
        return _transpose(core, self.permutation)

    def unframe(self, framed: Tensor) -> Tensor:
        return _transpose(framed, _inverse(self.permutation))

    def aligned(self, core: Tensor) -> Tensor:
        """``core`` in the spread form: each batch axis at its S axis."""
        batch_s = sorted(self.batch.values())
        tail = range(self.rank, len(self.spread_dims()))
        return self.expand(self.frame(core), [*batch_s, *tail])

    def masked(self, value: Tensor, mask: Tensor | None) -> Tensor:
        """``value`` (spread form) where ``mask`` (``[S, gathered]``) holds,
        else 0."""
        if mask is None:
            return value
        rank = self.rank + len(self.gathered)
        full = self.expand(mask, range(rank))
        return select(full, value, splat(0, value.irc_dtype, ()))


def _one_hot(core: Tensor, key: IndexKey, batch: dict[int, int]) -> OneHot:
    by_s_axis = sorted(batch, key=lambda c: batch[c])
    gathered = [c for c in range(len(key.components)) if c not in batch]
    permutation = [key.array_axes[c] for c in by_s_axis]
    permutation += [key.array_axes[c] for c in gathered] + key.slice_axes
    frame = OneHot(key, batch, permutation, gathered, None)
    hit_dims = [*key.shape, *frame.gathered_dims]
    hits: Tensor | None = None
    for position, number in enumerate(gathered):
        index, _ = _wrapped(key.components[number], key.extents[number])
        index = broadcast_to(index, key.shape)
        index = _reshape(index, [*key.shape, *[_ONE] * len(gathered)])
        positions = _iota(hit_dims, len(key.shape) + position)
        hit = compare("eq", positions, broadcast_to(index, hit_dims))
        hits = hit if hits is None else binary(AND, hits, hit)
    frame.hits = hits
    return frame


def _one_hot_gather(core: Tensor, frame: OneHot) -> Tensor:
    picked = frame.masked(frame.aligned(core), frame.hits)
    rank = frame.rank
    return _reduce("sum", picked, range(rank, rank + len(frame.gathered)))


def _one_hot_add(core: Tensor, frame: OneHot, updates: Tensor) -> Tensor:
    """What ``np.add.at`` adds to ``core``, in ``core``'s layout."""
    rank = frame.rank
    slices = range(rank + len(frame.gathered), len(frame.spread_dims()))
    spread = frame.expand(updates, [*range(rank), *slices])
    summed = _reduce("sum", frame.masked(spread, frame.hits), frame.free_axes)
    return frame.unframe(summed)


def _one_hot_set(core: Tensor, frame: OneHot, updates: Tensor) -> Tensor:
    """``core`` with each position named by an index set to the last
    update naming it (C order of ``S``)."""
    key, rank = frame.key, frame.rank
    hit_dims = [*key.shape, *frame.gathered_dims]
    order = _s_order(key.shape)
    order = broadcast_to(
        _reshape(order, [*key.shape, *[_ONE] * len(frame.gathered)]), hit_dims
    )
    candidates = order
    if frame.hits is not None:
        candidates = select(frame.hits, order, splat(-1, INT64, ()))
    last = _reduce("max", candidates, frame.free_axes)  # [batch S..., gathered...]
    kept = [a for a in range(len(hit_dims)) if a not in frame.free_axes]
    last_dims = [d if a in kept else _ONE for a, d in enumerate(hit_dims)]
    winners = compare("eq", order, broadcast_to(_reshape(last, last_dims), hit_dims))
    slices = range(rank + len(frame.gathered), len(frame.spread_dims()))
    spread = frame.expand(updates, [*range(rank), *slices])
    values = _reduce("sum", frame.masked(spread, winners), frame.free_axes)
    written = compare("ge", last, 0)
    framed_rank = len(values.type.dims)
    written = broadcast_to(
        _reshape(
            written, [*written.type.dims, *[_ONE] * (framed_rank - written.type.rank)]
        ),
        values.type.dims,
    )
    return frame.unframe(select(written, values, frame.frame(core)))


def _s_order(shape: Sequence[SymExpr]) -> Tensor:
    """Each position's index in the C order of ``shape`` (int64)."""
    if not shape:
        return splat(0, INT64, ())
    total: Tensor | None = None
    for axis, extent in enumerate(shape):
        position = _iota(shape, axis)
        total = (
            position
            if total is None
            else binary(ADD, binary(MUL, total, SymDim(extent)), position)
        )
    assert total is not None
    return total


# ----- the entry points -----------------------------------------------------------


def gather(x: Tensor, items: tuple) -> Tensor:
    """``x[items]`` for an expanded key with index arrays."""
    key = parse(x.type.dims, items)
    element = x.irc_dtype
    core = _as_numeric(_core(x, key))
    batch = _batch_axes(key)
    if batch:
        gathered = _one_hot_gather(core, _one_hot(core, key, batch))
    else:
        gathered = _linear_gather(core, key)
    return _from_numeric(_to_result(gathered, key), element)


def add_at(x: Tensor, index: Any, values: Any) -> None:
    """``np.add.at(x, index, values)``: ``values`` broadcast to
    ``x[index]``'s shape and cast to ``x``'s dtype, added at each position
    the index names, repeated positions accumulating."""
    items = index if isinstance(index, tuple) else (index,)
    items = layout.expand_key(items, x.type.rank)
    if not any(layout.is_index_array(item) for item in items):
        x[items] = x[items] + values  # basic indices name each position once
        return
    key = parse(x.type.dims, items)
    if x.irc_dtype == BOOL:
        raise tracing_error(
            "np.add.at into a bool array is not supported; add into an integer "
            "array and compare it with 0",
            IrcTypeError,
        )
    updates = _from_result(materialize(values, x.irc_dtype, key.result_dims), key)
    core = _core(x, key)
    batch = _batch_axes(key)
    if batch:
        added = _one_hot_add(core, _one_hot(core, key, batch), updates)
    else:
        added = _linear_scatter_add(core, key, updates)
    _write_core(x, key, binary(ADD, core, added))


def scatter_set(x: Tensor, items: tuple, value: Any) -> None:
    """``x[items] = value`` for an expanded key with index arrays: the last
    update naming a position wins."""
    from irc.capture.writes import _assigned

    key = parse(x.type.dims, items)
    element = x.irc_dtype
    source = _assigned(value, element, key.result_dims)
    updates = _as_numeric(_from_result(source, key))
    core = _as_numeric(_core(x, key))
    frame = _one_hot(core, key, _batch_axes(key))
    written = _from_numeric(_one_hot_set(core, frame, updates), element)
    _write_core(x, key, written)


def _write_core(x: Tensor, key: IndexKey, core: Tensor) -> None:
    window = _reshape(core, key.window_dims)
    assign(x, key.window.backward(x.value, window.value))


def _as_numeric(value: Tensor) -> Tensor:
    """Bools as int32 (selects and sums of them)."""
    return cast(value, INT32) if value.irc_dtype == BOOL else value


def _from_numeric(value: Tensor, element: DType) -> Tensor:
    if element == BOOL:
        return compare("ne", value, 0)
    return value
