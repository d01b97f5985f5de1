"""NaN and Inf hunting: ``irc.compile(..., debug_nans=True)`` (or
``IRC_DEBUG_NANS=1``).

A call whose outputs hold a NaN or an infinity is replayed op by op on the
graph-level reference interpreter with the same inputs, whatever backend
ran it: the graph level is the one whose ops are the user's NumPy calls,
each with its Python line, so it is where a culprit can be named. An
``xdsl`` interpreter listener follows every non-finite value back to where
it appeared: an op that made one from finite operands, or an argument that
already held one. Following values (rather than stopping at the first op
that makes a non-finite value) keeps the ones a program discards out of
the report: ``np.where(x > 0, np.log(x), 0)`` computes ``log(0)`` and
drops it, and ``np.clip`` selects between NaN constants.

A value the graph-level replay keeps finite was made by a lowering: the
call is then replayed on the fusion, loop and memory levels in turn, and
the first that shows it names its op (``hunt`` runs on a module of any of
these levels; stores into tensors and buffers are followed per element).

Nothing here runs unless asked: a compilation without ``debug_nans`` binds
its calls as before.
"""

from __future__ import annotations

import linecache
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from irc import pytree
from irc.dialects import fusion, loop, memory
from irc.dialects.graph import CondOp, ForOp, WhileOp, unroll_factor
from irc.dialects.tile import TiledKernelOp
from irc.errors import IrcError, NonFiniteError
from irc.interpreters.loop import kernel_outputs, program_context
from irc.interpreters.memory import Buffer
from irc.runtime.arrays import is_torch_tensor, to_numpy
from irc.runtime.binding import argument_names, op_location
from irc.runtime.calls import Call, Caller
from irc.source_locations import source_location

#: The environment variable that turns ``debug_nans`` on for every
#: compilation that does not say otherwise.
ENVIRONMENT_VARIABLE = "IRC_DEBUG_NANS"

#: The levels a call is replayed at, highest first, until one shows the
#: non-finite value (triton's kernels have no op-by-op interpreter).
REPLAY_LEVELS = ("graph", "fusion", "loop", "memory")


def enabled(option: bool | None) -> bool:
    """``debug_nans`` as given, or, for None, as ``IRC_DEBUG_NANS`` says
    (read when the compilation is made, so that a call pays nothing)."""
    if option is not None:
        return option
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip() not in ("", "0")


# --------------------------------------------------------------------------
# Non-finite elements
# --------------------------------------------------------------------------


def non_finite(value: Any) -> np.ndarray | None:
    """The mask of ``value``'s non-finite elements, or None when it has
    none (integers and bools never have); NumPy scalars (the loop level's
    scalar values) count as arrays of rank 0."""
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray) or value.dtype.kind in "biuOSU":
        return None
    with np.errstate(all="ignore"):
        mask = ~np.isfinite(value)
    return mask if mask.any() else None


def first_index(mask: np.ndarray) -> tuple[int, ...]:
    """The index of the first true element of ``mask``, in C order."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _element(array: np.ndarray, index: tuple[int, ...]) -> str:
    return repr(array[index].item())


# --------------------------------------------------------------------------
# Where a non-finite value came from
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """Where a non-finite value appeared: an op of ``level`` that made it
    from finite operands, or the argument ``argument`` that held it.
    ``index`` is its first non-finite element, ``value`` that element,
    ``operands`` the operands there (or their ranges), ``context`` the
    loop iterations and branches around the op."""

    sequence: int
    value: str
    index: tuple[int, ...]
    op: Operation | None = None
    argument: str | None = None
    operands: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    level: str = "graph"

    @property
    def location(self) -> str | None:
        """The ``file:line:col`` of the op's Python line, if it has one."""
        return None if self.op is None else source_location(self.op)

    def describe(self) -> str:
        if self.op is None:
            return (
                f"argument {self.argument!r} already holds {self.value} at index "
                f"{self.index}: the non-finite value comes from the caller"
            )
        lines = [
            f"{op_location(self.op)} (level {self.level}) made {self.value} at "
            f"index {self.index} from finite operands"
        ]
        lines += [f"  | {text}" for text in _source_line(self.op)]
        lines += [f"  in {where}" for where in self.context]
        lines += [f"  {operand}" for operand in self.operands]
        return "\n".join(lines)


def earliest(origins: Sequence[Origin]) -> Origin | None:
    """The origin to report among several: the earliest computation (or
    argument) that made a non-finite value, before any constant holding
    one, since lowered code fills with infinities by design (a maximum's
    identity -inf) and such a fill is the culprit only when nothing else
    is."""
    return min(
        origins,
        key=lambda o: (o.op is not None and not o.op.operands, o.sequence),
        default=None,
    )


class _Hunter(Interpreter.Listener):
    """Labels every non-finite value the interpreter makes with its
    ``Origin``: a new one for an op whose operands are finite, else the
    earliest origin among its non-finite operands. Values are labelled by
    identity: the interpreter passes arrays through block arguments (loop
    carries) unchanged, and slices of them (a loop's ``xs``) are views
    whose ``base`` is labelled.

    Below the fusion level, kernels store tiles into memory that later ops
    read: the tensors a ``loop.kernel`` writes, the storage of the memory
    level's buffers. Those are followed element by element (which origin
    each stored non-finite element holds), so that a load or a kernel's
    result inherits the origins of the elements it reads, not those of
    elements stored elsewhere and never read."""

    def __init__(self, interpreter: Interpreter, callee: FuncOp, level: str) -> None:
        self.interpreter = interpreter
        self.level = level
        self._callee = callee
        #: By ``id``: the labelled array (kept alive, so that no other array
        #: takes its ``id``) and its origin.
        self._labels: dict[int, tuple[Any, Origin]] = {}
        #: By ``id`` of an array ops store into: the array and, per element
        #: (flat), the origin of the non-finite value stored there, or None.
        self._stored: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: Every origin found, in the order the values appeared.
        self.origins: list[Origin] = []
        #: What the called function returned (its ``func.return``'s operands).
        self.returned: PythonValues = ()
        #: Per region op in progress, how many origins there were before it.
        self._region_starts: list[int] = []
        #: Per graph.while in progress, the runs of its body begun.
        self._while_runs: dict[WhileOp, int] = {}

    def origin_of(self, value: Any) -> Origin | None:
        """The label of ``value`` or of an array it views; for memory (a
        buffer, a tensor a kernel wrote), the earliest origin its
        non-finite elements hold."""
        if isinstance(value, Buffer):
            positions = value.offsets().reshape(-1)
            return self._stored_origin(value.storage.data, positions)
        while isinstance(value, np.ndarray | np.generic):
            labelled = self._labels.get(id(value))
            if labelled is not None:
                return labelled[1]
            if id(value) in self._stored:
                return self._stored_origin(value, np.arange(value.size))
            value = value.base
        return None

    def _new(self, value: str, index: tuple[int, ...], **where: Any) -> Origin:
        origin = Origin(len(self.origins), value, index, level=self.level, **where)
        self.origins.append(origin)
        return origin

    def _label(self, value: Any, origin: Origin) -> None:
        self._labels[id(value)] = (value, origin)

    # Arguments and results of the called function -------------------------

    def _label_arguments(self) -> None:
        """Arguments that hold non-finite values are origins themselves
        (at the memory level, the elements of the buffers made of them)."""
        block = self._callee.body.block
        values = self.interpreter.get_values(block.args)
        for name, value in zip(argument_names(self._callee), values, strict=True):
            array = value_array(value)
            mask = non_finite(array)
            if mask is None:
                continue
            index = first_index(mask)
            origin = self._new(_element(array, index), index, argument=name)
            if isinstance(value, Buffer):
                positions = value.offsets()[mask]
                self._element_origins(value.storage.data)[positions] = origin
            else:
                self._label(value, origin)

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if op.parent_op() is self._callee:
            if op.prev_op is None:
                self._label_arguments()
            if op.next_op is None:
                self.returned = args
        if op.regions:
            self._region_starts.append(len(self.origins))
            if isinstance(op, WhileOp):
                self._while_runs[op] = 0
        parent = op.parent_op()
        if (
            isinstance(parent, WhileOp)
            and op.prev_op is None
            and op.parent_region() is parent.body_region
        ):
            self._while_runs[parent] += 1

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        start = self._region_starts.pop() if op.regions else None
        if isinstance(op, loop.WriteOp | memory.StoreOp):
            self._follow_store(op)
        elif isinstance(op, memory.CopyOp):
            self._follow_copy(op)
        elif isinstance(op, memory.WriteScalarOp):
            value, buffer = self.interpreter.get_values(op.operands)
            position = np.array([buffer.base])
            self._store(
                buffer.storage.data, position, np.array([value]), self.origin_of(value)
            )
        for result in results:
            if isinstance(result, Buffer):
                self._label_constant(op, result)
                continue
            mask = non_finite(result)
            if mask is not None and self.origin_of(result) is None:
                origin = self._read_origin(op, result)
                if origin is None:
                    origin = self._result_origin(op, result, mask, start)
                self._label(result, origin)

    # Memory: stores, loads, copies -------------------------------------------

    def _element_origins(self, data: np.ndarray) -> np.ndarray:
        """The origin of each element of ``data`` (flat), made on first use."""
        stored = self._stored.get(id(data))
        if stored is None:
            stored = self._stored[id(data)] = (data, np.full(data.size, None, object))
        return stored[1]

    def _stored_origin(self, data: np.ndarray, positions: np.ndarray) -> Origin | None:
        """The earliest origin among the non-finite elements of ``data`` at
        the flat ``positions``."""
        stored = self._stored.get(id(data))
        if stored is None or positions.size == 0:
            return None
        mask = non_finite(data.reshape(-1)[positions])
        if mask is None:
            return None
        found = [o for o in stored[1][positions[mask]] if o is not None]
        return earliest(found)

    def _store(
        self,
        data: np.ndarray,
        positions: np.ndarray,
        lanes: np.ndarray,
        origin: Origin | None,
    ) -> None:
        """``lanes`` went to the flat ``positions`` of ``data``: those
        elements now hold ``origin`` where non-finite, and none elsewhere
        (a finite value overwrites an old non-finite one)."""
        mask = non_finite(np.asarray(lanes))
        if mask is None and id(data) not in self._stored:
            return
        origins = np.full(positions.shape, None, object)
        if mask is not None:
            origins[mask] = origin
        self._element_origins(data)[positions] = origins

    def _follow_store(self, op: loop.WriteOp | memory.StoreOp) -> None:
        """Where a ``loop.write`` or ``memory.store`` put its active lanes."""
        values = self.interpreter.get_values(op.operands)
        mask = values[-1] if op.mask is not None else None
        if isinstance(op, loop.WriteOp):
            value, *indices = values[: 1 + len(op.indices)]
            shape = np.broadcast_shapes(*(np.shape(v) for v in values))
            active = _active(shape, mask)
            outputs = kernel_outputs(self.interpreter)
            assert outputs is not None
            data = outputs.arrays[op.output_index]
            positions = _tensor_positions(shape, indices, active, data.shape)
        else:
            value, buffer, offset = values[:3]
            lanes = [value, offset, *([] if mask is None else [mask])]
            shape = np.broadcast_shapes(*(np.shape(v) for v in lanes))
            active = _active(shape, mask)
            data = buffer.storage.data
            positions = np.broadcast_to(offset, shape)[active] + buffer.base
        written = np.broadcast_to(value, shape)[active]
        self._store(data, positions, written, self.origin_of(value))

    def _follow_copy(self, op: memory.CopyOp) -> None:
        """``memory.copy`` moves the origins with the elements."""
        source, target = self.interpreter.get_values(op.operands)
        origins = self._stored.get(id(source.storage.data))
        if origins is None and id(target.storage.data) not in self._stored:
            return
        moved = (
            np.full(source.shape, None, object)
            if origins is None
            else origins[1][source.offsets()]
        )
        self._element_origins(target.storage.data)[target.offsets()] = moved

    def _read_origin(self, op: Operation, result: Any) -> Origin | None:
        """For a ``loop.read`` or ``memory.load``, the earliest origin among
        the elements its active lanes read."""
        if not isinstance(op, loop.ReadOp | memory.LoadOp):
            return None
        values = self.interpreter.get_values(op.operands)
        mask = values[-1] if op.mask is not None else None
        shape = np.shape(result)
        active = _active(shape, mask)
        if isinstance(op, loop.ReadOp):
            data, *indices = values[: 1 + len(op.indices)]
            positions = _tensor_positions(shape, indices, active, data.shape)
            whole = self.origin_of(data) if id(data) not in self._stored else None
            return whole or self._stored_origin(data, positions)
        buffer, offset = values[:2]
        positions = np.broadcast_to(offset, shape)[active] + buffer.base
        return self._stored_origin(buffer.storage.data, positions)

    def _label_constant(self, op: Operation, buffer: Buffer) -> None:
        """A buffer an op fills itself (``memory.constant``) with non-finite
        elements that hold no origin yet: the op made them."""
        offsets = buffer.offsets()
        written = buffer.storage.written[offsets]
        data = buffer.storage.data[offsets]
        mask = non_finite(np.where(written, data, 0))
        if mask is None or self.origin_of(buffer) is not None:
            return
        index = first_index(mask)
        origin = self._new(_element(data, index), index, op=op)
        self._element_origins(buffer.storage.data)[offsets[mask]] = origin

    # Ops that make a non-finite value ------------------------------------------

    def _result_origin(
        self, op: Operation, result: Any, mask: np.ndarray, start: int | None
    ) -> Origin:
        """The origin of ``op``'s non-finite ``result``: the earliest of its
        non-finite operands' (and, for a region op, of those its regions
        made), or ``op`` itself when its operands are finite."""
        operands = self.interpreter.get_values(op.operands)
        inherited = [
            origin
            for value in operands
            if (origin := self.origin_of(value)) is not None
            and (isinstance(value, Buffer) or non_finite(value) is not None)
        ]
        if start is not None and start < len(self.origins):
            inherited.append(self.origins[start])
        if inherited:
            return earliest(inherited)
        result = np.asarray(result)
        index = first_index(mask)
        described = _describe_operands(op.operands, operands, result, index)
        return self._new(
            _element(result, index),
            index,
            op=op,
            operands=tuple(described),
            context=tuple(self._context(op)),
        )

    def _while_context(self, loop: WhileOp, child: Operation) -> str:
        """Which run of ``loop``'s body or test ``child`` is in: an unrolled
        loop's (below the graph level) is several of the user's iterations."""
        runs, factor = self._while_runs.get(loop, 0), unroll_factor(loop)
        where = op_location(loop)
        if child.parent_region() is not loop.body_region:
            return f"the test before iteration {runs * factor} of {where}"
        if factor == 1:
            return f"iteration {runs - 1} of {where}"
        first = (runs - 1) * factor
        return (
            f"iterations {first} to {first + factor - 1} of {where} "
            f"(unrolled: {factor} a run of its body)"
        )

    def _context(self, op: Operation) -> Iterator[str]:
        """The loop iterations, branches, kernels and programs ``op`` runs
        in, innermost first."""
        child, parent = op, op.parent_op()
        while parent is not None and not isinstance(parent, FuncOp | ModuleOp):
            if isinstance(parent, ForOp | scf.ForOp):
                (index,) = self.interpreter.get_values((parent.body.block.args[0],))
                yield f"iteration {int(index)} of {op_location(parent)}"
            elif isinstance(parent, WhileOp):
                yield self._while_context(parent, child)
            elif isinstance(parent, CondOp):
                then = child.parent_region() is parent.then_region
                yield f"the {'then' if then else 'else'} branch of {op_location(parent)}"
            elif isinstance(parent, TiledKernelOp | fusion.KernelOp):
                yield self._kernel_context(parent)
            child, parent = parent, parent.parent_op()

    def _kernel_context(self, kernel: TiledKernelOp | fusion.KernelOp) -> str:
        """The kernel (and, once tiled, the program) an op runs in, with the
        kernel's reason: below the fusion level ops carry no Python line,
        and the reason names the graph ops (and their lines) it computes."""
        where = f"{kernel.name} @{kernel.kernel_name}"
        if isinstance(kernel, TiledKernelOp):
            program = program_context(self.interpreter).program_id
            where = f"program {program} of {where}"
        return f"{where} ({kernel.reason.data})"


def value_array(value: Any) -> Any:
    """A value as an array to look at: a buffer's elements (those not yet
    written count as finite), anything else as it is."""
    if not isinstance(value, Buffer):
        return value
    offsets = value.offsets()
    return np.where(value.storage.written[offsets], value.storage.data[offsets], 0)


def _active(shape: tuple[int, ...], mask: Any | None) -> np.ndarray:
    """Which lanes of an access of ``shape`` touch memory."""
    if mask is None:
        return np.ones(shape, np.bool_)
    return np.broadcast_to(mask, shape)


def _tensor_positions(
    shape: tuple[int, ...],
    indices: Sequence[Any],
    active: np.ndarray,
    extents: tuple[int, ...],
) -> np.ndarray:
    """The flat positions in a tensor of ``extents`` that the active lanes
    of a ``loop.read`` or ``loop.write`` with ``indices`` touch."""
    if not indices:  # a rank-0 tensor: every active lane its one element
        return np.zeros(int(np.count_nonzero(active)), np.intp)
    lanes = tuple(np.broadcast_to(index, shape)[active] for index in indices)
    return np.ravel_multi_index(lanes, extents)


def _source_line(op: Operation) -> list[str]:
    """The text of ``op``'s Python line (none when it has no location or
    the file cannot be read)."""
    location = source_location(op)
    if location is None:
        return []
    filename, line, _ = location.rsplit(":", 2)
    text = linecache.getline(filename, int(line)).strip()
    return [text] if text else []


def _operand_name(position: int, operand: SSAValue) -> str:
    """``operand 0 (graph.add at f.py:6)``: the operand and what made it."""
    if isinstance(operand, OpResult):
        maker = operand.op
        where = source_location(maker, short=True)
        return f"operand {position} ({maker.name}{f' at {where}' if where else ''})"
    if isinstance(operand, BlockArgument) and operand.name_hint:
        return f"operand {position} (%{operand.name_hint})"
    return f"operand {position}"


def _describe_operands(
    operands: Sequence[SSAValue],
    values: Sequence[Any],
    result: np.ndarray,
    index: tuple[int, ...],
) -> Iterator[str]:
    """Each operand at ``index`` where it has the result's shape (an
    elementwise op), else its shape and range."""
    for position, (operand, value) in enumerate(zip(operands, values, strict=True)):
        name = _operand_name(position, operand)
        array = np.asarray(value)
        if array.shape == result.shape:
            yield f"{name} = {_element(array, index)} at index {index}"
        elif array.size == 0 or array.dtype.kind in "OSU":
            yield f"{name}: {array.dtype} of shape {array.shape}"
        else:
            low, high = array.min().item(), array.max().item()
            yield (
                f"{name}: {array.dtype} of shape {array.shape}, "
                f"range [{low!r}, {high!r}]"
            )


def _interpreters() -> dict[str, Callable[[ModuleOp], Interpreter]]:
    """Each level's reference interpreter, by level (imported when a hunt
    runs: a compilation without ``debug_nans`` never needs them)."""
    from irc.interpreters.fusion import fusion_interpreter
    from irc.interpreters.graph import graph_interpreter
    from irc.interpreters.loop import loop_interpreter
    from irc.interpreters.memory import memory_interpreter

    return {
        "graph": graph_interpreter,
        "fusion": fusion_interpreter,
        "loop": loop_interpreter,
        "memory": memory_interpreter,
    }


def hunt(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> Origin | None:
    """Run ``function`` of ``module`` (of any level a reference interpreter
    runs: graph, fusion, loop or memory) on ``inputs`` op by op: the origin
    of the earliest non-finite value its outputs depend on, or None when its
    outputs are finite."""
    from irc.interpreters.graph import as_arrays, find_function
    from irc.lowering.pipeline import module_level

    level = module_level(module)
    make = _interpreters().get(level)
    if make is None:
        raise IrcError(
            f"debug_nans replays the graph, fusion, loop and memory levels, not "
            f"a {level}-level module"
        )
    interpreter = make(module)
    callee = find_function(module, function)
    hunter = _Hunter(interpreter, callee, level)
    interpreter.listeners = (hunter,)
    arrays = as_arrays(inputs, argument_names(callee))
    interpreter.call_op(callee, tuple(arrays))
    origins = [
        origin
        for output in hunter.returned
        if non_finite(value_array(output)) is not None
        and (origin := hunter.origin_of(output)) is not None
    ]
    return earliest(origins)


def hunt_levels(
    module_at: Callable[[str], ModuleOp],
    inputs: Sequence[np.ndarray],
    function: str | None = None,
) -> tuple[Origin | None, list[str]]:
    """Replay the call at each level of ``REPLAY_LEVELS`` in turn, until one
    shows a non-finite value: a value the graph level keeps finite was made
    by a lowering, and the first level whose replay holds it names the op
    of that level that made it. Returns that origin (None if every replay
    stays finite) and the levels replayed."""
    replayed: list[str] = []
    for level in REPLAY_LEVELS:
        replayed.append(level)
        origin = hunt(module_at(level), inputs, function)
        if origin is not None:
            return origin, replayed
    return None, replayed


# --------------------------------------------------------------------------
# Checked calls
# --------------------------------------------------------------------------


class CheckedCalls:
    """The calls of a compiled function with ``debug_nans``, per backend:
    the backend's call, then a look at its outputs (and the arrays it
    writes into), and on a non-finite element a replay, level by level
    (``hunt_levels``), that raises ``NonFiniteError``. It stands in for
    ``Caller.bound``; ``module_at`` gives the module of a level, lowering
    the compilation when a level below the graph is first asked for."""

    def __init__(self, caller: Caller, module_at: Callable[[str], ModuleOp]) -> None:
        self._caller = caller
        self._module_at = module_at
        self._calls: dict[str, Call] = {}

    def get(self, backend: str) -> Call:
        call = self._calls.get(backend)
        if call is None:
            call = self._calls[backend] = self._checked(backend)
        return call

    def _checked(self, backend: str) -> Call:
        caller, call = self._caller, self._caller.bind(backend)
        writes = bool(caller.captured.written_inputs)

        def checked(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            # A function that writes into its inputs is replayed on copies
            # of them made before the call.
            before = self._inputs(args, kwargs, copy=True) if writes else None
            result = call(args, kwargs)
            found = self._first_non_finite(result, args, kwargs)
            if found is not None:
                inputs = (
                    before
                    if before is not None
                    else self._inputs(args, kwargs, copy=False)
                )
                self._raise(found, inputs, backend)
            return result

        return checked

    def _inputs(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], *, copy: bool
    ) -> list[np.ndarray]:
        leaves = self._caller.flatten(args, kwargs)
        names = self._caller.input_names
        return [
            np.array(array, copy=True) if copy else array
            for array in (
                to_numpy(leaf, name) for leaf, name in zip(leaves, names, strict=True)
            )
        ]

    def _first_non_finite(
        self, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> str | None:
        """Where the call's first non-finite element is (``output 1 holds
        nan at index (0,)``), or None when there is none."""
        outputs, _ = pytree.flatten(result)
        named = [(f"output {i}", output) for i, output in enumerate(outputs)]
        written = self._caller.captured.written_inputs
        if written:
            leaves = self._caller.flatten(args, kwargs)
            names = self._caller.input_names
            named += [(f"argument {names[p]!r} (written)", leaves[p]) for p in written]
        for name, value in named:
            if isinstance(value, np.ndarray | np.generic) or is_torch_tensor(value):
                array = to_numpy(value, name)
                mask = non_finite(array)
                if mask is not None:
                    index = first_index(mask)
                    return f"{name} holds {_element(array, index)} at index {index}"
        return None

    def _raise(self, found: str, inputs: list[np.ndarray], backend: str) -> None:
        function = self._caller.captured.function_name
        origin, replayed = hunt_levels(self._module_at, inputs, function)
        head = f"{function}(): {found} (backend {backend!r}, debug_nans)"
        if origin is None:
            error = NonFiniteError(
                f"{head}, but the replays of the same inputs on the "
                f"{_levels(replayed)} levels stay finite: the non-finite value "
                "comes from how the compiled kernels compute (an overflow in "
                "another order of operations, a lower precision); compare with "
                "backend='reference' and read ir('triton')"
            )
        elif origin.level == "graph":
            error = NonFiniteError(
                f"{head}; replayed op by op on the graph level, it comes from "
                f"where a non-finite value first appeared:\n{origin.describe()}"
            )
        else:
            error = NonFiniteError(
                f"{head}; the replays of the same inputs on the "
                f"{_levels(replayed[:-1])} levels stay finite, so a lowering made "
                f"it: replayed op by op on the {origin.level} level, it comes "
                f"from where a non-finite value first appeared:\n"
                f"{origin.describe()}"
            )
        error.origin = origin
        raise error


def _levels(names: Sequence[str]) -> str:
    """``graph, fusion and loop``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
