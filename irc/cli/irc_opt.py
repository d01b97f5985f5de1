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
- ``--check-bounds`` proves, on the input and after every pass, that every
  load and store of loop, memory and triton kernels stays inside its buffer
  (``irc.analysis.bounds``), and stops at the first that may not.

This module is the driver. How errors become diagnostics is in
``irc.cli.diagnostics``, where they point with ``irc.cli.locations``, how
``--verify-diagnostics`` matches annotations in ``irc.cli.expectations``,
``--check-semantics`` in ``irc.cli.check_semantics`` and ``--check-bounds``
in ``irc.cli.check_bounds``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.targets import mlir as xdsl_mlir_target
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    ShrinkException,
)
from xdsl.utils.frontend import Frontend
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from irc.cli import check_bounds, check_semantics, expectations
from irc.cli.diagnostics import (
    CrashReporting,
    ErrorKind,
    Failure,
    OpError,
    Report,
    failed_check,
    input_op,
    op_report,
    parse_report,
    pass_failure_report,
    undecodable_report,
    verify_report,
)
from irc.cli.dot_target import DotTarget
from irc.cli.locations import LocatingParser, pass_name_spans
from irc.cli.triton_target import TritonTarget
from irc.dominance import verify_dominance
from irc.errors import IrcError
from irc.ir import print_module
from irc.lowering.pipeline import (
    LEVEL_AFTER,
    LEVEL_NAMES,
    LOWERING,
    LowerToTritonPass,
    lowest_level,
    module_level,
    passes_after,
)
from irc.passes.plugins import PluginError, load_plugin
from irc.passes.registry import get_all_dialects, get_all_passes

#: The level each lowering pass takes its input at.
LOWERS_FROM: dict[str, str] = {
    names[0]: LEVEL_NAMES[index] for index, names in enumerate(LOWERING)
}

IR_DUMP_HEADER = "// -----// IR Dump After {} //----- //"
"""The line before each ``--print-ir-after-all`` dump (MLIR's spelling)."""


def _irc_version() -> str:
    """irc's version (``pyproject.toml``'s), as installed: a checkout run
    without being installed (``python -m irc.cli.irc_opt``) has none."""
    try:
        return importlib.metadata.version("irc")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


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


@dataclass(frozen=True)
class Chunk:
    """One input chunk (all the input without --split-input-file): its text,
    the number of lines before it, and, when its bytes are not UTF-8, the
    report saying where (the text then has U+FFFD in their place)."""

    text: str
    line_offset: int
    undecodable: Report | None = None


class IrcOptMain(xDSLOptMain):
    """``xdsl-opt`` with irc's dialects and passes and located diagnostics."""

    version_format = f"irc-opt {_irc_version()}, built on xDSL {{xdsl_version}}"

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
        self.available_frontends["onnx"] = _onnx_frontend

    def register_all_targets(self) -> None:
        """The targets that mean something for irc's IR: xDSL's others
        (assembly, LLVM, WGSL) expect dialects irc never produces."""
        self.available_targets["mlir"] = lambda: MLIRTarget
        self.available_targets["triton"] = lambda: TritonTarget
        self.available_targets["dot"] = lambda: DotTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR to stderr after every pass, each dump preceded "
            f"by a line '{IR_DUMP_HEADER.format('<pass>')}'",
        )
        arg_parser.add_argument(
            "--load-pass-plugin",
            action="append",
            default=[],
            metavar="PLUGIN",
            help="load passes from a Python file or module (every ModulePass "
            "subclass it defines with a name); may be repeated. Installed packages "
            "declare passes in the 'irc.passes' entry-point group instead",
        )
        arg_parser.add_argument(
            "--traceback",
            action="store_true",
            help="let internal errors (bugs in irc or in a pass) raise with "
            "their Python traceback instead of printing a diagnostic",
        )
        check_semantics.add_arguments(arg_parser)
        check_bounds.add_arguments(arg_parser)

    # The pipeline ----------------------------------------------------------

    def setup_pipeline(self) -> None:
        """Check the ``-p`` pipeline with located diagnostics first: xDSL
        raises bare ``ValueError``s (and a ``BaseException`` for a malformed
        spec) that say neither where nor what is available. Plugins load
        first, so that their passes can be named."""
        for plugin in self.args.load_pass_plugin:
            self._load_plugin(plugin)
        specs = self._pipeline_specs()
        for spec, span in specs:
            self._check_pass_spec(spec, span)
        # Where each pass of the pipeline is named in -p, for diagnostics
        # that blame the pass rather than the input.
        self.pass_spans = [span for _, span in specs]
        super().setup_pipeline()

    def _load_plugin(self, plugin: str) -> None:
        try:
            passes = load_plugin(plugin)
        except PluginError as error:
            raise Failure(Report(str(error), where=plugin)) from error
        for name, pass_class in passes.items():
            if name in self.available_passes:
                raise Failure(
                    Report(
                        f"pass plugin {plugin!r} defines pass '{name}', which is "
                        "already registered; rename the plugin's pass",
                        where=plugin,
                    )
                )
            self.register_pass(name, lambda cls=pass_class: cls)

    def _pipeline_specs(self) -> list[tuple[ArgSpec, Span[str]]]:
        """Each pass of ``-p`` with where its name is, to point at."""
        try:
            specs = list(parse_pipeline(self.args.passes))
        except ArgSpecParseError as error:
            raise Failure(Report(str(error).rstrip("\n"))) from error
        return list(zip(specs, pass_name_spans(self.args.passes), strict=True))

    def _check_pass_spec(self, spec: ArgSpec, span: Span[str]) -> None:
        """Build the pass from its options as xDSL will, so that an unknown
        name or a bad option is reported at the pass in ``-p``."""
        if spec.name not in self.available_passes:
            known = ", ".join(sorted(self.available_passes))
            raise Failure(
                Report(f"unknown pass '{spec.name}'; known passes: {known}", span=span)
            )
        try:
            self.available_passes[spec.name]().from_pass_spec(spec)
        except Exception as error:
            raise Failure(
                Report(f"invalid options for pass '{spec.name}': {error}", span=span)
            ) from error

    def _run_pipeline(
        self, module: ModuleOp, op_spans: dict[Operation, Span[str]]
    ) -> None:
        """``PassPipeline.apply``, with each failure blamed on its pass.
        ``lower-to-triton`` runs as the passes it stands for, each verified,
        printed and checked on its own."""
        queue = list(self.pipeline.passes)
        named_at = dict(zip(map(id, queue), self.pass_spans, strict=True))
        self._between_passes(None, module, queue[0] if queue else None, op_spans)
        where = self.get_input_name()
        check_bounds.check(module, None, self.args, where, op_spans)
        checker = check_semantics.start_checker(
            module, self.args, self.get_input_name(), op_spans
        )
        level = module_level(module)
        while queue:
            current = queue.pop(0)
            if isinstance(current, LowerToTritonPass):
                expanded = passes_after(level)
                for lowering in expanded:
                    named_at[id(lowering)] = named_at[id(current)]
                queue[:0] = expanded
                continue
            self._check_level(current, level, named_at[id(current)])
            self._apply(current, module, op_spans)
            # What the module shows, or what the pass lowered it to (a
            # function returning its argument shows nothing).
            level = lowest_level(
                level, module_level(module), LEVEL_AFTER.get(current.name, "graph")
            )
            self._between_passes(current, module, queue[0] if queue else None, op_spans)
            check_bounds.check(module, current, self.args, where, op_spans)
            if checker is not None:
                check_semantics.check_pass(
                    checker, current, module, self.get_input_name()
                )

    def _check_level(self, current: ModulePass, actual: str, span: Span[str]) -> None:
        """A lowering pass given a module of a level above the one it lowers
        is the input's fault (it would leave the module as it is): say, at
        the pass in ``-p``, which passes to run first. Below its level a
        lowering has nothing left to do and is a no-op, as any pass is on IR
        it does not match."""
        expected = LOWERS_FROM.get(current.name)
        if expected is None:
            return
        first, wanted = LEVEL_NAMES.index(actual), LEVEL_NAMES.index(expected)
        if first >= wanted:
            return
        missing = ",".join(names[0] for names in LOWERING[first:wanted])
        raise Failure(
            Report(
                f"pass '{current.name}' lowers {expected}-level IR, but the module is "
                f"at the {actual} level: run '{missing}' before it (or "
                "'lower-to-triton' for all of it)",
                span=span,
            )
        )

    def _apply(
        self,
        current: ModulePass,
        module: ModuleOp,
        op_spans: dict[Operation, Span[str]],
    ) -> None:
        """Run one pass: a diagnostic it raises is the input's fault, any
        other exception a bug in the pass."""
        with self._crash_reporting(f"pass '{current.name}'"):
            try:
                current.apply(self.ctx, module)
            except DiagnosticException as error:
                raise Failure(
                    pass_failure_report(
                        error, current.name, self.get_input_name(), op_spans
                    )
                ) from error

    def _between_passes(
        self,
        done: ModulePass | None,
        module: ModuleOp,
        following: ModulePass | None,
        op_spans: dict[Operation, Span[str]],
    ) -> None:
        """xDSL's callback (verification, ``--time-passes``,
        ``--print-between-passes``) and the dominance check xDSL lacks,
        then ``--print-ir-after-all``."""
        assert self.pipeline.callback is not None, "set by setup_pipeline"
        with self._crash_reporting("the verifier"):
            try:
                self.pipeline.callback(done, module, following)
                if not self.args.disable_verify:
                    verify_dominance(module)
            except DiagnosticException as error:
                raise Failure(
                    self._verify_report(error, module, done, op_spans)
                ) from error
            except Exception as crash:  # invalid IR, or a bug in a verifier
                if (error := failed_check(module)) is None:
                    raise
                raise Failure(
                    self._verify_report(error, module, done, op_spans)
                ) from crash
        if done is not None and self.args.print_ir_after_all:
            print(IR_DUMP_HEADER.format(done.name), file=sys.stderr)
            self._print_ir(module, sys.stderr)

    def _verify_report(
        self,
        error: DiagnosticException,
        module: ModuleOp,
        done: ModulePass | None,
        op_spans: dict[Operation, Span[str]],
    ) -> Report:
        after_pass = None if done is None else done.name
        return verify_report(
            error, module, op_spans, self.get_input_name(), after_pass=after_pass
        )

    # Input and output ------------------------------------------------------

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input and its format: ``-f``'s when given, whatever the file's
        extension (xDSL still goes by the extension, and refuses a file whose
        extension no frontend has)."""
        stream, extension = super().get_input_stream()
        return stream, self.args.frontend or extension

    def _read_chunks(self) -> list[Chunk]:
        """The input's text, split at ``// -----`` with --split-input-file,
        each chunk with the number of lines before it."""
        try:
            chunks, extension = self.prepare_input()
        except OSError as error:
            raise Failure(
                Report(
                    f"cannot open input file: {error.strerror}",
                    where=self.get_input_name(),
                )
            ) from error
        except ValueError as error:  # an unknown file extension
            formats = " or ".join(f"-f {name}" for name in self.available_frontends)
            raise Failure(
                Report(
                    f"{error}: name the input's format with {formats}",
                    where=self.get_input_name(),
                )
            ) from error
        texts = []
        for stream, line_offset in chunks:
            with stream:
                data = stream.read()
            if extension == "onnx":
                texts.append(Chunk(self._onnx_text(data), line_offset))
                continue
            try:
                texts.append(Chunk(data.decode(), line_offset))
            except UnicodeDecodeError as error:
                report = undecodable_report(
                    error, data, self.get_input_name(), line_offset
                )
                text = data.decode(errors="replace")
                texts.append(Chunk(text, line_offset, report))
        return texts

    def _onnx_text(self, data: bytes) -> str:
        """An ONNX model's graph IR (``irc.onnx``), or a diagnostic."""
        from irc.onnx.frontend import onnx_ir_text

        try:
            return onnx_ir_text(data)
        except IrcError as error:
            raise Failure(Report(str(error), where=self.get_input_name())) from error

    def _open_output(self) -> IO[str]:
        """The output stream (``-o``, else stdout)."""
        try:
            return self.prepare_output()
        except OSError as error:
            raise Failure(
                Report(
                    f"cannot open output file: {error.strerror}",
                    where=self.args.output_file,
                )
            ) from error

    def _parse(
        self, text: str, line_offset: int
    ) -> tuple[ModuleOp, dict[Operation, Span[str]]]:
        """A chunk's module, and where each of its ops is in the input."""
        try:  # the parser reads the first token when it is made
            parser = LocatingParser(self.ctx, text, self.get_input_name(), line_offset)
        except ParseError as error:
            raise Failure(parse_report(error, line_offset)) from error
        with self._crash_reporting("the parser", locate=parser.crash_span):
            try:
                module = parser.parse_module(not self.args.no_implicit_module)
            except ParseError as error:
                raise Failure(parse_report(error, line_offset)) from error
        return module, parser.op_spans

    def _print_ir(self, module: ModuleOp, stream: IO[str]) -> None:
        """Print IR as the ``mlir`` target prints the output (so that a
        dump and the output compare equal), honouring the print flags."""
        target = MLIRTarget(
            print_generic_format=self.args.print_op_generic,
            print_properties_as_attributes=self.args.print_no_properties,
            print_debuginfo=self.args.print_debuginfo,
        )
        target.emit(self.ctx, module, stream)

    # Running ---------------------------------------------------------------

    def run(self) -> int:
        """Process every chunk of the input; the exit status.

        With --verify-diagnostics, an input that holds ``expected-error``
        annotations is checked against them (MLIR's behaviour); otherwise
        errors are printed to stdout and tolerated (xdsl-opt's).
        """
        chunks = self._read_chunks()
        check_expected = self.args.verify_diagnostics and any(
            expectations.has_expectations(chunk.text) for chunk in chunks
        )
        output = self._open_output()
        succeeded = True
        try:
            for index, chunk in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                errors = (
                    [chunk.undecodable]
                    if chunk.undecodable is not None
                    else self._process(chunk.text, chunk.line_offset, output)
                )
                if check_expected:
                    succeeded &= self._check_expected(
                        chunk.text, chunk.line_offset, errors
                    )
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
            module, op_spans = self._parse(text, line_offset)
            self._run_pipeline(module, op_spans)
            output.write(self._emit(module, op_spans))
            output.flush()
        except Failure as failure:
            return [failure.report]
        return []

    def _check_expected(
        self, text: str, line_offset: int, errors: list[Report]
    ) -> bool:
        """Print the mismatches between a chunk's errors and its
        ``expected-error`` annotations; whether there were none."""
        expected = expectations.find_expectations(
            text, self.get_input_name(), line_offset
        )
        mismatches = expectations.mismatches(expected, errors)
        for report in mismatches:
            print(report.render(), file=sys.stderr, end="")
        return not mismatches

    def _emit(self, module: ModuleOp, op_spans: dict[Operation, Span[str]]) -> str:
        """The ``-t`` target's output for the module."""
        with self._crash_reporting(f"target '{self.args.target}'"):
            try:
                return self.output_resulting_program(module)
            except OpError as error:
                where = self.get_input_name()
                op = None if error.op is None else input_op(error.op, op_spans)
                if op is None:
                    raise Failure(Report(error.message, where=where)) from error
                raise Failure(op_report(error.message, op, op_spans, where)) from error

    def _show(self, report: Report) -> bool:
        """Print a report: to stdout when a --*-diagnostics flag asks for
        that kind of error (as xdsl-opt does, for FileCheck), else to stderr.
        Whether the error is thereby tolerated."""
        tolerated = (
            report.kind is ErrorKind.PARSE and self.args.parsing_diagnostics
        ) or (report.kind is ErrorKind.DIAGNOSTIC and self.args.verify_diagnostics)
        print(report.render(), file=sys.stdout if tolerated else sys.stderr, end="")
        return tolerated

    def _crash_reporting(
        self, during: str, locate: Callable[[], Span[str]] | None = None
    ) -> CrashReporting:
        """Report a bug raised in the block as an internal error in
        ``during``, unless --traceback asks for the traceback."""
        return CrashReporting(
            during, self.get_input_name(), let_raise=self.args.traceback, locate=locate
        )


def _onnx_frontend() -> type[Frontend]:
    """``irc.onnx``'s frontend, imported when an ``.onnx`` input needs it."""
    from irc.onnx.frontend import OnnxFrontend

    return OnnxFrontend


def main(argv: Sequence[str] | None = None) -> int:
    """The ``irc-opt`` console script; returns the exit status."""
    try:
        return IrcOptMain(args=argv).run()
    except Failure as failure:
        print(failure.report.render(), file=sys.stderr, end="")
        return 1
    except BrokenPipeError:
        # The reader went away (`irc-opt ... | head`): stop quietly, as Unix
        # tools do, and keep Python from failing again on flushing stdout.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
