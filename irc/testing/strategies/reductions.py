"""Steps that reduce: ``reduce``, ``argmax``, ``scan`` and ``matmul``.

A sum (or a running sum) or a matmul whose result could grow past
``MAGNITUDE_LIMIT`` squashes its operand first, and a product squashes it
into ``[-1, 1]``; max, min and argmax only reduce axes that are provably
non-empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ReductionKind
from irc.shapes import SymExpr
from irc.testing.sampling import INT_INPUT_RANGE
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT, _Range
from irc.testing.strategies.steps import Steps


class ReductionSteps(Steps):
    """The reductions and contractions of ``program``."""

    def reduce(self) -> bool:
        kind = self.choices.one_of(list(g.REDUCE_KINDS))
        counting = kind in (ReductionKind.SUM, ReductionKind.PROD)
        value = self.operands.operand("if" if counting else "bif")
        dims = g.tensor_type(value).dims
        axes = self._reduced_axes(dims, counting)
        count = math.prod(self.program.largest(dims[i]) for i in axes)
        value = self._bounded_for(kind, value, count)
        value_range = _reduction_range(kind, self.program.ranges[value], count)
        keepdims = self.choices.flag()
        self.program.emit(g.ReduceOp(kind, value, axes, keepdims), value_range)
        return True

    def _reduced_axes(self, dims: Sequence[SymExpr], counting: bool) -> list[int]:
        """One axis half of the time (the common case, and the one where a
        wrong axis keeps the result type), any subset otherwise; only axes
        provably non-empty unless the reduction is a sum or a product."""
        allowed = [
            i for i, d in enumerate(dims) if counting or self.program.nonempty(d)
        ]
        if allowed and self.choices.flag():
            return [self.choices.one_of(allowed)]
        return [i for i in allowed if self.choices.flag()]

    def _bounded_for(
        self, kind: ReductionKind, value: SSAValue, count: int
    ) -> SSAValue:
        """``value``, squashed if its sum over ``count`` elements could grow
        past the limit, or into ``[-1, 1]`` for a product."""
        if (
            kind == ReductionKind.SUM
            and self.program.magnitude(value) * count > MAGNITUDE_LIMIT
        ):
            return self.domains.squash(value)
        if kind == ReductionKind.PROD and self.program.magnitude(value) > 1:
            return self.domains.squash(value, unit=True)
        return value

    def argmax(self) -> bool:
        value = self.operands.operand("bif", discontinuous=True)
        dims = g.tensor_type(value).dims
        axes = [i for i, d in enumerate(dims) if self.program.nonempty(d)]
        if not axes:
            return False
        axis = self.choices.one_of(axes)
        top = self.program.largest(dims[axis]) - 1
        self.program.emit(g.ArgMaxOp(value, axis, self.choices.flag()), (0.0, top))
        return True

    def scan(self) -> bool:
        """A running sum or product along one axis (any axis: a scan of an
        empty axis is empty), of ints or floats as ``graph.scan`` takes."""
        kind = self.choices.one_of(list(g.SCAN_KINDS))
        value = self.operands.operand("if")
        dims = g.tensor_type(value).dims
        if not dims:
            return False
        axis = self.choices.one_of(list(range(len(dims))))
        count = self.program.largest(dims[axis])
        value = self._bounded_for(kind, value, count)
        # Each running value is a reduction of a prefix, so it lies in the
        # range of the reduction of the whole axis.
        value_range = _reduction_range(kind, self.program.ranges[value], count)
        self.program.emit(g.ScanOp(kind, value, axis), value_range)
        return True

    def matmul(self) -> bool:
        lhs = self.operands.operand("if")
        tensor = g.tensor_type(lhs)
        if tensor.rank < 2:
            shape = [SymExpr.const(1)] * (2 - tensor.rank) + list(tensor.dims)
            lhs = self.program.emit(g.ReshapeOp(lhs, shape), self.program.ranges[lhs])
            tensor = g.tensor_type(lhs)
        count = self.program.largest(tensor.dims[-1])
        magnitude = self.program.magnitude(lhs)
        if magnitude * max(magnitude, INT_INPUT_RANGE) * count > MAGNITUDE_LIMIT:
            lhs = self.domains.squash(lhs)
        rhs = self._matmul_rhs(lhs)
        bound = self.program.magnitude(lhs) * self.program.magnitude(rhs) * count
        self.program.emit(g.MatmulOp(lhs, rhs), (-bound, bound))
        return True

    def _matmul_rhs(self, lhs: SSAValue) -> SSAValue:
        """``lhs`` transposed, or a new argument ``[batch..., K, P]``."""
        tensor = g.tensor_type(lhs)
        if self.choices.flag():
            permutation = list(range(tensor.rank))
            permutation[-2:] = permutation[:-3:-1]
            return self.program.emit(
                g.TransposeOp(lhs, permutation), self.program.ranges[lhs]
            )
        batch = list(tensor.dims[:-2])
        layout = self.choices.one_of(("same batch", "no batch", "unit batch"))
        if layout == "no batch":
            batch = []
        elif layout == "unit batch":
            batch = [SymExpr.const(1)] * len(batch)
        shape = [*batch, tensor.dims[-1], self.program.dim(for_argument=True)]
        return self.program.new_argument(tensor.with_shape(shape))


def _reduction_range(kind: ReductionKind, operand: _Range, count: int) -> _Range:
    """The range of a ``kind`` reduction of ``count`` elements in ``operand``
    (a product's operand is in ``[-1, 1]``)."""
    lo, hi = operand
    if kind == ReductionKind.SUM:
        return min(0.0, lo * count), max(0.0, hi * count)
    if kind == ReductionKind.PROD:
        return -1.0, 1.0
    return lo, hi
