"""``graph.scatter_add`` as graph ops the fusion level knows: a one-hot
reduction.

``scatter_add(u, idx, axis) : T`` is, with ``V = T.dims[axis]`` and ``I``
the indices' shape,

    sum over the I axes of select(iota_V == idx, u, 0)

computed over ``T[:axis] + [V] + I + T[axis+1:]``: each result element sums
the updates whose index is its own, so duplicate indices accumulate, and the
fusion pass makes it one reduction kernel (the one-hot operand is computed in
the kernel, never stored). It costs ``V`` times the updates' size in
arithmetic, which suits embedding gradients of moderate vocabularies; atomic
adds would not depend on ``V``. Indices outside ``[0, V)`` add nothing here,
where the reference interpreter reports them.

``fuse`` rewrites every ``scatter_add`` this way before it groups ops.
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate, ReductionKind
from irc.shapes import SymExpr


def decompose_scatter_adds(block: Block) -> None:
    """Replace each ``graph.scatter_add`` of ``block`` by its one-hot
    reduction (each new op at the location of the scatter-add)."""
    for op in [op for op in block.ops if isinstance(op, g.ScatterAddOp)]:
        built: list[g.GraphOp] = []
        result = _one_hot_sum(op, built)
        for new in built:
            new.location = op.location
        Rewriter.insert_op(built, InsertPoint.before(op))
        Rewriter.replace_op(op, [], [result])


def _one_hot_sum(op: g.ScatterAddOp, built: list[g.GraphOp]) -> SSAValue:
    def emit(new: g.GraphOp) -> SSAValue:
        built.append(new)
        return new.results[0]

    result = g.tensor_type(op.result)
    indices = g.tensor_type(op.indices)
    axis = op.axis.value.data
    index_rank = indices.rank
    lead, rest = list(result.dims[:axis]), list(result.dims[axis + 1 :])
    one = SymExpr.const(1)
    spread = [*lead, result.dims[axis], *indices.dims, *rest]
    updates = emit(g.ReshapeOp(op.updates, [*lead, one, *indices.dims, *rest]))
    updates = emit(g.BroadcastOp(updates, spread))
    index_shape = [one] * (axis + 1) + list(indices.dims) + [one] * len(rest)
    chosen = emit(g.BroadcastOp(emit(g.ReshapeOp(op.indices, index_shape)), spread))
    positions = emit(g.IotaOp(axis, g.TensorType(spread, indices.element_type)))
    hit = emit(g.CompareOp(ComparisonPredicate.EQ, positions, chosen))
    zeros = emit(g.ConstantOp.splat(0, g.tensor_type(updates)))
    picked = emit(g.SelectOp(hit, updates, zeros))
    if index_rank == 0:
        return picked
    index_axes = list(range(axis + 1, axis + 1 + index_rank))
    return emit(g.ReduceOp(ReductionKind.SUM, picked, index_axes))
