"""The loop dialect: each kernel as a tiled loop nest over symbolic extents.

A ``loop.kernel`` is what one fusion kernel becomes once tiled. It keeps
value semantics at its boundary (graph tensors in, graph tensors out) but
spells out how the work is split:

- the parallel **grid** (``grid = [N, (D*N + 1023) floordiv 1024]``): how many
  programs run along each axis, as symbolic expressions; a program reads its
  coordinates with ``tile.program_id``;
- power-of-two **tiles** (``tiles = {BLOCK = 1024}``): the block sizes that
  become ``tl.constexpr`` parameters; ``tile.range "BLOCK"`` is ``0 ..
  BLOCK-1`` laid along one dim of a tile;
- sequential loops (``scf.for`` with ``iter_args``) for reductions that do
  not fit a tile and for the K dimension of a matmul;
- tile compute, the ``tile`` dialect's (``tile.binary``, ``tile.reduce``,
  ``tile.scan``, ``tile.dot``...), on values that are scalars (builtin
  ``f32``, ``i64``, ...) or this level's tiles (``!loop.tile<[64, 1],
  f32>``); shapes broadcast as in Triton.

Tensors are read element-wise at computed indices (``loop.read``, masked
lanes read 0) and results written the same way (``loop.write``): the memory
level turns these into loads and stores of buffers with strides. Symbolic
sizes are ``tile.size`` ops whose value is an expression over the kernel's
``symbols``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
    i64,
)
from xdsl.ir import Dialect, Region, SSAValue
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
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from irc.dialects.graph import TensorType
from irc.dialects.syntax import InputTypes
from irc.dialects.tile import (
    KERNEL_DIRECTIVES,
    KERNEL_HEADER_FORMAT,
    LAUNCH_FORMAT,
    InsideKernel,
    TiledKernelOp,
    TileShapedType,
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
    ``tile.size`` ops may use (they become scalar kernel arguments). The
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
    TILE_TYPE: ClassVar = TileType

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


Loop = Dialect("loop", [KernelOp, ReadOp, WriteOp], [TileType])
