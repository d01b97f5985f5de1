"""What the tile-level dialects (loop, memory, triton) define once, together.

The loop and triton dialects compute on the same values, scalars (builtin
``f32``, ``i64``, ``i1``) and power-of-two tiles (``!loop.tile``,
``!triton.tensor``) that broadcast as in Triton, with the same families of
ops (constant, splat, unary, binary, compare, select, cast, reduce, scan, dot,
program id, size, range); ``loop.kernel``, ``memory.kernel`` and
``triton.kernel`` describe their launch the same way (grid, tiles, symbols,
reason). As xDSL and MLIR share op-definition machinery through base
classes, this module holds that machinery once:

- ``TileShapedType``, the base of the tile types, and the broadcasting of
  tile shapes (``broadcast_tile_shapes``, ``verify_broadcast``);
- the check of an elementwise kind's arity (the kinds, predicates and
  reductions are ``irc.dialects.elementwise``'s);
- the syntax of a kernel's header and launch attributes, and the kernel
  bases ``TiledKernelOp`` and ``ModuleKernelOp`` (accessors, the launch
  checks, the checks of the body's sizes and ranges);
- one base per op family (``BinaryOpBase``...). A dialect subclasses it
  with its op's name, docstring, value type (``TILE_TYPE``) and, where the
  operands must be tiles, the typed fields; the verifier's messages name
  the dialect's op.

Each dialect keeps its own op names, types, textual forms and docs; only
the logic they share lives here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar, cast

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
    SymbolNameConstraint,
    i1,
    i64,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    OpTrait,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.elementwise import (
    ComparisonPredicate,
    ComparisonPredicateAttr,
    ElementwiseKindAttr,
    ReductionKind,
    ReductionKindAttr,
)
from irc.dialects.kernel_kind import (
    KernelKindName,
    kernel_kind_error,
    parse_kernel_kind,
)
from irc.dialects.sym import (
    SymExprAttr,
    SymExprList,
    SymExprValue,
    parse_sym_expr_list,
    shape_text,
)
from irc.primitives.declaration import Primitive, as_primitive, primitives
from irc.shapes import ShapeError, SymExpr, as_expr

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# --------------------------------------------------------------------------
# Tile types and broadcasting
# --------------------------------------------------------------------------


def is_power_of_two(value: int) -> bool:
    """Whether ``value`` is 1, 2, 4, ...: a legal tile dim or tile size."""
    return value >= 1 and not value & (value - 1)


@dataclass(frozen=True, init=False)  # subclasses compare and hash by the parameters
class TileShapedType(ParametrizedAttribute, TypeAttribute):
    """The base of a tile type: ``!<name><[64, 1], f32>``, dims powers of two
    (1 included), rank at least 1; scalars are plain builtin types.

    The classmethods read any value type of the dialect, scalar or tile:
    ``TileType.shape_of(f32)`` is ``()``.
    """

    #: How the dialect calls its tiles in messages ("tile", "block").
    NOUN: ClassVar[str] = "tile"
    #: What ``is_index`` accepts, for messages ("integers", "i32 or i64").
    INDEX_TEXT: ClassVar[str] = "integers"

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
                f"a {self.name} has rank >= 1; a scalar is a builtin type"
            )
        for dim in self.dims:
            if not is_power_of_two(dim):
                raise VerifyException(
                    f"{self.name} dims must be powers of two (or 1), not {dim}"
                )

    @classmethod
    def shape_of(cls, type_: Attribute) -> tuple[int, ...]:
        """The tile shape of a value's type; ``()`` for a scalar."""
        return type_.dims if isinstance(type_, cls) else ()

    @classmethod
    def element_of(cls, type_: Attribute) -> Attribute:
        """The element type of a value's type."""
        return type_.element_type if isinstance(type_, cls) else type_

    @classmethod
    def value_type(cls, shape: Sequence[int], element_type: Attribute) -> Attribute:
        """A tile of ``shape``, or the scalar type itself for shape ``()``."""
        return cls(shape, element_type) if shape else element_type

    @classmethod
    def broadcast_of(
        cls, *types: Attribute, op: Operation | None = None
    ) -> tuple[int, ...]:
        """The broadcast shape of values of ``types`` (scalars or tiles).

        Shapes that do not broadcast raise ``VerifyException`` naming ``op``
        (for a verifier), or ``ValueError`` without one (for a builder).
        """
        shapes = [cls.shape_of(t) for t in types]
        if op is None:
            return broadcast_tile_shapes(*shapes)
        return broadcast_or_raise(op, *shapes)

    @classmethod
    def is_index(cls, type_: Attribute) -> bool:
        """Whether values of ``type_`` (scalar or tile) can index: integers."""
        return isinstance(cls.element_of(type_), IntegerType)


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
                listed = ", ".join(str(list(s)) for s in shapes)
                raise ValueError(f"tile shapes {listed} do not broadcast")
            result[axis] = dim
    return tuple(result)


def broadcast_or_raise(op: Operation, *shapes: Sequence[int]) -> tuple[int, ...]:
    """``broadcast_tile_shapes`` for ``op``'s verifier."""
    try:
        return broadcast_tile_shapes(*shapes)
    except ValueError as err:
        raise VerifyException(f"{op.name}: {err}") from err


def verify_broadcast(
    op: Operation, shapes: Sequence[Sequence[int]], result: Sequence[int]
) -> None:
    """The ``result`` shape is the broadcast of ``shapes``."""
    expected = broadcast_or_raise(op, *shapes)
    if tuple(result) != expected:
        raise VerifyException(
            f"{op.name}: result shape {list(result)} must be the "
            f"broadcast shape {list(expected)}"
        )


# --------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------


def check_arity(op: Operation, kind: Primitive, arity: int) -> None:
    """``kind`` takes ``arity`` operands."""
    if kind.arity != arity:
        operands = "one operand" if arity == 1 else "two operands"
        raise VerifyException(
            f"{op.name}: {kind} is not a function of {operands}; expected one of "
            f"{sorted(k.name for k in primitives(arity))}"
        )


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


def parse_kernel_header(parser: Parser) -> tuple[str, str]:
    """``@name kind``: a kernel's name and kind."""
    name = parser.parse_symbol_name().data
    return name, parse_kernel_kind(parser)


def _parse_tile_sizes(parser: Parser) -> dict[str, int]:
    """``{B = 64, ...}``."""

    def parse_tile() -> tuple[str, int]:
        name = parser.parse_identifier()
        parser.parse_punctuation("=")
        return name, parser.parse_integer(allow_boolean=False, allow_negative=False)

    return dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_tile))


def _tile_sizes_text(tiles: Mapping[str, int]) -> str:
    return "{" + ", ".join(f"{k} = {v}" for k, v in tiles.items()) + "}"


def _parse_symbol_names(parser: Parser) -> list[str]:
    """``[N, ...]``."""
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, parser.parse_identifier
    )


def _symbol_names_text(symbols: Sequence[str]) -> str:
    return f"[{', '.join(symbols)}]"


def parse_launch_attributes(
    parser: Parser,
) -> tuple[list[SymExpr], dict[str, int], list[str], str]:
    """``grid [e, ...] tiles {B = 64, ...} symbols [N, ...] reason "..."``:
    ``LAUNCH_FORMAT``, for the kernels whose syntax is hand-written."""
    parser.parse_keyword("grid")
    grid = parse_sym_expr_list(parser)
    parser.parse_keyword("tiles")
    tiles = _parse_tile_sizes(parser)
    parser.parse_keyword("symbols")
    symbols = _parse_symbol_names(parser)
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
    printer.print_string(f" grid {shape_text(grid)} tiles {_tile_sizes_text(tiles)}")
    printer.print_string(f" symbols {_symbol_names_text(symbols)} reason ")
    printer.print_string_literal(reason)


@irdl_custom_directive
class TileSizes(CustomDirective):
    """``{BLOCK = 64, ...}``: a kernel's tiles, a ``DictionaryAttr`` of i64
    sizes (builtin's syntax would add ``: i64`` to each)."""

    tiles: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        tiles = _parse_tile_sizes(parser)
        self.tiles.set(
            state, DictionaryAttr({k: IntegerAttr(v, i64) for k, v in tiles.items()})
        )

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        assert isinstance(op, TiledKernelOp), "a kernel's directive"
        printer.print_string(_tile_sizes_text(op.tile_sizes))


@irdl_custom_directive
class SymbolNames(CustomDirective):
    """``[D, N]``: the symbols of a kernel, an ``ArrayAttr`` of ``StringAttr``
    spelt as identifiers; sorted when parsed if the kernel's
    ``SORTED_SYMBOLS`` says so."""

    symbols: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        symbols = _parse_symbol_names(parser)
        if getattr(state.op_type, "SORTED_SYMBOLS", False):
            symbols.sort()
        self.symbols.set(state, ArrayAttr(StringAttr(s) for s in symbols))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        assert isinstance(op, TiledKernelOp), "a kernel's directive"
        printer.print_string(_symbol_names_text(op.symbol_names))


#: A kernel's name and kind, ``@k0 reduction``, in an ``assembly_format``.
KERNEL_HEADER_FORMAT = "$sym_name custom<KernelKindName>($kind)"

#: A kernel's launch, ``grid [N] tiles {BLOCK = 128} symbols [N] reason
#: "..."``, in an ``assembly_format`` (``parse_launch_attributes`` parses the
#: same).
LAUNCH_FORMAT = (
    "`grid` custom<SymExprList>($grid) `tiles` custom<TileSizes>($tiles) "
    "`symbols` custom<SymbolNames>($symbols) `reason` $reason"
)

#: The custom directives of ``KERNEL_HEADER_FORMAT`` and ``LAUNCH_FORMAT``.
KERNEL_DIRECTIVES: tuple[type[CustomDirective], ...] = (
    KernelKindName,
    SymExprList,
    TileSizes,
    SymbolNames,
)


_OpT = TypeVar("_OpT", bound=Operation)


def enclosing_op(op: Operation, kind: type[_OpT]) -> _OpT | None:
    """The nearest op of type ``kind`` that holds ``op``, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, kind):
        parent = parent.parent_op()
    return parent


class TiledKernelOp(IRDLOperation):
    """The base of the tiled kernels: ``@name kind`` and the launch (``grid``:
    programs per axis, 1 to 3 of them; ``tiles``: power-of-two block sizes;
    ``symbols`` the body's sizes may use; ``reason``: why it exists)."""

    #: Whether the constructor and the parser sort ``symbols`` (otherwise
    #: their order is meaningful and kept).
    SORTED_SYMBOLS: ClassVar[bool] = False

    sym_name = prop_def(SymbolNameConstraint())
    kind = prop_def(StringAttr)
    grid = prop_def(ArrayAttr[SymExprAttr])
    tiles = prop_def(DictionaryAttr)
    symbols = prop_def(ArrayAttr[StringAttr])
    reason = prop_def(StringAttr)

    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator())

    @staticmethod
    def launch_properties(
        name: str,
        kind: str,
        grid: Sequence[SymExpr | int],
        tiles: Mapping[str, int],
        symbols: Iterable[str],
        reason: str,
        **more: Attribute,
    ) -> dict[str, Attribute]:
        """The properties the base declares, from their Python values, with
        a subclass's ``more`` after the kind (the generic form's order)."""
        return {
            "sym_name": StringAttr(name),
            "kind": StringAttr(kind),
            **more,
            "grid": ArrayAttr(SymExprAttr(as_expr(g)) for g in grid),
            "tiles": DictionaryAttr({k: IntegerAttr(v, i64) for k, v in tiles.items()}),
            "symbols": ArrayAttr(StringAttr(s) for s in symbols),
            "reason": StringAttr(reason),
        }

    @property
    def kernel_name(self) -> str:
        return self.sym_name.data

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

    def print_launch(self, printer: Printer) -> None:
        print_launch_attributes(
            printer,
            self.grid_exprs,
            self.tile_sizes,
            self.symbol_names,
            self.reason.data,
        )

    def verify_launch(self) -> None:
        """A known kind, 1 to 3 grid axes, power-of-two tiles, symbols and
        tiles named by identifiers (as the text spells them)."""
        if problem := kernel_kind_error(self.kind.data):
            raise VerifyException(problem)
        if not 1 <= len(self.grid.data) <= 3:
            raise VerifyException(f"a {self.name} grid has 1 to 3 axes")
        for name in self.symbol_names:
            try:
                SymExpr.symbol(name)
            except ShapeError as err:  # the text spells symbols as identifiers
                raise VerifyException(f"{self.name} symbols: {err}") from None
        for name, value in self.tiles.data.items():
            if not _IDENTIFIER.fullmatch(name):
                raise VerifyException(
                    f"invalid tile name {name!r}: expected an identifier "
                    "[A-Za-z_][A-Za-z0-9_]*"
                )
            if not isinstance(value, IntegerAttr) or value.type == i1:
                raise VerifyException(
                    f"tile {name} = {value} is not an integer: tiles are sizes"
                )
        for name, size in self.tile_sizes.items():
            if not is_power_of_two(size):
                raise VerifyException(f"tile {name} = {size} is not a power of two")

    def verify_body_op(self, op: Operation) -> None:
        """A size op of the body uses declared symbols, a range op a declared
        tile, whose lanes it spans."""
        if isinstance(op, SizeOpBase):
            missing = sorted(op.expr.data.symbols - set(self.symbol_names))
            if missing:
                raise VerifyException(
                    f"{op.name} uses {missing}, not among the kernel's symbols"
                )
        if isinstance(op, BlockSizeOpBase) and op.block.data not in self.tile_sizes:
            raise VerifyException(f"{op.name} names unknown tile {op.block.data!r}")
        if isinstance(op, RangeOpBase):
            tiles = self.tile_sizes
            block = op.block.data
            if block not in tiles:
                raise VerifyException(f"{op.name} names unknown tile {block!r}")
            if max(op.TILE_TYPE.shape_of(op.result.type)) != tiles[block]:
                raise VerifyException(
                    f"{op.name} {block!r} must span {tiles[block]} lanes"
                )


def parse_located_argument(parser: Parser) -> Parser.Argument:
    """``%name: type`` with an optional ``loc(...)`` after it, as
    ``print_block_argument`` prints a block argument with debug info (and
    as ``func.func`` parses its arguments)."""
    argument = parser.parse_argument()
    argument.location = parser.parse_optional_location()
    return argument


class ModuleKernelOp(TiledKernelOp):
    """The base of a module-level kernel whose arguments are its entry
    block's, the first ``inputs`` of them read:

    ``@k0 reduction (%x: T1, %out: T2) inputs 1 grid [N] tiles {BLOCK =
    128} symbols [N] reason "..." { ... }``
    """

    inputs = prop_def(IntegerAttr[I64])

    traits = traits_def(SymbolOpInterface(), HasParent(ModuleOp))

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
        if self.SORTED_SYMBOLS:
            symbols = sorted(symbols)
        inputs = IntegerAttr(num_inputs, i64)
        super().__init__(
            properties=self.launch_properties(
                name, kind, grid, tiles, symbols, reason, inputs=inputs
            ),
            regions=[body],
        )

    @property
    def num_inputs(self) -> int:
        return self.inputs.value.data

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        return tuple(self.body.block.args)

    @property
    def buffer_element_types(self) -> tuple[Attribute, ...]:
        """The element type of each buffer a launch passes, inputs then
        outputs: what the arguments that take them hold or point to."""
        raise NotImplementedError(f"{type(self).__name__}.buffer_element_types")

    # Hand-written: the header declares the entry block's arguments, typed,
    # before the launch, and the region is parsed with them and printed
    # without them (as func.func's syntax does); a declarative format
    # parses a region only with its own block header.

    @classmethod
    def parse(cls, parser: Parser) -> ModuleKernelOp:
        name, kind = parse_kernel_header(parser)
        arguments = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parse_located_argument(parser)
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
        printer.print_string(" ")
        printer.print_symbol_name(self.kernel_name)  # quoted unless an identifier
        printer.print_string(f" {self.kind.data} (")
        printer.print_list(self.args, printer.print_block_argument)
        printer.print_string(f") inputs {self.num_inputs}")
        self.print_launch(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


# --------------------------------------------------------------------------
# Indices and sizes
# --------------------------------------------------------------------------


class InsideKernel(OpTrait):
    """The op reads its kernel's launch (a program id, a tile, a symbol or an
    argument), so it is meaningful only inside a tiled kernel: a
    ``loop.kernel``, ``memory.kernel`` or ``triton.kernel``."""

    def verify(self, op: Operation) -> None:
        if enclosing_op(op, TiledKernelOp) is None:
            raise VerifyException(
                f"{op.name} reads a kernel's launch; it must be inside a kernel"
            )


class TileOp(IRDLOperation):
    """The base of an op on the values of one tile dialect: scalars and
    tiles of ``TILE_TYPE``."""

    TILE_TYPE: ClassVar[type[TileShapedType]]


class ProgramIdOpBase(TileOp):
    """``<name> 0 : i64``: this program's coordinate on a grid axis."""

    axis = prop_def(IntegerAttr[I64])
    result = result_def(IntegerType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "$axis attr-dict `:` type($result)"

    def __init__(self, axis: int, index_type: IntegerType):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64)}, result_types=[index_type]
        )

    def verify_(self) -> None:
        if not 0 <= self.axis.value.data <= 2:
            raise VerifyException(f"{self.name} axis must be 0, 1 or 2")
        if not self.TILE_TYPE.is_index(self.result.type):
            raise VerifyException(f"{self.name} yields {self.TILE_TYPE.INDEX_TEXT}")


class SizeOpBase(TileOp):
    """``<name> D*N : i64``: a symbolic size over the kernel's symbols."""

    expr = prop_def(SymExprAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "custom<SymExprValue>($expr) attr-dict `:` type($result)"
    custom_directives = (SymExprValue,)

    def __init__(self, expr: SymExpr | int, index_type: IntegerType):
        super().__init__(
            properties={"expr": SymExprAttr(as_expr(expr))}, result_types=[index_type]
        )

    def verify_(self) -> None:
        if not self.TILE_TYPE.is_index(self.result.type):
            raise VerifyException(f"{self.name} yields {self.TILE_TYPE.INDEX_TEXT}")


class RangeOpBase(TileOp):
    """``<name> "BLOCK" : <tile>``: ``0 .. BLOCK-1`` along the one dim of the
    tile that is not 1. A subclass types ``result`` as its tile."""

    block = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, shape: Sequence[int], index_type: IntegerType):
        super().__init__(
            properties={"block": StringAttr(block)},
            result_types=[self.TILE_TYPE(shape, index_type)],
        )

    @property
    def axis(self) -> int:
        """The dim the range lies along (the last when every dim is 1)."""
        shape = self.TILE_TYPE.shape_of(self.result.type)
        return next((i for i, d in enumerate(shape) if d != 1), len(shape) - 1)

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        if sum(d != 1 for d in tile.shape_of(self.result.type)) > 1:
            raise VerifyException(f"{self.name} spans one dim of its {tile.NOUN}")
        if not tile.is_index(self.result.type):
            raise VerifyException(f"{self.name} yields {tile.INDEX_TEXT}")


class BlockSizeOpBase(TileOp):
    """``<name> "BLOCK" : i64``: the size of one of the kernel's tiles as a
    scalar (a loop's start or step in lanes of that tile): its declared
    size, or the size the launch chose where the kernel's ``launch_tiles``
    attribute lets the launcher choose it (``irc.dialects.kernel_kind``)."""

    block = prop_def(StringAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, index_type: IntegerType):
        super().__init__(
            properties={"block": StringAttr(block)}, result_types=[index_type]
        )

    def verify_(self) -> None:
        if not self.TILE_TYPE.is_index(self.result.type):
            raise VerifyException(f"{self.name} yields {self.TILE_TYPE.INDEX_TEXT}")


# --------------------------------------------------------------------------
# Compute
# --------------------------------------------------------------------------


@irdl_custom_directive
class TypedScalar(CustomDirective):
    """``1.5 : f32``: a typed integer or float property, whose type is the
    result's."""

    value: AttributeVariable
    type: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, IntegerAttr | FloatAttr):
            parser.raise_error(
                f"{state.op_type.name} takes a typed integer or float",
                start,
                parser.pos,
            )
        self.value.set(state, value)
        self.type.set(state, (value.type,))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        value = self.value.get(op)
        assert value is not None, "verified"
        printer.print_attribute(value)


class ConstantOpBase(TileOp):
    """``<name> 1.5 : f32``: a typed scalar constant."""

    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "custom<TypedScalar>($value, type($result)) attr-dict"
    custom_directives = (TypedScalar,)

    def __init__(self, value: IntegerAttr | FloatAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise VerifyException(f"{self.name} result type must be the value's type")


class SplatOpBase(TileOp):
    """``<name> %s : f32 -> <tile>``: a scalar in every lane of a tile. A
    subclass types ``result`` as its tile."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, shape: Sequence[int]):
        super().__init__(
            operands=[value], result_types=[self.TILE_TYPE(shape, value.type)]
        )

    def verify_(self) -> None:
        if isinstance(self.input.type, self.TILE_TYPE):
            raise VerifyException(f"{self.name} takes a scalar")
        if self.TILE_TYPE.element_of(self.result.type) != self.input.type:
            raise VerifyException(f"{self.name} keeps the element type")


class UnaryOpBase(TileOp):
    """``<name> exp %x : T``: elementwise, of a unary primitive."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(ElementwiseKindAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($result)"

    def __init__(self, kind: Primitive | str, value: SSAValue):
        super().__init__(
            operands=[value],
            properties={"kind": ElementwiseKindAttr(as_primitive(kind))},
            result_types=[value.type],
        )

    def verify_(self) -> None:
        check_arity(self, self.kind.data, 1)


class _KindedPairOp(TileOp):
    """``<name> kind %a, %b : (Ta, Tb) -> T``, the shapes broadcasting; a
    subclass defines the ``kind`` property."""

    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
        "`->` type($result)"
    )

    def _result_element(self, lhs: SSAValue) -> Attribute:
        raise NotImplementedError

    def _kind_attribute(self, kind: str) -> Attribute:
        raise NotImplementedError

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        shape_of = self.TILE_TYPE.shape_of
        shape = broadcast_tile_shapes(shape_of(lhs.type), shape_of(rhs.type))
        super().__init__(
            operands=[lhs, rhs],
            properties={"kind": self._kind_attribute(kind)},
            result_types=[self.TILE_TYPE.value_type(shape, self._result_element(lhs))],
        )

    def _verify_broadcast(self) -> None:
        shape_of = self.TILE_TYPE.shape_of
        verify_broadcast(
            self,
            [shape_of(self.lhs.type), shape_of(self.rhs.type)],
            shape_of(self.result.type),
        )


class BinaryOpBase(_KindedPairOp):
    """Elementwise, of a binary primitive, with broadcasting; both
    operands have the result's element type."""

    kind = prop_def(ElementwiseKindAttr)

    def _result_element(self, lhs: SSAValue) -> Attribute:
        return self.TILE_TYPE.element_of(lhs.type)

    def _kind_attribute(self, kind: str) -> Attribute:
        return ElementwiseKindAttr(as_primitive(kind))

    def verify_(self) -> None:
        check_arity(self, self.kind.data, 2)
        element_of = self.TILE_TYPE.element_of
        element = element_of(self.result.type)
        if element_of(self.lhs.type) != element or element_of(self.rhs.type) != element:
            raise VerifyException(
                f"{self.name} operands must have the result's element type"
            )
        self._verify_broadcast()


class CompareOpBase(_KindedPairOp):
    """An elementwise ``ComparisonPredicate`` with broadcasting, yielding
    i1."""

    kind = prop_def(ComparisonPredicateAttr)

    def _result_element(self, lhs: SSAValue) -> Attribute:
        return i1

    def _kind_attribute(self, kind: str) -> Attribute:
        return ComparisonPredicateAttr(ComparisonPredicate(kind))

    def verify_(self) -> None:
        element_of = self.TILE_TYPE.element_of
        if element_of(self.lhs.type) != element_of(self.rhs.type):
            raise VerifyException(f"{self.name} operands must share an element type")
        if element_of(self.result.type) != i1:
            raise VerifyException(f"{self.name} yields i1")
        self._verify_broadcast()


class SelectOpBase(TileOp):
    """``<name> %c, %a, %b : (Tc, Ta, Tb) -> T``: ``a`` where ``c``, else
    ``b``, the shapes broadcasting."""

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
        tile = self.TILE_TYPE
        shape = broadcast_tile_shapes(
            *(tile.shape_of(v.type) for v in (condition, on_true, on_false))
        )
        super().__init__(
            operands=[condition, on_true, on_false],
            result_types=[tile.value_type(shape, tile.element_of(on_true.type))],
        )

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        if tile.element_of(self.condition.type) != i1:
            raise VerifyException(f"{self.name} condition must be i1")
        element = tile.element_of(self.result.type)
        if (
            tile.element_of(self.on_true.type) != element
            or tile.element_of(self.on_false.type) != element
        ):
            raise VerifyException(
                f"{self.name} branches must have the result's element type"
            )
        verify_broadcast(
            self,
            [
                tile.shape_of(v.type)
                for v in (self.condition, self.on_true, self.on_false)
            ],
            tile.shape_of(self.result.type),
        )


class CastOpBase(TileOp):
    """``<name> %x : T1 -> T2``: the same shape, another element type."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, element_type: Attribute):
        tile = self.TILE_TYPE
        super().__init__(
            operands=[value],
            result_types=[tile.value_type(tile.shape_of(value.type), element_type)],
        )

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        if tile.shape_of(self.input.type) != tile.shape_of(self.result.type):
            raise VerifyException(f"{self.name} keeps the {tile.NOUN} shape")


class ReduceOpBase(TileOp):
    """``<name> sum %t 0 : <tile> -> T``: reduce one dim of a tile (it
    disappears from the shape); ``argmax`` yields indices of the result's
    integer type. A subclass types ``input`` as its tile."""

    kind = prop_def(ReductionKindAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $input $axis attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, kind: str, value: SSAValue, axis: int, index_type: Attribute | None = None
    ):
        tile = self.TILE_TYPE
        shape = list(tile.shape_of(value.type))
        del shape[axis]
        element = index_type if kind == "argmax" else tile.element_of(value.type)
        assert element is not None, "argmax needs an index type"
        super().__init__(
            operands=[value],
            properties={
                "kind": ReductionKindAttr(ReductionKind(kind)),
                "axis": IntegerAttr(axis, i64),
            },
            result_types=[tile.value_type(shape, element)],
        )

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        shape = list(tile.shape_of(self.input.type))
        axis = self.axis.value.data
        if not 0 <= axis < len(shape):
            raise VerifyException(f"{self.name} axis {axis} out of range")
        del shape[axis]
        if tuple(shape) != tile.shape_of(self.result.type):
            raise VerifyException(f"{self.name} result must drop the reduced dim")
        if self.kind.data == "argmax":
            if not tile.is_index(self.result.type):
                raise VerifyException(f"{self.name} argmax yields {tile.INDEX_TEXT}")
        elif tile.element_of(self.result.type) != tile.element_of(self.input.type):
            raise VerifyException(f"{self.name} keeps the element type")


class ScanOpBase(TileOp):
    """``<name> sum %t 0 : <tile>``: the inclusive scan (running sum or
    product) along one dim of a tile, of the input's type; 16-bit floats
    accumulate in float32 and round once per lane, as reductions do."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    kind = prop_def(ReductionKindAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input $axis attr-dict `:` type($result)"

    def __init__(self, kind: str, value: SSAValue, axis: int):
        super().__init__(
            operands=[value],
            properties={
                "kind": ReductionKindAttr(ReductionKind(kind)),
                "axis": IntegerAttr(axis, i64),
            },
            result_types=[value.type],
        )

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        if not isinstance(self.input.type, tile):
            raise VerifyException(f"{self.name} scans a {tile.NOUN}, not a scalar")
        axis = self.axis.value.data
        if not 0 <= axis < len(tile.shape_of(self.input.type)):
            raise VerifyException(f"{self.name} axis {axis} out of range")
        if self.kind.data not in (ReductionKind.SUM, ReductionKind.PROD):
            raise VerifyException(
                f"{self.name} computes running sums and products, not {self.kind.data}"
            )
        if tile.element_of(self.input.type) == i1:
            raise VerifyException(f"{self.name} is not defined on i1")


class DotOpBase(TileOp):
    """``<name> %a, %b, %acc``: ``acc + a @ b`` on 2-D tiles (``[M, K] x [K,
    N] -> [M, N]``), in ``acc``'s type. A subclass types the operands and
    the result as its tile."""

    lhs = operand_def()
    rhs = operand_def()
    acc = operand_def()
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `,` $acc attr-dict `:` `(` type($lhs) `,` type($rhs) `,` "
        "type($acc) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, acc: SSAValue):
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc.type])

    def verify_(self) -> None:
        tile = self.TILE_TYPE
        lhs, rhs = tile.shape_of(self.lhs.type), tile.shape_of(self.rhs.type)
        if len(lhs) != 2 or len(rhs) != 2:
            raise VerifyException(f"{self.name} takes 2-D {tile.NOUN}s")
        (m, k), (k2, n) = lhs, rhs
        if k != k2 or tile.shape_of(self.acc.type) != (m, n):
            raise VerifyException(
                f"{self.name} shapes must be [M, K] x [K, N] -> [M, N]"
            )
        if tile.element_of(self.lhs.type) != tile.element_of(self.rhs.type):
            raise VerifyException(f"{self.name} operands must share an element type")
        if self.acc.type != self.result.type:
            raise VerifyException(f"{self.name} result has the accumulator's type")
