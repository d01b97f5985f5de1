"""Backends: printers of irc's lowest level as code for a target.

One subpackage per target; ``irc.backend.triton`` prints a triton-level
module as the source of a Python module of ``@triton.jit`` kernels and
their launchers. A backend knows its own level's dialects, the memory
level's host ops and the level-neutral modules (``irc.shapes``,
``irc.dtypes``, ``irc.errors``, ``irc.dialects.tile``), nothing above.
"""
