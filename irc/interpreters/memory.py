"""The NumPy reference interpreter of the memory level.

It runs a host function the way the Triton launcher will: bind the symbols
from the arguments' shapes, check the guards, then run the host ops in
order, each ``memory.launch`` running its kernel's body once per program of
the grid (serially, with the loop interpreter's ``launch_grid`` and tile
compute). Buffers are flat NumPy arrays plus a shape and strides, so that
bufferization mistakes show up as wrong numbers or errors, not as a
reference interpreter that quietly does the right thing:

- storage remembers which elements some kernel wrote. Fresh storage
  (``memory.alloc``) is filled with NaN (floats), the most negative integer
  or False, and reading an element nobody wrote is an error, as is reading
  or writing past a buffer's extent on a lane the mask does not cover;
- ``memory.reuse`` hands the same flat array to a new buffer, whose
  elements count as unwritten again: whoever still reads the old buffer
  reads garbage, and is told so;
- a launch makes its outputs unwritten and requires each of their elements
  to be written exactly once; ``memory.dealloc`` forbids any later access.

Loads and stores on masked-off lanes touch no memory, as on a GPU. Host
control flow runs as the launcher runs it: ``scf.if`` / ``scf.while`` on a
``memory.read_scalar`` of a predicate some kernel must have written,
``scf.for`` over ``memory.size`` bounds, ``memory.row`` views (a buffer
with a base offset), ``memory.copy`` and ``memory.write_scalar``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    impl_callable,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation
from xdsl.traits import SymbolTable

from irc.dialects import memory
from irc.dialects.graph import TensorType
from irc.dialects.memory import BufferType
from irc.dialects.sym import GuardOp
from irc.dtypes import dtype
from irc.errors import BindingError, ExecutionError
from irc.interpreters.collective import CollectiveFunctions
from irc.interpreters.debug import DebugFunctions
from irc.interpreters.graph import (
    call_function,
    find_function,
    set_symbol_binding,
    symbol_binding,
)
from irc.interpreters.loop import (
    LoopTileFunctions,
    evaluate_grid,
    kernel_binding,
    launch_grid,
    program_context,
    sentinel,
    value_layout,
)
from irc.interpreters.sym import SymFunctions
from irc.runtime.binding import (
    argument_names,
    bind_symbols,
    check_dtypes,
    check_guards,
    op_location,
)
from irc.shapes import ShapeError

# --------------------------------------------------------------------------
# Buffers
# --------------------------------------------------------------------------


@dataclass
class Storage:
    """Flat memory: the elements, which of them hold a written value, and
    whether it was deallocated. ``origin`` names the op that made it."""

    data: np.ndarray
    written: np.ndarray
    origin: str
    freed: bool = False


@dataclass(frozen=True)
class Buffer:
    """A view of storage: element ``(i, j)`` is ``data[base + i * s0 + j *
    s1]`` (``base`` is 0 but for a ``memory.row`` view)."""

    storage: Storage
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    base: int = 0

    @property
    def extent(self) -> int:
        return _extent(self.shape, self.strides)

    def offsets(self) -> np.ndarray:
        """The linear offset of every element, as an array of the shape."""
        offsets = np.full(self.shape, self.base, np.int64)
        for axis, (size, stride) in enumerate(
            zip(self.shape, self.strides, strict=True)
        ):
            along = [1] * len(self.shape)
            along[axis] = size
            offsets = offsets + np.arange(size, dtype=np.int64).reshape(along) * stride
        return offsets


def _extent(shape: Sequence[int], strides: Sequence[int]) -> int:
    """How many elements from offset 0 a view of this layout spans."""
    if any(size == 0 for size in shape):
        return 0
    return 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))


def _evaluate_layout(
    op: Operation | None, buffer_type: BufferType, binding: Mapping[str, int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A buffer type's shape and strides under the binding."""
    where = op_location(op) if op is not None else str(buffer_type)
    try:
        shape = tuple(d.evaluate(binding) for d in buffer_type.dims)
        strides = tuple(s.evaluate(binding) for s in buffer_type.strides)
    except ShapeError as err:
        raise ExecutionError(f"{where}: {err}") from err
    if any(size < 0 for size in shape):
        raise ExecutionError(
            f"{where}: buffer shape {shape} under the binding {dict(binding)} has "
            "a negative dim; guard the sizes"
        )
    return shape, strides


def new_buffer(
    buffer_type: BufferType,
    binding: Mapping[str, int],
    origin: str,
    op: Operation | None = None,
) -> Buffer:
    """A buffer of ``buffer_type`` on fresh storage, every element unwritten
    and holding NaN, the most negative integer or False."""
    shape, strides = _evaluate_layout(op, buffer_type, binding)
    numpy_dtype = dtype(buffer_type.element_type).numpy
    size = _extent(shape, strides)
    storage = Storage(
        np.full(size, sentinel(numpy_dtype), numpy_dtype),
        np.zeros(size, np.bool_),
        origin,
    )
    return Buffer(storage, shape, strides)


def buffer_from_array(
    array: np.ndarray,
    buffer_type: BufferType,
    binding: Mapping[str, int],
    origin: str,
    op: Operation | None = None,
) -> Buffer:
    """A buffer of ``buffer_type`` holding ``array``, laid out by the type's
    strides; ``array``'s shape must be the type's under ``binding``."""
    buffer = new_buffer(buffer_type, binding, origin, op)
    if buffer.shape != array.shape:
        raise ExecutionError(
            f"{origin}: an array of shape {array.shape} cannot fill a buffer of "
            f"shape {buffer.shape}"
        )
    offsets = buffer.offsets()
    buffer.storage.data[offsets] = array
    buffer.storage.written[offsets] = True
    return buffer


def array_from_buffer(buffer: Buffer, op: Operation, what: str) -> np.ndarray:
    """A fresh array of ``buffer``'s elements, which must all be written."""
    _check_written(buffer, op, what)
    return np.array(buffer.storage.data[buffer.offsets()], copy=True)


def _check_written(buffer: Buffer, op: Operation, what: str) -> None:
    """Every element of ``buffer`` holds a value some kernel (or the caller)
    wrote, and its storage is still allocated."""
    _check_live(buffer, op)
    unwritten = ~buffer.storage.written[buffer.offsets()]
    if unwritten.any():
        first = tuple(int(i) for i in np.argwhere(unwritten)[0])
        raise ExecutionError(
            f"{op_location(op)}: {what} has {int(unwritten.sum())} element(s) that "
            f"no kernel wrote, the first at {first}"
        )


def _check_live(buffer: Buffer, op: Operation) -> None:
    if buffer.storage.freed:
        raise ExecutionError(
            f"{op_location(op)} uses a buffer whose storage (from "
            f"{buffer.storage.origin}) was deallocated"
        )


# --------------------------------------------------------------------------
# Host ops
# --------------------------------------------------------------------------


@register_impls
class MemoryHostFunctions(InterpreterFunctions):
    """Allocation, reuse, deallocation, constants, guards and launches."""

    @impl(memory.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memory.AllocOp, args: PythonValues
    ) -> PythonValues:
        buffer_type = memory.buffer_type(op.result)
        binding = symbol_binding(interpreter)
        return (new_buffer(buffer_type, binding, op_location(op), op),)

    @impl(memory.ReuseOp)
    def run_reuse(
        self, interpreter: Interpreter, op: memory.ReuseOp, args: PythonValues
    ) -> PythonValues:
        (source,) = args
        _check_live(source, op)
        result_type = memory.buffer_type(op.result)
        shape, strides = _evaluate_layout(op, result_type, symbol_binding(interpreter))
        buffer = Buffer(source.storage, shape, strides)
        if buffer.extent > source.storage.data.size:
            raise ExecutionError(
                f"{op_location(op)}: the reused storage holds "
                f"{source.storage.data.size} elements, the new buffer spans "
                f"{buffer.extent}"
            )
        source.storage.written[:] = False  # the old contents mean nothing now
        return (buffer,)

    @impl(memory.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memory.DeallocOp, args: PythonValues
    ) -> PythonValues:
        (buffer,) = args
        _check_live(buffer, op)
        buffer.storage.freed = True
        return ()

    @impl(memory.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: memory.ConstantOp, args: PythonValues
    ) -> PythonValues:
        buffer_type = memory.buffer_type(op.result)
        binding = symbol_binding(interpreter)
        return (
            buffer_from_array(op.literal(), buffer_type, binding, op_location(op), op),
        )

    @impl(memory.LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: memory.LaunchOp, args: PythonValues
    ) -> PythonValues:
        kernel = _kernel(op)
        for buffer in args:
            _check_live(buffer, op)
        outputs = args[kernel.num_inputs :]
        for buffer in outputs:  # a kernel defines its outputs entirely
            buffer.storage.written[buffer.offsets()] = False
        binding = symbol_binding(interpreter)
        grid = evaluate_grid(op, kernel.grid_exprs, binding)
        launch_grid(
            interpreter,
            kernel.body,
            args,
            grid,
            kernel_binding(op, kernel, binding),
            kernel.kernel_name,
        )
        for index, buffer in enumerate(outputs):
            _check_written(buffer, op, f"output {index} of @{kernel.kernel_name}")
        return ()


def _kernel(op: memory.LaunchOp) -> memory.KernelOp:
    found = SymbolTable.lookup_symbol(op, op.kernel)
    if not isinstance(found, memory.KernelOp):
        raise ExecutionError(
            f"{op_location(op)} launches @{op.kernel_name}, which is not a "
            "memory.kernel of the module"
        )
    return found


# --------------------------------------------------------------------------
# Host control flow
# --------------------------------------------------------------------------


@register_impls
class MemoryControlFlowFunctions(InterpreterFunctions):
    """The transfers of ``irc.lowering.host_control_flow``: a copy or a row
    view checks that the storage is live. (The loop interpreter's
    ``scf.if``, ``scf.for``, ``scf.while`` and ``scf.yield`` run the host's
    control flow too: their values may be buffers.)"""

    @impl(arith.SubiOp)
    def run_subi(
        self, interpreter: Interpreter, op: arith.SubiOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        return (int(lhs) - int(rhs),)

    @impl(memory.SizeOp)
    def run_size(
        self, interpreter: Interpreter, op: memory.SizeOp, args: PythonValues
    ) -> PythonValues:
        try:
            return (op.expr.data.evaluate(symbol_binding(interpreter)),)
        except ShapeError as err:
            raise ExecutionError(f"{op_location(op)}: {err}") from err

    @impl(memory.ReadScalarOp)
    def run_read_scalar(
        self, interpreter: Interpreter, op: memory.ReadScalarOp, args: PythonValues
    ) -> PythonValues:
        (buffer,) = args
        _check_written(buffer, op, "the scalar read by the host")
        return (buffer.storage.data[buffer.base].item(),)

    @impl(memory.WriteScalarOp)
    def run_write_scalar(
        self, interpreter: Interpreter, op: memory.WriteScalarOp, args: PythonValues
    ) -> PythonValues:
        value, buffer = args
        _check_live(buffer, op)
        buffer.storage.data[buffer.base] = value
        buffer.storage.written[buffer.base] = True
        return ()

    @impl(memory.CopyOp)
    def run_copy(
        self, interpreter: Interpreter, op: memory.CopyOp, args: PythonValues
    ) -> PythonValues:
        source, target = args
        values = array_from_buffer(source, op, "the source of memory.copy")
        _check_live(target, op)
        offsets = target.offsets()
        target.storage.data[offsets] = values
        target.storage.written[offsets] = True
        return ()

    @impl(memory.RowOp)
    def run_row(
        self, interpreter: Interpreter, op: memory.RowOp, args: PythonValues
    ) -> PythonValues:
        source, index = args
        _check_live(source, op)
        if not 0 <= index < source.shape[0]:
            raise ExecutionError(
                f"{op_location(op)}: row {index} of a buffer of shape {source.shape}"
            )
        base = source.base + int(index) * source.strides[0]
        return (Buffer(source.storage, source.shape[1:], source.strides[1:], base),)


# --------------------------------------------------------------------------
# Loads and stores
# --------------------------------------------------------------------------


@register_impls
class MemoryKernelFunctions(InterpreterFunctions):
    """``memory.load`` and ``memory.store`` on the kernel's buffers."""

    @impl(memory.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memory.LoadOp, args: PythonValues
    ) -> PythonValues:
        buffer, offset = args[0], args[1]
        mask = args[2] if op.mask is not None else None
        shape, element_dtype = value_layout(op.result.type)
        offsets, active = _lanes(shape, offset, mask)
        _check_access(interpreter, op, buffer, offsets, active, "reads")
        chosen = offsets[active] + buffer.base
        unwritten = ~buffer.storage.written[chosen]
        if unwritten.any():
            raise ExecutionError(
                f"{op_location(op)} reads offset {int(chosen[unwritten][0])} of a "
                f"buffer (storage from {buffer.storage.origin}) that nothing wrote "
                f"({int(unwritten.sum())} such lane(s), program "
                f"{program_context(interpreter).program_id})"
            )
        values = np.zeros(shape, element_dtype)
        values[active] = buffer.storage.data[chosen]
        return (values if shape else values[()],)

    @impl(memory.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: memory.StoreOp, args: PythonValues
    ) -> PythonValues:
        value, buffer, offset = args[0], args[1], args[2]
        mask = args[3] if op.mask is not None else None
        operands = [value, offset] + ([] if mask is None else [mask])
        shape = np.broadcast_shapes(*(np.shape(x) for x in operands))
        offsets, active = _lanes(shape, offset, mask)
        _check_access(interpreter, op, buffer, offsets, active, "writes")
        chosen = offsets[active] + buffer.base
        if np.unique(chosen).size != chosen.size:
            raise ExecutionError(
                f"{op_location(op)} writes the same offset from several lanes of "
                "one program; every element is written exactly once"
            )
        again = buffer.storage.written[chosen]
        if again.any():
            raise ExecutionError(
                f"{op_location(op)}: program "
                f"{program_context(interpreter).program_id} writes offset "
                f"{int(chosen[again][0])}, which this launch already wrote; every "
                "element is written exactly once over the grid"
            )
        buffer.storage.data[chosen] = np.broadcast_to(value, shape)[active]
        buffer.storage.written[chosen] = True
        return ()


def _lanes(
    shape: tuple[int, ...], offset: Any, mask: Any | None
) -> tuple[np.ndarray, np.ndarray]:
    """The offsets and the active lanes, broadcast to the access's shape."""
    offsets = np.broadcast_to(np.asarray(offset, np.int64), shape)
    if mask is None:
        return offsets, np.ones(shape, np.bool_)
    return offsets, np.broadcast_to(mask, shape)


def _check_access(
    interpreter: Interpreter,
    op: Operation,
    buffer: Buffer,
    offsets: np.ndarray,
    active: np.ndarray,
    verb: str,
) -> None:
    """An active lane outside the buffer's extent is an error naming the
    lane and the program: on a GPU it reads or corrupts other memory."""
    _check_live(buffer, op)
    outside = active & ((offsets < 0) | (offsets >= buffer.extent))
    if outside.any():
        lane = tuple(int(i) for i in np.argwhere(outside)[0])
        raise ExecutionError(
            f"{op_location(op)} {verb} offset {int(offsets[lane])} of a buffer of "
            f"shape {buffer.shape} ({buffer.extent} elements) at lane {lane} of "
            f"program {program_context(interpreter).program_id}, which is out of "
            f"bounds and not masked off ({int(outside.sum())} such lane(s))"
        )


# --------------------------------------------------------------------------
# Functions
# --------------------------------------------------------------------------


def entry_argument_types(function: func.FuncOp) -> list[TensorType]:
    """The graph tensor each argument buffer of ``function`` holds: what a
    caller passes, and what the symbols are bound from."""
    types: list[TensorType] = []
    for arg_type, name in zip(
        function.function_type.inputs, argument_names(function), strict=True
    ):
        if not isinstance(arg_type, BufferType):
            raise BindingError(
                f"argument '{name}' of @{function.sym_name.data} has type {arg_type}; "
                "memory-level functions take !memory.buffer arguments"
            )
        types.append(arg_type.tensor_type())
    return types


@register_impls
class MemoryFuncFunctions(FuncFunctions):
    """Calls of host functions: arrays in, arrays out, as the launcher."""

    @impl_callable(func.FuncOp)
    def call_func(
        self, interpreter: Interpreter, op: func.FuncOp, args: PythonValues
    ) -> PythonValues:
        names = argument_names(op)
        types = entry_argument_types(op)
        check_dtypes(types, [a.dtype for a in args], names)
        binding = bind_symbols(types, [tuple(a.shape) for a in args], names)
        # The same sym.guard ops as at every other level: the same checks
        # and messages.
        check_guards((g for g in op.walk() if isinstance(g, GuardOp)), binding)
        buffers = tuple(
            buffer_from_array(array, arg_type, binding, f"argument '{name}'")
            for array, arg_type, name in zip(
                args, op.function_type.inputs, names, strict=True
            )
        )
        caller_binding = symbol_binding(interpreter)
        set_symbol_binding(interpreter, binding)
        try:
            results = interpreter.run_ssacfg_region(op.body, buffers, op.sym_name.data)
        finally:
            set_symbol_binding(interpreter, caller_binding)
        terminator = op.body.block.last_op
        assert terminator is not None
        return tuple(
            array_from_buffer(buffer, terminator, f"result {index}")
            for index, buffer in enumerate(results)
        )


def memory_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL interpreter that runs memory-level ``module``: host ops,
    loads and stores, and the loop interpreter's tile compute."""
    interpreter = Interpreter(module)
    interpreter.register_implementations(MemoryHostFunctions())
    interpreter.register_implementations(MemoryControlFlowFunctions())
    interpreter.register_implementations(MemoryKernelFunctions())
    interpreter.register_implementations(LoopTileFunctions())
    interpreter.register_implementations(MemoryFuncFunctions())
    interpreter.register_implementations(SymFunctions())
    interpreter.register_implementations(DebugFunctions(_debug_array))
    interpreter.register_implementations(
        CollectiveFunctions(_communicated_array, _receive)
    )
    return interpreter


def _communicated_array(buffer: Buffer, op: Operation) -> np.ndarray:
    """A collective's input: its buffer's elements, which must be written."""
    return array_from_buffer(buffer, op, "the value it communicates")


def _receive(array: np.ndarray, target: Buffer, op: Operation) -> None:
    """A collective's result into the buffer it writes."""
    _check_live(target, op)
    if array.shape != target.shape:
        raise ExecutionError(
            f"{op_location(op)}: the collective made an array of shape "
            f"{array.shape} for a buffer of shape {target.shape}"
        )
    offsets = target.offsets()
    target.storage.data[offsets] = array
    target.storage.written[offsets] = True


def _debug_array(buffer: Buffer, op: Operation) -> np.ndarray:
    """A debug op's value: its buffer's elements, which must be written."""
    return array_from_buffer(buffer, op, "a value it shows")


def run_memory(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> list[np.ndarray]:
    """Run host ``function`` of a verified memory-level ``module`` on
    ``inputs``.

    As ``run_graph``: dtypes must match the argument buffers' element types,
    shapes bind the symbols, guards are checked first. Returns fresh arrays
    shaped as the results, never aliasing the inputs or each other.
    """
    outputs = call_function(
        memory_interpreter(module),
        module,
        inputs,
        function,
        "memory, loop, scf and func ops",
    )
    return list(outputs)


def memory_signature(module: ModuleOp) -> list[TensorType]:
    """The entry function's arguments as graph tensors (same shapes and
    element types), from which the checkers draw bindings and inputs."""
    return entry_argument_types(find_function(module))
