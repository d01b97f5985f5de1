"""``irc-opt``: irc's peer of ``mlir-opt`` and ``xdsl-opt``.

It reads textual IR, runs a pipeline of passes given by name
(``-p canonicalize,cse``) and prints the result. It is xDSL's
``xDSLOptMain`` restricted to the dialects and passes of
``irc.passes.registry``, and differs from ``xdsl-opt`` in how it fails:

- Every error a user can cause (unparsable or invalid IR, an unknown pass,
  bad pass options, a missing file, a crashing pass) is printed to stderr as
  one diagnostic, ``file:line:col: error: message`` followed by the source
  line and a caret, and the exit status is 1. There is never a Python
  traceback (``--traceback`` shows one, for debugging irc itself).
- Verifier errors point at the failing operation in the input, as parse
  errors do; xDSL prints the whole module in generic form instead.
- ``--verify-diagnostics`` also understands MLIR's
  ``// expected-error {{...}}`` annotations (see ``docs/irc-opt.md``).
- ``--print-ir-after-all`` prints the IR after every pass to stderr, each
  dump headed as in MLIR.
- ``--check-semantics`` interprets the module on random inputs before and
  after every pass and stops at the first pass that changes the results
  (see ``docs/testing.md``).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import IO, TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.targets import mlir as xdsl_mlir_target
from xdsl.utils.arg_spec import (
    ArgSpec,
    PipelineLexer,
    SpecTokenKind,
    parse_pipeline,
)
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    ShrinkException,
)
from xdsl.utils.lexer import Input, Span
from xdsl.xdsl_opt_main import xDSLOptMain

from irc.errors import IrcError
from irc.ir import print_module
from irc.passes.registry import get_all_dialects, get_all_passes

if TYPE_CHECKING:
    from irc.testing.semantics import PassCheckError, SemanticsChecker

IR_DUMP_HEADER = "// -----// IR Dump After {} //----- //"
"""The line before each ``--print-ir-after-all`` dump (MLIR's spelling)."""

_EXPECTED_ERROR = re.compile(r"//\s*expected-error(?:@([+-]\d+))?\s*\{\{(.*)\}\}")
"""``// expected-error {{message}}``, optionally ``@+N`` / ``@-N`` lines away."""


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------


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
        return None if self.span is None else self.span.get_location().line

    def render(self) -> str:
        """The diagnostic text, ending in a newline."""
        if self.span is None:
            return f"{self.where}: error: {self.message}\n{self.notes}"
        location, _, context = self.span.print_with_context().partition("\n")
        return f"{location}: error: {self.message}\n{context}{self.notes}"


class _Failure(Exception):
    """Stops processing (of one input chunk, or of everything) with a report."""

    def __init__(self, report: Report):
        super().__init__(report.message)
        self.report = report


def _notes(error: BaseException) -> str:
    """The notes xDSL attaches to an error (the IR with the failing op marked)."""
    return "".join(note.rstrip("\n") + "\n" for note in getattr(error, "__notes__", ()))


def _crash_report(error: Exception, during: str, where: str) -> Report:
    """A report for an exception that is a bug in irc or in a pass, naming the
    Python line that raised it so that the pass author can start there."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return Report(
        f"internal error in {during}: {type(error).__name__}: {error}",
        ErrorKind.INTERNAL,
        where=where,
        notes=(
            f"note: raised at {frame.filename}:{frame.lineno} in {frame.name}; "
            "rerun with --traceback for the Python traceback\n"
        ),
    )


# --------------------------------------------------------------------------
# Parsing with operation locations
# --------------------------------------------------------------------------


class _LocatingParser(Parser):
    """A parser that remembers where each operation's name is in the input.

    xDSL's parser keeps only explicit ``loc(...)`` annotations, so without
    this a verifier error could not point into the input as a parse error
    does, nor be matched by an ``expected-error`` annotation.
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int):
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self.op_spans: dict[Operation, Span[str]] = {}
        self.crash_span: Span[str] | None = None
        """The op being parsed when a custom parser raised something other
        than a diagnostic (a bug), for the internal-error report."""

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (DiagnosticException, IrcError) as error:
            # An attribute or type that fails its own verifier while being
            # built: report it at the op being parsed, not as a crash.
            raise ParseError(self.line_span(start), str(error)) from error
        except Exception:
            if self.crash_span is None:  # the innermost op sees it first
                self.crash_span = self.line_span(start)
            raise
        self.op_spans[op] = self._name_span(op.name, start)
        return op

    def _span(self, start: int, end: int) -> Span[str]:
        return Span(start, end, self.lexer.input, self.line_offset)

    def _name_span(self, name: str, start: int) -> Span[str]:
        """The op's name, which comes after its result list: MLIR reports an
        op's errors there."""
        found = self.lexer.input.content.find(name, start)
        if found < 0:
            return self._span(start, start + 1)
        return self._span(found, found + len(name))

    def line_span(self, start: int) -> Span[str]:
        """From ``start`` up to the parser's position, within start's line."""
        line_end = self.lexer.input.get_end_of_line(start)
        return self._span(start, max(start + 1, min(self.pos, line_end)))


def _failing_op(module: ModuleOp) -> Operation | None:
    """The op whose own checks fail, found by verifying one op at a time in
    the order ``Operation.verify`` visits them (nested ops first): xDSL's
    ``VerifyException`` does not say which op raised it."""
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException:
            return op
        except Exception:  # a crashing verifier is not the one we look for
            continue
    return None


def _location_text(op: Operation) -> str | None:
    """``file:line:col`` of an op's ``loc(...)``, if it has one."""
    location = op.location
    if not isinstance(location, FileLineColLoc):
        return None
    return f"{location.filename.data}:{location.line.data}:{location.column.data}"


# --------------------------------------------------------------------------
# MLIR-style expected diagnostics
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Expectation:
    """One ``// expected-error`` annotation."""

    span: Span[str]  # the annotation itself, to report it when unmatched
    line: int  # the line the error is expected on
    message: str  # a substring of the expected message


def _expectations(text: str, name: str, line_offset: int) -> list[_Expectation]:
    source = Input(text, name)
    found = []
    for match in _EXPECTED_ERROR.finditer(text):
        span = Span(match.start(), match.end(), source, line_offset)
        line = span.get_location().line + int(match.group(1) or 0)
        found.append(_Expectation(span, line, match.group(2)))
    return found


def _check_expectations(
    expectations: list[_Expectation], reports: list[Report]
) -> list[Report]:
    """The mismatches between expected and actual errors, as new reports."""
    pending = list(expectations)
    mismatches = []
    for report in reports:
        match = next(
            (
                e
                for e in pending
                if report.kind is not ErrorKind.INTERNAL
                and e.line == report.line
                and e.message in report.message
            ),
            None,
        )
        if match is None:
            mismatches.append(
                dataclasses.replace(
                    report, message=f"unexpected error: {report.message}"
                )
            )
        else:
            pending.remove(match)
    mismatches.extend(
        Report(f'expected error "{e.message}" was not produced', span=e.span)
        for e in pending
    )
    return mismatches


# --------------------------------------------------------------------------
# The pass pipeline
# --------------------------------------------------------------------------


def _pass_name_spans(pipeline: str) -> list[Span[str]]:
    """Where each pass name is in a pipeline that ``parse_pipeline`` accepts:
    an identifier at brace depth 0, first or after a comma."""
    lexer = PipelineLexer(pipeline)
    spans, depth, expect_name = [], 0, True
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is SpecTokenKind.L_BRACE:
            depth += 1
        elif token.kind is SpecTokenKind.R_BRACE:
            depth -= 1
        elif token.kind is SpecTokenKind.COMMA and depth == 0:
            expect_name = True
        elif token.kind is SpecTokenKind.IDENT and expect_name:
            spans.append(token.span)
            expect_name = False
    return spans


# --------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MLIRTarget(xdsl_mlir_target.MLIRTarget):
    """xDSL's ``mlir`` target printing through ``irc.ir.print_module``, so
    that ``Compiled.ir`` and irc-opt's output are the same text (ending in
    one newline, as mlir-opt's does)."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:  # for a terminal: xDSL's coloured printer
            super().emit(ctx, module, output)
            return
        output.write(
            print_module(
                module,
                locations=self.print_debuginfo,
                generic=self.print_generic_format,
                properties_as_attributes=self.print_properties_as_attributes,
            )
        )


class IrcOptMain(xDSLOptMain):
    """``xdsl-opt`` with irc's dialects and passes and located diagnostics."""

    version_format = "irc-opt, built on xDSL {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(
            description="irc's modular optimizer driver: parse IR, run passes, "
            "print IR (or a target's output). Errors are reported as "
            "file:line:col diagnostics with exit status 1. With "
            "--verify-diagnostics, an input holding '// expected-error "
            "{{message}}' annotations is checked against them instead (exit 1 "
            "on a mismatch). See docs/irc-opt.md.",
            args=args,
        )

    # Registration ----------------------------------------------------------

    def register_all_dialects(self) -> None:
        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_frontends(self) -> None:
        self.available_frontends["mlir"] = lambda: MLIRFrontend

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["mlir"] = lambda: MLIRTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass, each dump preceded "
            f"by a line '{IR_DUMP_HEADER.format('<pass>')}'",
        )
        arg_parser.add_argument(
            "--traceback",
            action="store_true",
            help="let internal errors (bugs in irc or in a pass) raise with "
            "their Python traceback instead of printing a diagnostic",
        )
        self._register_check_semantics_arguments(arg_parser)

    # The pipeline ----------------------------------------------------------

    def setup_pipeline(self) -> None:
        """Check the ``-p`` pipeline with located diagnostics first: xDSL
        raises bare ``ValueError``s (and a ``BaseException`` for a malformed
        spec) that say neither where nor what is available."""
        for spec, span in self._pipeline_specs():
            self._check_pass_spec(spec, span)
        super().setup_pipeline()

    def _pipeline_specs(self) -> list[tuple[ArgSpec, Span[str]]]:
        try:
            specs = list(parse_pipeline(self.args.passes))
        except ArgSpecParseError as error:
            raise _Failure(Report(str(error).rstrip("\n"))) from error
        return list(zip(specs, _pass_name_spans(self.args.passes), strict=True))

    def _check_pass_spec(self, spec: ArgSpec, span: Span[str]) -> None:
        if spec.name not in self.available_passes:
            known = ", ".join(sorted(self.available_passes))
            raise _Failure(
                Report(f"unknown pass '{spec.name}'; known passes: {known}", span=span)
            )
        try:
            self.available_passes[spec.name]().from_pass_spec(spec)
        except Exception as error:
            raise _Failure(
                Report(f"invalid options for pass '{spec.name}': {error}", span=span)
            ) from error

    def _run_pipeline(
        self, module: ModuleOp, spans: dict[Operation, Span[str]]
    ) -> None:
        """``PassPipeline.apply``, with each failure blamed on its pass."""
        passes = self.pipeline.passes
        self._between_passes(None, module, passes[0] if passes else None, spans)
        checker = self._semantics_checker(module)
        for index, current in enumerate(passes):
            self._apply(current, module)
            following = passes[index + 1] if index + 1 < len(passes) else None
            self._between_passes(current, module, following, spans)
            if checker is not None:
                self._check_semantics(checker, current, module)

    def _apply(self, current: ModulePass, module: ModuleOp) -> None:
        try:
            current.apply(self.ctx, module)
        except DiagnosticException as error:
            raise _Failure(
                Report(
                    f"pass '{current.name}' failed: {error}",
                    where=self.get_input_name(),
                    notes=_notes(error),
                )
            ) from error
        except ShrinkException:
            raise
        except Exception as error:
            if self.args.traceback:
                raise
            raise _Failure(
                _crash_report(error, f"pass '{current.name}'", self.get_input_name())
            ) from error

    def _between_passes(
        self,
        done: ModulePass | None,
        module: ModuleOp,
        following: ModulePass | None,
        spans: dict[Operation, Span[str]],
    ) -> None:
        """xDSL's callback (verification, ``--time-passes``,
        ``--print-between-passes``), then ``--print-ir-after-all``."""
        assert self.pipeline.callback is not None, "set by setup_pipeline"
        try:
            self.pipeline.callback(done, module, following)
        except DiagnosticException as error:
            raise _Failure(self._verify_report(error, module, spans, done)) from error
        except Exception as error:
            if self.args.traceback:
                raise
            raise _Failure(
                _crash_report(error, "the verifier", self.get_input_name())
            ) from error
        if done is not None and self.args.print_ir_after_all:
            print(IR_DUMP_HEADER.format(done.name), file=sys.stderr)
            self._print_ir(module, sys.stderr)

    def _verify_report(
        self,
        error: DiagnosticException,
        module: ModuleOp,
        spans: dict[Operation, Span[str]],
        done: ModulePass | None,
    ) -> Report:
        """Blame the failing op: at its place in the input if it came from
        there, else at its ``loc(...)``, else show the IR around it."""
        op = _failing_op(module)
        after = "" if done is None else f" (after pass '{done.name}')"
        if op is None:
            return Report(
                f"{error}{after}", where=self.get_input_name(), notes=_notes(error)
            )
        message = f"'{op.name}' op {error}{after}"
        if op in spans:
            return Report(message, span=spans[op])
        if (location := _location_text(op)) is not None:
            return Report(message, where=location)
        return Report(message, where=self.get_input_name(), notes=_notes(error))

    # --check-semantics -----------------------------------------------------

    @staticmethod
    def _register_check_semantics_arguments(
        arg_parser: argparse.ArgumentParser,
    ) -> None:
        arg_parser.add_argument(
            "--check-semantics",
            action="store_true",
            help="interpret the module before and after every pass on random "
            "inputs under random symbol bindings, and stop with a diagnostic "
            "naming the first pass that changes the results",
        )
        arg_parser.add_argument(
            "--check-semantics-runs",
            type=_positive_int,
            default=4,
            metavar="N",
            help="how many random bindings and inputs --check-semantics runs "
            "(default 4)",
        )
        arg_parser.add_argument(
            "--check-semantics-seed",
            type=int,
            default=0,
            metavar="SEED",
            help="the seed --check-semantics draws bindings and inputs from "
            "(default 0)",
        )

    def _semantics_checker(self, module: ModuleOp) -> SemanticsChecker | None:
        """With --check-semantics, the input's results on random bindings and
        inputs, to compare each pass's output with. Imported only then: the
        reference interpreters are not needed otherwise."""
        if not self.args.check_semantics:
            return None
        from irc.testing.semantics import SemanticsChecker

        try:
            return SemanticsChecker(
                module,
                runs=self.args.check_semantics_runs,
                seed=self.args.check_semantics_seed,
            )
        except IrcError as error:
            raise _Failure(
                Report(
                    f"--check-semantics cannot run the input: {error}",
                    where=self.get_input_name(),
                )
            ) from error
        except Exception as error:
            if self.args.traceback:
                raise
            raise _Failure(
                _crash_report(error, "the reference interpreter", self.get_input_name())
            ) from error

    def _check_semantics(
        self, checker: SemanticsChecker, done: ModulePass, module: ModuleOp
    ) -> None:
        """Blame ``done`` if it changed the results (a miscompile is a bug in
        the pass, never a tolerated diagnostic)."""
        from irc.testing.semantics import PassCheckError

        try:
            checker.check(str(done.spec()), module)
        except PassCheckError as error:
            raise _Failure(
                Report(
                    f"{error.headline} (--check-semantics)",
                    ErrorKind.INTERNAL,
                    where=self.get_input_name(),
                    notes=_semantics_notes(error),
                )
            ) from error

    # Input and output ------------------------------------------------------

    def _read_chunks(self) -> list[tuple[str, int]]:
        """The input's text, split at ``// -----`` with --split-input-file,
        each chunk with the number of lines before it."""
        try:
            chunks, _ = self.prepare_input()
        except OSError as error:
            raise _Failure(
                Report(
                    f"cannot open input file: {error.strerror}",
                    where=self.get_input_name(),
                )
            ) from error
        except ValueError as error:  # an unknown file extension
            raise _Failure(Report(str(error), where=self.get_input_name())) from error
        texts = []
        for chunk, line_offset in chunks:
            with chunk:
                data = chunk.read()
            try:
                texts.append((data.decode(), line_offset))
            except UnicodeDecodeError as error:
                raise _Failure(
                    Report(
                        f"input is not UTF-8 text ({error.reason} at byte "
                        f"{error.start})",
                        ErrorKind.PARSE,
                        where=self.get_input_name(),
                    )
                ) from error
        return texts

    def _open_output(self) -> IO[str]:
        try:
            return self.prepare_output()
        except OSError as error:
            raise _Failure(
                Report(
                    f"cannot open output file: {error.strerror}",
                    where=self.args.output_file,
                )
            ) from error

    def _parse(
        self, text: str, line_offset: int
    ) -> tuple[ModuleOp, dict[Operation, Span[str]]]:
        parser = _LocatingParser(self.ctx, text, self.get_input_name(), line_offset)
        try:
            module = parser.parse_module(not self.args.no_implicit_module)
        except ParseError as error:
            raise _Failure(self._parse_report(error, line_offset)) from error
        except Exception as error:
            if self.args.traceback:
                raise
            span = parser.crash_span or parser.line_span(parser.pos)
            report = _crash_report(error, "the parser", self.get_input_name())
            raise _Failure(dataclasses.replace(report, span=span)) from error
        return module, parser.op_spans

    @staticmethod
    def _parse_report(error: ParseError, line_offset: int) -> Report:
        notes = ""
        if isinstance(error, MultipleSpansParseError):
            notes = (error.ref_text or "") + "".join(
                span.print_with_context(message) for span, message in error.refs
            )
        span = dataclasses.replace(error.span, line_offset=line_offset)
        return Report(error.msg, ErrorKind.PARSE, span=span, notes=notes)

    def _print_ir(self, module: ModuleOp, stream: IO[str]) -> None:
        """Print IR as ``Compiled.ir`` does (one printer for both, so captured
        IR and irc-opt's output compare equal), honouring the print flags."""
        stream.write(
            print_module(
                module,
                locations=self.args.print_debuginfo,
                generic=self.args.print_op_generic,
                properties_as_attributes=self.args.print_no_properties,
            )
        )

    # Running ---------------------------------------------------------------

    def run(self) -> int:
        """Process every chunk of the input; the exit status.

        With --verify-diagnostics, an input that holds ``expected-error``
        annotations is checked against them (MLIR's behaviour); otherwise
        errors are printed to stdout and tolerated (xdsl-opt's).
        """
        chunks = self._read_chunks()
        check_expected = self.args.verify_diagnostics and any(
            _EXPECTED_ERROR.search(text) for text, _ in chunks
        )
        output = self._open_output()
        succeeded = True
        try:
            for index, (text, line_offset) in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                errors = self._process(text, line_offset, output)
                if check_expected:
                    succeeded &= self._check_expected(text, line_offset, errors)
                else:
                    for error in errors:
                        succeeded &= self._show(error)
        except ShrinkException:
            print("Success, can shrink")
            return 0
        finally:
            if output is not sys.stdout:
                output.close()
        if self.args.shrink:
            print("Failure, can't shrink")
            return 1
        return 0 if succeeded else 1

    def _process(self, text: str, line_offset: int, output: IO[str]) -> list[Report]:
        """Parse, transform and print one chunk; the errors on the way."""
        try:
            module, spans = self._parse(text, line_offset)
            self._run_pipeline(module, spans)
            output.write(self._emit(module))
            output.flush()
        except _Failure as failure:
            return [failure.report]
        return []

    def _check_expected(
        self, text: str, line_offset: int, errors: list[Report]
    ) -> bool:
        """Print the mismatches between a chunk's errors and its
        ``expected-error`` annotations; whether there were none."""
        expectations = _expectations(text, self.get_input_name(), line_offset)
        mismatches = _check_expectations(expectations, errors)
        for report in mismatches:
            print(report.render(), file=sys.stderr, end="")
        return not mismatches

    def _emit(self, module: ModuleOp) -> str:
        try:
            return self.output_resulting_program(module)
        except Exception as error:
            if self.args.traceback:
                raise
            raise _Failure(
                _crash_report(
                    error, f"target '{self.args.target}'", self.get_input_name()
                )
            ) from error

    def _show(self, report: Report) -> bool:
        """Print a report: to stdout when a --*-diagnostics flag asks for
        that kind of error (as xdsl-opt does, for FileCheck), else to stderr.
        Whether the error is thereby tolerated."""
        tolerated = (
            report.kind is ErrorKind.PARSE and self.args.parsing_diagnostics
        ) or (report.kind is ErrorKind.DIAGNOSTIC and self.args.verify_diagnostics)
        print(report.render(), file=sys.stdout if tolerated else sys.stderr, end="")
        return tolerated


def _positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _semantics_notes(error: PassCheckError) -> str:
    """The mismatch, the binding and the seed, then the IR before and after
    the pass, as diagnostic notes."""
    notes = "".join(f"note: {line}\n" for line in error.context_lines())
    notes += f"note: the IR before the pass:\n{error.program}"
    return notes + f"note: the IR after the pass:\n{error.after}"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``irc-opt`` console script; returns the exit status."""
    try:
        return IrcOptMain(args=argv).run()
    except _Failure as failure:
        print(failure.report.render(), file=sys.stderr, end="")
        return 1


if __name__ == "__main__":
    sys.exit(main())
