"""Calling a compiled function: a backend bound once per compiled function
(the emitted module loaded and its launcher made, for a Triton backend), the
call's arguments flattened and checked against the captured call, and the
results rebuilt in the structure the function returned them.

A call of torch tensors that a Triton launcher can take as they are takes
the fast path, one generated function (``pytree.call_dispatcher``); this
module builds it once, and nothing here runs per call but that function.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from irc import pytree
from irc.capture import NO_RESULT, Captured
from irc.errors import AllocationError, BindingError, IrcError
from irc.runtime.arrays import (
    check_writable,
    is_torch_tensor,
    to_numpy,
    to_torch,
    write_back,
)

#: ``"auto"`` picks the first available of the others, in this order.
BACKENDS = ("auto", "triton", "interpret", "reference")

#: What a call on one backend runs: ``(args, kwargs)`` to results.
Call = Callable[[tuple[Any, ...], dict[str, Any]], Any]


class Caller:
    """The calls of one compiled function: per backend, what a call runs,
    bound on first use. The graph module (for the reference backend) and
    the emitted module (for a Triton backend) are asked for only then."""

    def __init__(
        self,
        captured: Captured,
        input_names: list[str],
        graph: Callable[[], ModuleOp],
        source: Callable[[], str],
    ):
        self.captured = captured
        self.input_names = input_names
        self._graph = graph
        self._source = source
        #: What a call runs, per backend (``"auto"`` and the one it chose).
        self.bound: dict[str, Call] = {}
        #: Held while a backend is bound: binding lowers and emits the
        #: compilation, which threads calling at once must not do together
        #: (reentrant: ``"auto"`` binds the backend it picks).
        self._binding = threading.RLock()

    def bind(self, backend: str) -> Call:
        """What a call on ``backend`` runs, prepared once, whichever thread
        asks first: the loaded emitted module and its device for a Triton
        backend."""
        call = self.bound.get(backend)
        if call is None:
            with self._binding:
                call = self.bound.get(backend)
                if call is None:
                    call = self.bound[backend] = self._prepare(backend)
        return call

    def _prepare(self, backend: str) -> Call:
        if backend not in BACKENDS:
            raise IrcError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        if backend == "auto":
            return self.bind(auto_backend())
        if backend == "reference":
            return self._call_reference
        missing = [
            m for m in ("torch", "triton") if importlib.util.find_spec(m) is None
        ]
        if missing:
            raise IrcError(
                f"backend {backend!r} runs the emitted Triton module, which needs "
                f"{' and '.join(missing)}: pip install torch==2.13.0 triton (torch "
                "first, for its CPU build), or call with backend='reference'"
            )
        from irc.runtime import triton_backend

        interpret = backend == "interpret"
        module = triton_backend.load_source(self._source(), interpret=interpret)
        launcher = triton_backend.Launcher(
            module, self.input_names, interpret=interpret
        )
        return self.triton_call(launcher)

    def _call_reference(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from irc.interpreters.graph import run_graph

        leaves = self.flatten(args, kwargs)
        arrays = [to_numpy(leaf, name) for leaf, name in zip(leaves, self.input_names)]
        outputs = run_graph(self._graph(), arrays, self.captured.function_name)
        if any(is_torch_tensor(leaf) for leaf in leaves):
            outputs = [to_torch(o) for o in outputs]
        return self.results(outputs, leaves)

    def triton_call(self, launcher: Any) -> Call:
        """A call through ``launcher``, which checks and binds the call
        itself, with messages that name the argument, axis, symbol and
        values; only flattening and converting the results are left here.

        A call of torch tensors the launcher can take as they are takes the
        fast path: one generated function (``pytree.call_dispatcher``)
        flattens and tests it, runs the launcher on its tensors and rebuilds
        the results. Any other call, and one the launcher refuses, takes the
        general path, which converts what it can and raises the precise
        error."""
        general = self.general_triton_call(launcher)
        if not self.input_names:
            return general
        captured = self.captured
        static = captured.static_leaves
        names = {f"_s{i}": value for i, value in static.items()}
        names |= {"_same_static": same_static}
        names |= {t.__name__: t for t in PLAIN_STATIC_TYPES}
        names |= {
            "_launch": launcher.launch_given,
            "_Refused": launcher.launch_error,
            "_AllocationFailed": launcher.allocation_failed,
            "_AllocationError": AllocationError,
            "_results": self.results,
        }
        return pytree.call_dispatcher(
            captured.in_tree,
            then=lambda tensors: self._launch_lines(tensors, names),
            otherwise=general,
            refuse_leaf=self._fast_leaf_refusal(launcher),
            keep=self._tensor_leaves,
            names=names,
            any_key_order=True,
        )

    def general_triton_call(self, launcher: Any) -> Call:
        """Any call through ``launcher``: the structure checked (and dicts
        reordered), NumPy arrays converted, tensors moved to the device."""
        flatten, results = self.flatten, self.results

        def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            leaves = flatten(args, kwargs)
            outputs, torch_in = launcher(leaves)
            if not torch_in:
                outputs = [to_numpy(o, "result") for o in outputs]
            return results(outputs, leaves)

        return call

    def _fast_leaf_refusal(self, launcher: Any) -> pytree.LeafRefusal:
        """What sends a call off the fast path, leaf by leaf: a tensor leaf
        that is no torch tensor without ``requires_grad`` (or, for the
        first, is not on the launcher's kind of device: the launcher checks
        that the others are on its device, and dense), a static leaf that is
        not the compiled one."""
        static = self.captured.static_leaves
        first = next(i for i in range(len(self.captured.leaf_names)) if i not in static)

        def refuse(index: int, leaf: str) -> str:
            if index in static:
                if type(static[index]) in PLAIN_STATIC_TYPES:
                    kind = type(static[index]).__name__
                    return f"type({leaf}) is not {kind} or {leaf} != _s{index}"
                return f"not _same_static({leaf}, _s{index})"
            refused = f"{leaf}.requires_grad"
            if index == first:
                refused += f" or not {leaf}.{launcher.device_flag}"
            return refused

        return refuse

    def _launch_lines(self, tensors: Sequence[str], names: dict[str, Any]) -> list[str]:
        """The fast path's lines after flattening: the launcher on the
        tensors (a refusal takes the general path, which reports it), then
        the results rebuilt in one expression (or by ``_results`` when the
        function writes into inputs or returns nothing)."""
        listed = ", ".join(tensors)
        lines = [
            "    try:",
            f"        outputs = _launch({listed})",
            "    except _Refused:",
            "        return _otherwise(args, kwargs)",
            "    except _AllocationFailed as error:",
            "        raise _AllocationError(str(error)) from error",
        ]
        captured = self.captured
        if captured.written_inputs or captured.out_tree == NO_RESULT:
            return [*lines, f"    return _results(outputs, [{listed}])"]
        results = pytree.unflatten_text(captured.out_tree, names, "outputs")
        return [*lines, f"    return {results}"]

    def results(self, outputs: Sequence[Any], inputs: Sequence[Any]) -> Any:
        """The outputs in the structure the function returned them, once the
        final values of the inputs it writes into are copied into the
        caller's arrays (the last outputs, one per written input)."""
        written = self.captured.written_inputs
        if written:
            names = [self.input_names[position] for position in written]
            for name, position in zip(names, written):
                check_writable(inputs[position], name)
            count = len(outputs) - len(written)
            for name, position, value in zip(names, written, outputs[count:]):
                write_back(name, inputs[position], value)
            outputs = outputs[:count]
        out_tree = self.captured.out_tree
        if out_tree == NO_RESULT:
            return None
        return (
            outputs[0]
            if out_tree is pytree.LEAF
            else pytree.unflatten(out_tree, outputs)
        )

    @functools.cached_property
    def _flattener(self) -> pytree.CallFlattener:
        return pytree.call_flattener(self.captured.in_tree)

    @functools.cached_property
    def _tensor_leaves(self) -> list[int] | None:
        """The leaf indices of the tensor inputs; None when every leaf is one."""
        captured = self.captured
        if not captured.static_leaves:
            return None
        count = len(captured.leaf_names)
        return [i for i in range(count) if i not in captured.static_leaves]

    def _flatten_reordered(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> list[Any]:
        """The leaves of a call whose dicts (keyword arguments included) list
        their keys in another order than the compiled call did; any other
        difference is a ``BindingError`` saying in words where it is."""
        in_tree = self.captured.in_tree
        reordered = pytree.reorder_like((list(args), dict(kwargs)), in_tree)
        if reordered is not None:
            leaves, _ = pytree.flatten(reordered)
            return leaves
        _, given = pytree.flatten((list(args), dict(kwargs)))
        where = pytree.describe_mismatch(in_tree, given, self.captured.parameters)
        raise BindingError(
            f"the arguments do not have the structure {self.captured.function_name}() "
            f"was compiled for: {where}"
        )

    def flatten(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The tensor inputs, as given (NumPy arrays or torch tensors), after
        checking the call's structure and static values against the
        compiled ones."""
        captured = self.captured
        leaves = self._flattener(args, kwargs)
        if leaves is None:
            leaves = self._flatten_reordered(args, kwargs)
        refuse_autograd(leaves, captured.leaf_names)
        if self._tensor_leaves is None:
            return leaves
        for index, expected in captured.static_leaves.items():
            check_static(captured.leaf_names[index], leaves[index], expected)
        return [leaves[i] for i in self._tensor_leaves]


def refuse_autograd(leaves: Sequence[Any], names: Sequence[str]) -> None:
    """irc runs outside torch.autograd: a result computed from a tensor that
    requires grad would silently have none, so such a tensor is refused."""
    for leaf, name in zip(leaves, names):
        if getattr(leaf, "requires_grad", False) is True and is_torch_tensor(leaf):
            raise BindingError(
                f"argument {name!r} is a torch tensor with requires_grad=True, but "
                "irc does not record its operations for torch.autograd, so the "
                "result would have no gradient: take gradients with irc.grad, "
                f"irc.value_and_grad or irc.vjp, or pass {name}.detach()"
            )


def auto_backend() -> str:
    """The first available backend: a GPU, else Triton's interpreter (torch
    and triton installed), else the NumPy reference."""
    if (
        importlib.util.find_spec("torch") is None
        or importlib.util.find_spec("triton") is None
    ):
        return "reference"
    from irc.runtime import triton_backend

    return "interpret" if triton_backend.gpu_device() is None else "triton"


#: Static values that ``same_static`` compares by type and ``==`` alone (no
#: NaN, no arrays): the fast path tests them inline.
PLAIN_STATIC_TYPES = (int, bool, str, bytes, type(None))


def check_static(name: str, value: Any, expected: Any) -> None:
    if not same_static(value, expected):
        raise BindingError(
            f"static argument {name!r} was {expected!r} when compiled but is "
            f"{value!r} now; compile again (or use irc.jit, which recompiles)"
        )


def same_static(value: Any, expected: Any) -> bool:
    """Whether a static argument equals the one compiled in (arrays by value,
    dtype and shape; other values by type and ``==``)."""
    if type(value) is not type(expected):
        return False
    if isinstance(value, np.ndarray):
        if value.dtype != expected.dtype:
            return False
        try:  # NaN where NaN was compiled in is the same static value
            return np.array_equal(value, expected, equal_nan=True)
        except TypeError:  # a dtype without NaN (objects, strings)
            return np.array_equal(value, expected)
    if is_nan(value) and is_nan(expected):
        return True
    try:
        return bool(value == expected)
    except (TypeError, ValueError):  # an ``==`` that is not a truth value
        return value is expected


def is_nan(value: Any) -> bool:
    """Whether ``value`` is a float (or complex) NaN scalar: a static
    argument that was NaN when compiled accepts NaN, though ``nan != nan``."""
    if not isinstance(value, float | complex | np.floating | np.complexfloating):
        return False
    return bool(np.isnan(value))
