"""Device while loops: a ``graph.while`` that fits one program runs inside it.

Which loops fit is ``irc.lowering.device_control_flow.device_while``'s
question (docs/lowering.md, "Control flow"): regions of pointwise and row
kernels that compute lanewise and whole values of the changed carries, over
at most ``DEVICE_WHILE_LANES`` lanes. The loop becomes one ``loop.kernel``
of one program whose lanes cover the carries: it reads them once, runs an
``scf.while`` with them in registers (``iter_args``; a lanewise carry is a
tile of the lanes, a whole one a scalar) whose test evaluates the
condition's kernels at the lanes, in order, and whose body evaluates the
body's (a reduction over every axis is a ``tile.reduce`` of the lanes,
masked ones holding its identity), and writes the last carries once. The
predicate never leaves the device: no host decision, one launch per call.
The carries the body yields unchanged are read in place, at any index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import DictionaryAttr, i64
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.kernel_kind import LAUNCH_TILES_ATTRIBUTE, POINTWISE
from irc.dialects.sym import SymExprAttr
from irc.errors import IrcError
from irc.lowering.device_control_flow import LANEWISE, DeviceWhile
from irc.lowering.fusion_to_loop.builder import (
    LoopBuilder,
    constant_int,
)
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.reduction import identity_of
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr
from irc.source_locations import source_location

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass


class DeviceWhileTiler(KernelTiler):
    """Builds the one ``loop.kernel`` of a ``DeviceWhile``: one program,
    the loop inside."""

    def __init__(self, device_while: DeviceWhile, options: TilePass):
        kernels = [
            *_kernels(device_while.op.cond_region),
            *_kernels(device_while.op.body_region),
        ]
        super().__init__(kernels[0], options)
        self.kernels = kernels
        self.device_while = device_while
        self.loop = device_while.op
        if not all(self.fits_i32(kernel) for kernel in kernels):
            self.index_type = i64
        self.body = Block(arg_types=[v.type for v in self.loop.inputs])
        self.b = LoopBuilder(self.body, self.index_type)
        #: What each block argument of a region's kernels is while that
        #: region is built: a value in registers (a changed carry, an
        #: earlier kernel's result), or the loop kernel's input to read (an
        #: unchanged carry).
        self.bound: dict[SSAValue, SSAValue] = {}
        # An unchanged carry read at an index of the kernel body is read
        # once, before the loop: no iteration writes it.
        self.hoist_invariant_reads = True
        self.launch_attributes: dict[str, Attribute] = {}

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        outputs = [tensor_type(self.loop.outputs[k]) for k in self.device_while.changed]
        kernel = loop.KernelOp(
            self.kernel.kernel_name,
            POINTWISE.name,
            list(self.loop.inputs),
            outputs,
            grid,
            self.b.tiles,
            self.b.symbols,
            Region(self.body),
            "; ".join([self._origin(), *self.notes]),
        )
        kernel.attributes |= self.launch_attributes
        return kernel

    def _origin(self) -> str:
        """What the kernel is made of: the loop's kernels, by name."""
        names = ", ".join(k.kernel_name for k in self.kernels)
        where = source_location(self.loop, short=True)
        return f"graph.while{f' at {where}' if where else ''} of kernels {names}"

    def iterate(self) -> list[SymExpr]:
        b, found = self.b, self.device_while
        shape, lanes = found.shape, found.lanes
        numel = sym.product(shape)
        self.coords: Index = ()
        if shape:
            if numel.constant is None:
                # The facts bound the count: the launch takes the next power
                # of two of it, at most ``lanes``.
                self.launch_attributes[LAUNCH_TILES_ATTRIBUTE] = DictionaryAttr(
                    {"BLOCK": SymExprAttr(numel)}
                )
            self.lanes = b.range("BLOCK", lanes)
            self.mask = b.in_bounds(self.lanes, numel, lanes)
            self.coords = tuple(b.delinearize(self.lanes, shape))
        inits = [self._read_carry(k) for k in found.changed]
        finals = b.while_loop(
            inits,
            self._test,
            self._step,
        )
        for number, (k, value) in enumerate(zip(found.changed, finals, strict=True)):
            index = self._index_of(self.loop.body_region.block.args[k])
            self.write(
                value, number, index, self.mask if index == self.coords else None
            )
        unchanged = len(found.unchanged)
        self.notes.append(
            "device loop: the whole graph.while runs in this kernel, one program "
            f"over {sym.shape_text(shape)} in a block of {lanes}"
            + (" (chosen at launch)" if self.launch_attributes else "")
            + ", the carries in registers, its predicate never read back"
            + (
                f"; {unchanged} unchanged carr{'y' if unchanged == 1 else 'ies'} "
                "read in place"
                if unchanged
                else ""
            )
        )
        return [SymExpr.const(1)]

    def _read_carry(self, k: int) -> SSAValue:
        """Changed carry ``k``'s initial value, at the lanes or whole."""
        index = self._index_of(self.loop.body_region.block.args[k])
        mask = self.mask if index == self.coords else None
        return self.b.create(loop.ReadOp(self.body.args[k], list(index), mask))

    def _index_of(self, value: SSAValue) -> Index:
        """Where a region value is held: the lanes for a lanewise one, index
        0 along each dim for a whole one."""
        if self.device_while.kinds.get(value) is LANEWISE:
            return self.coords
        return self._zeros(value)

    def _run_region(self, region: Region, carried: list[SSAValue]) -> list[SSAValue]:
        """The region's kernels at the lanes, in order, on the changed
        carries in registers: the values its terminator yields."""
        block = region.block
        held: dict[SSAValue, SSAValue] = {
            block.args[k]: value
            for k, value in zip(self.device_while.changed, carried, strict=True)
        }
        for kernel in _kernels(region):
            for argument, value in zip(
                kernel.body.block.args, kernel.inputs, strict=True
            ):
                if value in held:
                    self.bound[argument] = held[value]
                else:
                    assert isinstance(value, BlockArgument) and value.block is block
                    self.bound[argument] = self.body.args[value.index]
            yielded = kernel.body.block.last_op
            assert yielded is not None
            for result, value in zip(kernel.outputs, yielded.operands, strict=True):
                held[result] = self._held(
                    result, self.value_at(value, self._index_of(result))
                )
        terminator = block.last_op
        assert terminator is not None
        return [held.get(v, v) for v in terminator.operands]

    def _test(self, carried: list[SSAValue]) -> SSAValue:
        """The condition region at the lanes: its predicate."""
        with self.scope():
            (predicate,) = self._run_region(self.loop.cond_region, carried)
        return predicate

    def _step(self, carried: list[SSAValue]) -> list[SSAValue]:
        """The body region at the lanes: the next changed carries."""
        with self.scope():
            yielded = self._run_region(self.loop.body_region, carried)
        body = self.loop.body_region.block
        return [self._held(body.args[k], yielded[k]) for k in self.device_while.changed]

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if isinstance(value.owner, g.ReduceOp):
            return self._reduce_lanes(value.owner, index)
        if not isinstance(value, BlockArgument) or value not in self.bound:
            return super()._compute(value, index)
        bound = self.bound[value]
        if isinstance(bound, BlockArgument) and bound.block is self.body:
            # Read as the loop kernel's own argument: every kernel of the
            # loop shares the read.
            return self.value_at(bound, index)
        kernel = value.block.parent_op()
        assert isinstance(kernel, fusion.KernelOp)
        if index != self._index_of(kernel.inputs[value.index]):
            raise IrcError(
                f"tile: device while {self.kernel.kernel_name} reads a value held "
                "in registers away from where it is held; device_while should have "
                "refused it"
            )
        return bound

    def _held(self, value: SSAValue, computed: SSAValue) -> SSAValue:
        """What a region ``value`` is held as: a lanewise one as a tile of
        the lanes (one computed from whole values or constants alone is a
        scalar), so that a carry keeps its type from one iteration to the
        next."""
        if self.device_while.kinds.get(value) is LANEWISE:
            return self._tile_of_lanes(computed)
        return computed

    def _tile_of_lanes(self, value: SSAValue) -> SSAValue:
        if loop.shape_of(value.type):
            return value
        return self.b.splat(value, [self.device_while.lanes])

    def _zeros(self, value: SSAValue) -> Index:
        return tuple(self.b.index(0) for _ in tensor_type(value).dims)

    def _reduce_lanes(self, reduction: g.ReduceOp, index: Index) -> SSAValue:
        """A reduction over every axis of a lanewise value: ``tile.reduce``
        of it at the lanes, masked lanes holding its identity; held whole."""
        if any(constant_int(i) != 0 for i in index):
            raise IrcError(
                f"tile: device while {self.kernel.kernel_name} reads a whole "
                "reduction away from index 0"
            )
        values = self._tile_of_lanes(self.value_at(reduction.operands[0], self.coords))
        element = loop.element_of(values.type)
        kind = reduction.kind.data.value
        if self.mask is not None:
            identity = self.b.const(identity_of(kind, element), element)
            values = self.b.select(self.mask, values, identity)
        return self.b.create(tile.ReduceOp(kind, values, 0))


def _kernels(region: Region) -> list[fusion.KernelOp]:
    return [op for op in region.block.ops if isinstance(op, fusion.KernelOp)]
