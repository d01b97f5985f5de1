"""The loop dialect: each kernel as a tiled loop nest over symbolic extents.

A ``loop.kernel`` is what one fusion kernel becomes once tiled. It keeps
value semantics at its boundary (graph tensors in, graph tensors out) but
spells out how the work is split:

- the parallel **grid** (``grid = [N, (D*N + 1023) floordiv 1024]``): how many
  programs run along each axis, as symbolic expressions; a program reads its
  coordinates with ``loop.program_id``;
- power-of-two **tiles** (``tiles = {BLOCK = 1024}``): the block sizes that
  become ``tl.constexpr`` parameters; ``loop.range "BLOCK"`` is ``0 ..
  BLOCK-1`` laid along one dim of a tile;
- sequential loops (``scf.for`` with ``iter_args``) for reductions that do
  not fit a tile and for the K dimension of a matmul;
- tile-level compute (``loop.binary``, ``loop.reduce``, ``loop.dot``...) on
  values that are scalars (builtin ``f32``, ``i64``, ...) or tiles
  (``!loop.tile<[64, 1], f32>``); shapes broadcast as in Triton.

Tensors are read element-wise at computed indices (``loop.read``, masked
lanes read 0) and results written the same way (``loop.write``): the memory
level turns these into loads and stores of buffers with strides. Symbolic
sizes are ``loop.size`` ops whose value is an expression over the kernel's
``symbols``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import (
    Attribute,
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
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from irc.dialects.graph import (
    SymExprAttr,
    TensorType,
    parse_sym_expr,
    parse_sym_expr_list,
    shape_text,
)
from irc.shapes import SymExpr, as_expr

# --------------------------------------------------------------------------
# Tile type
# --------------------------------------------------------------------------


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """A tile of values: ``!loop.tile<[64, 1], f32>``.

    Dims are powers of two or 1; a dim of 1 broadcasts. Scalars are not
    tiles: they are plain builtin types (``f32``, ``i64``, ``i1``).
    """

    name = "loop.tile"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def __init__(self, shape: Iterable[int], element_type: Attribute):
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type)

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

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
                "a loop.tile has rank >= 1; a scalar is a builtin type"
            )
        for dim in self.dims:
            if dim < 1 or dim & (dim - 1):
                raise VerifyException(
                    f"loop.tile dims must be powers of two (or 1), not {dim}"
                )


def shape_of(type_: Attribute) -> tuple[int, ...]:
    """The tile shape of a loop value's type; ``()`` for a scalar."""
    return type_.dims if isinstance(type_, TileType) else ()


def element_of(type_: Attribute) -> Attribute:
    """The element type of a loop value's type."""
    return type_.element_type if isinstance(type_, TileType) else type_


def value_type(shape: Sequence[int], element_type: Attribute) -> Attribute:
    """The type of a loop value: a tile, or the scalar type for shape ``()``."""
    return TileType(shape, element_type) if shape else element_type


def broadcast_tile_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Triton's broadcasting of tile shapes (right-aligned, 1 stretches)."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        padded = [1] * (rank - len(shape)) + list(shape)
        for axis, dim in enumerate(padded):
            if dim == 1:
                continue
            if result[axis] not in (1, dim):
                raise ValueError(f"tile shapes {list(shapes)} do not broadcast")
            result[axis] = dim
    return tuple(result)


def _verify_broadcast(
    op: Operation, shapes: Sequence[Sequence[int]], result: Attribute
) -> None:
    try:
        expected = broadcast_tile_shapes(*shapes)
    except ValueError as err:
        raise VerifyException(f"{op.name}: {err}") from err
    if shape_of(result) != expected:
        raise VerifyException(
            f"{op.name}: result shape {list(shape_of(result))} must be the "
            f"broadcast shape {list(expected)}"
        )


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------


def parse_kernel_header(parser: Parser) -> tuple[str, str]:
    """``@name kind``: a kernel's name and kind."""
    name = parser.parse_symbol_name().data
    kind = parser.parse_identifier()
    return name, kind


def parse_launch_attributes(
    parser: Parser,
) -> tuple[list[SymExpr], dict[str, int], list[str], str]:
    """``grid [e, ...] tiles {B = 64, ...} symbols [N, ...] reason "..."``."""
    parser.parse_keyword("grid")
    grid = parse_sym_expr_list(parser)
    parser.parse_keyword("tiles")

    def parse_tile() -> tuple[str, int]:
        name = parser.parse_identifier()
        parser.parse_punctuation("=")
        return name, parser.parse_integer(allow_boolean=False, allow_negative=False)

    tiles = dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_tile))
    parser.parse_keyword("symbols")
    symbols = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, parser.parse_identifier
    )
    parser.parse_keyword("reason")
    reason = parser.parse_str_literal()
    return grid, tiles, symbols, reason


def print_launch_attributes(
    printer: Printer,
    grid: Sequence[SymExpr],
    tiles: Mapping[str, int],
    symbols: Sequence[str],
    reason: str,
) -> None:
    """Print what ``parse_launch_attributes`` parses."""
    printer.print_string(f" grid {shape_text(grid)} tiles {{")
    printer.print_string(", ".join(f"{k} = {v}" for k, v in tiles.items()))
    printer.print_string(f"}} symbols [{', '.join(symbols)}] reason ")
    printer.print_string_literal(reason)


KERNEL_KINDS = ("pointwise", "reduction", "matmul")


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A tiled kernel with value semantics at its boundary.

    ``grid`` gives the number of programs along each launch axis (1 to 3),
    ``tiles`` the block sizes, ``symbols`` the symbols the body's
    ``loop.size`` ops may use (they become scalar kernel arguments). The
    body's block arguments are the inputs; results are defined by the
    body's ``loop.write`` ops, each naming its output by position.
    """

    name = "loop.kernel"

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)

    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    grid = prop_def(ArrayAttr[SymExprAttr])
    tiles = prop_def(DictionaryAttr)
    symbols = prop_def(ArrayAttr[StringAttr])
    reason = prop_def(StringAttr)

    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator())

    # loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK = 128} symbols [D, N]
    #     reason "..." : (T1) -> (T2) { ^bb0(%a: T1): ... }

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        header = parse_kernel_header(parser)
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        grid, tiles, symbols, reason = parse_launch_attributes(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        input_types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        parser.parse_punctuation("->")
        output_types = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        if len(input_types) != len(operands):
            parser.raise_error(
                f"loop.kernel has {len(operands)} inputs but {len(input_types)} input types"
            )
        inputs = parser.resolve_operands(operands, input_types, parser.pos)
        body = parser.parse_region()
        op = cls(
            header[0],
            header[1],
            inputs,
            output_types,
            grid,
            tiles,
            symbols,
            body,
            reason,
        )
        if attributes is not None:
            op.attributes |= attributes.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.kernel_name} {self.kind.data} (")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(")")
        print_launch_attributes(
            printer,
            self.grid_exprs,
            self.tile_sizes,
            self.symbol_names,
            self.reason.data,
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list((v.type for v in self.outputs), printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=True)

    def __init__(
        self,
        name: str,
        kind: str,
        inputs: Sequence[SSAValue],
        output_types: Sequence[TensorType],
        grid: Sequence[SymExpr | int],
        tiles: Mapping[str, int],
        symbols: Iterable[str],
        body: Region,
        reason: str = "",
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={
                "sym_name": StringAttr(name),
                "kind": StringAttr(kind),
                "grid": ArrayAttr(SymExprAttr(as_expr(g)) for g in grid),
                "tiles": DictionaryAttr(
                    {k: IntegerAttr(v, i64) for k, v in tiles.items()}
                ),
                "symbols": ArrayAttr(StringAttr(s) for s in sorted(symbols)),
                "reason": StringAttr(reason),
            },
            regions=[body],
        )

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

    @property
    def grid_exprs(self) -> tuple[SymExpr, ...]:
        return tuple(g.data for g in self.grid.data)

    @property
    def tile_sizes(self) -> dict[str, int]:
        return {
            name: value.value.data  # type: ignore[union-attr]
            for name, value in self.tiles.data.items()
        }

    @property
    def symbol_names(self) -> tuple[str, ...]:
        return tuple(s.data for s in self.symbols.data)

    def verify_(self) -> None:
        if self.kind.data not in KERNEL_KINDS:
            raise VerifyException(
                f"unknown kernel kind {self.kind.data!r}; expected one of {KERNEL_KINDS}"
            )
        if not 1 <= len(self.grid.data) <= 3:
            raise VerifyException("a loop.kernel grid has 1 to 3 axes")
        args = self.body.block.args
        if [a.type for a in args] != [o.type for o in self.inputs]:
            raise VerifyException("loop.kernel block arguments must match its inputs")
        for name, size in self.tile_sizes.items():
            if size < 1 or size & (size - 1):
                raise VerifyException(f"tile {name} = {size} is not a power of two")
        known = set(self.symbol_names)
        written: set[int] = set()
        for op in self.body.walk():
            if isinstance(op, SizeOp) and not op.expr.data.symbols <= known:
                missing = sorted(op.expr.data.symbols - known)
                raise VerifyException(
                    f"loop.size uses {missing}, not among the kernel's symbols"
                )
            if isinstance(op, RangeOp) and op.block.data not in self.tile_sizes:
                raise VerifyException(
                    f"loop.range names unknown tile {op.block.data!r}"
                )
            if (
                isinstance(op, RangeOp)
                and max(shape_of(op.result.type)) != self.tile_sizes[op.block.data]
            ):
                raise VerifyException(
                    f"loop.range {op.block.data!r} must span {self.tile_sizes[op.block.data]} lanes"
                )
            if isinstance(op, WriteOp):
                index = op.output_index
                if not 0 <= index < len(self.outputs):
                    raise VerifyException(
                        f"loop.write to output {index}, which does not exist"
                    )
                written.add(index)
        if written != set(range(len(self.outputs))):
            missing = sorted(set(range(len(self.outputs))) - written)
            raise VerifyException(f"loop.kernel never writes outputs {missing}")


# --------------------------------------------------------------------------
# Indices and sizes
# --------------------------------------------------------------------------


@irdl_op_definition
class ProgramIdOp(IRDLOperation):
    """``loop.program_id 0 : i64``: this program's coordinate on a grid axis."""

    name = "loop.program_id"
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
            raise VerifyException("loop.program_id axis must be 0, 1 or 2")


@irdl_op_definition
class SizeOp(IRDLOperation):
    """``loop.size D*N : i64``: a symbolic size, evaluated from the kernel's
    symbols at launch."""

    name = "loop.size"
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
            parser.raise_error("loop.size yields an integer type", start, parser.pos)
        op = cls(expr, index_type)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.expr.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class RangeOp(IRDLOperation):
    """``loop.range "BLOCK" : !loop.tile<[1, 64], i64>``: ``0 .. BLOCK-1``
    along the one dim of the tile that is not 1."""

    name = "loop.range"
    block = prop_def(StringAttr)
    result = result_def(TileType)
    traits = traits_def(Pure())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, shape: Sequence[int], index_type: IntegerType):
        super().__init__(
            properties={"block": StringAttr(block)},
            result_types=[TileType(shape, index_type)],
        )

    def verify_(self) -> None:
        dims = shape_of(self.result.type)
        if sum(d != 1 for d in dims) > 1:
            raise VerifyException("loop.range spans one dim of its tile")
        if not isinstance(element_of(self.result.type), IntegerType):
            raise VerifyException("loop.range yields integers")


# --------------------------------------------------------------------------
# Tile compute
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """``loop.constant 1.5 : f32``: a scalar constant."""

    name = "loop.constant"
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
                "loop.constant takes a typed integer or float", start, parser.pos
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
            raise VerifyException("loop.constant result type must be the value's type")


@irdl_op_definition
class SplatOp(IRDLOperation):
    """``loop.splat %s : f32 -> !loop.tile<[64, 64], f32>``: a scalar
    copied to every lane of a tile."""

    name = "loop.splat"
    input = operand_def()
    result = result_def(TileType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[value], result_types=[TileType(shape, value.type)])

    def verify_(self) -> None:
        if isinstance(self.input.type, TileType):
            raise VerifyException("loop.splat takes a scalar")
        if element_of(self.result.type) != self.input.type:
            raise VerifyException("loop.splat keeps the element type")


UNARY_KINDS = frozenset(
    {
        "neg",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "sigmoid",
        "erf",
        "sin",
        "cos",
        "floor",
        "not",
    }
)
BINARY_KINDS = frozenset(
    {
        "add",
        "sub",
        "mul",
        "div",
        "floordiv",
        "rem",
        "pow",
        "max",
        "min",
        "and",
        "or",
        "xor",
    }
)
COMPARE_KINDS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
REDUCE_KINDS = frozenset({"sum", "prod", "max", "min", "argmax"})


def _check_kind(op: Operation, kind: StringAttr, known: frozenset[str]) -> None:
    if kind.data not in known:
        raise VerifyException(
            f"{op.name}: unknown kind {kind.data!r}; expected one of {sorted(known)}"
        )


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """``loop.unary "exp" %x : !loop.tile<[128], f32>``; ``floordiv`` and
    ``rem`` of the binary op, and these, follow NumPy's semantics."""

    name = "loop.unary"
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
        if self.input.type != self.result.type:
            raise VerifyException("loop.unary keeps its operand's type")


@irdl_op_definition
class BinaryOp(IRDLOperation):
    """``loop.binary "add" %a, %b : (f32, !loop.tile<[128], f32>) ->
    !loop.tile<[128], f32>``: elementwise with tile broadcasting; both
    operands have the result's element type."""

    name = "loop.binary"
    kind = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

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
                "loop.binary operands must have the result's element type"
            )
        _verify_broadcast(
            self, [shape_of(self.lhs.type), shape_of(self.rhs.type)], self.result.type
        )


@irdl_op_definition
class CompareOp(IRDLOperation):
    """``loop.cmp "lt" %a, %b : (T1, T2) -> !loop.tile<[128], i1>``."""

    name = "loop.cmp"
    kind = prop_def(StringAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

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
            raise VerifyException("loop.cmp operands must share an element type")
        if element_of(self.result.type) != i1:
            raise VerifyException("loop.cmp yields i1")
        _verify_broadcast(
            self, [shape_of(self.lhs.type), shape_of(self.rhs.type)], self.result.type
        )


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``loop.select %c, %a, %b : (Tc, Ta, Tb) -> T``: ``a`` where ``c``."""

    name = "loop.select"
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
            raise VerifyException("loop.select condition must be i1")
        element = element_of(self.result.type)
        if (
            element_of(self.on_true.type) != element
            or element_of(self.on_false.type) != element
        ):
            raise VerifyException(
                "loop.select branches must have the result's element type"
            )
        _verify_broadcast(
            self,
            [shape_of(o.type) for o in (self.condition, self.on_true, self.on_false)],
            self.result.type,
        )


@irdl_op_definition
class CastOp(IRDLOperation):
    """``loop.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i64>``
    (float to int truncates toward zero, as NumPy's ``astype``)."""

    name = "loop.cast"
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
            raise VerifyException("loop.cast keeps the tile shape")


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``loop.reduce "sum" %t 0 : !loop.tile<[128], f32> -> f32``: reduce one
    tile dim (it disappears from the shape). ``argmax`` yields the first
    lane holding the maximum, as an integer of the result type."""

    name = "loop.reduce"
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def(TileType)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $input $axis attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, kind: str, value: SSAValue, axis: int, index_type: Attribute | None = None
    ):
        shape = list(shape_of(value.type))
        del shape[axis]
        element = index_type if kind == "argmax" else element_of(value.type)
        assert element is not None
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
            raise VerifyException(f"loop.reduce axis {axis} out of range")
        del shape[axis]
        if tuple(shape) != shape_of(self.result.type):
            raise VerifyException("loop.reduce result must drop the reduced dim")
        if self.kind.data == "argmax":
            if not isinstance(element_of(self.result.type), IntegerType):
                raise VerifyException("loop.reduce argmax yields integers")
        elif element_of(self.result.type) != element_of(self.input.type):
            raise VerifyException("loop.reduce keeps the element type")


@irdl_op_definition
class DotOp(IRDLOperation):
    """``loop.dot %a, %b, %acc``: ``acc + a @ b`` on 2-D tiles
    (``[M, K] x [K, N] -> [M, N]``), accumulated in ``acc``'s type."""

    name = "loop.dot"
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    acc = operand_def(TileType)
    result = result_def(TileType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `,` $acc attr-dict `:` `(` type($lhs) `,` type($rhs) `,` "
        "type($acc) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, acc: SSAValue):
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc.type])

    def verify_(self) -> None:
        (m, k), (k2, n) = shape_of(self.lhs.type), shape_of(self.rhs.type)
        if k != k2 or shape_of(self.acc.type) != (m, n):
            raise VerifyException("loop.dot shapes must be [M, K] x [K, N] -> [M, N]")
        if self.acc.type != self.result.type:
            raise VerifyException("loop.dot result has the accumulator's type")


# --------------------------------------------------------------------------
# Tensor access
# --------------------------------------------------------------------------


def _index_types_ok(indices: Sequence[SSAValue]) -> bool:
    return all(isinstance(element_of(i.type), IntegerType | IndexType) for i in indices)


@irdl_op_definition
class ReadOp(IRDLOperation):
    """``%v = loop.read %x[%i, %j] mask %m : ...``: the elements of tensor
    ``%x`` (a kernel input) at the broadcast index tiles; lanes where the
    mask is false read 0 and must not be out of bounds otherwise."""

    name = "loop.read"
    tensor = operand_def(TensorType)
    indices = var_operand_def()
    mask = opt_operand_def()
    result = result_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())
    assembly_format = (
        "$tensor `[` $indices `]` (`mask` $mask^)? attr-dict `:` type($tensor) "
        "`[` type($indices) `]` (`mask` type($mask)^)? `->` type($result)"
    )

    def __init__(
        self, tensor: SSAValue, indices: Sequence[SSAValue], mask: SSAValue | None
    ):
        shapes = [shape_of(i.type) for i in indices]
        if mask is not None:
            shapes.append(shape_of(mask.type))
        shape = broadcast_tile_shapes(*shapes)
        assert isinstance(tensor.type, TensorType)
        super().__init__(
            operands=[tensor, indices, [mask] if mask is not None else []],
            result_types=[value_type(shape, tensor.type.element_type)],
        )

    def verify_(self) -> None:
        tensor = self.tensor.type
        assert isinstance(tensor, TensorType)
        if len(self.indices) != tensor.rank:
            raise VerifyException(
                f"loop.read of a rank-{tensor.rank} tensor takes {tensor.rank} indices"
            )
        if not _index_types_ok(self.indices):
            raise VerifyException("loop.read indices must be integers")
        shapes = [shape_of(i.type) for i in self.indices]
        if self.mask is not None:
            if element_of(self.mask.type) != i1:
                raise VerifyException("loop.read mask must be i1")
            shapes.append(shape_of(self.mask.type))
        if element_of(self.result.type) != tensor.element_type:
            raise VerifyException("loop.read yields the tensor's element type")
        _verify_broadcast(self, shapes, self.result.type)


@irdl_op_definition
class WriteOp(IRDLOperation):
    """``loop.write %v to 0 [%i, %j] mask %m : ...``: sets the kernel's
    output number 0 at the index tiles, where the mask holds."""

    name = "loop.write"
    output = prop_def(IntegerAttr[I64])
    value = operand_def()
    indices = var_operand_def()
    mask = opt_operand_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$value `to` $output `[` $indices `]` (`mask` $mask^)? attr-dict `:` type($value) "
        "`[` type($indices) `]` (`mask` type($mask)^)?"
    )

    def __init__(
        self,
        value: SSAValue,
        output: int,
        indices: Sequence[SSAValue],
        mask: SSAValue | None,
    ):
        super().__init__(
            operands=[value, indices, [mask] if mask is not None else []],
            properties={"output": IntegerAttr(output, i64)},
        )

    @property
    def output_index(self) -> int:
        return self.output.value.data

    def verify_(self) -> None:
        kernel = self.parent_op()
        while kernel is not None and not isinstance(kernel, KernelOp):
            kernel = kernel.parent_op()
        if kernel is None:
            raise VerifyException("loop.write must be inside a loop.kernel")
        index = self.output_index
        if not 0 <= index < len(kernel.outputs):
            raise VerifyException(f"loop.write to output {index}, which does not exist")
        tensor = kernel.outputs[index].type
        assert isinstance(tensor, TensorType)
        if len(self.indices) != tensor.rank:
            raise VerifyException(
                f"loop.write to a rank-{tensor.rank} output takes {tensor.rank} indices"
            )
        if not _index_types_ok(self.indices):
            raise VerifyException("loop.write indices must be integers")
        if element_of(self.value.type) != tensor.element_type:
            raise VerifyException(
                "loop.write value must have the output's element type"
            )
        if self.mask is not None and element_of(self.mask.type) != i1:
            raise VerifyException("loop.write mask must be i1")


Loop = Dialect(
    "loop",
    [
        KernelOp,
        ProgramIdOp,
        SizeOp,
        RangeOp,
        ConstantOp,
        SplatOp,
        UnaryOp,
        BinaryOp,
        CompareOp,
        SelectOp,
        CastOp,
        ReduceOp,
        DotOp,
        ReadOp,
        WriteOp,
    ],
    [TileType],
)
