"""The VJP rules of the graph ops but the primitives': one table, keyed by
op class (a primitive's rule is in its declaration, ``irc.primitives``).

A rule takes the forward op, the cotangent ``g`` of its result and which
operands want a cotangent (float operands that depend on a differentiated
argument), and returns one cotangent per operand: a value of the operand's
type, or None for zero (an operand not wanted, or one the result does not
vary with, as ``floor``'s). Rules build graph ops through an
:class:`~irc.passes.autodiff.emitter.Emitter`.

Non-differentiable points follow JAX:

- ``abs`` at 0 has derivative 1 (``select(x >= 0, g, -g)``);
- ``sqrt`` at 0 has derivative ``inf`` (``g * 0.5 / sqrt(x)``), ``rsqrt``
  and ``log`` likewise divide by zero;
- ``maximum``/``minimum`` ties split the cotangent in halves between the
  operands;
- ``pow``: ``d/dx`` is 0 where the exponent is 0, ``d/dy`` uses ``log(1)``
  where the base is 0;
- ``floor``, ``floordiv`` and the quotient in ``rem`` are piecewise constant:
  zero derivative;
- ``max``/``min`` reductions give the whole cotangent to the first extreme
  element along the reduced axes, the one ``np.argmax`` picks (JAX's
  ``reduce_max`` splits it evenly between ties instead; a one-hot choice
  keeps the gradient of a max that of ``take_along_axis(x, argmax(x))``, as
  PyTorch's ``max(dim)`` does);
- ``prod`` is exact where elements are zero (the product of the others), not
  ``prod / x``; so is ``cumprod`` (``scan prod``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate, ReductionKind
from irc.dialects.sym import product
from irc.passes.autodiff.collective_rules import (
    COLLECTIVE_NO_GRADIENT,
    COLLECTIVE_VJP_RULES,
)
from irc.passes.autodiff.emitter import (
    Cotangents,
    Emitter,
    OperandRule,
    Rule,
    per_operand,
)
from irc.shapes import SymExpr

_EQ = ComparisonPredicate.EQ


# --------------------------------------------------------------------------
# Select and cast (the primitives' rules are in their declarations)
# --------------------------------------------------------------------------


def _select_branch(taken: bool) -> OperandRule:
    """The cotangent of the value ``select`` takes where its condition is
    ``taken``: ``g`` there, zero elsewhere."""

    def rule(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
        condition = op.operands[0]
        zero = emit.constant_like(0, cotangent)
        if taken:
            return emit.select(condition, cotangent, zero)
        return emit.select(condition, zero, cotangent)

    return rule


def _cast(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    return emit.cast(cotangent, g.tensor_type(op.operands[0]).element_type)


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------


def _broadcast(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    return emit.sum_to(cotangent, g.tensor_type(op.operands[0]).dims)


def _reshape(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    return emit.reshape(cotangent, g.tensor_type(op.operands[0]).dims)


def _transpose(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, g.TransposeOp)
    inverse = [0] * len(op.perm)
    for position, axis in enumerate(op.perm):
        inverse[axis] = position
    return emit.transpose(cotangent, inverse)


def _slice(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """The cotangent placed back where the slice read it, zeros elsewhere:
    axis by axis, a concat with zero blocks for strides of +-1 (a reversed
    cotangent for -1) and spread between zeros otherwise."""
    assert isinstance(op, g.SliceOp)
    extents = g.tensor_type(op.input).dims
    current = cotangent
    for axis, (offset, stride, extent) in enumerate(
        zip(op.offset_list, op.stride_list, extents, strict=True)
    ):
        size = g.tensor_type(current).dims[axis]
        if offset == 0 and stride == 1 and size == extent:
            continue
        if abs(stride) == 1:
            current = _pad_axis(emit, current, axis, offset, stride, extent)
        else:
            current = _spread_axis(emit, current, axis, offset, stride, extent)
    return current


def _pad_axis(
    emit: Emitter,
    value: SSAValue,
    axis: int,
    offset: SymExpr,
    stride: int,
    extent: SymExpr,
) -> SSAValue:
    """``value`` (the elements ``offset``, ``offset + stride``, ... along
    ``axis``, ``stride`` being 1 or -1) between zeros, to ``extent``."""
    value_type = g.tensor_type(value)
    size = value_type.dims[axis]
    low = offset
    if stride == -1:
        reversed_offsets = [SymExpr.const(0)] * value_type.rank
        reversed_offsets[axis] = size - 1
        strides = [1] * value_type.rank
        strides[axis] = -1
        value = emit.slice(value, reversed_offsets, value_type.dims, strides)
        low = offset - (size - 1)
    parts = []
    for length in (low, None, extent - low - size):
        if length is None:
            parts.append(value)
        elif length != 0:
            shape = list(value_type.dims)
            shape[axis] = length
            parts.append(emit.zeros(value_type.with_shape(shape)))
    return emit.concat(parts, axis)


def _spread_axis(
    emit: Emitter,
    value: SSAValue,
    axis: int,
    offset: SymExpr,
    stride: int,
    extent: SymExpr,
) -> SSAValue:
    """``value`` at the indices ``offset + k * stride`` of ``axis``, zeros
    elsewhere, for strides other than +-1: an ``insert_slice`` into zeros,
    which fusion reads in place (a scatter-add would compare every index)."""
    value_type = g.tensor_type(value)
    shape = list(value_type.dims)
    shape[axis] = extent
    offsets = [SymExpr.const(0)] * value_type.rank
    offsets[axis] = offset
    strides = [1] * value_type.rank
    strides[axis] = stride
    zeros = emit.zeros(value_type.with_shape(shape))
    return emit.emit(g.InsertSliceOp(value, zeros, offsets, strides))


def _concat_part(
    emit: Emitter, op: Operation, cotangent: SSAValue, index: int
) -> SSAValue:
    assert isinstance(op, g.ConcatOp)
    axis = op.axis.value.data
    start = sum(
        (g.tensor_type(v).dims[axis] for v in op.inputs[:index]), SymExpr.const(0)
    )
    part = g.tensor_type(op.inputs[index])
    offsets = [SymExpr.const(0)] * part.rank
    offsets[axis] = start
    return emit.slice(cotangent, offsets, part.dims, [1] * part.rank)


def _concat(
    emit: Emitter, op: Operation, cotangent: SSAValue, wanted: Sequence[bool]
) -> Cotangents:
    return [
        _concat_part(emit, op, cotangent, index) if want else None
        for index, want in enumerate(wanted)
    ]


def _inserted(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """The source of ``insert_slice`` lands in the window: its cotangent is
    the window of the result's."""
    assert isinstance(op, g.InsertSliceOp)
    source = g.tensor_type(op.source)
    return emit.slice(cotangent, op.offset_list, source.dims, op.stride_list)


def _overwritten(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """The destination shows outside the window only: its cotangent is the
    result's with the window zeroed."""
    assert isinstance(op, g.InsertSliceOp)
    zeros = emit.zeros(g.tensor_type(op.source))
    return emit.emit(g.InsertSliceOp(zeros, cotangent, op.offset_list, op.stride_list))


def _take(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """Scatter-add of the cotangent back to the rows taken: a row taken
    twice gets both cotangents."""
    assert isinstance(op, g.TakeOp)
    table = g.tensor_type(op.table)
    return emit.emit(g.ScatterAddOp(cotangent, op.indices, op.axis.value.data, table))


def _scatter_add(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """Each update lands at its index: its cotangent is taken from there."""
    assert isinstance(op, g.ScatterAddOp)
    return emit.emit(g.TakeOp(cotangent, op.indices, op.axis.value.data))


# --------------------------------------------------------------------------
# Reductions and matmul
# --------------------------------------------------------------------------


def _reduce(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, g.ReduceOp)
    if not op.axis_list:
        return cotangent
    kind = op.kind.data
    if kind is ReductionKind.SUM:
        return emit.unreduce(cotangent, op)
    if kind is ReductionKind.PROD:
        return emit.mul(emit.unreduce(cotangent, op), _product_of_others(emit, op))
    return _first_extreme(emit, op, cotangent)


def _reversed(emit: Emitter, value: SSAValue, axis: int) -> SSAValue:
    value_type = g.tensor_type(value)
    offsets = [SymExpr.const(0)] * value_type.rank
    offsets[axis] = value_type.dims[axis] - 1
    strides = [1] * value_type.rank
    strides[axis] = -1
    return emit.slice(value, offsets, value_type.dims, strides)


def _reversed_cumsum(emit: Emitter, value: SSAValue, axis: int) -> SSAValue:
    """Element ``i`` is the sum of the elements ``j >= i`` along ``axis``."""
    flipped = _reversed(emit, value, axis)
    summed = emit.emit(g.ScanOp(ReductionKind.SUM, flipped, axis))
    return _reversed(emit, summed, axis)


def _scan(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """Element ``j`` of a running sum feeds every result ``i >= j``: its
    cotangent is the reversed running sum of ``g``. A running product's is
    in :func:`_cumprod_cotangent`."""
    assert isinstance(op, g.ScanOp)
    axis = op.axis.value.data
    if op.kind.data is ReductionKind.PROD:
        return _cumprod_cotangent(emit, op, cotangent, axis)
    return _reversed_cumsum(emit, cotangent, axis)


def _cumprod_cotangent(
    emit: Emitter, op: g.ScanOp, cotangent: SSAValue, axis: int
) -> SSAValue:
    """``dx_i = sum_{j >= i} g_j * prod_{k <= j, k != i} x_k`` along the
    axis, exact where elements are zero (``revcumsum(g * y) / x`` would
    divide 0 by 0 there). With ``z`` the first zero of a row:

    - before ``z`` no ``x_i`` is 0, and every ``y_j`` with ``j >= z`` is 0,
      so ``revcumsum(g * y) / x`` is exact;
    - at ``z`` the products leave out ``x_z`` alone: that is the running
      product of ``x`` with ``x_z`` replaced by 1, weighted and summed the
      same way;
    - after ``z`` every product keeps ``x_z = 0``: the cotangent is 0."""
    x, y = op.input, op.results[0]
    one, zero = emit.constant_like(1, x), emit.constant_like(0, x)
    is_zero = emit.compare(_EQ, x, zero)
    # The number of zeros up to and including each element: 0 before the
    # first zero, 1 from it to the second (exact in every float type: only
    # 0 and 1 are compared, and a running count never rounds down to them).
    seen = emit.emit(g.ScanOp(ReductionKind.SUM, emit.select(is_zero, one, zero), axis))
    before = emit.compare(_EQ, seen, zero)
    first_seen = emit.compare(_EQ, seen, one)
    safe_x = emit.select(is_zero, one, x)
    ahead = emit.div(_reversed_cumsum(emit, emit.mul(cotangent, y), axis), safe_x)
    # x with its first zero (the only zero where ``first_seen``) made 1.
    skipped = emit.select(is_zero, emit.select(first_seen, one, zero), x)
    without_first = emit.emit(g.ScanOp(ReductionKind.PROD, skipped, axis))
    at_first = _reversed_cumsum(emit, emit.mul(cotangent, without_first), axis)
    at_first = emit.select(is_zero, emit.select(first_seen, at_first, zero), zero)
    return emit.select(before, ahead, at_first)


def _product_of_others(emit: Emitter, op: g.ReduceOp) -> SSAValue:
    """For each element, the product of the others along the reduced axes,
    exact where elements are zero: with no zero it is ``prod / x``, with
    one zero it is the product of the non-zero elements at the zero and 0
    elsewhere, with two or more zeros it is 0."""
    x = op.input
    is_zero = emit.compare(_EQ, x, emit.constant_like(0, x))
    one, zero = emit.constant_like(1, x), emit.constant_like(0, x)

    def reduced(kind: ReductionKind, value: SSAValue) -> SSAValue:
        return emit.unreduce(emit.reduce(kind, value, op.axis_list, op.keepdims), op)

    nonzero_product = reduced(ReductionKind.PROD, emit.select(is_zero, one, x))
    zeros = reduced(ReductionKind.SUM, emit.select(is_zero, one, zero))
    no_zero = emit.compare(_EQ, zeros, zero)
    one_zero = emit.compare(_EQ, zeros, one)
    at_zero = emit.select(one_zero, nonzero_product, zero)
    elsewhere = emit.select(no_zero, emit.div(nonzero_product, x), zero)
    return emit.select(is_zero, at_zero, elsewhere)


def _first_extreme(emit: Emitter, op: g.ReduceOp, cotangent: SSAValue) -> SSAValue:
    """``max``/``min``: the cotangent goes to the first extreme element
    along the reduced axes (row-major over them), as ``np.argmax`` picks it;
    several axes are moved last and merged into one for the argmax."""
    x = op.input
    dims = g.tensor_type(x).dims
    axes = list(op.axis_list)
    others = [i for i in range(len(dims)) if i not in axes]
    chooser = x if op.kind.data is ReductionKind.MAX else emit.neg(x)
    permutation = others + axes
    moved = emit.transpose(chooser, permutation)
    merged_dims = [dims[i] for i in others] + [product(dims[i] for i in axes)]
    merged = emit.reshape(moved, merged_dims)
    axis = len(others)
    merged_type = g.tensor_type(merged)
    first = emit.emit(g.ArgMaxOp(merged, axis, keepdims=True))
    hit = emit.compare(
        _EQ, emit.iota(axis, merged_type), emit.broadcast(first, merged_dims)
    )
    spread = emit.broadcast(
        emit.reshape(cotangent, [*merged_dims[:-1], SymExpr.const(1)]), merged_dims
    )
    chosen = emit.select(hit, spread, emit.zeros_like(spread))
    unmerged = emit.reshape(chosen, [dims[i] for i in permutation])
    inverse = [permutation.index(i) for i in range(len(dims))]
    return emit.transpose(unmerged, inverse)


def swap_last_two(emit: Emitter, value: SSAValue) -> SSAValue:
    """``value`` with its last two axes exchanged (a matmul operand's
    transpose)."""
    rank = g.tensor_type(value).rank
    return emit.transpose(value, [*range(rank - 2), rank - 1, rank - 2])


def _matmul_lhs(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """``g @ b^T``, summed over the batch dims ``a`` was broadcast along."""
    lhs, rhs = op.operands
    full = emit.emit(g.MatmulOp(cotangent, swap_last_two(emit, rhs)))
    return emit.sum_to(full, g.tensor_type(lhs).dims)


def _matmul_rhs(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    """``a^T @ g``, summed over the batch dims ``b`` was broadcast along."""
    lhs, rhs = op.operands
    full = emit.emit(g.MatmulOp(swap_last_two(emit, lhs), cotangent))
    return emit.sum_to(full, g.tensor_type(rhs).dims)


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------

#: The VJP rule of every differentiable graph op.
VJP_RULES: dict[type[Operation], Rule] = {
    g.SelectOp: per_operand(None, _select_branch(True), _select_branch(False)),
    g.CastOp: per_operand(_cast),
    g.BroadcastOp: per_operand(_broadcast),
    g.ReshapeOp: per_operand(_reshape),
    g.TransposeOp: per_operand(_transpose),
    g.SliceOp: per_operand(_slice),
    g.ConcatOp: _concat,
    g.InsertSliceOp: per_operand(_inserted, _overwritten),
    g.ScanOp: per_operand(_scan),
    g.TakeOp: per_operand(_take, None),
    g.ScatterAddOp: per_operand(_scatter_add, None),
    g.ReduceOp: per_operand(_reduce),
    g.MatmulOp: per_operand(_matmul_lhs, _matmul_rhs),
}

#: Graph ops that carry no gradient: their results are integers or bools
#: (comparisons, argmax), or they have no operands (sources). Primitives
#: without one (bitwise ops) declare ``gradient=None``.
NO_GRADIENT: frozenset[type[Operation]] = frozenset(
    {
        g.CompareOp,
        g.ArgMaxOp,
        g.ConstantOp,
        g.IotaOp,
        g.DimOp,
    }
)


def vjp_rule(op_type: type[Operation]) -> Rule | None:
    """The VJP rule of ``op_type``'s ops: its primitive's declared gradient,
    else its row of ``VJP_RULES``; None if it has none."""
    if issubclass(op_type, g.UnaryOp | g.BinaryOp):
        gradient = op_type.KIND.gradient
        return None if gradient is None else per_operand(*gradient)
    return VJP_RULES.get(op_type) or COLLECTIVE_VJP_RULES.get(op_type)


def carries_no_gradient(op_type: type[Operation]) -> bool:
    """Whether ``op_type``'s results have no gradient by nature."""
    if issubclass(op_type, g.UnaryOp | g.BinaryOp):
        return op_type.KIND.gradient is None
    return op_type in NO_GRADIENT or op_type in COLLECTIVE_NO_GRADIENT
