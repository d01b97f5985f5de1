"""The kernel printer: one ``triton.kernel`` as one ``@triton.jit`` function.

``KernelEmitter`` prints the kernel's parameters (``p_`` pointers, ``s_``
symbols, ``c_`` constexpr tile sizes, in that order: first the tiles the
launch chooses, then the others, whose size is their default), then each op of its
body as one statement, so the kernel reads like the IR; ``scf.for`` is a
Python ``for`` over ``range``. It records the ``ASTSource`` signature and
the constexprs' values for the launcher and ``KERNELS``.

Pointers are annotated with their Triton type (``p_x: '*fp32'``): a launch
passes a workspace intermediate as its address, a plain ``int``, which
Triton then types by the annotation (still specialising its alignment).

Symbols are scalar kernel arguments under their own names, and every
``tile.size`` casts them to its own type first: Triton passes an integer
argument as i32 when it fits (and as a constexpr when it is 1), so an i64
offset is computed in 64 bits whatever value a symbol has. Masks are the
IR's: every load and store the IR masks is masked, and only those.

The op spelling functions (``compare_text``, ``cast_text``, ``reduce_text``,
``scan_text``, ``dot_text``, ``constant_text``, and ``irc.backend.triton.elementwise``'s
table for unary and binary ops) give each op NumPy's semantics, calling the prelude's helpers
(``irc.backend.triton.prelude``) by name where Triton's own differ. Only
functions that both the Triton interpreter and the compiler run are used:
``erf`` and float ``pow`` are computed in float64 and ``tanh`` in float32
(float64 for float64) from ``tl.exp``/``tl.erf``/``tl.log2`` (no libdevice
calls), matmuls take tensor cores for 16-bit operands and, when the kernel
says ``matmul_precision = "tf32"``, for float32 (``dot_text``), f32 division and
square roots are the correctly rounded ``tl.div_rn``/``tl.sqrt_rn`` (the
defaults are approximate on GPUs), and 16-bit floats compute in float32
and round once, as NumPy does (which also steers clear of the interpreter's
bfloat16 bugs, see ``irc.backend.triton.elementwise``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from irc.backend.triton.elementwise import COMPARISON_OPERATORS, elementwise_text
from irc.backend.triton.errors import EmitError
from irc.backend.triton.expressions import ExprRenderer
from irc.backend.triton.names import (
    MODULE_NAMES,
    Namer,
    comment_lines,
    location_comment,
)
from irc.backend.triton.typenames import (
    BITS_TYPES,
    element_kind,
    is_half,
    signature_type,
    tl_type,
)
from irc.dialects import tile
from irc.dialects import triton as tt
from irc.dialects.elementwise import ComparisonPredicate
from irc.dialects.kernel_kind import (
    LAUNCH_TILES_ATTRIBUTE,
    MATMUL_PRECISION_ATTRIBUTE,
    MatmulPrecision,
)
from irc.dialects.sym import SymExprAttr
from irc.dtypes import dtype
from irc.primitives.spelling import narrow, wide
from irc.shapes import SymExpr


def _index_suffix(shape: Sequence[int], axis: int) -> str:
    """``[:, None]``: puts a 1-D range along ``axis`` of a rank-n block."""
    if len(shape) == 1:
        return ""
    return (
        "[" + ", ".join(":" if i == axis else "None" for i in range(len(shape))) + "]"
    )


def _float_bits(value: float, element: Attribute) -> int:
    """The bits of ``value`` in ``element``'s float format, as a signed int."""
    numpy_type = dtype(element).numpy
    raw = np.asarray(value, dtype=np.float64).astype(numpy_type).tobytes()
    return int.from_bytes(raw, "little", signed=True)


def constant_text(attr: IntegerAttr | FloatAttr, element: Attribute) -> str:
    """A typed scalar constant (``tl.full([], 1.5, tl.float32)``); specials
    (inf, NaN) and bfloat16 values (which the interpreter would truncate)
    by their bits, so the value is exact."""
    type_name = tl_type(element)
    if isinstance(attr, IntegerAttr):
        value = int(attr.value.data)
        if element_kind(element) == "b":
            value = int(value != 0)
        return f"tl.full([], {value}, {type_name})"
    value = float(attr.value.data)
    if math.isfinite(value) and dtype(element).name != "bfloat16":
        return f"tl.full([], {value!r}, {type_name})"
    bits_type = BITS_TYPES[dtype(element).bits]
    bits = _float_bits(value, element)
    return f"tl.full([], {bits}, {bits_type}).to({type_name}, bitcast=True)"


@dataclass
class KernelEmitter:
    """Prints one ``triton.kernel`` as a ``@triton.jit`` function."""

    kernel: tt.KernelOp
    python_name: str
    namer: Namer = field(default_factory=Namer)
    values: dict[SSAValue, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    symbols: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, str] = field(default_factory=dict)
    signature: dict[str, str] = field(default_factory=dict)
    #: In a piece of a combined kernel: its program's coordinate on each
    #: axis of the piece's grid, as Python names (int64).
    program_ids: list[str] = field(default_factory=list)

    def emit(self) -> list[str]:
        params = self._parameters()
        if self.kernel.pieces:
            self._pieces(self.kernel.pieces)
        else:
            self._block(self.kernel.body.block, 1)
        if not self.lines:
            self._emit(1, "pass")
        header = [
            *comment_lines(
                f"kernel @{self.kernel.kernel_name} ({self.kernel.kind.data}), "
                f"grid {[str(g) for g in self.kernel.grid_exprs]}"
            ),
            *comment_lines(self.kernel.reason.data),
            "@triton.jit",
            f"def {self.python_name}({', '.join(params)}):",
        ]
        return [*header, *self.lines]

    def constexpr_values(self) -> dict[str, int]:
        """Constexpr parameter name -> tile size (the declared size of a
        tile the launch chooses: its upper bound)."""
        sizes = self.kernel.tile_sizes
        return {self.constexprs[name]: sizes[name] for name in sizes}

    def _dims(self, shape: Sequence[int]) -> list[str]:
        """A tile shape as Triton source: the dims of a tile the launch
        chooses (its declared size) spelt as its constexpr."""
        chosen = {
            self.kernel.tile_sizes[tile]: self.constexprs[tile]
            for tile in launch_tile_extents(self.kernel)
        }
        return [chosen.get(d, str(d)) for d in shape]

    def _shape_text(self, shape: Sequence[int]) -> str:
        return f"[{', '.join(self._dims(shape))}]"

    # Parameters ----------------------------------------------------------

    def _parameters(self) -> list[str]:
        self.namer.taken |= MODULE_NAMES
        params: list[str] = []
        for index, arg in enumerate(self.kernel.pointer_args):
            name = self.namer.fresh("p_", arg.name_hint or f"arg{index}")
            self.values[arg] = name
            self.signature[name] = signature_type(arg.type)
            params.append(f"{name}: {self.signature[name]!r}")
        for symbol, arg in zip(
            self.kernel.symbol_names, self.kernel.symbol_args, strict=True
        ):
            name = self.namer.fresh("s_", symbol)
            self.values[arg] = self.symbols[symbol] = name
            self.signature[name] = signature_type(arg.type)
            params.append(name)
        chosen = launch_tile_extents(self.kernel)
        for block in self.kernel.tile_sizes:
            self.constexprs[block] = self.namer.fresh("c_", block)
        # The launch passes the tiles it chooses; the others default to
        # their size (a launch passes fewer keywords: host time per call).
        params += [
            f"{self.constexprs[block]}: tl.constexpr"
            for block in self.kernel.tile_sizes
            if block in chosen
        ]
        params += [
            f"{self.constexprs[block]}: tl.constexpr = {size}"
            for block, size in self.kernel.tile_sizes.items()
            if block not in chosen
        ]
        return params

    # Statements ----------------------------------------------------------

    def _block(self, block: Block, depth: int) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                self._for(op, depth)
            elif isinstance(op, scf.WhileOp):
                self._while(op, depth)
            elif isinstance(op, scf.IfOp):
                self._if(op, depth)
            elif isinstance(op, scf.YieldOp | scf.ConditionOp):
                continue  # assigned by the enclosing loop
            elif isinstance(op, tt.StoreOp):
                self._emit(depth, self._store(op) + location_comment(op))
            else:
                self._assign(op, depth)

    def _emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def _pieces(self, pieces: Sequence[tt.PieceOp]) -> None:
        """A combined kernel: the flat program id picks the piece whose
        programs it falls in (``if``/``elif``, the last an ``else``), which
        runs with its own program ids."""
        flat = self.namer.fresh("pid", "")
        self._emit(1, f"{flat} = tl.program_id(0).to(tl.int64)")
        for index, piece in enumerate(pieces):
            end = self._kernel_expr(piece.offset_expr + piece.programs)
            if index == len(pieces) - 1:
                test = "else:"
            else:
                test = f"{'if' if index == 0 else 'elif'} {flat} < {end}:"
            self._emit(1, test)
            for line in comment_lines(
                f"piece @{piece.piece.data}, grid "
                f"{[str(g) for g in piece.grid_exprs]}: {piece.reason.data}"
            ):
                self._emit(2, line)
            self._piece_ids(piece, flat)
            start = len(self.lines)
            self._block(piece.body.block, 2)
            if len(self.lines) == start:
                self._emit(2, "pass")
            self.program_ids = []

    def _piece_ids(self, piece: tt.PieceOp, flat: str) -> None:
        """The piece's program ids from the flat one: the index past its
        offset, split over its grid's axes (axis 0 fastest)."""
        local = flat
        if piece.offset_expr != SymExpr.const(0):
            local = self.namer.fresh("pid_", "local")
            offset = self._kernel_expr(piece.offset_expr)
            self._emit(2, f"{local} = {flat} - {offset}")
        grid = piece.grid_exprs
        stride = SymExpr.const(1)
        for axis, extent in enumerate(grid):
            name = self.namer.fresh("pid_", str(axis))
            text = local if axis == 0 else f"{local} // {self._kernel_expr(stride)}"
            if axis < len(grid) - 1:
                text = f"{text} % {self._kernel_expr(extent)}"
            self._emit(2, f"{name} = {text}")
            self.program_ids.append(name)
            stride = stride * extent

    def _kernel_expr(self, expr: SymExpr) -> str:
        """A symbolic size as an int64 value in the kernel."""
        if expr.is_constant:
            return str(int(expr))
        return ExprRenderer(self.symbols, in_kernel=True).render(expr)

    def _assign(self, op: Operation, depth: int) -> None:
        expression = self._expression(op)
        (result,) = op.results
        name = self._name(result)
        self._emit(depth, f"{name} = {expression}{location_comment(op)}")

    def _name(self, value: SSAValue) -> str:
        name = self.namer.fresh(
            "v_" if value.name_hint else "v", value.name_hint or str(len(self.values))
        )
        self.values[value] = name
        return name

    def _for(self, op: scf.ForOp, depth: int) -> None:
        body = op.body.block
        induction, *carried = body.args
        carried_names = [self._name(arg) for arg in carried]
        for name, init in zip(carried_names, op.iter_args, strict=True):
            self._emit(depth, f"{name} = {self.values[init]}")
        bounds = ", ".join(self.values[v] for v in (op.lb, op.ub, op.step))
        self._emit(
            depth,
            f"for {self._name(induction)} in range({bounds}):{location_comment(op)}",
        )
        start = len(self.lines)
        self._block(body, depth + 1)
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp), "scf.for bodies end in scf.yield"
        if carried_names:
            targets = ", ".join(carried_names)
            sources = ", ".join(self.values[v] for v in yielded.operands)
            self._emit(depth + 1, f"{targets} = {sources}")
        elif len(self.lines) == start:
            self._emit(depth + 1, "pass")
        for result, name in zip(op.results, carried_names, strict=True):
            self._emit(depth, f"{self._name(result)} = {name}")

    def _while(self, op: scf.WhileOp, depth: int) -> None:
        """``scf.while`` as Python's ``while``: the test's ops run before
        the loop and again at the end of each iteration, on the carried
        values (Triton's ``while`` takes an expression, not statements)."""
        carried = [self._name(arg) for arg in op.before_region.block.args]
        for name, init in zip(carried, op.arguments, strict=True):
            self._emit(depth, f"{name} = {self.values[init]}")
        test = self._test(op, carried, depth)
        self._emit(depth, f"while {test}:{location_comment(op)}")
        after = op.after_region.block
        self._bind_forwarded(op, after.args, depth + 1)
        self._block(after, depth + 1)
        yielded = after.last_op
        assert isinstance(yielded, scf.YieldOp), "scf.while bodies end in scf.yield"
        sources = ", ".join(self.values[v] for v in yielded.operands)
        self._emit(depth + 1, f"{', '.join(carried)} = {sources}")
        self._emit(depth + 1, f"{test} = {self._test(op, carried, depth + 1)}")
        self._bind_forwarded(op, op.results, depth)

    def _if(self, op: scf.IfOp, depth: int) -> None:
        """``scf.if`` as Python's ``if``/``else``, each branch assigning the
        results' variables."""
        names = [self._name(result) for result in op.results]
        self._emit(depth, f"if {self.values[op.cond]}:{location_comment(op)}")
        for keyword, region in (("", op.true_region), ("else:", op.false_region)):
            if keyword:
                self._emit(depth, keyword)
            block = region.block
            start = len(self.lines)
            self._block(block, depth + 1)
            yielded = block.last_op
            assert isinstance(yielded, scf.YieldOp), "scf.if branches end in scf.yield"
            if names:
                sources = ", ".join(self.values[v] for v in yielded.operands)
                self._emit(depth + 1, f"{', '.join(names)} = {sources}")
            elif len(self.lines) == start:
                self._emit(depth + 1, "pass")
        for result, name in zip(op.results, names, strict=True):
            self.values[result] = name

    def _test(self, op: scf.WhileOp, carried: Sequence[str], depth: int) -> str:
        """Emit the ops of ``op``'s test on the ``carried`` variables; the
        name of its predicate."""
        before = op.before_region.block
        for arg, name in zip(before.args, carried, strict=True):
            self.values[arg] = name
        self._block(before, depth)
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        return self.values[condition.condition]

    def _bind_forwarded(
        self, op: scf.WhileOp, targets: Sequence[SSAValue], depth: int
    ) -> None:
        """Name ``targets`` (the body's arguments, or the loop's results)
        after what the test forwards: the carried values it passes on."""
        condition = op.before_region.block.last_op
        assert isinstance(condition, scf.ConditionOp)
        for target, source in zip(targets, condition.args, strict=True):
            name = self._name(target)
            self._emit(depth, f"{name} = {self.values[source]}")

    # Expressions ---------------------------------------------------------

    def _expression(self, op: Operation) -> str:
        emitter = _EXPRESSIONS.get(type(op))
        if emitter is None:
            raise EmitError(
                f"{op.name} in triton.kernel @{self.kernel.kernel_name} has no Triton "
                "spelling; lower memory-level kernels with lower-memory-to-triton first"
            )
        return emitter(self, op)

    def v(self, value: SSAValue) -> str:
        return self.values[value]

    def program_id(self, op: tile.ProgramIdOp) -> str:
        axis = op.axis.value.data
        if self.program_ids:  # in a piece: its own grid's coordinate
            if axis >= len(self.program_ids):
                return f"tl.full([], 0, {tl_type(op.result.type)})"
            return f"{self.program_ids[axis]}.to({tl_type(op.result.type)})"
        text = f"tl.program_id({axis})"
        return (
            text
            if op.result.type == IntegerType(32)
            else f"{text}.to({tl_type(op.result.type)})"
        )

    def size(self, op: tile.SizeOp) -> str:
        index_type = tl_type(op.result.type)
        expr = op.expr.data
        if expr.is_constant:
            return f"tl.full([], {int(expr)}, {index_type})"
        renderer = ExprRenderer(self.symbols, in_kernel=True, index_type=index_type)
        return renderer.render(expr)

    def arange(self, op: tile.RangeOp) -> str:
        shape = tt.shape_of(op.result.type)
        text = f"tl.arange(0, {self.constexprs[op.block.data]})"
        text += _index_suffix(shape, op.axis)
        element = tt.element_of(op.result.type)
        return text if element == IntegerType(32) else f"{text}.to({tl_type(element)})"

    def block_size(self, op: tile.BlockSizeOp) -> str:
        index_type = tl_type(op.result.type)
        return f"tl.full([], {self.constexprs[op.block.data]}, {index_type})"

    def constant(self, op: tile.ConstantOp) -> str:
        return constant_text(op.value, op.result.type)

    def full(self, op: tile.SplatOp) -> str:
        return (
            f"tl.broadcast_to({self.v(op.input)}, "
            f"{self._shape_text(tt.shape_of(op.result.type))})"
        )

    def unary(self, op: tile.UnaryOp) -> str:
        element = tt.element_of(op.result.type)
        return elementwise_text(op.kind.data, element, self.v(op.input))

    def binary(self, op: tile.BinaryOp) -> str:
        element = tt.element_of(op.result.type)
        return elementwise_text(op.kind.data, element, self.v(op.lhs), self.v(op.rhs))

    def compare(self, op: tile.CompareOp) -> str:
        element = tt.element_of(op.lhs.type)
        return compare_text(op.kind.data, self.v(op.lhs), self.v(op.rhs), element)

    def where(self, op: tile.SelectOp) -> str:
        return f"tl.where({self.v(op.condition)}, {self.v(op.on_true)}, {self.v(op.on_false)})"

    def cast(self, op: tile.CastOp) -> str:
        source = tt.element_of(op.input.type)
        text = self.v(op.input)
        if _is_induction_variable(op.input):
            # A Python int under Triton's interpreter, which has no ``.to``.
            text = f"tl.cast({text}, {tl_type(source)})"
        return cast_text(text, source, tt.element_of(op.result.type))

    def reduce(self, op: tile.ReduceOp) -> str:
        return reduce_text(
            op.kind.data,
            self.v(op.input),
            self._dims(tt.shape_of(op.input.type)),
            tt.element_of(op.input.type),
            op.axis.value.data,
            tt.element_of(op.result.type),
        )

    def scan(self, op: tile.ScanOp) -> str:
        return scan_text(
            op.kind.data,
            self.v(op.input),
            tt.element_of(op.input.type),
            op.axis.value.data,
        )

    def dot(self, op: tile.DotOp) -> str:
        return dot_text(
            self.v(op.lhs),
            self.v(op.rhs),
            self.v(op.acc),
            tt.element_of(op.lhs.type),
            tt.element_of(op.acc.type),
            self._matmul_precision(),
        )

    def _matmul_precision(self) -> str:
        """The kernel's ``matmul_precision`` attribute (``ieee`` without one)."""
        attribute = self.kernel.attributes.get(MATMUL_PRECISION_ATTRIBUTE)
        if attribute is None:
            return "ieee"
        if not isinstance(attribute, StringAttr) or attribute.data not in set(
            MatmulPrecision
        ):
            raise EmitError(
                f"triton.kernel @{self.kernel.kernel_name} has "
                f"{MATMUL_PRECISION_ATTRIBUTE} = {attribute}; it must be one of "
                f"{', '.join(repr(str(p)) for p in MatmulPrecision)}"
            )
        return attribute.data

    def load(self, op: tt.LoadOp) -> str:
        shape = tt.shape_of(op.result.type)
        offset = self._broadcast_to(op.offset, shape)
        address = f"{self.v(op.pointer)} + {offset}"
        if op.mask is None:
            return f"tl.load({address})"
        return f"tl.load({address}, mask={self._broadcast_to(op.mask, shape)}, other=0)"

    def _store(self, op: tt.StoreOp) -> str:
        operands = [op.value, op.offset, *([] if op.mask is None else [op.mask])]
        shape = tt.broadcast_tile_shapes(*(tt.shape_of(v.type) for v in operands))
        value = self._broadcast_to(op.value, shape)
        address = f"{self.v(op.pointer)} + {self._broadcast_to(op.offset, shape)}"
        if op.mask is None:
            return f"tl.store({address}, {value})"
        return (
            f"tl.store({address}, {value}, mask={self._broadcast_to(op.mask, shape)})"
        )

    def _broadcast_to(self, value: SSAValue, shape: Sequence[int]) -> str:
        """Explicit broadcasting where Triton would not do it itself (a load's
        mask or a store's value wider than its pointer block)."""
        if tt.shape_of(value.type) == tuple(shape):
            return self.v(value)
        return f"tl.broadcast_to({self.v(value)}, {self._shape_text(shape)})"


_EXPRESSIONS: dict[type[Operation], Callable[[KernelEmitter, Operation], str]] = {
    tile.ProgramIdOp: KernelEmitter.program_id,
    tile.SizeOp: KernelEmitter.size,
    tile.RangeOp: KernelEmitter.arange,
    tile.BlockSizeOp: KernelEmitter.block_size,
    tile.ConstantOp: KernelEmitter.constant,
    tile.SplatOp: KernelEmitter.full,
    tile.UnaryOp: KernelEmitter.unary,
    tile.BinaryOp: KernelEmitter.binary,
    tile.CompareOp: KernelEmitter.compare,
    tile.SelectOp: KernelEmitter.where,
    tile.CastOp: KernelEmitter.cast,
    tile.ReduceOp: KernelEmitter.reduce,
    tile.ScanOp: KernelEmitter.scan,
    tile.DotOp: KernelEmitter.dot,
    tt.LoadOp: KernelEmitter.load,
}  # type: ignore[dict-item]


# --------------------------------------------------------------------------
# Comparison, cast and reduction spellings (16-bit floats as in
# irc.backend.triton.elementwise: in float32, rounded once)
# --------------------------------------------------------------------------


def compare_text(
    predicate: ComparisonPredicate, a: str, b: str, element: Attribute
) -> str:
    """``tile.cmp`` (NaN compares false, ``ne`` true)."""
    operator = COMPARISON_OPERATORS[predicate]
    return f"({wide(a, element)} {operator} {wide(b, element)})"


def _is_induction_variable(value: SSAValue) -> bool:
    """Whether ``value`` is the counter of an ``scf.for`` (a device loop's
    iteration index)."""
    return (
        isinstance(value, BlockArgument)
        and value.index == 0
        and isinstance(value.owner.parent_op(), scf.ForOp)
    )


def cast_text(x: str, source: Attribute, target: Attribute) -> str:
    """NumPy's ``astype``: to bool is ``!= 0``, float to int truncates, and
    16-bit floats convert through float32 (bfloat16 rounded by
    ``_irc_to_bf16``)."""
    if source == target:
        return x
    value = wide(x, source)
    if element_kind(target) == "b":
        return f"({value} != 0)"
    if dtype(target).name == "bfloat16":
        if dtype(source).name not in ("float32", "float16"):
            value = f"{value}.to(tl.float32)"
        return narrow(value, target)
    return f"{value}.to({tl_type(target)})"


def reduce_text(
    kind: str,
    x: str,
    shape: Sequence[int | str],
    element: Attribute,
    axis: int,
    result: Attribute,
) -> str:
    """``tile.reduce`` semantics in Triton (16-bit floats reduced in float32
    and rounded once; the result cast to its type, as Triton widens small
    types)."""
    family = element_kind(element)
    x_wide = wide(x, element)
    if kind == "argmax":
        index = f"tl.arange(0, {shape[axis]}){_index_suffix(shape, axis)}"
        found = f"_irc_argmax({x_wide}, {index}, {axis}, {shape[axis]})"
        return f"{found}.to({tl_type(result)})"
    if family == "b":
        any_ = f"(tl.max({x}.to(tl.int32), axis={axis}) > 0)"
        all_ = f"(tl.min({x}.to(tl.int32), axis={axis}) > 0)"
        return {"sum": any_, "max": any_, "prod": all_, "min": all_}[kind]
    if kind == "sum":
        text = f"tl.sum({x_wide}, axis={axis})"
    elif kind == "prod":
        text = f"tl.reduce({x_wide}, {axis}, _irc_mul)"
    elif family == "f":
        text = f"_irc_{kind}_f({x_wide}, {axis})"
    else:
        text = f"tl.{kind}({x}, axis={axis})"
    if is_half(element):
        return narrow(text, element)
    return f"{text}.to({tl_type(result)})"


def scan_text(kind: str, x: str, element: Attribute, axis: int) -> str:
    """``tile.scan`` semantics in Triton: ``tl.cumsum``/``tl.cumprod``, which
    the interpreter runs as NumPy's and the compiler as an in-register scan
    (16-bit floats scanned in float32 and rounded once; Triton keeps 32- and
    64-bit types)."""
    function = "tl.cumsum" if kind == "sum" else "tl.cumprod"
    text = f"{function}({wide(x, element)}, {axis})"
    return narrow(text, element) if is_half(element) else text


def dot_text(
    a: str,
    b: str,
    acc: str,
    element: Attribute,
    accumulator: Attribute,
    precision: str = "ieee",
) -> str:
    """``acc + a @ b`` in the accumulator's type. 16-bit floats go to
    ``tl.dot`` as they are, accumulating in float32 (tensor cores; bfloat16
    through ``_irc_dot_bf16``, which the interpreter can run); float32 in
    IEEE fp32 by default, or TF32 on tensor cores when the kernel's
    ``matmul_precision`` says ``tf32``; float64 in IEEE; other types as a
    broadcast product summed over K (which both the interpreter and the
    compiler run)."""
    names = dtype(element).name, dtype(accumulator).name
    if names == ("float32", "float32"):
        return f'tl.dot({a}, {b}, {acc}, input_precision="{precision}")'
    if names == ("float64", "float64"):
        return f'tl.dot({a}, {b}, {acc}, input_precision="ieee")'
    if names == ("float16", "float32"):
        return f"tl.dot({a}, {b}, {acc})"
    if names == ("bfloat16", "float32"):
        return f"_irc_dot_bf16({a}, {b}, {acc})"
    compute = "tl.float32" if is_half(accumulator) else tl_type(accumulator)
    product = f"{a}[:, :, None].to({compute}) * {b}[None, :, :].to({compute})"
    total = f"({wide(acc, accumulator)} + tl.sum({product}, axis=1))"
    return narrow(total, accumulator) if is_half(accumulator) else total


def launch_tile_extents(kernel: tt.KernelOp) -> dict[str, SymExpr]:
    """The tiles whose size the launch chooses, each with the extent its
    lanes walk (the kernel's ``launch_tiles`` attribute: see
    ``irc.dialects.kernel_kind``). A chosen tile's declared size stands for
    it in the tile types, so it must be no other tile's size."""
    attribute = kernel.attributes.get(LAUNCH_TILES_ATTRIBUTE)
    if attribute is None:
        return {}
    where = f"triton.kernel @{kernel.kernel_name}'s {LAUNCH_TILES_ATTRIBUTE}"
    sizes = kernel.tile_sizes
    if not isinstance(attribute, DictionaryAttr) or not all(
        isinstance(v, SymExprAttr) for v in attribute.data.values()
    ):
        raise EmitError(f"{where} must map tiles to symbolic extents")
    extents = {name: cast(SymExprAttr, v).data for name, v in attribute.data.items()}
    for name in extents:
        if name not in sizes:
            raise EmitError(f"{where} names {name!r}, not a tile of the kernel")
        if list(sizes.values()).count(sizes[name]) > 1:
            raise EmitError(
                f"{where}: tile {name} has the declared size of another tile "
                f"({sizes[name]}), so its dims cannot be told apart"
            )
    return extents
