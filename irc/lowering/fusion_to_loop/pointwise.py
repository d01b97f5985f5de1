"""The ``pointwise`` strategy: rows by columns, or the flattened shape.

Each program handles ``pointwise-block`` elements of the (first) output's
shape and writes every output there under the bounds mask (none when every
block is full). Two forms:

- *rows by columns* (the default for rank >= 2): a 2-D block of
  ``BLOCK_R`` rows of the outer dims (flattened) by ``BLOCK_C`` consecutive
  elements of the innermost dim. Columns are ``start + range``: contiguous
  loads vectorise, and only the row index, a ``[BLOCK_R, 1]`` tile, is
  delinearised into the outer dims (a division per row, not per element).
  The program id splits into a row block and a column block once per
  program;
- *flat*: 1-D blocks of consecutive elements of the flattened shape, for
  kernels where no index needs coordinates: rank <= 1 or a single row
  (the flat form is its columns), or elementwise ops
  only over operands of the output's own shape, whose coordinates
  re-linearise to the flat index (so no division survives), for an
  innermost dim too small to fill a vector (static and below
  ``MIN_COLUMNS``), whose divisions are by constants, and for one whose
  count of column blocks the facts in scope cannot prove positive (the
  program id's split needs it, and so does the bounds checker).

A kernel whose innermost axis is a concat of operands of one width is
tiled rows by columns *of one piece* instead, each program writing every
piece, so that inputs read at the same window by several pieces are read
once (:mod:`~irc.lowering.fusion_to_loop.pieces`: rotary embedding).
"""

from __future__ import annotations

from irc.dialects import fusion, sym
from irc.dialects import graph as g
from irc.dialects.kernel_kind import POINTWISE
from irc.lowering.fusion_to_loop.builder import next_power_of_two
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.pieces import Pieces, concat_pieces
from irc.lowering.fusion_to_loop.tiler import STRATEGIES, KernelTiler
from irc.shapes import SymExpr

#: Columns of a block when the innermost dim is symbolic: a warp's 32 lanes
#: of 4-element vectors.
SYMBOLIC_COLUMNS = 128
#: The least static innermost dim tiled rows by columns: a smaller one
#: leaves most lanes of a vector load masked.
MIN_COLUMNS = 16
#: The least elements of one piece's block where the rows allow: Triton's
#: default 4 warps of 32 lanes, each loading a 4-element vector (with many
#: pieces, filling ``pointwise-block`` over all of them would leave each
#: piece's loads a lane's element or less: scalar loads).
MIN_PIECE_BLOCK = 4 * SYMBOLIC_COLUMNS


@STRATEGIES.register(POINTWISE)
class PointwiseTiler(KernelTiler):
    """Tiles a ``pointwise`` fusion kernel."""

    def iterate(self) -> list[SymExpr]:
        shape = tensor_type(self.yielded[0]).dims
        pieces = concat_pieces(self.kernel, shape, self.facts)
        if pieces is not None and self._column_blocks_positive(pieces.columns):
            return self._rows_by_columns(shape, pieces)
        if self._is_flat(shape):
            return self._flat(shape)
        return self._rows_by_columns(shape)

    def _is_flat(self, shape: tuple[SymExpr, ...]) -> bool:
        """Whether the flat form needs no division by a symbol and loses
        no vector loads (see the module docstring)."""
        if len(shape) <= 1 or sym.product(shape[:-1]) == 1:
            return True  # one row: the flat form is its columns
        inner = shape[-1]
        if inner.constant is not None and inner.constant < MIN_COLUMNS:
            return True
        if not self._column_blocks_positive(inner):
            return True
        body = self.kernel.body.block
        same_shape = all(
            tensor_type(v).dims == shape
            for v in (*body.args, *self.yielded)
            if isinstance(v.type, g.TensorType)
        )
        elementwise = all(
            isinstance(op, fusion.ELEMENTWISE_OPS)
            or (isinstance(op, g.ConstantOp) and op.is_splat)
            for op in body.ops
            if op is not body.last_op
        )
        return same_shape and elementwise

    def _flat(self, shape: tuple[SymExpr, ...]) -> list[SymExpr]:
        b = self.b
        numel = sym.product(shape)
        block = self.clamp(self.options.pointwise_block, numel)
        start = b.binary("mul", b.program_id(0), b.index(block))
        lanes = b.lanes(start, "BLOCK", block)
        self.mask = b.in_bounds(lanes, numel, block)
        coords = tuple(b.delinearize(lanes, shape))
        self._write(coords)
        self.notes.append(
            f"pointwise over {sym.shape_text(shape)} in blocks of {block}"
        )
        return [numel.ceildiv(block)]

    def _column_blocks_positive(self, columns: SymExpr) -> bool:
        """Whether the facts prove the count of column blocks over
        ``columns`` positive: the program id's split needs it (the bounds
        checker's too)."""
        column_blocks = columns.ceildiv(self._column_block(columns))
        return self.facts.prove_le(SymExpr.const(1), column_blocks)

    def _rows_by_columns(
        self, shape: tuple[SymExpr, ...], pieces: Pieces | None = None
    ) -> list[SymExpr]:
        """Rows by columns; with ``pieces``, the columns of one piece, each
        program writing every piece at its offset (see ``pieces``)."""
        b = self.b
        outer, inner = shape[:-1], shape[-1]
        width, count = (inner, 1) if pieces is None else (pieces.columns, pieces.count)
        rows = sym.product(outer)
        block_c = self._column_block(width)
        # A block of every piece holds about ``pointwise-block`` elements
        # (a power of two of rows: hence the pieces' count rounded up), and
        # each piece's block at least ``MIN_PIECE_BLOCK`` (or the option).
        per_row = block_c * next_power_of_two(count)
        least = 1
        if pieces is not None:
            least = min(MIN_PIECE_BLOCK, self.options.pointwise_block) // block_c
        block_r = self.clamp(
            max(1, least, self.options.pointwise_block // per_row), rows
        )
        column_blocks = width.ceildiv(block_c)
        pid = b.program_id(0)
        row_block = b.binary("floordiv", pid, b.size(column_blocks))
        column_block = b.binary("rem", pid, b.size(column_blocks))
        row_lanes = b.lanes(
            b.binary("mul", row_block, b.index(block_r)), "BLOCK_R", block_r, 0, 2
        )
        column_lanes = b.lanes(
            b.binary("mul", column_block, b.index(block_c)), "BLOCK_C", block_c, 1, 2
        )
        self.mask = b.both(
            b.in_bounds(row_lanes, rows, block_r),
            b.in_bounds(column_lanes, width, block_c),
        )
        row_coords = b.delinearize(row_lanes, outer)
        if pieces is None:
            self._write((*row_coords, column_lanes))
        else:
            for number in range(count):
                offset = self.facts.simplify(pieces.step * number)
                position = b.window(column_lanes, offset, width, pieces.stride)
                self._write((*row_coords, position))
        self.notes.append(
            f"pointwise over {sym.shape_text(shape)} in blocks of {block_r} rows "
            f"by {block_c} columns{_pieces_text(pieces)}"
        )
        return [rows.ceildiv(block_r) * column_blocks]

    def _column_block(self, inner: SymExpr) -> int:
        """``BLOCK_C``: the innermost dim's next power of two up to
        ``pointwise-block`` when static, ``SYMBOLIC_COLUMNS`` when not."""
        if inner.constant is None:
            return min(self.options.pointwise_block, SYMBOLIC_COLUMNS)
        return self.clamp(self.options.pointwise_block, inner)

    @staticmethod
    def clamp(block: int, extent: SymExpr) -> int:
        """``block``, or less for a smaller static ``extent``."""
        if extent.constant is not None:
            return min(block, next_power_of_two(max(extent.constant, 1)))
        return block

    def _write(self, coords: Index) -> None:
        mask = self.mask
        self.write_outputs(lambda _: coords, lambda _: mask)


def _pieces_text(pieces: Pieces | None) -> str:
    if pieces is None:
        return ""
    if pieces.stride == 1:
        return f" in each of {pieces.count} pieces of {pieces.columns} columns"
    return f" in each of {pieces.count} interleaved pieces of {pieces.columns} columns"
