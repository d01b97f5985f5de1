"""The triton dialect: kernels as Triton writes them, one op per ``tl`` call.

This is the last level before Python source. ``lower-memory-to-triton``
turns every ``memory.kernel`` into a ``triton.kernel`` whose arguments are
what a ``@triton.jit`` function receives: one ``!triton.ptr<f32>`` per
buffer (inputs first, then outputs), then one integer scalar per symbol the
body uses, named by the symbol; the tile sizes are its constexprs. The body
mirrors ``triton.language`` one to one, so the emitter
(``irc.lowering.emit_triton``) is a printer:

==================================  ==========================================
op                                  Triton
==================================  ==========================================
``triton.program_id 0 : i64``       ``tl.program_id(0)`` (widened to i64)
``triton.arange "B" : T<[B, 1]>``   ``tl.arange(0, B)[:, None]``
``triton.size 4*N + 1 : i64``       ``4 * N + 1`` over the symbol arguments
``triton.constant 1.5 : f32``       ``tl.full([], 1.5, tl.float32)``
``triton.full %s : f32 -> T``       ``tl.broadcast_to(s, [..])`` (a splat)
``triton.unary "exp" %x``           ``tl.exp(x)`` (and NumPy-exact helpers)
``triton.binary "add" %a, %b``      ``a + b``
``triton.cmp "lt" %a, %b``          ``a < b``
``triton.where %c, %a, %b``         ``tl.where(c, a, b)``
``triton.cast %x : T1 -> T2``       ``x.to(tl.int64)``
``triton.load %p[%off] mask %m``    ``tl.load(p + off, mask=m, other=0)``
``triton.store %v, %p[%off]``       ``tl.store(p + off, v, mask=m)``
``triton.dot %a, %b, %acc``         ``tl.dot(a, b, acc, input_precision="ieee")``
``triton.reduce "sum" %t 0``        ``tl.sum(t, axis=0)``
``scf.for`` / ``scf.yield``         ``for k in range(lb, ub, step):``
==================================  ==========================================

Values are scalars (builtin ``i64``, ``f32``, ``i1``: Triton's 0-d tensors)
or blocks, ``!triton.tensor<[128, 1], f32>``. The block type is this
dialect's own rather than ``loop.tile`` so that a triton-level module
depends on no other level's types (only the host functions keep memory ops)
and so that its verifier can state Triton's own limits (a block holds at
most 2**20 elements); its dims are explicit, 1 included, because
``tl.arange(0, B)[:, None]`` and ``tl.arange(0, B)[None, :]`` differ.

The kinds of ``unary``, ``binary``, ``cmp`` and ``reduce`` are the loop
dialect's, with its semantics (NumPy's): the emitter is responsible for
spelling them in Triton so that they compute what NumPy computes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.graph import ELEMENT_TYPES, SymExprAttr, parse_sym_expr
from irc.dialects.loop import (
    BINARY_KINDS,
    COMPARE_KINDS,
    KERNEL_KINDS,
    REDUCE_KINDS,
    UNARY_KINDS,
    broadcast_tile_shapes,
    parse_kernel_header,
    parse_launch_attributes,
    print_launch_attributes,
)
from irc.shapes import SymExpr, as_expr

#: Triton's limit on the number of elements of one block.
MAX_BLOCK_NUMEL = 2**20

# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """``!triton.ptr<f32>``: a pointer to the first element of a buffer, as
    a ``@triton.jit`` function receives a torch tensor."""

    name = "triton.ptr"

    element_type: Attribute

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (parser.parse_type(),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if self.element_type not in ELEMENT_TYPES:
            supported = ", ".join(str(t) for t in ELEMENT_TYPES)
            raise VerifyException(
                f"unsupported element type {self.element_type} in triton.ptr; "
                f"supported: {supported}"
            )


@irdl_attr_definition
class BlockType(ParametrizedAttribute, TypeAttribute):
    """A block of values, ``!triton.tensor<[128, 1], f32>``: Triton's
    ``tl.tensor`` of a ``block_type``.

    Dims are powers of two (1 included), at most 2**20 elements in all;
    scalars are builtin types, not blocks of rank 0.
    """

    name = "triton.tensor"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, shape: Iterable[int], element_type: Attribute):
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type)

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def numel(self) -> int:
        count = 1
        for dim in self.dims:
            count *= dim
        return count

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_integer
            )
            parser.parse_punctuation(",")
            element_type = parser.parse_type()
        return (ArrayAttr(IntAttr(d) for d in dims), element_type)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{', '.join(str(d) for d in self.dims)}], ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if not self.dims:
            raise VerifyException(
                "a triton.tensor has rank >= 1; a scalar is a builtin type"
            )
        for dim in self.dims:
            if dim < 1 or dim & (dim - 1):
                raise VerifyException(
                    f"triton.tensor dims must be powers of two (or 1), not {dim}"
                )
        if self.numel > MAX_BLOCK_NUMEL:
            raise VerifyException(
                f"a triton.tensor holds at most {MAX_BLOCK_NUMEL} elements, not "
                f"{self.numel}"
            )


def shape_of(type_: Attribute) -> tuple[int, ...]:
    """The block shape of a triton value's type; ``()`` for a scalar."""
    return type_.dims if isinstance(type_, BlockType) else ()


def element_of(type_: Attribute) -> Attribute:
    """The element type of a triton value's type."""
    return type_.element_type if isinstance(type_, BlockType) else type_


def value_type(shape: Sequence[int], element_type: Attribute) -> Attribute:
    """A block of ``shape``, or the scalar type itself for shape ``()``."""
    return BlockType(shape, element_type) if shape else element_type


def _broadcast(op: Operation, *types: Attribute) -> tuple[int, ...]:
    try:
        return broadcast_tile_shapes(*(shape_of(t) for t in types))
    except ValueError as err:
        raise VerifyException(f"{op.name}: {err}") from err


def _verify_broadcast(
    op: Operation, operands: Sequence[Attribute], result: Attribute
) -> None:
    expected = _broadcast(op, *operands)
    if shape_of(result) != expected:
        raise VerifyException(
            f"{op.name}: result shape {list(shape_of(result))} must be the "
            f"broadcast shape {list(expected)}"
        )


def _check_kind(op: Operation, kind: StringAttr, known: frozenset[str]) -> None:
    if kind.data not in known:
        raise VerifyException(
            f"{op.name}: unknown kind {kind.data!r}; expected one of {sorted(known)}"
        )


def _is_index(type_: Attribute) -> bool:
    element = element_of(type_)
    return isinstance(element, IntegerType) and element.width.data in (32, 64)


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A ``@triton.jit`` function, at module level; host functions launch it
    with ``memory.launch``.

    ``triton.kernel @k0 reduction (%x: !triton.ptr<f32>, %out:
    !triton.ptr<f32>, %N: i64) inputs 1 grid [N] tiles {BLOCK = 128}
    symbols [N] reason "..." { ... }``

    The arguments are one pointer per buffer of the ``memory.kernel`` it
    comes from (the first ``inputs`` are read, the others written), then one
    integer per symbol, in the order of ``symbols``: the launcher passes the
    symbols' values. ``tiles`` are the kernel's ``tl.constexpr`` parameters;
    ``grid`` (programs per axis), ``kind`` and ``reason`` (why the kernel
    exists, with the source locations of its ops) mean what they mean on
    ``loop.kernel``.
    """

    name = "triton.kernel"

    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    inputs = prop_def(IntegerAttr[I64])
    grid = prop_def(ArrayAttr[SymExprAttr])
    tiles = prop_def(DictionaryAttr)
    symbols = prop_def(ArrayAttr[StringAttr])
    reason = prop_def(StringAttr)

    body = region_def("single_block")

    traits = traits_def(
        IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), HasParent(ModuleOp)
    )

    def __init__(
        self,
        name: str,
        kind: str,
        num_inputs: int,
        grid: Sequence[SymExpr | int],
        tiles: Mapping[str, int],
        symbols: Iterable[str],
        body: Region,
        reason: str = "",
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "kind": StringAttr(kind),
                "inputs": IntegerAttr(num_inputs, i64),
                "grid": ArrayAttr(SymExprAttr(as_expr(g)) for g in grid),
                "tiles": DictionaryAttr(
                    {k: IntegerAttr(v, i64) for k, v in tiles.items()}
                ),
                "symbols": ArrayAttr(StringAttr(s) for s in symbols),
                "reason": StringAttr(reason),
            },
            regions=[body],
        )

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    @property
    def num_inputs(self) -> int:
        return self.inputs.value.data

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args)

    @property
    def pointer_args(self) -> tuple[BlockArgument, ...]:
        """The buffers' pointers: inputs, then outputs."""
        return self.args[: len(self.args) - len(self.symbols.data)]

    @property
    def output_args(self) -> tuple[BlockArgument, ...]:
        return self.pointer_args[self.num_inputs :]

    @property
    def symbol_args(self) -> tuple[BlockArgument, ...]:
        """One integer per symbol, in the order of ``symbol_names``."""
        return self.args[len(self.pointer_args) :]

    @property
    def grid_exprs(self) -> tuple[SymExpr, ...]:
        return tuple(g.data for g in self.grid.data)

    @property
    def tile_sizes(self) -> dict[str, int]:
        return {
            name: cast(IntegerAttr, value).value.data
            for name, value in self.tiles.data.items()
        }

    @property
    def symbol_names(self) -> tuple[str, ...]:
        return tuple(s.data for s in self.symbols.data)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, kind = parse_kernel_header(parser)
        arguments = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_argument
        )
        parser.parse_keyword("inputs")
        num_inputs = parser.parse_integer(allow_boolean=False, allow_negative=False)
        grid, tiles, symbols, reason = parse_launch_attributes(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(arguments)
        op = cls(name, kind, num_inputs, grid, tiles, symbols, body, reason)
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.kernel_name} {self.kind.data} (")
        printer.print_list(self.args, printer.print_block_argument)
        printer.print_string(f") inputs {self.num_inputs}")
        print_launch_attributes(
            printer,
            self.grid_exprs,
            self.tile_sizes,
            self.symbol_names,
            self.reason.data,
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    def verify_(self) -> None:
        if self.kind.data not in KERNEL_KINDS:
            raise VerifyException(
                f"unknown kernel kind {self.kind.data!r}; expected one of {KERNEL_KINDS}"
            )
        if not 1 <= len(self.grid.data) <= 3:
            raise VerifyException("a triton.kernel grid has 1 to 3 axes")
        self._verify_arguments()
        for name, size in self.tile_sizes.items():
            if size < 1 or size & (size - 1):
                raise VerifyException(f"tile {name} = {size} is not a power of two")
        self._verify_body_ops()

    def _verify_arguments(self) -> None:
        symbols = self.symbol_names
        if len(set(symbols)) != len(symbols):
            raise VerifyException(
                f"triton.kernel symbols {list(symbols)} repeat a name"
            )
        if len(self.args) < len(symbols):
            raise VerifyException(
                f"triton.kernel has {len(self.args)} arguments, fewer than its "
                f"{len(symbols)} symbols"
            )
        for index, arg in enumerate(self.pointer_args):
            if not isinstance(arg.type, PointerType):
                raise VerifyException(
                    f"triton.kernel argument {index} has type {arg.type}; the "
                    "arguments before the symbols are !triton.ptr values"
                )
        for symbol, arg in zip(symbols, self.symbol_args, strict=True):
            if not _is_index(arg.type) or isinstance(arg.type, BlockType):
                raise VerifyException(
                    f"triton.kernel argument of symbol {symbol} has type {arg.type}; "
                    "symbols are i32 or i64 scalars"
                )
        if self.num_inputs > len(self.pointer_args):
            raise VerifyException(
                f"triton.kernel declares {self.num_inputs} inputs but has only "
                f"{len(self.pointer_args)} pointer arguments"
            )

    def _verify_body_ops(self) -> None:
        """Sizes use declared symbols, ranges declared tiles; stores write
        output pointers only."""
        known = set(self.symbol_names)
        tiles = self.tile_sizes
        outputs = set(self.output_args)
        for op in self.body.walk():
            if isinstance(op, SizeOp) and not op.expr.data.symbols <= known:
                missing = sorted(op.expr.data.symbols - known)
                raise VerifyException(
                    f"triton.size uses {missing}, not among the kernel's symbols"
                )
            if isinstance(op, ArangeOp):
                block = op.block.data
                if block not in tiles:
                    raise VerifyException(f"triton.arange names unknown tile {block!r}")
                if max(shape_of(op.result.type)) != tiles[block]:
                    raise VerifyException(
                        f"triton.arange {block!r} must span {tiles[block]} lanes"
                    )
            if isinstance(op, StoreOp) and op.pointer not in outputs:
                raise VerifyException(
                    f"triton.store to a pointer that is not one of @{self.kernel_name}'s "
                    f"{len(outputs)} output arguments"
                )


def enclosing_kernel(op: Operation) -> KernelOp | None:
    """The ``triton.kernel`` that holds ``op``, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


# --------------------------------------------------------------------------
# Indices and sizes
# --------------------------------------------------------------------------


@irdl_op_definition
class ProgramIdOp(IRDLOperation):
    """``triton.program_id 0 : i64``: ``tl.program_id(0)``, in the result's
    integer type (Triton's is i32; i64 widens it before any arithmetic)."""

    name = "triton.program_id"
    axis = prop_def(IntegerAttr[I64])
    result = result_def(IntegerType)
    traits = traits_def(Pure())
    assembly_format = "$axis attr-dict `:` type($result)"

    def __init__(self, axis: int, index_type: IntegerType):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64)}, result_types=[index_type]
        )

    def verify_(self) -> None:
        if not 0 <= self.axis.value.data <= 2:
            raise VerifyException("triton.program_id axis must be 0, 1 or 2")
        if not _is_index(self.result.type):
            raise VerifyException("triton.program_id yields i32 or i64")


@irdl_op_definition
class SizeOp(IRDLOperation):
    """``triton.size 4*N + 1 : i64``: arithmetic on the kernel's symbol
    arguments, computed in the result type (the symbols are cast to it
    first, so an i64 size never wraps at 2**31 even when Triton passes a
    symbol as i32)."""

    name = "triton.size"
    expr = prop_def(SymExprAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    def __init__(self, expr: SymExpr | int, index_type: IntegerType):
        super().__init__(
            properties={"expr": SymExprAttr(as_expr(expr))}, result_types=[index_type]
        )

    @classmethod
    def parse(cls, parser: Parser) -> SizeOp:
        expr = parse_sym_expr(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        start = parser.pos
        index_type = parser.parse_type()
        if not isinstance(index_type, IntegerType):
            parser.raise_error("triton.size yields an integer type", start, parser.pos)
        op = cls(expr, index_type)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.expr.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        if not _is_index(self.result.type):
            raise VerifyException("triton.size yields i32 or i64")


@irdl_op_definition
class ArangeOp(IRDLOperation):
    """``triton.arange "BLOCK" : !triton.tensor<[1, 64], i64>``:
    ``tl.arange(0, BLOCK)[None, :]``, laid along the one dim that is not 1."""

    name = "triton.arange"
    block = prop_def(StringAttr)
    result = result_def(BlockType)
    traits = traits_def(Pure())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, shape: Sequence[int], index_type: IntegerType):
        super().__init__(
            properties={"block": StringAttr(block)},
            result_types=[BlockType(shape, index_type)],
        )

    def verify_(self) -> None:
        if sum(d != 1 for d in shape_of(self.result.type)) > 1:
            raise VerifyException("triton.arange spans one dim of its block")
        if not _is_index(self.result.type):
            raise VerifyException("triton.arange yields i32 or i64")


# --------------------------------------------------------------------------
# Compute
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """``triton.constant 1.5 : f32``: a typed scalar constant."""

    name = "triton.constant"
    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, value: IntegerAttr | FloatAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, IntegerAttr | FloatAttr):
            parser.raise_error(
                "triton.constant takes a typed integer or float", start, parser.pos
            )
        op = cls(value)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise VerifyException(
                "triton.constant result type must be the value's type"
            )


@irdl_op_definition
class FullOp(IRDLOperation):
    """``triton.full %s : f32 -> !triton.tensor<[64, 64], f32>``: a block
    with the scalar in every lane (a splat)."""

    name = "triton.full"
    input = operand_def()
    result = result_def(BlockType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[value], result_types=[BlockType(shape, value.type)])

    def verify_(self) -> None:
        if isinstance(self.input.type, BlockType):
            raise VerifyException("triton.full takes a scalar")
        if element_of(self.result.type) != self.input.type:
            raise VerifyException("triton.full keeps the element type")


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """``triton.unary "exp" %x : !triton.tensor<[128], f32>``; kinds and
    semantics are ``loop.unary``'s."""

    name = "triton.unary"
    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(StringAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($result)"

    def __init__(self, kind: str, value: SSAValue):
        super().__init__(
            operands=[value],
            properties={"kind": StringAttr(kind)},
            result_types=[value.type],
        )

    def verify_(self) -> None:
        _check_kind(self, self.kind, UNARY_KINDS)


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """``triton.binary "add" %a, %b : (f32, !triton.tensor<[128], f32>) ->
    !triton.tensor<[128], f32>``: elementwise with block broadcasting; kinds
    and semantics (``floordiv``, ``rem``, ``pow``, ``max`` as NumPy) are
    ``loop.binary``'s."""

    name = "triton.binary"
    kind = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        shape = broadcast_tile_shapes(shape_of(lhs.type), shape_of(rhs.type))
        super().__init__(
            operands=[lhs, rhs],
            properties={"kind": StringAttr(kind)},
            result_types=[value_type(shape, element_of(lhs.type))],
        )

    def verify_(self) -> None:
        _check_kind(self, self.kind, BINARY_KINDS)
        element = element_of(self.result.type)
        if element_of(self.lhs.type) != element or element_of(self.rhs.type) != element:
            raise VerifyException(
                "triton.binary operands must have the result's element type"
            )
        _verify_broadcast(self, [self.lhs.type, self.rhs.type], self.result.type)


@irdl_op_definition
class CompareOp(IRDLOperation):
    """``triton.cmp "lt" %a, %b : (T1, T2) -> !triton.tensor<[128], i1>``."""

    name = "triton.cmp"
    kind = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        shape = broadcast_tile_shapes(shape_of(lhs.type), shape_of(rhs.type))
        super().__init__(
            operands=[lhs, rhs],
            properties={"kind": StringAttr(kind)},
            result_types=[value_type(shape, i1)],
        )

    def verify_(self) -> None:
        _check_kind(self, self.kind, COMPARE_KINDS)
        if element_of(self.lhs.type) != element_of(self.rhs.type):
            raise VerifyException("triton.cmp operands must share an element type")
        if element_of(self.result.type) != i1:
            raise VerifyException("triton.cmp yields i1")
        _verify_broadcast(self, [self.lhs.type, self.rhs.type], self.result.type)


@irdl_op_definition
class WhereOp(IRDLOperation):
    """``triton.where %c, %a, %b : (Tc, Ta, Tb) -> T``: ``tl.where``."""

    name = "triton.where"
    condition = operand_def()
    on_true = operand_def()
    on_false = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$condition `,` $on_true `,` $on_false attr-dict `:` `(` type($condition) `,` "
        "type($on_true) `,` type($on_false) `)` `->` type($result)"
    )

    def __init__(self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue):
        shape = broadcast_tile_shapes(
            shape_of(condition.type), shape_of(on_true.type), shape_of(on_false.type)
        )
        super().__init__(
            operands=[condition, on_true, on_false],
            result_types=[value_type(shape, element_of(on_true.type))],
        )

    def verify_(self) -> None:
        if element_of(self.condition.type) != i1:
            raise VerifyException("triton.where condition must be i1")
        element = element_of(self.result.type)
        if (
            element_of(self.on_true.type) != element
            or element_of(self.on_false.type) != element
        ):
            raise VerifyException(
                "triton.where branches must have the result's element type"
            )
        _verify_broadcast(
            self,
            [self.condition.type, self.on_true.type, self.on_false.type],
            self.result.type,
        )


@irdl_op_definition
class CastOp(IRDLOperation):
    """``triton.cast %x : !triton.tensor<[128], f32> -> !triton.tensor<[128],
    i64>``: NumPy's ``astype`` (float to int truncates; to i1 is ``!= 0``)."""

    name = "triton.cast"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, element_type: Attribute):
        super().__init__(
            operands=[value],
            result_types=[value_type(shape_of(value.type), element_type)],
        )

    def verify_(self) -> None:
        if shape_of(self.input.type) != shape_of(self.result.type):
            raise VerifyException("triton.cast keeps the block shape")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``triton.reduce "sum" %t 0 : !triton.tensor<[128], f32> -> f32``:
    ``tl.sum(t, axis=0)``; the kinds and their NumPy semantics (NaN
    propagates through max and min; argmax is the first maximum) are
    ``loop.reduce``'s."""

    name = "triton.reduce"
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def(BlockType)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $input $axis attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, kind: str, value: SSAValue, axis: int, index_type: Attribute | None = None
    ):
        shape = list(shape_of(value.type))
        del shape[axis]
        element = index_type if kind == "argmax" else element_of(value.type)
        assert element is not None, "argmax needs an index type"
        super().__init__(
            operands=[value],
            properties={"kind": StringAttr(kind), "axis": IntegerAttr(axis, i64)},
            result_types=[value_type(shape, element)],
        )

    def verify_(self) -> None:
        _check_kind(self, self.kind, REDUCE_KINDS)
        shape = list(shape_of(self.input.type))
        axis = self.axis.value.data
        if not 0 <= axis < len(shape):
            raise VerifyException(f"triton.reduce axis {axis} out of range")
        del shape[axis]
        if tuple(shape) != shape_of(self.result.type):
            raise VerifyException("triton.reduce result must drop the reduced dim")
        if self.kind.data == "argmax":
            if not _is_index(self.result.type):
                raise VerifyException("triton.reduce argmax yields i32 or i64")
        elif element_of(self.result.type) != element_of(self.input.type):
            raise VerifyException("triton.reduce keeps the element type")


@irdl_op_definition
class DotOp(IRDLOperation):
    """``triton.dot %a, %b, %acc``: ``acc + a @ b`` on 2-D blocks, computed
    in ``acc``'s type (IEEE fp32 for float inputs, as NumPy does)."""

    name = "triton.dot"
    lhs = operand_def(BlockType)
    rhs = operand_def(BlockType)
    acc = operand_def(BlockType)
    result = result_def(BlockType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `,` $acc attr-dict `:` `(` type($lhs) `,` type($rhs) `,` "
        "type($acc) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, acc: SSAValue):
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc.type])

    def verify_(self) -> None:
        lhs, rhs = shape_of(self.lhs.type), shape_of(self.rhs.type)
        if len(lhs) != 2 or len(rhs) != 2:
            raise VerifyException("triton.dot takes 2-D blocks")
        (m, k), (k2, n) = lhs, rhs
        if k != k2 or shape_of(self.acc.type) != (m, n):
            raise VerifyException("triton.dot shapes must be [M, K] x [K, N] -> [M, N]")
        if element_of(self.lhs.type) != element_of(self.rhs.type):
            raise VerifyException("triton.dot operands must share an element type")
        if self.acc.type != self.result.type:
            raise VerifyException("triton.dot result has the accumulator's type")


# --------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------


def _verify_access(
    op: Operation, pointer: SSAValue, offset: SSAValue, mask: SSAValue | None
) -> None:
    kernel = enclosing_kernel(op)
    if kernel is None:
        raise VerifyException(f"{op.name} must be inside a triton.kernel")
    if pointer not in kernel.pointer_args:
        raise VerifyException(f"{op.name} takes a pointer argument of its kernel")
    if not _is_index(offset.type):
        raise VerifyException(
            f"{op.name} offset must be an i32 or i64 scalar or block, not {offset.type}"
        )
    if mask is not None and element_of(mask.type) != i1:
        raise VerifyException(f"{op.name} mask must be i1, not {element_of(mask.type)}")


def _pointee(pointer: SSAValue) -> Attribute:
    pointer_type = pointer.type
    assert isinstance(pointer_type, PointerType), "verified by the op's constraints"
    return pointer_type.element_type


@irdl_op_definition
class LoadOp(IRDLOperation):
    """``%v = triton.load %p[%off] mask %m : !triton.ptr<f32>[O] mask M ->
    T``: ``tl.load(p + off, mask=m, other=0)``; masked lanes read 0 and
    touch no memory."""

    name = "triton.load"
    pointer = operand_def(PointerType)
    offset = operand_def()
    mask = opt_operand_def()
    result = result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$pointer `[` $offset `]` (`mask` $mask^)? attr-dict `:` type($pointer) "
        "`[` type($offset) `]` (`mask` type($mask)^)? `->` type($result)"
    )

    def __init__(
        self, pointer: SSAValue, offset: SSAValue, mask: SSAValue | None = None
    ):
        types = [offset.type] if mask is None else [offset.type, mask.type]
        shape = broadcast_tile_shapes(*(shape_of(t) for t in types))
        super().__init__(
            operands=[pointer, offset, [] if mask is None else [mask]],
            result_types=[value_type(shape, _pointee(pointer))],
        )

    def verify_(self) -> None:
        _verify_access(self, self.pointer, self.offset, self.mask)
        types = [self.offset.type] + ([] if self.mask is None else [self.mask.type])
        expected = value_type(_broadcast(self, *types), _pointee(self.pointer))
        if self.result.type != expected:
            raise VerifyException(
                f"triton.load yields {expected} (the pointee at the broadcast "
                f"shape of offset and mask), not {self.result.type}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """``triton.store %v, %p[%off] mask %m : V, !triton.ptr<f32>[O] mask
    M``: ``tl.store(p + off, v, mask=m)``, the value broadcast to the shape
    of offset and mask; masked lanes touch no memory."""

    name = "triton.store"
    value = operand_def()
    pointer = operand_def(PointerType)
    offset = operand_def()
    mask = opt_operand_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $pointer `[` $offset `]` (`mask` $mask^)? attr-dict `:` "
        "type($value) `,` type($pointer) `[` type($offset) `]` (`mask` type($mask)^)?"
    )

    def __init__(
        self,
        value: SSAValue,
        pointer: SSAValue,
        offset: SSAValue,
        mask: SSAValue | None = None,
    ):
        super().__init__(
            operands=[value, pointer, offset, [] if mask is None else [mask]]
        )

    def verify_(self) -> None:
        _verify_access(self, self.pointer, self.offset, self.mask)
        if element_of(self.value.type) != _pointee(self.pointer):
            raise VerifyException(
                f"triton.store of {element_of(self.value.type)} values through a "
                f"pointer to {_pointee(self.pointer)}"
            )
        types = [self.value.type, self.offset.type]
        _broadcast(self, *types, *([] if self.mask is None else [self.mask.type]))


Triton = Dialect(
    "triton",
    [
        KernelOp,
        ProgramIdOp,
        SizeOp,
        ArangeOp,
        ConstantOp,
        FullOp,
        UnaryOp,
        BinaryOp,
        CompareOp,
        WhereOp,
        CastOp,
        ReduceOp,
        DotOp,
        LoadOp,
        StoreOp,
    ],
    [PointerType, BlockType],
)
