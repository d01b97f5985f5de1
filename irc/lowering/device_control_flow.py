"""Which control flow runs inside one kernel: a fusion-level fact.

``tile`` lowers a ``graph.for`` or ``graph.while`` that fits one kernel to
that kernel, the loop inside (``irc.lowering.fusion_to_loop.device_loop``
and ``device_while``); every other control-flow op runs on the host
(``bufferize``). ``fuse`` asks the same question before it unrolls a while
loop (``irc.passes.while_unrolling``): a loop that runs on the device needs
no fewer host decisions. The rules (docs/lowering.md, "Control flow: where
each decision runs"):

- a ``graph.for`` whose body is one ``pointwise`` kernel, elementwise in the
  carries it changes (``device_loop``): element ``e`` of the next carries
  and of the ``ys`` slice depends on the carries at element ``e`` only. The
  changed carries, the kernel's outputs and the ``ys`` slices all have the
  kernel's iteration shape, and every op that reads a changed carry
  (directly or through another such op) is an elementwise op whose
  carry-dependent operands have that shape too, or the row update ``buf[i]
  = f(buf[i])``. What does not read a changed carry is free: the iteration
  index, the ``xs`` slices and the carries the body yields unchanged
  (closures: a weight, the array a ``buf[i] = x[i] * w`` reads) are
  read-only inputs, read at any index;
- a ``graph.while`` whose condition is one kernel and body one
  ``pointwise`` kernel, elementwise in the carries it changes as above, and
  whose changed carries hold at most ``DEVICE_WHILE_LANES`` elements, a
  static count (``device_while``): one program keeps them in registers for
  the whole loop. The condition may reduce them whole (a norm, a max),
  elementwise values of them and values computed from such reductions, and
  reads the unchanged carries at any index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from irc.dialects import fusion
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.dialects.sym import product
from irc.shapes import SymExpr

#: The most elements the carries a ``graph.while`` changes may hold for it
#: to run on the device: one program keeps them in registers for the whole
#: loop (``tile``'s ``max-persistent`` default, a row kernel's persistent
#: row).
DEVICE_WHILE_LANES = 4096


@dataclass(frozen=True)
class DeviceLoop:
    """A ``graph.for`` that runs inside its body's one pointwise ``kernel``;
    ``unchanged`` are the positions of the carries it yields as they came,
    ``row_axes`` the axes along which it reads a changed carry's row at the
    row it writes (``buf[i] = f(buf[i])``)."""

    op: g.ForOp
    kernel: fusion.KernelOp
    unchanged: frozenset[int]
    row_axes: frozenset[int]

    @property
    def changed(self) -> list[int]:
        """The positions of the carries the body computes."""
        return [k for k in range(len(self.op.carries)) if k not in self.unchanged]

    def replacements(self, kernel: Operation) -> list[SSAValue]:
        """What each of the loop's results becomes: an unchanged carry's
        initial value, else the device kernel's next output."""
        outputs = iter(kernel.results)
        return [
            self.op.carries[k] if k in self.unchanged else next(outputs)
            for k in range(len(self.op.outputs))
        ]


def device_loop(op: g.ForOp) -> DeviceLoop | None:
    """``op`` as a device loop if it can run inside its body's kernel (see
    the module docstring), else None."""
    body = op.body.block
    ops = list(body.ops)
    if len(ops) != 2 or not isinstance(ops[0], fusion.KernelOp):
        return None
    kernel, terminator = ops[0], ops[1]
    carries = len(op.carries)
    unchanged = frozenset(
        k for k in range(carries) if terminator.operands[k] is body.args[1 + k]
    )
    computed = [v for k, v in enumerate(terminator.operands) if k not in unchanged]
    if kernel.kernel_kind is not POINTWISE or set(computed) != set(kernel.outputs):
        return None
    if any(not isinstance(v, BlockArgument) for v in kernel.inputs):
        return None
    shape = g.tensor_type(kernel.outputs[0]).dims
    changed = [body.args[1 + k] for k in range(carries) if k not in unchanged]
    if any(g.tensor_type(v).dims != shape for v in [*changed, *kernel.outputs]):
        return None
    reading = {
        kernel.body.block.args[n]
        for n, value in enumerate(kernel.inputs)
        if value in changed
    }
    row_axes = _elementwise_in(reading, kernel.body.block.ops, shape)
    if row_axes is None:
        return None
    return DeviceLoop(op, kernel, unchanged, row_axes)


@dataclass(frozen=True)
class _OwnRow:
    """A row of a changed carry taken at the loop's ``index`` along ``axis``
    (``buf[i]``), or what elementwise ops compute from it, at one of three
    stages: the row, the row with a unit dim at ``axis`` (its reshape back)
    and the row broadcast along ``axis`` (``lanes``). Where ``iota[axis] ==
    index`` (the write of ``buf[i] = f(buf[i])``), the row is the lane's own
    element of the carry: a select on that guard makes it lanewise."""

    index: SSAValue
    axis: int
    stage: str


#: A changed carry's element at the lane, or what elementwise ops compute
#: from it.
_LANEWISE = "lanewise"


def _elementwise_in(
    carries: set[SSAValue], ops: Iterable[Operation], shape: Sequence[SymExpr]
) -> frozenset[int] | None:
    """Whether every value of the kernel computed from ``carries`` (its
    block arguments of the changed carries) is computed at each lane from
    the carries' elements at that lane: through elementwise ops on values of
    ``shape``, or through a row ``buf[i]`` written back at row ``i``
    (``_OwnRow``). The axes of such rows, or None."""
    kinds: dict[SSAValue, _OwnRow | str] = dict.fromkeys(carries, _LANEWISE)
    for op in ops:
        read = [kinds[v] for v in op.operands if v in kinds]
        if not read:
            continue
        if isinstance(op, fusion.YieldOp):
            if any(kind is not _LANEWISE for kind in read):
                return None
            continue
        kind = _dependence(op, kinds, shape)
        if kind is None:
            return None
        kinds[op.results[0]] = kind
    return frozenset(k.axis for k in kinds.values() if isinstance(k, _OwnRow))


def _dependence(
    op: Operation, kinds: dict[SSAValue, _OwnRow | str], shape: Sequence[SymExpr]
) -> _OwnRow | str | None:
    """How ``op``'s result depends on the changed carries, given its
    operands' ``kinds``, or None if not at the lane's own elements."""
    result = g.tensor_type(op.results[0])
    if isinstance(op, g.TakeOp):
        index = op.indices
        if kinds.get(op.table) is not _LANEWISE or index in kinds:
            return None
        if g.tensor_type(index).rank != 0:
            return None
        return _OwnRow(index, op.axis.value.data, "row")
    if isinstance(op, g.SelectOp) and op.condition not in kinds:
        row = kinds.get(op.true_value)
        if isinstance(row, _OwnRow) and row.stage == "lanes":
            guarded = _is_row_guard(op.condition, row)
            if guarded and kinds.get(op.false_value, _LANEWISE) is _LANEWISE:
                return _LANEWISE
            return None
    read = {kinds[v] for v in op.operands if v in kinds}
    if len(read) != 1:
        return None
    (kind,) = read
    if isinstance(op, fusion.ELEMENTWISE_OPS):
        if kind is _LANEWISE and result.dims == shape:
            return _LANEWISE
        if isinstance(kind, _OwnRow) and kind.stage == "row":
            return kind
        return None
    if not isinstance(kind, _OwnRow):
        return None
    source = g.tensor_type(op.operands[0]).dims
    if isinstance(op, g.ReshapeOp) and kind.stage == "row":
        unit = (*source[: kind.axis], SymExpr.const(1), *source[kind.axis :])
        if result.dims == unit:
            return _OwnRow(kind.index, kind.axis, "unit")
    if isinstance(op, g.BroadcastOp) and kind.stage == "unit" and result.dims == shape:
        return _OwnRow(kind.index, kind.axis, "lanes")
    return None


def _is_row_guard(condition: SSAValue, row: _OwnRow) -> bool:
    """Whether ``condition`` is ``iota[row.axis] == row.index`` over the
    kernel's shape (the index broadcast), either way round."""
    op = condition.owner
    if not isinstance(op, g.CompareOp) or op.predicate.data.value != "eq":
        return False
    sides = {type(v.owner) for v in op.operands}
    if sides != {g.IotaOp, g.BroadcastOp}:
        return False
    iota, spread = sorted(
        (v.owner for v in op.operands), key=lambda o: isinstance(o, g.BroadcastOp)
    )
    assert isinstance(iota, g.IotaOp) and isinstance(spread, g.BroadcastOp)
    return iota.axis.value.data == row.axis and spread.input is row.index


@dataclass(frozen=True)
class DeviceWhile:
    """A ``graph.while`` that runs inside one program: ``condition`` and
    ``body`` are its regions' kernels, ``unchanged`` the positions of the
    carries its body yields as they came, ``shape`` that of the others."""

    op: g.WhileOp
    condition: fusion.KernelOp
    body: fusion.KernelOp
    unchanged: frozenset[int]
    shape: tuple[SymExpr, ...]

    @property
    def changed(self) -> list[int]:
        """The positions of the carries the body computes."""
        return [k for k in range(len(self.op.inputs)) if k not in self.unchanged]

    def replacements(self, kernel: Operation) -> list[SSAValue]:
        """What each of the loop's results becomes: an unchanged carry's
        initial value, else the device kernel's output."""
        outputs = iter(kernel.results)
        return [
            self.op.inputs[k] if k in self.unchanged else next(outputs)
            for k in range(len(self.op.outputs))
        ]


def device_while(
    op: g.WhileOp, max_lanes: int = DEVICE_WHILE_LANES
) -> DeviceWhile | None:
    """``op`` as a device while loop if it runs inside one program (see the
    module docstring), else None."""
    condition = _only_kernel(op.cond_region.block)
    body = _only_kernel(op.body_region.block)
    if condition is None or body is None or body.kernel_kind is not POINTWISE:
        return None
    tested = op.cond_region.block.last_op
    assert tested is not None
    if list(tested.operands) != list(condition.outputs):
        return None  # the test must be the condition kernel's one result
    block = op.body_region.block
    terminator = block.last_op
    assert terminator is not None
    carries = len(op.inputs)
    unchanged = frozenset(
        k for k in range(carries) if terminator.operands[k] is block.args[k]
    )
    computed = [v for k, v in enumerate(terminator.operands) if k not in unchanged]
    if not computed or set(computed) != set(body.outputs):
        return None
    shape = tuple(g.tensor_type(body.outputs[0]).dims)
    numel = product(shape).constant
    if numel is None or numel > max_lanes:
        return None
    changed = [k for k in range(carries) if k not in unchanged]
    if any(g.tensor_type(op.inputs[k]).dims != shape for k in changed):
        return None
    if any(g.tensor_type(v).dims != shape for v in body.outputs):
        return None
    rows = _elementwise_in(_reading(body, block, changed), body.body.block.ops, shape)
    if rows is None or rows:  # a row update needs a loop index, which a while has not
        return None
    reading = _reading(condition, op.cond_region.block, changed)
    if not _reduces_whole(reading, condition.body.block.ops, shape):
        return None
    return DeviceWhile(op, condition, body, unchanged, shape)


def _only_kernel(block: Block) -> fusion.KernelOp | None:
    """The one kernel of a region's ``block`` that reads only the region's
    arguments and gives what the region yields, if it is so."""
    ops = list(block.ops)
    if len(ops) != 2 or not isinstance(ops[0], fusion.KernelOp):
        return None
    kernel, terminator = ops
    if any(not isinstance(v, BlockArgument) for v in kernel.inputs):
        return None
    if not set(terminator.operands) <= {*kernel.outputs, *block.args}:
        return None
    return kernel


def _reading(
    kernel: fusion.KernelOp, region: Block, changed: Sequence[int]
) -> set[SSAValue]:
    """The block arguments of ``kernel`` that are the changed carries of the
    region whose block is ``region``."""
    carries = {region.args[k] for k in changed}
    return {
        kernel.body.block.args[n]
        for n, value in enumerate(kernel.inputs)
        if value in carries
    }


#: A value computed from a whole reduction of the carries: one element, the
#: same for every lane.
_WHOLE = "whole"


def _reduces_whole(
    carries: set[SSAValue], ops: Iterable[Operation], shape: Sequence[SymExpr]
) -> bool:
    """Whether a condition kernel computes from the changed ``carries``
    (its block arguments) only lanewise values of ``shape``, reductions of
    such values over every axis, and values of one element computed from
    those, which it may broadcast back to the lanes."""
    kinds: dict[SSAValue, str] = dict.fromkeys(carries, _LANEWISE)
    for op in ops:
        read = {kinds[v] for v in op.operands if v in kinds}
        if not read:
            continue
        if isinstance(op, fusion.YieldOp):
            return read == {_WHOLE}
        kind = _whole_dependence(op, read, shape)
        if kind is None:
            return False
        kinds[op.results[0]] = kind
    return True


def _whole_dependence(
    op: Operation, read: set[str], shape: Sequence[SymExpr]
) -> str | None:
    """What ``op`` computes, from operands of the ``read`` kinds, for
    ``_reduces_whole``; None if it is neither lanewise nor whole."""
    result = g.tensor_type(op.results[0]).dims
    single = product(result).constant == 1
    if isinstance(op, g.ReduceOp):
        source = g.tensor_type(op.operands[0]).dims
        whole = sorted(op.axis_list) == list(range(len(source)))
        return _WHOLE if read == {_LANEWISE} and whole and single else None
    if isinstance(op, fusion.ELEMENTWISE_OPS):
        if read == {_LANEWISE} and tuple(result) == tuple(shape):
            return _LANEWISE
        return _WHOLE if read == {_WHOLE} and single else None
    if isinstance(op, g.BroadcastOp | g.ReshapeOp) and read == {_WHOLE}:
        if single:
            return _WHOLE
        return _LANEWISE if tuple(result) == tuple(shape) else None
    return None
