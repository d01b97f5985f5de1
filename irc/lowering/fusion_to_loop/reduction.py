"""The ``reduction`` strategy: one program per row, the reduced dims as lanes.

The kernel's reductions (``graph.reduce``, ``graph.argmax``) share one
input shape and reduced axes. The kept dims are the rows (one program each,
grid ``[product of kept dims]``); the reduced dims, flattened, are a lane
index. Each reduction is an anchor valid at this row: keepdims results at
the row with the reduced dims pinned to 0.

- A static reduced extent of at most ``max-persistent`` lanes is one
  *persistent* tile (``BLOCK_R``, the extent rounded up to a power of two):
  every reduction and every output is computed from one read of the row.
- Otherwise the reductions are grouped by dependency (a group reads only
  earlier groups' results) and each group is one ``scf.for`` over chunks of
  ``reduction-block`` lanes, accumulating tile-wise (masked lanes hold the
  reduction's identity); the outputs of the row's shape are written by a
  last loop, the per-row outputs after the loops.
- A sum of ``exp(a - max(a))`` (softmax's, logsumexp's, cross-entropy's
  denominator) is *online*: it joins the loop of the max it reads, each lane
  carrying its running max ``m`` and a sum ``s`` relative to it, rescaled
  when the max grows (``s * exp(m - m') + exp(a - m')``), and the lanes'
  sums are brought to the row's max at the end. The row is read once for
  both instead of once for each.
- A sum of squares about a per-row centre, ``sum((a - m)**2)``, is
  Welford's when that saves a loop (``m`` computed from the reductions of
  the loop reading ``a``, as a variance's mean is): each lane carries its
  count, mean and squared deviations from it, and after the loop
  ``sum(squares + count * (mean - m)**2)`` is the sum, exactly in exact
  arithmetic and without the cancellation of ``sum(a*a) - n*m*m``.

``argmax`` keeps the first maximum as NumPy does (a NaN counting as the
greatest, the first NaN winning): across chunks the best value and its lane
are carried, and strict comparison keeps the earlier chunk on ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import AnyFloat, IntegerType, i1, i32
from xdsl.ir import Attribute, Operation, SSAValue

from irc.dialects import graph as g
from irc.dialects import loop, sym
from irc.dialects.elementwise import ElementwiseKind, ReductionKind
from irc.dialects.fusion import RowStructure
from irc.lowering.fusion_to_loop.builder import I32_LIMIT, next_power_of_two
from irc.lowering.fusion_to_loop.index_maps import Index, tensor_type
from irc.lowering.fusion_to_loop.tiler import KernelTiler

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


class ReductionTiler(KernelTiler):
    """Tiles a ``reduction`` fusion kernel."""

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
        pid = self.b.program_id(0)
        persistent, block = row_blocks(extent, self.options)
        static = extent.constant
        rows = _Rows(
            reductions, shape, axes, tuple(self.b.delinearize(pid, kept)), extent, block
        )
        #: The online sums of the looped strategy, with the max each reads.
        self.online: dict[Operation, Operation] = {}
        #: Its sums of squares about a per-row value, Welford's way.
        self.centered: dict[Operation, _Centered] = {}
        for reduction in reductions:
            value = reduction.results[0]
            self.anchors[value] = (self._row_index(rows, value), None)
        if persistent:
            self.notes.append(f"persistent reduction of {static} lanes per row")
            self._persistent(rows)
        else:
            self.notes.append(
                f"looped reduction over {extent} lanes per row, {block} at a time"
            )
            self._looped(rows)
        return [sym.product(kept)]

    # ----- indices ---------------------------------------------------------

    def _full_index(self, rows: _Rows, lanes: SSAValue) -> Index:
        """The index into the rows' shape of this row's ``lanes``."""
        reduced = [d for k, d in enumerate(rows.shape) if k in rows.axes]
        lane_coords = iter(self.b.delinearize(lanes, reduced))
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
        lanes = self.b.range("BLOCK_R", rows.block)
        self.mask = self.b.in_bounds(lanes, rows.extent, rows.block)
        index = self._full_index(rows, lanes)
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
            loop.ReduceOp(
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
                _identity(_reduction_kind(reduction), element), element
            )
            values = self.b.select(self.mask, values, identity)
        return values

    def _set_anchor(self, reduction: Operation, result: SSAValue) -> None:
        value = reduction.results[0]
        self.anchors[value] = (self.anchors[value][0], result)

    # ----- looped ----------------------------------------------------------

    def _looped(self, rows: _Rows) -> None:
        self.online = _online_sums(rows.reductions)
        self.centered = _centered_sums(rows.reductions, self.online)
        for level in _dependency_levels(rows.reductions, self.online, self.centered):
            self._reduce_in_one_loop(rows, level)
        row_outputs = [v for v in self.yielded if self._is_row_value(rows, v)]
        for number, value in enumerate(self.yielded):
            if value not in row_outputs:
                index = self._row_index(rows, value)
                self.write(self.value_at(value, index), number, index, None)
        if row_outputs:
            self._write_rows_in_one_loop(rows, row_outputs)

    def _reduce_in_one_loop(self, rows: _Rows, level: list[Operation]) -> None:
        """One loop over the rows accumulating the ``level`` reductions, which
        do not depend on one another, then their values."""
        inits: list[SSAValue] = []
        for reduction in level:
            inits.extend(self._accumulator_inits(reduction, rows.block))

        def body(
            lanes: SSAValue, mask: SSAValue | None, carried: list[SSAValue]
        ) -> list[SSAValue]:
            index = self._full_index(rows, lanes)
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
                    values = self.value_at(self.centered[reduction].values, index)
                    updated.extend(self._accumulate_welford(state, values, mask))
                    continue
                values = self._masked_operand(reduction, index)
                accumulated = self._accumulate(reduction, values, lanes, state)
                maxima[reduction] = (state[0], accumulated[0], values)
                updated.extend(accumulated)
            return updated

        results = self.loop_over(rows.extent, "BLOCK_R", rows.block, inits, body)
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

    def _write_rows_in_one_loop(self, rows: _Rows, outputs: list[SSAValue]) -> None:
        """A last loop over the rows writing the outputs of the rows' shape."""

        def write(
            lanes: SSAValue, mask: SSAValue | None, carried: list[SSAValue]
        ) -> list[SSAValue]:
            index = self._full_index(rows, lanes)
            for number, value in enumerate(self.yielded):
                if value in outputs:
                    self.write(self.value_at(value, index), number, index, mask)
            return []

        self.loop_over(rows.extent, "BLOCK_R", rows.block, [], write)

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
        self._set_anchor(reduction, b.create(loop.ReduceOp("sum", spread, 0)))

    def _state_size(self, reduction: Operation) -> int:
        """How many values a looped reduction carries: an argmax its best
        value and lane; a centred sum its count, mean and squares."""
        if reduction in self.centered:
            return 3
        return 2 if isinstance(reduction, g.ArgMaxOp) else 1

    def _accumulator_inits(self, reduction: Operation, block: int) -> list[SSAValue]:
        element = tensor_type(reduction.operands[0]).element_type
        if reduction in self.centered:
            return [self.b.splat(self.b.const(0, element), [block]) for _ in range(3)]
        kind = _reduction_kind(reduction)
        identity = self.b.splat(
            self.b.const(_identity(kind, element), element), [block]
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
            loop.ReduceOp("sum", self._zero_where_minus_inf(lanes, rescaled), 0)
        )
        element = loop.element_of(summed.type)
        nan = b.const(float("nan"), element)
        self._set_anchor(total, b.select(self._is_minus_inf(row_max), nan, summed))

    def _exp(self, value: SSAValue) -> SSAValue:
        return self.b.create(loop.UnaryOp("exp", value))

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
            self._set_anchor(reduction, b.create(loop.ReduceOp(kind, state[0], 0)))
            return
        best, where = state
        # The max propagates NaN: then the lanes holding a NaN are the
        # candidates, else those holding the max.
        top = b.create(loop.ReduceOp("max", best, 0))
        holds_top = b.compare("eq", best, top)
        if not isinstance(loop.element_of(best.type), IntegerType):
            holds_top = b.binary("or", holds_top, b.compare("ne", best, best))
        candidates = b.select(
            holds_top,
            where,
            b.index(I32_LIMIT if self.index_type == i32 else 2**63 - 1),
        )
        self._set_anchor(
            reduction, b.cast(b.create(loop.ReduceOp("min", candidates, 0)), element)
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


def _combine(kind: str) -> ElementwiseKind:
    """The loop.binary kind that combines two partial results of ``kind``."""
    combine = ReductionKind(kind).semantics.combine
    assert combine is not None, "argmax keeps an index as well"
    return combine


def _identity(kind: str, element: Attribute) -> int | float | bool:
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


def _online_sums(reductions: Sequence[Operation]) -> dict[Operation, Operation]:
    """The float sums of ``exp(a - broadcast(max(a)))`` among ``reductions``,
    each with the max it reads (the same reduced ``a``, the same axes): they
    accumulate online, in the max's loop."""
    maxima = {
        (r.operands[0], tuple(r.axis_list)): r
        for r in reductions
        if isinstance(r, g.ReduceOp) and r.kind.data.value == "max"
    }
    online: dict[Operation, Operation] = {}
    for total in reductions:
        if not isinstance(total, g.ReduceOp) or total.kind.data.value != "sum":
            continue
        exp = total.operands[0].owner
        if not isinstance(exp, g.ExpOp) or not isinstance(
            tensor_type(exp.input).element_type, AnyFloat
        ):
            continue
        shifted = exp.input.owner
        if not isinstance(shifted, g.SubOp):
            continue
        maximum = maxima.get((shifted.lhs, tuple(total.axis_list)))
        spread = shifted.rhs.owner
        if (
            maximum is not None
            and isinstance(spread, g.BroadcastOp)
            and spread.operands[0] == maximum.results[0]
        ):
            online[total] = maximum
    return online


@dataclass(frozen=True)
class _Centered:
    """A float ``sum((values - broadcast(center))**2)``, ``center`` a
    per-row value: the sum of squared deviations of ``values`` from it."""

    values: SSAValue
    center: SSAValue


def _centered_sums(
    reductions: Sequence[Operation], online: dict[Operation, Operation]
) -> dict[Operation, _Centered]:
    """The sums of squares about a per-row value (a variance's, about the
    mean) that Welford's lane-wise counts, means and squared deviations
    compute in an earlier loop than the centre's own: the loop reading
    ``values``, once the centre's reductions are done (layer norm's mean
    and variance in one loop)."""
    centered: dict[Operation, _Centered] = {}
    for total in reductions:
        form = _centered_form(total)
        if form is None:
            continue
        plain = _levels(reductions, online, centered)[total]
        centered[total] = form
        if _levels(reductions, online, centered)[total] >= plain:
            del centered[total]  # no loop saved
    return centered


def _centered_form(total: Operation) -> _Centered | None:
    if not isinstance(total, g.ReduceOp) or total.kind.data.value != "sum":
        return None
    square = total.operands[0].owner
    if not isinstance(square, g.MulOp) or square.lhs != square.rhs:
        return None
    deviation = square.lhs.owner
    if not isinstance(deviation, g.SubOp) or not isinstance(
        tensor_type(deviation.lhs).element_type, AnyFloat
    ):
        return None
    spread = deviation.rhs.owner
    if not isinstance(spread, g.BroadcastOp):
        return None
    center = spread.operands[0]
    if tuple(tensor_type(center).dims) not in RowStructure.of(total).reduced_shapes():
        return None
    return _Centered(deviation.lhs, center)


def _dependency_levels(
    reductions: Sequence[Operation],
    online: dict[Operation, Operation],
    centered: dict[Operation, _Centered],
) -> list[list[Operation]]:
    """Reductions grouped so that each group depends only on earlier ones:
    a group is one loop over the data."""
    depth = _levels(reductions, online, centered)
    levels: list[list[Operation]] = [[] for _ in range(max(depth.values()) + 1)]
    for reduction in reductions:
        levels[depth[reduction]].append(reduction)
    return levels


def _levels(
    reductions: Sequence[Operation],
    online: dict[Operation, Operation],
    centered: dict[Operation, _Centered],
) -> dict[Operation, int]:
    """The loop of each reduction: one after the last reduction it reads;
    an online sum in its max's (after it); a centred sum in the first loop
    that can read its values and, afterwards, evaluate its centre."""
    depth: dict[Operation, int] = {}

    def after(value: SSAValue) -> int:
        """The deepest loop of the reductions ``value`` reads (-1: none)."""
        owner = value.owner
        return max(
            (
                depth[r]
                for r in depth
                if owner is r
                or (isinstance(owner, Operation) and _depends_on(owner, r))
            ),
            default=-1,
        )

    for reduction in reductions:  # block order is topological
        if reduction in online:
            depth[reduction] = depth[online[reduction]]
        elif reduction in centered:
            form = centered[reduction]
            depth[reduction] = max(1 + after(form.values), after(form.center), 0)
        else:
            depth[reduction] = 1 + max(
                (depth[r] for r in depth if _depends_on(reduction, r)), default=-1
            )
    return depth


def _depends_on(op: Operation, earlier: Operation) -> bool:
    stack = list(op.operands)
    seen: set[SSAValue] = set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if owner is earlier:
            return True
        if isinstance(owner, Operation):
            stack.extend(owner.operands)
    return False
