"""The tiler's IR builder: loop-level values, constants and index arithmetic.

``LoopBuilder`` builds the body of one ``loop.kernel`` with xDSL's
``Builder``: every op is first offered to its folder, constants, sizes and
tile sizes are hoisted to the start of the body, and *windows* (index
values ``lanes * stride + offset``) are one value each, so that index maps
moving a window to the same place share one read.

See docs/lowering.md, section "loop: tiled loop nests" (the paragraph on
index arithmetic and folders, and the pointwise-by-pieces item).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, HasFolder

from irc.dialects import loop, sym, tile
from irc.shapes import Facts, SymExpr, as_expr

#: Largest index that 32-bit index arithmetic may hold.
I32_LIMIT = 2**31 - 1


def indices_fit(facts: Facts, extents: Iterable[SymExpr], width: int = 32) -> bool:
    """Whether ``width``-bit index arithmetic is safe for a kernel whose
    tensors span ``extents`` elements: each provably at most a quarter of
    the type's range (``2**30 - 1`` for i32) under ``facts``, which leaves
    room for an offset plus a block below the largest value (masked-off
    lanes run up to a block past the end). The one rule of index widths:
    the tiler chooses i32 by it, and ``bufferize`` keeps a hand-written
    kernel's narrow offsets only where it holds."""
    if width < 8:  # no room for any index worth the name
        return False
    limit = SymExpr.const(2 ** (width - 2) - 1)
    return all(facts.prove_le(extent, limit) for extent in extents)


def next_power_of_two(n: int) -> int:
    """The least power of two ``>= n`` (1 for ``n <= 1``)."""
    return 1 << max(0, (n - 1).bit_length())


@dataclass(frozen=True)
class Window:
    """An index value ``lanes * stride + offset`` whose ``lanes`` lie in
    ``[0, extent)``."""

    lanes: SSAValue
    offset: SymExpr
    extent: SymExpr
    stride: int = 1

    @property
    def last(self) -> SymExpr:
        """The greatest index of the window (``stride`` is positive)."""
        return self.offset + (self.extent - 1) * self.stride


def constant_int(value: SSAValue) -> int | None:
    """The value of a constant integer index, else None."""
    attr = ConstantLike.get_constant_value(value)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


class LoopBuilder:
    """Builds loop-level IR into ``body``. Its contract:

    - every op goes through :meth:`insert` (or :meth:`create`, for an op of
      one result), which first tries the op's folder (xDSL's ``HasFolder``
      trait, which the loop dialect's ``HasFolderInterface`` ops carry: see
      :mod:`irc.dialects.loop`). An op that folds is erased, never inserted:
      a fold to one of its operands gives that operand, a fold to an
      attribute gives the hoisted constant of that value. Otherwise the op
      is inserted at the insertion point (the end of the current block; see
      :meth:`at_end`). The index identities (``+ 0``, ``* 1``, ``floordiv
      1``, constants added or multiplied...) are therefore the loop
      dialect's folds, the same under ``canonicalize``;
    - constants (:meth:`const`), symbolic sizes (:meth:`size`) and tile
      sizes (:meth:`block_size`) are hoisted: one op per value and type, per
      expression or per tile, placed by :meth:`finish` at the start of the
      kernel body in the order first asked for, those that ended up used
      only;
    - index values have one integer type, ``index_type``; the builder
      records the block sizes its ranges use (``tiles``) and the symbols its
      sizes mention (``symbols``), which the kernel declares.

    A scalar constant where a fold gives ``0`` for a tile (``lanes * 0``) is
    the same value wherever index values meet, broadcasting arithmetic.

    *Windows* (:meth:`window`) are index values known to be ``lanes * stride
    + offset`` with ``lanes`` in ``[0, extent)``: one value per lanes,
    stride and offset, so that two index maps that move a window to the same
    place (a slice's offset and stride, a concat's start, a reshape's
    linearisation) give the same value, and the tiler's cache reads the
    tensor there once. :meth:`linearize` of one window and constants is a
    window, and :meth:`delinearize` of a window that steps along one dim is
    a window there and constants elsewhere. The piecewise pointwise form
    makes them, in the kernel body only (never inside a loop, whose values
    stay inside).
    """

    def __init__(self, body: Block, index_type: IntegerType):
        self.body = body
        self.index_type = index_type
        self.builder = Builder(InsertPoint.at_end(body))
        self.tiles: dict[str, int] = {}
        self.symbols: set[str] = set()
        # Hoisted ops wait here, in the order made, until ``finish``.
        self._hoisted = Block()
        self._hoist = Builder(InsertPoint.at_end(self._hoisted))
        self._constants: dict[tuple[int | str, Attribute], SSAValue] = {}
        self._sizes: dict[tuple[SymExpr, Attribute], SSAValue] = {}
        self._windows: dict[SSAValue, Window] = {}
        self._window_values: dict[tuple[SSAValue, SymExpr, int], SSAValue] = {}
        self._scaled_lanes: dict[tuple[SSAValue, int], SSAValue] = {}
        self._block_sizes: dict[str, SSAValue] = {}
        # What linearize made each linear index of: delinearize gives the
        # coordinates back (a matmul tile stored through a join of axes).
        self._linearized: dict[
            SSAValue, tuple[tuple[SSAValue, ...], tuple[SymExpr, ...]]
        ] = {}

    # ----- inserting, with folding ------------------------------------------

    def insert(self, op: Operation) -> Sequence[SSAValue]:
        """``op``'s results, or what its folder replaces them with."""
        folded = self._fold(op)
        if folded is None:
            self.builder.insert(op)
            return op.results
        op.erase()
        return folded

    def create(self, op: Operation) -> SSAValue:
        """:meth:`insert` for an op of one result: that result."""
        (result,) = self.insert(op)
        return result

    def _fold(self, op: Operation) -> list[SSAValue] | None:
        """The values of ``op``'s folder, attributes as hoisted constants.
        Constants are not folded (they are what folds materialise to)."""
        trait = op.get_trait(HasFolder)
        if trait is None or op.has_trait(ConstantLike):
            return None
        folded = trait.fold(op)
        if folded is None:
            return None
        values: list[SSAValue] = []
        for value in folded:
            if isinstance(value, SSAValue):
                values.append(value)
            elif isinstance(value, IntegerAttr | FloatAttr):
                values.append(self.const(value.value.data, value.type))
            else:
                return None
        return values

    @contextmanager
    def at_end(self, block: Block) -> Iterator[None]:
        """Insert at the end of ``block`` for the ``with`` body."""
        saved = self.builder.insertion_point
        self.builder.insertion_point = InsertPoint.at_end(block)
        try:
            yield
        finally:
            self.builder.insertion_point = saved

    def finish(self) -> None:
        """Place the hoisted constants and sizes that are used at the start
        of the body; drop the others."""
        used: list[Operation] = []
        for op in list(self._hoisted.ops):
            op.detach()
            if op.results[0].uses:
                used.append(op)
            else:
                op.erase()
        Rewriter.insert_op(used, InsertPoint.at_start(self.body))

    # ----- hoisted values ------------------------------------------------------

    def const(self, value: int | float | bool, element_type: Attribute) -> SSAValue:
        """A hoisted scalar constant (one per value and type: floats keyed by
        their ``repr``, so that ``-0.0`` is not ``0.0`` and a NaN is itself)."""
        key = (
            int(value) if isinstance(element_type, IntegerType) else repr(float(value)),
            element_type,
        )
        if key not in self._constants:
            if isinstance(element_type, IntegerType):
                attr: IntegerAttr | FloatAttr = IntegerAttr(int(value), element_type)
            else:
                attr = FloatAttr(float(value), element_type)  # type: ignore[arg-type]
            self._constants[key] = self._hoist.insert(tile.ConstantOp(attr)).result
        return self._constants[key]

    def index(self, value: int) -> SSAValue:
        """A hoisted constant of the index type."""
        return self.const(value, self.index_type)

    def is_hoisted(self, value: SSAValue) -> bool:
        """Whether ``value`` is a hoisted constant or size (placed at the
        start of the kernel body by ``finish``)."""
        return isinstance(value.owner, Operation) and (
            value.owner.parent_block() is self._hoisted
        )

    def _index_value(self, value: int | SSAValue) -> SSAValue:
        return value if isinstance(value, SSAValue) else self.index(value)

    def block_size(self, block: str) -> SSAValue:
        """The size of tile ``block`` as an index value (``tile.block_size``:
        what the launch chose, where the kernel lets it choose; hoisted, one
        op per tile)."""
        if block not in self._block_sizes:
            op = self._hoist.insert(tile.BlockSizeOp(block, self.index_type))
            self._block_sizes[block] = op.result
        return self._block_sizes[block]

    def size(
        self, expr: SymExpr | int, value_type: Attribute | None = None
    ) -> SSAValue:
        """A symbolic size as a value of ``value_type``, the index type unless
        given (hoisted, one op per expr and type)."""
        expr = as_expr(expr)
        value_type = value_type or self.index_type
        if expr.constant is not None:
            return self.const(expr.constant, value_type)
        key = (expr, value_type)
        if key not in self._sizes:
            op = self._hoist.insert(tile.SizeOp(expr, value_type))
            self._sizes[key] = op.result
            self.symbols |= expr.symbols
        return self._sizes[key]

    # ----- tile compute ----------------------------------------------------------

    def binary(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """``tile.binary`` (index arithmetic folds through its folder)."""
        return self.create(tile.BinaryOp(kind, lhs, rhs))

    def compare(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.create(tile.CompareOp(kind, lhs, rhs))

    def both(self, lhs: SSAValue | None, rhs: SSAValue | None) -> SSAValue | None:
        """The conjunction of two optional masks."""
        if lhs is None or rhs is None:
            return rhs if lhs is None else lhs
        return self.binary("and", lhs, rhs)

    def cast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """``value`` as ``element_type`` (a cast to its own type folds away)."""
        return self.create(tile.CastOp(value, element_type))

    def splat(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self.create(tile.SplatOp(value, loop.TileType(shape, value.type)))

    def select(self, condition: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.create(tile.SelectOp(condition, lhs, rhs))

    def program_id(self, axis: int) -> SSAValue:
        return self.create(tile.ProgramIdOp(axis, self.index_type))

    # ----- index arithmetic --------------------------------------------------

    def range(self, block: str, size: int, axis: int = 0, rank: int = 1) -> SSAValue:
        """``0 .. size-1`` along ``axis`` of a rank-``rank`` tile; ``block``
        names the size (a tile of the kernel)."""
        self.tiles[block] = size
        shape = [1] * rank
        shape[axis] = size
        return self.create(tile.RangeOp(block, loop.TileType(shape, self.index_type)))

    def lanes(
        self, start: SSAValue, block: str, size: int, axis: int = 0, rank: int = 1
    ) -> SSAValue:
        """``start + range(block)``: the indices a tile covers."""
        return self.binary("add", start, self.range(block, size, axis, rank))

    def in_bounds(
        self, lanes: SSAValue, extent: SymExpr, block: int
    ) -> SSAValue | None:
        """``lanes < extent`` for a tile starting at a multiple of ``block``,
        or None where no lane can be out of bounds (every tile is full)."""
        if (
            extent.constant is not None
            and extent.constant > 0
            and extent.constant % block == 0
        ):
            return None
        return self.compare("lt", lanes, self.size(extent))

    def window(
        self, lanes: SSAValue, offset: SymExpr, extent: SymExpr, stride: int = 1
    ) -> SSAValue:
        """``lanes * stride + offset`` for ``lanes`` in ``[0, extent)`` and a
        positive ``stride``: one value per lanes, stride and offset (offsets
        simplified by the caller's facts, so that equal ones are one
        expression), known to :meth:`window_of`."""
        key = (lanes, offset, stride)
        if key not in self._window_values:
            if (lanes, stride) not in self._scaled_lanes:
                scaled = self.binary("mul", lanes, self.index(stride))
                self._scaled_lanes[lanes, stride] = scaled
            scaled = self._scaled_lanes[lanes, stride]
            value = self.binary("add", scaled, self.size(offset))
            self._window_values[key] = value
            self._windows[value] = Window(lanes, offset, extent, stride)
        return self._window_values[key]

    def window_of(self, index: SSAValue) -> Window | None:
        """The window ``index`` is, if :meth:`window` made it."""
        return self._windows.get(index)

    def _linearized_window(
        self, coords: Sequence[SSAValue], strides: Sequence[SymExpr]
    ) -> SSAValue | None:
        """``sum(coords * strides)`` as a window, if one coord is a window,
        the others constants, and its stride static; else None."""
        found: tuple[Window, int] | None = None
        offset = SymExpr.const(0)
        for coord, stride in zip(coords, strides):
            window, constant = self.window_of(coord), constant_int(coord)
            if window is not None and found is None and stride.constant is not None:
                found = window, stride.constant
            elif constant is not None:
                offset = offset + stride * constant
            else:
                return None
        if found is None:
            return None
        window, stride = found
        offset = window.offset * stride + offset
        return self.window(window.lanes, offset, window.extent, window.stride * stride)

    def _delinearized_window(
        self, linear: SSAValue, dims: Sequence[SymExpr]
    ) -> list[SSAValue] | None:
        """The coordinates of a window stepping along one of static
        ``dims`` (its stride that dim's): a window along it and constants
        elsewhere, if the window stays inside the dim; else None."""
        window = self.window_of(linear)
        sizes = [d.constant for d in dims]
        if window is None or None in sizes or window.extent.constant is None:
            return None
        offset = window.offset.constant
        strides = [math.prod(sizes[k + 1 :]) for k in range(len(sizes))]  # type: ignore[arg-type]
        if offset is None or offset < 0 or window.stride not in strides:
            return None
        axis = strides.index(window.stride)
        along, rest = divmod(offset, window.stride)
        if along + window.extent.constant > sizes[axis]:  # type: ignore[operator]
            return None
        inner: list[SSAValue] = []
        for stride in strides[axis + 1 :]:
            digit, rest = divmod(rest, stride)
            inner.append(self.index(digit))
        moved = self.window(window.lanes, SymExpr.const(along), window.extent)
        return [*(self.index(0) for _ in range(axis)), moved, *inner]

    def delinearize(self, linear: SSAValue, dims: Sequence[SymExpr]) -> list[SSAValue]:
        """Row-major coordinates of ``linear`` in ``dims`` (size-1 dims are 0;
        the outermost dim needs no remainder, ``linear`` being in bounds; a
        window stepping along one dim divides nothing)."""
        made = self._linearized.get(linear)
        if made is not None and made[1] == tuple(dims):
            return list(made[0])
        windowed = self._delinearized_window(linear, dims)
        if windowed is not None:
            return windowed
        coords: list[SSAValue] = []
        stride = SymExpr.const(1)
        outermost = next((k for k, d in enumerate(dims) if d != 1), len(dims))
        for axis in reversed(range(len(dims))):
            dim = dims[axis]
            if dim == 1:
                coords.append(self.index(0))
                continue
            coord = self.binary("floordiv", linear, self.size(stride))
            if axis != outermost:
                coord = self.binary("rem", coord, self.size(dim))
            coords.append(coord)
            stride = stride * dim
        return coords[::-1]

    def linearize(
        self, coords: Sequence[SSAValue], dims: Sequence[SymExpr]
    ) -> SSAValue:
        """The row-major linear index of ``coords`` in ``dims`` (a window,
        for one window and constants)."""
        strides = [sym.product(dims[k + 1 :]) for k in range(len(dims))]
        linear = self._linearized_window(coords, strides)
        if linear is None:
            linear = _digits_of(coords, dims)
        if linear is not None:
            self._linearized.setdefault(linear, (tuple(coords), tuple(dims)))
            return linear
        linear = self.index(0)
        stride = SymExpr.const(1)
        for coord, dim in zip(reversed(coords), reversed(dims)):
            linear = self.binary(
                "add", linear, self.binary("mul", coord, self.size(stride))
            )
            stride = stride * dim
        self._linearized.setdefault(linear, (tuple(coords), tuple(dims)))
        return linear

    # ----- loops ---------------------------------------------------------------

    def for_loop(
        self,
        extent: SymExpr | SSAValue,
        step: int | SSAValue,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
        first: int | SSAValue = 0,
    ) -> list[SSAValue]:
        """``scf.for`` from ``first`` to ``extent`` (a size, or an index value
        the kernel computed) in steps of ``step``, carrying ``inits``:
        ``body(start, carried)`` builds the loop body (inserted in the
        loop's block) and returns the values it yields."""
        block = Block(arg_types=[self.index_type, *(v.type for v in inits)])
        start, *carried = block.args
        with self.at_end(block):
            self.insert(scf.YieldOp(*body(start, list(carried))))
        op = scf.ForOp(
            self._index_value(first),
            extent if isinstance(extent, SSAValue) else self.size(extent),
            self._index_value(step),
            list(inits),
            Region(block),
        )
        return list(self.insert(op))

    def while_loop(
        self,
        inits: Sequence[SSAValue],
        condition: Callable[[list[SSAValue]], SSAValue],
        body: Callable[[list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``scf.while`` carrying ``inits``: ``condition(carried)`` builds
        the test (an ``i1`` scalar) in the loop's first region,
        ``body(carried)`` the next values in its second."""
        types = [v.type for v in inits]
        before = Block(arg_types=types)
        with self.at_end(before):
            holds = condition(list(before.args))
            self.insert(scf.ConditionOp(holds, *before.args))
        after = Block(arg_types=types)
        with self.at_end(after):
            self.insert(scf.YieldOp(*body(list(after.args))))
        return list(self.insert(scf.WhileOp(list(inits), types, [before], [after])))

    def if_else(
        self,
        condition: SSAValue,
        then: Callable[[], list[SSAValue]],
        otherwise: Callable[[], list[SSAValue]],
    ) -> list[SSAValue]:
        """``scf.if`` on ``condition`` (an ``i1`` scalar): ``then()`` and
        ``otherwise()`` build the branches and return the values they yield,
        of the same types."""
        branches = []
        yielded_types: list[list[Attribute]] = []
        for build in (then, otherwise):
            block = Block()
            with self.at_end(block):
                values = build()
                self.insert(scf.YieldOp(*values))
            branches.append(block)
            yielded_types.append([v.type for v in values])
        assert yielded_types[0] == yielded_types[1], yielded_types
        op = scf.IfOp(condition, yielded_types[0], [branches[0]], [branches[1]])
        return list(self.insert(op))


def _digits_of(coords: Sequence[SSAValue], dims: Sequence[SymExpr]) -> SSAValue | None:
    """``x`` when ``coords`` are the row-major coordinates of ``x`` in
    ``dims`` as :meth:`LoopBuilder.delinearize` writes them: linearizing
    them again gives ``x`` itself, which a value anchored at ``x`` (a
    matmul's result tile) needs to be read there."""
    base: SSAValue | None = None
    stride = SymExpr.const(1)
    outermost = next((k for k, d in enumerate(dims) if d != 1), len(dims))
    for axis in reversed(range(len(dims))):
        if dims[axis] == 1:
            if constant_int(coords[axis]) != 0:
                return None
            continue
        digit = tile.Digit.of(coords[axis])
        expected = None if axis == outermost else dims[axis]
        if (
            (base is not None and digit.base is not base)
            or digit.divisor != stride
            or digit.modulus != expected
        ):
            return None
        base = digit.base
        stride = stride * dims[axis]
    return base
