"""The Triton backend's one error: ``EmitError``, raised by every printer
of the package for a module that cannot be printed as Python."""

from __future__ import annotations

from irc.errors import IrcError


class EmitError(IrcError):
    """A triton-level module that cannot be printed as Python: an op with no
    Triton spelling, a symbol no argument binds, a launch of no
    ``triton.kernel``."""
