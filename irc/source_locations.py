"""Where an op came from, as text: the one spelling of a source location in
irc's diagnostics, error messages, kernel reasons, emitted comments and
pictures.

It is MLIR's ``file:line:col``, the form irc-opt's diagnostics already use
and the one editors and terminals turn into links; text that becomes part of
a compiled program (a kernel's reason) takes the short form, the file's base
name and the line, so that a program compiles to the same source wherever
it lies. Used by every level, so it imports no dialect of irc.
"""

from __future__ import annotations

import os

from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation

#: The name that marks the location of an op of a joint function's backward
#: (``loc("backward"("f.py":3:9))``), as JAX's name stacks say
#: ``transpose(jvp(f))``: it keeps the forward op's place, which diagnostics
#: and kernel reasons show, and tells ``fuse`` which values the backward reads
#: from the forward (``irc.lowering.saved_activations``). Metadata, as every
#: location: an op that loses it is taken for a forward op, which changes what
#: is stored, never what is computed.
BACKWARD = "backward"


def source_location(op: Operation, *, short: bool = False) -> str | None:
    """``file:line:col`` of ``op``'s ``loc(...)`` (``short``: the file's base
    name and the line), or ``None`` if it names no place in a file."""
    position = _file_position(op.location)
    if position is None:
        return None
    if short:
        return f"{os.path.basename(position.filename.data)}:{position.line.data}"
    return f"{position.filename.data}:{position.line.data}:{position.column.data}"


def _file_position(location: Attribute) -> FileLineColLoc | None:
    """The file position of a location attribute: itself, or the first one
    inside a named, call-site (the callee's, as MLIR reports) or fused
    location; ``None`` if there is none."""
    if isinstance(location, FileLineColLoc):
        return location
    if isinstance(location, NameLoc):
        return _file_position(location.location)
    if isinstance(location, CallSiteLoc):
        return _file_position(location.callee) or _file_position(location.caller)
    if isinstance(location, FusedLoc):
        return next(filter(None, map(_file_position, location.locations)), None)
    return None


def backward_location(location: Attribute) -> Attribute:
    """``location`` marked as a backward op's (once)."""
    if _marks_backward(location):
        return location
    inner = NoneAttr() if isinstance(location, UnknownLoc) else location
    return NameLoc(StringAttr(BACKWARD), inner)


def is_backward_op(op: Operation) -> bool:
    """Whether ``op``'s location marks it as a backward op
    (``backward_location``)."""
    return _marks_backward(op.location)


def _marks_backward(location: Attribute) -> bool:
    while isinstance(location, NameLoc):
        if location.desc.data == BACKWARD:
            return True
        location = location.location
    return False
