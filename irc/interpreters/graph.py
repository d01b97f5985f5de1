"""The NumPy reference interpreter of the graph dialect.

This is the oracle every other level and backend is compared against, so
it favours being obviously right over being fast: each op is one or two
NumPy calls, every value is a NumPy array whose dtype is exactly its IR
element type (bfloat16 via ``ml_dtypes``), and every result is checked
against the shape its IR type gives under the current symbol binding.

It is built on xDSL's ``Interpreter``: ``GraphFunctions`` implements the
graph ops and ``SymbolicFuncFunctions`` the ``func`` ops. A call binds the
callee's symbols from its arguments' shapes (``bind_arguments``) and checks
the callee's guards before it runs anything, as the launcher of a compiled
kernel does; the binding is stored on the interpreter so that ops whose
shapes are symbolic (constants, iota, broadcast, reshape, slice, dim) can
evaluate them.

Numerics follow NumPy, with one deliberate choice for 16-bit floats: sums,
products, matmuls and the composite functions (rsqrt, sigmoid, erf) are
computed in float32 and rounded once, as a GPU kernel accumulates them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from irc.dialects.graph import (
    MAX_TRIP_COUNT,
    ArgMaxOp,
    BinaryOp,
    BroadcastOp,
    CastOp,
    CompareOp,
    ConcatOp,
    CondOp,
    ConstantOp,
    DimOp,
    ForOp,
    InsertSliceOp,
    IotaOp,
    MatmulOp,
    ReduceOp,
    ReshapeOp,
    ScanOp,
    ScatterAddOp,
    SelectOp,
    SliceOp,
    TakeOp,
    TensorType,
    TransposeOp,
    WhileOp,
    YieldOp,
    elementwise_op,
)
from irc.dialects.sym import GuardOp
from irc.dtypes import compute_dtype, dtype
from irc.errors import AllocationError, BindingError, ExecutionError, IrcError
from irc.interpreters.collective import CollectiveFunctions
from irc.interpreters.debug import DebugFunctions
from irc.interpreters.sym import SymFunctions
from irc.primitives.builtin import POW
from irc.primitives.declaration import Primitive, primitives
from irc.runtime.binding import (
    argument_names,
    bind_arguments,
    check_guards,
    op_location,
)
from irc.shapes import ShapeError, SymExpr

# --------------------------------------------------------------------------
# Values, shapes and the binding
# --------------------------------------------------------------------------

_BINDING_KEY = "binding"


def symbol_binding(interpreter: Interpreter) -> Mapping[str, int]:
    """The symbol values of the function being run."""
    return interpreter.get_data(GraphFunctions, _BINDING_KEY, dict)


def set_symbol_binding(interpreter: Interpreter, binding: Mapping[str, int]) -> None:
    """Make ``binding`` the one graph ops evaluate their shapes under (for
    interpreters that run graph ops outside a ``func.func`` call)."""
    interpreter.set_data(GraphFunctions, _BINDING_KEY, binding)


# --------------------------------------------------------------------------
# A bound on the work of loops
# --------------------------------------------------------------------------


class LoopLimitError(ExecutionError):
    """A call whose graph.for and graph.while loops would run more
    iterations, or more ops, in all than :func:`loop_limit` allows."""


MAX_LOOP_OPS = 50_000
"""The most ops the loops of one call may run under :func:`loop_limit`
(nested loops, branches and called functions included), an op with results
of ``n`` elements counting as ``1 + n // ELEMENTS_PER_OP``. The reference
interpreter takes about 10 microseconds an op on small tensors (a
graph.while of 14 ops over [5] tensors took 17 seconds for 100,000
iterations), so a call's loops stop within about half a second however much
each iteration does, which the checkers' several calls (runs, passes) can
afford; a loop of a few thousand iterations of ten or so ops runs."""

ELEMENTS_PER_OP = 1024
"""How many elements of an op's results cost NumPy about as long as the
interpreter spends on running an op, so that :data:`MAX_LOOP_OPS` bounds
the time of a loop over large tensors too."""

_LOOP_LIMIT: ContextVar[int | None] = ContextVar("graph_loop_limit", default=None)
_BUDGET_KEY = "loop budget"


@contextmanager
def loop_limit(iterations: int | None) -> Iterator[None]:
    """Within the block, every call the graph interpreter runs stops with a
    :class:`LoopLimitError` (at the loop) once its graph.for and graph.while
    loops, nested ones included, would run more than ``iterations``
    iterations in all, or have run more than :data:`MAX_LOOP_OPS` ops; a
    graph.for whose length alone is more than the iterations left is refused
    before it starts. None (the default outside the block) bounds nothing:
    a call of ``backend="reference"`` runs its loops to the end. Checkers
    that run programs they did not write (``irc.testing.semantics``) set
    it, so that a loop that never ends is a diagnostic, not a hang."""
    token = _LOOP_LIMIT.set(iterations)
    try:
        yield
    finally:
        _LOOP_LIMIT.reset(token)


class _LoopBudget(Interpreter.Listener):
    """What the loops of a call may still run: iterations (None: unbounded)
    and ops, which it counts (as a listener of the interpreter) from the
    call's first loop on."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.limit = _LOOP_LIMIT.get()
        self.left = self.limit
        self.ops = 0
        if self.limit is not None:
            interpreter.listeners = (*interpreter.listeners, self)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        elements = sum(getattr(result, "size", 1) for result in results)
        self.ops += 1 + elements // ELEMENTS_PER_OP

    def take(self, interpreter: Interpreter, op: Operation, count: int) -> None:
        """Count ``count`` more iterations of ``op``, or refuse them."""
        if self.left is None:
            return
        if count > self.left:
            binding = dict(symbol_binding(interpreter))
            budget = (
                f"the {self.limit} loop iterations in all (nested loops included) "
                "this interpreter runs per call"
            )
            if isinstance(op, ForOp):
                problem = (
                    f"would run {count} iterations under the binding {binding}, "
                    f"more than the {self.left} left of {budget}; make it shorter "
                    "on small inputs, or guard its length"
                )
            else:
                problem = (
                    f"has not ended after {budget}, under the binding {binding}; "
                    "make its predicate turn false sooner on small inputs"
                )
            raise LoopLimitError(f"{op_location(op)}: the loop {problem}")
        self.check_ops(interpreter, op)
        self.left -= count

    def check_ops(self, interpreter: Interpreter, op: Operation) -> None:
        """Stop the loop ``op`` if the call's loops have run more than
        :data:`MAX_LOOP_OPS` ops."""
        if self.left is not None and self.ops > MAX_LOOP_OPS:
            raise LoopLimitError(
                f"{op_location(op)}: the loop has not ended after the "
                f"{MAX_LOOP_OPS} ops in all (nested loops included, an op "
                f"counting once per {ELEMENTS_PER_OP} elements of its results) "
                "this interpreter runs in the loops of a call, under the binding "
                f"{dict(symbol_binding(interpreter))}; make the loops end sooner, "
                "or do less, on small inputs"
            )


def _loop_budget(interpreter: Interpreter) -> _LoopBudget:
    return interpreter.get_data(
        GraphFunctions, _BUDGET_KEY, lambda: _LoopBudget(interpreter)
    )


def _tensor_type(value_type: Attribute) -> TensorType:
    assert isinstance(value_type, TensorType), "graph ops verify their types"
    return value_type


def _numpy_dtype(value_type: Attribute) -> np.dtype:
    return dtype(_tensor_type(value_type).element_type).numpy


def _evaluate(
    interpreter: Interpreter, op: Operation, exprs: Iterable[SymExpr]
) -> tuple[int, ...]:
    """The values of ``op``'s symbolic dims or offsets under the binding.

    A verified function can still use a symbol that none of its arguments
    binds (``graph.constant ... -> [K]``); that is reported at the op.
    """
    binding = symbol_binding(interpreter)
    try:
        return tuple(expr.evaluate(binding) for expr in exprs)
    except ShapeError as err:
        raise ExecutionError(
            f"{op_location(op)}: {err}; every symbol must appear in the shape of "
            "an argument of the function, which is how it gets its value"
        ) from err


def _shape(interpreter: Interpreter, op: Operation) -> tuple[int, ...]:
    """The concrete shape of ``op``'s result under the binding; a negative
    dim (``N - 3`` with ``N = 2``) means a guard on the sizes is missing."""
    dims = _tensor_type(op.results[0].type).dims
    shape = _evaluate(interpreter, op, dims)
    for dim, size in zip(dims, shape, strict=True):
        if size < 0:
            raise ExecutionError(
                f"{op_location(op)}: result dim {dim} is {size} under the binding "
                f"{dict(symbol_binding(interpreter))}; call with larger sizes, or "
                f"guard {dim} >= 0 in the IR"
            )
    return shape


def _finish(interpreter: Interpreter, op: Operation, value: Any) -> PythonValues:
    """``op``'s single result as a NumPy array, checked against its type.

    NumPy returns scalars for rank-0 results, hence ``np.asarray``. A dtype
    or shape that differs from the IR type means the interpreter (or a
    pass that produced the IR) is wrong, and would silently corrupt every
    comparison made against this oracle, so it is an error, not a cast.
    """
    result = op.results[0]
    array = np.asarray(value)
    expected_dtype = _numpy_dtype(result.type)
    expected_shape = _shape(interpreter, op)
    if array.dtype != expected_dtype or array.shape != expected_shape:
        raise ExecutionError(
            f"{op_location(op)} produced a {array.dtype} array of shape "
            f"{array.shape}, but its type {result.type} means {expected_dtype} "
            f"of shape {expected_shape}; the IR is inconsistent under the "
            f"binding {dict(symbol_binding(interpreter))}"
        )
    return (array,)


def _finish_results(
    interpreter: Interpreter, op: Operation, values: Sequence[Any]
) -> PythonValues:
    """A region op's results as NumPy arrays, each checked against its type
    (as ``_finish`` checks a single result)."""
    arrays = []
    for result, value in zip(op.results, values, strict=True):
        array = np.asarray(value)
        expected_dtype = _numpy_dtype(result.type)
        dims = _tensor_type(result.type).dims
        expected_shape = _evaluate(interpreter, op, dims)
        if array.dtype != expected_dtype or array.shape != expected_shape:
            raise ExecutionError(
                f"{op_location(op)} produced a {array.dtype} array of shape "
                f"{array.shape} for a result of type {result.type}, which means "
                f"{expected_dtype} of shape {expected_shape}; the IR is "
                f"inconsistent under the binding {dict(symbol_binding(interpreter))}"
            )
        arrays.append(array)
    return tuple(arrays)


def _stack(
    interpreter: Interpreter, op: Operation, result: Any, slices: Sequence[np.ndarray]
) -> np.ndarray:
    """The ``ys`` of a graph.for: its slices stacked along a new leading axis
    (an empty array of the result's type for a loop of no iterations)."""
    if slices:
        return np.stack(slices)
    shape = _evaluate(interpreter, op, _tensor_type(result.type).dims)
    return np.empty(shape, _numpy_dtype(result.type))


# --------------------------------------------------------------------------
# Elementwise functions
# --------------------------------------------------------------------------

Impl = Callable[[Any, Interpreter, Any, PythonValues], PythonValues]


def _elementwise(function: Callable[..., Any]) -> Impl:
    """An op impl applying a NumPy function to the operands.

    Overflow, division by zero and invalid values give NumPy's IEEE (or
    wrapped integer) results: they are data, not errors, in the IR.
    """

    def run(
        ft: Any, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        with np.errstate(all="ignore"):
            return _finish(interpreter, op, function(*args))

    return run


@cache
def _primitive_functions(declared: tuple[Primitive, ...]) -> InterpreterFunctions:
    """An impl per graph op of the ``declared`` primitives: their NumPy
    semantics, which canonicalization folds constants with too."""
    namespace = {
        f"run_{primitive.name}": impl(elementwise_op(primitive))(
            _elementwise(primitive.numpy)
        )
        for primitive in declared
    }
    functions = type("PrimitiveFunctions", (InterpreterFunctions,), namespace)
    return register_impls(functions)()


def _check_not_empty(op: Operation, array: np.ndarray, axes: Sequence[int]) -> None:
    """max, min and argmax have no value over an empty axis."""
    for axis in axes:
        if array.shape[axis] == 0:
            raise ExecutionError(
                f"{op_location(op)} reduces axis {axis} of an array of shape "
                f"{array.shape}, which is empty; max, min and argmax need at "
                "least one element (guard the size, or use a sum)"
            )


#: NumPy's inclusive scan of each ``graph.scan`` kind.
_SCANS: dict[str, Callable[..., np.ndarray]] = {"sum": np.cumsum, "prod": np.cumprod}


def scan_numpy(kind: str, array: np.ndarray, axis: int) -> np.ndarray:
    """The reference semantics of a scan (``graph.scan``, ``tile.scan``):
    NumPy's running sum or product along ``axis``, 16-bit floats accumulated
    in float32 and each element rounded once, in ``array``'s dtype."""
    with np.errstate(all="ignore"):  # overflow and NaN are values
        scanned = _SCANS[kind](array, axis=axis, dtype=compute_dtype(array.dtype))
        return np.asarray(scanned).astype(array.dtype)


def _window(
    interpreter: Interpreter,
    op: SliceOp | InsertSliceOp,
    sizes: Sequence[int],
    extents: Sequence[int],
    verb: str,
) -> tuple[slice, ...]:
    """The index of the window ``op`` reads (a slice) or writes (an
    insert_slice): ``sizes`` elements per axis from its offsets by its
    strides, each checked to lie inside ``extents`` under the binding."""
    starts = _evaluate(interpreter, op, op.offset_list)
    index = []
    for axis, (start, stride, size, extent) in enumerate(
        zip(starts, op.stride_list, sizes, extents, strict=True)
    ):
        last = start + (size - 1) * stride
        if size > 0 and (min(start, last) < 0 or max(start, last) >= extent):
            raise ExecutionError(
                f"{op_location(op)} {verb} indices {start} to {last} of axis "
                f"{axis}, outside [0, {extent}) under the binding "
                f"{dict(symbol_binding(interpreter))}; guard the offset or the size"
            )
        index.append(_slice_index(start, size, stride, extent))
    return tuple(index)


def _slice_index(offset: int, size: int, stride: int, extent: int) -> slice:
    """The Python slice taking ``size`` elements from ``offset`` by ``stride``;
    the caller has checked that they lie in ``[0, extent)``."""
    if size == 0:
        return slice(0, 0)
    last = offset + (size - 1) * stride
    stop = last + (1 if stride > 0 else -1)
    return slice(offset, stop if 0 <= stop <= extent else None, stride)


def _check_take_indices(
    op: TakeOp | ScatterAddOp, indices: np.ndarray, extent: int
) -> None:
    bad = (indices < 0) | (indices >= extent)
    if bad.any():
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ExecutionError(
            f"{op_location(op)}: index {indices[position]} at position "
            f"{position} is out of range for axis {op.axis.value.data} of size "
            f"{extent}; indices must lie in [0, {extent}) (negative indices "
            "are not wrapped)"
        )


# --------------------------------------------------------------------------
# The graph ops
# --------------------------------------------------------------------------


@register_impls
class GraphFunctions(InterpreterFunctions):
    """NumPy implementations of the graph ops but the primitives' (``pow``
    refines its primitive's: a negative integer power is an error, not
    NumPy's exception)."""

    run_select = impl(SelectOp)(_elementwise(np.where))

    @impl(elementwise_op(POW))
    def run_pow(
        self, interpreter: Interpreter, op: BinaryOp, args: PythonValues
    ) -> PythonValues:
        base, exponent = args
        if base.dtype.kind == "i" and (exponent < 0).any():
            raise ExecutionError(
                f"{op_location(op)} raises integers to a negative power "
                f"({int(exponent.min())}), which has no integer result; cast "
                "the operands to a float type first"
            )
        with np.errstate(all="ignore"):
            return _finish(interpreter, op, np.power(base, exponent))

    @impl(CompareOp)
    def run_cmp(
        self, interpreter: Interpreter, op: CompareOp, args: PythonValues
    ) -> PythonValues:
        # Comparisons with NaN are defined (false, or true for ne): no warning.
        with np.errstate(invalid="ignore"):
            return _finish(interpreter, op, op.predicate.data.numpy(*args))

    @impl(CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: CastOp, args: PythonValues
    ) -> PythonValues:
        # NaN and out-of-range floats cast to ints as NumPy does, silently.
        with np.errstate(all="ignore"):
            return _finish(
                interpreter, op, args[0].astype(_numpy_dtype(op.result.type))
            )

    @impl(ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: ConstantOp, args: PythonValues
    ) -> PythonValues:
        literal = op.literal()
        if op.is_splat:
            literal = np.full(_shape(interpreter, op), literal)
        return _finish(interpreter, op, literal)

    @impl(IotaOp)
    def run_iota(
        self, interpreter: Interpreter, op: IotaOp, args: PythonValues
    ) -> PythonValues:
        shape = _shape(interpreter, op)
        axis = op.axis.value.data
        indices = np.arange(shape[axis], dtype=_numpy_dtype(op.result.type))
        along_axis = [1] * len(shape)
        along_axis[axis] = shape[axis]
        return _finish(
            interpreter, op, np.broadcast_to(indices.reshape(along_axis), shape)
        )

    @impl(DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: DimOp, args: PythonValues
    ) -> PythonValues:
        (value,) = _evaluate(interpreter, op, [op.value.data])
        return _finish(interpreter, op, np.asarray(value, _numpy_dtype(op.result.type)))

    @impl(BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: BroadcastOp, args: PythonValues
    ) -> PythonValues:
        shape = _shape(interpreter, op)
        # A copy, not a stride-0 view: NumPy takes shortcuts on scalar-like
        # views (``power`` with a broadcast exponent of 0.5 becomes ``sqrt``)
        # that would make results depend on whether a broadcast was folded.
        return _finish(interpreter, op, np.array(np.broadcast_to(args[0], shape)))

    @impl(ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: ReshapeOp, args: PythonValues
    ) -> PythonValues:
        shape = _shape(interpreter, op)
        return _finish(interpreter, op, np.reshape(args[0], shape))

    @impl(ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: ReduceOp, args: PythonValues
    ) -> PythonValues:
        (array,) = args
        kind = op.kind.data
        # NaN and overflow are values, not errors (as for elementwise ops).
        with np.errstate(all="ignore"):
            reduction = kind.semantics
            if reduction.widens:
                result = reduction.numpy(
                    array,
                    axis=op.axis_list,
                    keepdims=op.keepdims,
                    dtype=compute_dtype(array.dtype),
                )
            else:
                _check_not_empty(op, array, op.axis_list)
                result = reduction.numpy(array, axis=op.axis_list, keepdims=op.keepdims)
            result = np.asarray(result).astype(array.dtype)
        return _finish(interpreter, op, result)

    @impl(ArgMaxOp)
    def run_argmax(
        self, interpreter: Interpreter, op: ArgMaxOp, args: PythonValues
    ) -> PythonValues:
        (array,) = args
        axis = op.axis.value.data
        _check_not_empty(op, array, [axis])
        keepdims = _tensor_type(op.result.type).rank == array.ndim
        indices = np.argmax(array, axis=axis, keepdims=keepdims)
        return _finish(interpreter, op, np.asarray(indices).astype(np.int64))

    @impl(ScanOp)
    def run_scan(
        self, interpreter: Interpreter, op: ScanOp, args: PythonValues
    ) -> PythonValues:
        (array,) = args
        return _finish(interpreter, op, scan_numpy(op.kind.data, array, op.axis_index))

    @impl(TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: TransposeOp, args: PythonValues
    ) -> PythonValues:
        return _finish(interpreter, op, np.transpose(args[0], op.perm))

    @impl(SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: SliceOp, args: PythonValues
    ) -> PythonValues:
        (array,) = args
        sizes = _shape(interpreter, op)
        index = _window(interpreter, op, sizes, array.shape, "reads")
        return _finish(interpreter, op, array[index])

    @impl(InsertSliceOp)
    def run_insert_slice(
        self, interpreter: Interpreter, op: InsertSliceOp, args: PythonValues
    ) -> PythonValues:
        source, dest = args
        index = _window(interpreter, op, source.shape, dest.shape, "writes")
        result = dest.copy()
        result[index] = source
        return _finish(interpreter, op, result)

    @impl(ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: ConcatOp, args: PythonValues
    ) -> PythonValues:
        return _finish(interpreter, op, np.concatenate(args, axis=op.axis.value.data))

    @impl(TakeOp)
    def run_take(
        self, interpreter: Interpreter, op: TakeOp, args: PythonValues
    ) -> PythonValues:
        table, indices = args
        axis = op.axis.value.data
        _check_take_indices(op, indices, table.shape[axis])
        return _finish(interpreter, op, np.take(table, indices, axis=axis))

    @impl(ScatterAddOp)
    def run_scatter_add(
        self, interpreter: Interpreter, op: ScatterAddOp, args: PythonValues
    ) -> PythonValues:
        updates, indices = args
        axis = op.axis.value.data
        shape = _shape(interpreter, op)
        _check_take_indices(op, indices, shape[axis])
        # Sum in the compute dtype (float32 for 16-bit floats) and round once,
        # as reductions do; np.add.at accumulates duplicate indices.
        result = np.zeros(shape, compute_dtype(updates.dtype))
        lead = (slice(None),) * axis
        with np.errstate(all="ignore"):
            np.add.at(result, (*lead, indices), updates.astype(result.dtype))
        return _finish(interpreter, op, result.astype(updates.dtype))

    @impl(MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: MatmulOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        compute = compute_dtype(lhs.dtype)
        product = np.matmul(
            lhs.astype(compute, copy=False), rhs.astype(compute, copy=False)
        )
        return _finish(interpreter, op, product.astype(lhs.dtype))

    # --------------------------------------------------------------------------
    # Functions and calls
    # --------------------------------------------------------------------------

    # Structured control flow: each region runs as a function of its block
    # arguments (the regions are isolated from above), returning what its
    # graph.yield yields.

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(CondOp)
    def run_cond(
        self, interpreter: Interpreter, op: CondOp, args: PythonValues
    ) -> PythonValues:
        pred, *inputs = args
        region = op.then_region if bool(pred) else op.else_region
        results = interpreter.run_ssacfg_region(region, tuple(inputs), "graph.cond")
        return _finish_results(interpreter, op, results)

    @impl(WhileOp)
    def run_while(
        self, interpreter: Interpreter, op: WhileOp, args: PythonValues
    ) -> PythonValues:
        carries = tuple(args)
        while bool(
            interpreter.run_ssacfg_region(op.cond_region, carries, "graph.while")[0]
        ):
            _loop_budget(interpreter).take(interpreter, op, 1)
            carries = interpreter.run_ssacfg_region(
                op.body_region, carries, "graph.while"
            )
        return _finish_results(interpreter, op, carries)

    @impl(ForOp)
    def run_for(
        self, interpreter: Interpreter, op: ForOp, args: PythonValues
    ) -> PythonValues:
        (length,) = _evaluate(interpreter, op, [op.trip_count])
        if length < 0:
            raise ExecutionError(
                f"{op_location(op)}: graph.for length {op.trip_count} is {length} "
                f"under the binding {dict(symbol_binding(interpreter))}; call with "
                f"larger sizes, or guard {op.trip_count} >= 0 in the IR"
            )
        if length > MAX_TRIP_COUNT:  # its index would not fit its i64
            raise ExecutionError(
                f"{op_location(op)}: graph.for length {op.trip_count} is {length} "
                f"under the binding {dict(symbol_binding(interpreter))}, more than "
                f"the {MAX_TRIP_COUNT} iterations its i64 index counts; guard "
                f"{op.trip_count} <= {MAX_TRIP_COUNT} in the IR"
            )
        budget = _loop_budget(interpreter)
        budget.take(interpreter, op, length)
        carry_count = len(op.carries)
        carries, xs = tuple(args[:carry_count]), args[carry_count:]
        ys_slices: list[list[np.ndarray]] = [[] for _ in op.ys]
        order = range(length - 1, -1, -1) if op.is_reverse else range(length)
        for index in order:
            budget.check_ops(interpreter, op)
            yielded = interpreter.run_ssacfg_region(
                op.body,
                (np.array(index, np.int64), *carries, *(x[index] for x in xs)),
                "graph.for",
            )
            carries = tuple(yielded[:carry_count])
            for stack, value in zip(ys_slices, yielded[carry_count:], strict=True):
                stack.append(np.asarray(value))
        if op.is_reverse:
            for stack in ys_slices:
                stack.reverse()
        ys = [
            _stack(interpreter, op, result, stack)
            for result, stack in zip(op.ys, ys_slices, strict=True)
        ]
        return _finish_results(interpreter, op, (*carries, *ys))


@register_impls
class SymbolicFuncFunctions(FuncFunctions):
    """``func`` ops whose calls bind the callee's symbols from the shapes of
    its arguments (each function has its own symbols) and check its guards."""

    @impl_callable(func.FuncOp)
    def call_func(
        self, interpreter: Interpreter, op: func.FuncOp, args: PythonValues
    ) -> PythonValues:
        block = op.body.blocks.first
        if block is None or not block.ops:
            raise ExecutionError(
                f"@{op.sym_name.data} is declared without a body; the reference "
                "interpreter runs only functions defined in the module"
            )
        binding = bind_arguments(op, args)
        check_guards((g for g in op.walk() if isinstance(g, GuardOp)), binding)
        caller_binding = symbol_binding(interpreter)
        set_symbol_binding(interpreter, binding)
        try:
            return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)
        finally:
            set_symbol_binding(interpreter, caller_binding)


def graph_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL interpreter that runs graph-level ``module``."""
    interpreter = Interpreter(module)
    interpreter.register_implementations(_primitive_functions(tuple(primitives())))
    interpreter.register_implementations(GraphFunctions(), override=True)
    interpreter.register_implementations(SymbolicFuncFunctions())
    interpreter.register_implementations(SymFunctions())
    interpreter.register_implementations(DebugFunctions())
    interpreter.register_implementations(CollectiveFunctions())
    return interpreter


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called ``name``, or the module's first public function
    with a body when ``name`` is None."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is not None:
        for candidate in functions:
            if candidate.sym_name.data == name:
                return candidate
    else:
        for candidate in functions:
            visibility = candidate.sym_visibility
            public = visibility is None or visibility.data == "public"
            if public and candidate.body.blocks:
                return candidate
    available = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    wanted = f"no function @{name}" if name is not None else "no public function"
    raise IrcError(f"the module has {wanted} to run (functions: {available})")


def as_arrays(inputs: Sequence[object], names: Sequence[str]) -> list[np.ndarray]:
    """The inputs as NumPy arrays; anything else is a ``BindingError`` that
    names the argument (every level's interpreter takes inputs this way)."""
    arrays = []
    for index, value in enumerate(inputs):
        if not isinstance(value, np.ndarray | np.generic):
            name = names[index] if index < len(names) else f"arg{index}"
            raise BindingError(
                f"argument '{name}' is a {type(value).__name__}; pass a NumPy "
                "array (np.asarray(value, dtype=...))"
            )
        arrays.append(np.asarray(value))
    return arrays


def run_graph(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> list[np.ndarray]:
    """Run ``function`` of a verified graph-level ``module`` on ``inputs``.

    The inputs' dtypes must be exactly the argument types' element types;
    their shapes bind the symbols (see ``irc.runtime.binding``). Returns
    fresh arrays, rank-0 results included, that never alias the inputs.
    """
    outputs = call_function(
        graph_interpreter(module), module, inputs, function, "graph and func ops"
    )
    return [np.array(output, copy=True) for output in outputs]


def call_function(
    interpreter: Interpreter,
    module: ModuleOp,
    inputs: Sequence[Any],
    function: str | None,
    runs: str,
) -> tuple[Any, ...]:
    """Call ``function`` of ``module`` with a level's ``interpreter`` (which
    runs ``runs``, for the error on another level's op) on ``inputs``, checked
    as arrays; irc's errors come out without xDSL's note of the module."""
    callee = find_function(module, function)
    arrays = as_arrays(inputs, argument_names(callee))
    try:
        return interpreter.call_op(callee, tuple(arrays))
    except InterpretationError as err:  # an op of another level
        raise IrcError(
            f"{err}: this reference interpreter runs {runs} only; run "
            "modules of other levels with their own interpreter"
        ) from None
    except IrcError as err:
        # xDSL's interpreter notes the whole module on the way out; the
        # message already names the op and its location.
        raise type(err)(*err.args) from None
    except MemoryError as err:
        raise AllocationError(_allocation_message(err)) from None


def _allocation_message(error: MemoryError) -> str:
    """The op whose result did not fit in memory (the innermost op the
    interpreter was running), with its result's type and size."""
    op: Operation | None = None
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name == "_run_op":
            candidate = traceback.tb_frame.f_locals.get("op")
            if isinstance(candidate, Operation):
                op = candidate
        traceback = traceback.tb_next
    reason = str(error) or "MemoryError"
    if op is None:
        return f"could not allocate an array: {reason}"
    results = ", ".join(str(r.type) for r in op.results)
    name = next((r.name_hint for r in op.results if r.name_hint), None)
    buffer = f"result %{name} " if name else "the result "
    return (
        f"could not allocate {buffer}({results}) of {op_location(op)}: {reason}; "
        "call with smaller sizes or free memory"
    )
