"""The tiler's IR builder: loop-level values, constants and index arithmetic.

A :class:`LoopBuilder` builds the body of one ``loop.kernel`` with xDSL's
:class:`~xdsl.builder.Builder`. Its contract:

- every op goes through :meth:`LoopBuilder.insert` (or :meth:`create`, for
  an op of one result), which first tries the op's folder (xDSL's
  ``HasFolder`` trait, which the loop dialect's ``HasFolderInterface`` ops
  carry: see :mod:`irc.dialects.loop`). An op that folds is erased, never
  inserted: a fold to one of its operands gives that operand, a fold to an
  attribute gives the hoisted constant of that value. Otherwise the op is
  inserted at the insertion point (the end of the current block; see
  :meth:`LoopBuilder.at_end`). The index identities (``+ 0``, ``* 1``,
  ``floordiv 1``, constants added or multiplied...) are therefore the loop
  dialect's folds, the same under ``canonicalize``;
- constants (:meth:`LoopBuilder.const`) and symbolic sizes
  (:meth:`LoopBuilder.size`) are hoisted: one op per value and type, or per
  expression, placed by :meth:`LoopBuilder.finish` at the start of the
  kernel body in the order first asked for, those that ended up used only;
- index values have one integer type, ``index_type``; the builder records
  the block sizes its ranges use (``tiles``) and the symbols its sizes
  mention (``symbols``), which the kernel declares.

A scalar constant where a fold gives ``0`` for a tile (``lanes * 0``) is the
same value wherever index values meet, broadcasting arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.builder import Builder
from xdsl.dialects import scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, HasFolder

from irc.dialects import loop
from irc.shapes import SymExpr, as_expr

#: Largest index that 32-bit index arithmetic may hold.
I32_LIMIT = 2**31 - 1


def next_power_of_two(n: int) -> int:
    """The least power of two ``>= n`` (1 for ``n <= 1``)."""
    return 1 << max(0, (n - 1).bit_length())


class LoopBuilder:
    """Builds loop-level IR into ``body`` (see the module docstring)."""

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
            self._constants[key] = self._hoist.insert(loop.ConstantOp(attr)).result
        return self._constants[key]

    def index(self, value: int) -> SSAValue:
        """A hoisted constant of the index type."""
        return self.const(value, self.index_type)

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
            op = self._hoist.insert(loop.SizeOp(expr, value_type))
            self._sizes[key] = op.result
            self.symbols |= expr.symbols
        return self._sizes[key]

    # ----- tile compute ----------------------------------------------------------

    def binary(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """``loop.binary`` (index arithmetic folds through its folder)."""
        return self.create(loop.BinaryOp(kind, lhs, rhs))

    def compare(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.create(loop.CompareOp(kind, lhs, rhs))

    def both(self, lhs: SSAValue | None, rhs: SSAValue | None) -> SSAValue | None:
        """The conjunction of two optional masks."""
        if lhs is None or rhs is None:
            return rhs if lhs is None else lhs
        return self.binary("and", lhs, rhs)

    def cast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """``value`` as ``element_type`` (a cast to its own type folds away)."""
        return self.create(loop.CastOp(value, element_type))

    def splat(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        return self.create(loop.SplatOp(value, shape))

    def select(self, condition: SSAValue, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.create(loop.SelectOp(condition, lhs, rhs))

    def program_id(self, axis: int) -> SSAValue:
        return self.create(loop.ProgramIdOp(axis, self.index_type))

    # ----- index arithmetic --------------------------------------------------

    def range(self, block: str, size: int, axis: int = 0, rank: int = 1) -> SSAValue:
        """``0 .. size-1`` along ``axis`` of a rank-``rank`` tile; ``block``
        names the size (a tile of the kernel)."""
        self.tiles[block] = size
        shape = [1] * rank
        shape[axis] = size
        return self.create(loop.RangeOp(block, shape, self.index_type))

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

    def delinearize(self, linear: SSAValue, dims: Sequence[SymExpr]) -> list[SSAValue]:
        """Row-major coordinates of ``linear`` in ``dims`` (size-1 dims are 0;
        the outermost dim needs no remainder, ``linear`` being in bounds)."""
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
        """The row-major linear index of ``coords`` in ``dims``."""
        linear = self.index(0)
        stride = SymExpr.const(1)
        for coord, dim in zip(reversed(coords), reversed(dims)):
            linear = self.binary(
                "add", linear, self.binary("mul", coord, self.size(stride))
            )
            stride = stride * dim
        return linear

    # ----- loops ---------------------------------------------------------------

    def for_loop(
        self,
        extent: SymExpr | SSAValue,
        step: int,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``scf.for`` from 0 to ``extent`` (a size, or an index value the
        kernel computed) in steps of ``step``, carrying ``inits``:
        ``body(start, carried)`` builds the loop body (inserted in the
        loop's block) and returns the values it yields."""
        block = Block(arg_types=[self.index_type, *(v.type for v in inits)])
        start, *carried = block.args
        with self.at_end(block):
            self.insert(scf.YieldOp(*body(start, list(carried))))
        op = scf.ForOp(
            self.index(0),
            extent if isinstance(extent, SSAValue) else self.size(extent),
            self.index(step),
            list(inits),
            Region(block),
        )
        return list(self.insert(op))
