"""The ``pointwise`` strategy: the output shape flattened into 1-D blocks.

Each program handles ``BLOCK`` consecutive elements of the (first) output's
shape (``pointwise-block``, less for a smaller static size), recovers their
coordinates by division and remainder, and writes every output there under
the bounds mask (none when every block is full). The grid is the number of
blocks.
"""

from __future__ import annotations

from irc.dialects import sym
from irc.lowering.fusion_to_loop.builder import next_power_of_two
from irc.lowering.fusion_to_loop.index_maps import tensor_type
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.shapes import SymExpr


class PointwiseTiler(KernelTiler):
    """Tiles a ``pointwise`` fusion kernel."""

    def iterate(self) -> list[SymExpr]:
        b = self.b
        shape = tensor_type(self.yielded[0]).dims
        numel = sym.product(shape)
        block = self.options.pointwise_block
        if numel.constant is not None:
            block = min(block, next_power_of_two(max(numel.constant, 1)))
        start = b.binary("mul", b.program_id(0), b.index(block))
        lanes = b.lanes(start, "BLOCK", block)
        self.mask = b.in_bounds(lanes, numel, block)
        coords = tuple(b.delinearize(lanes, shape))
        self.write_outputs(lambda _: coords, lambda _: self.mask)
        self.notes.append(
            f"pointwise over {sym.shape_text(shape)} in blocks of {block}"
        )
        return [numel.ceildiv(block)]
