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
- tile-level compute (``loop.binary``, ``loop.reduce``, ``loop.scan``,
  ``loop.dot``...) on
  values that are scalars (builtin ``f32``, ``i64``, ...) or tiles
  (``!loop.tile<[64, 1], f32>``); shapes broadcast as in Triton.

Tensors are read element-wise at computed indices (``loop.read``, masked
lanes read 0) and results written the same way (``loop.write``): the memory
level turns these into loads and stores of buffers with strides. Symbolic
sizes are ``loop.size`` ops whose value is an expression over the kernel's
``symbols``.

Folding (xDSL's ``HasFolderInterface``; ``canonicalize`` runs the folders,
and so does the ``tile`` pass on every op it builds): ``loop.constant`` is
``ConstantLike`` and folds to its value; ``loop.cast`` to its own type folds
to its input; ``loop.binary`` on integers (not ``i1``) folds the identities
that hold for every value: ``add``, ``sub`` and ``mul`` of two constants
(wrapping at the type's width), ``x + 0``, ``0 + x``, ``x * 1``, ``1 * x``,
``x floordiv 1`` to ``x``, and ``x * 0``, ``0 * x``, ``x rem 1`` to ``0``.
Constants are scalars, so a fold to an operand keeps the result's type; a
fold to ``0`` of a tile result is the value of every lane (the scalar
attribute): the dialect materialises scalar constants only, so
``canonicalize`` leaves those, and a builder may use the scalar where
broadcasting makes it the same (the tiler's index arithmetic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ClassVar

from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects.builtin import (
    I64,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
    i64,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from irc.dialects.graph import TensorType
from irc.dialects.syntax import InputTypes
from irc.dialects.tiles import (
    KERNEL_DIRECTIVES,
    KERNEL_HEADER_FORMAT,
    LAUNCH_FORMAT,
    BinaryOpBase,
    BlockSizeOpBase,
    CastOpBase,
    CompareOpBase,
    ConstantOpBase,
    DotOpBase,
    InsideKernel,
    ProgramIdOpBase,
    RangeOpBase,
    ReduceOpBase,
    ScanOpBase,
    SelectOpBase,
    SizeOpBase,
    SplatOpBase,
    TiledKernelOp,
    TileShapedType,
    UnaryOpBase,
    broadcast_or_raise,
    broadcast_tile_shapes,
    enclosing_op,
    verify_broadcast,
)
from irc.shapes import SymExpr

# --------------------------------------------------------------------------
# Tile type
# --------------------------------------------------------------------------


@irdl_attr_definition
class TileType(TileShapedType):
    """A tile of values: ``!loop.tile<[64, 1], f32>``.

    Dims are powers of two or 1; a dim of 1 broadcasts. Scalars are not
    tiles: they are plain builtin types (``f32``, ``i64``, ``i1``).
    """

    name = "loop.tile"


#: The tile shape of a loop value's type; ``()`` for a scalar.
shape_of = TileType.shape_of
#: The element type of a loop value's type.
element_of = TileType.element_of
#: The type of a loop value: a tile, or the scalar type for shape ``()``.
value_type = TileType.value_type


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(TiledKernelOp):
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

    # loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK = 128} symbols [D, N]
    #     reason "..." : (T1) -> (T2) { ^bb0(%a: T1): ... }
    assembly_format = (
        f"{KERNEL_HEADER_FORMAT} ` ` `(` $inputs `)` {LAUNCH_FORMAT} "
        "attr-dict-with-keyword `:` custom<InputTypes>(ref($inputs), type($inputs)) "
        "`->` `(` type($outputs) `)` $body"
    )
    custom_directives = (*KERNEL_DIRECTIVES, InputTypes)

    SORTED_SYMBOLS: ClassVar[bool] = True

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
            properties=self.launch_properties(
                name, kind, grid, tiles, sorted(symbols), reason
            ),
            regions=[body],
        )

    def verify_(self) -> None:
        self.verify_launch()
        args = self.body.block.args
        if [a.type for a in args] != [o.type for o in self.inputs]:
            raise VerifyException("loop.kernel block arguments must match its inputs")
        written: set[int] = set()
        for op in self.body.walk():
            self.verify_body_op(op)
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
class ProgramIdOp(ProgramIdOpBase):
    """``loop.program_id 0 : i64``: this program's coordinate on a grid axis."""

    name = "loop.program_id"
    TILE_TYPE: ClassVar = TileType


@irdl_op_definition
class SizeOp(SizeOpBase):
    """``loop.size D*N : i64``: a symbolic size, evaluated from the kernel's
    symbols at launch."""

    name = "loop.size"
    TILE_TYPE: ClassVar = TileType


@irdl_op_definition
class RangeOp(RangeOpBase):
    """``loop.range "BLOCK" : !loop.tile<[1, 64], i64>``: ``0 .. BLOCK-1``
    along the one dim of the tile that is not 1."""

    name = "loop.range"
    TILE_TYPE: ClassVar = TileType
    result = result_def(TileType)


@irdl_op_definition
class BlockSizeOp(BlockSizeOpBase):
    """``loop.block_size "BLOCK_R" : i64``: the size of tile ``BLOCK_R`` (a
    loop's start or step over its lanes): the declared size here, in the
    reference interpreters; at launch, the size the launcher chose where
    the kernel's ``launch_tiles`` attribute names the tile."""

    name = "loop.block_size"
    TILE_TYPE: ClassVar = TileType


# --------------------------------------------------------------------------
# Tile compute
# --------------------------------------------------------------------------


@irdl_op_definition
class ConstantOp(ConstantOpBase, HasFolderInterface):
    """``loop.constant 1.5 : f32``: a scalar constant (``ConstantLike``: it
    folds to its value, which the other folders read)."""

    name = "loop.constant"
    TILE_TYPE: ClassVar = TileType
    traits = traits_def(ConstantLike())

    def fold(self) -> Sequence[SSAValue | Attribute]:
        return (self.value,)


@irdl_op_definition
class SplatOp(SplatOpBase):
    """``loop.splat %s : f32 -> !loop.tile<[64, 64], f32>``: a scalar
    copied to every lane of a tile."""

    name = "loop.splat"
    TILE_TYPE: ClassVar = TileType
    result = result_def(TileType)


@irdl_op_definition
class UnaryOp(UnaryOpBase):
    """``loop.unary exp %x : !loop.tile<[128], f32>``; ``floordiv`` and
    ``rem`` of the binary op, and these, follow NumPy's semantics."""

    name = "loop.unary"
    TILE_TYPE: ClassVar = TileType


#: ``loop.binary`` kinds folded when both operands are integer constants.
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
class BinaryOp(BinaryOpBase, HasFolderInterface):
    """``loop.binary add %a, %b : (f32, !loop.tile<[128], f32>) ->
    !loop.tile<[128], f32>``: elementwise with tile broadcasting; both
    operands have the result's element type. On integers it folds the
    identities of the module docstring."""

    name = "loop.binary"
    TILE_TYPE: ClassVar = TileType

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


@irdl_op_definition
class CompareOp(CompareOpBase):
    """``loop.cmp lt %a, %b : (T1, T2) -> !loop.tile<[128], i1>``."""

    name = "loop.cmp"
    TILE_TYPE: ClassVar = TileType


@irdl_op_definition
class SelectOp(SelectOpBase):
    """``loop.select %c, %a, %b : (Tc, Ta, Tb) -> T``: ``a`` where ``c``."""

    name = "loop.select"
    TILE_TYPE: ClassVar = TileType


@irdl_op_definition
class CastOp(CastOpBase, HasFolderInterface):
    """``loop.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i64>``
    (float to int truncates toward zero, as NumPy's ``astype``); a cast to
    the input's own type folds to the input."""

    name = "loop.cast"
    TILE_TYPE: ClassVar = TileType

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return (self.input,) if self.input.type == self.result.type else None


@irdl_op_definition
class ReduceOp(ReduceOpBase):
    """``loop.reduce sum %t 0 : !loop.tile<[128], f32> -> f32``: reduce one
    tile dim (it disappears from the shape). ``argmax`` yields the first
    lane holding the maximum, as an integer of the result type."""

    name = "loop.reduce"
    TILE_TYPE: ClassVar = TileType
    input = operand_def(TileType)


@irdl_op_definition
class ScanOp(ScanOpBase):
    """``loop.scan sum %t 0 : !loop.tile<[128], f32>``: the running sum or
    product of the lanes along one tile dim (lane ``i`` combines lanes
    ``0..i``), of the input's type; ``graph.scan`` within one tile."""

    name = "loop.scan"
    TILE_TYPE: ClassVar = TileType


@irdl_op_definition
class DotOp(DotOpBase):
    """``loop.dot %a, %b, %acc``: ``acc + a @ b`` on 2-D tiles
    (``[M, K] x [K, N] -> [M, N]``), accumulated in ``acc``'s type."""

    name = "loop.dot"
    TILE_TYPE: ClassVar = TileType
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    acc = operand_def(TileType)
    result = result_def(TileType)


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
    traits = traits_def(Pure(), InsideKernel())
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
        verify_broadcast(self, shapes, shape_of(self.result.type))


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
        kernel = enclosing_op(self, KernelOp)
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
        operands = [
            self.value,
            *self.indices,
            *([] if self.mask is None else [self.mask]),
        ]
        broadcast_or_raise(self, *(shape_of(v.type) for v in operands))


class LoopConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become ``loop.constant`` ops: scalars only (a tile
    result folded to a scalar attribute is left as it is)."""

    def materialize_constant(
        self, value: Attribute, type: Attribute
    ) -> Operation | None:
        if isinstance(value, IntegerAttr | FloatAttr) and value.type == type:
            return ConstantOp(value)
        return None


Loop = Dialect(
    "loop",
    [
        KernelOp,
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
        ReadOp,
        WriteOp,
    ],
    [TileType],
    [LoopConstantMaterialization()],
)
