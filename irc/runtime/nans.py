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
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from irc import pytree
from irc.dialects.graph import CondOp, ForOp, WhileOp
from irc.errors import NonFiniteError
from irc.runtime.arrays import is_torch_tensor, to_numpy
from irc.runtime.binding import op_location
from irc.runtime.calls import Call, Caller
from irc.source_locations import source_location

#: The environment variable that turns ``debug_nans`` on for every
#: compilation that does not say otherwise.
ENVIRONMENT_VARIABLE = "IRC_DEBUG_NANS"


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
    none (integers and bools never have)."""
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


class _Hunter(Interpreter.Listener):
    """Labels every non-finite value the interpreter makes with its
    ``Origin``: a new one for an op whose operands are finite, else the
    earliest origin among its non-finite operands. Values are labelled by
    identity: the interpreter passes arrays through block arguments (loop
    carries) unchanged, and slices of them (a loop's ``xs``) are views
    whose ``base`` is labelled."""

    def __init__(self, interpreter: Interpreter) -> None:
        self.interpreter = interpreter
        #: By ``id``: the labelled array (kept alive, so that no other array
        #: takes its ``id``) and its origin.
        self._labels: dict[int, tuple[np.ndarray, Origin]] = {}
        #: Every origin found, in the order the values appeared.
        self.origins: list[Origin] = []
        #: Per region op in progress, how many origins there were before it.
        self._region_starts: list[int] = []
        #: Per graph.while in progress, the runs of its body begun.
        self._while_runs: dict[WhileOp, int] = {}

    def label_arguments(self, names: Sequence[str], arrays: Sequence[Any]) -> None:
        """Arguments that hold non-finite values are origins themselves."""
        for name, array in zip(names, arrays, strict=True):
            mask = non_finite(array)
            if mask is not None:
                index = first_index(mask)
                self._label(
                    array, self._new(_element(array, index), index, argument=name)
                )

    def origin_of(self, value: Any) -> Origin | None:
        """The label of ``value`` or of an array it views."""
        while isinstance(value, np.ndarray):
            labelled = self._labels.get(id(value))
            if labelled is not None:
                return labelled[1]
            value = value.base
        return None

    def _new(self, value: str, index: tuple[int, ...], **where: Any) -> Origin:
        origin = Origin(len(self.origins), value, index, **where)
        self.origins.append(origin)
        return origin

    def _label(self, array: np.ndarray, origin: Origin) -> None:
        self._labels[id(array)] = (array, origin)

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
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
        for result in results:
            mask = non_finite(result)
            if mask is not None and self.origin_of(result) is None:
                self._label(result, self._result_origin(op, result, mask, start))

    def _result_origin(
        self, op: Operation, result: np.ndarray, mask: np.ndarray, start: int | None
    ) -> Origin:
        """The origin of ``op``'s non-finite ``result``: the earliest of its
        non-finite operands' (and, for a region op, of those its regions
        made), or ``op`` itself when its operands are finite."""
        operands = self.interpreter.get_values(op.operands)
        inherited = [
            origin
            for value in operands
            if non_finite(value) is not None
            and (origin := self.origin_of(value)) is not None
        ]
        if start is not None and start < len(self.origins):
            inherited.append(self.origins[start])
        if inherited:
            return min(inherited, key=lambda origin: origin.sequence)
        index = first_index(mask)
        described = _describe_operands(op.operands, operands, result, index)
        return self._new(
            _element(result, index),
            index,
            op=op,
            operands=tuple(described),
            context=tuple(self._context(op)),
        )

    def _context(self, op: Operation) -> Iterator[str]:
        """The loop iterations and branches ``op`` runs in, innermost first."""
        child, parent = op, op.parent_op()
        while isinstance(parent, ForOp | WhileOp | CondOp):
            if isinstance(parent, ForOp):
                (index,) = self.interpreter.get_values((parent.body.block.args[0],))
                yield f"iteration {int(index)} of {op_location(parent)}"
            elif isinstance(parent, WhileOp):
                runs = self._while_runs.get(parent, 0)
                if child.parent_region() is parent.body_region:
                    yield f"iteration {runs - 1} of {op_location(parent)}"
                else:
                    yield f"the test before iteration {runs} of {op_location(parent)}"
            else:
                then = child.parent_region() is parent.then_region
                yield f"the {'then' if then else 'else'} branch of {op_location(parent)}"
            child, parent = parent, parent.parent_op()


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


def hunt(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str | None = None
) -> Origin | None:
    """Run ``function`` of graph-level ``module`` on ``inputs`` op by op:
    the origin of the earliest non-finite value its outputs depend on, or
    None when its outputs are finite."""
    from irc.interpreters.graph import as_arrays, find_function, graph_interpreter
    from irc.runtime.binding import argument_names

    interpreter = graph_interpreter(module)
    hunter = _Hunter(interpreter)
    interpreter.listeners = (hunter,)
    callee = find_function(module, function)
    names = argument_names(callee)
    arrays = as_arrays(inputs, names)
    hunter.label_arguments(names, arrays)
    outputs = interpreter.call_op(callee, tuple(arrays))
    origins = [
        origin
        for output in outputs
        if non_finite(output) is not None
        and (origin := hunter.origin_of(output)) is not None
    ]
    return min(origins, key=lambda origin: origin.sequence, default=None)


# --------------------------------------------------------------------------
# Checked calls
# --------------------------------------------------------------------------


class CheckedCalls:
    """The calls of a compiled function with ``debug_nans``, per backend:
    the backend's call, then a look at its outputs (and the arrays it
    writes into), and on a non-finite element a replay on the graph level
    that raises ``NonFiniteError``. It stands in for ``Caller.bound``."""

    def __init__(self, caller: Caller, graph: Callable[[], ModuleOp]) -> None:
        self._caller = caller
        self._graph = graph
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
        origin = hunt(self._graph(), inputs, function)
        head = f"{function}(): {found} (backend {backend!r}, debug_nans)"
        if origin is None:
            error = NonFiniteError(
                f"{head}, but the graph-level replay of the same inputs stays "
                "finite: the non-finite value comes from how the kernels compute "
                "(an overflow in another order of operations, a lower precision); "
                "compare with backend='reference' and read ir('loop')"
            )
        else:
            error = NonFiniteError(
                f"{head}; replayed op by op on the graph level, it comes from "
                f"where a non-finite value first appeared:\n{origin.describe()}"
            )
        error.origin = origin
        raise error
