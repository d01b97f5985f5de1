"""The ``reduction`` strategy: a program per row, the reduced dims as lanes.

The kernel's reductions share one input shape and reduced axes; the kept
dims are the rows, the reduced dims, flattened, a lane index. A short static
row is one persistent tile; otherwise each group of dependent reductions
walks the row in blocks, the first block read once in the kernel body. The
idioms ``fuse`` recorded (``irc.dialects.fusion.Idiom``: online sums,
Welford's centred sums, one-hot picks) join the walk of what they read.

Entry point: ``ReductionTiler``. See docs/lowering.md, section "loop: tiled
loop nests" (its reduction item).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import DictionaryAttr, IntegerType, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.elementwise import ReductionKind
from irc.dialects.fusion import (
    IDIOM_ATTRIBUTE,
    CentredSum,
    OneHotPick,
    RowIdioms,
)
from irc.dialects.kernel_kind import LAUNCH_TILES_ATTRIBUTE
from irc.dialects.sym import SymExprAttr
from irc.lowering.fusion_to_loop.builder import I32_LIMIT, next_power_of_two
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.tiler import KernelTiler
from irc.primitives.declaration import Primitive

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass
from irc.shapes import SymExpr


@dataclass(frozen=True)
class _Rows:
    """What a reduction kernel iterates over: ``reductions`` of rows of
    ``shape`` reduced over ``axes``; this program's row coordinates
    (``row``), the reduced extent and the lanes per tile."""

    reductions: list[Operation]
    shape: Sequence[SymExpr]
    axes: Sequence[int]
    row: Index
    extent: SymExpr
    block: int


@dataclass(frozen=True)
class _Block:
    """A block of a row: its linear ``lanes`` (over the reduced dims), their
    index into the rows' shape and their bounds ``mask``."""

    lanes: SSAValue
    index: Index
    mask: SSAValue | None


class ReductionTiler(KernelTiler):
    """Tiles a ``reduction`` fusion kernel."""

    def __init__(self, kernel: fusion.KernelOp, options: TilePass):
        super().__init__(kernel, options)
        #: ``launch_tiles`` for a symbolic row (``irc.dialects.kernel_kind``).
        self.launch_attributes: dict[str, Attribute] = {}

    def iterate(self) -> list[SymExpr]:
        reductions = [
            op
            for op in self.kernel.body.block.ops
            if isinstance(op, g.ReduceOp | g.ArgMaxOp)
        ]
        shape = tensor_type(reductions[0].operands[0]).dims
        axes = _reduction_axes(reductions[0])
        kept = [d for k, d in enumerate(shape) if k not in axes]
        extent = sym.product(d for k, d in enumerate(shape) if k in axes)
        persistent, block = row_blocks(extent, self.options)
        static = extent.constant
        if not persistent:
            # The first block stays in registers: as long as a persistent
            # row, or for a symbolic row as long as the launch chooses.
            block = self.options.max_persistent
            if static is None:
                block = self.options.max_row_block
                self.launch_attributes[LAUNCH_TILES_ATTRIBUTE] = DictionaryAttr(
                    {"BLOCK_R": SymExprAttr(extent)}
                )
        #: The online sums of the looped strategy, with the max each reads.
        self.online: dict[Operation, g.ReduceOp] = {}
        #: Its sums of squares about a per-row value, Welford's way.
        self.centered: dict[Operation, CentredSum] = {}
        #: Its one-hot picks, in the walk of what they subtract.
        self.picked: dict[Operation, OneHotPick] = {}
        pid = self.b.program_id(0)
        # The first block's lanes, the same for every row of the program.
        lanes = self.b.range("BLOCK_R", block)
        reduced = [d for k, d in enumerate(shape) if k in axes]
        self.first_lanes = (
            lanes,
            tuple(self.b.delinearize(lanes, reduced)),
            self.b.in_bounds(lanes, extent, block),
        )
        count = sym.product(kept)
        per_program = self._rows_per_program(shape, axes, count)

        def tile_row(row: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            coords = tuple(self.b.delinearize(row, kept))
            rows = _Rows(reductions, shape, axes, coords, extent, block)
            for reduction in reductions:
                value = reduction.results[0]
                self.anchors[value] = (self._row_index(rows, value), None)
            if persistent:
                self.notes.append(f"persistent reduction of {static} lanes per row")
                self._persistent(rows)
            else:
                self.notes.append(_looped_note(rows, static is None))
                self._looped(rows)
            return []

        if per_program == 1:
            tile_row(pid, [])
        else:
            self.notes.append(
                f"{per_program} rows per program, which read the inputs broadcast "
                "along the rows once"
            )
            self._walk_rows(pid, per_program, count, tile_row)
        return [count.ceildiv(per_program)]

    def _rows_per_program(
        self, shape: Sequence[SymExpr], axes: Sequence[int], count: SymExpr
    ) -> int:
        """``rows-per-program`` where an input is broadcast along the rows
        (a weight of the reduced dims: layer norm's ``g`` and ``b``), so that
        each program reads it once for its rows; else 1 (a program a row)."""
        weights = [
            arg
            for arg in self.kernel.body.block.args
            if any(_spreads_over(use.operation, shape, axes) for use in arg.uses)
        ]
        if not weights or count.constant == 1:
            return 1
        return self.options.rows_per_program

    def _walk_rows(
        self,
        pid: SSAValue,
        per_program: int,
        count: SymExpr,
        tile_row: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
    ) -> None:
        """A ``scf.for`` over this program's rows, ``per_program`` of them
        (fewer in the last program); the reads that do not depend on the row
        (a weight's first block) are made once, before it."""
        b = self.b
        first = b.binary("mul", pid, b.index(per_program))
        # min(first + per_program, rows): the row index stays provably
        # below the rows (the bounds checker's intervals see it).
        end = b.binary(
            "min", b.binary("add", first, b.index(per_program)), b.size(count)
        )
        self.hoist_invariant_reads = True
        self.for_chunks(end, 1, [], tile_row, first)

    def tile(self) -> loop.KernelOp:
        kernel = super().tile()
        kernel.attributes |= self.launch_attributes
        return kernel

    # ----- indices ---------------------------------------------------------

    def _full_index(
        self,
        rows: _Rows,
        lanes: SSAValue,
        coords: Sequence[SSAValue] | None = None,
    ) -> Index:
        """The index into the rows' shape of this row's ``lanes`` (whose
        coordinates in the reduced dims are ``coords`` when known)."""
        reduced = [d for k, d in enumerate(rows.shape) if k in rows.axes]
        lane_coords = iter(coords or self.b.delinearize(lanes, reduced))
        row_coords = iter(rows.row)
        return tuple(
            next(lane_coords) if k in rows.axes else next(row_coords)
            for k in range(len(rows.shape))
        )

    def _row_index(self, rows: _Rows, value: SSAValue) -> Index:
        """The index of a per-row (reduced-shape) value at this row."""
        dims = tensor_type(value).dims
        if len(dims) == len(rows.shape):  # keepdims
            coords = iter(rows.row)
            return tuple(
                self.b.index(0) if k in rows.axes else next(coords)
                for k in range(len(dims))
            )
        return rows.row

    def _is_row_value(self, rows: _Rows, value: SSAValue) -> bool:
        """Whether ``value`` has the rows' full shape (not a per-row value)."""
        return tuple(tensor_type(value).dims) == tuple(rows.shape) and (
            value not in self.anchors
        )

    # ----- persistent ------------------------------------------------------

    def _persistent(self, rows: _Rows) -> None:
        index = self._first_block(rows).index
        self.mask = self.first_lanes[2]
        for reduction in rows.reductions:
            self._reduce_tile(reduction, index)
        self.write_outputs(
            lambda v: (
                index if self._is_row_value(rows, v) else self._row_index(rows, v)
            ),
            lambda v: self.mask if self._is_row_value(rows, v) else None,
        )

    def _reduce_tile(self, reduction: Operation, index: Index) -> None:
        """Reduce ``reduction``'s operand over the lanes of ``index``."""
        values = self._masked_operand(reduction, index)
        kind = _reduction_kind(reduction)
        element = tensor_type(reduction.results[0]).element_type
        result = self.b.create(
            tile.ReduceOp(
                kind, values, 0, self.index_type if kind == "argmax" else None
            )
        )
        self._set_anchor(reduction, self.b.cast(result, element))

    def _masked_operand(self, reduction: Operation, index: Index) -> SSAValue:
        """The reduced operand at ``index``, a full tile, masked lanes
        holding the reduction's identity."""
        values = self.value_at(reduction.operands[0], index)
        element = loop.element_of(values.type)
        if not loop.shape_of(values.type):  # the same value on every lane
            values = self.b.splat(values, [self.b.tiles["BLOCK_R"]])
        if self.mask is not None:
            identity = self.b.const(
                identity_of(_reduction_kind(reduction), element), element
            )
            values = self.b.select(self.mask, values, identity)
        return values

    def _set_anchor(self, reduction: Operation, result: SSAValue) -> None:
        value = reduction.results[0]
        self.anchors[value] = (self.anchors[value][0], result)

    # ----- looped ----------------------------------------------------------

    def _looped(self, rows: _Rows) -> None:
        idioms = _idioms(rows.reductions)
        self.online = idioms.online
        for total, form in idioms.deferred.items():
            if isinstance(form, CentredSum):
                self.centered[total] = form
            else:
                self.picked[total] = form
        first = self._first_block(rows)
        for walk in idioms.walks(rows.reductions):
            self._reduce_in_one_loop(rows, walk, first)
        row_outputs = [v for v in self.yielded if self._is_row_value(rows, v)]
        for number, value in enumerate(self.yielded):
            if value not in row_outputs:
                index = self._row_index(rows, value)
                self.write(self.value_at(value, index), number, index, None)
        if row_outputs:
            self._write_rows_in_one_loop(rows, row_outputs, first)

    def _first_block(self, rows: _Rows) -> _Block:
        """The row's first ``block`` lanes, which every loop takes from the
        row's scope: their values are read once and stay in registers, so a
        row of at most ``block`` lanes is read once."""
        lanes, coords, mask = self.first_lanes
        return _Block(lanes, self._full_index(rows, lanes, coords), mask)

    def _over_row(
        self,
        rows: _Rows,
        first: _Block,
        inits: Sequence[SSAValue],
        body: Callable[[_Block, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``body(block, carried)`` on the row's first block (in the kernel
        body), then in a loop over the blocks after it."""
        saved, self.mask = self.mask, first.mask
        carried = body(first, list(inits))
        self.mask = saved
        block: int | SSAValue = rows.block
        if LAUNCH_TILES_ATTRIBUTE in self.launch_attributes:
            block = self.b.block_size("BLOCK_R")

        def chunk(
            lanes: SSAValue, mask: SSAValue | None, state: list[SSAValue]
        ) -> list[SSAValue]:
            return body(_Block(lanes, self._full_index(rows, lanes), mask), state)

        return self.loop_over(
            rows.extent, "BLOCK_R", rows.block, carried, chunk, block, block
        )

    def _reduce_in_one_loop(
        self, rows: _Rows, level: list[Operation], first: _Block
    ) -> None:
        """One walk over the row (its first block, then a loop over the
        others) accumulating the ``level`` reductions, which do not depend
        on one another, then their values."""
        inits: list[SSAValue] = []
        for reduction in level:
            inits.extend(self._accumulator_inits(reduction, rows.block))

        def body(block: _Block, carried: list[SSAValue]) -> list[SSAValue]:
            updated: list[SSAValue] = []
            # Each max's running value before and after this chunk, for the
            # online sums reading it.
            maxima: dict[Operation, tuple[SSAValue, SSAValue, SSAValue]] = {}
            for reduction in level:
                count = self._state_size(reduction)
                state, carried = carried[:count], carried[count:]
                if reduction in self.online:
                    old, new, values = maxima[self.online[reduction]]
                    updated.append(self._accumulate_online(state[0], old, new, values))
                    continue
                if reduction in self.centered:
                    values = self.value_at(self.centered[reduction].values, block.index)
                    updated.extend(self._accumulate_welford(state, values, block.mask))
                    continue
                if reduction in self.picked:
                    form = self.picked[reduction]
                    updated.extend(self._accumulate_pick(state, form, block))
                    continue
                values = self._masked_operand(reduction, block.index)
                accumulated = self._accumulate(reduction, values, block.lanes, state)
                maxima[reduction] = (state[0], accumulated[0], values)
                updated.extend(accumulated)
            return updated

        results = self._over_row(rows, first, inits, body)
        # The lanes' running maxima, for the online sums' last rescaling.
        lane_maxima: dict[Operation, SSAValue] = {}
        for reduction in level:
            count = self._state_size(reduction)
            state, results = results[:count], results[count:]
            if reduction in self.online:
                self._finish_online(reduction, state[0], lane_maxima)
                continue
            if reduction in self.centered:
                self._finish_welford(rows, reduction, state)
                continue
            if reduction in self.picked:
                self._finish_pick(rows, reduction, state)
                continue
            lane_maxima[reduction] = state[0]
            self._finish(reduction, state)

    def _accumulate_online(
        self, total: SSAValue, old_max: SSAValue, new_max: SSAValue, values: SSAValue
    ) -> SSAValue:
        """``total * exp(old - new) + exp(a - new)`` per lane, ``a`` the
        chunk's ``values`` (masked lanes ``-inf``, adding 0); 0 on a lane
        whose maximum is still ``-inf`` (nothing but ``-inf`` or masked so
        far), where the differences would be NaN."""
        b = self.b
        rescaled = b.binary("mul", total, self._exp(b.binary("sub", old_max, new_max)))
        added = self._exp(b.binary("sub", values, new_max))
        return self._zero_where_minus_inf(new_max, b.binary("add", rescaled, added))

    def _write_rows_in_one_loop(
        self, rows: _Rows, outputs: list[SSAValue], first: _Block
    ) -> None:
        """A last walk over the row writing the outputs of the rows' shape
        (the first block from the values the reductions read)."""

        def write(block: _Block, carried: list[SSAValue]) -> list[SSAValue]:
            for number, value in enumerate(self.yielded):
                if value in outputs:
                    value_here = self.value_at(value, block.index)
                    self.write(value_here, number, block.index, block.mask)
            return []

        self._over_row(rows, first, [], write)

    def _accumulate_welford(
        self, state: list[SSAValue], values: SSAValue, mask: SSAValue | None
    ) -> list[SSAValue]:
        """Welford's update of each lane's count, mean and sum of squared
        deviations from it by the chunk's ``values``; masked lanes keep
        theirs."""
        b = self.b
        count, mean, squares = state
        element = loop.element_of(values.type)
        counted = b.binary("add", count, b.const(1, element))
        delta = b.binary("sub", values, mean)
        moved = b.binary("add", mean, b.binary("div", delta, counted))
        grown = b.binary(
            "add", squares, b.binary("mul", delta, b.binary("sub", values, moved))
        )
        updated = [counted, moved, grown]
        if mask is None:
            return updated
        return [b.select(mask, new, old) for new, old in zip(updated, state)]

    def _finish_welford(
        self, rows: _Rows, reduction: Operation, state: list[SSAValue]
    ) -> None:
        """``sum((a - m)**2)`` of the row from the lanes' Welford states:
        ``sum(squares + count * (mean - m)**2)``, ``m`` the per-row centre,
        whose reductions are done by now."""
        b = self.b
        count, mean, squares = state
        center = self.centered[reduction].center
        loop_mask, self.mask = self.mask, None
        middle = self.value_at(center, self._row_index(rows, center))
        self.mask = loop_mask
        off = b.binary("sub", mean, middle)
        spread = b.binary(
            "add", squares, b.binary("mul", count, b.binary("mul", off, off))
        )
        self._set_anchor(reduction, b.create(tile.ReduceOp("sum", spread, 0)))

    def _accumulate_pick(
        self, state: list[SSAValue], form: OneHotPick, block: _Block
    ) -> list[SSAValue]:
        """Each lane's picked ``base`` and count of picks after this block
        (masked lanes pick nothing, whatever their label)."""
        b = self.b
        picked, count = state
        chosen = b.both(self.value_at(form.condition, block.index), block.mask)
        assert chosen is not None
        values = self.value_at(form.base, block.index)
        element = loop.element_of(values.type)
        zero, one = b.const(0.0, element), b.const(1.0, element)
        return [
            b.binary("add", picked, b.select(chosen, values, zero)),
            b.binary("add", count, b.select(chosen, one, zero)),
        ]

    def _finish_pick(
        self, rows: _Rows, reduction: Operation, state: list[SSAValue]
    ) -> None:
        """The row's pick minus the offsets (``(x - o1) - o2``, as NumPy
        rounds it: the sum of one picked lane is that lane), or 0 where no
        lane was picked."""
        b = self.b
        picked = b.create(tile.ReduceOp("sum", state[0], 0))
        count = b.create(tile.ReduceOp("sum", state[1], 0))
        loop_mask, self.mask = self.mask, None
        result = picked
        for offset in self.picked[reduction].offsets:
            offset_here = self.value_at(offset, self._row_index(rows, offset))
            result = b.binary("sub", result, offset_here)
        self.mask = loop_mask
        element = loop.element_of(picked.type)
        none = b.compare("eq", count, b.const(0.0, element))
        self._set_anchor(reduction, b.select(none, b.const(0.0, element), result))

    def _state_size(self, reduction: Operation) -> int:
        """How many values a looped reduction carries: an argmax its best
        value and lane; a centred sum its count, mean and squares; a pick
        its picked values and count."""
        if reduction in self.centered:
            return 3
        if reduction in self.picked:
            return 2
        return 2 if isinstance(reduction, g.ArgMaxOp) else 1

    def _accumulator_inits(self, reduction: Operation, block: int) -> list[SSAValue]:
        element = tensor_type(reduction.operands[0]).element_type
        if reduction in self.centered or reduction in self.picked:
            zero = self.b.splat(self.b.const(0, element), [block])
            return [zero] * self._state_size(reduction)
        kind = _reduction_kind(reduction)
        identity = self.b.splat(
            self.b.const(identity_of(kind, element), element), [block]
        )
        if kind != "argmax":
            return [identity]
        return [identity, self.b.splat(self.b.index(0), [block])]

    def _accumulate(
        self,
        reduction: Operation,
        values: SSAValue,
        lanes: SSAValue,
        state: list[SSAValue],
    ) -> list[SSAValue]:
        """The state after a chunk of ``values`` (the reduced operand,
        masked)."""
        b = self.b
        kind = _reduction_kind(reduction)
        if kind != "argmax":
            return [b.binary(_combine(kind), state[0], values)]
        best, where = state
        # Strictly greater keeps an earlier chunk's lane on ties, as NumPy's
        # first maximum; a NaN is greater than any number (NumPy's argmax
        # returns the first NaN).
        better = b.compare("gt", values, best)
        if not isinstance(loop.element_of(values.type), IntegerType):
            first_nan = b.both(
                b.compare("ne", values, values), b.compare("eq", best, best)
            )
            better = b.binary("or", better, first_nan)
        return [b.select(better, values, best), b.select(better, lanes, where)]

    def _finish_online(
        self, total: Operation, sums: SSAValue, lane_maxima: dict[Operation, SSAValue]
    ) -> None:
        """The online sum ``total`` of the row: each lane's sum brought to
        the row's max (``s * exp(m - max)``, 0 on a lane whose ``m`` is
        ``-inf``). A row whose max is ``-inf`` sums ``exp(-inf - -inf)``,
        NaN, as NumPy does."""
        b = self.b
        maximum = self.online[total]
        lanes = lane_maxima[maximum]
        row_max = self.anchors[maximum.results[0]][1]
        assert row_max is not None
        rescaled = b.binary("mul", sums, self._exp(b.binary("sub", lanes, row_max)))
        summed = b.create(
            tile.ReduceOp("sum", self._zero_where_minus_inf(lanes, rescaled), 0)
        )
        element = loop.element_of(summed.type)
        nan = b.const(float("nan"), element)
        self._set_anchor(total, b.select(self._is_minus_inf(row_max), nan, summed))

    def _exp(self, value: SSAValue) -> SSAValue:
        return self.b.create(tile.UnaryOp("exp", value))

    def _is_minus_inf(self, value: SSAValue) -> SSAValue:
        element = loop.element_of(value.type)
        return self.b.compare("eq", value, self.b.const(float("-inf"), element))

    def _zero_where_minus_inf(self, maximum: SSAValue, value: SSAValue) -> SSAValue:
        element = loop.element_of(value.type)
        zero = self.b.const(0.0, element)
        return self.b.select(self._is_minus_inf(maximum), zero, value)

    def _finish(self, reduction: Operation, state: list[SSAValue]) -> None:
        b = self.b
        kind = _reduction_kind(reduction)
        element = tensor_type(reduction.results[0]).element_type
        if kind != "argmax":
            self._set_anchor(reduction, b.create(tile.ReduceOp(kind, state[0], 0)))
            return
        best, where = state
        # The max propagates NaN: then the lanes holding a NaN are the
        # candidates, else those holding the max.
        top = b.create(tile.ReduceOp("max", best, 0))
        holds_top = b.compare("eq", best, top)
        if not isinstance(loop.element_of(best.type), IntegerType):
            holds_top = b.binary("or", holds_top, b.compare("ne", best, best))
        candidates = b.select(
            holds_top,
            where,
            b.index(I32_LIMIT if self.index_type == i32 else 2**63 - 1),
        )
        self._set_anchor(
            reduction, b.cast(b.create(tile.ReduceOp("min", candidates, 0)), element)
        )


def _spreads_over(op: Operation, shape: Sequence[SymExpr], axes: Sequence[int]) -> bool:
    """Whether ``op`` broadcasts its operand to the rows' ``shape`` along the
    rows: each of the operand's dims that is not 1 lands on a reduced axis
    (broadcasting aligns dims right)."""
    if not isinstance(op, g.BroadcastOp):
        return False
    if tuple(tensor_type(op.results[0]).dims) != tuple(shape):
        return False
    dims = tensor_type(op.operands[0]).dims
    shift = len(shape) - len(dims)
    spread = [k + shift for k, d in enumerate(dims) if d != 1]
    return bool(spread) and all(k in axes for k in spread)


def _looped_note(rows: _Rows, launched: bool) -> str:
    size = (
        f"BLOCK_R (chosen at launch, at most {rows.block})" if launched else rows.block
    )
    return (
        f"looped reduction over {rows.extent} lanes per row, {size} at a time, "
        "the first block kept in registers (a row that fits it is read once)"
    )


def row_blocks(extent: SymExpr, options: TilePass) -> tuple[bool, int]:
    """How a row kernel walks a row of ``extent`` lanes: whether in one
    block (``persistent``: a static row of at most ``max_persistent``
    lanes, in the next power of two), and the block's size (otherwise
    ``reduction_block``, or less for a shorter static row)."""
    static = extent.constant
    if static is not None and static <= options.max_persistent:
        return True, next_power_of_two(max(static, 1))
    block = options.reduction_block
    if static is not None:
        block = min(block, next_power_of_two(static))
    return False, block


def _reduction_axes(op: Operation) -> tuple[int, ...]:
    if isinstance(op, g.ArgMaxOp):
        return (op.axis.value.data,)
    assert isinstance(op, g.ReduceOp)
    return op.axis_list


def _reduction_kind(op: Operation) -> str:
    if isinstance(op, g.ArgMaxOp):
        return "argmax"
    assert isinstance(op, g.ReduceOp)
    return op.kind.data.value


def _combine(kind: str) -> Primitive:
    """The tile.binary kind that combines two partial results of ``kind``."""
    combine = ReductionKind(kind).semantics.combine
    assert combine is not None, "argmax keeps an index as well"
    return combine


def identity_of(kind: str, element: Attribute) -> int | float | bool:
    """The value masked lanes hold so that they do not change a reduction."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if element == i1:
        return kind == "min"
    if isinstance(element, IntegerType):
        bits = element.width.data
        return -(2 ** (bits - 1)) if kind in ("max", "argmax") else 2 ** (bits - 1) - 1
    return float("-inf") if kind in ("max", "argmax") else float("inf")


def _idioms(reductions: Sequence[Operation]) -> RowIdioms:
    """The idioms ``fuse`` recorded on the kernel's reductions. A kernel
    with no record (fusion IR written by hand, or by another frontend) has
    not been decided: the same recogniser decides it here, so that it tiles
    as ``fuse``'s would. The verifier has checked every record's form, so a
    record is never taken on trust."""
    if any(IDIOM_ATTRIBUTE in reduction.attributes for reduction in reductions):
        return RowIdioms.recorded(reductions)
    return RowIdioms.recognise(reductions)
