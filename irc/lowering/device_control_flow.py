"""Which control flow runs inside one kernel: a fusion-level fact.

``tile`` lowers a ``graph.for``, ``graph.while`` or ``graph.cond`` that
fits one kernel to that kernel, the control flow inside
(``irc.lowering.fusion_to_loop.device_loop``, ``device_while`` and
``device_cond``); every other control-flow op runs on the host
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
- a ``graph.while`` whose regions hold pointwise and row kernels that
  compute, from the carries the body changes, only *lanewise* values
  (elementwise, of the changed carries' one shape, the lanes) and *whole*
  ones (one element: a reduction of a lanewise value over every axis, a
  counter carry, what elementwise ops compute from those), over at most
  ``DEVICE_WHILE_LANES`` lanes (a static count, or one the facts in scope
  bound: ``facts=["N <= 4096"]``) (``device_while``): one program keeps the
  carries in registers for the whole loop. The unchanged carries are read
  at any index;
- a ``graph.cond`` whose results have one shape and whose branches are
  pointwise kernels over it, passing values from one kernel to the next at
  each lane's own element (``device_cond``): each program reads the
  predicate and computes the taken branch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from irc.dialects import fusion
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.dialects.sym import facts_in_scope, product
from irc.shapes import Facts, SymExpr

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
    """A ``graph.while`` that runs inside one program (see the module
    docstring): ``unchanged`` are the positions of the carries its body
    yields as they came, ``shape`` the lanes' (that of its lanewise
    values), ``lanes`` how many the program holds (a power of two, at least
    the lanes' count wherever the facts hold), ``kinds`` whether each value
    of its regions (a carry's argument, a kernel's result) is
    ``LANEWISE`` or ``WHOLE``."""

    op: g.WhileOp
    unchanged: frozenset[int]
    shape: tuple[SymExpr, ...]
    lanes: int
    kinds: Mapping[SSAValue, str]

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


#: A value with one element (a whole reduction of the lanes, a counter):
#: the same for every lane, held once.
WHOLE = "whole"
#: A value of the lanes' shape computed at each lane from the lane's own
#: elements.
LANEWISE = _LANEWISE


def device_while(
    op: g.WhileOp, facts: Facts | None = None, max_lanes: int = DEVICE_WHILE_LANES
) -> DeviceWhile | None:
    """``op`` as a device while loop if it runs inside one program (see the
    module docstring), else None; ``facts``: those in scope of ``op``
    unless given (for a copy outside the function)."""
    body = op.body_region.block
    terminator = body.last_op
    assert terminator is not None
    carries = len(op.inputs)
    unchanged = frozenset(
        k for k in range(carries) if terminator.operands[k] is body.args[k]
    )
    changed = [k for k in range(carries) if k not in unchanged]
    shapes = {tuple(g.tensor_type(op.inputs[k]).dims) for k in changed}
    lanewise = {shape for shape in shapes if not _single(shape)}
    if not changed or len(lanewise) > 1:
        return None
    shape = lanewise.pop() if lanewise else ()
    if facts is None:
        facts = facts_in_scope(op)
    lanes = _lanes(facts, shape, max_lanes)
    if lanes is None:
        return None
    kinds: dict[SSAValue, str] = {}
    for region in (op.cond_region.block, body):
        for k in changed:
            single = _single(g.tensor_type(region.args[k]).dims)
            kinds[region.args[k]] = WHOLE if single else LANEWISE
        if not _region_runs_in_lanes(region, kinds, shape):
            return None
    if not any(isinstance(o, fusion.KernelOp) for r in op.regions for o in r.ops):
        return None  # nothing to compute: the carries only move around
    (test,) = op.cond_region.block.last_op.operands
    if kinds.get(test) is not WHOLE:
        return None
    if any(kinds.get(terminator.operands[k]) is None for k in changed):
        return None
    return DeviceWhile(op, unchanged, shape, lanes, kinds)


def _single(dims: Sequence[SymExpr]) -> bool:
    return product(dims).constant == 1


def _lanes(facts: Facts, shape: Sequence[SymExpr], max_lanes: int) -> int | None:
    """The power of two of lanes a program needs for ``shape``: its count,
    or the ``facts``' bound on it, if at most ``max_lanes``; else None."""
    count = product(shape)
    bound = count.constant
    if bound is None:
        bound = facts.bounds(count)[1]
    if bound is None or bound > max_lanes:
        return None
    return 1 << (bound - 1).bit_length()


def _region_runs_in_lanes(
    region: Block, kinds: dict[SSAValue, str], shape: Sequence[SymExpr]
) -> bool:
    """Whether every op of ``region`` but its terminator is a pointwise or
    row kernel that computes, from the changed carries, only lanewise and
    whole values (``_kind_in_lanes``), each of its results one of those;
    records their kinds in ``kinds``. The unchanged carries are free: read
    at any index."""
    for op in region.ops:
        if op is region.last_op:
            return True
        if not isinstance(op, fusion.KernelOp):
            return False
        if op.kernel_kind.name not in ("pointwise", "reduction"):
            return False
        inner = dict(zip(op.body.block.args, op.inputs, strict=True))
        values = {a: kinds[v] for a, v in inner.items() if v in kinds}
        for inner_op in op.body.block.ops:
            read = {values[v] for v in inner_op.operands if v in values}
            if isinstance(inner_op, fusion.YieldOp):
                break
            if not read:
                if isinstance(inner_op, _NOT_AT_AN_INDEX):
                    return False  # a free reduction: not a value at the lanes
                continue
            kind = _kind_in_lanes(inner_op, read, shape)
            if kind is None:
                return False
            values[inner_op.results[0]] = kind
        assert isinstance(inner_op, fusion.YieldOp)
        for result, yielded in zip(op.outputs, inner_op.operands, strict=True):
            kind = values.get(yielded) or _free_kind(yielded, shape)
            if kind is None:
                return False
            kinds[result] = kind
    return True


#: The ops a program computes over a whole axis, not at an index.
_NOT_AT_AN_INDEX = (g.ReduceOp, g.ArgMaxOp, g.ScanOp, g.MatmulOp, g.ScatterAddOp)


def _free_kind(value: SSAValue, shape: Sequence[SymExpr]) -> str | None:
    """The kind of a kernel result computed without the changed carries:
    by its shape, which must be the lanes' or one element."""
    dims = g.tensor_type(value).dims
    if _single(dims):
        return WHOLE
    return LANEWISE if tuple(dims) == tuple(shape) else None


def _kind_in_lanes(
    op: Operation, read: set[str], shape: Sequence[SymExpr]
) -> str | None:
    """What ``op`` computes from operands of the ``read`` kinds: lanewise
    (an elementwise op on values of the lanes' shape, a whole value
    broadcast to it), whole (a reduction of a lanewise value over every
    axis, an elementwise op, reshape or broadcast of whole values to one
    element), or None (anything else reads a lane's neighbours)."""
    result = tuple(g.tensor_type(op.results[0]).dims)
    single = _single(result)
    if isinstance(op, g.ReduceOp):
        source = tuple(g.tensor_type(op.operands[0]).dims)
        whole = sorted(op.axis_list) == list(range(len(source)))
        lanes = read == {LANEWISE} and source == tuple(shape)
        return WHOLE if lanes and whole and single else None
    if isinstance(op, fusion.ELEMENTWISE_OPS):
        if read == {LANEWISE} and result == tuple(shape):
            return LANEWISE
        return WHOLE if read == {WHOLE} and single else None
    if isinstance(op, g.BroadcastOp | g.ReshapeOp) and read == {WHOLE}:
        if single:
            return WHOLE
        return LANEWISE if result == tuple(shape) else None
    return None


@dataclass(frozen=True)
class DeviceCond:
    """A ``graph.cond`` that runs inside one pointwise kernel: each program
    reads the predicate and computes the taken branch at its lanes, of
    ``shape``; ``kernels`` are the branches' kernels, the then-branch's
    first."""

    op: g.CondOp
    shape: tuple[SymExpr, ...]
    kernels: tuple[fusion.KernelOp, ...]


def device_cond(op: g.CondOp) -> DeviceCond | None:
    """``op`` as a device cond if it runs inside one pointwise kernel, else
    None: every result has one shape, and each branch is pointwise kernels
    over it that read what an earlier one computed at the lane's own element
    only (the cond's operands are read at any index), yielding their results
    or operands of that shape."""
    shapes = {tuple(g.tensor_type(v).dims) for v in op.outputs}
    if len(shapes) != 1:
        return None
    (shape,) = shapes
    kernels: list[fusion.KernelOp] = []
    for region in (op.then_region.block, op.else_region.block):
        found = _lanewise_branch(region, shape)
        if found is None:
            return None
        kernels.extend(found)
    if not kernels:
        return None  # both branches pass operands on: nothing to compute
    return DeviceCond(op, shape, tuple(kernels))


def _lanewise_branch(
    region: Block, shape: tuple[SymExpr, ...]
) -> list[fusion.KernelOp] | None:
    """The pointwise kernels of a branch whose values, from one kernel to
    the next, stay at each lane's own element; None if it has others."""
    kernels: list[fusion.KernelOp] = []
    computed: set[SSAValue] = set()
    for op in region.ops:
        if op is region.last_op:
            break
        if not isinstance(op, fusion.KernelOp) or op.kernel_kind is not POINTWISE:
            return None
        if any(tuple(g.tensor_type(v).dims) != shape for v in op.outputs):
            return None
        reading = {
            op.body.block.args[n] for n, v in enumerate(op.inputs) if v in computed
        }
        if _elementwise_in(reading, op.body.block.ops, shape) != frozenset():
            return None
        kernels.append(op)
        computed.update(op.outputs)
    return kernels
