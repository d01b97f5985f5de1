"""Reverse mode through graph.cond, graph.for and (without a derivative
through its carries) graph.while.

Each region is a self-contained graph body (isolated from above), so its
vector-Jacobian product is the joint function ``differentiate`` builds for
it, taken as a function of its block arguments: the forward ops recomputed,
then the backward ones. The rules put those joint bodies into new regions:

- ``graph.cond``: a cond on the same predicate over the operands and the
  results' cotangents, each branch the joint of its own branch, yielding the
  operands' cotangents.
- ``graph.for`` (a scan): the forward loop runs again, also stacking each
  iteration's input carries as ys (pass-through carries, such as closed-over
  weights, need no stack: they are the same in every iteration); the
  backward loop is a ``graph.for`` with ``reverse`` over those stacks, the
  xs and the ys' cotangents, carrying the carries' cotangents, whose body is
  the joint of the forward body. It yields the xs' cotangents as its ys.
- ``graph.while``: its trip count is known only at run time, so there is no
  stack to reverse over. As in JAX, that matters only where a derivative
  flows through the loop: a float carry whose value depends on a
  differentiated input (its initial value, or what the body computes from
  such carries and closed-over values) and whose result gets a cotangent.
  An input that reaches only the predicate or integer carries gives the
  loop no derivative at all (the trip count is piecewise constant), so the
  rule returns no cotangents: zeros along that path. A derivative through a
  float carry is an error naming the rule, ``irc.fori_loop`` with static
  bounds and ``irc.scan``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import func
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.dialects.debug import DebugOp
from irc.dtypes import is_float_type
from irc.passes.autodiff.emitter import Emitter
from irc.runtime.binding import op_location
from irc.source_locations import backward_location

#: ``differentiate(function, seeded)``: the pass's own, passed in (it imports
#: this); ``seeded`` says which results take a cotangent argument.
Differentiate = Callable[[func.FuncOp, Sequence[bool]], None]
Cotangents = list[SSAValue | None]


def _is_float(value_type: object) -> bool:
    return isinstance(value_type, g.TensorType) and is_float_type(
        value_type.element_type
    )


def _backward_copy(region: Region) -> Region:
    """A copy of a forward region that the backward pass runs again: its
    debug ops print there too, marked as the backward pass's
    (docs/debugging.md), so each line says which pass made it."""
    copy = region.clone()
    for op in copy.walk():
        if isinstance(op, DebugOp):
            op.mark_backward()
    return copy


def _joint_block(
    block: Block, differentiate: Differentiate, seeded: Sequence[bool]
) -> Block:
    """The joint function of a region's ``block`` as a detached block: its
    arguments are the block's, then one cotangent per float yielded value
    that is ``seeded`` (the others' are zero: nothing is differentiated
    for them, as JAX's symbolic zeros, so an unused result whose derivative
    is not finite gives no NaN); it ends in ``func.return`` of the yielded
    values, then one cotangent per float argument of the block, in order."""
    region = block.parent
    assert region is not None, "a region's block"
    copy = _backward_copy(region)
    body = copy.block
    terminator = g.yield_of(body)
    returned = func.ReturnOp(*terminator.values)
    returned.location = terminator.location
    body.insert_op_before(returned, terminator)
    body.erase_op(terminator)
    function = func.FuncOp(
        "region",
        ([a.type for a in body.args], [v.type for v in returned.operands]),
        copy,
    )
    differentiate(function, seeded)
    return function.body.detach_block(function.body.block)


def _inline_joint(
    joint: Block, arguments: Sequence[SSAValue], into: Block
) -> list[SSAValue]:
    """Move the joint's ops to the end of ``into`` on ``arguments``; returns
    what its ``func.return`` returned (the return is dropped)."""
    returned = joint.last_op
    assert isinstance(returned, func.ReturnOp)
    Rewriter.inline_block(joint, InsertPoint.at_end(into), arguments)
    values = list(returned.operands)
    into.erase_op(returned)
    return values


def _cotangent_or_zeros(
    emit: Emitter, cotangent: SSAValue | None, like: SSAValue
) -> SSAValue:
    return cotangent if cotangent is not None else emit.zeros_like(like)


def _insert(emit: Emitter, op: Operation) -> Operation:
    op.location = backward_location(emit.location)
    emit.builder.insert(op)
    return op


# --------------------------------------------------------------------------
# graph.cond
# --------------------------------------------------------------------------


def cond_vjp(
    emit: Emitter, op: g.CondOp, results: Cotangents, differentiate: Differentiate
) -> Cotangents:
    """One cotangent per operand of ``op`` (None for the predicate and the
    operands that are not floats); a result without a cotangent is not
    differentiated."""
    float_inputs = [i for i, v in enumerate(op.inputs) if _is_float(v.type)]
    seeded = [c is not None and _is_float(r.type) for c, r in zip(results, op.outputs)]
    seeds = [c for c, flag in zip(results, seeded) if flag and c is not None]
    argument_types = [*(v.type for v in op.inputs), *(s.type for s in seeds)]
    regions = []
    for region in (op.then_region, op.else_region):
        joint = _joint_block(region.block, differentiate, seeded)
        block = Block(arg_types=argument_types)
        values = _inline_joint(joint, block.args, block)
        block.add_op(g.YieldOp(values[len(op.outputs) :]))
        regions.append(Region(block))
    backward = g.CondOp(
        op.pred,
        [*op.inputs, *seeds],
        regions[0],
        regions[1],
        [op.inputs[i].type for i in float_inputs],
    )
    _insert(emit, backward)
    cotangents: Cotangents = [None] * len(op.operands)
    for position, index in enumerate(float_inputs):
        cotangents[1 + index] = backward.outputs[position]
    return cotangents


# --------------------------------------------------------------------------
# graph.for
# --------------------------------------------------------------------------


def for_vjp(
    emit: Emitter, op: g.ForOp, results: Cotangents, differentiate: Differentiate
) -> Cotangents:
    """One cotangent per operand of ``op``: its carries, then its xs. A y
    without a cotangent is not differentiated, nor a carry that reaches no
    differentiated result (``_seeded_carries``)."""
    body = op.body.block
    count = len(op.carries)
    through = [i for i in range(count) if _passes_through(body, i)]
    saved = [i for i in range(count) if i not in through]
    stacks = _forward_with_stacks(emit, op, saved)
    float_xs = [i for i, x in enumerate(op.xs) if _is_float(x.type)]
    ys_seeded = [
        results[count + i] is not None and _is_float(y.type)
        for i, y in enumerate(op.ys)
    ]
    carries_seeded = _seeded_carries(op, results, ys_seeded)
    float_carries = [i for i in range(count) if _is_float(op.carries[i].type)]
    seeded_carries = [i for i in range(count) if carries_seeded[i]]
    carry_seeds = [
        _cotangent_or_zeros(emit, results[i], op.outputs[i]) for i in seeded_carries
    ]
    ys_seeds = [
        c for c, flag in zip(results[count:], ys_seeded) if flag and c is not None
    ]
    backward_carries = [*carry_seeds, *(op.carries[i] for i in through)]
    backward_xs = [*stacks, *op.xs, *ys_seeds]
    block = Block(
        arg_types=[
            g.INDEX_TYPE,
            *(v.type for v in backward_carries),
            *(_slice_type(v) for v in backward_xs),
        ]
    )
    index, rest = block.args[0], list(block.args[1:])
    carry_cts = rest[: len(carry_seeds)]
    through_values = rest[len(carry_seeds) : len(backward_carries)]
    slices = rest[len(backward_carries) :]
    saved_values = slices[: len(stacks)]
    x_values = slices[len(stacks) : len(stacks) + len(op.xs)]
    ys_cts = slices[len(stacks) + len(op.xs) :]
    primal_carries: list[SSAValue] = []
    for i in range(count):
        source = through_values if i in through else saved_values
        group = through if i in through else saved
        primal_carries.append(source[group.index(i)])
    joint = _joint_block(body, differentiate, carries_seeded + ys_seeded)
    values = _inline_joint(
        joint, [index, *primal_carries, *x_values, *carry_cts, *ys_cts], block
    )
    # The joint returns the body's yields, then the cotangents of its float
    # arguments: the float carries', then the float xs' (the index is i64).
    gradients = values[len(g.yield_of(body).values) :]
    carry_gradients = dict(zip(float_carries, gradients, strict=False))
    block.add_op(
        g.YieldOp(
            [
                *(carry_gradients[i] for i in seeded_carries),
                *through_values,
                *gradients[len(float_carries) :],
            ]
        )
    )
    backward = g.ForOp(
        op.trip_count,
        backward_carries,
        backward_xs,
        Region(block),
        [op.xs[i].type for i in float_xs],
        reverse=not op.is_reverse,
    )
    _insert(emit, backward)
    cotangents: Cotangents = [None] * len(op.operands)
    for position, i in enumerate(seeded_carries):
        cotangents[i] = backward.outputs[position]
    xs_cotangents = backward.outputs[len(backward_carries) :]
    for position, i in enumerate(float_xs):
        cotangents[count + i] = xs_cotangents[position]
    return cotangents


def _seeded_carries(
    op: g.ForOp, results: Cotangents, ys_seeded: Sequence[bool]
) -> list[bool]:
    """Which carries of ``op`` take a cotangent in the backward loop: a
    float carry whose result has one, or whose value reaches, through the
    body, a yielded value that takes one (the y of this iteration, or a
    carry of the next: a fixed point, as the set only grows). The others'
    cotangents are zero in every iteration: their derivatives are not
    computed, which gives no NaN where they are not finite."""
    body = op.body.block
    count = len(op.carries)
    yielded = g.yield_of(body).values
    seeded = [
        results[i] is not None and _is_float(op.carries[i].type) for i in range(count)
    ]
    while True:
        wanted = {
            value
            for value, flag in zip(yielded, [*seeded, *ys_seeded], strict=True)
            if flag
        }
        grown = [
            flag
            or (
                _is_float(op.carries[i].type)
                and _reaches(body, body.args[1 + i], wanted)
            )
            for i, flag in enumerate(seeded)
        ]
        if grown == seeded:
            return seeded
        seeded = grown


def _reaches(body: Block, value: SSAValue, targets: set[SSAValue]) -> bool:
    """Whether a float value of ``targets`` depends on ``value`` in
    ``body`` (through float values: integers carry no derivative)."""
    reached = {value}
    for inner in body.ops:
        reached.update(active_results(inner, reached))
    return not reached.isdisjoint(targets)


def _passes_through(body: Block, index: int) -> bool:
    return g.yield_of(body).values[index] == body.args[1 + index]


def _slice_type(value: SSAValue) -> g.TensorType:
    value_type = g.tensor_type(value)
    return value_type.with_shape(value_type.dims[1:])


def _forward_with_stacks(
    emit: Emitter, op: g.ForOp, saved: Sequence[int]
) -> list[SSAValue]:
    """Run ``op`` again, stacking the input carries ``saved`` of each
    iteration as extra ys; returns the stacks."""
    region = _backward_copy(op.body)
    body = region.block
    terminator = g.yield_of(body)
    terminator.operands = [*terminator.values, *(body.args[1 + i] for i in saved)]
    stack_types = [
        g.tensor_type(op.carries[i]).with_shape(
            [op.trip_count, *g.tensor_type(op.carries[i]).dims]
        )
        for i in saved
    ]
    forward = g.ForOp(
        op.trip_count,
        list(op.carries),
        list(op.xs),
        region,
        [*(g.tensor_type(y) for y in op.ys), *stack_types],
        reverse=op.is_reverse,
    )
    _insert(emit, forward)
    return list(forward.outputs[len(op.outputs) :])


# --------------------------------------------------------------------------
# graph.while
# --------------------------------------------------------------------------


def active_results(op: Operation, active: set[SSAValue]) -> list[SSAValue]:
    """The float results of ``op`` that depend on the ``active`` values: all
    of them when an operand is active, except for a while loop, whose
    carries are followed one by one (JAX's rule: a derivative enters only
    through float carries, never through the predicate or integer carries)."""
    if not any(operand in active for operand in op.operands):
        return []
    if isinstance(op, g.WhileOp):
        flags = while_active_carries(op, [v in active for v in op.inputs])
        return [r for r, flag in zip(op.outputs, flags, strict=True) if flag]
    return [r for r in op.results if _is_float(r.type)]


def while_active_carries(op: g.WhileOp, active_inputs: Sequence[bool]) -> list[bool]:
    """Which carries of ``op`` can carry a derivative, given which of its
    inputs do: a float carry is active when its initial value is, or when
    the body computes its next value from active carries (a fixed point:
    activity only grows, so it ends after at most one round per carry)."""
    body = op.body_region.block
    active = [
        flag and _is_float(value.type)
        for flag, value in zip(active_inputs, op.inputs, strict=True)
    ]
    while True:
        values = {arg for arg, flag in zip(body.args, active, strict=True) if flag}
        for inner in body.ops:
            values.update(active_results(inner, values))
        yielded = g.yield_of(body).values
        grown = [
            flag or (value in values and _is_float(value.type))
            for flag, value in zip(active, yielded, strict=True)
        ]
        if grown == active:
            return active
        active = grown


def while_vjp(
    emit: Emitter,
    op: g.WhileOp,
    results: Cotangents,
    active_inputs: Sequence[bool],
) -> Cotangents:
    """No cotangents (zeros) when no derivative flows through ``op``'s
    carries; an error otherwise, as ``jax.lax.while_loop`` gives."""
    flags = while_active_carries(op, active_inputs)
    for index, (flag, cotangent) in enumerate(zip(flags, results, strict=True)):
        if flag and cotangent is not None:
            raise PassFailedException(_while_error(op, index))
    return [None] * len(op.operands)


def _while_error(op: g.WhileOp, carry: int) -> str:
    carry_type = g.tensor_type(op.inputs[carry])
    return (
        f"autodiff: {op_location(op)} is a while loop (irc.while_loop, or "
        "irc.fori_loop with a traced bound) through whose float carry "
        f"{carry} ({carry_type}) a derivative flows. Reverse mode goes through "
        "a while loop only when the differentiated inputs reach just its "
        "predicate or its integer carries (the trip count then counts as a "
        "constant, as in jax.lax.while_loop): its trip count is known only at "
        "run time, so there is no stack of iterations to run back over. Use "
        "irc.fori_loop with int or symbolic bounds (x.shape[0]), or irc.scan, "
        "whose trip counts are known"
    )


def control_flow_vjp(
    emit: Emitter,
    op: Operation,
    results: Cotangents,
    differentiate: Differentiate,
    active_operands: Sequence[bool],
) -> Cotangents:
    """The cotangents of a region op's operands from its results'
    (``active_operands``: which operands depend on a differentiated input)."""
    if isinstance(op, g.CondOp):
        return cond_vjp(emit, op, results, differentiate)
    if isinstance(op, g.ForOp):
        return for_vjp(emit, op, results, differentiate)
    assert isinstance(op, g.WhileOp)
    return while_vjp(emit, op, results, active_operands)
