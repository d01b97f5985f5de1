"""Device conds: a ``graph.cond`` that fits one pointwise kernel runs inside it.

Which conds fit is ``irc.lowering.device_control_flow.device_cond``'s
question (docs/lowering.md, "Control flow"): results of one shape, and
branches of pointwise kernels over it that pass values from one kernel to
the next at each lane's own element. The cond becomes one pointwise
``loop.kernel`` over that shape whose inputs are the predicate and the
cond's operands: each program reads the predicate (a 0-d tensor another
kernel wrote) and runs an ``scf.if`` whose branches evaluate the taken
branch's kernels at its lanes, in order, and writes what it yields. The
predicate is never read back: no host decision, and only the taken
branch's values are computed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from irc.dialects import fusion, loop, sym
from irc.dialects.kernel_kind import POINTWISE
from irc.errors import IrcError
from irc.lowering.device_control_flow import DeviceCond
from irc.lowering.fusion_to_loop.builder import LoopBuilder
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.pointwise import PointwiseTiler
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr
from irc.source_locations import source_location

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


class DeviceCondTiler(KernelTiler):
    """Builds the one ``loop.kernel`` of a ``DeviceCond``: pointwise over
    its results' shape, the branch chosen in each program."""

    def __init__(self, device_cond: DeviceCond, options: TilePass):
        super().__init__(device_cond.kernels[0], options)
        self.device_cond = device_cond
        self.cond = device_cond.op
        if not all(self.fits_i32(kernel) for kernel in device_cond.kernels):
            self.index_type = i64
        self.body = Block(arg_types=[v.type for v in self.cond.operands])
        self.b = LoopBuilder(self.body, self.index_type)
        #: What each block argument of a branch's kernels is: the loop
        #: kernel's input (an operand of the cond), or what an earlier
        #: kernel of the branch computed at the lanes.
        self.bound: dict[SSAValue, SSAValue] = {}

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        names = ", ".join(k.kernel_name for k in self.device_cond.kernels)
        where = source_location(self.cond, short=True)
        origin = f"graph.cond{f' at {where}' if where else ''} of kernels {names}"
        return loop.KernelOp(
            self.kernel.kernel_name,
            POINTWISE.name,
            list(self.cond.operands),
            [tensor_type(v) for v in self.cond.outputs],
            grid,
            self.b.tiles,
            self.b.symbols,
            Region(self.body),
            "; ".join([origin, *self.notes]),
        )

    def iterate(self) -> list[SymExpr]:
        b, shape = self.b, self.device_cond.shape
        numel = sym.product(shape)
        block = PointwiseTiler.clamp(self.options.pointwise_block, numel)
        lanes = b.lanes(
            b.binary("mul", b.program_id(0), b.index(block)), "BLOCK", block
        )
        self.mask = b.in_bounds(lanes, numel, block)
        self.coords: Index = tuple(b.delinearize(lanes, shape))
        self.block = block
        taken = b.create(loop.ReadOp(self.body.args[0], [], None))
        results = b.if_else(
            taken,
            lambda: self._branch(self.cond.then_region),
            lambda: self._branch(self.cond.else_region),
        )
        for number, value in enumerate(results):
            self.write(value, number, self.coords, self.mask)
        self.notes.append(
            "device cond: each program reads the predicate and computes the taken "
            f"branch, pointwise over {sym.shape_text(shape)} in blocks of {block}"
        )
        return [numel.ceildiv(block)]

    def _branch(self, region: Region) -> list[SSAValue]:
        """The branch's kernels at the lanes, in order: the tiles it
        yields."""
        block = region.block
        held: dict[SSAValue, SSAValue] = {}
        with self.scope():
            for kernel in (op for op in block.ops if isinstance(op, fusion.KernelOp)):
                for argument, value in zip(
                    kernel.body.block.args, kernel.inputs, strict=True
                ):
                    self.bound[argument] = (
                        held[value] if value in held else self._input(value)
                    )
                yielded = kernel.body.block.last_op
                assert yielded is not None
                for result, value in zip(kernel.outputs, yielded.operands, strict=True):
                    held[result] = self.value_at(value, self.coords)
            terminator = block.last_op
            assert terminator is not None
            return [
                self._lanes_of(
                    held[v] if v in held else self.value_at(self._input(v), self.coords)
                )
                for v in terminator.operands
            ]

    def _input(self, value: SSAValue) -> SSAValue:
        """The loop kernel's input a branch's block argument stands for."""
        assert isinstance(value, BlockArgument)
        return self.body.args[1 + value.index]

    def _lanes_of(self, value: SSAValue) -> SSAValue:
        """``value`` as a tile of the lanes (a constant branch gives a
        scalar): both branches yield the same types."""
        if loop.shape_of(value.type):
            return value
        return self.b.splat(value, [self.block])

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        bound = self.bound.get(value) if isinstance(value, BlockArgument) else None
        if bound is None:
            return super()._compute(value, index)
        if isinstance(bound, BlockArgument) and bound.block is self.body:
            return self.value_at(bound, index)
        if index != self.coords:
            raise IrcError(
                f"tile: device cond {self.kernel.kernel_name} reads what a branch "
                "computed away from its lanes; device_cond should have refused it"
            )
        return bound  # what an earlier kernel computed at the lanes
