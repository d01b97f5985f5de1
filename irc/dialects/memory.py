"""The memory dialect: kernels over buffers, and the host code that runs them.

Every tensor is a buffer (``!memory.buffer<[N, D], [D, 1], f32>``: symbolic
shape, symbolic element strides, element type). A module-level
``memory.kernel`` computes on buffers with ``memory.load`` and
``memory.store``; the host function allocates (``memory.alloc``,
``memory.reuse``, ``memory.dealloc``, ``memory.constant``), launches
(``memory.launch``) and runs control flow over buffers with
``memory.read_scalar``, ``memory.write_scalar``, ``memory.copy``,
``memory.row`` and ``memory.size``.

See docs/lowering.md, section "The memory level".
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntegerType,
    SymbolRefAttr,
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
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryFreeEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from irc.dialects.graph import TensorType
from irc.dialects.loop import TileType, element_of, value_type
from irc.dialects.sym import (
    SymExprAttr,
    SymExprValue,
    expr_array,
    facts_in_scope,
    parse_sym_expr_list,
    product,
    shape_text,
)
from irc.dialects.tile import (
    ModuleKernelOp,
    enclosing_op,
)
from irc.dtypes import ELEMENT_TYPES, dtype
from irc.shapes import Dim, Facts, SymExpr, as_expr

# --------------------------------------------------------------------------
# Buffer type
# --------------------------------------------------------------------------


def row_major_strides(dims: Sequence[SymExpr | int]) -> tuple[SymExpr, ...]:
    """The element strides of a contiguous row-major array of shape ``dims``:
    each stride is the product of the dims after it."""
    strides: list[SymExpr] = []
    running = SymExpr.const(1)
    for dim in reversed(dims):
        strides.append(running)
        running = running * dim
    return tuple(reversed(strides))


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """A view of memory: ``!memory.buffer<[N, D], [D, 1], f32>``.

    The first list is the shape, the second the strides in elements (both
    symbolic), then the element type. Element ``(i, j)`` lives at linear
    offset ``i * D + j`` of the storage. ``bufferize`` makes only row-major
    buffers; other strides are there for the layouts later passes may pick.
    """

    name = "memory.buffer"

    shape: ArrayAttr[SymExprAttr]
    layout: ArrayAttr[SymExprAttr]
    element_type: Attribute

    def __init__(
        self,
        shape: Iterable[Dim | str],
        element_type: Attribute,
        strides: Iterable[Dim | str] | None = None,
    ):
        dims = [as_expr(d) for d in shape]
        layout = row_major_strides(dims) if strides is None else strides
        super().__init__(expr_array(dims), expr_array(layout), element_type)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def of_tensor(tensor: TensorType) -> BufferType:
        """The row-major buffer holding a ``!graph.tensor`` of that type
        (one per type: building and verifying each anew was a fifth of
        ``bufferize``; attributes are immutable)."""
        return BufferType(tensor.dims, tensor.element_type)

    @property
    def dims(self) -> tuple[SymExpr, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def strides(self) -> tuple[SymExpr, ...]:
        return tuple(s.data for s in self.layout.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def numel(self) -> SymExpr:
        return product(self.dims)

    @property
    def is_row_major(self) -> bool:
        return self.strides == row_major_strides(self.dims)

    def tensor_type(self) -> TensorType:
        """The ``!graph.tensor`` this buffer holds the elements of."""
        return TensorType(self.dims, self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = parse_sym_expr_list(parser)
            parser.parse_punctuation(",")
            strides = parse_sym_expr_list(parser)
            parser.parse_punctuation(",")
            element_type = parser.parse_type()
        return (expr_array(dims), expr_array(strides), element_type)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{shape_text(self.dims)}, {shape_text(self.strides)}, ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")

    def verify(self) -> None:
        if len(self.layout.data) != len(self.shape.data):
            raise VerifyException(
                f"memory.buffer has {self.rank} dims but {len(self.layout.data)} "
                "strides; give one stride per dim"
            )
        if self.element_type not in ELEMENT_TYPES:
            supported = ", ".join(str(t) for t in ELEMENT_TYPES)
            raise VerifyException(
                f"unsupported element type {self.element_type} in memory.buffer; "
                f"supported: {supported}"
            )
        no_facts = Facts()
        for what, values in (("dim", self.dims), ("stride", self.strides)):
            for value in values:
                if no_facts.prove_lt(value, 0):
                    raise VerifyException(
                        f"{what} {value} of memory.buffer is negative"
                    )


def buffer_type(value: SSAValue) -> BufferType:
    """The type of a value that the op's constraints make a buffer."""
    type_ = value.type
    assert isinstance(type_, BufferType), "verified by the op's constraints"
    return type_


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(ModuleKernelOp):
    """A kernel over buffers, at module level; launched by ``memory.launch``.

    ``memory.kernel @k0 reduction (%x: T, %out: T) inputs 1 grid [N]
    tiles {BLOCK = 128} symbols [N] reason "..." { ... }``

    The first ``inputs`` arguments are read, the others written (one per
    output of the loop kernel it comes from). ``grid``, ``tiles``,
    ``symbols`` and ``reason`` mean what they mean on ``loop.kernel``;
    symbols are passed by name from the host function's binding.
    """

    name = "memory.kernel"

    SORTED_SYMBOLS: ClassVar = True
    TILE_TYPE: ClassVar = TileType

    @property
    def input_args(self) -> tuple[BlockArgument, ...]:
        return self.args[: self.num_inputs]

    @property
    def output_args(self) -> tuple[BlockArgument, ...]:
        return self.args[self.num_inputs :]

    @property
    def buffer_element_types(self) -> tuple[Attribute, ...]:
        # A non-buffer argument is reported by the kernel's verifier.
        return tuple(
            arg.type.element_type if isinstance(arg.type, BufferType) else arg.type
            for arg in self.args
        )

    def verify_(self) -> None:
        self.verify_launch()
        for index, arg in enumerate(self.args):
            if not isinstance(arg.type, BufferType):
                raise VerifyException(
                    f"memory.kernel argument {index} has type {arg.type}; kernel "
                    "arguments are !memory.buffer values"
                )
        if self.num_inputs > len(self.args):
            raise VerifyException(
                f"memory.kernel declares {self.num_inputs} inputs but has only "
                f"{len(self.args)} arguments"
            )
        for op in self.body.walk():
            self.verify_body_op(op)


def _enclosing_kernel(op: Operation) -> KernelOp | None:
    return enclosing_op(op, KernelOp)


# --------------------------------------------------------------------------
# Loads and stores
# --------------------------------------------------------------------------


def _is_offset_type(type_: Attribute) -> bool:
    element = element_of(type_)
    return isinstance(element, IntegerType) and element.width.data > 1


def _verify_access(op: Operation, offset: SSAValue, mask: SSAValue | None) -> None:
    if _enclosing_kernel(op) is None:
        raise VerifyException(f"{op.name} must be inside a memory.kernel")
    if not _is_offset_type(offset.type):
        raise VerifyException(
            f"{op.name} offset must be an integer (i32 or i64) scalar or tile, "
            f"not {offset.type}"
        )
    if mask is not None and element_of(mask.type) != i1:
        raise VerifyException(f"{op.name} mask must be i1, not {element_of(mask.type)}")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """``%v = memory.load %buf[%off] mask %m : B[O] mask M -> T``: the
    elements at the linear element offsets ``%off`` (a scalar or a tile);
    lanes where the mask is false read 0 and touch no memory."""

    name = "memory.load"

    buffer = operand_def(BufferType)
    offset = operand_def()
    mask = opt_operand_def()
    result = result_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect())
    assembly_format = (
        "$buffer `[` $offset `]` (`mask` $mask^)? attr-dict `:` type($buffer) "
        "`[` type($offset) `]` (`mask` type($mask)^)? `->` type($result)"
    )

    def __init__(
        self, buffer: SSAValue, offset: SSAValue, mask: SSAValue | None = None
    ):
        types = [offset.type] if mask is None else [offset.type, mask.type]
        shape = TileType.broadcast_of(*types)
        super().__init__(
            operands=[buffer, offset, [] if mask is None else [mask]],
            result_types=[value_type(shape, buffer_type(buffer).element_type)],
        )

    def verify_(self) -> None:
        _verify_access(self, self.offset, self.mask)
        types = [self.offset.type] + ([] if self.mask is None else [self.mask.type])
        expected = value_type(
            TileType.broadcast_of(*types, op=self),
            buffer_type(self.buffer).element_type,
        )
        if self.result.type != expected:
            raise VerifyException(
                f"memory.load yields {expected} (the buffer's elements at the "
                f"broadcast shape of offset and mask), not {self.result.type}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """``memory.store %v, %buf[%off] mask %m : V, B[O] mask M``: writes the
    value (broadcast to the offset/mask shape) where the mask holds; masked
    lanes touch no memory. Only a kernel's output arguments are stored to."""

    name = "memory.store"

    value = operand_def()
    buffer = operand_def(BufferType)
    offset = operand_def()
    mask = opt_operand_def()

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $buffer `[` $offset `]` (`mask` $mask^)? attr-dict `:` "
        "type($value) `,` type($buffer) `[` type($offset) `]` (`mask` type($mask)^)?"
    )

    def __init__(
        self,
        value: SSAValue,
        buffer: SSAValue,
        offset: SSAValue,
        mask: SSAValue | None = None,
    ):
        super().__init__(
            operands=[value, buffer, offset, [] if mask is None else [mask]]
        )

    def verify_(self) -> None:
        _verify_access(self, self.offset, self.mask)
        element = buffer_type(self.buffer).element_type
        if element_of(self.value.type) != element:
            raise VerifyException(
                f"memory.store of {element_of(self.value.type)} values into a "
                f"buffer of {element}"
            )
        types = [self.value.type, self.offset.type]
        if self.mask is not None:
            types.append(self.mask.type)
        TileType.broadcast_of(*types, op=self)
        kernel = _enclosing_kernel(self)
        assert kernel is not None, "checked by _verify_access"
        if self.buffer in kernel.input_args:
            raise VerifyException(
                f"memory.store to argument {kernel.args.index(self.buffer)} of "
                f"@{kernel.kernel_name}, one of its {kernel.num_inputs} inputs; "
                "kernels write only their output arguments"
            )


# --------------------------------------------------------------------------
# Host ops: allocation, constants, launches
# --------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """``%b = memory.alloc : !memory.buffer<...>``: fresh storage for a
    kernel output (contents undefined until a kernel writes them)."""

    name = "memory.alloc"

    result = result_def(BufferType)

    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result_type: BufferType):
        super().__init__(result_types=[result_type])


@irdl_op_definition
class ReuseOp(IRDLOperation):
    """``%b = memory.reuse %dead : B1 -> B2``: the storage of a buffer that
    is no longer used, reinterpreted as a new buffer (contents undefined).

    Same element type, provably the same number of elements (by the
    ``sym.guard`` facts in scope where the sizes are symbolic).
    """

    name = "memory.reuse"

    source = operand_def(BufferType)
    result = result_def(BufferType)

    traits = traits_def(MemoryAllocEffect())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, result_type: BufferType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        source, result = buffer_type(self.source), buffer_type(self.result)
        if source.element_type != result.element_type:
            raise VerifyException(
                f"memory.reuse keeps the element type: a buffer of "
                f"{source.element_type} cannot become one of {result.element_type}"
            )
        if source.numel != result.numel and not facts_in_scope(self).prove_eq(
            source.numel, result.numel
        ):
            raise VerifyException(
                f"memory.reuse needs provably equal element counts: the source "
                f"has {source.numel}, the result {result.numel} (a sym.guard "
                "stating their equality would prove it)"
            )


@irdl_op_definition
class DeallocOp(IRDLOperation):
    """``memory.dealloc %b : !memory.buffer<...>``: ``%b``'s storage is free;
    nothing reads or writes it afterwards."""

    name = "memory.dealloc"

    buffer = operand_def(BufferType)

    traits = traits_def(MemoryFreeEffect())
    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue):
        super().__init__(operands=[buffer])


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """``%c = memory.constant dense<[1.0, 2.0]> : tensor<2xf32> ->
    !memory.buffer<[2], [1], f32>``: a read-only row-major buffer holding a
    dense literal."""

    name = "memory.constant"

    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(BufferType)

    traits = traits_def(MemoryAllocEffect())
    assembly_format = "$value attr-dict `->` type($result)"

    def __init__(self, value: DenseIntOrFPElementsAttr, result_type: BufferType):
        super().__init__(properties={"value": value}, result_types=[result_type])

    def literal(self) -> np.ndarray:
        """The elements, shaped, in the element type's NumPy dtype."""
        numpy_dtype = dtype(buffer_type(self.result).element_type).numpy
        values = np.array(self.value.get_values(), numpy_dtype)
        return values.reshape(self.value.get_shape())

    def verify_(self) -> None:
        result = buffer_type(self.result)
        shape = tuple(self.value.get_shape())
        if shape != result.dims:
            raise VerifyException(
                f"dense literal of shape {shape_text(shape)} does not match the "
                f"buffer shape {shape_text(result.dims)}"
            )
        if self.value.get_element_type() != result.element_type:
            raise VerifyException(
                f"constant of type {self.value.get_element_type()} cannot fill a "
                f"buffer of {result.element_type}"
            )
        if not result.is_row_major:
            raise VerifyException("memory.constant makes row-major buffers")


class LaunchesKernel(SymbolUserOpInterface):
    """A ``memory.launch`` names a kernel of its module: a ``memory.kernel``,
    or the ``triton.kernel`` it was lowered to. A launch not inside a module
    yet (being built) has nothing to resolve."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        try:
            found = SymbolTable.lookup_symbol(op, op.kernel)
        except ValueError:  # not inside a module (yet)
            return
        if found is None:
            raise VerifyException(
                f"memory.launch @{op.kernel_name} launches nothing: the module has no "
                f"kernel @{op.kernel_name}"
            )
        if not isinstance(found, ModuleKernelOp):
            raise VerifyException(
                f"memory.launch @{op.kernel_name} names a {found.name}, not a "
                "memory.kernel or triton.kernel"
            )


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """``memory.launch @k0(%a, %out) : (T1, T2)``: run kernel ``@k0`` over
    its grid on these buffers (in the kernel's argument order), with the
    kernel's symbols taken by name from the host function's binding."""

    name = "memory.launch"

    kernel = prop_def(SymbolRefAttr)
    args = var_operand_def(BufferType)

    traits = traits_def(LaunchesKernel())

    assembly_format = "$kernel `(` $args `)` attr-dict `:` `(` type($args) `)`"

    def __init__(self, kernel: str | SymbolRefAttr, args: Sequence[SSAValue]):
        if isinstance(kernel, str):
            kernel = SymbolRefAttr(kernel)
        super().__init__(operands=[args], properties={"kernel": kernel})

    @property
    def kernel_name(self) -> str:
        return self.kernel.string_value()

    def callee(self) -> ModuleKernelOp | None:
        """The kernel this launches (a ``memory.kernel``, or a
        ``triton.kernel`` once lowered), when the module holds it."""
        try:
            found = SymbolTable.lookup_symbol(self, self.kernel)
        except ValueError:  # not inside a module (yet)
            return None
        return found if isinstance(found, ModuleKernelOp) else None

    def verify_(self) -> None:
        kernel = self.callee()
        if kernel is None:
            return  # not inside a module yet (LaunchesKernel checks the name)
        elements = kernel.buffer_element_types
        if len(self.args) != len(elements):
            raise VerifyException(
                f"memory.launch @{self.kernel_name} passes {len(self.args)} buffers, "
                f"but the kernel takes {len(elements)} ({kernel.num_inputs} inputs, "
                f"{len(elements) - kernel.num_inputs} outputs)"
            )
        for index, (arg, want) in enumerate(zip(self.args, elements, strict=True)):
            held = buffer_type(arg).element_type
            if held != want:
                raise VerifyException(
                    f"argument {index} of memory.launch @{self.kernel_name} holds "
                    f"{held}, but the kernel's argument {index} holds {want}"
                )
            # A memory.kernel also takes the buffers' shapes and strides.
            if isinstance(kernel, KernelOp) and arg.type != kernel.args[index].type:
                raise VerifyException(
                    f"argument {index} of memory.launch @{self.kernel_name} has type "
                    f"{arg.type}, but the kernel expects {kernel.args[index].type}"
                )


# --------------------------------------------------------------------------
# Host control flow: transfers, views and trip counts
# --------------------------------------------------------------------------


def _verify_scalar_buffer(op: Operation, buffer: SSAValue, scalar: Attribute) -> None:
    held = buffer_type(buffer)
    if held.rank != 0:
        raise VerifyException(
            f"{op.name} moves one element: its buffer must be 0-d, not {held}"
        )
    if held.element_type != scalar:
        raise VerifyException(
            f"{op.name}: the buffer holds {held.element_type} but the scalar is "
            f"{scalar}"
        )


@irdl_op_definition
class ReadScalarOp(IRDLOperation):
    """``%p = memory.read_scalar %b : !memory.buffer<[], [], i1> -> i1``: the
    host reads the one element of a 0-d buffer that a kernel wrote (one
    device->host read, which waits for the kernels before it): how a
    predicate computed on the device reaches a host decision."""

    name = "memory.read_scalar"

    buffer = operand_def(BufferType)
    result = result_def(IntegerType)

    traits = traits_def(MemoryReadEffect())
    assembly_format = "$buffer attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer: SSAValue):
        super().__init__(
            operands=[buffer], result_types=[buffer_type(buffer).element_type]
        )

    def verify_(self) -> None:
        _verify_scalar_buffer(self, self.buffer, self.result.type)


@irdl_op_definition
class WriteScalarOp(IRDLOperation):
    """``memory.write_scalar %i, %b : i64, !memory.buffer<[], [], i64>``: the
    host writes a value of its own (an iteration index) into a 0-d buffer
    that kernels read (one small host->device write)."""

    name = "memory.write_scalar"

    value = operand_def(IntegerType)
    buffer = operand_def(BufferType)

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$value `,` $buffer attr-dict `:` type($value) `,` type($buffer)"

    def __init__(self, value: SSAValue, buffer: SSAValue):
        super().__init__(operands=[value, buffer])

    def verify_(self) -> None:
        _verify_scalar_buffer(self, self.buffer, self.value.type)


@irdl_op_definition
class CopyOp(IRDLOperation):
    """``memory.copy %src, %dst : B1, B2``: every element of ``src`` into
    ``dst`` (same shape and element type): a carry a loop body passes on
    unchanged, or a loop's last carry into the buffer the caller gets."""

    name = "memory.copy"

    source = operand_def(BufferType)
    target = operand_def(BufferType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$source `,` $target attr-dict `:` type($source) `,` type($target)"
    )

    def __init__(self, source: SSAValue, target: SSAValue):
        super().__init__(operands=[source, target])

    def verify_(self) -> None:
        source, target = buffer_type(self.source), buffer_type(self.target)
        if (source.dims, source.element_type) != (target.dims, target.element_type):
            raise VerifyException(
                f"memory.copy needs the same shape and element type: {source} "
                f"into {target}"
            )


@irdl_op_definition
class RowOp(IRDLOperation):
    """``%r = memory.row %xs[%i] : B -> B'``: the view of row ``%i`` of
    ``xs`` along its leading axis (no copy): the slice of a scanned input a
    loop iteration reads, or the row of a stacked output it writes."""

    name = "memory.row"

    source = operand_def(BufferType)
    index = operand_def(IntegerType)
    result = result_def(BufferType)

    traits = traits_def(Pure())
    assembly_format = (
        "$source `[` $index `]` attr-dict `:` type($source) `[` type($index) `]` "
        "`->` type($result)"
    )

    def __init__(self, source: SSAValue, index: SSAValue):
        held = buffer_type(source)
        row = BufferType(held.dims[1:], held.element_type, held.strides[1:])
        super().__init__(operands=[source, index], result_types=[row])

    def verify_(self) -> None:
        source, row = buffer_type(self.source), buffer_type(self.result)
        expected = (source.dims[1:], source.strides[1:], source.element_type)
        if source.rank == 0 or (row.dims, row.strides, row.element_type) != expected:
            raise VerifyException(
                f"memory.row of {source} is a buffer of its trailing dims and "
                f"strides, not {row}"
            )


@irdl_op_definition
class SizeOp(IRDLOperation):
    """``%n = memory.size N - 1 : i64``: the host's value of a symbolic
    expression under the call's binding (a trip count, a loop bound)."""

    name = "memory.size"

    expr = prop_def(SymExprAttr)
    result = result_def(IntegerType)

    traits = traits_def(Pure())
    assembly_format = "custom<SymExprValue>($expr) attr-dict `:` type($result)"
    custom_directives = (SymExprValue,)

    def __init__(self, expr: SymExpr | int, result_type: IntegerType):
        super().__init__(
            properties={"expr": SymExprAttr(as_expr(expr))}, result_types=[result_type]
        )


#: The host ops of control flow that move or view buffers outside kernels:
#: the launcher gives the buffers they touch storage of their own.
HOST_TRANSFER_OPS = (ReadScalarOp, WriteScalarOp, CopyOp, RowOp)


Memory = Dialect(
    "memory",
    [
        KernelOp,
        LoadOp,
        StoreOp,
        AllocOp,
        ReuseOp,
        DeallocOp,
        ConstantOp,
        LaunchOp,
        ReadScalarOp,
        WriteScalarOp,
        CopyOp,
        RowOp,
        SizeOp,
    ],
    [BufferType],
)
