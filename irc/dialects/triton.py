"""The triton dialect: kernels as Triton writes them.

The last level before Python source. ``triton.kernel`` (``KernelOp``) takes
what a ``@triton.jit`` function receives: a ``!triton.ptr`` (``PointerType``)
per buffer, then an integer per symbol its body uses; the body computes with
the ``tile`` dialect's ops on ``!triton.tensor`` blocks (``BlockType``) and
reaches memory through ``triton.load`` and ``triton.store``. Every op is one
``tl`` call, so the emitter (``irc.backend.triton``) is a printer.

See docs/lowering.md, section "The triton level".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerType,
    StringAttr,
    i1,
)
from xdsl.ir import (
    Attribute,
    BlockArgument,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.sym import SymExprAttr, SymExprList, SymExprValue, product
from irc.dialects.tile import (
    ModuleKernelOp,
    TileShapedType,
    enclosing_op,
)

# Exported from here too: the emitter broadcasts as ``tt.broadcast_tile_shapes``.
from irc.dialects.tile import broadcast_tile_shapes as broadcast_tile_shapes
from irc.dtypes import ELEMENT_TYPES
from irc.shapes import SymExpr

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
class BlockType(TileShapedType):
    """A block of values, ``!triton.tensor<[128, 1], f32>``: Triton's
    ``tl.tensor`` of a ``block_type``.

    Dims are powers of two (1 included), at most 2**20 elements in all;
    scalars are builtin types, not blocks of rank 0.

    The type is this dialect's own rather than ``loop.tile`` so that a
    triton-level module depends on no other level's types (only the host
    functions keep memory ops) and so that its verifier states Triton's own
    limits. Its dims are explicit, 1 included, because ``tl.arange(0,
    B)[:, None]`` and ``tl.arange(0, B)[None, :]`` differ.
    """

    name = "triton.tensor"

    NOUN: ClassVar = "block"
    INDEX_TEXT: ClassVar = "i32 or i64"

    @property
    def numel(self) -> int:
        count = 1
        for dim in self.dims:
            count *= dim
        return count

    def verify(self) -> None:
        super().verify()
        if self.numel > MAX_BLOCK_NUMEL:
            raise VerifyException(
                f"a triton.tensor holds at most {MAX_BLOCK_NUMEL} elements, not "
                f"{self.numel}"
            )

    @classmethod
    def is_index(cls, type_: Attribute) -> bool:
        """Whether values of ``type_`` can index: Triton's i32 or i64."""
        element = cls.element_of(type_)
        return isinstance(element, IntegerType) and element.width.data in (32, 64)


#: The block shape of a triton value's type; ``()`` for a scalar.
shape_of = BlockType.shape_of
#: The element type of a triton value's type.
element_of = BlockType.element_of
#: A block of ``shape``, or the scalar type itself for shape ``()``.
value_type = BlockType.value_type
_is_index = BlockType.is_index


# --------------------------------------------------------------------------
# Kernel
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(ModuleKernelOp):
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

    TILE_TYPE: ClassVar = BlockType

    @property
    def pointer_args(self) -> tuple[BlockArgument, ...]:
        """The buffers' pointers: inputs, then outputs."""
        return self.args[: len(self.args) - len(self.symbols.data)]

    @property
    def output_args(self) -> tuple[BlockArgument, ...]:
        return self.pointer_args[self.num_inputs :]

    @property
    def buffer_element_types(self) -> tuple[Attribute, ...]:
        # A non-pointer argument is reported by the kernel's verifier.
        return tuple(
            arg.type.element_type if isinstance(arg.type, PointerType) else arg.type
            for arg in self.pointer_args
        )

    @property
    def symbol_args(self) -> tuple[BlockArgument, ...]:
        """One integer per symbol, in the order of ``symbol_names``."""
        return self.args[len(self.pointer_args) :]

    @property
    def pieces(self) -> tuple[PieceOp, ...]:
        """The kernels this one combines (``triton.piece``), in the order
        of their programs; empty for a kernel of its own."""
        return tuple(op for op in self.body.block.ops if isinstance(op, PieceOp))

    def verify_(self) -> None:
        self.verify_launch()
        self._verify_arguments()
        self._verify_body_ops()
        if self.pieces:
            self._verify_pieces()

    def _verify_pieces(self) -> None:
        """A combined kernel holds pieces only, each starting where the one
        before ends, on a flat grid that they fill."""
        ops = list(self.body.block.ops)
        if len(ops) != len(self.pieces):
            raise VerifyException(
                f"triton.kernel @{self.kernel_name} combines pieces: its body holds "
                "triton.piece ops only"
            )
        end = SymExpr.const(0)
        for piece in self.pieces:
            if piece.offset_expr != end:
                raise VerifyException(
                    f"triton.piece {piece.piece.data!r} starts at program "
                    f"{piece.offset_expr}, not {end} where the piece before it ends"
                )
            end = end + piece.programs
        if self.grid_exprs != (end,):
            raise VerifyException(
                f"triton.kernel @{self.kernel_name} combines pieces of {end} "
                f"programs in all: its grid is [{end}], not "
                f"[{', '.join(str(g) for g in self.grid_exprs)}]"
            )

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
        """Sizes use declared symbols, aranges declared tiles; stores write
        output pointers only."""
        outputs = set(self.output_args)
        for op in self.body.walk():
            self.verify_body_op(op)
            if isinstance(op, StoreOp) and op.pointer not in outputs:
                raise VerifyException(
                    f"triton.store to a pointer that is not one of @{self.kernel_name}'s "
                    f"{len(outputs)} output arguments"
                )


def enclosing_kernel(op: Operation) -> KernelOp | None:
    """The ``triton.kernel`` that holds ``op``, if any."""
    return enclosing_op(op, KernelOp)


@irdl_op_definition
class PieceOp(IRDLOperation):
    """``triton.piece "k3" offset N grid [N, 4] reason "..." { ... }``: the
    programs of one kernel inside a kernel that combines several into one
    launch (``combine-launches``).

    The programs of the enclosing kernel's flat grid from ``offset`` up to
    ``offset`` plus the product of the piece's ``grid`` run the body; the
    others skip it. Inside the body, ``tile.program_id a`` is the program's
    coordinate on axis ``a`` of the piece's own ``grid`` (axis 0 varying
    fastest, as CUDA numbers a grid), so the body is the kernel it comes
    from (``piece`` names it, ``reason`` is its reason) unchanged.
    """

    name = "triton.piece"

    piece = prop_def(StringAttr)
    offset = prop_def(SymExprAttr)
    grid = prop_def(ArrayAttr[SymExprAttr])
    reason = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator(), HasParent(KernelOp))

    assembly_format = (
        "$piece `offset` custom<SymExprValue>($offset) `grid` "
        "custom<SymExprList>($grid) `reason` $reason attr-dict-with-keyword $body"
    )
    custom_directives = (SymExprValue, SymExprList)

    @property
    def offset_expr(self) -> SymExpr:
        return self.offset.data

    @property
    def grid_exprs(self) -> tuple[SymExpr, ...]:
        return tuple(g.data for g in self.grid.data)

    @property
    def programs(self) -> SymExpr:
        """How many programs of the flat grid run this piece."""
        return product(self.grid_exprs)

    def verify_(self) -> None:
        if not 1 <= len(self.grid.data) <= 3:
            raise VerifyException("a triton.piece grid has 1 to 3 axes")


def program_grid(op: Operation) -> tuple[SymExpr, ...]:
    """The grid whose coordinates ``tile.program_id`` gives at ``op``: that
    of the piece holding it in a combined kernel, else its kernel's."""
    piece = enclosing_op(op, PieceOp)
    if piece is not None:
        return piece.grid_exprs
    kernel = enclosing_kernel(op)
    return kernel.grid_exprs if kernel is not None else ()


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
        shape = BlockType.broadcast_of(*types)
        super().__init__(
            operands=[pointer, offset, [] if mask is None else [mask]],
            result_types=[value_type(shape, _pointee(pointer))],
        )

    def verify_(self) -> None:
        _verify_access(self, self.pointer, self.offset, self.mask)
        types = [self.offset.type] + ([] if self.mask is None else [self.mask.type])
        expected = value_type(
            BlockType.broadcast_of(*types, op=self), _pointee(self.pointer)
        )
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
        if self.mask is not None:
            types.append(self.mask.type)
        BlockType.broadcast_of(*types, op=self)


Triton = Dialect(
    "triton",
    [
        KernelOp,
        PieceOp,
        LoadOp,
        StoreOp,
    ],
    [PointerType, BlockType],
)
