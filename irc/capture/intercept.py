"""NumPy's creation functions with symbolic sizes, seen only by traced code.

``np.zeros((N, 4))``, ``np.arange(N)``, ``np.tri(N)`` and the other names in
``CREATION`` take no array NumPy could dispatch on, and NumPy turns a size
into an ``int`` first (``np.unique`` is there because NumPy's dispatch
refuses the ``size=`` that irc adds, ``irc.capture.sorting``). While a
capture runs, the ``numpy`` module's class is a subclass whose properties
hand irc's version of these names to the traced code's own lookups only;
NumPy's dict is never changed.

Entry points: ``creation_functions()`` (the context manager capture enters)
and ``@creation(name)`` (how ``irc.capture.numpy_api`` registers a name).
See docs/capture.md, section "Creation functions, threads, and what a trace
changes".
"""

from __future__ import annotations

import functools
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import active_trace, is_user_frame, looks_up

#: name in ``numpy`` -> ``make(original)``: the function that builds IR for
#: a call with a symbolic argument (``irc.capture.numpy_api`` registers them).
CREATION: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {}

_lock = threading.Lock()
_captures = 0  # captures in progress, in all threads
_plain_class: type | None = None  # numpy's class while no capture runs
_classes: dict[type, type] = {}  # numpy's own class -> its intercepting subclass
_wrappers: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {}


def creation(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``make(original)`` for ``np.<name>``."""

    def register(make: Callable[..., Any]) -> Callable[..., Any]:
        CREATION[name] = make
        return make

    return register


def is_symbolic(value: Any) -> bool:
    if isinstance(value, tuple | list):
        return any(is_symbolic(v) for v in value)
    return isinstance(value, SymDim | Tensor)


def _wrapper(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    cached = _wrappers.get(name)
    if cached is not None and cached[0] is original:
        return cached[1]
    """irc's version of ``np.<name>``. It checks again when called that its
    caller is user code in a capturing thread and that an argument is
    symbolic, as the value may have been kept, or handed to another thread
    or to NumPy; otherwise it calls NumPy's function."""
    traced = CREATION[name](original)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if (
            active_trace() is not None
            and is_user_frame(sys._getframe(1))
            and (is_symbolic(args) or is_symbolic(list(kwargs.values())))
        ):
            return traced(*args, **kwargs)
        return original(*args, **kwargs)

    _wrappers[name] = (original, wrapper)
    return wrapper


def _intercepted(name: str) -> property:
    def get(module: types.ModuleType) -> Any:
        # Only the frame executing this very lookup gets irc's version. C code
        # (NumPy's C functions, the Cython of np.random) has no frame: its
        # lookup of np.empty finds the user's frame stopped at the call into
        # C, which is not looking the name up, so C code gets NumPy's own.
        try:
            original = module.__dict__[name]
        except KeyError:
            raise AttributeError(name) from None
        if active_trace() is None:
            return original
        frame = sys._getframe(1)
        if not (is_user_frame(frame) and looks_up(frame, name)):
            return original
        return _wrapper(name, original)

    def set_(module: types.ModuleType, value: Any) -> None:
        module.__dict__[name] = value

    def delete(module: types.ModuleType) -> None:
        try:
            del module.__dict__[name]
        except KeyError:
            raise AttributeError(name) from None

    return property(get, set_, delete, f"numpy.{name}, or irc's while traced")


def _intercepting_class(plain: type) -> type:
    found = _classes.get(plain)
    if found is None:
        namespace = {name: _intercepted(name) for name in CREATION}
        namespace["__module__"] = __name__
        found = _classes[plain] = type("TracedNumpyModule", (plain,), namespace)
    return found


def _enter() -> None:
    global _captures, _plain_class
    with _lock:
        if _captures == 0:
            plain = type(np)
            np.__class__ = _intercepting_class(plain)
            _plain_class = plain
        _captures += 1


def _leave() -> None:
    global _captures, _plain_class
    with _lock:
        _captures -= 1
        if _captures == 0 and _plain_class is not None:
            # Someone else may have changed numpy's class meanwhile: keep theirs.
            if type(np) is _classes.get(_plain_class):
                np.__class__ = _plain_class
            _plain_class = None


@contextmanager
def creation_functions() -> Iterator[None]:
    """Let the traced code's ``np.zeros``, ``np.arange``, ... take symbolic
    sizes, for the duration of the ``with`` (docs/capture.md)."""
    _enter()
    try:
        yield
    finally:
        _leave()
