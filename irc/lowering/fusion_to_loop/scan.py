"""The scans of a ``reduction`` kernel: one program per row, walked in order.

A reduction kernel of scans (``graph.scan``) has the row structure of a
reduction along the scanned axis: the scans share one operand shape X and
one axis A; the other dims of X are the rows (one program each, grid
``[product of them]``) and A is a lane index.

- A static scanned extent of at most ``max-persistent`` lanes is one tile
  (``BLOCK_R``, the extent rounded up to a power of two): each scan is one
  ``tile.scan`` of it.
- Otherwise an ``scf.for`` walks the row in order, ``reduction-block``
  lanes at a time, each scan carrying its running value (an ``iter_arg``):
  a block's scan is ``carry (+) tile.scan(block)`` and the next carry is its
  last lane.

Masked lanes hold the identity (``-0.0`` for float sums, the identity of
IEEE addition, else 0 or 1); they follow every valid lane, so they change no
result. The carry starts at the identity too, and the next one is picked
from the last lane exactly (a ``-0.0`` stays ``-0.0``, a NaN a NaN).
16-bit floats are scanned and carried in float32 and rounded once per
element, as ``graph.scan`` means. What the kernel yields has X's shape (the
contract): each output, a scan or an elementwise op on scans, is written in
the block that computes it, so the row is read once.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerType, bf16, f16, f32
from xdsl.ir import Attribute, SSAValue

from irc.dialects import graph as g
from irc.dialects import loop, sym, tile
from irc.dialects.elementwise import ReductionKind
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.reduction import row_blocks
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr

#: The lanes of one stretch of the row.
BLOCK = "BLOCK_R"


@dataclass(frozen=True)
class _Rows:
    """What a kernel of scans iterates over: ``scans`` along ``axis`` of
    rows of ``shape``; this program's row coordinates (``row``) and the
    lanes per tile."""

    scans: list[g.ScanOp]
    shape: tuple[SymExpr, ...]
    axis: int
    row: Index
    block: int


class ScanTiler(KernelTiler):
    """Tiles a ``reduction`` fusion kernel whose row ops are scans."""

    def iterate(self) -> list[SymExpr]:
        scans = [op for op in self.kernel.body.block.ops if isinstance(op, g.ScanOp)]
        shape = tuple(tensor_type(scans[0].input).dims)
        axis = scans[0].axis_index
        kept = [d for k, d in enumerate(shape) if k != axis]
        extent = shape[axis]
        persistent, block = row_blocks(extent, self.options)
        static = extent.constant
        row = tuple(self.b.delinearize(self.b.program_id(0), kept))
        rows = _Rows(scans, shape, axis, row, block)
        if persistent:
            self.notes.append(f"persistent scan of {static} lanes per row")
            lanes = self.b.range(BLOCK, block)
            self.mask = self.b.in_bounds(lanes, extent, block)
            self._scan_stretch(rows, lanes, None)
        else:
            self.notes.append(
                f"looped scan over {extent} lanes per row, {block} at a time, "
                "carrying each scan's running value"
            )
            inits = [self._identity(scan) for scan in scans]
            self.loop_over(
                extent,
                BLOCK,
                block,
                inits,
                lambda lanes, mask, carried: self._scan_stretch(rows, lanes, carried),
            )
        return [sym.product(kept)]

    def _scan_stretch(
        self, rows: _Rows, lanes: SSAValue, carried: list[SSAValue] | None
    ) -> list[SSAValue]:
        """Scan the ``lanes`` of this row (after the ``carried`` running
        values, if any), write the outputs there; the next running values."""
        row = iter(rows.row)
        index = tuple(
            lanes if k == rows.axis else next(row) for k in range(len(rows.shape))
        )
        carries: list[SSAValue] = []
        is_last = self._is_last_lane(rows.block) if carried is not None else None
        for position, scan in enumerate(rows.scans):
            values = self._lanes(scan, index, rows.block)
            scanned = self.b.create(tile.ScanOp(scan.kind.data.value, values, 0))
            if carried is not None:
                combine = scan.kind.data.semantics.combine
                assert combine is not None, "sums and products combine"
                scanned = self.b.binary(combine, carried[position], scanned)
                assert is_last is not None
                carries.append(self._last_lane(scanned, is_last))
            element = tensor_type(scan.result).element_type
            self.anchors[scan.result] = (index, self.b.cast(scanned, element))
        for number, value in enumerate(self.yielded):
            self.write(self.value_at(value, index), number, index, self.mask)
        return carries

    def _lanes(self, scan: g.ScanOp, index: Index, block: int) -> SSAValue:
        """The scanned operand at ``index`` in the scan's compute type, a
        full tile whose masked lanes hold the identity."""
        values = self.value_at(scan.input, index)
        if not loop.shape_of(values.type):  # the same value on every lane
            values = self.b.splat(values, [block])
        element = _compute_type(tensor_type(scan.input).element_type)
        values = self.b.cast(values, element)
        if self.mask is not None:
            values = self.b.select(self.mask, values, self._identity(scan))
        return values

    def _identity(self, scan: g.ScanOp) -> SSAValue:
        """The scan's identity, a scalar in its compute type: 1, or 0 (``-0.0``
        for floats: ``-0.0 + x`` is ``x`` for every ``x``, ``+0.0 + -0.0``
        is not)."""
        element = _compute_type(tensor_type(scan.input).element_type)
        if scan.kind.data == ReductionKind.PROD:
            return self.b.const(1, element)
        return self.b.const(0 if isinstance(element, IntegerType) else -0.0, element)

    def _is_last_lane(self, block: int) -> SSAValue:
        """The mask of a tile's last lane."""
        return self.b.compare("eq", self.b.range(BLOCK, block), self.b.index(block - 1))

    def _last_lane(self, scanned: SSAValue, is_last: SSAValue) -> SSAValue:
        """The last lane of ``scanned``, a scalar, exactly: the max of the
        tile with every other lane the lowest value (``-inf``, or the least
        integer); a max keeps a ``-0.0`` and a NaN, which a sum would not,
        and is fast under Triton's interpreter, which a product is not."""
        element = loop.element_of(scanned.type)
        if isinstance(element, IntegerType):
            lowest: int | float = -(2 ** (element.width.data - 1))
        else:
            lowest = float("-inf")
        picked = self.b.select(is_last, scanned, self.b.const(lowest, element))
        return self.b.create(tile.ReduceOp("max", picked, 0))


def _compute_type(element: Attribute) -> Attribute:
    """Where a scan of ``element`` accumulates: float32 for 16-bit floats."""
    return f32 if element in (f16, bf16) else element
