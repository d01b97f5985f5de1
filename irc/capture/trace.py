"""The state of one capture: where ops go, what is known about the symbols,
and which Python line is being traced.

The trace in progress is held in a ``ContextVar``: each thread (and each
asyncio task) sees only its own, so several threads can capture at once and
a thread that is not capturing sees none.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import dis
import functools
import importlib.util
import inspect
import linecache
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import CodeType, FrameType, ModuleType, TracebackType
from typing import Any

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
# einops (optional) calls irc's backend on behalf of the user's line.
_EINOPS = importlib.util.find_spec("einops")
_LIBRARY_DIRS = (
    _IRC_DIR,
    _NUMPY_DIR,
    *(_EINOPS.submodule_search_locations or () if _EINOPS is not None else ()),
)


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


#: The capture in progress in this thread (or task); ``None`` outside one.
_active: ContextVar[Trace | None] = ContextVar("irc_active_trace", default=None)


def active_trace() -> Trace | None:
    """The capture in progress in this thread, if any."""
    return _active.get()


def current_trace() -> Trace:
    trace = _active.get()
    if trace is None:
        raise TracingError(
            "a traced value was used outside of irc.trace/irc.compile; traced "
            "values live only while their function is being captured"
        )
    return trace


#: How the user declares facts for the capture in progress: what hints name.
_facts_api: ContextVar[str] = ContextVar(
    "irc_facts_api", default="irc.compile(..., facts="
)


@contextmanager
def facts_declared_with(api: str) -> Iterator[None]:
    """Captures in the block are started by ``api`` (``"irc.jit(facts="``),
    which hints then name as the place to declare a fact."""
    token = _facts_api.set(api)
    try:
        yield
    finally:
        _facts_api.reset(token)


def fact_hint(fact: str) -> str:
    """``irc.compile(..., facts=['N >= 2'])``, as the capture's API spells it."""
    return f"{_facts_api.get()}[{fact!r}])"


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    token = _active.set(trace)
    try:
        yield trace
    finally:
        _active.reset(token)


@functools.lru_cache(maxsize=4096)
def is_library_file(filename: str) -> bool:
    """Whether ``filename`` is irc's, NumPy's or einops' own code (not user
    code)."""
    path = os.path.abspath(filename)
    return path.startswith(tuple(os.path.abspath(d) + os.sep for d in _LIBRARY_DIRS))


@functools.lru_cache(maxsize=4096)
def is_irc_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_IRC_DIR + os.sep)


def is_user_frame(frame: FrameType) -> bool:
    return not is_library_file(frame.f_code.co_filename)


def user_frame() -> FrameType | None:
    """The innermost frame of user code: neither irc's nor NumPy's."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if is_user_frame(frame):
            return frame
        frame = frame.f_back
    return None


@dataclass(frozen=True)
class UserLine:
    """A line of the user's code, noted when it runs: a frame's ``f_lineno``
    moves on, so an error found later about what this line made (a value
    returned at the end of the function) names it only if it was noted."""

    filename: str
    lineno: int

    @staticmethod
    def of(frame: FrameType | None) -> UserLine | None:
        if frame is None:
            return None
        return UserLine(frame.f_code.co_filename, frame.f_lineno)


def user_line() -> UserLine | None:
    """The line of user code running now (``user_frame``'s)."""
    return UserLine.of(user_frame())


# ----- what the user's line is doing ------------------------------------------


@functools.lru_cache(maxsize=1024)
def _instructions(code: CodeType) -> tuple[list[int], list[dis.Instruction]]:
    instructions = list(dis.get_instructions(code))
    return [i.offset for i in instructions], instructions


def current_instruction(frame: FrameType) -> dis.Instruction | None:
    """The bytecode instruction ``frame`` is executing (the one that called
    out of it, for a frame that is not the innermost). ``f_lasti`` may point
    into the instruction's inline caches (a Python-to-Python call in 3.11)."""
    offsets, instructions = _instructions(frame.f_code)
    index = bisect.bisect_right(offsets, frame.f_lasti) - 1
    return instructions[index] if index >= 0 else None


#: Instructions that look a name up as an attribute of a module: ``np.zeros``
#: (``LOAD_METHOD`` before Python 3.12) and ``from numpy import zeros``.
_ATTRIBUTE_LOOKUPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"})


def looks_up(frame: FrameType, name: str) -> bool:
    """Whether ``frame`` is executing the lookup of the attribute ``name``
    itself, as opposed to calling something (C code included) that looks it
    up: C code has no frame of its own, so its lookups happen while the
    innermost Python frame is at a call instruction."""
    instruction = current_instruction(frame)
    return (
        instruction is not None
        and instruction.opname in _ATTRIBUTE_LOOKUPS
        and instruction.argval == name
    )


@dataclass(frozen=True)
class Call:
    """A call the user's code is making: the callee as written
    (``np.random.rand``) and, when it resolves without running any code, the
    callee itself."""

    text: str
    callee: Any = None

    @property
    def module(self) -> str:
        """The module that defines the callee (``numpy.random.mtrand``), or
        ``""``."""
        return _module_of(self.callee) if self.callee is not None else ""

    def is_numpy(self) -> bool:
        return self.module.split(".")[0] == "numpy" or self.text.startswith(
            ("np.", "numpy.")
        )

    def is_numpy_random(self) -> bool:
        return self.module.startswith("numpy.random") or self.text.startswith(
            ("np.random.", "numpy.random.")
        )


def call_in_progress(frame: FrameType | None) -> Call | None:
    """The call ``frame`` is executing, from the source of its line: best
    effort (``None`` when the instruction is not a call, the source is not
    available, or Python is older than 3.11)."""
    if frame is None:
        return None
    instruction = current_instruction(frame)
    if instruction is None or not instruction.opname.startswith(("CALL", "PRECALL")):
        return None
    node = _call_node(frame, instruction)
    if node is None:
        return None
    return Call(ast.unparse(node.func), _resolve(node.func, frame))


def _call_node(frame: FrameType, instruction: dis.Instruction) -> ast.Call | None:
    positions = getattr(instruction, "positions", None)
    if positions is None or None in (
        positions.lineno,
        positions.end_lineno,
        positions.col_offset,
        positions.end_col_offset,
    ):
        return None
    filename = frame.f_code.co_filename
    lines = [
        linecache.getline(filename, number).encode()
        for number in range(positions.lineno, positions.end_lineno + 1)
    ]
    if not all(lines):
        return None
    # Columns are byte offsets into the UTF-8 source.
    lines[-1] = lines[-1][: positions.end_col_offset]
    lines[0] = lines[0][positions.col_offset :]
    try:
        tree = ast.parse(b"".join(lines).decode(), mode="eval")
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    return tree.body if isinstance(tree.body, ast.Call) else None


def _resolve(node: ast.expr, frame: FrameType) -> Any:
    """The value of a dotted name in ``frame``, found without running code
    (no properties, no ``__getattr__``); ``None`` when that is not possible."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in scope:
                return scope[node.id]
        return None
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, frame)
        if owner is None:
            return None
        if isinstance(owner, ModuleType):  # its dict, past irc's own properties
            return vars(owner).get(node.attr)
        try:
            found = inspect.getattr_static(owner, node.attr)
        except AttributeError:
            return None
        if isinstance(found, staticmethod | classmethod | property):
            return None
        return found
    return None


def _module_of(value: Any) -> str:
    """The module that defines a function, a method or a class."""
    try:
        if isinstance(value, ModuleType):
            return value.__name__
        owner = getattr(value, "__objclass__", None)  # Generator.random
        if owner is None:
            owner = getattr(value, "__self__", None)  # np.random.rand
            if isinstance(owner, ModuleType):
                return owner.__name__
            if owner is not None and not isinstance(owner, type):
                owner = type(owner)
        module = getattr(value if owner is None else owner, "__module__", None)
    except Exception:  # a user object's __getattr__: only for a message
        return ""
    return module if isinstance(module, str) else ""


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
    return _located(error(message), user_line())


def tracing_error_at(line: UserLine | None, message: str) -> IrcError:
    """A ``TracingError`` that names ``line``, noted earlier: the line that
    made the value the error is about, not the one running now."""
    return _located(TracingError(message), line)


def locate(err: IrcError, frame: FrameType | None) -> IrcError:
    """``err`` naming the user's line in ``frame``, unless it names one."""
    if getattr(err, "irc_located", False):
        return err
    return _located(type(err)(*err.args), UserLine.of(frame))


def _located(err: IrcError, line: UserLine | None) -> IrcError:
    if line is not None:
        source = linecache.getline(line.filename, line.lineno).strip()
        text = f"{line.filename}:{line.lineno}: {err.args[0]}"
        err = type(err)(f"{text}\n    {source}" if source else text)
    err.irc_located = True  # type: ignore[attr-defined]
    return err


def innermost_user_frame(traceback: TracebackType | None) -> FrameType | None:
    """The innermost frame of user code in a traceback."""
    found = None
    while traceback is not None:
        if is_user_frame(traceback.tb_frame):
            found = traceback.tb_frame
        traceback = traceback.tb_next
    return found
