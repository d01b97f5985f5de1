"""Index maps: where a layout op reads its operand, for an index of its result.

A layout op moves no data in a tiled kernel: its value at an index is its
operand's value at another index, and each function here (one per graph
op, in ``LAYOUT_RULES``) computes that index with the tiler's builder and
asks the tiler for the operand there. An ``Index`` holds one loop value per
dim of the result (scalars or tiles that broadcast together). The maps:

- ``graph.broadcast``: right-aligned, stretched (size-1) dims pinned to 0;
- ``graph.transpose``: the index permuted back;
- ``graph.slice``: ``offset + i * stride`` per dim (a window moved by the
  offset and scaled by a positive stride: see ``LoopBuilder.window``);
- ``graph.reshape``: the dims shared at both ends kept, only the middle
  linearised in the result's dims and delinearised in the operand's;
- ``graph.concat``: each operand read at the position shifted by its start,
  under the mask of its range, the pieces selected by the same masks; at a
  window or a constant that lies inside one operand's range (the piecewise
  pointwise form's), that operand alone, at the position less its start;
- ``graph.insert_slice``: piecewise like concat: inside the written window
  the source at ``(i - offset) / stride``, elsewhere the destination, each
  read under the mask of its piece;
- ``graph.take``: the indices read first (at the index's dims they span),
  out-of-range ones reading 0 rather than memory outside the table.

:func:`batch_broadcast` is NumPy's batch broadcasting of a matmul operand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue

from irc.dialects import graph as g
from irc.dialects import loop
from irc.lowering.fusion_to_loop.builder import Window, constant_int
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop.tiler import KernelTiler

Index = tuple[SSAValue, ...]


def tensor_type(value: SSAValue) -> g.TensorType:
    """The graph tensor type of ``value``."""
    assert isinstance(value.type, g.TensorType)
    return value.type


def broadcast(tiler: KernelTiler, op: g.BroadcastOp, index: Index) -> SSAValue:
    source = tensor_type(op.operands[0]).dims
    offset = len(index) - len(source)
    mapped = tuple(
        tiler.b.index(0) if dim == 1 else index[axis + offset]
        for axis, dim in enumerate(source)
    )
    return tiler.value_at(op.operands[0], mapped)


def transpose(tiler: KernelTiler, op: g.TransposeOp, index: Index) -> SSAValue:
    mapped: list[SSAValue] = [tiler.b.index(0)] * len(index)
    for result_axis, source_axis in enumerate(op.perm):
        mapped[source_axis] = index[result_axis]
    return tiler.value_at(op.operands[0], tuple(mapped))


def slice_(tiler: KernelTiler, op: g.SliceOp, index: Index) -> SSAValue:
    mapped = tuple(
        _slice_position(tiler, i, offset, stride)
        for i, offset, stride in zip(index, op.offset_list, op.stride_list)
    )
    return tiler.value_at(op.operands[0], mapped)


def _slice_position(
    tiler: KernelTiler, position: SSAValue, offset: SymExpr, stride: int
) -> SSAValue:
    """Where a slice reads its operand along one axis."""
    b = tiler.b
    window = b.window_of(position)
    if window is not None and stride > 0:
        moved = tiler.facts.simplify(offset + window.offset * stride)
        return b.window(window.lanes, moved, window.extent, window.stride * stride)
    return b.binary("add", b.size(offset), b.binary("mul", position, b.index(stride)))


def reshape(tiler: KernelTiler, op: g.ReshapeOp, index: Index) -> SSAValue:
    source = list(tensor_type(op.operands[0]).dims)
    target = list(tensor_type(op.results[0]).dims)
    # Dims shared at both ends map one to one; only the middle is
    # re-linearised.
    head = 0
    while head < min(len(source), len(target)) and source[head] == target[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(source), len(target)) - head
        and source[-1 - tail] == target[-1 - tail]
    ):
        tail += 1
    middle = tiler.b.linearize(
        index[head : len(target) - tail], target[head : len(target) - tail]
    )
    mapped = (
        *index[:head],
        *tiler.b.delinearize(middle, source[head : len(source) - tail]),
        *index[len(target) - tail :],
    )
    return tiler.value_at(op.operands[0], tuple(mapped))


def concat(tiler: KernelTiler, op: g.ConcatOp, index: Index) -> SSAValue:
    b = tiler.b
    axis = op.axis.value.data
    position = index[axis]
    piece = _operand_holding(tiler, op, position)
    if piece is not None:
        operand, local = piece
        return tiler.value_at(operand, (*index[:axis], local, *index[axis + 1 :]))
    start = SymExpr.const(0)
    pieces: list[tuple[SSAValue | None, SSAValue]] = []
    saved_mask = tiler.mask
    for number, operand in enumerate(op.operands):
        extent = tensor_type(operand).dims[axis]
        end = start + extent
        inside: SSAValue | None = None
        if number > 0:
            inside = b.compare("ge", position, b.size(start))
        if number < len(op.operands) - 1:
            inside = b.both(inside, b.compare("lt", position, b.size(end)))
        local = b.binary("sub", position, b.size(start))
        tiler.mask = b.both(saved_mask, inside)
        mapped = (*index[:axis], local, *index[axis + 1 :])
        pieces.append((inside, tiler.value_at(operand, mapped)))
        tiler.mask = saved_mask
        start = end
    result = pieces[-1][1]
    for inside, piece in reversed(pieces[:-1]):
        assert inside is not None
        result = b.select(inside, piece, result)
    return result


def shift(tiler: KernelTiler, window: Window, delta: SymExpr) -> SSAValue:
    """The index value of ``window`` moved by ``delta``, its offset in the
    normal form of the facts in scope (``D - D floordiv 2`` is
    ``D floordiv 2`` for an even ``D``): one value per window."""
    offset = tiler.facts.simplify(window.offset + delta)
    return tiler.b.window(window.lanes, offset, window.extent, window.stride)


def _operand_holding(
    tiler: KernelTiler, op: g.ConcatOp, position: SSAValue
) -> tuple[SSAValue, SSAValue] | None:
    """The operand of ``op`` whose range along the axis holds every value
    of ``position`` (a window or a constant), with the position in it;
    None if none provably does."""
    window = tiler.b.window_of(position)
    constant = constant_int(position)
    if window is not None:
        first, last = window.offset, window.last
    elif constant is not None:
        first = last = SymExpr.const(constant)
    else:
        return None
    axis = op.axis.value.data
    prove_le = tiler.facts.prove_le
    start = SymExpr.const(0)
    for operand in op.operands:
        end = start + tensor_type(operand).dims[axis]
        if prove_le(start, first) and prove_le(last + 1, end):
            if window is not None:
                return operand, shift(tiler, window, -start)
            return operand, tiler.b.size(first - start)
        start = end
    return None


def insert_slice(tiler: KernelTiler, op: g.InsertSliceOp, index: Index) -> SSAValue:
    b = tiler.b
    inside: SSAValue | None = None
    mapped: list[SSAValue] = []
    windows = zip(
        index,
        op.offset_list,
        op.stride_list,
        tensor_type(op.source).dims,
        tensor_type(op.dest).dims,
    )
    for position, offset, stride, size, extent in windows:
        if offset == 0 and stride == 1 and size == extent:
            mapped.append(position)  # the whole axis: every index is inside
            continue
        # How far the position is from the window's first element, in the
        # direction of its stride.
        if stride > 0:
            along = b.binary("sub", position, b.size(offset))
        else:
            along = b.binary("sub", b.size(offset), position)
        step = abs(stride)
        inside = b.both(inside, b.compare("ge", along, b.index(0)))
        inside = b.both(inside, b.compare("lt", along, b.size(size * step)))
        if step != 1:
            on_step = b.binary("rem", along, b.index(step))
            inside = b.both(inside, b.compare("eq", on_step, b.index(0)))
            along = b.binary("floordiv", along, b.index(step))
        mapped.append(along)
    if inside is None:  # the window is the whole destination
        return tiler.value_at(op.source, tuple(mapped))
    # The source is read only inside the window (elsewhere its index is out
    # of its bounds); the destination is in bounds everywhere.
    kept = tiler.value_at(op.dest, index)
    saved_mask = tiler.mask
    tiler.mask = b.both(saved_mask, inside)
    written = tiler.value_at(op.source, tuple(mapped))
    tiler.mask = saved_mask
    return b.select(inside, written, kept)


def take(tiler: KernelTiler, op: g.TakeOp, index: Index) -> SSAValue:
    b = tiler.b
    axis = op.axis.value.data
    table, indices = op.operands
    rank = tensor_type(indices).rank
    extent = tensor_type(table).dims[axis]
    ids = tiler.value_at(indices, index[axis : axis + rank])
    id_type = loop.element_of(ids.type)
    # Out-of-range indices (an error in the reference interpreter, undefined
    # in kernels) read 0 rather than memory outside the table. The range is
    # checked in the indices' own type, before they narrow to the index type
    # (i32 where guards bound every extent), which would wrap 2**32 + 1 to 1.
    inside = b.both(
        b.compare("ge", ids, b.const(0, id_type)),
        b.compare("lt", ids, b.size(extent, id_type)),
    )
    position = b.cast(ids, tiler.index_type)
    saved_mask = tiler.mask
    tiler.mask = b.both(saved_mask, inside)
    mapped = (*index[:axis], position, *index[axis + rank :])
    result = tiler.value_at(table, mapped)
    tiler.mask = saved_mask
    return result


#: The index map of each layout op.
LAYOUT_RULES: dict[type[Operation], Callable[[KernelTiler, Operation, Index], SSAValue]]
LAYOUT_RULES = {  # type: ignore[assignment]
    g.BroadcastOp: broadcast,
    g.TransposeOp: transpose,
    g.SliceOp: slice_,
    g.ReshapeOp: reshape,
    g.ConcatOp: concat,
    g.InsertSliceOp: insert_slice,
    g.TakeOp: take,
}


def batch_broadcast(tiler: KernelTiler, operand: SSAValue, batch: Index) -> Index:
    """The batch part of a matmul operand's index: NumPy's batch
    broadcasting (right-aligned, size-1 dims pinned to 0)."""
    dims = tensor_type(operand).dims[:-2]
    offset = len(batch) - len(dims)
    return tuple(
        tiler.b.index(0) if dim == 1 else batch[axis + offset]
        for axis, dim in enumerate(dims)
    )
