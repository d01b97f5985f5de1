"""Device loops: a ``graph.for`` that fits one kernel runs inside it.

The rule (docs/lowering.md, "Control flow"): a ``graph.for`` whose body is
one ``pointwise`` fusion kernel, elementwise in the carries it changes,
becomes one ``loop.kernel`` with the loop inside. "Elementwise" means that
element ``e`` of the next carries and of the ``ys`` slice depends on the
carries at element ``e`` only: the changed carries, the kernel's outputs
and the ``ys`` slices all have the kernel's iteration shape, and every op
that reads a changed carry (directly or through another such op) is an
elementwise op whose carry-dependent operands have that shape too. What
does not read a changed carry is free: the iteration index, the ``xs``
slices and the carries the body yields unchanged (closures: a weight, the
array a ``buf[i] = x[i] * w`` reads) are read-only inputs, read at any
index (``x[i]`` is a take at the loop's index, broadcast along the rows).
Then each program owns its lanes for the whole loop: it reads their
initial carries once, runs an ``scf.for`` over the trip count with the
carries in registers (``iter_args``), computes the rest at its lanes each
iteration, writes ``ys[i]`` at its lanes, and writes the last carries
once. No host loop, no launch per iteration, no carried buffers; an
unchanged carry's result is its initial value, not an output.

Everything else (a body of several kernels, a reduction, a matmul, a
carry read away from its element, a ``graph.cond`` or ``graph.while``)
runs on the host (``bufferize``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from irc.dialects import fusion, loop, sym
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.errors import IrcError
from irc.lowering.fusion_to_loop.builder import LoopBuilder
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.pointwise import PointwiseTiler
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


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

    def replacements(self, kernel: loop.KernelOp) -> list[SSAValue]:
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
    shape = tensor_type(kernel.outputs[0]).dims
    changed = [body.args[1 + k] for k in range(carries) if k not in unchanged]
    if any(tensor_type(v).dims != shape for v in [*changed, *kernel.outputs]):
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
    result = tensor_type(op.results[0])
    if isinstance(op, g.TakeOp):
        index = op.indices
        if kinds.get(op.table) is not _LANEWISE or index in kinds:
            return None
        if tensor_type(index).rank != 0:
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
    source = tensor_type(op.operands[0]).dims
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


#: What a body argument of the loop is in the current iteration: a loop
#: value (the index, a carry in registers), or the device kernel's operand
#: to read, at the iteration's row for an ``xs`` slice.
Binding = SSAValue | tuple[int, SSAValue | None]


class DeviceLoopTiler(KernelTiler):
    """Builds the one ``loop.kernel`` of a ``DeviceLoop``: pointwise over
    the kernel's shape, the loop inside each program."""

    def __init__(self, device_loop: DeviceLoop, options: TilePass):
        super().__init__(device_loop.kernel, options)
        self.device_loop = device_loop
        self.loop = device_loop.op
        self.index_type = i64  # the xs and ys span length x the carries
        self.body = Block(arg_types=[v.type for v in self.loop.operands])
        self.b = LoopBuilder(self.body, self.index_type)
        #: What the loop body's arguments are in the current iteration.
        self.bound: dict[SSAValue, Binding] = {}
        # An unchanged carry read at the lanes' own index (a weight) is read
        # once, before the loop.
        self.hoist_invariant_reads = True

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        op = self.loop
        outputs = [
            tensor_type(v)
            for k, v in enumerate(op.outputs)
            if k not in self.device_loop.unchanged
        ]
        return loop.KernelOp(
            self.kernel.kernel_name,
            POINTWISE.name,
            list(op.operands),
            outputs,
            grid,
            self.b.tiles,
            self.b.symbols,
            Region(self.body),
            f"{self.kernel.reason_text}; {'; '.join(self.notes)}",
        )

    def iterate(self) -> list[SymExpr]:
        b, op = self.b, self.loop
        # The kernel's iteration shape: the loop's first result may be a
        # stacked ys ([T, *shape]) when there are no carries.
        shape = tensor_type(self.kernel.outputs[0]).dims
        numel = sym.product(shape)
        block = PointwiseTiler.clamp(self.options.pointwise_block, numel)
        lanes = b.lanes(
            b.binary("mul", b.program_id(0), b.index(block)), "BLOCK", block
        )
        self.mask = b.in_bounds(lanes, numel, block)
        coords = tuple(b.delinearize(lanes, shape))
        self.coords = coords
        inits = [
            b.create(loop.ReadOp(self.body.args[k], list(coords), self.mask))
            for k in self.device_loop.changed
        ]
        finals = self.for_chunks(
            op.trip_count,
            1,
            inits,
            lambda step, carried: self._step(step, carried, coords),
        )
        for number, value in enumerate(finals):
            self.write(value, number, coords, self.mask)
        unchanged = len(self.device_loop.unchanged)
        self.notes.append(
            f"device loop: the whole graph.for ({op.trip_count} iterations"
            f"{', reversed' if op.is_reverse else ''}) runs in this kernel, "
            f"pointwise over {sym.shape_text(shape)} in blocks of {block}"
            + (
                f"; {unchanged} unchanged carr{'y' if unchanged == 1 else 'ies'} read in place"
                if unchanged
                else ""
            )
        )
        return [numel.ceildiv(block)]

    def _step(
        self, step: SSAValue, carried: list[SSAValue], coords: Index
    ) -> list[SSAValue]:
        """One iteration at this program's lanes: the next changed carries
        (the ``ys`` rows are written here)."""
        b, op = self.b, self.loop
        index = step
        if op.is_reverse:
            index = b.binary("sub", b.size(op.trip_count - 1), step)
        args = op.body.block.args
        carries = len(op.carries)
        changed = self.device_loop.changed
        self.bound = {args[0]: index}
        self.bound.update((args[1 + k], (k, None)) for k in self.device_loop.unchanged)
        self.bound.update(zip((args[1 + k] for k in changed), carried, strict=True))
        for position, slice_ in enumerate(args[1 + carries :]):
            self.bound[slice_] = (carries + position, index)
        yielded = self._yielded_in_loop_order()
        for number, value in enumerate(yielded[len(changed) :], len(changed)):
            self.write(
                self.value_at(value, coords), number, (index, *coords), self.mask
            )
        return [self.value_at(v, coords) for v in yielded[: len(changed)]]

    def _at_lane(self, index: Index) -> bool:
        """Whether ``index`` is the lanes' own, but along a row axis (the
        row ``buf[i]``, read where it is written: ``DeviceLoop.row_axes``)."""
        if len(index) != len(self.coords):
            return False
        return all(
            k in self.device_loop.row_axes or a is b
            for k, (a, b) in enumerate(zip(index, self.coords))
        )

    def _yielded_in_loop_order(self) -> list[SSAValue]:
        """The kernel's yielded values in the order of the loop's computed
        results (changed carries, then ``ys`` slices)."""
        outputs = list(self.kernel.outputs)
        terminator = self.loop.body.block.last_op
        assert terminator is not None
        return [
            self.yielded[outputs.index(v)]
            for k, v in enumerate(terminator.operands)
            if k not in self.device_loop.unchanged
        ]

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if not isinstance(value, BlockArgument):
            return super()._compute(value, index)
        argument = self.kernel.inputs[value.index]
        bound = self.bound[argument]
        if not isinstance(bound, tuple):
            if argument is not self.loop.body.block.args[0] and not self._at_lane(
                index
            ):
                raise IrcError(
                    f"tile: device loop {self.kernel.kernel_name} reads a carry "
                    "away from its lanes; device_loop should have refused it"
                )
            return bound  # the iteration index, or a carry in registers
        operand, row = bound
        tensor = self.body.args[operand]
        return self.read(value, tensor, index if row is None else (row, *index))
