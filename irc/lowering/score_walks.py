"""Attention's backward without its probabilities: the score walks that
``fuse`` plans before grouping.

The backward of an attention chain (``softmax(q @ k^T) @ v``) multiplies
score-shaped values (``P``, ``dS = P * (dP - D)``, masked and scaled) by
``q``, ``k``, ``v`` and ``dO``: ``dv = P^T @ dO`` and ``dk = dS^T @ q``
contract the queries, ``dq = dS @ k`` the keys. Each such matmul is an
``attention_backward`` kernel (``irc.dialects.fusion.ScoreWalk``): per block
of the axis it keeps, it walks the other, recomputing the scores and every
score-shaped value from ``q``, ``k``, ``dO``, ``v`` and the rows'
statistics, as flash attention's backward does. The matmuls walking the
same axis of one chain's scores share a kernel.

Before the planner groups ops, ``plan_score_walks`` finds these matmuls and
gives each set of them a private copy of the score-shaped ops it reads (the
*cone*: elementwise ops, transposes of the last two axes, broadcasts of
per-row or per-score values, and the matmuls with a static head dim that
compute scores); the forward's scores and probabilities are then read by
its attention kernel alone, which stores only its output and its rows' max
and sums. No ``[..., T, S]`` tensor is kept between forward and backward.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.ir import Block, Operation, SSAValue

from irc.dialects.fusion import (
    ELEMENTWISE_OPS,
    MAX_HEAD_DIM,
    AttentionChain,
    Shape,
    shape_of,
    swaps_last_two,
)
from irc.dialects.graph import BroadcastOp, ConstantOp, IotaOp, MatmulOp, TransposeOp

#: The most ops a cone may hold (a larger one is not attention's backward).
CONE_LIMIT = 64


@dataclass(eq=False)
class WalkPlan:
    """The matmuls of one ``attention_backward`` kernel (in block order)
    and the ops it holds: theirs and their cone's private copy."""

    accumulations: list[MatmulOp]
    ops: set[Operation] = field(default_factory=set)


@dataclass(frozen=True)
class _Candidate:
    matmul: MatmulOp
    chain: AttentionChain
    #: Which of the scores' axes the matmul contracts: -2 the queries,
    #: -1 the keys.
    walked: int
    cone: frozenset[Operation]


def plan_score_walks(block: Block) -> dict[MatmulOp, WalkPlan]:
    """Find the matmuls of ``block`` that walk an attention chain's scores,
    give each set walking the same axis of one chain a private copy of its
    cone, placed before the last of them (where the others move); return
    each matmul's plan."""
    chains = _chains(block)
    if not chains:
        return {}
    candidates = [
        found
        for op in block.ops
        if isinstance(op, MatmulOp) and (found := _candidate(op, chains)) is not None
    ]
    groups: dict[tuple[MatmulOp, int], list[_Candidate]] = {}
    for candidate in candidates:
        key = (candidate.chain.output, candidate.walked)
        groups.setdefault(key, []).append(candidate)
    plans: dict[MatmulOp, WalkPlan] = {}
    for members in groups.values():
        # Positions after the groups before have moved and copied ops.
        position = {op: index for index, op in enumerate(block.ops)}
        for kernel in _schedulable(members, position):
            plan = _privatize(block, kernel)
            plans.update(dict.fromkeys(plan.accumulations, plan))
    return plans


def _chains(
    block: Block,
) -> dict[MatmulOp, tuple[AttentionChain, frozenset[Operation]]]:
    """Each attention chain of ``block`` by its output matmul, with its
    score-shaped ops (from the scores matmul to ``P``)."""
    chains = {}
    for op in block.ops:
        if not isinstance(op, MatmulOp):
            continue
        chain = AttentionChain.of(op)
        if isinstance(chain, str):
            continue
        ops = _cone(chain.output.lhs, _score_shapes(chain))
        if ops is not None and chain.scores in ops:
            chains[op] = (chain, ops)
    return chains


def _score_shapes(chain: AttentionChain) -> tuple[Shape, Shape]:
    shape = shape_of(chain.scores.result)
    return shape, (*shape[:-2], shape[-1], shape[-2])


def _candidate(
    op: MatmulOp,
    chains: dict[MatmulOp, tuple[AttentionChain, frozenset[Operation]]],
) -> _Candidate | None:
    """``op`` as a matmul walking a chain's scores: one operand is computed
    through a cone from the chain's scores (and what else is score-shaped),
    the other is not score-shaped."""
    if any(op in (chain.output, chain.scores) for chain, _ in chains.values()):
        return None
    for chain, chain_ops in chains.values():
        shapes = _score_shapes(chain)
        for side, operand in enumerate(op.operands):
            if (
                shape_of(operand) not in shapes
                or shape_of(op.operands[1 - side]) in shapes
            ):
                continue
            if not _fits_a_walk(op, side):
                continue
            cone = _cone(operand, shapes)
            if cone is None or chain.scores not in cone:
                continue  # it does not recompute this chain's scores
            # The operand's walked axis (the one the matmul contracts), as
            # an axis of the chain's scores.
            walked = _walked_axis(operand, -1 if side == 0 else -2, chain_ops)
            if walked is not None:
                return _Candidate(op, chain, walked, cone)
    return None


def _fits_a_walk(op: MatmulOp, side: int) -> bool:
    """Whether ``op``, its operand ``side`` score-shaped, keeps what a walk
    holds per block in registers (``ScoreWalk``'s contract): the other
    operand's head dim static and at most ``MAX_HEAD_DIM``, and the
    score-shaped operand's batch the result's."""
    other = shape_of(op.operands[1 - side])
    head = (other[-1] if side == 0 else other[-2]).constant
    batch = shape_of(op.operands[side])[:-2] == shape_of(op.result)[:-2]
    return batch and head is not None and head <= MAX_HEAD_DIM


def _cone(value: SSAValue, shapes: Sequence[Shape]) -> frozenset[Operation] | None:
    """The score-shaped ops computing ``value`` from values of other shapes
    (and sources), with the elementwise arithmetic of the values that a
    broadcast spreads over the scores (``1 / sum``); or None where one of
    them cannot be recomputed per block of scores."""
    cone: set[Operation] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        op = current.owner
        if (
            not isinstance(op, Operation)
            or op in cone
            or isinstance(op, ConstantOp | IotaOp)
        ):
            continue
        if shape_of(current) not in shapes:
            if isinstance(op, ELEMENTWISE_OPS):
                cone.add(op)  # a broadcast value's arithmetic (``1 / sum``)
                pending.extend(op.operands)
            if len(cone) > CONE_LIMIT:
                return None
            continue
        if isinstance(op, MatmulOp):
            contracted = shape_of(op.lhs)[-1].constant
            if contracted is None or contracted > MAX_HEAD_DIM:
                return None
            if any(shape_of(operand) in shapes for operand in op.operands):
                return None
        elif isinstance(op, BroadcastOp):
            if shape_of(op.operands[0]) in shapes:
                return None
        elif not (isinstance(op, ELEMENTWISE_OPS) or swaps_last_two(op)):
            return None
        cone.add(op)
        if len(cone) > CONE_LIMIT:
            return None
        if not isinstance(op, MatmulOp):
            pending.extend(op.operands)
    return frozenset(cone)


def _walked_axis(
    value: SSAValue, axis: int, chain_ops: frozenset[Operation]
) -> int | None:
    """Which axis of the chain's scores ``value``'s ``axis`` is, through
    the elementwise ops and transposes between them; None when the paths
    disagree or none reaches the chain."""
    found: set[int] = set()
    pending = [(value, axis)]
    seen: set[tuple[SSAValue, int]] = set()
    while pending:
        current, current_axis = pending.pop()
        if (current, current_axis) in seen:
            continue
        seen.add((current, current_axis))
        op = current.owner
        if op in chain_ops:
            found.add(current_axis)
            continue
        if isinstance(op, TransposeOp) and swaps_last_two(op):
            pending.append((op.operands[0], -3 - current_axis))
        elif isinstance(op, ELEMENTWISE_OPS):
            pending.extend(
                (operand, current_axis)
                for operand in op.operands
                if shape_of(operand) == shape_of(current)
            )
    return found.pop() if len(found) == 1 else None


def _schedulable(
    members: list[_Candidate], position: dict[Operation, int]
) -> list[list[_Candidate]]:
    """``members`` (walking one axis of one chain) in kernels: one with the
    last of them and every earlier one that neither it nor another of the
    kernel's depends on, whose readers before the last are graph ops
    (they move after it); one kernel each for the others."""
    members = sorted(members, key=lambda c: position[c.matmul])
    last = members[-1]
    batch = shape_of(last.matmul.result)[:-2]
    shared = [last]
    alone: list[list[_Candidate]] = []
    for candidate in reversed(members[:-1]):
        matmul = candidate.matmul
        # What reads it moves after the last: graph ops only, so that no
        # effect (a debug print, a region) changes its order.
        movable = all(
            op.dialect_name() == "graph" and not op.regions
            for op in _dependents(matmul, last.matmul)
        )
        independent = not any(
            _depends_on(other.matmul, matmul, position) for other in shared
        )
        if movable and independent and shape_of(matmul.result)[:-2] == batch:
            shared.append(candidate)
        else:
            alone.append([candidate])
    return [shared[::-1], *alone]


def _depends_on(
    op: Operation, target: Operation, position: dict[Operation, int]
) -> bool:
    """Whether ``op`` reads ``target``'s results, through any ops."""
    pending, seen = [op], {op}
    while pending:
        for operand in pending.pop().operands:
            owner = operand.owner
            if owner is target:
                return True
            if (
                isinstance(owner, Operation)
                and owner not in seen
                and position.get(owner, -1) > position[target]
            ):
                seen.add(owner)
                pending.append(owner)
    return False


def _dependents(op: Operation, end: Operation) -> list[Operation]:
    """The ops after ``op`` and before ``end`` (which follows it in its
    block) that read its results, through any ops, in block order."""
    found: set[Operation] = {op}
    dependents = []
    current = op.next_op
    while current is not end:
        assert current is not None, "end follows op in its block"
        if any(operand.owner in found for operand in current.operands):
            found.add(current)
            dependents.append(current)
        current = current.next_op
    return dependents


def _privatize(block: Block, kernel: list[_Candidate]) -> WalkPlan:
    """Move the kernel's matmuls before its last one (what reads them after
    it), clone their cones before them, make them read the clones, and
    erase what of the cones nothing reads any more."""
    last = kernel[-1].matmul
    # The others move down to it, what reads them after it.
    after = last
    for candidate in kernel[:-1]:
        for dependent in _dependents(candidate.matmul, last):
            dependent.detach()
            block.insert_op_after(dependent, after)
            after = dependent
        candidate.matmul.detach()
        block.insert_op_before(candidate.matmul, last)
    first = kernel[0].matmul
    cone = set().union(*(candidate.cone for candidate in kernel))
    originals = [op for op in block.ops if op in cone]
    clones: dict[SSAValue, SSAValue] = {}
    plan = WalkPlan([])
    for op in originals:
        clone = op.clone(value_mapper=clones)  # which maps its results too
        block.insert_op_before(clone, first)
        plan.ops.add(clone)
    for candidate in kernel:
        matmul = candidate.matmul
        for index, operand in enumerate(matmul.operands):
            if operand in clones:
                matmul.operands[index] = clones[operand]
        plan.accumulations.append(matmul)
        plan.ops.add(matmul)
    for op in reversed(originals):
        if not any(result.uses for result in op.results):
            block.erase_op(op)
    return plan
