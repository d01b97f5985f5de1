"""What a joint function's backward reads from its forward: a min-cut over
bytes, for the whole graph (``fuse``'s recompute-or-store decision).

A forward value the backward uses is either *saved* (a forward kernel
stores it, backward kernels read it) or *recomputed* in the backward
kernels from saved values. Choosing value by value misses what the values
share: after a residual add feeds a layer norm, the centred rows and the
normalised ones each read two tensors (the residual's operands), so each
alone is cheaper stored; both recomputed from the one residual sum, stored
once, are cheaper still. As AOTAutograd's partitioner does, the choice is a
minimum cut of a flow network over the forward ops:

- each forward op and argument is an edge ``in -> out`` whose capacity is
  the bytes saving its result moves: a write by the forward and a read by
  the backward, or the read alone when the forward stores it anyway (an
  argument, a returned value, an operand of a matmul or a value a matmul
  kernel yields to a reduction);
- an unbounded edge leads from each operand's ``out`` to its user's ``in``,
  from each forward value the backward uses to the sink, and from the
  source to the ``in`` of what the backward cannot recompute: arguments,
  matmuls, reductions, scans, gathers, control flow, and an elementwise
  value a backward kernel cannot recompute (a matmul's operand, unless a
  cast or a scaling by a constant, which its tiles are loaded through);
- a layout op is not saved unless the backward cannot recompute it
  (``fuse`` copies layout ops into every kernel reading them); what a
  kernel reads through layout ops (``transpose(x)``'s tiles from ``x``'s)
  is where the reads are weighed.

The cut's saved values are the ops whose ``in`` lies on the source's side
and ``out`` on the sink's; the forward ops on the sink's side are
recomputed (those the backward's reads depend on). The backward is the
ops whose location ``autodiff`` marked (``is_backward_op`` of
``irc.source_locations``) and the private copies of the score-shaped ops
that attention-backward kernels recompute per block. Symbolic dims count
``NOMINAL_SIZE`` elements when bytes are weighed (at least one). Of cuts
that move as many bytes, the one reading arguments (in memory anyway) is
taken, then the one saving later ops, nearer to the backward.

Only the decisions ``fuse`` makes for an elementwise value several kernels
use follow the cut; a kernel that refuses a recomputed value still stores it
(the kernel's reason says why). See docs/autodiff.md, "What the backward
reads: a min-cut over bytes".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from xdsl.dialects import func
from xdsl.ir import Block, Operation, SSAValue

from irc.analysis.min_cut import FlowNetwork
from irc.dialects.fusion import (
    ELEMENTWISE_OPS,
    LAYOUT_OPS,
    ROW_OPS,
    is_source,
    loads_operand_tiles,
)
from irc.dialects.graph import MatmulOp, TensorType
from irc.dialects.graph import YieldOp as RegionYieldOp
from irc.shapes import ShapeError, SymExpr
from irc.source_locations import is_backward_op

#: The elements a symbolic dim counts when the cut weighs bytes: the order
#: of the tokens of a training batch, so that a ``[T, 256]`` tensor weighs
#: four ``[T, 64]`` ones and a per-row ``[T, 1]`` statistic next to nothing.
NOMINAL_SIZE = 4096

#: How far along an elementwise chain a matmul or a reduction is looked for.
_CHAIN_DEPTH = 64

_SAVED_AS_CHEAPER = "saving it moves fewer bytes than recomputing it"


@dataclass(frozen=True)
class SavedActivations:
    """The cut's decision for the forward values the backward uses."""

    #: Forward ops whose results the backward reads, with why they are not
    #: recomputed.
    saved: Mapping[Operation, str]
    #: Forward ops the backward recomputes from saved values.
    recomputed: frozenset[Operation]
    #: The bytes the cut moves (at ``NOMINAL_SIZE``).
    capacity: int


NO_BACKWARD = SavedActivations(MappingProxyType({}), frozenset(), 0)

_Node = tuple[object, str] | str
_SOURCE, _SINK = "source", "sink"


def plan_saved_activations(
    block: Block, walk_ops: Iterable[Operation] = ()
) -> SavedActivations:
    """The min-cut of ``block``'s forward and backward; ``NO_BACKWARD``
    when no op of it is a backward op. ``walk_ops`` are the ops that
    attention-backward kernels hold (backward ops, wherever they came
    from)."""
    walked = set(walk_ops)
    backward = {op for op in block.ops if is_backward_op(op) or op in walked}
    if not backward:
        return NO_BACKWARD
    return _JointFunction(block, backward).cut()


class _JointFunction:
    """The flow network of one block's forward and backward."""

    def __init__(self, block: Block, backward: set[Operation]) -> None:
        self.block = block
        self.backward = backward
        self.forward = [
            op
            for op in block.ops
            if op not in backward and not isinstance(op, func.ReturnOp | RegionYieldOp)
        ]
        # Every cut's sum of tie-breaking penalties stays below one byte's.
        self.scale = len(self.forward) ** 2 + 1
        self.network: FlowNetwork[_Node] = FlowNetwork()
        self.banned: dict[Operation, str] = {}

    def cut(self) -> SavedActivations:
        for value in _read_from_outside(self.block):
            self._add_value_in_memory(value)
        for position, op in enumerate(self.forward):
            self._add_op(op, penalty=len(self.forward) - position)
        cut = self.network.min_cut(_SOURCE, _SINK)
        side = cut.source_side
        saved = {
            op: self.banned.get(op, _SAVED_AS_CHEAPER)
            for op in self.forward
            if (op, "in") in side and (op, "out") not in side
        }
        needed = self._needed_by_backward()
        recomputed = frozenset(op for op in needed if (op, "in") not in side)
        return SavedActivations(saved, recomputed, cut.capacity // self.scale)

    def _add_value_in_memory(self, value: SSAValue) -> None:
        """An argument, or a value of an enclosing block: read, never
        written, by whoever saves it."""
        self.network.add_edge(_SOURCE, (value, "in"), None)
        self.network.add_edge(
            (value, "in"), (value, "out"), _bytes([value]) * self.scale
        )
        if _used_by(value, self.backward):
            self.network.add_edge((value, "out"), _SINK, None)

    def _add_op(self, op: Operation, penalty: int) -> None:
        banned = _not_recomputable(op, self.backward)
        if banned is not None:
            self.banned[op] = banned
            self.network.add_edge(_SOURCE, (op, "in"), None)
        cost = _save_cost(op, self.backward, banned)
        capacity = None if cost is None else cost * self.scale + penalty
        self.network.add_edge((op, "in"), (op, "out"), capacity)
        for operand in op.operands:
            producer = _producer(operand, self.block)
            self.network.add_edge((producer, "out"), (op, "in"), None)
        if any(_used_by(result, self.backward) for result in op.results):
            self.network.add_edge((op, "out"), _SINK, None)

    def _needed_by_backward(self) -> set[Operation]:
        """The forward ops whose values the backward reads, and the forward
        ops those are computed from."""
        needed: set[Operation] = set()
        pending = [
            op
            for op in self.forward
            if any(_used_by(result, self.backward) for result in op.results)
        ]
        while pending:
            op = pending.pop()
            if op in needed:
                continue
            needed.add(op)
            for operand in op.operands:
                producer = _producer(operand, self.block)
                if isinstance(producer, Operation) and producer not in self.backward:
                    pending.append(producer)
        return needed


def _read_from_outside(block: Block) -> list[SSAValue]:
    """The values ``block``'s ops read that no op of it defines."""
    outside = dict.fromkeys(block.args)
    for op in block.ops:
        for operand in op.operands:
            if _producer(operand, block) is operand:
                outside[operand] = None
    return list(outside)


def _producer(value: SSAValue, block: Block) -> object:
    """The flow network's name for where ``value`` comes from: its op, when
    an op of ``block`` defines it, else the value."""
    owner = value.owner
    if isinstance(owner, Operation) and owner.parent_block() is block:
        return owner
    return value


def _users(value: SSAValue) -> list[Operation]:
    return [use.operation for use in value.uses]


def _used_by(value: SSAValue, ops: set[Operation]) -> bool:
    return any(user in ops for user in _users(value))


def _readers(value: SSAValue) -> list[Operation]:
    """The ops that read ``value``'s elements: its users, and instead of a
    layout op among them, its readers (a kernel computes a layout op where
    it reads it: a matmul reads ``transpose(x)``'s tiles from ``x``'s)."""
    readers: list[Operation] = []
    pending, seen = [value], {value}
    while pending:
        for user in _users(pending.pop()):
            if not isinstance(user, LAYOUT_OPS):
                readers.append(user)
            elif user.results[0] not in seen:
                seen.add(user.results[0])
                pending.append(user.results[0])
    return readers


def _not_recomputable(op: Operation, backward: set[Operation]) -> str | None:
    """Why the backward cannot recompute ``op`` (None when it can)."""
    if not (is_source(op) or isinstance(op, (*ELEMENTWISE_OPS, *LAYOUT_OPS))):
        return f"{op.name} is not recomputed (only elementwise and layout ops are)"
    for result in op.results:
        for reader in _readers(result):
            if reader in backward and not _recomputes(reader, op):
                return f"{reader.name} in the backward cannot recompute it"
    return None


def _recomputes(reader: Operation, op: Operation) -> bool:
    """Whether the kernel of ``reader`` can compute ``op`` at the indices
    it reads it: elementwise ops and reductions can; a matmul loads its
    operands' tiles through layout ops, casts and scalings by a constant
    only (``loads_operand_tiles``)."""
    if isinstance(reader, (*ELEMENTWISE_OPS, *ROW_OPS)):
        return True
    return isinstance(reader, MatmulOp) and loads_operand_tiles(op)


def _save_cost(
    op: Operation, backward: set[Operation], banned: str | None
) -> int | None:
    """The bytes that saving ``op``'s results moves: written by the forward
    unless it stores them anyway, and read by the backward; unbounded for a
    layout op the backward can recompute (its operand is saved instead)."""
    if isinstance(op, LAYOUT_OPS) and banned is None:
        return None
    size = _bytes(op.results)
    return size if _stored_by_forward(op, backward) else 2 * size


def _stored_by_forward(op: Operation, backward: set[Operation]) -> bool:
    """Whether the forward's kernels store ``op``'s results anyway: they are
    returned, a forward reader cannot compute them in its own kernel, or
    they lie on the elementwise way from a matmul to a reduction of its
    result (a reduction kernel holds no matmul, so a value on that way is
    stored: which one is ``fuse``'s choice)."""
    for result in op.results:
        for reader in _readers(result):
            if reader in backward:
                continue
            if isinstance(reader, func.ReturnOp | RegionYieldOp):
                return True
            if not _recomputes(reader, op):
                return True
    return _in_matmul_epilogue(op) and _reaches_a_reduction(op, backward)


def _reaches_a_reduction(op: Operation, backward: set[Operation]) -> bool:
    """Whether a forward reduction reads ``op``'s results through forward
    elementwise and layout ops."""
    pending, seen = [op], {op}
    while pending and len(seen) <= _CHAIN_DEPTH:
        for result in pending.pop().results:
            for user in _users(result):
                if user in backward or user in seen:
                    continue
                if isinstance(user, ROW_OPS):
                    return True
                if isinstance(user, (*ELEMENTWISE_OPS, *LAYOUT_OPS)):
                    seen.add(user)
                    pending.append(user)
    return False


def _in_matmul_epilogue(op: Operation) -> bool:
    """Whether a matmul kernel computes ``op``: a matmul, or an elementwise
    op of one's result and of no row statistic (a kernel computes a row's
    statistic of a matmul's result only after the matmul's)."""
    pending, seen = [op], {op}
    reads_a_matmul = False
    while pending:
        current = pending.pop()
        if isinstance(current, ROW_OPS) or len(seen) > _CHAIN_DEPTH:
            return False
        if isinstance(current, MatmulOp):
            reads_a_matmul = True
            continue
        if not isinstance(current, (*ELEMENTWISE_OPS, *LAYOUT_OPS)):
            continue
        for operand in current.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner not in seen:
                seen.add(owner)
                pending.append(owner)
    return reads_a_matmul


def _bytes(values: Iterable[SSAValue]) -> int:
    """The bytes of ``values`` with each symbolic dim at ``NOMINAL_SIZE``."""
    total = 0
    for value in values:
        if not isinstance(value.type, TensorType):
            total += 8
            continue
        elements = 1
        for dim in value.type.dims:
            elements *= _nominal(dim)
        total += elements * ((value.type.element_type.bitwidth + 7) // 8)
    return total


def _nominal(dim: SymExpr) -> int:
    """``dim``'s size with each symbol at ``NOMINAL_SIZE``, at least one
    (``N - 5000`` would be negative there)."""
    try:
        return max(1, dim.evaluate(dict.fromkeys(dim.symbols, NOMINAL_SIZE)))
    except (ShapeError, ArithmeticError):
        return NOMINAL_SIZE
