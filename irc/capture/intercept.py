"""NumPy's creation functions with symbolic sizes, seen only by traced code.

Traced arrays reach irc through NumPy's own protocols: ``__array_ufunc__``
and ``__array_function__`` dispatch a NumPy function to irc when one of its
arguments is a traced array. The creation functions that take only sizes
(``np.zeros((N, 4))``, ``np.ones``, ``np.empty``, ``np.full``,
``np.arange(N)``, ``np.tri(N)``, ``np.eye(N)``) have no array to dispatch
on (their ``like=`` argument would need the user's code to pass a traced
array), and NumPy turns a size into an ``int`` (``__index__``) before
anything else, which a symbolic size cannot be. So capture intercepts these
names, and only for the code being traced.

Mechanism
---------
The ``numpy`` module's dict is never changed. While at least one capture is
in progress (in any thread) the module object's class is a subclass of its
own class (``ModuleType``) that has a property for each intercepted name; a
property of the class takes precedence over the module's dict, so the lookup
``np.zeros`` runs it. The property returns NumPy's own function, read from
the module's dict, unless all of these hold:

- the looking-up thread (its ``contextvars`` context) is capturing;
- the frame that looks the name up is user code: neither irc's nor NumPy's
  (NumPy's Python helpers that call ``np.empty`` get NumPy's own);
- that frame is executing the lookup itself: its current bytecode
  instruction is ``LOAD_ATTR`` / ``LOAD_METHOD`` / ``IMPORT_FROM`` of that
  very name. C code (NumPy's C functions, the Cython of ``np.random``) has
  no frame of its own: when it looks up ``np.empty`` the innermost frame is
  the user's, stopped at the call into C, so C code gets NumPy's function
  (this is what made ``np.random.rand(x.shape[0])`` crash the process when
  the module attribute was swapped: its C code got a traced array back from
  ``np.empty``).

Then it returns irc's wrapper, which checks again when called (the value may
have been kept, or handed to another thread or to NumPy) that its caller is
user code in a capturing thread and that an argument is symbolic (a
``SymDim`` or a traced array); otherwise it calls NumPy's function with the
same arguments. When the last capture ends, by a return or an exception,
the module's class is set back, so nothing of it outlives the captures.

What other code sees
--------------------
Threads that are not capturing, NumPy's internals and everything after the
captures get NumPy's own functions (``np.zeros is`` what it was) and the
same answers. While a capture runs, ``type(numpy)`` is the subclass and a
lookup of one of these names costs a Python-level call (about a
microsecond), in every thread.

Limits
------
- Only lookups written as attributes of the ``numpy`` module in the traced
  code are intercepted: ``np.zeros(...)``, ``numpy.zeros``, and ``from numpy
  import zeros`` run during the capture. A name imported before it (``from
  numpy import zeros`` at module level), ``getattr(np, "zeros")``, or
  ``numpy._core.numeric.zeros`` is NumPy's own, which takes static sizes
  only (a symbolic size there is a ``TracingError`` that says so).
- NumPy functions outside the intercepted set (``np.identity``,
  ``np.linspace``, ``np.random.*``) run NumPy's code: a symbolic size where
  it needs an int (or a float), or a traced array, is a ``TracingError``
  naming the function (``irc.capture.tensor.outside_irc``). A symbolic size
  where it takes an array is an element of an object array, as any Python
  object (``np.prod(x.shape)`` is the symbolic product).
- The interception needs CPython's frames (``sys._getframe``) and a
  ``numpy`` module whose class can be assigned (a plain module is).
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
    sizes, for the duration of the ``with`` (see the module docstring)."""
    _enter()
    try:
        yield
    finally:
        _leave()
