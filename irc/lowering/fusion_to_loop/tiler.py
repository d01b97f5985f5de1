"""Evaluating a fusion kernel's graph values at index tiles.

:class:`KernelTiler` holds what the tiling of one ``fusion.kernel`` shares
whatever its kind, and builds the ``loop.kernel`` (:meth:`KernelTiler.tile`).
A kind's strategy (``pointwise``, ``reduction``, ``matmul``, ``attention``:
a subclass, one module each, registered for its kind in ``STRATEGIES``) sets up the iteration space in :meth:`KernelTiler.iterate` and
returns the grid. Its contract with this module:

- :meth:`KernelTiler.value_at` is the loop value of a graph value at an index
  (one index value per dim, tiles broadcasting) under the current ``mask``,
  computed once per value, index and mask in a scope (the kernel body, or
  the body of a loop made by :meth:`KernelTiler.for_chunks`, whose values
  stay inside). Kernel inputs are ``loop.read``s, elementwise ops keep the
  index, layout ops are the index maps of :mod:`.index_maps`;
- a reduction's or the matmul's result is an *anchor*: the strategy computes
  it and registers it with the one index at which it is valid (its row, its
  output tile); reading it elsewhere is an error;
- :meth:`KernelTiler.write_outputs` writes the kernel's yielded values;
  ``notes`` join the kernel's reason.

Index arithmetic is 64-bit unless the guards in scope prove every extent
the kernel touches below ``2**30`` (room for an offset plus a block).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from irc.dialects import fusion, loop, sym, tile
from irc.dialects import graph as g
from irc.dialects.kernel_kind import KindTable
from irc.dialects.tile import broadcast_tile_shapes
from irc.errors import IrcError
from irc.lowering.fusion_to_loop.builder import LoopBuilder, indices_fit
from irc.lowering.fusion_to_loop.index_maps import LAYOUT_RULES, Index, tensor_type
from irc.shapes import SymExpr

if TYPE_CHECKING:
    from irc.lowering.fusion_to_loop import TilePass

_CacheKey = tuple[SSAValue, Index, SSAValue | None]

#: How ``tile`` lowers a kernel of a kind: the tiler of the kernel under the
#: pass's options (a ``KernelTiler`` subclass, or a function choosing one).
Strategy = Callable[[fusion.KernelOp, "TilePass"], "KernelTiler"]

#: The strategy of each kernel kind (``irc.dialects.kernel_kind``).
STRATEGIES: KindTable[Strategy] = KindTable("tiling strategy")


class KernelTiler:
    """Builds the ``loop.kernel`` of one ``fusion.kernel``; a subclass per
    kernel kind defines :meth:`iterate`."""

    def __init__(self, kernel: fusion.KernelOp, options: TilePass):
        self.kernel = kernel
        self.options = options
        self.facts = sym.facts_in_scope(kernel)
        self.index_type: IntegerType = i32 if self.fits_i32(kernel) else i64
        self.body = Block(arg_types=[v.type for v in kernel.inputs])
        self.b = LoopBuilder(self.body, self.index_type)
        # One value cache per scope: the body, then each enclosing loop.
        self.scopes: list[dict[_CacheKey, SSAValue]] = [{}]
        self.notes: list[str] = []
        self.mask: SSAValue | None = None
        #: Whether reads keep every factor of the mask: a matmul's operands
        #: are summed over K, so their masked lanes must read 0 even where
        #: an operand is broadcast along K (see ``read_mask``).
        self.whole_mask_reads = False
        #: Whether a read inside a loop whose index and mask are the kernel
        #: body's is made once, in the body, before the loop (a row kernel
        #: walking several rows: a weight read once per program). Only for
        #: kernels whose loops never write what they read.
        self.hoist_invariant_reads = False
        # What reductions and the matmul evaluate to, with the index at
        # which they are valid (the kernel's current row / output tile).
        self.anchors: dict[SSAValue, tuple[Index, SSAValue | None]] = {}

    # ----- entry ---------------------------------------------------------

    def iterate(self) -> list[SymExpr]:
        """Build the body for this kind's iteration space; the grid."""
        raise NotImplementedError

    def tile(self) -> loop.KernelOp:
        grid = self.iterate()
        self.b.finish()
        reason = self.kernel.reason_text
        if self.notes:
            reason = (
                f"{reason}; {'; '.join(self.notes)}"
                if reason
                else "; ".join(self.notes)
            )
        return loop.KernelOp(
            self.kernel.kernel_name,
            self.kernel.kind_name,
            list(self.kernel.inputs),
            [tensor_type(v) for v in self.kernel.outputs],
            grid,
            self.b.tiles,
            self.b.symbols,
            Region(self.body),
            reason,
        )

    @property
    def yielded(self) -> list[SSAValue]:
        terminator = self.kernel.body.block.last_op
        assert terminator is not None
        return list(terminator.operands)

    def fits_i32(self, kernel: fusion.KernelOp) -> bool:
        """Whether every extent ``kernel`` touches provably fits in i32."""
        values = [*kernel.inputs, *kernel.outputs]
        for op in kernel.body.walk():
            values.extend(op.results)
        return indices_fit(
            self.facts,
            (
                sym.product(tensor_type(v).dims)
                for v in values
                if isinstance(v.type, g.TensorType)
            ),
        )

    # ----- scoped loops --------------------------------------------------

    def for_chunks(
        self,
        extent: SymExpr | SSAValue,
        size: int | SSAValue,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
        start: int | SSAValue = 0,
    ) -> list[SSAValue]:
        """``scf.for`` from ``start`` to ``extent`` in steps of ``size``,
        carrying ``inits``: ``body(start, carried)`` builds the next values
        in a scope of its own (values computed inside stay inside; the mask
        is restored after)."""

        def scoped(start: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            with self.scope():
                return body(start, carried)

        return self.b.for_loop(extent, size, inits, scoped, start)

    @contextmanager
    def scope(self) -> Iterator[None]:
        """A scope of values for a region being built (a loop's body, a
        branch): what is computed inside stays inside; the mask is restored
        after."""
        self.scopes.append({})
        saved_mask = self.mask
        try:
            yield
        finally:
            self.mask = saved_mask
            self.scopes.pop()

    def loop_over(
        self,
        extent: SymExpr,
        block: str,
        size: int,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, SSAValue | None, list[SSAValue]], list[SSAValue]],
        start: int | SSAValue = 0,
        step: SSAValue | None = None,
    ) -> list[SSAValue]:
        """``for_chunks`` over the lanes of 1-D tiles of ``block`` (``size``
        lanes, in steps of ``step`` when the launch chooses the block's
        size) from lane ``start``: ``body(lanes, mask, carried)`` runs under
        the lanes' bounds mask."""

        def chunk(start: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            lanes = self.b.lanes(start, block, size)
            self.mask = self.b.in_bounds(lanes, extent, size)
            return body(lanes, self.mask, carried)

        return self.for_chunks(
            extent, size if step is None else step, inits, chunk, start
        )

    # ----- evaluation of graph values at an index ---------------------------

    def value_at(self, value: SSAValue, index: Index) -> SSAValue:
        """The loop value of graph ``value`` at ``index`` under the current mask."""
        key = (value, index, self.mask)
        for scope in reversed(self.scopes):
            if key in scope:
                return scope[key]
        result = self._compute(value, index)
        self.scopes[-1][key] = result
        return result

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        b = self.b
        if isinstance(value, BlockArgument):
            return self.read(value, self.body.args[value.index], index)
        if value in self.anchors:
            return self._anchor_at(value, index)
        op = value.owner
        assert isinstance(op, Operation)
        element = tensor_type(value).element_type
        if isinstance(op, g.ConstantOp):
            if not op.is_splat:
                raise IrcError(
                    f"tile: dense constant inside kernel {self.kernel.kernel_name}"
                )
            return b.const(op.literal().item(), element)
        if isinstance(op, g.UnaryOp):
            return b.create(tile.UnaryOp(op.KIND, self.value_at(op.input, index)))
        if isinstance(op, g.BinaryOp):
            lhs, rhs = (self.value_at(o, index) for o in op.operands)
            return b.binary(op.KIND, lhs, rhs)
        if isinstance(op, g.CompareOp):
            lhs, rhs = (self.value_at(o, index) for o in op.operands)
            return b.compare(op.predicate.data.value, lhs, rhs)
        if isinstance(op, g.SelectOp):
            c, x, y = (self.value_at(o, index) for o in op.operands)
            return b.select(c, x, y)
        if isinstance(op, g.CastOp):
            return b.cast(self.value_at(op.operands[0], index), element)
        if isinstance(op, g.IotaOp):
            return b.cast(index[op.axis.value.data], element)
        if isinstance(op, g.DimOp):
            # A dim is data, not an index: it may not fit the index type
            # (i32 where the guards bound every extent).
            return b.cast(b.size(op.value.data, i64), element)
        layout = LAYOUT_RULES.get(type(op))
        if layout is not None:
            return layout(self, op, index)
        raise IrcError(
            f"tile: {op.name} cannot be evaluated inside kernel "
            f"{self.kernel.kernel_name} ({self.kernel.kind_name})"
        )

    def read(self, value: SSAValue, tensor: SSAValue, index: Index) -> SSAValue:
        """``loop.read`` of ``tensor`` (what kernel input ``value`` is) at
        ``index`` under the current mask; with ``hoist_invariant_reads``,
        made once in the kernel body when its index and mask are the body's
        (a weight read before the loop over a program's rows)."""
        b = self.b
        mask = self.read_mask(index)
        if self.hoist_invariant_reads and self._in_body(*index, mask):
            with b.at_end(self.body):
                read = b.create(loop.ReadOp(tensor, list(index), mask))
            self.scopes[0][(value, index, self.mask)] = read
            return read
        return b.create(loop.ReadOp(tensor, list(index), mask))

    def dot_operand(
        self, value: SSAValue, index: Index, mask: SSAValue | None
    ) -> SSAValue:
        """Graph ``value`` at ``index`` as an operand of ``tile.dot``, which
        sums masked lanes too: they must hold 0. Reads load under the whole
        ``mask`` (masked lanes read 0); anything computed from them but a
        cast (a prologue's scaling ``x / c``, whose constant is ``c`` in
        every lane) is selected to 0 there, lest ``0 / c`` lanes of a
        constant masked to 0 give NaN, which 0 times NaN keeps."""
        self.mask = mask
        self.whole_mask_reads = True
        operand = self.value_at(value, index)
        self.whole_mask_reads = False
        if mask is None or _zero_where_masked(operand):
            return operand
        zero = self.b.const(0, loop.element_of(operand.type))
        return self.b.select(mask, operand, zero)

    def _in_body(self, *values: SSAValue | None) -> bool:
        """Whether every one of ``values`` is defined in the kernel body
        (not in a loop) or hoisted there."""
        return all(
            value is None or self.b.is_hoisted(value) or _block_of(value) is self.body
            for value in values
        )

    def read_mask(self, index: Index) -> SSAValue | None:
        """The current mask without the factors (of its conjunction) that
        vary along an axis the read's ``index`` does not: a read of a
        ``[1, BLOCK_C]`` row of a broadcast operand under a ``[BLOCK_R,
        BLOCK_C]`` mask loads ``BLOCK_C`` lanes, not the whole block. Every
        factor that bounds an index is kept (it varies with that index);
        a dropped one would only have zeroed lanes of a value broadcast
        along its axis, which the kept masks select away or do not store
        (reductions select their identity on masked lanes). A matmul's
        operands are the exception: its dot sums masked lanes, which must
        read 0 (``whole_mask_reads``)."""
        if self.mask is None or self.whole_mask_reads:
            return self.mask
        spanned = broadcast_tile_shapes(*(loop.shape_of(i.type) for i in index))
        factors = _conjuncts(self.mask)
        kept = [f for f in factors if _varies_within(loop.shape_of(f.type), spanned)]
        if len(kept) == len(factors):
            return self.mask
        mask: SSAValue | None = None
        for factor in kept:
            mask = self.b.both(mask, factor)
        return mask

    def _anchor_at(self, value: SSAValue, index: Index) -> SSAValue:
        """A reduction's or the matmul's value, valid at one index only."""
        valid, result = self.anchors[value]
        if result is None:
            raise IrcError(
                f"tile: kernel {self.kernel.kernel_name} uses {value.owner.name} "
                "before it is computed"
            )
        if tuple(index) != tuple(valid):
            raise IrcError(
                f"tile: kernel {self.kernel.kernel_name} reads {value.owner.name} "
                "away from the row or tile that computes it; the fusion pass "
                "should not have formed this kernel"
            )
        return result

    # ----- outputs -----------------------------------------------------------

    def write(
        self, value: SSAValue, output: int, index: Index, mask: SSAValue | None
    ) -> None:
        """``loop.write`` of loop ``value`` to output number ``output``."""
        self.b.insert(loop.WriteOp(value, output, list(index), mask))

    def write_outputs(
        self,
        index_of: Callable[[SSAValue], Index],
        mask_of: Callable[[SSAValue], SSAValue | None],
    ) -> None:
        """Write every yielded value at its index under its mask."""
        for number, value in enumerate(self.yielded):
            index = index_of(value)
            saved_mask = self.mask
            self.mask = mask_of(value)
            self.write(self.value_at(value, index), number, index, self.mask)
            self.mask = saved_mask


def _zero_where_masked(value: SSAValue) -> bool:
    """Whether ``value`` is 0 in the lanes its mask excludes: a masked read,
    or a cast of one."""
    op = value.owner
    if isinstance(op, tile.CastOp):
        return _zero_where_masked(op.input)
    return isinstance(op, loop.ReadOp) and op.mask is not None


def _block_of(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    return value.owner.parent_block()


def _conjuncts(mask: SSAValue) -> list[SSAValue]:
    """The factors of a mask built by ``and``s."""
    op = mask.owner
    if isinstance(op, tile.BinaryOp) and op.kind.data.name == "and":
        return [f for operand in op.operands for f in _conjuncts(operand)]
    return [mask]


def _varies_within(shape: tuple[int, ...], spanned: tuple[int, ...]) -> bool:
    """Whether a tile of ``shape`` is constant along every axis along which
    a tile of shape ``spanned`` is (right-aligned, as tiles broadcast)."""
    rank = max(len(shape), len(spanned))
    shape = (1,) * (rank - len(shape)) + tuple(shape)
    spanned = (1,) * (rank - len(spanned)) + tuple(spanned)
    return all(mine == 1 or theirs > 1 for mine, theirs in zip(shape, spanned))
