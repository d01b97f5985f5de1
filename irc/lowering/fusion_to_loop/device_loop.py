"""Device loops: a ``graph.for`` that fits one kernel runs inside it.

Which loops fit is ``irc.lowering.device_control_flow.device_loop``'s
question (docs/lowering.md, "Control flow"): a body of one ``pointwise``
fusion kernel, elementwise in the carries it changes. Each program owns
its lanes for the whole loop: it reads their initial carries once, runs an
``scf.for`` over the trip count with the carries in registers
(``iter_args``), computes the rest at its lanes each iteration, writes
``ys[i]`` at its lanes, and writes the last carries once. No host loop, no
launch per iteration, no carried buffers; an unchanged carry's result is
its initial value, not an output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from irc.dialects import loop, sym
from irc.dialects.kernel_kind import POINTWISE
from irc.errors import IrcError
from irc.lowering.device_control_flow import DeviceLoop
from irc.lowering.fusion_to_loop.builder import LoopBuilder
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.pointwise import PointwiseTiler
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


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
