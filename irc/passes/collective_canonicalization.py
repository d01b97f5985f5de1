"""Canonicalization of the collective dialect's ops on tensors (xDSL's
``canonicalize`` runs these patterns, through the ops' trait):

- an ``all_reduce`` of a value every member of its group holds alike (a
  *replicated* value: a constant, the result of a collective that already
  made it alike over those axes, or a pure graph op of such values) needs
  no communication: its ``sum`` is the value times the group size, its
  ``mean``, ``max`` and ``min`` the value itself; a ``broadcast`` of one
  is the value;
- two all-reduces in a row over disjoint axes, with the same reduction
  (``sum``, ``max`` or ``min``), the inner one read only by the outer, are
  one all-reduce over both sets of axes (one collective instead of two).

All ranks run the same program, so every rank rewrites alike: dropping a
collective here drops it everywhere, and the ranks still meet at the same
collectives in the same order.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irc.dialects import graph as g
from irc.dialects.collective import (
    AllGatherOp,
    AllReduceOp,
    BroadcastOp,
    CollectiveOp,
)

#: How deep the replication analysis looks through pure graph ops.
_MAX_DEPTH = 16


def replicated_over(value: SSAValue, axes: frozenset[str], depth: int = 0) -> bool:
    """Whether every member of each group over ``axes`` holds ``value``
    alike (provably, from the ops that make it)."""
    owner = value.owner
    if not isinstance(owner, Operation) or depth > _MAX_DEPTH:
        return False  # an argument: each rank passes its own
    if isinstance(owner, AllReduceOp | AllGatherOp | BroadcastOp):
        return axes <= frozenset(owner.axis_names) or replicated_over(
            owner.input, axes - frozenset(owner.axis_names), depth + 1
        )
    if isinstance(owner, CollectiveOp):
        return False  # a scatter, a permutation, an index: different per member
    if isinstance(owner, g.ConstantOp | g.IotaOp | g.DimOp):
        return True
    if isinstance(owner, g.GraphOp) and not owner.regions:
        return all(replicated_over(v, axes, depth + 1) for v in owner.operands)
    return False


class AllReduceOfReplicated(RewritePattern):
    """``all_reduce`` of a value alike on every member: no communication."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllReduceOp, rewriter: PatternRewriter) -> None:
        if op.on_buffers or not replicated_over(op.input, frozenset(op.axis_names)):
            return
        if op.reduction.data != "sum":
            rewriter.replace(op, (), (op.input,))
            return
        factor = g.ConstantOp.splat(op.group_size, g.tensor_type(op.input))
        product = g.MulOp(op.input, factor)
        factor.location = product.location = op.location
        rewriter.replace(op, [factor, product])


class BroadcastOfReplicated(RewritePattern):
    """``broadcast`` of a value alike on every member: the value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter) -> None:
        if not op.on_buffers and replicated_over(op.input, frozenset(op.axis_names)):
            rewriter.replace(op, (), (op.input,))


class AllReduceOfAllReduce(RewritePattern):
    """Two all-reduces in a row over disjoint axes: one over both."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllReduceOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if op.on_buffers or not isinstance(inner, AllReduceOp) or inner.on_buffers:
            return
        reduction = op.reduction.data
        if reduction == "mean" or inner.reduction.data != reduction:
            return
        if not inner.result.has_one_use() or inner.mesh != op.mesh:
            return
        if set(inner.axis_names) & set(op.axis_names):
            return
        axes = tuple(
            a for a in op.mesh.names if a in {*inner.axis_names, *op.axis_names}
        )
        merged = AllReduceOp.make(inner.input, op.mesh, axes, reduction)
        merged.location = op.location
        rewriter.replace(op, merged)
        rewriter.erase(inner)


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at ``op_type``."""
    if op_type is AllReduceOp:
        return (AllReduceOfReplicated(), AllReduceOfAllReduce())
    if op_type is BroadcastOp:
        return (BroadcastOfReplicated(),)
    return ()
