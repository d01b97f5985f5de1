"""The VJP rules of the collective dialect's ops.

A sharded program is one function of every rank's values, and each rule is
the transpose of its collective as a linear map between ranks (jax's
``shard_map`` without replication checks): the gradient a rank gets is
that of the sum over ranks of what each rank's program returns. So:

- ``psum``'s transpose is ``psum``, ``pmean``'s is ``pmean``;
- ``all_gather`` and ``psum_scatter`` are each other's transposes (same
  ``dim`` and tiling);
- ``all_to_all``'s swaps its split and concat dims;
- ``ppermute``'s is the inverse permutation;
- ``broadcast``'s sums the cotangents onto the root (zero elsewhere);
- ``pmax`` and ``pmin`` have none (as in jax): differentiating through one
  is an error that says so; ``axis_index`` is an integer.

A data-parallel step therefore averages its gradients explicitly, as jax
programs do: ``irc.pmean(irc.grad(loss)(w, batch), "data")``.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import collective as c
from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate
from irc.passes.autodiff.emitter import Emitter, Rule, per_operand


def _all_reduce(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.AllReduceOp)
    reduction = op.reduction.data
    if reduction not in ("sum", "mean"):
        raise PassFailedException(
            f"autodiff: {op.name} with reduction {reduction!r} (irc.pmax, irc.pmin) "
            "has no gradient, as in jax; differentiate a psum or pmean instead"
        )
    return emit.emit(c.AllReduceOp.make(cotangent, op.mesh, op.axis_names, reduction))


def _all_gather(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.AllGatherOp)
    dim, tiled = op.dim.value.data, op.tiled is not None
    return emit.emit(
        c.ReduceScatterOp.make(cotangent, op.mesh, op.axis_names, dim, tiled)
    )


def _reduce_scatter(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.ReduceScatterOp)
    reduction = op.reduction.data
    if reduction not in ("sum", "mean"):
        raise PassFailedException(
            f"autodiff: {op.name} with reduction {reduction!r} has no gradient"
        )
    dim, tiled = op.dim.value.data, op.tiled is not None
    gathered = emit.emit(
        c.AllGatherOp.make(cotangent, op.mesh, op.axis_names, dim, tiled)
    )
    if reduction == "mean":
        return emit.scale(gathered, 1 / op.group_size)
    return gathered


def _all_to_all(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.AllToAllOp)
    split, concat = op.split_dim.value.data, op.concat_dim.value.data
    return emit.emit(
        c.AllToAllOp.make(cotangent, op.mesh, op.axis_names, concat, split)
    )


def _ppermute(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.PpermuteOp)
    inverse = [(target, source) for source, target in op.permutation]
    return emit.emit(c.PpermuteOp.make(cotangent, op.mesh, op.axis_names, inverse))


def _broadcast(emit: Emitter, op: Operation, cotangent: SSAValue) -> SSAValue:
    assert isinstance(op, c.BroadcastOp)
    total = emit.emit(c.AllReduceOp.make(cotangent, op.mesh, op.axis_names, "sum"))
    index = emit.emit(c.AxisIndexOp(op.mesh, op.axis_names, g.TensorType([], i32)))
    root = emit.emit(g.ConstantOp.splat(op.root.value.data, g.tensor_type(index)))
    is_root = emit.compare(ComparisonPredicate.EQ, index, root)
    shaped = emit.broadcast(is_root, g.tensor_type(total).dims)
    return emit.select(shaped, total, emit.zeros_like(total))


COLLECTIVE_VJP_RULES: dict[type[Operation], Rule] = {
    c.AllReduceOp: per_operand(_all_reduce),
    c.AllGatherOp: per_operand(_all_gather),
    c.ReduceScatterOp: per_operand(_reduce_scatter),
    c.AllToAllOp: per_operand(_all_to_all),
    c.PpermuteOp: per_operand(_ppermute),
    c.BroadcastOp: per_operand(_broadcast),
}

#: Collectives whose results carry no gradient (integers).
COLLECTIVE_NO_GRADIENT: frozenset[type[Operation]] = frozenset({c.AxisIndexOp})
