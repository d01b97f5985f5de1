"""The VJP of ``softmax(x) @ v`` as one rule, flash attention's backward.

Op by op, the backward of ``P @ v`` with ``P = exp(x - max(x)) / sum(...)``
reads ``exp(x - max(x))`` besides ``P``, and differentiates the max, whose
gradient is zero in exact arithmetic (the softmax does not depend on the
value subtracted) but a reduction, an ``argmax`` and a one-hot select in the
IR. This rule differentiates the chain at once, as flash attention does:

- ``dv = P^T @ dO``, ``dP = dO @ v^T``;
- ``dx = P * (dP - D)`` with ``D = sum(dO * O, -1)``, which is
  ``sum(dP * P, -1)`` (``O = P @ v``) read from ``[..., T, d]`` tensors.

The backward then reads ``P`` only in elementwise ops and matmuls, which
``fuse`` recomputes block by block from ``q``, ``k`` and the rows' max and
sum (``irc.lowering.score_walks``): no ``[..., T, S]`` tensor is kept
between forward and backward. The rule applies where the chain's values
are used only inside it (another use needs its own cotangent); otherwise
the ops' own rules run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ReductionKind
from irc.passes.autodiff.emitter import Cotangents, Emitter
from irc.passes.autodiff.rules import swap_last_two
from irc.shapes import SymExpr


@dataclass(frozen=True)
class SoftmaxMatmul:
    """``output = P @ v`` with ``P = exp(x - m) / l`` over the last axis,
    ``m = max(x)`` and ``l = sum(exp(x - m))`` (both keeping that axis)."""

    output: g.MatmulOp
    exponent: SSAValue

    @staticmethod
    def of(op: Operation) -> SoftmaxMatmul | None:
        """The chain that ``op`` ends, or None."""
        if not isinstance(op, g.MatmulOp):
            return None
        normalized = op.lhs.owner
        found = _normalized(normalized)
        if found is None:
            return None
        exp, total, normalizing = found
        shifted = exp.operands[0].owner
        if not isinstance(shifted, g.SubOp):
            return None
        exponent = shifted.lhs
        maximum, maximum_spread = _row_value(shifted.rhs)
        if not (
            _is_row(maximum, ReductionKind.MAX)
            and _reduces(maximum, exponent)
            and _reduces(total, exp.results[0])
        ):
            return None
        inside = {exp, shifted, *normalizing, *maximum_spread}
        inside |= {total.owner, maximum.owner}  # type: ignore[arg-type]
        if not _used_inside(frozenset(inside), normalized):
            return None
        return SoftmaxMatmul(op, exponent)


def _normalized(
    op: Operation | None,
) -> tuple[g.ExpOp, SSAValue, list[Operation]] | None:
    """``op`` as ``e / l`` or ``e * (1 / l)`` (``l`` spread over the rows):
    ``e``'s op, ``l``, and the ops from ``l`` to ``op``."""
    if not isinstance(op, g.DivOp | g.MulOp):
        return None
    exp = op.lhs.owner
    total, spread = _row_value(op.rhs)
    if isinstance(op, g.MulOp):
        reciprocal = total.owner
        if not (isinstance(reciprocal, g.DivOp) and _is_one(reciprocal.lhs)):
            return None
        spread.append(reciprocal)
        total = reciprocal.rhs
    if not isinstance(exp, g.ExpOp) or not _is_row(total, ReductionKind.SUM):
        return None
    return exp, total, [op, *spread]


def _is_one(value: SSAValue) -> bool:
    constant = value.owner
    return (
        isinstance(constant, g.ConstantOp)
        and constant.is_splat
        and constant.literal() == 1
    )


def _row_value(value: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """The per-row value ``[..., T, 1]`` that ``value`` spreads along its
    last axis, and the broadcast that does; ``value`` itself, and no op,
    when it is no such broadcast (a reshape of a max would not be constant
    along the rows, and the rule would not hold)."""
    spread = value.owner
    if not isinstance(spread, g.BroadcastOp):
        return value, []
    row = spread.operands[0]
    *lead, _ = g.tensor_type(value).dims
    if g.tensor_type(row).dims != (*lead, SymExpr.const(1)):
        return value, []
    return row, [spread]


def _is_row(value: SSAValue, kind: ReductionKind) -> bool:
    """Whether ``value`` is a keepdims reduction of ``kind`` over the last
    axis alone."""
    op = value.owner
    if not isinstance(op, g.ReduceOp) or op.kind.data != kind or not op.keepdims:
        return False
    return list(op.axis_list) == [g.tensor_type(op.input).rank - 1]


def _reduces(row: SSAValue, value: SSAValue) -> bool:
    op = row.owner
    return isinstance(op, g.ReduceOp) and op.input == value


def _used_inside(inside: frozenset[Operation], probabilities: Operation) -> bool:
    """Whether the chain's values are used only inside it, ``P`` only by
    the matmul."""
    for op in inside:
        uses = [use for result in op.results for use in result.uses]
        if op is probabilities:
            if len(uses) != 1:
                return False
        elif any(use.operation not in inside for use in uses):
            return False
    return True


def softmax_matmul_vjp(
    emit: Emitter, chain: SoftmaxMatmul, cotangent: SSAValue, wanted: Sequence[bool]
) -> Cotangents:
    """The cotangents of ``x`` (in place of ``P``'s) and ``v``, from the
    output's; see the module's docstring."""
    op = chain.output
    probabilities = op.lhs
    dims = g.tensor_type(probabilities).dims
    value_cotangent = None
    if wanted[1]:
        full = emit.emit(g.MatmulOp(swap_last_two(emit, probabilities), cotangent))
        value_cotangent = emit.sum_to(full, g.tensor_type(op.rhs).dims)
    exponent_cotangent = None
    if wanted[0]:
        # D = sum(dO * O) over the output's columns: sum(dP * P) over the
        # keys, without P.
        rank = g.tensor_type(op.result).rank
        row_dot = emit.reduce(
            ReductionKind.SUM, emit.mul(cotangent, op.result), [rank - 1], True
        )
        probability_cotangent = emit.emit(
            g.MatmulOp(cotangent, swap_last_two(emit, op.rhs))
        )
        full_dims = g.tensor_type(probability_cotangent).dims
        centred = emit.sub(probability_cotangent, emit.broadcast(row_dot, full_dims))
        exponent_cotangent = emit.mul(probabilities, emit.sum_to(centred, dims))
    return [exponent_cotangent, value_cotangent]
