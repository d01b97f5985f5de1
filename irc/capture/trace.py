"""The state of one capture: where ops go, what is known about the symbols,
and which Python line is being traced."""

from __future__ import annotations

import functools
import linecache
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType, FrameType, TracebackType

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from irc.dialects.sym import FactAttr, GuardOp
from irc.errors import IrcError, TracingError
from irc.shapes import Facts

_IRC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


class Trace:
    """One capture in progress: ops are appended to ``block``."""

    def __init__(self, block: Block, facts: Facts):
        self.builder = Builder(InsertPoint.at_end(block))
        self.facts = facts

    def assume(self, fact: FactAttr, reason: str | None = None) -> None:
        """State ``fact`` as a guard the runtime checks, and assume it from
        here on."""
        self.emit(GuardOp(fact, reason))
        self.facts = Facts([*(str(f) for f in self.facts), str(fact)])

    def emit(self, op: Operation) -> Operation:
        """Append ``op``, located at the user's Python line that made it."""
        op.location = _location_attr(user_frame())
        self.builder.insert(op)
        return op


_active: list[Trace] = []


def current_trace() -> Trace:
    if not _active:
        raise TracingError(
            "a traced value was used outside of irc.trace/irc.compile; traced "
            "values live only while their function is being captured"
        )
    return _active[-1]


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    _active.append(trace)
    try:
        yield trace
    finally:
        _active.pop()


def user_frame() -> FrameType | None:
    """The innermost frame of user code: neither irc's nor NumPy's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith((_IRC_DIR + os.sep, _NUMPY_DIR + os.sep)):
            return frame
        frame = frame.f_back
    return None


def _column(frame: FrameType) -> int:
    positions = _positions(frame.f_code)
    index = frame.f_lasti // 2
    if index < len(positions) and positions[index] is not None:
        return positions[index] + 1
    return 1


@functools.cache
def _positions(code: CodeType) -> tuple[int | None, ...]:
    """Start columns of each instruction (none before Python 3.11)."""
    if not hasattr(code, "co_positions"):
        return ()
    return tuple(position[2] for position in code.co_positions())


def _location_attr(frame: FrameType | None) -> FileLineColLoc:
    if frame is None:
        return FileLineColLoc(StringAttr("<unknown>"), IntAttr(0), IntAttr(0))
    return FileLineColLoc(
        StringAttr(frame.f_code.co_filename),
        IntAttr(frame.f_lineno),
        IntAttr(_column(frame)),
    )


def tracing_error(message: str, error: type[IrcError] = TracingError) -> IrcError:
    """An error (``TracingError`` unless told) that names the user's line."""
    return _located(error(message), user_frame())


def locate(err: IrcError, frame: FrameType | None) -> IrcError:
    """``err`` naming the user's line in ``frame``, unless it names one."""
    if getattr(err, "irc_located", False):
        return err
    return _located(type(err)(*err.args), frame)


def _located(err: IrcError, frame: FrameType | None) -> IrcError:
    if frame is not None:
        code = frame.f_code
        line = linecache.getline(code.co_filename, frame.f_lineno).strip()
        text = f"{code.co_filename}:{frame.f_lineno}: {err.args[0]}"
        err = type(err)(f"{text}\n    {line}" if line else text)
    err.irc_located = True  # type: ignore[attr-defined]
    return err


def innermost_user_frame(traceback: TracebackType | None) -> FrameType | None:
    """The innermost frame of user code in a traceback."""
    found = None
    while traceback is not None:
        filename = os.path.abspath(traceback.tb_frame.f_code.co_filename)
        if not filename.startswith((_IRC_DIR + os.sep, _NUMPY_DIR + os.sep)):
            found = traceback.tb_frame
        traceback = traceback.tb_next
    return found
