"""The graph ops the VJP rules build, one method each.

An :class:`Emitter` inserts ops before the joint function's return; each op
takes the location of the forward op whose rule is running, marked as a
backward op's (``irc.source_locations.backward_location``), so a backward
op is reported (and shown with ``locations=True``) at the Python line of
the forward computation it differentiates, and ``fuse`` knows which values
the backward reads from the forward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects.builtin import UnknownLoc, i64
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate, ReductionKind
from irc.primitives.builtin import ADD, DIV, MUL, NEG, SUB
from irc.primitives.declaration import Primitive
from irc.shapes import Dim, SymExpr
from irc.source_locations import backward_location


class Emitter:
    """Builds backward graph ops at one insertion point."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder
        self.location: Attribute = UnknownLoc()

    def emit(self, op: Operation) -> SSAValue:
        op.location = backward_location(self.location)
        self.builder.insert(op)
        return op.results[0]

    # ----- sources ---------------------------------------------------------

    def splat(self, value: float, like: g.TensorType) -> SSAValue:
        """``value`` at every index of a tensor of type ``like``."""
        return self.emit(g.ConstantOp.splat(value, like))

    def zeros(self, like: g.TensorType) -> SSAValue:
        return self.splat(0, like)

    def zeros_like(self, value: SSAValue) -> SSAValue:
        return self.zeros(g.tensor_type(value))

    def constant_like(self, value: float, like: SSAValue) -> SSAValue:
        return self.splat(value, g.tensor_type(like))

    def iota(self, axis: int, like: g.TensorType) -> SSAValue:
        """Indices along ``axis`` (i64) of a tensor shaped like ``like``."""
        return self.emit(g.IotaOp(axis, g.TensorType(like.dims, i64)))

    # ----- elementwise -----------------------------------------------------

    def apply(self, kind: Primitive, *operands: SSAValue) -> SSAValue:
        """The primitive ``kind`` of ``operands`` (of one type)."""
        return self.emit(g.elementwise(kind, *operands))

    def add(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.apply(ADD, lhs, rhs)

    def sub(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.apply(SUB, lhs, rhs)

    def mul(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.apply(MUL, lhs, rhs)

    def div(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.apply(DIV, lhs, rhs)

    def neg(self, value: SSAValue) -> SSAValue:
        return self.apply(NEG, value)

    def scale(self, value: SSAValue, factor: float) -> SSAValue:
        return self.mul(value, self.constant_like(factor, value))

    def compare(
        self, predicate: ComparisonPredicate, lhs: SSAValue, rhs: SSAValue
    ) -> SSAValue:
        return self.emit(g.CompareOp(predicate, lhs, rhs))

    def select(
        self, condition: SSAValue, true_value: SSAValue, false_value: SSAValue
    ) -> SSAValue:
        return self.emit(g.SelectOp(condition, true_value, false_value))

    def where_zero(self, condition: SSAValue, value: SSAValue) -> SSAValue:
        """``value`` where ``condition`` is false, zero where it is true."""
        return self.select(condition, self.constant_like(0, value), value)

    def cast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        if g.tensor_type(value).element_type == element_type:
            return value
        return self.emit(g.CastOp(value, element_type))

    # ----- layout ----------------------------------------------------------

    def broadcast(self, value: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        if g.tensor_type(value).dims == tuple(shape):
            return value
        return self.emit(g.BroadcastOp(value, shape))

    def reshape(self, value: SSAValue, shape: Sequence[Dim]) -> SSAValue:
        if g.tensor_type(value).dims == tuple(shape):
            return value
        return self.emit(g.ReshapeOp(value, shape))

    def transpose(self, value: SSAValue, permutation: Sequence[int]) -> SSAValue:
        if list(permutation) == sorted(permutation):
            return value
        return self.emit(g.TransposeOp(value, permutation))

    def slice(
        self,
        value: SSAValue,
        offsets: Sequence[Dim],
        sizes: Sequence[Dim],
        strides: Sequence[int],
    ) -> SSAValue:
        return self.emit(g.SliceOp(value, offsets, sizes, strides))

    def concat(self, values: Sequence[SSAValue], axis: int) -> SSAValue:
        return values[0] if len(values) == 1 else self.emit(g.ConcatOp(values, axis))

    def reduce(
        self,
        kind: ReductionKind,
        value: SSAValue,
        axes: Sequence[int],
        keepdims: bool,
    ) -> SSAValue:
        return self.emit(g.ReduceOp(kind, value, axes, keepdims))

    def sum_to(self, value: SSAValue, shape: Sequence[SymExpr]) -> SSAValue:
        """``value`` summed back to ``shape``, from which it was broadcast:
        over the leading dims ``shape`` lacks and the dims that are 1 in
        ``shape`` but not in ``value`` (symbolic ones included: a size-1
        axis sums to itself, so ``N`` that happens to be 1 is no special
        case)."""
        dims = g.tensor_type(value).dims
        offset = len(dims) - len(shape)
        axes = list(range(offset))
        axes += [
            offset + index
            for index, dim in enumerate(shape)
            if dim == 1 and dims[offset + index] != 1
        ]
        if axes:
            value = self.reduce(ReductionKind.SUM, value, axes, keepdims=True)
        return self.reshape(value, shape)

    def unreduce(self, value: SSAValue, op: g.ReduceOp) -> SSAValue:
        """The result (or cotangent) of a reduction broadcast back over the
        reduced axes to the reduced operand's shape."""
        source = g.tensor_type(op.input).dims
        kept = [
            SymExpr.const(1) if i in op.axis_list else d for i, d in enumerate(source)
        ]
        return self.broadcast(self.reshape(value, kept), source)


# --------------------------------------------------------------------------
# The rules that emit through it
# --------------------------------------------------------------------------

Cotangents = Sequence[SSAValue | None]
#: ``rule(emit, op, cotangent, wanted)``: one cotangent per operand.
Rule = Callable[[Emitter, Operation, SSAValue, Sequence[bool]], Cotangents]
#: The cotangent of one operand: ``(emit, op, cotangent)``.
OperandRule = Callable[[Emitter, Operation, SSAValue], SSAValue | None]


def per_operand(*rules: OperandRule | None) -> Rule:
    """A rule of one function per operand (None: never differentiable),
    each called only for an operand that wants a cotangent."""

    def rule(
        emit: Emitter, op: Operation, cotangent: SSAValue, wanted: Sequence[bool]
    ) -> Cotangents:
        return [
            each(emit, op, cotangent) if each is not None and want else None
            for each, want in zip(rules, wanted, strict=True)
        ]

    return rule
