"""The NumPy reference interpreter of the loop dialect.

It runs what ``tile`` produces the way a GPU would, only serially: every
``loop.kernel`` runs its body once per program of its grid, each program
computing on whole tiles with vectorised NumPy (no Python loop over lanes),
reading its inputs with masked gathers and writing its outputs with masked
scatters. Running it against the graph interpreter on the same inputs
checks the tiling: grid sizes, masks, index arithmetic and loop bounds.

Values are NumPy scalars (``np.float32(1.5)``, ``np.int64(3)``, ``np.bool_``)
for scalar types and NumPy arrays of exactly the tile shape for
``!loop.tile`` types, always in the IR's element type (bfloat16 via
``ml_dtypes``); every result is checked against its type, as the graph
interpreter does, so an inconsistent IR fails at the op that shows it.

Two classes of implementations, so that the memory level can reuse the
compute without the tensor access:

- ``LoopTileFunctions``: the tile compute (``tile.program_id`` ...
  ``tile.scan``, ``tile.dot``) and ``scf.for``/``scf.yield``. Elementwise kinds use the
  graph interpreter's NumPy functions, so both levels compute the same
  numbers. What a program needs to know about its launch (symbol values,
  program ids) comes from a ``ProgramContext`` that whoever launches the
  grid installs with ``set_program_context`` (``launch_grid`` does it).
- ``LoopKernelFunctions``: ``loop.kernel``, ``loop.read`` and ``loop.write``
  on graph tensors (NumPy arrays), checking that unmasked lanes stay in
  bounds and that every output element is written exactly once.

``run_loop`` runs a loop-level module's function; the function-level ops
(``sym.guard``, dense ``graph.constant``, ``func``) are the graph
interpreter's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation, Region

from irc.dialects import loop, tile
from irc.dialects.elementwise import ReductionKind
from irc.dialects.graph import TensorType
from irc.dialects.tile import TiledKernelOp, enclosing_op
from irc.dtypes import compute_dtype, dtype
from irc.errors import ExecutionError
from irc.interpreters.graph import (
    call_function,
    graph_interpreter,
    scan_numpy,
    symbol_binding,
)
from irc.runtime.binding import op_location
from irc.shapes import ShapeError, SymExpr

# --------------------------------------------------------------------------
# Types and results
# --------------------------------------------------------------------------


@cache
def value_layout(value_type: Attribute) -> tuple[tuple[int, ...], np.dtype]:
    """The shape (``()`` for a scalar) and NumPy dtype of a loop value's type.

    Cached: types are immutable and few, and every op result is checked.
    """
    return loop.shape_of(value_type), dtype(loop.element_of(value_type)).numpy


def _result(op: Operation, value: Any) -> Any:
    """``value`` as ``op``'s single result: a NumPy scalar or an array.

    NumPy hands back 0-d arrays or scalars depending on the path taken, so
    scalars are normalised; a dtype or shape other than the result type's
    means the interpreter or the pass that made the IR is wrong, and would
    silently corrupt every comparison made against this oracle.
    """
    shape, expected = value_layout(op.results[0].type)
    array = np.asarray(value)
    if array.dtype != expected or array.shape != shape:
        raise ExecutionError(
            f"{op_location(op)} produced a {array.dtype} value of shape "
            f"{array.shape}, but its type {op.results[0].type} means {expected} "
            f"of shape {shape}; the IR is inconsistent"
        )
    return array if shape else array[()]


# --------------------------------------------------------------------------
# The launch context
# --------------------------------------------------------------------------


@dataclass
class ProgramContext:
    """What the tile ops of one kernel launch read besides their operands.

    ``binding`` holds the values of the kernel's symbols (``tile.size``
    evaluates under it); ``program_id`` is the running program's coordinate
    on each of the three grid axes. ``sizes`` caches ``tile.size`` results,
    which do not change during a launch.
    """

    binding: Mapping[str, int]
    program_id: tuple[int, int, int] = (0, 0, 0)
    sizes: dict[Operation, Any] = field(default_factory=dict)


_CONTEXT_KEY = "program"


def program_context(interpreter: Interpreter) -> ProgramContext:
    """The context of the launch being run; tile ops outside a launch are
    an error (there is no program id to give them)."""
    context = interpreter.get_data(LoopTileFunctions, _CONTEXT_KEY, lambda: None)
    if context is None:
        raise ExecutionError(
            "a loop tile op ran outside a kernel launch: set a ProgramContext "
            "with set_program_context (or use launch_grid) first"
        )
    return context


def set_program_context(
    interpreter: Interpreter, context: ProgramContext | None
) -> None:
    """Install ``context`` for the tile ops run next (None removes it)."""
    interpreter.set_data(LoopTileFunctions, _CONTEXT_KEY, context)


def evaluate_grid(
    op: Operation, grid: Sequence[SymExpr], binding: Mapping[str, int]
) -> tuple[int, int, int]:
    """The number of programs along each of the three axes (missing axes
    are 1) of ``op``'s grid under ``binding``."""
    sizes = [_evaluate(op, expr, binding, "grid size") for expr in grid]
    for axis, size in enumerate(sizes):
        if size < 0:
            raise ExecutionError(
                f"{op_location(op)}: grid axis {axis} ({grid[axis]}) has {size} "
                f"programs under the binding {dict(binding)}; guard the sizes"
            )
    sizes += [1] * (3 - len(sizes))
    return sizes[0], sizes[1], sizes[2]


def launch_grid(
    interpreter: Interpreter,
    body: Region,
    args: PythonValues,
    grid: tuple[int, int, int],
    binding: Mapping[str, int],
    name: str = "kernel",
) -> None:
    """Run ``body`` on ``args`` once per program of ``grid``, serially (axis
    0 fastest), with a fresh ``ProgramContext`` over ``binding``.

    The memory level launches ``memory.kernel`` bodies with this too. The
    body's writes are its only effect: whatever it stores is the caller's.
    """
    context = ProgramContext(binding)
    outer = interpreter.get_data(LoopTileFunctions, _CONTEXT_KEY, lambda: None)
    set_program_context(interpreter, context)
    try:
        for p2, p1, p0 in itertools.product(*(range(n) for n in reversed(grid))):
            context.program_id = (p0, p1, p2)
            interpreter.run_ssacfg_region(body, args, name)
    finally:
        set_program_context(interpreter, outer)


def _evaluate(
    op: Operation, expr: SymExpr, binding: Mapping[str, int], what: str
) -> int:
    try:
        return expr.evaluate(binding)
    except ShapeError as err:
        raise ExecutionError(
            f"{op_location(op)}: cannot evaluate the {what} {expr}: {err}"
        ) from err


def _materialised(*operands: Any) -> list[np.ndarray]:
    """The operands as contiguous arrays of their broadcast shape (at least
    1-d).

    ``np.power`` takes shortcuts when its exponent is a scalar or a stride-0
    view (0.5 becomes ``sqrt``, -1 ``reciprocal``), which round differently
    from the general path that the graph interpreter, whose operands are
    whole arrays, always takes.
    """
    shape = np.broadcast_shapes(*(np.shape(x) for x in operands)) or (1,)
    return [np.array(np.broadcast_to(x, shape)) for x in operands]


def _power(op: Operation, base: Any, exponent: Any) -> Any:
    """``base ** exponent`` as the graph's ``pow``: a negative integer power
    is an error, not NumPy's exception."""
    shape = np.broadcast_shapes(np.shape(base), np.shape(exponent))
    base, exponent = _materialised(base, exponent)
    if base.dtype.kind == "i" and (exponent < 0).any():
        raise ExecutionError(
            f"{op_location(op)} raises integers to a negative power "
            f"({int(exponent.min())}), which has no integer result; cast the "
            "operands to a float type first"
        )
    return np.power(base, exponent).reshape(shape)


def _reduce(kind: str, tile: np.ndarray, axis: int, result_dtype: np.dtype) -> Any:
    """One tile dim reduced as the graph interpreter reduces: sums and
    products of 16-bit floats in float32, rounded once; argmax the first
    lane holding the maximum."""
    reduction = ReductionKind(kind).semantics
    if kind == ReductionKind.ARGMAX:
        return reduction.numpy(tile, axis=axis).astype(result_dtype)
    if not reduction.widens:
        return np.asarray(reduction.numpy(tile, axis=axis)).astype(tile.dtype)
    total = reduction.numpy(tile, axis=axis, dtype=compute_dtype(tile.dtype))
    return np.asarray(total).astype(tile.dtype)


def _scalar_value(attr: IntegerAttr | FloatAttr, result_dtype: np.dtype) -> Any:
    """A ``tile.constant``'s value in its dtype (``true`` is stored as -1;
    ``astype`` makes it ``True``, as a cast to i1 means ``!= 0``)."""
    with np.errstate(all="ignore"):
        return np.asarray(attr.value.data).astype(result_dtype)[()]


# --------------------------------------------------------------------------
# Tile compute
# --------------------------------------------------------------------------


_INVARIANTS_KEY = "invariants"


def _invariants(interpreter: Interpreter) -> dict[Operation, Any]:
    """Values that depend only on their op (constants, ranges), computed
    once per interpreter rather than once per program."""
    return interpreter.get_data(LoopTileFunctions, _INVARIANTS_KEY, dict)


@register_impls
class LoopTileFunctions(InterpreterFunctions):
    """The loop dialect's tile compute, and ``scf.if``/``for``/``while``/``yield``.

    Independent of how tensors are accessed and of where kernel state is
    kept: the only launch state read is the ``ProgramContext``. xDSL's own
    ``ScfFunctions`` cannot run these loops (they expect ``IntegerAttr``
    bounds), hence the ``scf`` impls here. Arithmetic never warns: overflow,
    NaN and division by zero give NumPy's values, as at the graph level.
    """

    @impl(tile.ProgramIdOp)
    def run_program_id(
        self, interpreter: Interpreter, op: tile.ProgramIdOp, args: PythonValues
    ) -> PythonValues:
        _, index_dtype = value_layout(op.result.type)
        program = program_context(interpreter).program_id[op.axis.value.data]
        return (_result(op, index_dtype.type(program)),)

    @impl(tile.SizeOp)
    def run_size(
        self, interpreter: Interpreter, op: tile.SizeOp, args: PythonValues
    ) -> PythonValues:
        context = program_context(interpreter)
        value = context.sizes.get(op)
        if value is None:
            _, index_dtype = value_layout(op.result.type)
            size = _evaluate(op, op.expr.data, context.binding, "size")
            value = context.sizes[op] = _result(op, index_dtype.type(size))
        return (value,)

    @impl(tile.RangeOp)
    def run_range(
        self, interpreter: Interpreter, op: tile.RangeOp, args: PythonValues
    ) -> PythonValues:
        invariants = _invariants(interpreter)
        value = invariants.get(op)
        if value is None:
            shape, index_dtype = value_layout(op.result.type)
            value = np.arange(max(shape), dtype=index_dtype).reshape(shape)
            value.flags.writeable = False  # shared by every program
            invariants[op] = value
        return (value,)

    @impl(tile.BlockSizeOp)
    def run_block_size(
        self, interpreter: Interpreter, op: tile.BlockSizeOp, args: PythonValues
    ) -> PythonValues:
        # The declared size: the interpreters run the tiles the types hold
        # (a launch may choose a smaller one, masking the same lanes out).
        kernel = enclosing_op(op, TiledKernelOp)
        assert kernel is not None, "verified: InsideKernel"
        _, index_dtype = value_layout(op.result.type)
        return (index_dtype.type(kernel.tile_sizes[op.block.data]),)

    @impl(tile.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: tile.ConstantOp, args: PythonValues
    ) -> PythonValues:
        invariants = _invariants(interpreter)
        value = invariants.get(op)
        if value is None:
            _, result_dtype = value_layout(op.result.type)
            value = invariants[op] = _scalar_value(op.value, result_dtype)
        return (value,)

    @impl(tile.SplatOp)
    def run_splat(
        self, interpreter: Interpreter, op: tile.SplatOp, args: PythonValues
    ) -> PythonValues:
        shape, result_dtype = value_layout(op.result.type)
        return (_result(op, np.full(shape, args[0], dtype=result_dtype)),)

    @impl(tile.UnaryOp)
    def run_unary(
        self, interpreter: Interpreter, op: tile.UnaryOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(all="ignore"):
            return (_result(op, op.kind.data.numpy(args[0])),)

    @impl(tile.BinaryOp)
    def run_binary(
        self, interpreter: Interpreter, op: tile.BinaryOp, args: PythonValues
    ) -> PythonValues:
        kind = op.kind.data
        with np.errstate(all="ignore"):
            if kind == "pow":
                return (_result(op, _power(op, *args)),)
            return (_result(op, kind.numpy(*args)),)

    @impl(tile.CompareOp)
    def run_cmp(
        self, interpreter: Interpreter, op: tile.CompareOp, args: PythonValues
    ) -> PythonValues:
        with np.errstate(invalid="ignore"):  # NaN compares false (ne: true)
            return (_result(op, op.kind.data.numpy(*args)),)

    @impl(tile.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: tile.SelectOp, args: PythonValues
    ) -> PythonValues:
        return (_result(op, np.where(*args)),)

    @impl(tile.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: tile.CastOp, args: PythonValues
    ) -> PythonValues:
        _, result_dtype = value_layout(op.result.type)
        # NaN and out-of-range floats cast to ints as NumPy does, silently.
        with np.errstate(all="ignore"):
            return (_result(op, np.asarray(args[0]).astype(result_dtype)),)

    @impl(tile.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: tile.ReduceOp, args: PythonValues
    ) -> PythonValues:
        _, result_dtype = value_layout(op.result.type)
        with np.errstate(all="ignore"):
            value = _reduce(op.kind.data, args[0], op.axis.value.data, result_dtype)
        return (_result(op, value),)

    @impl(tile.ScanOp)
    def run_scan(
        self, interpreter: Interpreter, op: tile.ScanOp, args: PythonValues
    ) -> PythonValues:
        return (_result(op, scan_numpy(op.kind.data, args[0], op.axis.value.data)),)

    @impl(tile.DotOp)
    def run_dot(
        self, interpreter: Interpreter, op: tile.DotOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs, acc = args
        with np.errstate(all="ignore"):
            product = np.matmul(
                lhs.astype(acc.dtype, copy=False), rhs.astype(acc.dtype, copy=False)
            )
            return (_result(op, acc + product),)

    @impl(scf.ForOp)
    def run_for(
        self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues
    ) -> PythonValues:
        lower, upper, step, *carried = args
        if step <= 0:
            raise ExecutionError(
                f"{op_location(op)} has step {step}; scf.for needs a positive step"
            )
        index_type = np.asarray(lower).dtype.type
        values = tuple(carried)
        for index in range(int(lower), int(upper), int(step)):
            values = interpreter.run_ssacfg_region(
                op.body, (index_type(index), *values), "scf.for"
            )
        return values

    @impl(scf.IfOp)
    def run_if(
        self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues
    ) -> PythonValues:
        (decision,) = args
        region = op.true_region if decision else op.false_region
        return interpreter.run_ssacfg_region(region, (), "scf.if")

    @impl(scf.WhileOp)
    def run_while(
        self, interpreter: Interpreter, op: scf.WhileOp, args: PythonValues
    ) -> PythonValues:
        values = tuple(args)
        while True:
            decision, *forwarded = interpreter.run_ssacfg_region(
                op.before_region, values, "scf.while"
            )
            if not decision:
                return tuple(forwarded)
            values = interpreter.run_ssacfg_region(
                op.after_region, tuple(forwarded), "scf.while"
            )

    @impl_terminator(scf.ConditionOp)
    def run_condition(
        self, interpreter: Interpreter, op: scf.ConditionOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


# --------------------------------------------------------------------------
# Kernels and tensor access
# --------------------------------------------------------------------------


@dataclass
class KernelOutputs:
    """The outputs of the ``loop.kernel`` being run, and which of their
    elements some program has written."""

    arrays: list[np.ndarray]
    written: list[np.ndarray]


_OUTPUTS_KEY = "outputs"


def kernel_outputs(interpreter: Interpreter) -> KernelOutputs | None:
    """The outputs of the ``loop.kernel`` being run (None outside one), for
    whoever follows what its ``loop.write`` ops store (``debug_nans``)."""
    return interpreter.get_data(LoopKernelFunctions, _OUTPUTS_KEY, lambda: None)


def sentinel(element_dtype: np.dtype) -> Any:
    """What an output starts as, so that an element no program writes stands
    out even where the exactly-once check is not looked at: NaN, the most
    negative integer, or False."""
    if element_dtype.kind == "f":
        return np.nan
    if element_dtype.kind == "i":
        return np.iinfo(element_dtype).min
    return False


def _lanes(
    shape: tuple[int, ...], indices: Sequence[Any], mask: Any | None
) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The index and mask operands broadcast to the lanes' ``shape``."""
    lanes = [np.broadcast_to(index, shape) for index in indices]
    return lanes, None if mask is None else np.broadcast_to(mask, shape)


def _check_in_bounds(
    interpreter: Interpreter,
    op: Operation,
    lanes: Sequence[np.ndarray],
    mask: np.ndarray | None,
    extents: tuple[int, ...],
    verb: str,
) -> None:
    """An unmasked lane outside the tensor is an error naming the op, the
    lane, its index and the program, since on a GPU it reads or corrupts
    some other memory."""
    bad: np.ndarray | None = None
    for lane, extent in zip(lanes, extents, strict=True):
        outside = (lane < 0) | (lane >= extent)
        bad = outside if bad is None else bad | outside
    if bad is None:
        return
    if mask is not None:
        bad = bad & mask
    if not bad.any():
        return
    lane_position = tuple(int(i) for i in np.argwhere(bad)[0])
    index = tuple(int(lane[lane_position]) for lane in lanes)
    program = program_context(interpreter).program_id
    raise ExecutionError(
        f"{op_location(op)} {verb} index {index} of a tensor of shape "
        f"{extents} at lane {lane_position} of program {program}, which is out "
        f"of bounds and not masked off ({int(bad.sum())} such lane(s)); mask "
        "the lane or guard the sizes"
    )


def _write_shape(op: Operation, operands: Sequence[Any]) -> tuple[int, ...]:
    """The lanes of a ``loop.write``: its operands' broadcast shape (the
    verifier does not check that they broadcast)."""
    try:
        return np.broadcast_shapes(*(np.shape(x) for x in operands))
    except ValueError as err:
        raise ExecutionError(
            f"{op_location(op)}: the value, index and mask shapes "
            f"{[np.shape(x) for x in operands]} do not broadcast"
        ) from err


def _flat_targets(
    op: Operation,
    lanes: Sequence[np.ndarray],
    active: np.ndarray,
    shape: tuple[int, ...],
) -> np.ndarray:
    """The flat positions (in ``shape``, row-major) that the active lanes
    write, checked to be distinct."""
    if lanes:
        chosen = tuple(lane[active] for lane in lanes)
        flat = np.ravel_multi_index(chosen, shape)
    else:  # a rank-0 output: every active lane writes its one element
        flat = np.zeros(int(np.count_nonzero(active)), dtype=np.intp)
    if np.unique(flat).size != flat.size:
        raise ExecutionError(
            f"{op_location(op)} writes the same output element from several "
            "lanes of one program; every element is written exactly once"
        )
    return flat


def kernel_binding(
    op: Operation, kernel: TiledKernelOp, binding: Mapping[str, int]
) -> dict[str, int]:
    """The values of ``kernel``'s ``symbols`` from the function's
    ``binding``: all that its body sees, as the compiled kernel gets only
    those arguments. ``op`` (the kernel or its launch) locates the error."""
    missing = [name for name in kernel.symbol_names if name not in binding]
    if missing:
        raise ExecutionError(
            f"{op_location(op)}: kernel symbol {missing[0]} of @{kernel.kernel_name} "
            "has no value; every symbol must appear in the shape of an argument "
            "of the function"
        )
    return {name: binding[name] for name in kernel.symbol_names}


@register_impls
class LoopKernelFunctions(InterpreterFunctions):
    """``loop.kernel`` (its grid run serially), and ``loop.read`` /
    ``loop.write`` on the kernel's graph tensors (NumPy arrays)."""

    @impl(loop.KernelOp)
    def run_kernel(
        self, interpreter: Interpreter, op: loop.KernelOp, args: PythonValues
    ) -> PythonValues:
        binding = symbol_binding(interpreter)
        grid = evaluate_grid(op, op.grid_exprs, binding)
        symbols = kernel_binding(op, op, binding)
        outputs = KernelOutputs(*self._allocate(op, binding))
        outer = interpreter.get_data(LoopKernelFunctions, _OUTPUTS_KEY, lambda: None)
        interpreter.set_data(LoopKernelFunctions, _OUTPUTS_KEY, outputs)
        try:
            launch_grid(interpreter, op.body, args, grid, symbols, op.kernel_name)
        finally:
            interpreter.set_data(LoopKernelFunctions, _OUTPUTS_KEY, outer)
        self._check_all_written(op, outputs)
        return tuple(outputs.arrays)

    @staticmethod
    def _allocate(
        op: loop.KernelOp, binding: Mapping[str, int]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        arrays, written = [], []
        for index, output in enumerate(op.outputs):
            assert isinstance(output.type, TensorType)
            shape = tuple(
                _evaluate(op, dim, binding, f"output {index} dim")
                for dim in output.type.dims
            )
            if any(size < 0 for size in shape):
                raise ExecutionError(
                    f"{op_location(op)}: output {index} would have shape {shape} "
                    f"under the binding {dict(binding)}; guard the sizes"
                )
            element_dtype = dtype(output.type.element_type).numpy
            arrays.append(np.full(shape, sentinel(element_dtype), element_dtype))
            written.append(np.zeros(shape, dtype=np.bool_))
        return arrays, written

    @staticmethod
    def _check_all_written(op: loop.KernelOp, outputs: KernelOutputs) -> None:
        for index, written in enumerate(outputs.written):
            if not written.all():
                missing = tuple(int(i) for i in np.argwhere(~written)[0])
                raise ExecutionError(
                    f"{op_location(op)} (@{op.kernel_name}) leaves "
                    f"{int((~written).sum())} element(s) of output {index} "
                    f"(shape {written.shape}) unwritten, the first at {missing}; "
                    "the grid or the masks do not cover the output"
                )

    @impl(loop.ReadOp)
    def run_read(
        self, interpreter: Interpreter, op: loop.ReadOp, args: PythonValues
    ) -> PythonValues:
        tensor, *indices = args[: 1 + len(op.indices)]
        mask = args[-1] if op.mask is not None else None
        shape, element_dtype = value_layout(op.result.type)
        lanes, mask = _lanes(shape, indices, mask)
        _check_in_bounds(interpreter, op, lanes, mask, tensor.shape, "reads")
        if mask is None:
            return (_result(op, tensor[tuple(lanes)]),)
        if tensor.size == 0:  # every lane is masked off (checked above)
            return (_result(op, np.zeros(shape, element_dtype)),)
        safe = tuple(np.where(mask, lane, 0) for lane in lanes)
        values = np.broadcast_to(tensor[safe], shape)
        return (_result(op, np.where(mask, values, element_dtype.type(0))),)

    @impl(loop.WriteOp)
    def run_write(
        self, interpreter: Interpreter, op: loop.WriteOp, args: PythonValues
    ) -> PythonValues:
        outputs = interpreter.get_data(LoopKernelFunctions, _OUTPUTS_KEY, lambda: None)
        if outputs is None:
            raise ExecutionError(f"{op_location(op)} ran outside a loop.kernel")
        value, *indices = args[: 1 + len(op.indices)]
        mask = args[-1] if op.mask is not None else None
        array = outputs.arrays[op.output_index]
        written = outputs.written[op.output_index]
        shape = _write_shape(op, [value, *indices, *([] if mask is None else [mask])])
        lanes, mask = _lanes(shape, indices, mask)
        _check_in_bounds(interpreter, op, lanes, mask, array.shape, "writes")
        active = np.ones(shape, np.bool_) if mask is None else mask
        flat = _flat_targets(op, lanes, active, array.shape)
        if written.reshape(-1)[flat].any():
            self._raise_written_twice(interpreter, op, written, flat)
        array.reshape(-1)[flat] = np.broadcast_to(value, shape)[active]
        written.reshape(-1)[flat] = True
        return ()

    @staticmethod
    def _raise_written_twice(
        interpreter: Interpreter,
        op: loop.WriteOp,
        written: np.ndarray,
        flat: np.ndarray,
    ) -> None:
        again = flat[written.reshape(-1)[flat]][0]
        element = tuple(int(i) for i in np.unravel_index(again, written.shape))
        program = program_context(interpreter).program_id
        raise ExecutionError(
            f"{op_location(op)}: program {program} writes element {element} of "
            f"output {op.output_index}, which an earlier program already wrote; "
            "every element is written exactly once over the grid"
        )


# --------------------------------------------------------------------------
# Running a module
# --------------------------------------------------------------------------


def loop_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL interpreter that runs loop-level ``module``: the graph
    interpreter's function-level ops, and the loop dialect's."""
    interpreter = graph_interpreter(module)
    interpreter.register_implementations(LoopTileFunctions())
    interpreter.register_implementations(LoopKernelFunctions())
    return interpreter


def run_loop(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> list[np.ndarray]:
    """Run ``function`` of a verified loop-level ``module`` on ``inputs``.

    As ``run_graph``: the inputs' dtypes must be exactly the argument
    types' element types and their shapes bind the symbols; the guards are
    checked first. Returns fresh arrays that never alias the inputs.
    """
    outputs = call_function(
        loop_interpreter(module),
        module,
        inputs,
        function,
        "loop, scf, func and function-level graph ops",
    )
    return [np.array(output, copy=True) for output in outputs]
