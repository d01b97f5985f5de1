"""Where an op came from, as text: the one spelling of a source location in
irc's diagnostics, error messages, kernel reasons, emitted comments and
pictures.

It is MLIR's ``file:line:col``, the form irc-opt's diagnostics already use
and the one editors and terminals turn into links. Used by every level, so
it imports no dialect of irc.
"""

from __future__ import annotations

from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation


def source_location(op: Operation) -> str | None:
    """``file:line:col`` of ``op``'s ``loc(...)``, or ``None`` if it names no
    place in a file."""
    return _file_position(op.location)


def _file_position(location: Attribute) -> str | None:
    """``file:line:col`` of a location attribute: the file position itself,
    or the first one inside a named, call-site (the callee's, as MLIR
    reports) or fused location; ``None`` if there is none."""
    if isinstance(location, FileLineColLoc):
        return f"{location.filename.data}:{location.line.data}:{location.column.data}"
    if isinstance(location, NameLoc):
        return _file_position(location.location)
    if isinstance(location, CallSiteLoc):
        return _file_position(location.callee) or _file_position(location.caller)
    if isinstance(location, FusedLoc):
        return next(filter(None, map(_file_position, location.locations)), None)
    return None
