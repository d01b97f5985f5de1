"""How ``irc-opt`` reports errors.

Every error, whatever raised it, becomes one :class:`Report`: a
``file:line:col: error: message`` line with the source line and a caret
under it when the place is known, else ``where: error: message`` followed by
notes. A :class:`Failure` carries a report out of the code that found the
error to the driver, which prints it (or, with ``--verify-diagnostics``,
matches it against ``expected-error`` annotations, see
:mod:`irc.cli.expectations`).

The functions here turn each kind of exception into a report: parse
errors at their span, verifier errors at the failing op, and exceptions
that are bugs (in irc, a dialect or a pass) as internal errors naming the
Python line that raised them.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from types import TracebackType

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, OpResult
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    ShrinkException,
)
from xdsl.utils.lexer import Input, Span

from irc.dominance import DominanceError, value_name
from irc.source_locations import source_location


class ErrorKind(Enum):
    """Who is to blame for an error, which decides how it may be tolerated."""

    PARSE = "parse"  # the input text (tolerated by --parsing-diagnostics)
    DIAGNOSTIC = "diagnostic"  # the IR or the pass options (--verify-diagnostics)
    INTERNAL = "internal"  # irc itself: never tolerated, never expected


@dataclass(frozen=True)
class Report:
    """One error diagnostic: what went wrong and, where known, where.

    With a ``span`` (a place in the input or in the ``-p`` pipeline) it
    renders as ``file:line:col: error: message`` plus the source line and a
    caret; without one, ``where`` names the file or location instead and
    ``notes`` may show the IR around the problem.
    """

    message: str
    kind: ErrorKind = ErrorKind.DIAGNOSTIC
    span: Span[str] | None = None
    where: str = "irc-opt"
    notes: str = ""

    @property
    def line(self) -> int | None:
        """The input line the error is on, which annotations refer to."""
        return None if self.span is None else self.span.get_location().line

    def render(self) -> str:
        """The diagnostic text, ending in a newline."""
        if self.span is None:
            return f"{self.where}: error: {self.message}\n{self.notes}"
        location, _, context = self.span.print_with_context().partition("\n")
        return f"{location}: error: {self.message}\n{context}{self.notes}"


class Failure(Exception):
    """Stops processing (of one input chunk, or of everything) with a report."""

    def __init__(self, report: Report):
        super().__init__(report.message)
        self.report = report


@dataclass(frozen=True)
class CrashReporting:
    """A context manager that turns an exception escaping its block, a bug
    in irc or in a pass, into a :class:`Failure` with an internal-error
    report on ``during`` (at ``locate()``, when given). With ``let_raise``
    (``--traceback``) the exception raises unchanged instead.

    A :class:`Failure` is already a report, and xDSL's ``ShrinkException``
    is ``--shrink``'s signal that a pass saw what it looks for: both pass.
    """

    during: str
    where: str
    let_raise: bool
    locate: Callable[[], Span[str]] | None = None

    def __enter__(self) -> None:
        pass

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if (
            not isinstance(error, Exception)
            or isinstance(error, Failure | ShrinkException)
            or self.let_raise
        ):
            return
        span = None if self.locate is None else self.locate()
        raise Failure(_crash_report(error, self.during, self.where, span)) from error


def parse_report(error: ParseError, line_offset: int) -> Report:
    """A parse error at its span, moved down by the lines of the input
    chunks before this one (xDSL's span counts from the chunk)."""
    notes = ""
    if isinstance(error, MultipleSpansParseError):
        notes = "".join(
            _note(
                dataclasses.replace(span, line_offset=line_offset),
                message or (error.ref_text or "").rstrip(":"),
            )
            for span, message in error.refs
        )
    span = dataclasses.replace(error.span, line_offset=line_offset)
    return Report(error.msg, ErrorKind.PARSE, span=span, notes=notes)


def _note(span: Span[str], message: str) -> str:
    """A note at a place in the input, rendered as an error is."""
    location, _, context = span.print_with_context().partition("\n")
    return f"{location}: note: {message}\n{context}"


def undecodable_report(
    error: UnicodeDecodeError, data: bytes, where: str, line_offset: int
) -> Report:
    """Input bytes that are not UTF-8, at the first bad byte's line and
    (byte) column."""
    span = Span(error.start, error.end, Input(data, where), line_offset)
    bad = " ".join(f"0x{byte:02x}" for byte in data[error.start : error.end])
    return Report(
        f"input is not UTF-8 text: {error.reason} {bad} (the column counts "
        "bytes); irc-opt reads UTF-8: re-encode the file as UTF-8 or remove "
        "the byte",
        ErrorKind.PARSE,
        span=span,
    )


def pass_failure_report(
    error: DiagnosticException,
    pass_name: str,
    where: str,
    op_spans: dict[Operation, Span[str]],
) -> Report:
    """A pass that gave up on its input with a diagnostic (not a bug), at
    the input op it was working on when it did, if one is known."""
    message = f"pass '{pass_name}' failed: {error}"
    worked_on = op_in_traceback(error, lambda op: input_op(op, op_spans) is not None)
    op = None if worked_on is None else input_op(worked_on, op_spans)
    if op is None:
        return Report(message, where=where, notes=_notes(error))
    return op_report(
        f"'{op.name}' op: {message}", op, op_spans, where, ir_notes=_notes(error)
    )


def input_op(op: Operation, op_spans: dict[Operation, Span[str]]) -> Operation | None:
    """The op of the input that a diagnostic about ``op`` points at: ``op``
    itself if it came from the input; else, for an op a pass made, the input
    op with the symbol name (``@name``) of ``op`` or of the innermost named
    op around it (passes keep the names of functions and kernels); else the
    innermost input op around it; else None."""
    if op in op_spans:
        return op
    named = {
        name.data: each
        for each in op_spans
        if isinstance(name := each.properties.get("sym_name"), StringAttr)
    }
    ancestor: Operation | None = op
    while ancestor is not None:
        name = ancestor.properties.get("sym_name")
        if isinstance(name, StringAttr) and name.data in named:
            return named[name.data]
        ancestor = ancestor.parent_op()
    ancestor = op.parent_op()
    while ancestor is not None and ancestor not in op_spans:
        ancestor = ancestor.parent_op()
    return ancestor


def op_in_traceback(
    error: BaseException, wanted: Callable[[Operation], bool]
) -> Operation | None:
    """The op a failing piece of code was working on: the first ``wanted``
    ``Operation`` held by a local variable of the frames ``error`` passed
    through, innermost frame first (passes and printers take the op they
    work on as an argument or loop variable). This points a diagnostic at
    an op without every exception carrying one."""
    frames = []
    trace = error.__traceback__
    while trace is not None:
        frames.append(trace.tb_frame)
        trace = trace.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if isinstance(value, Operation) and wanted(value):
                return value
    return None


def verify_report(
    error: DiagnosticException,
    module: ModuleOp,
    op_spans: dict[Operation, Span[str]],
    where: str,
    after_pass: str | None,
) -> Report:
    """Blame the failing op: at its place in the input if it came from
    there, else at its ``loc(...)``, else show the IR around it."""
    if isinstance(error, DominanceError):
        op: Operation | None = error.op
    else:
        op = None if (found := _failing_op(module)) is None else found[0]
    after = "" if after_pass is None else f" (after pass '{after_pass}')"
    if op is None:
        return Report(f"{error}{after}", where=where, notes=_notes(error))
    twice = _redefinition(op) if "Redefinition of symbol" in str(error) else None
    if twice is not None:  # at the symbol, not at the table
        first, again = twice
        name = again.properties["sym_name"]
        message = f"'{again.name}' op redefines symbol @{name.data}{after}: rename one"
        note = ""
        if first in op_spans:
            location, _, context = op_spans[first].print_with_context().partition("\n")
            note = f"{location}: note: @{name.data} is first defined here\n{context}"
        return op_report(message, again, op_spans, where, note, _notes(error))
    message = f"'{op.name}' op {error}{after}"
    return op_report(
        message, op, op_spans, where, _definition_note(error, op_spans), _notes(error)
    )


def _redefinition(table: Operation) -> tuple[Operation, Operation] | None:
    """Two ops of a symbol table (a module) with the same ``sym_name``, the
    error xDSL's ``SymbolTable`` reports at the table."""
    if not table.has_trait(SymbolTable) or len(table.regions) != 1:
        return None
    seen: dict[str, Operation] = {}
    for block in table.regions[0].blocks:
        for op in block.ops:
            name = op.properties.get("sym_name")
            if not isinstance(name, StringAttr):
                continue
            if name.data in seen:
                return seen[name.data], op
            seen[name.data] = op
    return None


def op_report(
    message: str,
    op: Operation,
    op_spans: dict[Operation, Span[str]],
    where: str,
    notes: str = "",
    ir_notes: str = "",
) -> Report:
    """A report about ``op``: at its place in the input if it came from
    there (followed by ``notes``), else at its ``loc(...)``, else at
    ``where`` followed by ``ir_notes`` (the IR around it)."""
    if op in op_spans:
        return Report(message, span=op_spans[op], notes=notes)
    if (location := source_location(op)) is not None:
        return Report(message, where=location)
    return Report(message, where=where, notes=ir_notes)


class OpError(Exception):
    """An error about one op, raised where the place of ops in the input is
    not known (a target), to be reported by the driver, which knows it."""

    def __init__(self, message: str, op: Operation | None):
        super().__init__(message)
        self.message = message
        self.op = op


def _definition_note(
    error: DiagnosticException, op_spans: dict[Operation, Span[str]]
) -> str:
    """For an operand that does not dominate its use, where it is defined."""
    if not isinstance(error, DominanceError) or not isinstance(error.value, OpResult):
        return ""
    span = op_spans.get(error.value.op)
    if span is None:
        return ""
    location, _, context = span.print_with_context().partition("\n")
    return f"{location}: note: {value_name(error.value)} is defined here\n{context}"


def _crash_report(
    error: Exception, during: str, where: str, span: Span[str] | None = None
) -> Report:
    """A report for an exception that is a bug in irc or in a pass, naming the
    Python line that raised it so that the pass author can start there."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return Report(
        f"internal error in {during}: {type(error).__name__}: {error}",
        ErrorKind.INTERNAL,
        span=span,
        where=where,
        notes=(
            f"note: raised at {frame.filename}:{frame.lineno} in {frame.name}; "
            "rerun with --traceback for the Python traceback\n"
        ),
    )


def _notes(error: BaseException) -> str:
    """The notes xDSL attaches to an error (the IR with the failing op marked)."""
    return "".join(note.rstrip("\n") + "\n" for note in getattr(error, "__notes__", ()))


def _failing_op(module: ModuleOp) -> tuple[Operation, DiagnosticException] | None:
    """The op whose own checks fail and their error, found by verifying one
    op at a time in the order ``Operation.verify`` visits them (nested ops
    first), with the check of its empty blocks: xDSL's ``VerifyException``
    does not say which op raised it."""
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
            for region in op.regions:
                for block in region.blocks:
                    if block.first_op is None:
                        block.verify()  # an empty block where a terminator must be
        except DiagnosticException as error:
            return op, error
        except Exception:  # a crashing verifier is not the one we look for
            continue
    return None


def failed_check(module: ModuleOp) -> DiagnosticException | None:
    """When a verifier crashed: the error of an op whose own checks fail, if
    one does (xDSL verifies nested ops first, and some of their verifiers
    read the enclosing op, e.g. ``func.return`` its function's type, and
    crash when that op is the invalid one)."""
    found = _failing_op(module)
    return None if found is None else found[1]
