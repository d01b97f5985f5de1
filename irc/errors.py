"""irc's exception types.

Every error a user can cause derives from ``IrcError``; each message says
what was wrong, where, and how to fix it.
"""

from __future__ import annotations


class IrcError(Exception):
    """Base of all errors a user of irc can cause."""


class TracingError(IrcError):
    """A Python function could not be captured (data-dependent control flow,
    an unsupported NumPy function, a bad argument)."""


class IrcTypeError(IrcError, TypeError):
    """An unsupported dtype, or operands whose types do not combine."""


class IrcShapeError(IrcError, ValueError):
    """Shapes that do not match, broadcast, reshape or split."""


class BindingError(IrcError, ValueError):
    """Call-time arguments that disagree with the compiled signature: a symbol
    bound to two values, a broken guard, a wrong dtype or rank, a changed
    static argument."""


class ExecutionError(IrcError, ValueError):
    """A program that verifies failed on concrete values: an index out of
    range, a max over an empty axis, an integer raised to a negative power."""


class AllocationError(IrcError, MemoryError):
    """A call whose buffers do not fit in memory: names the buffer, its shape,
    dtype and size."""


class ConstantArrayWarning(UserWarning):
    """An array given to ``irc.compile`` or ``irc.trace`` where a
    ``TensorSpec`` would make an input: it is compiled in as a constant."""


class NonFiniteError(IrcError, FloatingPointError):
    """A call with ``debug_nans`` whose outputs hold a NaN or an infinity:
    names where the first one they depend on appeared (an op, its level,
    Python line, operands and element index, or an argument that held it).
    ``origin`` is that place (``irc.runtime.nans.Origin``), None when the
    graph-level replay stayed finite."""

    origin: object | None = None
