"""``tile``: each fusion kernel becomes a tiled loop nest (fusion -> loop).

Every value inside a fusion kernel is a function of the kernel's iteration
point, so the tiler works by *evaluating graph values at index tiles*: to
know ``y`` at index ``(i, j)`` it asks for ``y``'s operands at the indices
``y``'s op maps ``(i, j)`` to. Elementwise ops keep the index; layout ops
are index maps (a transpose permutes it, a slice scales and shifts it, a
reshape re-linearises it, a broadcast pins stretched dims to 0, a concat
selects between its operands under masks, a take reads its index first);
kernel inputs are ``loop.read``s. Nothing is copied, and each value is
computed once per index in a scope (a cache keyed by value, index and mask).

The kernel's kind fixes the iteration space:

- ``pointwise``: the output shape, flattened; each program handles
  ``BLOCK`` consecutive elements and recovers their coordinates by
  division and remainder.
- ``reduction``: one program per row (the kept dims of the reductions),
  the reduced dims flattened into a lane index. A reduced extent that is
  static and at most ``max-persistent`` lanes is handled in one tile that
  stays in registers (a *persistent* reduction: the data is read once
  whatever the number of reductions); otherwise each group of independent
  reductions is a ``scf.for`` over chunks accumulating tile-wise, and the
  outputs of row shape are written by a last loop.
- ``matmul``: ``[BLOCK_M, BLOCK_N]`` output tiles (grid axis 0) per batch
  element (grid axis 1) and a K loop of ``loop.dot`` into an accumulator;
  the epilogue is evaluated on the accumulator tile.

Index arithmetic is 64-bit unless the guards in scope prove every extent
the kernel touches below ``2**30`` (room for an offset plus a block).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import fusion, loop, sym
from irc.dialects import graph as g
from irc.dialects.tiles import is_power_of_two
from irc.errors import IrcError
from irc.shapes import SymExpr, as_expr

Index = tuple[SSAValue, ...]

#: Largest index that 32-bit index arithmetic may hold.
_I32_LIMIT = 2**31 - 1


def _next_power_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


@dataclass(frozen=True)
class TilePass(ModulePass):
    """Lower every ``fusion.kernel`` to a ``loop.kernel`` (see the module
    docstring). The options are the tile sizes, powers of two, and the
    largest static reduced extent handled in one persistent tile."""

    name = "tile"

    pointwise_block: int = 1024
    reduction_block: int = 1024
    max_persistent: int = 4096
    matmul_block_m: int = 64
    matmul_block_n: int = 64
    matmul_block_k: int = 32

    def __post_init__(self) -> None:
        # Checked when the pass is built, so that irc-opt reports a bad
        # option at the pass in -p.
        for name, value in vars(self).items():
            if not isinstance(value, int) or not is_power_of_two(value):
                raise IrcError(
                    f"tile option {name.replace('_', '-')}={value} is not a power of two"
                )
        if min(self.matmul_block_m, self.matmul_block_n, self.matmul_block_k) < 16:
            raise IrcError("matmul tiles must be at least 16 (tl.dot's minimum)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_fused(op)
        for kernel in [k for k in op.walk() if isinstance(k, fusion.KernelOp)]:
            tiled = KernelTiler(kernel, self).tile()
            Rewriter.replace_op(kernel, tiled)


def _check_fused(module: ModuleOp) -> None:
    """Refuse graph computations outside fusion kernels: ``tile`` takes the
    fusion level (guards and dense constants stay outside kernels)."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        for op in function.body.walk():
            outside = isinstance(op, g.GraphOp) and not (
                isinstance(op, g.ConstantOp) and not op.is_splat
            )
            if outside and not isinstance(op.parent_op(), fusion.KernelOp):
                raise PassFailedException(
                    f"tile: {op.name} in @{function.sym_name.data} is outside any "
                    "fusion.kernel; tile lowers the fusion level: run fuse first"
                )


# --------------------------------------------------------------------------
# The tiler
# --------------------------------------------------------------------------


def _tensor(value: SSAValue) -> g.TensorType:
    assert isinstance(value.type, g.TensorType)
    return value.type


@dataclass
class _Scope:
    """Values computed in one block (the kernel body or a loop body)."""

    block: Block
    cache: dict[tuple[SSAValue, Index, SSAValue | None], SSAValue] = field(
        default_factory=dict
    )


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


class KernelTiler:
    """Builds the ``loop.kernel`` of one ``fusion.kernel``."""

    def __init__(self, kernel: fusion.KernelOp, options: TilePass):
        self.kernel = kernel
        self.options = options
        self.facts = sym.facts_in_scope(kernel)
        self.index_type: IntegerType = i32 if self._fits_i32() else i64
        self.body = Block(arg_types=[v.type for v in kernel.inputs])
        self.prologue: list[Operation] = []
        self.scopes = [_Scope(self.body)]
        self.tiles: dict[str, int] = {}
        self.symbols: set[str] = set()
        self.notes: list[str] = []
        self.constants: dict[tuple[object, Attribute], SSAValue] = {}
        self.known_ints: dict[SSAValue, int] = {}
        self.sizes: dict[SymExpr, SSAValue] = {}
        self.mask: SSAValue | None = None
        # What reductions and the matmul evaluate to, with the index at
        # which they are valid (the kernel's current row / output tile).
        self.anchors: dict[SSAValue, tuple[Index, SSAValue | None]] = {}

    # ----- entry ---------------------------------------------------------

    def tile(self) -> loop.KernelOp:
        kind = self.kernel.kind_name
        builders: dict[str, Callable[[], list[SymExpr]]] = {
            "pointwise": self._tile_pointwise,
            "reduction": self._tile_reduction,
            "matmul": self._tile_matmul,
        }
        if kind not in builders:
            raise IrcError(f"tile: unknown fusion kernel kind {kind!r}")
        grid = builders[kind]()
        # Hoisted constants and sizes, those the body ended up using.
        self.prologue = [op for op in self.prologue if op.results[0].uses]
        if self.body.first_op is None:
            self.body.add_ops(self.prologue)
        else:
            self.body.insert_ops_before(self.prologue, self.body.first_op)
        reason = self.kernel.reason_text
        if self.notes:
            reason = (
                f"{reason}; {'; '.join(self.notes)}"
                if reason
                else "; ".join(self.notes)
            )
        return loop.KernelOp(
            self.kernel.kernel_name,
            kind,
            list(self.kernel.inputs),
            [_tensor(v) for v in self.kernel.outputs],
            grid,
            self.tiles,
            self.symbols,
            Region(self.body),
            reason,
        )

    @property
    def yielded(self) -> list[SSAValue]:
        terminator = self.kernel.body.block.last_op
        assert terminator is not None
        return list(terminator.operands)

    def _fits_i32(self) -> bool:
        """Whether every extent the kernel touches provably fits in i32."""
        values = [*self.kernel.inputs, *self.kernel.outputs]
        for op in self.kernel.body.walk():
            values.extend(op.results)
        limit = SymExpr.const(_I32_LIMIT // 2)  # room for offset + block
        return all(
            self.facts.prove_le(sym.product(_tensor(v).dims), limit)
            for v in values
            if isinstance(v.type, g.TensorType)
        )

    # ----- building blocks -----------------------------------------------

    def emit(self, op: Operation) -> SSAValue:
        """Append ``op`` to the current block; its one result."""
        self.emit_op(op)
        (result,) = op.results
        return result

    def emit_op(self, op: Operation) -> None:
        """Append ``op`` (any number of results) to the current block."""
        self.scopes[-1].block.add_op(op)

    def const(self, value: int | float | bool, element_type: Attribute) -> SSAValue:
        """A hoisted scalar constant."""
        key = (value, element_type)
        if key not in self.constants:
            if isinstance(element_type, IntegerType):
                attr: IntegerAttr | FloatAttr = IntegerAttr(int(value), element_type)
            else:
                attr = FloatAttr(float(value), element_type)  # type: ignore[arg-type]
            op = loop.ConstantOp(attr)
            self.prologue.append(op)
            self.constants[key] = op.result
            if element_type == self.index_type:
                self.known_ints[op.result] = int(value)
        return self.constants[key]

    def index(self, value: int) -> SSAValue:
        return self.const(value, self.index_type)

    def size(self, expr: SymExpr | int) -> SSAValue:
        """A symbolic size as an index value (hoisted, one op per expr)."""
        expr = as_expr(expr)
        if expr.constant is not None:
            return self.index(expr.constant)
        if expr not in self.sizes:
            op = loop.SizeOp(expr, self.index_type)
            self.prologue.append(op)
            self.sizes[expr] = op.result
            self.symbols |= expr.symbols
        return self.sizes[expr]

    def binary(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """``loop.binary``, folding the index identities (``+0``, ``*1``, ...).

        Folds may turn a tile into a scalar (``i * 0``, ``i mod 1``): index
        values only meet in broadcasting arithmetic, where that is the same.
        """
        a, b = self.known_ints.get(lhs), self.known_ints.get(rhs)
        if a is not None and b is not None and kind in _INT_FOLDS:
            return self.index(_INT_FOLDS[kind](a, b))
        if (kind == "add" and b == 0) or (kind in ("mul", "floordiv") and b == 1):
            return lhs
        if (kind == "add" and a == 0) or (kind == "mul" and a == 1):
            return rhs
        if (kind == "mul" and 0 in (a, b)) or (kind == "rem" and b == 1):
            return self.index(0)
        return self.emit(loop.BinaryOp(kind, lhs, rhs))

    def compare(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.emit(loop.CompareOp(kind, lhs, rhs))

    def both(self, lhs: SSAValue | None, rhs: SSAValue | None) -> SSAValue | None:
        """The conjunction of two optional masks."""
        if lhs is None or rhs is None:
            return rhs if lhs is None else lhs
        return self.emit(loop.BinaryOp("and", lhs, rhs))

    def cast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        if loop.element_of(value.type) == element_type:
            return value
        return self.emit(loop.CastOp(value, element_type))

    def range(self, block: str, size: int, axis: int = 0, rank: int = 1) -> SSAValue:
        self.tiles[block] = size
        shape = [1] * rank
        shape[axis] = size
        return self.emit(loop.RangeOp(block, shape, self.index_type))

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
        linear = self.index(0)
        stride = SymExpr.const(1)
        for coord, dim in zip(reversed(coords), reversed(dims)):
            linear = self.binary(
                "add", linear, self.binary("mul", coord, self.size(stride))
            )
            stride = stride * dim
        return linear

    # ----- scopes ----------------------------------------------------------

    def lookup(self, key: tuple[SSAValue, Index, SSAValue | None]) -> SSAValue | None:
        for scope in reversed(self.scopes):
            if key in scope.cache:
                return scope.cache[key]
        return None

    def for_chunks(
        self,
        extent: SymExpr,
        size: int,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``scf.for`` from 0 to ``extent`` in steps of ``size``, carrying
        ``inits``: ``body(start, carried)`` builds the next values in a scope
        of its own (values computed inside stay inside)."""
        loop_block = Block(arg_types=[self.index_type, *(v.type for v in inits)])
        start, *carried = loop_block.args
        self.scopes.append(_Scope(loop_block))
        saved_mask = self.mask
        self.emit_op(scf.YieldOp(*body(start, list(carried))))
        self.mask = saved_mask
        self.scopes.pop()
        op = scf.ForOp(
            self.index(0),
            self.size(extent),
            self.index(size),
            list(inits),
            Region(loop_block),
        )
        self.emit_op(op)
        return list(op.results)

    def loop_over(
        self,
        extent: SymExpr,
        block: str,
        size: int,
        inits: Sequence[SSAValue],
        body: Callable[[SSAValue, SSAValue | None, list[SSAValue]], list[SSAValue]],
    ) -> list[SSAValue]:
        """``for_chunks`` over the lanes of 1-D tiles of ``block``:
        ``body(lanes, mask, carried)`` runs under the lanes' bounds mask."""

        def chunk(start: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            lanes = self.lanes(start, block, size)
            self.mask = self.in_bounds(lanes, extent, size)
            return body(lanes, self.mask, carried)

        return self.for_chunks(extent, size, inits, chunk)

    # ----- evaluation of graph values at an index ---------------------------

    def value_at(self, value: SSAValue, index: Index) -> SSAValue:
        """The loop value of graph ``value`` at ``index`` under the current mask."""
        key = (value, index, self.mask)
        cached = self.lookup(key)
        if cached is not None:
            return cached
        result = self._compute(value, index)
        self.scopes[-1].cache[key] = result
        return result

    def _compute(self, value: SSAValue, index: Index) -> SSAValue:
        if isinstance(value, BlockArgument):
            tensor = self.body.args[value.index]
            return self.emit(loop.ReadOp(tensor, list(index), self.mask))
        if value in self.anchors:
            return self._anchor_at(value, index)
        op = value.owner
        assert isinstance(op, Operation)
        element = _tensor(value).element_type
        if isinstance(op, g.ConstantOp):
            if not op.is_splat:
                raise IrcError(
                    f"tile: dense constant inside kernel {self.kernel.kernel_name}"
                )
            return self.const(op.literal().item(), element)
        if isinstance(op, g.UnaryOp):
            return self.emit(loop.UnaryOp(op.KIND, self.value_at(op.input, index)))
        if isinstance(op, g.BinaryOp):
            lhs, rhs = (self.value_at(o, index) for o in op.operands)
            return self.emit(loop.BinaryOp(op.KIND, lhs, rhs))
        if isinstance(op, g.CompareOp):
            lhs, rhs = (self.value_at(o, index) for o in op.operands)
            return self.compare(op.predicate.data.value, lhs, rhs)
        if isinstance(op, g.SelectOp):
            c, a, b = (self.value_at(o, index) for o in op.operands)
            return self.emit(loop.SelectOp(c, a, b))
        if isinstance(op, g.CastOp):
            return self.cast(self.value_at(op.operands[0], index), element)
        if isinstance(op, g.IotaOp):
            return self.cast(index[op.axis.value.data], element)
        if isinstance(op, g.DimOp):
            return self.cast(self.size(op.value.data), element)
        layout = _LAYOUT_RULES.get(type(op))
        if layout is not None:
            return layout(self, op, index)
        raise IrcError(
            f"tile: {op.name} cannot be evaluated inside kernel "
            f"{self.kernel.kernel_name} ({self.kernel.kind_name})"
        )

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

    # Layout ops: index maps.

    def _broadcast(self, op: g.BroadcastOp, index: Index) -> SSAValue:
        source = _tensor(op.operands[0]).dims
        offset = len(index) - len(source)
        mapped = tuple(
            self.index(0) if dim == 1 else index[axis + offset]
            for axis, dim in enumerate(source)
        )
        return self.value_at(op.operands[0], mapped)

    def _transpose(self, op: g.TransposeOp, index: Index) -> SSAValue:
        mapped: list[SSAValue] = [self.index(0)] * len(index)
        for result_axis, source_axis in enumerate(op.perm):
            mapped[source_axis] = index[result_axis]
        return self.value_at(op.operands[0], tuple(mapped))

    def _slice(self, op: g.SliceOp, index: Index) -> SSAValue:
        mapped = tuple(
            self.binary(
                "add", self.size(offset), self.binary("mul", i, self.index(stride))
            )
            for i, offset, stride in zip(index, op.offset_list, op.stride_list)
        )
        return self.value_at(op.operands[0], mapped)

    def _reshape(self, op: g.ReshapeOp, index: Index) -> SSAValue:
        source = list(_tensor(op.operands[0]).dims)
        target = list(_tensor(op.results[0]).dims)
        # Dims shared at both ends map one to one; only the middle is
        # re-linearised.
        head = 0
        while head < min(len(source), len(target)) and source[head] == target[head]:
            head += 1
        tail = 0
        while (
            tail < min(len(source), len(target)) - head
            and source[-1 - tail] == target[-1 - tail]
        ):
            tail += 1
        middle = self.linearize(
            index[head : len(target) - tail], target[head : len(target) - tail]
        )
        mapped = (
            *index[:head],
            *self.delinearize(middle, source[head : len(source) - tail]),
            *index[len(target) - tail :],
        )
        return self.value_at(op.operands[0], tuple(mapped))

    def _concat(self, op: g.ConcatOp, index: Index) -> SSAValue:
        axis = op.axis.value.data
        position = index[axis]
        start = SymExpr.const(0)
        pieces: list[tuple[SSAValue | None, SSAValue]] = []
        saved_mask = self.mask
        for number, operand in enumerate(op.operands):
            extent = _tensor(operand).dims[axis]
            end = start + extent
            inside: SSAValue | None = None
            if number > 0:
                inside = self.compare("ge", position, self.size(start))
            if number < len(op.operands) - 1:
                inside = self.both(inside, self.compare("lt", position, self.size(end)))
            local = self.binary("sub", position, self.size(start))
            self.mask = self.both(saved_mask, inside)
            mapped = (*index[:axis], local, *index[axis + 1 :])
            pieces.append((inside, self.value_at(operand, mapped)))
            self.mask = saved_mask
            start = end
        result = pieces[-1][1]
        for inside, piece in reversed(pieces[:-1]):
            assert inside is not None
            result = self.emit(loop.SelectOp(inside, piece, result))
        return result

    def _take(self, op: g.TakeOp, index: Index) -> SSAValue:
        axis = op.axis.value.data
        table, indices = op.operands
        rank = _tensor(indices).rank
        extent = _tensor(table).dims[axis]
        position = self.cast(
            self.value_at(indices, index[axis : axis + rank]), self.index_type
        )
        # Out-of-range indices (an error in the reference interpreter) read
        # 0 rather than memory outside the table.
        inside = self.both(
            self.compare("ge", position, self.index(0)),
            self.compare("lt", position, self.size(extent)),
        )
        saved_mask = self.mask
        self.mask = self.both(saved_mask, inside)
        mapped = (*index[:axis], position, *index[axis + rank :])
        result = self.value_at(table, mapped)
        self.mask = saved_mask
        return result

    # ----- kinds -----------------------------------------------------------

    def write_outputs(
        self,
        index_of: Callable[[SSAValue], Index],
        mask_of: Callable[[SSAValue], SSAValue | None],
    ) -> None:
        for number, value in enumerate(self.yielded):
            index = index_of(value)
            saved_mask = self.mask
            self.mask = mask_of(value)
            result = self.value_at(value, index)
            self.emit_op(loop.WriteOp(result, number, list(index), self.mask))
            self.mask = saved_mask

    def _tile_pointwise(self) -> list[SymExpr]:
        shape = _tensor(self.yielded[0]).dims
        numel = sym.product(shape)
        block = self.options.pointwise_block
        if numel.constant is not None:
            block = min(block, _next_power_of_two(max(numel.constant, 1)))
        start = self.binary(
            "mul", self.emit(loop.ProgramIdOp(0, self.index_type)), self.index(block)
        )
        lanes = self.lanes(start, "BLOCK", block)
        self.mask = self.in_bounds(lanes, numel, block)
        coords = tuple(self.delinearize(lanes, shape))
        self.write_outputs(lambda _: coords, lambda _: self.mask)
        self.notes.append(
            f"pointwise over {sym.shape_text(shape)} in blocks of {block}"
        )
        return [numel.ceildiv(block)]

    def _reductions(self) -> list[Operation]:
        return [
            op
            for op in self.kernel.body.block.ops
            if isinstance(op, g.ReduceOp | g.ArgMaxOp)
        ]

    def _tile_reduction(self) -> list[SymExpr]:
        reductions = self._reductions()
        shape = _tensor(reductions[0].operands[0]).dims
        axes = _reduction_axes(reductions[0])
        kept = [d for k, d in enumerate(shape) if k not in axes]
        extent = sym.product(d for k, d in enumerate(shape) if k in axes)
        pid = self.emit(loop.ProgramIdOp(0, self.index_type))
        static = extent.constant
        persistent = static is not None and static <= self.options.max_persistent
        if persistent:
            block = _next_power_of_two(max(static or 0, 1))
        else:
            block = self.options.reduction_block
            if static is not None:
                block = min(block, _next_power_of_two(static))
        rows = _Rows(
            reductions, shape, axes, tuple(self.delinearize(pid, kept)), extent, block
        )
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

    def _full_index(self, rows: _Rows, lanes: SSAValue) -> Index:
        """The index into the rows' shape of this row's ``lanes``."""
        reduced = [d for k, d in enumerate(rows.shape) if k in rows.axes]
        lane_coords = iter(self.delinearize(lanes, reduced))
        row_coords = iter(rows.row)
        return tuple(
            next(lane_coords) if k in rows.axes else next(row_coords)
            for k in range(len(rows.shape))
        )

    def _row_index(self, rows: _Rows, value: SSAValue) -> Index:
        """The index of a per-row (reduced-shape) value at this row."""
        dims = _tensor(value).dims
        if len(dims) == len(rows.shape):  # keepdims
            coords = iter(rows.row)
            return tuple(
                self.index(0) if k in rows.axes else next(coords)
                for k in range(len(dims))
            )
        return rows.row

    def _is_row_value(self, rows: _Rows, value: SSAValue) -> bool:
        """Whether ``value`` has the rows' full shape (not a per-row value)."""
        return tuple(_tensor(value).dims) == tuple(rows.shape) and (
            value not in self.anchors
        )

    def _persistent(self, rows: _Rows) -> None:
        lanes = self.range("BLOCK_R", rows.block)
        self.mask = self.in_bounds(lanes, rows.extent, rows.block)
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
        element = _tensor(reduction.results[0]).element_type
        result = self.emit(
            loop.ReduceOp(
                kind, values, 0, self.index_type if kind == "argmax" else None
            )
        )
        self._set_anchor(reduction, self.cast(result, element))

    def _masked_operand(self, reduction: Operation, index: Index) -> SSAValue:
        values = self.value_at(reduction.operands[0], index)
        element = loop.element_of(values.type)
        if not loop.shape_of(values.type):  # the same value on every lane
            values = self.emit(loop.SplatOp(values, [self.tiles["BLOCK_R"]]))
        if self.mask is not None:
            identity = self.const(
                _identity(_reduction_kind(reduction), element), element
            )
            values = self.emit(loop.SelectOp(self.mask, values, identity))
        return values

    def _set_anchor(self, reduction: Operation, result: SSAValue) -> None:
        value = reduction.results[0]
        self.anchors[value] = (self.anchors[value][0], result)

    def _looped(self, rows: _Rows) -> None:
        for level in _dependency_levels(rows.reductions):
            self._reduce_in_one_loop(rows, level)
        row_outputs = [v for v in self.yielded if self._is_row_value(rows, v)]
        for number, value in enumerate(self.yielded):
            if value not in row_outputs:
                index = self._row_index(rows, value)
                result = self.value_at(value, index)
                self.emit_op(loop.WriteOp(result, number, list(index), None))
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
            for reduction in level:
                count = _state_size(reduction)
                state, carried = carried[:count], carried[count:]
                updated.extend(self._accumulate(reduction, index, lanes, state))
            return updated

        results = self.loop_over(rows.extent, "BLOCK_R", rows.block, inits, body)
        for reduction in level:
            count = _state_size(reduction)
            state, results = results[:count], results[count:]
            self._finish(reduction, state)

    def _write_rows_in_one_loop(self, rows: _Rows, outputs: list[SSAValue]) -> None:
        """A last loop over the rows writing the outputs of the rows' shape."""

        def write(
            lanes: SSAValue, mask: SSAValue | None, carried: list[SSAValue]
        ) -> list[SSAValue]:
            index = self._full_index(rows, lanes)
            for number, value in enumerate(self.yielded):
                if value in outputs:
                    result = self.value_at(value, index)
                    self.emit_op(loop.WriteOp(result, number, list(index), mask))
            return []

        self.loop_over(rows.extent, "BLOCK_R", rows.block, [], write)

    def _accumulator_inits(self, reduction: Operation, block: int) -> list[SSAValue]:
        element = _tensor(reduction.operands[0]).element_type
        kind = _reduction_kind(reduction)
        identity = self.emit(
            loop.SplatOp(self.const(_identity(kind, element), element), [block])
        )
        if kind != "argmax":
            return [identity]
        return [identity, self.emit(loop.SplatOp(self.index(0), [block]))]

    def _accumulate(
        self, reduction: Operation, index: Index, lanes: SSAValue, state: list[SSAValue]
    ) -> list[SSAValue]:
        values = self._masked_operand(reduction, index)
        kind = _reduction_kind(reduction)
        if kind != "argmax":
            return [self.emit(loop.BinaryOp(_COMBINE[kind], state[0], values))]
        best, where = state
        # Strictly greater keeps an earlier chunk's lane on ties, as NumPy's
        # first maximum; a NaN is greater than any number (NumPy's argmax
        # returns the first NaN).
        better = self.compare("gt", values, best)
        if not isinstance(loop.element_of(values.type), IntegerType):
            first_nan = self.both(
                self.compare("ne", values, values), self.compare("eq", best, best)
            )
            better = self.emit(loop.BinaryOp("or", better, first_nan))
        return [
            self.emit(loop.SelectOp(better, values, best)),
            self.emit(loop.SelectOp(better, lanes, where)),
        ]

    def _finish(self, reduction: Operation, state: list[SSAValue]) -> None:
        kind = _reduction_kind(reduction)
        element = _tensor(reduction.results[0]).element_type
        if kind != "argmax":
            self._set_anchor(reduction, self.emit(loop.ReduceOp(kind, state[0], 0)))
            return
        best, where = state
        # The max propagates NaN: then the lanes holding a NaN are the
        # candidates, else those holding the max.
        top = self.emit(loop.ReduceOp("max", best, 0))
        holds_top = self.compare("eq", best, top)
        if not isinstance(loop.element_of(best.type), IntegerType):
            holds_top = self.emit(
                loop.BinaryOp("or", holds_top, self.compare("ne", best, best))
            )
        candidates = self.emit(
            loop.SelectOp(
                holds_top,
                where,
                self.index(_I32_LIMIT if self.index_type == i32 else 2**63 - 1),
            )
        )
        self._set_anchor(
            reduction,
            self.cast(self.emit(loop.ReduceOp("min", candidates, 0)), element),
        )

    def _tile_matmul(self) -> list[SymExpr]:
        matmul = next(
            op for op in self.kernel.body.block.ops if isinstance(op, g.MatmulOp)
        )
        lhs, rhs = matmul.operands
        out = _tensor(matmul.results[0])
        *batch, m_extent, n_extent = out.dims
        k_extent = _tensor(lhs).dims[-1]
        opts = self.options
        bm = _clamp_block(m_extent, opts.matmul_block_m)
        bn = _clamp_block(n_extent, opts.matmul_block_n)
        bk = _clamp_block(k_extent, opts.matmul_block_k)
        n_tiles = n_extent.ceildiv(bn)
        pid = self.emit(loop.ProgramIdOp(0, self.index_type))
        pid_m = self.binary("floordiv", pid, self.size(n_tiles))
        pid_n = self.binary("rem", pid, self.size(n_tiles))
        batch_index: Index = ()
        if batch:
            batch_pid = self.emit(loop.ProgramIdOp(1, self.index_type))
            batch_index = tuple(self.delinearize(batch_pid, batch))
        rows = self.lanes(
            self.binary("mul", pid_m, self.index(bm)), "BLOCK_M", bm, 0, 2
        )
        cols = self.lanes(
            self.binary("mul", pid_n, self.index(bn)), "BLOCK_N", bn, 1, 2
        )
        row_mask = self.in_bounds(rows, m_extent, bm)
        col_mask = self.in_bounds(cols, n_extent, bn)

        element = out.element_type
        acc = self.emit(
            loop.SplatOp(self.const(0, _accumulator_type(element)), [bm, bn])
        )

        def k_step(start: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
            # ``start + range`` along K, as a row ([1, BK]) of the lhs tile and
            # a column ([BK, 1]) of the rhs tile.
            k_row = self.lanes(start, "BLOCK_K", bk, 1, 2)
            k_col = self.lanes(start, "BLOCK_K", bk, 0, 2)
            self.mask = self.both(row_mask, self.in_bounds(k_row, k_extent, bk))
            a = self.value_at(lhs, (*_batch_for(lhs, batch_index, self), rows, k_row))
            self.mask = self.both(self.in_bounds(k_col, k_extent, bk), col_mask)
            b = self.value_at(rhs, (*_batch_for(rhs, batch_index, self), k_col, cols))
            a, b = self._full_tile(a, (bm, bk)), self._full_tile(b, (bk, bn))
            return [self.emit(loop.DotOp(a, b, carried[0]))]

        (product,) = self.for_chunks(k_extent, bk, [acc], k_step)

        tile_index = (*batch_index, rows, cols)
        self.anchors[matmul.results[0]] = (
            tile_index,
            self.cast(product, element),
        )
        out_mask = self.both(row_mask, col_mask)
        self.mask = out_mask
        self.write_outputs(lambda _: tile_index, lambda _: out_mask)
        self.notes.append(
            f"matmul tiles {bm}x{bn}, K loop over {k_extent} in steps of {bk}"
        )
        grid = [m_extent.ceildiv(bm) * n_tiles]
        if batch:
            grid.append(sym.product(batch))
        return grid

    def _full_tile(self, value: SSAValue, shape: tuple[int, int]) -> SSAValue:
        """``value`` as a tile of exactly ``shape`` (``tl.dot`` operands)."""
        if loop.shape_of(value.type) == shape:
            return value
        if not loop.shape_of(value.type):
            return self.emit(loop.SplatOp(value, shape))
        zero = self.emit(
            loop.SplatOp(self.const(0, loop.element_of(value.type)), shape)
        )
        return self.emit(loop.BinaryOp("add", zero, value))


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

_INT_FOLDS: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}

_COMBINE = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}

_LAYOUT_RULES: dict[
    type[Operation], Callable[[KernelTiler, Operation, Index], SSAValue]
] = {
    g.BroadcastOp: KernelTiler._broadcast,
    g.TransposeOp: KernelTiler._transpose,
    g.SliceOp: KernelTiler._slice,
    g.ReshapeOp: KernelTiler._reshape,
    g.ConcatOp: KernelTiler._concat,
    g.TakeOp: KernelTiler._take,
}  # type: ignore[dict-item]


def _state_size(reduction: Operation) -> int:
    """How many values a looped reduction carries: an argmax carries the
    best value and its lane."""
    return 2 if isinstance(reduction, g.ArgMaxOp) else 1


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


def _dependency_levels(reductions: Sequence[Operation]) -> list[list[Operation]]:
    """Reductions grouped so that each group depends only on earlier ones:
    a group is one loop over the data."""
    depth: dict[Operation, int] = {}
    for reduction in reductions:  # block order is topological
        depth[reduction] = 1 + max(
            (depth[r] for r in reductions if r in depth and _depends_on(reduction, r)),
            default=-1,
        )
    levels: list[list[Operation]] = [[] for _ in range(max(depth.values()) + 1)]
    for reduction in reductions:
        levels[depth[reduction]].append(reduction)
    return levels


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


def _clamp_block(extent: SymExpr, block: int) -> int:
    """A matmul tile: ``block``, or less for a small static extent (>= 16)."""
    if extent.constant is not None:
        return max(16, min(block, _next_power_of_two(extent.constant)))
    return block


def _batch_for(operand: SSAValue, batch_index: Index, tiler: KernelTiler) -> Index:
    """The batch part of an operand's index: NumPy's batch broadcasting
    (right-aligned, size-1 dims pinned to 0)."""
    dims = _tensor(operand).dims[:-2]
    offset = len(batch_index) - len(dims)
    return tuple(
        tiler.index(0) if dim == 1 else batch_index[axis + offset]
        for axis, dim in enumerate(dims)
    )


def _accumulator_type(element: Attribute) -> Attribute:
    """Matmul accumulators: f32 for 16- and 32-bit floats, else the element."""
    if isinstance(element, Float16Type | BFloat16Type):
        return f32
    return element
