"""Device while loops: a ``graph.while`` that fits one program runs inside it.

Which loops fit is ``irc.lowering.device_control_flow.device_while``'s
question (docs/lowering.md, "Control flow"): a condition of one kernel, a
body of one ``pointwise`` kernel elementwise in the carries it changes, and
changed carries of at most ``DEVICE_WHILE_LANES`` elements. The loop
becomes one ``loop.kernel`` of one program whose lanes cover the carries:
it reads them once, runs an ``scf.while`` with them in registers
(``iter_args``) whose test evaluates the condition kernel at the lanes (a
reduction over every axis is a ``tile.reduce`` of the lanes, masked ones
holding its identity) and whose body evaluates the body kernel, and writes
the last carries once. The predicate never leaves the device: no host
decision, one launch per call. The carries the body yields unchanged are
read in place, at any index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import i64
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.errors import IrcError
from irc.lowering.device_control_flow import DeviceWhile
from irc.lowering.fusion_to_loop.builder import (
    LoopBuilder,
    indices_fit,
    next_power_of_two,
)
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.reduction import identity_of
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


class DeviceWhileTiler(KernelTiler):
    """Builds the one ``loop.kernel`` of a ``DeviceWhile``: one program,
    the loop inside."""

    def __init__(self, device_while: DeviceWhile, options: TilePass):
        super().__init__(device_while.body, options)
        self.device_while = device_while
        self.loop = device_while.op
        if not self._condition_fits_i32():
            self.index_type = i64
        self.body = Block(arg_types=[v.type for v in self.loop.inputs])
        self.b = LoopBuilder(self.body, self.index_type)
        #: What each block argument of the two kernels is in the region
        #: being built: a carry in registers, or the loop kernel's input
        #: to read (an unchanged carry).
        self.bound: dict[SSAValue, SSAValue] = {}
        # An unchanged carry read at an index of the kernel body is read
        # once, before the loop: no iteration writes it.
        self.hoist_invariant_reads = True

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        outputs = [tensor_type(self.loop.outputs[k]) for k in self.device_while.changed]
        return loop.KernelOp(
            self.kernel.kernel_name,
            POINTWISE.name,
            list(self.loop.inputs),
            outputs,
            grid,
            self.b.tiles,
            self.b.symbols,
            Region(self.body),
            f"{self.kernel.reason_text}; {'; '.join(self.notes)}",
        )

    def iterate(self) -> list[SymExpr]:
        b, shape = self.b, self.device_while.shape
        numel = sym.product(shape)
        block = next_power_of_two(max(numel.constant or 1, 1))
        lanes = b.range("BLOCK", block)
        self.mask = b.in_bounds(lanes, numel, block)
        coords = tuple(b.delinearize(lanes, shape))
        self.coords = coords
        inits = [
            b.create(loop.ReadOp(self.body.args[k], list(coords), self.mask))
            for k in self.device_while.changed
        ]
        finals = b.while_loop(
            inits,
            lambda carried: self._scoped(self._test, carried),
            lambda carried: self._scoped(self._step, carried),
        )
        for number, value in enumerate(finals):
            self.write(value, number, coords, self.mask)
        unchanged = len(self.device_while.unchanged)
        self.notes.append(
            "device loop: the whole graph.while runs in this kernel, one program "
            f"over {sym.shape_text(shape)} in a block of {block}, the carries in "
            "registers, its predicate never read back"
            + (
                f"; {unchanged} unchanged carr{'y' if unchanged == 1 else 'ies'} "
                "read in place"
                if unchanged
                else ""
            )
        )
        return [SymExpr.const(1)]

    def _scoped(
        self, build: Callable[[list[SSAValue]], object], carried: list[SSAValue]
    ) -> object:
        """``build(carried)`` with values of its own: what it computes stays
        in its region."""
        self.scopes.append({})
        saved_mask = self.mask
        try:
            return build(carried)
        finally:
            self.mask = saved_mask
            self.scopes.pop()

    def _bind(
        self, kernel: fusion.KernelOp, region: Block, carried: list[SSAValue]
    ) -> None:
        """Bind ``kernel``'s block arguments (the region's arguments it
        reads) to the carries in registers or the inputs to read."""
        registers = dict(zip(self.device_while.changed, carried, strict=True))
        for argument, value in zip(kernel.body.block.args, kernel.inputs, strict=True):
            assert isinstance(value, BlockArgument) and value.block is region
            k = value.index
            self.bound[argument] = registers.get(k, self.body.args[k])

    def _test(self, carried: list[SSAValue]) -> SSAValue:
        """The condition kernel at the lanes: its whole reductions first, in
        order, then the predicate it yields."""
        condition = self.device_while.condition
        self._bind(condition, self.loop.cond_region.block, carried)
        for op in condition.body.block.ops:
            if isinstance(op, g.ReduceOp):
                self._reduce_lanes(op)
        (predicate,) = condition.body.block.last_op.operands
        return self.value_at(predicate, self._index_of(predicate))

    def _reduce_lanes(self, reduction: g.ReduceOp) -> None:
        """A reduction over every axis: ``tile.reduce`` of its operand at the
        lanes, masked lanes holding its identity."""
        value = reduction.results[0]
        index = self._index_of(value)
        self.anchors[value] = (index, None)
        values = self.value_at(reduction.operands[0], self.coords)
        element = loop.element_of(values.type)
        kind = reduction.kind.data.value
        if self.mask is not None:
            identity = self.b.const(identity_of(kind, element), element)
            values = self.b.select(self.mask, values, identity)
        result = self.b.create(tile.ReduceOp(kind, values, 0))
        self.anchors[value] = (index, result)

    def _index_of(self, value: SSAValue) -> Index:
        """The index of a value of one element (dims all 1)."""
        return tuple(self.b.index(0) for _ in tensor_type(value).dims)

    def _step(self, carried: list[SSAValue]) -> list[SSAValue]:
        """The body kernel at the lanes: the next changed carries."""
        body = self.device_while.body
        self._bind(body, self.loop.body_region.block, carried)
        terminator = self.loop.body_region.block.last_op
        assert terminator is not None
        yielded = list(body.body.block.last_op.operands)
        outputs = list(body.outputs)
        return [
            self.value_at(yielded[outputs.index(terminator.operands[k])], self.coords)
            for k in self.device_while.changed
        ]

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if not isinstance(value, BlockArgument) or value not in self.bound:
            return super()._compute(value, index)
        bound = self.bound[value]
        if not (isinstance(bound, BlockArgument) and bound.block is self.body):
            if index != self.coords:
                raise IrcError(
                    f"tile: device while {self.kernel.kernel_name} reads a carry "
                    "away from its lanes; device_while should have refused it"
                )
            return bound  # a carry in registers
        # Read as the loop kernel's own argument: the condition and the
        # body share the read.
        return self.value_at(bound, index)

    def _condition_fits_i32(self) -> bool:
        """Whether every extent the condition kernel touches fits in i32
        too (it may read a large unchanged carry)."""
        condition = self.device_while.condition
        values = [*condition.inputs, *condition.outputs]
        for op in condition.body.walk():
            values.extend(op.results)
        return indices_fit(
            self.facts,
            (
                sym.product(tensor_type(v).dims)
                for v in values
                if isinstance(v.type, g.TensorType)
            ),
        )
