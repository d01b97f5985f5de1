"""The ``attention_backward`` strategy: matmuls contracting recomputed
scores, one walk over the contracted axis (flash attention's backward).

An ``attention_backward`` kernel (``irc.dialects.fusion.ScoreWalk``) yields
matmuls whose score-shaped operand is computed in the kernel from the
scores matmuls. Each program takes ``BLOCK_F`` lanes of the fixed axis of
one batch element and walks the other axis in blocks of ``BLOCK_W``: per
block it computes the scores tiles (``tl.dot`` over the static head dim),
evaluates the score-shaped operands on them (``[BLOCK_F, BLOCK_W]`` tiles,
zero outside the bounds) and adds their products with the other operand's
``[BLOCK_W, head]`` tile to one accumulator per matmul. A scores matmul is
read in either orientation (a value and its transpose, as ``dS`` and
``dS^T``): each is a ``tl.dot`` of its operands taken in that orientation.

Entry point: ``AttentionBackwardTiler``. See docs/lowering.md, section
"loop: tiled loop nests".
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.kernel_kind import (
    ATTENTION_BACKWARD,
    MATMUL_PRECISION_ATTRIBUTE,
    NUM_STAGES_ATTRIBUTE,
    NUM_WARPS_ATTRIBUTE,
    MatmulPrecision,
)
from irc.errors import IrcError
from irc.lowering.fusion_to_loop.attention import NUM_STAGES, NUM_WARPS, Lanes
from irc.lowering.fusion_to_loop.index_maps import Index, batch_broadcast, tensor_type
from irc.lowering.fusion_to_loop.matmul import (
    MatmulTiler,
    accumulator_type,
    clamp_block,
)
from irc.lowering.fusion_to_loop.tiler import STRATEGIES
from irc.shapes import SymExpr

#: Lanes of the fixed and the walked axis per block (flash attention's
#: backward in Triton's tutorial starts from 64 x 64 for head dims up to 128;
#: not measured here, no GPU); warps and stages are the forward's.
BLOCK_FIXED = 64
BLOCK_WALKED = 64


@STRATEGIES.register(ATTENTION_BACKWARD)
class AttentionBackwardTiler(MatmulTiler):
    """Tiles an ``attention_backward`` fusion kernel."""

    walk: fusion.ScoreWalk
    #: The scores matmuls by their results.
    scores: dict[SSAValue, g.MatmulOp]
    batch_index: Index
    #: This program's fixed lanes (``[BLOCK_F, 1]``); the current block's
    #: walked lanes as a row (``[1, BLOCK_W]``) and as a column.
    fixed: Lanes
    walked: Lanes
    walked_column: Lanes
    #: Both lanes' masks, the current block's scores' bounds.
    score_mask: SSAValue | None

    def iterate(self) -> list[SymExpr]:
        b = self.b
        body = list(self.kernel.body.block.ops)[:-1]  # the yield ends it
        walk = fusion.ScoreWalk.of(body, self.yielded)
        assert isinstance(walk, fusion.ScoreWalk), f"{walk}\n{self.kernel}"
        self.walk = walk
        self.scores = {op.result: op for op in walk.scores}
        fixed_block, walked_block = self._blocks()
        self.batch_index = ()
        if walk.batch:
            self.batch_index = tuple(b.delinearize(b.program_id(1), walk.batch))
        start = b.binary("mul", b.program_id(0), b.index(fixed_block))
        fixed = b.lanes(start, "BLOCK_F", fixed_block, 0, 2)
        self.fixed = fixed, b.in_bounds(fixed, walk.fixed, fixed_block)
        columns = [self._columns(matmul) for matmul in walk.accumulations]
        inits = [
            b.splat(
                b.const(0, accumulator_type(tensor_type(matmul.result).element_type)),
                [fixed_block, loop.shape_of(lanes[0].type)[1]],
            )
            for matmul, lanes in zip(walk.accumulations, columns)
        ]

        def step(first: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            self.walked = self._walked_lanes(first, walked_block, 1)
            self.walked_column = self._walked_lanes(first, walked_block, 0)
            # One mask for every score-shaped value of the block, so that
            # each is computed once for all the accumulations.
            self.score_mask = b.both(self.fixed[1], self.walked[1])
            return [
                self._accumulate(matmul, total, lanes, fixed_block, walked_block)
                for matmul, total, lanes in zip(walk.accumulations, carried, columns)
            ]

        totals = self.for_chunks(walk.walked, walked_block, inits, step)
        self._write(totals, columns)
        self.notes.append(
            f"attention backward: {fixed_block} lanes of {walk.fixed} per program, "
            f"walking {walk.walked} in blocks of {walked_block}, the scores "
            "recomputed per block"
        )
        grid = [walk.fixed.ceildiv(fixed_block)]
        if walk.batch:
            grid.append(sym.product(walk.batch))
        return grid

    def _blocks(self) -> tuple[int, int]:
        """The fixed and walked blocks (the ``tile`` pass's
        matmul-block-m/n when given), and the launch attributes."""
        opts, walk = self.options, self.walk
        fixed_largest, walked_largest = (
            self.facts.bounds(e)[1] for e in (walk.fixed, walk.walked)
        )
        self.launch_attributes = {
            MATMUL_PRECISION_ATTRIBUTE: StringAttr(
                MatmulPrecision(opts.matmul_precision)
            ),
            NUM_WARPS_ATTRIBUTE: IntegerAttr(NUM_WARPS, i64),
            NUM_STAGES_ATTRIBUTE: IntegerAttr(NUM_STAGES, i64),
        }
        return (
            clamp_block(fixed_largest, opts.matmul_block_m or BLOCK_FIXED),
            clamp_block(walked_largest, opts.matmul_block_n or BLOCK_WALKED),
        )

    def _walked_lanes(self, first: SSAValue, size: int, axis: int) -> Lanes:
        lanes = self.b.lanes(first, "BLOCK_W", size, axis, 2)
        return lanes, self.b.in_bounds(lanes, self.walk.walked, size)

    def _head(self, extent: SymExpr, axis: int) -> Lanes:
        """``0 .. block-1`` along ``axis`` of a 2-D tile, with its mask
        against a static head dim ``extent``."""
        size = extent.constant
        assert size is not None, "static: the verifier checked it"
        block = clamp_block(size, fusion.MAX_HEAD_DIM)
        lanes = self.b.range(f"BLOCK_H{block}", block, axis, 2)
        return lanes, self.b.in_bounds(lanes, extent, block)

    def _columns(self, matmul: g.MatmulOp) -> Lanes:
        """The head lanes (``[1, H]``) of an accumulation's other operand."""
        side = self.walk.score_operands[self.walk.accumulations.index(matmul)]
        other = tensor_type(matmul.operands[1 - side]).dims
        return self._head(other[-1] if side == 0 else other[-2], 1)

    def _accumulate(
        self,
        matmul: g.MatmulOp,
        total: SSAValue,
        columns: Lanes,
        fixed_block: int,
        walked_block: int,
    ) -> SSAValue:
        """``total`` plus this block's product: the score-shaped operand
        (``[BLOCK_F, BLOCK_W]``, zero outside the bounds) times the other
        one's ``[BLOCK_W, H]`` tile."""
        b, walk = self.b, self.walk
        scored, other = walk.score_operand(matmul), walk.other_operand(matmul)
        rows_first = walk.score_operands[walk.accumulations.index(matmul)] == 0
        fixed, walked = self.fixed[0], self.walked[0]
        pair = (fixed, walked) if rows_first else (walked, fixed)
        score_mask = self.score_mask
        self.mask = score_mask
        terms = self.value_at(
            scored, (*batch_broadcast(self, scored, self.batch_index), *pair)
        )
        if score_mask is not None:
            zero = b.const(0, loop.element_of(terms.type))
            terms = b.select(score_mask, terms, zero)
        element = tensor_type(other).element_type
        terms = self._full_tile(b.cast(terms, element), (fixed_block, walked_block))
        column = self.walked_column[0]
        lanes, lane_mask = columns
        index = (column, lanes) if rows_first else (lanes, column)
        head = loop.shape_of(lanes.type)[1]
        values = self._full_tile(
            self.dot_operand(
                other,
                (*batch_broadcast(self, other, self.batch_index), *index),
                b.both(self.walked_column[1], lane_mask),
            ),
            (walked_block, head),
        )
        return b.create(tile.DotOp(terms, values, total))

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        scores = self.scores.get(value)
        if scores is None:
            return super()._compute(value, index)
        saved_mask, saved_whole = self.mask, self.whole_mask_reads
        try:
            return self._scores(scores, index)
        finally:
            self.mask, self.whole_mask_reads = saved_mask, saved_whole

    def _scores(self, op: g.MatmulOp, index: Index) -> SSAValue:
        """A scores matmul's ``[BLOCK_F, BLOCK_W]`` tile at ``index``, whose
        last two entries are the fixed and the walked lanes in either
        order: ``lhs @ rhs``, or ``rhs^T @ lhs^T`` for the transpose."""
        b = self.b
        *batch, rows, columns = index
        fixed, fixed_mask = self.fixed
        walked, walked_mask = self.walked
        if (rows, columns) not in ((fixed, walked), (walked, fixed)):
            raise IrcError(
                f"tile: kernel {self.kernel.kernel_name} reads {op.name} away from "
                "its blocks of scores; the fusion pass should not have formed it"
            )
        contracted = tensor_type(op.lhs).dims[-1]
        head_row, head_row_mask = self._head(contracted, 1)
        head_column, head_column_mask = self._head(contracted, 0)
        if rows is fixed:
            first, first_index = op.lhs, (fixed, head_row)
            second, second_index = op.rhs, (head_column, walked)
        else:
            first, first_index = op.rhs, (head_row, fixed)
            second, second_index = op.lhs, (walked, head_column)
        first_tile = self.dot_operand(
            first,
            (*batch_broadcast(self, first, tuple(batch)), *first_index),
            b.both(fixed_mask, head_row_mask),
        )
        second_tile = self.dot_operand(
            second,
            (*batch_broadcast(self, second, tuple(batch)), *second_index),
            b.both(head_column_mask, walked_mask),
        )
        head = loop.shape_of(head_row.type)[1]
        fixed_block = loop.shape_of(fixed.type)[0]
        walked_block = loop.shape_of(walked.type)[1]
        element = tensor_type(op.result).element_type
        zero = b.splat(
            b.const(0, accumulator_type(element)), [fixed_block, walked_block]
        )
        product = b.create(
            tile.DotOp(
                self._full_tile(first_tile, (fixed_block, head)),
                self._full_tile(second_tile, (head, walked_block)),
                zero,
            )
        )
        return b.cast(product, element)

    def _write(self, totals: list[SSAValue], columns: list[Lanes]) -> None:
        """Each accumulation's ``[BLOCK_F, H]`` tile (its axes in the
        result's order) and its epilogue's values, stored where their
        layouts put the tile (``fusion.epilogue_layouts``)."""
        b, walk = self.b, self.walk
        fixed, fixed_mask = self.fixed
        body = list(self.kernel.body.block.ops)[:-1]
        places: dict[g.MatmulOp, tuple[Index, SSAValue | None]] = {}
        for matmul, total, (lanes, lane_mask) in zip(
            walk.accumulations, totals, columns
        ):
            rows_first = walk.score_operands[walk.accumulations.index(matmul)] == 0
            pair = (fixed, lanes) if rows_first else (lanes, fixed)
            index = (*self.batch_index, *pair)
            element = tensor_type(matmul.result).element_type
            self.anchors[matmul.result] = (index, b.cast(total, element))
            places[matmul] = (index, b.both(fixed_mask, lane_mask))
        layouts = {matmul: fusion.epilogue_layouts(body, matmul) for matmul in places}

        def stored_at(value: SSAValue) -> Index:
            matmul = walk.epilogues[value]
            found = layouts[matmul]
            assert not isinstance(found, str), found  # the kernel verified
            return self._stored_at(value, found, places[matmul][0])

        self.write_outputs(stored_at, lambda v: places[walk.epilogues[v]][1])
