"""The tile dialect: the compute that the tile levels (loop, memory, triton)
share, as MLIR's levels share ``arith`` and ``scf``.

A tiled kernel computes on scalars (builtin ``f32``, ``i64``, ``i1``) and
power-of-two tiles that broadcast as in Triton. The ops that do so are this
dialect's, the same at every tile level: the indices and sizes of a launch
(``tile.program_id``, ``tile.size``, ``tile.range``, ``tile.block_size``)
and the compute (``tile.constant``, ``tile.splat``, ``tile.unary``,
``tile.binary``, ``tile.cmp``, ``tile.select``, ``tile.cast``,
``tile.reduce``, ``tile.scan``, ``tile.dot``). They are polymorphic over the
level's tile type, a ``TileShapedType``: ``!loop.tile`` in ``loop.kernel``
and ``memory.kernel``, ``!triton.tensor`` in ``triton.kernel``. One op's
tiles are of one type (``SameTileType``), and a kernel checks that its body
computes on its level's tiles and indexes with its level's integers
(``TiledKernelOp.TILE_TYPE``). The levels differ only in their types and
their access ops (``loop.read``/``write``, ``memory.load``/``store``,
``triton.load``/``store``).

The module also holds what the kernels of the three levels share:

- ``TileShapedType``, the base of the tile types, and the broadcasting of
  tile shapes (``broadcast_tile_shapes``, ``verify_broadcast``);
- the check of an elementwise kind's arity (the kinds, predicates and
  reductions are ``irc.dialects.elementwise``'s);
- the syntax of a kernel's header and launch attributes, and the kernel
  bases ``TiledKernelOp`` and ``ModuleKernelOp`` (accessors, the launch
  checks, the checks of the body's values, sizes and ranges).

Folding (xDSL's ``HasFolderInterface``; ``canonicalize`` runs the folders,
and so does the ``tile`` pass on every op it builds): ``tile.constant`` is
``ConstantLike`` and folds to its value, ``tile.cast`` to its own type folds
to its input, and ``tile.binary`` folds integer identities (its docstring).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar, cast

from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects import scf
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
from xdsl.interfaces import HasFolderInterface
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
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
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
    ConstantLike,
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
    #: The tile type of the level's values.
    TILE_TYPE: ClassVar[type[TileShapedType]]

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
    def never_launches(self) -> bool:
        """Whether the grid is empty whatever the sizes (an axis of at most
        0 programs): a launch of this kernel runs nothing."""
        return any(e.is_constant and int(e) <= 0 for e in self.grid_exprs)

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
        """An op of the body computes on this level's tiles and indexes with
        its integers; a size op uses declared symbols, a range op a declared
        tile, whose lanes it spans."""
        tile = self.TILE_TYPE
        for result in op.results:
            if isinstance(result.type, TileShapedType) and not isinstance(
                result.type, tile
            ):
                raise VerifyException(
                    f"{op.name} in a {self.name} yields {result.type}; the tiles "
                    f"of this level are {tile.name}"
                )
        if _yields_index(op) and not tile.is_index(op.results[0].type):
            raise VerifyException(f"{op.name} yields {tile.INDEX_TEXT}")
        if isinstance(op, SizeOp):
            missing = sorted(op.expr.data.symbols - set(self.symbol_names))
            if missing:
                raise VerifyException(
                    f"{op.name} uses {missing}, not among the kernel's symbols"
                )
        if isinstance(op, BlockSizeOp) and op.block.data not in self.tile_sizes:
            raise VerifyException(f"{op.name} names unknown tile {op.block.data!r}")
        if isinstance(op, RangeOp):
            tiles = self.tile_sizes
            block = op.block.data
            if block not in tiles:
                raise VerifyException(f"{op.name} names unknown tile {block!r}")
            if max(shape_of(op.result.type)) != tiles[block]:
                raise VerifyException(
                    f"{op.name} {block!r} must span {tiles[block]} lanes"
                )
        if isinstance(op, scf.WhileOp):
            _verify_carried_types(op)


def _verify_carried_types(op: scf.WhileOp) -> None:
    """An ``scf.while`` in a kernel carries each value at one type: its
    initial value's, which both regions take, the test forwards, the body
    yields and the loop gives (xDSL's verifier leaves this to the
    lowering, and a tile that becomes a scalar from one iteration to the
    next is no loop Triton compiles)."""
    carried = [v.type for v in op.arguments]
    test = op.before_region.block.last_op
    body = op.after_region.block.last_op
    seen = {
        "the test's arguments": [a.type for a in op.before_region.block.args],
        "the values the test forwards": [v.type for v in test.operands[1:]]
        if test is not None
        else carried,
        "the body's arguments": [a.type for a in op.after_region.block.args],
        "the values the body yields": [v.type for v in body.operands]
        if body is not None
        else carried,
        "the loop's results": [r.type for r in op.results],
    }
    for what, types in seen.items():
        if types != carried:
            raise VerifyException(
                f"scf.while carries {[str(t) for t in carried]} but {what} are "
                f"{[str(t) for t in types]}"
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
# Value types of the ops
# --------------------------------------------------------------------------


def shape_of(type_: Attribute) -> tuple[int, ...]:
    """The tile shape of a value's type, at any level; ``()`` for a scalar."""
    return type_.dims if isinstance(type_, TileShapedType) else ()


def element_of(type_: Attribute) -> Attribute:
    """The element type of a value's type, at any level."""
    return type_.element_type if isinstance(type_, TileShapedType) else type_


def is_integer(type_: Attribute) -> bool:
    """Whether values of ``type_`` (scalar or tile) are integers."""
    return isinstance(element_of(type_), IntegerType)


def tile_like(
    shape: Sequence[int], element_type: Attribute, *types: Attribute
) -> Attribute:
    """A value of ``shape`` in the tile type of the tiles among ``types``
    (the level of an op's operands), or the scalar type for shape ``()``."""
    if not shape:
        return element_type
    tile = next(type(t) for t in types if isinstance(t, TileShapedType))
    return tile(shape, element_type)


class SameTileType(OpTrait):
    """The op's tiles are of one tile type: the ops are shared by the levels,
    the values of one op belong to one level."""

    def verify(self, op: Operation) -> None:
        types = [*op.operand_types, *op.result_types]
        tiles = {type(t) for t in types if isinstance(t, TileShapedType)}
        if len(tiles) > 1:
            names = sorted(t.name for t in tiles)
            raise VerifyException(f"{op.name} mixes tile types {names}")


class InsideKernel(OpTrait):
    """The op reads its kernel's launch (a program id, a tile, a symbol or an
    argument), so it is meaningful only inside a tiled kernel: a
    ``loop.kernel``, ``memory.kernel`` or ``triton.kernel``."""

    def verify(self, op: Operation) -> None:
        if enclosing_op(op, TiledKernelOp) is None:
            raise VerifyException(
                f"{op.name} reads a kernel's launch; it must be inside a kernel"
            )


def _verify_integer(op: Operation, type_: Attribute) -> None:
    if not is_integer(type_):
        raise VerifyException(f"{op.name} yields integers")


# --------------------------------------------------------------------------
# Indices and sizes
# --------------------------------------------------------------------------


@irdl_op_definition
class ProgramIdOp(IRDLOperation):
    """``tile.program_id 0 : i64``: this program's coordinate on a grid axis
    (``tl.program_id(0)``, widened to the result's type)."""

    name = "tile.program_id"
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


@irdl_op_definition
class SizeOp(IRDLOperation):
    """``tile.size D*N : i64``: a symbolic size over the kernel's symbols,
    evaluated in the result's type from their values at launch (the
    triton kernel's symbol arguments)."""

    name = "tile.size"
    expr = prop_def(SymExprAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "custom<SymExprValue>($expr) attr-dict `:` type($result)"
    custom_directives = (SymExprValue,)

    def __init__(self, expr: SymExpr | int, index_type: IntegerType):
        super().__init__(
            properties={"expr": SymExprAttr(as_expr(expr))}, result_types=[index_type]
        )


@irdl_op_definition
class RangeOp(IRDLOperation):
    """``tile.range "BLOCK" : !loop.tile<[1, 64], i64>``: ``0 .. BLOCK-1``
    along the one dim of the tile that is not 1 (``tl.arange(0,
    BLOCK)[None, :]``)."""

    name = "tile.range"
    block = prop_def(StringAttr)
    result = result_def(TileShapedType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, result_type: TileShapedType):
        super().__init__(
            properties={"block": StringAttr(block)}, result_types=[result_type]
        )

    @property
    def axis(self) -> int:
        """The dim the range lies along (the last when every dim is 1)."""
        shape = shape_of(self.result.type)
        return next((i for i, d in enumerate(shape) if d != 1), len(shape) - 1)

    def verify_(self) -> None:
        if sum(d != 1 for d in shape_of(self.result.type)) > 1:
            raise VerifyException(f"{self.name} spans one dim of its tile")
        _verify_integer(self, self.result.type)


@irdl_op_definition
class BlockSizeOp(IRDLOperation):
    """``tile.block_size "BLOCK" : i64``: the size of one of the kernel's
    tiles as a scalar (a loop's start or step in lanes of that tile): its
    declared size, or the size the launch chose where the kernel's
    ``launch_tiles`` attribute lets the launcher choose it
    (``irc.dialects.kernel_kind``)."""

    name = "tile.block_size"
    block = prop_def(StringAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure(), InsideKernel())
    assembly_format = "$block attr-dict `:` type($result)"

    def __init__(self, block: str, index_type: IntegerType):
        super().__init__(
            properties={"block": StringAttr(block)}, result_types=[index_type]
        )


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


@irdl_op_definition
class ConstantOp(IRDLOperation, HasFolderInterface):
    """``tile.constant 1.5 : f32``: a typed scalar constant (``ConstantLike``:
    it folds to its value, which the other folders read)."""

    name = "tile.constant"
    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()
    traits = traits_def(Pure(), ConstantLike())
    assembly_format = "custom<TypedScalar>($value, type($result)) attr-dict"
    custom_directives = (TypedScalar,)

    def __init__(self, value: IntegerAttr | FloatAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def verify_(self) -> None:
        if self.result.type != self.value.type:
            raise VerifyException(f"{self.name} result type must be the value's type")

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)


@irdl_op_definition
class SplatOp(IRDLOperation):
    """``tile.splat %s : f32 -> !loop.tile<[64, 64], f32>``: a scalar in
    every lane of a tile."""

    name = "tile.splat"
    input = operand_def()
    result = result_def(TileShapedType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: TileShapedType):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        if isinstance(self.input.type, TileShapedType):
            raise VerifyException(f"{self.name} takes a scalar")
        if element_of(self.result.type) != self.input.type:
            raise VerifyException(f"{self.name} keeps the element type")


@irdl_op_definition
class UnaryOp(IRDLOperation):
    """``tile.unary exp %x : !loop.tile<[128], f32>``: elementwise, of a
    unary primitive, with its NumPy semantics."""

    name = "tile.unary"
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


#: The ``"$kind $lhs, $rhs : (Ta, Tb) -> T"`` syntax of the kinded pairs.
_PAIR_FORMAT = (
    "$kind $lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` "
    "`->` type($result)"
)


def _pair_result(lhs: SSAValue, rhs: SSAValue, element_type: Attribute) -> Attribute:
    """The result type of an elementwise pair: the broadcast shape."""
    shape = broadcast_tile_shapes(shape_of(lhs.type), shape_of(rhs.type))
    return tile_like(shape, element_type, lhs.type, rhs.type)


def _verify_pair_broadcast(op: BinaryOp | CompareOp) -> None:
    verify_broadcast(
        op,
        [shape_of(op.lhs.type), shape_of(op.rhs.type)],
        shape_of(op.result.type),
    )


#: ``tile.binary`` kinds folded when both operands are integer constants.
_INT_FOLDS: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
}


def _constant_int(value: SSAValue) -> int | None:
    """The value of a ``ConstantLike`` integer operand, else None."""
    attr = ConstantLike.get_constant_value(value)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


@irdl_op_definition
class BinaryOp(IRDLOperation, HasFolderInterface):
    """``tile.binary add %a, %b : (f32, !loop.tile<[128], f32>) ->
    !loop.tile<[128], f32>``: elementwise, of a binary primitive (``floordiv``,
    ``rem``, ``pow``, ``max`` as NumPy), with tile broadcasting; both
    operands have the result's element type.

    On integers (not ``i1``) it folds the identities that hold for every
    value: ``add``, ``sub`` and ``mul`` of two constants (wrapping at the
    type's width), ``x + 0``, ``0 + x``, ``x * 1``, ``1 * x``, ``x floordiv
    1`` to ``x``, and ``x * 0``, ``0 * x``, ``x rem 1`` to ``0``. Constants
    are scalars, so a fold to an operand keeps the result's type; a fold to
    ``0`` of a tile result is the value of every lane (the scalar
    attribute): the dialect materialises scalar constants only, so
    ``canonicalize`` leaves those, and a builder may use the scalar where
    broadcasting makes it the same (the tiler's index arithmetic)."""

    name = "tile.binary"
    kind = prop_def(ElementwiseKindAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure(), SameTileType())
    assembly_format = _PAIR_FORMAT

    def __init__(self, kind: Primitive | str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs],
            properties={"kind": ElementwiseKindAttr(as_primitive(kind))},
            result_types=[_pair_result(lhs, rhs, element_of(lhs.type))],
        )

    def verify_(self) -> None:
        check_arity(self, self.kind.data, 2)
        element = element_of(self.result.type)
        if element_of(self.lhs.type) != element or element_of(self.rhs.type) != element:
            raise VerifyException(
                f"{self.name} operands must have the result's element type"
            )
        _verify_pair_broadcast(self)

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        element = element_of(self.result.type)
        if not isinstance(element, IntegerType) or element == i1:
            return None
        kind = self.kind.data.name
        a, b = _constant_int(self.lhs), _constant_int(self.rhs)
        if a is not None and b is not None and kind in _INT_FOLDS:
            value = _INT_FOLDS[kind](a, b)
            return (IntegerAttr(value, element, truncate_bits=True),)
        # A constant is a scalar: keeping the other operand keeps the type.
        if (kind == "add" and b == 0) or (kind in ("mul", "floordiv") and b == 1):
            return (self.lhs,)
        if (kind == "add" and a == 0) or (kind == "mul" and a == 1):
            return (self.rhs,)
        if (kind == "mul" and 0 in (a, b)) or (kind == "rem" and b == 1):
            return (IntegerAttr(0, element),)
        return None


@dataclass(frozen=True)
class Digit:
    """An index of the form ``(base floordiv divisor) rem modulus`` (no
    ``rem`` when ``modulus`` is None): one coordinate of a row-major
    delinearization of ``base``, as the tiler writes them."""

    base: SSAValue
    divisor: SymExpr
    modulus: SymExpr | None
    #: ``base floordiv divisor``: ``base`` itself when the divisor is 1.
    quotient: SSAValue

    @staticmethod
    def of(index: SSAValue) -> Digit:
        quotient, modulus = index, None
        if (remainder := _by_extent(index, "rem")) is not None:
            quotient, modulus = remainder
        if (division := _by_extent(quotient, "floordiv")) is not None:
            return Digit(division[0], division[1], modulus, quotient)
        return Digit(quotient, SymExpr.const(1), modulus, quotient)


def _by_extent(value: SSAValue, kind: str) -> tuple[SSAValue, SymExpr] | None:
    """``(x, e)`` when ``value`` is ``tile.binary kind x, s`` with ``s`` a
    ``tile.size`` or integer constant of extent ``e``."""
    owner = value.owner
    if not isinstance(owner, BinaryOp) or owner.kind.data.name != kind:
        return None
    extent = _size_value(owner.rhs)
    return None if extent is None else (owner.lhs, extent)


def _size_value(value: SSAValue) -> SymExpr | None:
    """The extent a ``tile.size`` or integer ``tile.constant`` stands for."""
    owner = value.owner
    if isinstance(owner, SizeOp):
        return owner.expr.data
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return SymExpr.const(owner.value.value.data)
    return None


@irdl_op_definition
class CompareOp(IRDLOperation):
    """``tile.cmp lt %a, %b : (T1, T2) -> !loop.tile<[128], i1>``: an
    elementwise ``ComparisonPredicate`` with broadcasting, yielding i1."""

    name = "tile.cmp"
    kind = prop_def(ComparisonPredicateAttr)
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    traits = traits_def(Pure(), SameTileType())
    assembly_format = _PAIR_FORMAT

    def __init__(self, kind: str, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs],
            properties={"kind": ComparisonPredicateAttr(ComparisonPredicate(kind))},
            result_types=[_pair_result(lhs, rhs, i1)],
        )

    def verify_(self) -> None:
        if element_of(self.lhs.type) != element_of(self.rhs.type):
            raise VerifyException(f"{self.name} operands must share an element type")
        if element_of(self.result.type) != i1:
            raise VerifyException(f"{self.name} yields i1")
        _verify_pair_broadcast(self)


@irdl_op_definition
class SelectOp(IRDLOperation):
    """``tile.select %c, %a, %b : (Tc, Ta, Tb) -> T``: ``a`` where ``c``,
    else ``b``, the shapes broadcasting (``tl.where``)."""

    name = "tile.select"
    condition = operand_def()
    on_true = operand_def()
    on_false = operand_def()
    result = result_def()
    traits = traits_def(Pure(), SameTileType())
    assembly_format = (
        "$condition `,` $on_true `,` $on_false attr-dict `:` `(` type($condition) `,` "
        "type($on_true) `,` type($on_false) `)` `->` type($result)"
    )

    def __init__(self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue):
        types = [v.type for v in (condition, on_true, on_false)]
        shape = broadcast_tile_shapes(*(shape_of(t) for t in types))
        super().__init__(
            operands=[condition, on_true, on_false],
            result_types=[tile_like(shape, element_of(on_true.type), *types)],
        )

    def verify_(self) -> None:
        if element_of(self.condition.type) != i1:
            raise VerifyException(f"{self.name} condition must be i1")
        element = element_of(self.result.type)
        if (
            element_of(self.on_true.type) != element
            or element_of(self.on_false.type) != element
        ):
            raise VerifyException(
                f"{self.name} branches must have the result's element type"
            )
        verify_broadcast(
            self,
            [shape_of(v.type) for v in (self.condition, self.on_true, self.on_false)],
            shape_of(self.result.type),
        )


@irdl_op_definition
class CastOp(IRDLOperation, HasFolderInterface):
    """``tile.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i64>``:
    the same shape, another element type, as NumPy's ``astype`` (float to
    int truncates toward zero; to i1 is ``!= 0``); a cast to the input's own
    type folds to the input."""

    name = "tile.cast"
    input = operand_def()
    result = result_def()
    traits = traits_def(Pure(), SameTileType())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, element_type: Attribute):
        shape = shape_of(value.type)
        super().__init__(
            operands=[value],
            result_types=[tile_like(shape, element_type, value.type)],
        )

    def verify_(self) -> None:
        if shape_of(self.input.type) != shape_of(self.result.type):
            raise VerifyException(f"{self.name} keeps the tile shape")

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return (self.input,) if self.input.type == self.result.type else None


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """``tile.reduce sum %t 0 : !loop.tile<[128], f32> -> f32``: reduce one
    dim of a tile (it disappears from the shape), with NumPy's semantics
    (NaN propagates through max and min); ``argmax`` yields the first lane
    holding the maximum, as an integer of the result type."""

    name = "tile.reduce"
    kind = prop_def(ReductionKindAttr)
    axis = prop_def(IntegerAttr[I64])
    input = operand_def(TileShapedType)
    result = result_def()
    traits = traits_def(Pure(), SameTileType())
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
            properties={
                "kind": ReductionKindAttr(ReductionKind(kind)),
                "axis": IntegerAttr(axis, i64),
            },
            result_types=[tile_like(shape, element, value.type)],
        )

    def verify_(self) -> None:
        shape = list(shape_of(self.input.type))
        axis = self.axis.value.data
        if not 0 <= axis < len(shape):
            raise VerifyException(f"{self.name} axis {axis} out of range")
        del shape[axis]
        if tuple(shape) != shape_of(self.result.type):
            raise VerifyException(f"{self.name} result must drop the reduced dim")
        if self.kind.data == "argmax":
            if not is_integer(self.result.type):
                raise VerifyException(f"{self.name} argmax yields integers")
        elif element_of(self.result.type) != element_of(self.input.type):
            raise VerifyException(f"{self.name} keeps the element type")


@irdl_op_definition
class ScanOp(IRDLOperation):
    """``tile.scan sum %t 0 : !loop.tile<[128], f32>``: the inclusive scan
    (running sum or product: lane ``i`` combines lanes ``0..i``) along one
    dim of a tile, of the input's type; 16-bit floats accumulate in float32
    and round once per lane, as reductions do."""

    name = "tile.scan"
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
        if not isinstance(self.input.type, TileShapedType):
            raise VerifyException(f"{self.name} scans a tile, not a scalar")
        axis = self.axis.value.data
        if not 0 <= axis < len(shape_of(self.input.type)):
            raise VerifyException(f"{self.name} axis {axis} out of range")
        if self.kind.data not in (ReductionKind.SUM, ReductionKind.PROD):
            raise VerifyException(
                f"{self.name} computes running sums and products, not {self.kind.data}"
            )
        if element_of(self.input.type) == i1:
            raise VerifyException(f"{self.name} is not defined on i1")


@irdl_op_definition
class DotOp(IRDLOperation):
    """``tile.dot %a, %b, %acc``: ``acc + a @ b`` on 2-D tiles (``[M, K] x
    [K, N] -> [M, N]``), accumulated in ``acc``'s type (IEEE fp32 for float
    inputs, as NumPy does)."""

    name = "tile.dot"
    lhs = operand_def(TileShapedType)
    rhs = operand_def(TileShapedType)
    acc = operand_def(TileShapedType)
    result = result_def(TileShapedType)
    traits = traits_def(Pure(), SameTileType())
    assembly_format = (
        "$lhs `,` $rhs `,` $acc attr-dict `:` `(` type($lhs) `,` type($rhs) `,` "
        "type($acc) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, acc: SSAValue):
        super().__init__(operands=[lhs, rhs, acc], result_types=[acc.type])

    def verify_(self) -> None:
        lhs, rhs = shape_of(self.lhs.type), shape_of(self.rhs.type)
        if len(lhs) != 2 or len(rhs) != 2:
            raise VerifyException(f"{self.name} takes 2-D tiles")
        (m, k), (k2, n) = lhs, rhs
        if k != k2 or shape_of(self.acc.type) != (m, n):
            raise VerifyException(
                f"{self.name} shapes must be [M, K] x [K, N] -> [M, N]"
            )
        if element_of(self.lhs.type) != element_of(self.rhs.type):
            raise VerifyException(f"{self.name} operands must share an element type")
        if self.acc.type != self.result.type:
            raise VerifyException(f"{self.name} result has the accumulator's type")


def _yields_index(op: Operation) -> bool:
    """Whether ``op`` yields indices, in the integers its level indexes with
    (``TileShapedType.is_index``)."""
    if isinstance(op, ReduceOp):
        return op.kind.data == ReductionKind.ARGMAX
    return isinstance(op, ProgramIdOp | SizeOp | RangeOp | BlockSizeOp)


class TileConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become ``tile.constant`` ops: scalars only (a tile
    result folded to a scalar attribute is left as it is)."""

    def materialize_constant(
        self, value: Attribute, type: Attribute
    ) -> Operation | None:
        if isinstance(value, IntegerAttr | FloatAttr) and value.type == type:
            return ConstantOp(value)
        return None


Tile = Dialect(
    "tile",
    [
        ProgramIdOp,
        SizeOp,
        RangeOp,
        BlockSizeOp,
        ConstantOp,
        SplatOp,
        UnaryOp,
        BinaryOp,
        CompareOp,
        SelectOp,
        CastOp,
        ReduceOp,
        ScanOp,
        DotOp,
    ],
    [],
    [TileConstantMaterialization()],
)
