"""Running the debug dialect's ops, at every level, and the registry of the
Python callables ``debug.callback`` names.

The IR holds a callback's id, not the callable, so that the IR prints and
parses like any other; the callable lives in this process's registry
(``register_callback``), where every backend looks it up when the op runs.
Running IR whose id this process never registered (a file read back in
another process) is an ``ExecutionError`` naming the id; printing it works.

``show`` is the one spelling of what a debug op does, which the reference
interpreters call and the emitted launchers mirror (their prelude's
``_irc_debug``).
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Operation

from irc.dialects.debug import CallbackOp, DebugOp, PrintOp
from irc.errors import ExecutionError

#: The prefix of the lines a backward pass's copy of a print prints.
BACKWARD_PREFIX = "[backward] "

_callbacks: dict[str, Callable[..., Any]] = {}
_ids: dict[int, str] = {}
_lock = threading.Lock()
_counter = itertools.count()


def register_callback(function: Callable[..., Any]) -> str:
    """The id of ``function`` in the registry, registering it the first time
    (the same callable always gets the same id in a process, so ``irc.jit``
    traces it into the same IR). Ids are unique to the process: a compile
    cache entry made in another process never calls this one's callable."""
    with _lock:
        known = _ids.get(id(function))
        if known is not None and _callbacks.get(known) is function:
            return known
        name = re.sub(r"\W", "_", getattr(function, "__qualname__", "callback"))
        key = f"{name[:40]}-{uuid.uuid4().hex[:8]}-{next(_counter)}"
        _callbacks[key] = function
        _ids[id(function)] = key
        return key


def lookup_callback(key: str) -> Callable[..., Any]:
    """The callable registered under ``key``; an ``ExecutionError`` if this
    process registered none (IR read back from text made elsewhere)."""
    found = _callbacks.get(key)
    if found is None:
        raise ExecutionError(
            f"debug.callback {key!r}: no Python callable is registered under this "
            "id in this process (irc.debug.callback registers one when it is "
            "traced; IR read back from text keeps only the id)"
        )
    return found


def show(
    kind: str, text: str, names: Sequence[str], backward: bool, values: Sequence[Any]
) -> None:
    """Do what a debug op does: ``kind`` is ``"print"`` (``text`` the format
    string) or ``"callback"`` (``text`` the id); ``names`` each value's
    keyword, ``""`` for a positional one. A print is flushed at once, so its
    line is out before the call returns."""
    arrays = [_as_array(v) for v in values]
    positional = [a for a, n in zip(arrays, names, strict=True) if not n]
    keywords = {n: a for a, n in zip(arrays, names, strict=True) if n}
    if kind == "print":
        prefix = BACKWARD_PREFIX if backward else ""
        print(prefix + text.format(*positional, **keywords), flush=True)
    else:
        lookup_callback(text)(*positional, **keywords)
        sys.stdout.flush()


def _as_array(value: Any) -> np.ndarray:
    """A value as NumPy shows it, a copy of its own (a callback may keep
    it, and the buffer it was read from is reused by later kernels);
    bfloat16 as float32, as the emitted launchers show it (NumPy has no
    bfloat16 of its own)."""
    array = np.array(value)
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def run_debug_op(op: DebugOp, values: Sequence[Any]) -> None:
    """Run debug op ``op`` on its values (NumPy arrays)."""
    kind, text = op.action
    show(kind, text, op.keywords, op.is_backward, values)


@register_impls
class DebugFunctions(InterpreterFunctions):
    """``debug.print`` and ``debug.callback`` for a level's interpreter;
    ``to_array`` turns that level's runtime values (arrays, or the memory
    level's buffers) into NumPy arrays."""

    def __init__(
        self, to_array: Callable[[Any, Operation], np.ndarray] | None = None
    ) -> None:
        self.to_array = to_array

    def _run(self, op: DebugOp, args: PythonValues) -> PythonValues:
        convert = self.to_array
        run_debug_op(op, [v if convert is None else convert(v, op) for v in args])
        return ()

    @impl(PrintOp)
    def run_print(
        self, interpreter: Interpreter, op: PrintOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)

    @impl(CallbackOp)
    def run_callback(
        self, interpreter: Interpreter, op: CallbackOp, args: PythonValues
    ) -> PythonValues:
        return self._run(op, args)
