"""The ``matmul`` strategy: output tiles, a K loop of ``tile.dot``, the epilogue.

Each program computes one ``[BLOCK_M, BLOCK_N]`` tile of the kernel's
``graph.matmul`` (grid axis 0: ``ceil(M / BLOCK_M) * ceil(N / BLOCK_N)``
programs, row-major over the tiles) for one batch element (grid axis 1: the
product of the batch dims, when there are any). A ``scf.for`` over K in
steps of ``BLOCK_K`` reads an lhs tile and an rhs tile under their bounds
masks (masked lanes read 0, which adds nothing) and accumulates
``tile.dot`` into an accumulator (f32 for 16-bit floats). The matmul is an
anchor valid at the output tile; the epilogue, the rest of the kernel, is
evaluated there, and the outputs written under the tile's mask. An epilogue
may read the result through reshapes of its last axis (an implicit-GEMM
convolution's ``[N, O, OH * OW]`` as ``[N, O, OH, OW]``) and transposes
(``fusion.EpilogueLayout``): its values are evaluated at the tile's index
mapped into their layout (columns delinearized over a split, axes
permuted), which the layout ops' index maps take back to the tile.

The tile sizes, warps and pipeline stages come from ``MATMUL_CONFIGS``, by
how the kernel multiplies (16-bit operands and TF32 on tensor cores, other
floats in FMA) and the size class of its output; the ``tile`` pass's
``matmul-block-m/n/k`` options, when given, replace the table's tile sizes.
An extent below the block size (static, or a symbol bounded by facts:
``facts=["N <= 32"]``) gets the next power of two of its largest value (at
least 16, ``tl.dot``'s minimum) instead. The kernel carries its warps, stages and
``matmul_precision`` as attributes (``irc.dialects.kernel_kind``) down to
the emitter (``tl.dot``'s ``input_precision``) and the launcher
(``num_warps=``, ``num_stages=``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    IntegerAttr,
    StringAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from irc.dialects import graph as g
from irc.dialects import loop, sym, tile
from irc.dialects.fusion import EpilogueLayout, epilogue_layouts
from irc.dialects.kernel_kind import (
    MATMUL,
    MATMUL_PRECISION_ATTRIBUTE,
    NUM_STAGES_ATTRIBUTE,
    NUM_WARPS_ATTRIBUTE,
    MatmulPrecision,
)
from irc.lowering.fusion_to_loop.builder import next_power_of_two
from irc.lowering.fusion_to_loop.index_maps import Index, batch_broadcast, tensor_type
from irc.lowering.fusion_to_loop.tiler import STRATEGIES, KernelTiler
from irc.shapes import SymExpr


@dataclass(frozen=True)
class MatmulConfig:
    """How one matmul kernel is tiled and launched."""

    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int


#: The tile config of a matmul kernel per multiplier and size class, the one
#: place these choices are made. Multipliers: ``tensor-core-16`` (float16 and
#: bfloat16 operands, float32 accumulation: wgmma on sm_90, which wants 64-row
#: warpgroup tiles and K steps of at least 16, so 64-wide K tiles halve the
#: loop's trips), ``tf32`` (float32 under ``matmul_precision = "tf32"``) and
#: ``fma`` (IEEE float32, float64 and integers on CUDA cores, where a larger
#: tile only adds registers). Size classes: ``small`` when M or N is at most
#: 64, static or bounded by facts (a larger tile would be mostly masked
#: lanes), else ``large`` (unbounded symbols count as large). Tiles then
#: shrink to a small extent's next power of two (at least 16). Shared memory per stage is
#: ``(BLOCK_M + BLOCK_N) * BLOCK_K`` elements: 3 stages of 128x128x64
#: 16-bit tiles take 96 KiB of the H100's 227. The values are the usual
#: starting points of Triton's matmul tutorial for sm_90, not measured here
#: (no GPU); tuning them means timing each candidate per size class on the
#: GPU (``triton.testing.do_bench``) and keeping the fastest.
MATMUL_CONFIGS: dict[tuple[str, str], MatmulConfig] = {
    ("tensor-core-16", "large"): MatmulConfig(128, 128, 64, num_warps=8, num_stages=3),
    ("tensor-core-16", "small"): MatmulConfig(64, 64, 64, num_warps=4, num_stages=3),
    ("tf32", "large"): MatmulConfig(128, 128, 32, num_warps=8, num_stages=3),
    ("tf32", "small"): MatmulConfig(64, 64, 32, num_warps=4, num_stages=3),
    ("fma", "large"): MatmulConfig(64, 64, 32, num_warps=4, num_stages=3),
    ("fma", "small"): MatmulConfig(64, 64, 32, num_warps=4, num_stages=3),
}

#: The largest static M or N of the ``small`` size class.
SMALL_MATMUL_EXTENT = 64


def multiplier(operand: Attribute, precision: MatmulPrecision) -> str:
    """The multiplier of a matmul of ``operand`` elements (a key of
    ``MATMUL_CONFIGS``)."""
    if isinstance(operand, Float16Type | BFloat16Type):
        return "tensor-core-16"
    if operand == f32 and precision == MatmulPrecision.TF32:
        return "tf32"
    return "fma"


def size_class(m_largest: int | None, n_largest: int | None) -> str:
    """``small`` when M or N is at most ``SMALL_MATMUL_EXTENT`` (their
    largest values: static, bounded by facts, or None, unbounded)."""
    bounded = [e for e in (m_largest, n_largest) if e is not None]
    return "small" if any(e <= SMALL_MATMUL_EXTENT for e in bounded) else "large"


@STRATEGIES.register(MATMUL)
class MatmulTiler(KernelTiler):
    """Tiles a ``matmul`` fusion kernel."""

    #: The kernel's ``matmul_precision``, ``num_warps`` and ``num_stages``
    #: (set by :meth:`iterate`).
    launch_attributes: dict[str, Attribute]

    def tile(self) -> loop.KernelOp:
        kernel = super().tile()
        kernel.attributes |= self.launch_attributes
        return kernel

    def iterate(self) -> list[SymExpr]:
        b = self.b
        matmul = next(
            op for op in self.kernel.body.block.ops if isinstance(op, g.MatmulOp)
        )
        lhs, rhs = matmul.operands
        out = tensor_type(matmul.results[0])
        *batch, m_extent, n_extent = out.dims
        k_extent = tensor_type(lhs).dims[-1]
        opts = self.options
        precision = MatmulPrecision(opts.matmul_precision)
        m_largest, n_largest, k_largest = (
            self.facts.bounds(e)[1] for e in (m_extent, n_extent, k_extent)
        )
        config = MATMUL_CONFIGS[
            multiplier(tensor_type(lhs).element_type, precision),
            size_class(m_largest, n_largest),
        ]
        bm = clamp_block(m_largest, opts.matmul_block_m or config.block_m)
        bn = clamp_block(n_largest, opts.matmul_block_n or config.block_n)
        bk = clamp_block(k_largest, opts.matmul_block_k or config.block_k)
        self.launch_attributes = {
            MATMUL_PRECISION_ATTRIBUTE: StringAttr(precision),
            NUM_WARPS_ATTRIBUTE: IntegerAttr(config.num_warps, i64),
            NUM_STAGES_ATTRIBUTE: IntegerAttr(config.num_stages, i64),
        }
        n_tiles = n_extent.ceildiv(bn)
        pid = b.program_id(0)
        pid_m = b.binary("floordiv", pid, b.size(n_tiles))
        pid_n = b.binary("rem", pid, b.size(n_tiles))
        batch_index: Index = ()
        if batch:
            batch_pid = b.program_id(1)
            batch_index = tuple(b.delinearize(batch_pid, batch))
        rows = b.lanes(b.binary("mul", pid_m, b.index(bm)), "BLOCK_M", bm, 0, 2)
        cols = b.lanes(b.binary("mul", pid_n, b.index(bn)), "BLOCK_N", bn, 1, 2)
        row_mask = b.in_bounds(rows, m_extent, bm)
        col_mask = b.in_bounds(cols, n_extent, bn)

        element = out.element_type
        acc = b.splat(b.const(0, accumulator_type(element)), [bm, bn])

        def k_step(start: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            # ``start + range`` along K, as a row ([1, BK]) of the lhs tile and
            # a column ([BK, 1]) of the rhs tile.
            k_row = b.lanes(start, "BLOCK_K", bk, 1, 2)
            k_col = b.lanes(start, "BLOCK_K", bk, 0, 2)
            x = self.dot_operand(
                lhs,
                (*batch_broadcast(self, lhs, batch_index), rows, k_row),
                b.both(row_mask, b.in_bounds(k_row, k_extent, bk)),
            )
            y = self.dot_operand(
                rhs,
                (*batch_broadcast(self, rhs, batch_index), k_col, cols),
                b.both(b.in_bounds(k_col, k_extent, bk), col_mask),
            )
            x, y = self._full_tile(x, (bm, bk)), self._full_tile(y, (bk, bn))
            return [b.create(tile.DotOp(x, y, carried[0]))]

        (product,) = self.for_chunks(k_extent, bk, [acc], k_step)

        tile_index = (*batch_index, rows, cols)
        self.anchors[matmul.results[0]] = (tile_index, b.cast(product, element))
        out_mask = b.both(row_mask, col_mask)
        self.mask = out_mask
        body = list(self.kernel.body.block.ops)[:-1]  # the yield ends it
        layouts = epilogue_layouts(body, matmul)
        assert not isinstance(layouts, str), layouts  # the kernel verified
        self.write_outputs(
            lambda value: self._stored_at(value, layouts, tile_index),
            lambda _: out_mask,
        )
        self.notes.append(
            f"matmul tiles {bm}x{bn}, K loop over {k_extent} in steps of {bk}"
        )
        grid = [m_extent.ceildiv(bm) * n_tiles]
        if batch:
            grid.append(sym.product(batch))
        return grid

    def _stored_at(
        self,
        value: SSAValue,
        layouts: dict[SSAValue, EpilogueLayout],
        tile_index: Index,
    ) -> Index:
        """Where a yielded value's tile goes: the result tile's index in the
        value's layout (its columns delinearized over a split, which
        ``bufferize`` folds back into one offset; its axes permuted)."""
        layout = layouts.get(value)
        if layout is None or (
            layout.perm is None and layout.merges is None and len(layout.columns) == 1
        ):
            return tile_index
        *lead, columns = tile_index
        if len(layout.columns) == 1:
            # Unsplit columns keep the tile's column index (delinearizing
            # over one axis of a static 1 would give the constant 0, which
            # is not the index the matmul's tile is valid at).
            index = layout.index(lead, (columns,))
        else:
            index = layout.index(lead, self.b.delinearize(columns, layout.columns))
        return layout.merged(index, self.b.linearize)

    def _full_tile(self, value: SSAValue, shape: tuple[int, int]) -> SSAValue:
        """``value`` as a tile of exactly ``shape`` (``tl.dot`` operands)."""
        b = self.b
        if loop.shape_of(value.type) == shape:
            return value
        if not loop.shape_of(value.type):
            return b.splat(value, shape)
        zero = b.splat(b.const(0, loop.element_of(value.type)), shape)
        return b.binary("add", zero, value)


def clamp_block(largest: int | None, block: int) -> int:
    """A matmul tile: ``block``, or less for an extent whose largest value
    (static, or bounded by facts) is small (>= 16)."""
    if largest is not None:
        return max(16, min(block, next_power_of_two(largest)))
    return block


def accumulator_type(element: Attribute) -> Attribute:
    """Matmul accumulators: f32 for 16- and 32-bit floats, else the element."""
    if isinstance(element, Float16Type | BFloat16Type):
        return f32
    return element
