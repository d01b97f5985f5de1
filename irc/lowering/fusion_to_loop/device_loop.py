"""Device loops: a ``graph.for`` that fits one kernel runs inside it.

The rule (docs/lowering.md, "Control flow"): a ``graph.for`` whose body is
one ``pointwise`` fusion kernel, elementwise in the carries and the slices,
becomes one ``loop.kernel`` with the loop inside. "Elementwise" means that
element ``e`` of the next carries and of the ``ys`` slice depends only on
element ``e`` of the carries and of the ``xs`` slice (and on the iteration
index): the carries and the slices all have the kernel's iteration shape,
and the kernel holds only elementwise ops, casts, comparisons, selects,
splat constants and broadcasts of 0-d values (the index). Then each
program owns its lanes for the whole loop: it reads their initial carries
once, runs an ``scf.for`` over the trip count with the carries in
registers (``iter_args``), reads ``xs[i]`` and writes ``ys[i]`` at its
lanes each iteration, and writes the last carries once. No host loop, no
launch per iteration, no carried buffers.

Everything else (a body of several kernels, a reduction, a matmul, a
``graph.cond`` or ``graph.while``) runs on the host (``bufferize``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from irc.dialects import fusion, loop, sym
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.lowering.fusion_to_loop.builder import LoopBuilder
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.pointwise import PointwiseTiler
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


def device_loop_kernel(op: g.ForOp) -> fusion.KernelOp | None:
    """The one pointwise kernel of ``op``'s body if the loop can run inside
    it (see the module docstring), else None."""
    body = op.body.block
    ops = list(body.ops)
    if len(ops) != 2 or not isinstance(ops[0], fusion.KernelOp):
        return None
    kernel, terminator = ops[0], ops[1]
    yielded = list(terminator.operands)
    if kernel.kernel_kind is not POINTWISE or set(yielded) != set(kernel.outputs):
        return None
    shape = tensor_type(kernel.outputs[0]).dims
    slots = [*body.args[1:], *kernel.outputs]
    if any(tensor_type(v).dims != shape for v in slots):
        return None
    if any(not isinstance(v, BlockArgument) for v in kernel.inputs):
        return None
    return kernel if all(map(_elementwise, kernel.body.block.ops)) else None


def _elementwise(op: object) -> bool:
    if isinstance(op, (fusion.YieldOp, *fusion.ELEMENTWISE_OPS)):
        return True
    if isinstance(op, g.ConstantOp):
        return op.is_splat
    return isinstance(op, g.BroadcastOp) and tensor_type(op.input).rank == 0


class DeviceLoopTiler(KernelTiler):
    """Builds the one ``loop.kernel`` of a ``graph.for`` that passes
    ``device_loop_kernel``: pointwise over the carries' shape, the loop
    inside each program."""

    def __init__(self, op: g.ForOp, kernel: fusion.KernelOp, options: TilePass):
        super().__init__(kernel, options)
        self.loop = op
        self.index_type = i64  # the xs and ys span length x the carries
        self.body = Block(arg_types=[v.type for v in op.operands])
        self.b = LoopBuilder(self.body, self.index_type)
        #: What the kernel's block arguments are in the current iteration.
        self.bound: dict[SSAValue, SSAValue | tuple[int, SSAValue]] = {}

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        op = self.loop
        return loop.KernelOp(
            self.kernel.kernel_name,
            POINTWISE.name,
            list(op.operands),
            [tensor_type(v) for v in op.outputs],
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
        carries = len(op.carries)
        inits = [
            b.create(loop.ReadOp(self.body.args[n], list(coords), self.mask))
            for n in range(carries)
        ]
        finals = self.for_chunks(
            op.trip_count,
            1,
            inits,
            lambda step, carried: self._step(step, carried, coords),
        )
        for number, value in enumerate(finals):
            self.write(value, number, coords, self.mask)
        self.notes.append(
            f"device loop: the whole graph.for ({op.trip_count} iterations"
            f"{', reversed' if op.is_reverse else ''}) runs in this kernel, "
            f"pointwise over {sym.shape_text(shape)} in blocks of {block}"
        )
        return [numel.ceildiv(block)]

    def _step(
        self, step: SSAValue, carried: list[SSAValue], coords: Index
    ) -> list[SSAValue]:
        """One iteration at this program's lanes: the next carries (the
        ``ys`` rows are written here)."""
        b, op = self.b, self.loop
        index = step
        if op.is_reverse:
            index = b.binary("sub", b.size(op.trip_count - 1), step)
        args = op.body.block.args
        carries = len(op.carries)
        self.bound = {args[0]: index}
        self.bound.update(zip(args[1 : 1 + carries], carried, strict=True))
        for position, slice_ in enumerate(args[1 + carries :]):
            self.bound[slice_] = (carries + position, index)
        outputs = self._yielded_in_loop_order()
        for number, value in enumerate(outputs[carries:], carries):
            self.write(
                self.value_at(value, coords), number, (index, *coords), self.mask
            )
        return [self.value_at(v, coords) for v in outputs[:carries]]

    def _yielded_in_loop_order(self) -> list[SSAValue]:
        """The kernel's yielded values in the order the loop yields its
        results (carries, then ``ys`` slices)."""
        outputs = list(self.kernel.outputs)
        terminator = self.loop.body.block.last_op
        assert terminator is not None
        return [self.yielded[outputs.index(v)] for v in terminator.operands]

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if not isinstance(value, BlockArgument):
            return super()._compute(value, index)
        bound = self.bound[self.kernel.inputs[value.index]]
        if not isinstance(bound, tuple):
            return bound  # the iteration index, or a carry in registers
        xs, row = bound
        tensor = self.body.args[xs]
        return self.b.create(loop.ReadOp(tensor, [row, *index], self.mask))
