"""The ``attention`` strategy: matmul -> row reduction -> matmul in one walk
over the keys, with online rescaling (flash attention's schedule).

An ``attention`` kernel (``irc.dialects.fusion.AttentionChain``) computes
``P @ v`` with ``P = exp(x - max(x)) * f``. Each program takes ``BLOCK_M``
query rows of one batch element and walks the keys in blocks of ``BLOCK_N``,
carrying per row the running max, the sums relative to it and the running
product, rescaled by ``exp(m - m')`` when the max grows; the tiles are
transposed so that per-row values broadcast without a reshape.

Entry point: ``AttentionTiler``. See docs/lowering.md, section "loop: tiled
loop nests" (its attention item).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.elementwise import ReductionKind
from irc.dialects.kernel_kind import (
    ATTENTION,
    MATMUL_PRECISION_ATTRIBUTE,
    NUM_STAGES_ATTRIBUTE,
    NUM_WARPS_ATTRIBUTE,
    MatmulPrecision,
)
from irc.lowering.fusion_to_loop.index_maps import Index, batch_broadcast, tensor_type
from irc.lowering.fusion_to_loop.key_bounds import skips_keys_past_the_row
from irc.lowering.fusion_to_loop.matmul import (
    MatmulTiler,
    accumulator_type,
    clamp_block,
)
from irc.lowering.fusion_to_loop.tiler import STRATEGIES
from irc.primitives.declaration import Primitive
from irc.shapes import SymExpr

#: Query rows and keys per block (Triton's flash-attention tutorial's
#: starting point for head dims up to 128; not measured here, no GPU).
BLOCK_QUERIES = 64
BLOCK_KEYS = 64
NUM_WARPS = 4
NUM_STAGES = 2

#: A 2-D tile shape; lanes along one axis of a 2-D tile with their mask.
Shape2 = tuple[int, int]
Lanes = tuple[SSAValue, SSAValue | None]


@dataclass(frozen=True)
class _Blocks:
    """A program's tiles: ``queries`` rows (``BLOCK_M``), ``keys`` per step
    of the walk (``BLOCK_N``), the head dims ``head`` (``BLOCK_D``, the
    first matmul's contracted dim) and ``values`` (``BLOCK_DV``, the
    output's columns)."""

    queries: int
    keys: int
    head: int
    values: int


@dataclass
class _Running:
    """What the walk over the keys carries per query row: the max, the
    sums relative to it, and the second product (``o.T``)."""

    maximum: SSAValue
    sums: list[SSAValue]
    product: SSAValue

    def values(self) -> list[SSAValue]:
        return [self.maximum, *self.sums, self.product]

    @staticmethod
    def of(values: list[SSAValue]) -> _Running:
        return _Running(values[0], values[1:-1], values[-1])


@STRATEGIES.register(ATTENTION)
class AttentionTiler(MatmulTiler):
    """Tiles an ``attention`` fusion kernel."""

    chain: fusion.AttentionChain
    blocks: _Blocks
    #: This program's query rows (``[1, BLOCK_M]``) and their bounds mask.
    rows: SSAValue
    row_mask: SSAValue | None
    #: The batch index of the output and of the scores.
    batch_index: Index
    score_batch: Index

    def iterate(self) -> list[SymExpr]:
        b = self.b
        matmuls = [o for o in self.kernel.body.block.ops if isinstance(o, g.MatmulOp)]
        chain = fusion.AttentionChain.of(matmuls[-1])
        assert isinstance(chain, fusion.AttentionChain), "the verifier checked it"
        self.chain = chain
        *batch, _, _ = tensor_type(chain.output.result).dims
        *_, q_extent, k_extent = chain.keys.shape
        self.blocks = self._blocks(q_extent, k_extent)
        self.batch_index = ()
        if batch:
            self.batch_index = tuple(b.delinearize(b.program_id(1), batch))
        self.score_batch = batch_broadcast(self, chain.output.lhs, self.batch_index)
        start = b.binary("mul", b.program_id(0), b.index(self.blocks.queries))
        self.rows = b.lanes(start, "BLOCK_M", self.blocks.queries, 1, 2)
        self.row_mask = b.in_bounds(self.rows, q_extent, self.blocks.queries)
        queries = self._queries()
        end: SymExpr | SSAValue = k_extent
        skipped = ""
        if skips_keys_past_the_row(chain):
            # The keys past this program's last row are masked: not walked.
            last = b.binary("add", start, b.index(self.blocks.queries))
            end = b.binary("min", b.size(k_extent), last)
            skipped = ", up to the program's last row (the keys past it are masked)"
        running = self._walk_keys(k_extent, end, queries)
        self._finish(running)
        self.notes.append(
            f"attention: {self.blocks.queries} query rows per program, keys in "
            f"blocks of {self.blocks.keys}{skipped}, with online rescaling"
        )
        grid = [q_extent.ceildiv(self.blocks.queries)]
        if batch:
            grid.append(sym.product(batch))
        return grid

    def _blocks(self, q_extent: SymExpr, k_extent: SymExpr) -> _Blocks:
        """The tiles (the ``tile`` pass's matmul-block-m/n for the queries
        and keys when given), and the launch attributes."""
        opts = self.options
        q_largest, k_largest = (self.facts.bounds(e)[1] for e in (q_extent, k_extent))
        precision = MatmulPrecision(opts.matmul_precision)
        self.launch_attributes = {
            MATMUL_PRECISION_ATTRIBUTE: StringAttr(precision),
            NUM_WARPS_ATTRIBUTE: IntegerAttr(NUM_WARPS, i64),
            NUM_STAGES_ATTRIBUTE: IntegerAttr(NUM_STAGES, i64),
        }
        head = tensor_type(self.chain.scores.lhs).dims[-1].constant
        values = tensor_type(self.chain.output.result).dims[-1].constant
        assert head is not None and values is not None, "static: the verifier"
        return _Blocks(
            queries=clamp_block(q_largest, opts.matmul_block_m or BLOCK_QUERIES),
            keys=clamp_block(k_largest, opts.matmul_block_n or BLOCK_KEYS),
            head=clamp_block(head, fusion.MAX_HEAD_DIM),
            values=clamp_block(values, fusion.MAX_HEAD_DIM),
        )

    def _operand(
        self, value: SSAValue, index: Index, mask: SSAValue | None, shape: Shape2
    ) -> SSAValue:
        """A ``tl.dot`` operand: ``value`` at ``index`` as a full tile of
        ``shape``, masked lanes reading 0 (which adds nothing)."""
        return self._full_tile(self.dot_operand(value, index, mask), shape)

    def _head(self, block: str, size: int, extent: int, axis: int) -> Lanes:
        """``0 .. size-1`` along ``axis`` of a 2-D tile, with its mask
        against a static head dim of ``extent``."""
        lanes = self.b.range(block, size, axis, 2)
        return lanes, self.b.in_bounds(lanes, SymExpr.const(extent), size)

    def _queries(self) -> SSAValue:
        """``q.T`` at this program's rows (``[BLOCK_D, BLOCK_M]``), loaded
        once, before the walk."""
        lhs, blocks = self.chain.scores.lhs, self.blocks
        head, head_mask = self._head(
            "BLOCK_D", blocks.head, tensor_type(lhs).dims[-1].constant or 1, 0
        )
        index = (*batch_broadcast(self, lhs, self.score_batch), self.rows, head)
        mask = self.b.both(self.row_mask, head_mask)
        return self._operand(lhs, index, mask, (blocks.head, blocks.queries))

    def _walk_keys(
        self, k_extent: SymExpr, end: SymExpr | SSAValue, queries: SSAValue
    ) -> _Running:
        """The ``scf.for`` over blocks of keys, up to ``end``."""
        b, blocks = self.b, self.blocks
        element = accumulator_type(tensor_type(self.chain.exponent).element_type)
        output_element = tensor_type(self.chain.output.result).element_type
        per_row = [blocks.queries]
        start = _Running(
            b.splat(b.const(float("-inf"), element), per_row),
            [b.splat(b.const(0.0, element), per_row) for _ in self.chain.sums],
            b.splat(
                b.const(0, accumulator_type(output_element)),
                [blocks.values, blocks.queries],
            ),
        )

        def step(first: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            return self._step(first, k_extent, queries, _Running.of(carried)).values()

        return _Running.of(self._for_blocks(end, blocks.keys, start.values(), step))

    def _for_blocks(
        self,
        end: SymExpr | SSAValue,
        size: int,
        inits: list[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``for_chunks`` up to ``end``, a size or an index value."""

        def scoped(first: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            self.scopes.append({})
            saved_mask = self.mask
            try:
                return body(first, carried)
            finally:
                self.mask = saved_mask
                self.scopes.pop()

        return self.b.for_loop(end, size, inits, scoped)

    def _step(
        self,
        first: SSAValue,
        k_extent: SymExpr,
        queries: SSAValue,
        running: _Running,
    ) -> _Running:
        """One block of keys from ``first``: the scores, ``x``, and every
        accumulator rescaled to the new max."""
        b, chain, blocks = self.b, self.chain, self.blocks
        keys = b.lanes(first, "BLOCK_N", blocks.keys, 0, 2)  # [BLOCK_N, 1]
        key_mask = b.in_bounds(keys, k_extent, blocks.keys)
        scores = self._scores(keys, key_mask, queries)
        score_index = (*self.score_batch, self.rows, keys)
        self.anchors[chain.scores.result] = (score_index, scores)
        self.mask = b.both(self.row_mask, key_mask)
        element = loop.element_of(running.maximum.type)  # f32 for 16-bit x
        exponent = self._full_tile(
            b.cast(self.value_at(chain.exponent, score_index), element),
            (blocks.keys, blocks.queries),
        )
        if key_mask is not None:  # masked keys count nothing
            exponent = b.select(key_mask, exponent, b.const(float("-inf"), element))
        block_max = b.create(tile.ReduceOp("max", exponent, 0))
        maximum = b.binary(_combine("max"), running.maximum, block_max)
        # 0 where the max is still -inf (nothing but masked or -inf terms so
        # far), where the differences would be NaN.
        no_max, zero = self._is_minus_inf(maximum), b.const(0.0, element)
        rescale = b.select(
            no_max, zero, self._exp(b.binary("sub", running.maximum, maximum))
        )
        terms = b.select(no_max, zero, self._exp(b.binary("sub", exponent, maximum)))
        block_sum = b.create(tile.ReduceOp("sum", terms, 0))
        sums = [
            b.binary("add", b.binary("mul", total, rescale), block_sum)
            for total in running.sums
        ]
        values = self._values(first, k_extent)
        lhs_element = tensor_type(chain.output.lhs).element_type
        product = b.create(
            tile.DotOp(
                values,
                b.cast(terms, lhs_element),
                b.binary("mul", running.product, rescale),
            )
        )
        return _Running(maximum, sums, product)

    def _scores(
        self, keys: SSAValue, key_mask: SSAValue | None, queries: SSAValue
    ) -> SSAValue:
        """``s.T`` (``[BLOCK_N, BLOCK_M]``): ``k`` at the block's keys (as
        rows) times ``q.T``."""
        b, rhs, blocks = self.b, self.chain.scores.rhs, self.blocks
        head, head_mask = self._head(
            "BLOCK_D", blocks.head, tensor_type(rhs).dims[-2].constant or 1, 1
        )
        index = (*batch_broadcast(self, rhs, self.score_batch), head, keys)
        keys_tile = self._operand(
            rhs, index, b.both(key_mask, head_mask), (blocks.keys, blocks.head)
        )
        element = tensor_type(self.chain.scores.result).element_type
        zero = b.splat(
            b.const(0, accumulator_type(element)), [blocks.keys, blocks.queries]
        )
        return b.cast(b.create(tile.DotOp(keys_tile, queries, zero)), element)

    def _values(self, first: SSAValue, k_extent: SymExpr) -> SSAValue:
        """``v.T`` at the block's keys (``[BLOCK_DV, BLOCK_N]``)."""
        b, rhs, blocks = self.b, self.chain.output.rhs, self.blocks
        keys = b.lanes(first, "BLOCK_N", blocks.keys, 1, 2)  # [1, BLOCK_N]
        columns, column_mask = self._head(
            "BLOCK_DV", blocks.values, tensor_type(rhs).dims[-1].constant or 1, 0
        )
        index = (*batch_broadcast(self, rhs, self.batch_index), keys, columns)
        mask = b.both(b.in_bounds(keys, k_extent, blocks.keys), column_mask)
        return self._operand(rhs, index, mask, (blocks.values, blocks.keys))

    def _finish(self, running: _Running) -> None:
        """The reductions' values, the factors applied to the product, and
        the outputs at the output tile."""
        b, chain, blocks = self.b, self.chain, self.blocks
        self.mask = self.row_mask
        self.anchors[chain.maximum.result] = (
            self._row_index(chain.maximum.result),
            b.cast(running.maximum, tensor_type(chain.maximum.result).element_type),
        )
        # A row whose max is -inf sums exp(-inf - -inf), NaN, as NumPy does.
        no_max = self._is_minus_inf(running.maximum)
        for total, value in zip(chain.sums, running.sums):
            nan = b.const(float("nan"), loop.element_of(value.type))
            self.anchors[total.result] = (
                self._row_index(total.result),
                b.cast(
                    b.select(no_max, nan, value),
                    tensor_type(total.result).element_type,
                ),
            )
        product = running.product
        for factor in chain.factors:
            scale = b.cast(
                self.value_at(factor.value, self._row_index(factor.value)),
                loop.element_of(product.type),
            )
            product = b.binary("div" if factor.divides else "mul", product, scale)
        if chain.nan_guarded:
            product = self._guarded(running, scale, product)
        columns, column_mask = self._head(
            "BLOCK_DV",
            blocks.values,
            tensor_type(chain.output.result).dims[-1].constant or 1,
            0,
        )
        out_index = (*self.batch_index, self.rows, columns)
        element = tensor_type(chain.output.result).element_type
        self.anchors[chain.output.result] = (out_index, b.cast(product, element))
        out_mask = b.both(self.row_mask, column_mask)
        self.mask = out_mask
        statistics = {
            reduction.result: self.anchors[reduction.result][1]
            for reduction in chain.reductions
        }
        for number, value in enumerate(self.yielded):
            if value in statistics:
                self._write_statistic(value, statistics[value], number)
            else:
                self.write(self.value_at(value, out_index), number, out_index, out_mask)

    def _write_statistic(
        self, value: SSAValue, computed: SSAValue | None, number: int
    ) -> None:
        """The rows' max or a sum (``[BLOCK_M]``), yielded for a backward
        that recomputes ``P`` from them, at this program's rows."""
        b = self.b
        assert computed is not None, "the walk computed it"
        start = b.binary("mul", b.program_id(0), b.index(self.blocks.queries))
        rows = b.lanes(start, "BLOCK_M", self.blocks.queries, 0, 1)
        *_, q_extent, _ = self.chain.keys.shape
        mask = b.in_bounds(rows, q_extent, self.blocks.queries)
        index = (*self.score_batch, rows)
        if len(tensor_type(value).dims) > len(index):  # keepdims
            index = (*index, b.index(0))
        self.write(computed, number, index, mask)

    def _guarded(
        self, running: _Running, total: SSAValue, product: SSAValue
    ) -> SSAValue:
        """``where(isnan(P), 0, P) @ v`` from ``P @ v``: a row of the
        softmax ``P`` is NaN where its sum ``total`` is, and then the row
        of ``0 @ v`` is the unscaled product where the max is -inf (its
        terms were 0), otherwise 0 (a +inf or NaN score: ``v`` is taken to
        be finite there)."""
        b = self.b
        element = loop.element_of(product.type)
        zero_rows = b.select(
            self._is_minus_inf(running.maximum), running.product, b.const(0.0, element)
        )
        return b.select(b.compare("ne", total, total), zero_rows, product)

    def _row_index(self, value: SSAValue) -> Index:
        """The index of a per-row value (keepdims or not) at this program's
        rows."""
        rank = len(tensor_type(value).dims)
        index = (*self.score_batch, self.rows)
        return index if rank == len(index) else (*index, self.b.index(0))

    def _exp(self, value: SSAValue) -> SSAValue:
        return self.b.create(tile.UnaryOp("exp", value))

    def _is_minus_inf(self, value: SSAValue) -> SSAValue:
        element = loop.element_of(value.type)
        return self.b.compare("eq", value, self.b.const(float("-inf"), element))


def _combine(kind: str) -> Primitive:
    combine = ReductionKind(kind).semantics.combine
    assert combine is not None
    return combine
