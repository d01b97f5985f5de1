"""``irc.debug.print`` and ``irc.debug.callback``: show values from inside
traced code, as ``jax.debug.print`` and ``jax.debug.callback`` do.

In traced code each call becomes a ``debug.print`` or ``debug.callback`` op
(``irc.dialects.debug``): an ordered effect that no pass removes, merges or
reorders, run on the host between kernels every time the compiled function
runs (docs/debugging.md, "Printing from traced code"). Outside a trace
(eager NumPy code) the values are shown at once, so the same function runs
both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irc.capture.layout import as_tensor
from irc.capture.trace import active_trace
from irc.dialects.debug import CallbackOp, DebugOp, PrintOp
from irc.interpreters.debug import register_callback, show

__all__ = ["callback", "print"]


def print(fmt: str, *args: Any, **kwargs: Any) -> None:
    """Print ``fmt.format(*args, **kwargs)``, the values as NumPy arrays,
    each time the compiled function runs (at once outside a trace)."""
    if active_trace() is None:
        names = [""] * len(args) + list(kwargs)
        show("print", fmt, names, False, [*args, *kwargs.values()])
        return
    _emit(lambda values, names: PrintOp(fmt, values, names), args, kwargs)


def callback(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Call ``function(*args, **kwargs)`` with the values as NumPy arrays,
    each time the compiled function runs (at once outside a trace). Its
    result is ignored: a callback observes, it does not compute."""
    if active_trace() is None:
        function(*args, **kwargs)
        return
    key = register_callback(function)
    _emit(lambda values, names: CallbackOp(key, values, names), args, kwargs)


def _emit(
    make: Callable[[list[Any], list[str]], DebugOp],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """Add the op ``make`` builds over the traced values to the capture."""
    trace = active_trace()
    assert trace is not None
    values = [as_tensor(v).value for v in (*args, *kwargs.values())]
    trace.emit(make(values, [""] * len(args) + list(kwargs)))
