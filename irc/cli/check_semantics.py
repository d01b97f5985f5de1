"""``irc-opt --check-semantics``: find the pass that miscompiles an input.

The input is interpreted on random inputs under random symbol bindings
before the pipeline and after every pass (``irc.testing.semantics``); the
first pass that changes the results stops irc-opt with a diagnostic naming
it, the binding, the inputs' seed and the IR before and after the pass
(see ``docs/testing.md``). ``irc.testing`` is imported only under the flag:
its reference interpreters would slow every other run's start-up.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntAttr, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.utils.lexer import Span

from irc.cli.diagnostics import (
    CrashReporting,
    ErrorKind,
    Failure,
    Report,
    input_op,
    op_in_traceback,
    op_report,
)
from irc.dialects.sym import GuardOp, SymExprAttr
from irc.errors import IrcError

if TYPE_CHECKING:
    from irc.testing.semantics import PassCheckError, SemanticsChecker


def add_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """``--check-semantics`` and the flags that tune it."""
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
        help="how many random bindings and inputs --check-semantics runs (default 4)",
    )
    arg_parser.add_argument(
        "--rtol",
        type=_non_negative_float,
        default=None,
        metavar="R",
        help="--check-semantics: the relative tolerance of float results "
        "(default: per dtype, plus a few times the program's own rounding error, "
        "measured against the program computed in float64)",
    )
    arg_parser.add_argument(
        "--atol",
        type=_non_negative_float,
        default=None,
        metavar="A",
        help="--check-semantics: the absolute tolerance of float results "
        "(default: as for --rtol); either flag makes the tolerance exactly the "
        "one given",
    )
    arg_parser.add_argument(
        "--check-semantics-seed",
        type=int,
        default=0,
        metavar="SEED",
        help="the seed --check-semantics draws bindings and inputs from (default 0)",
    )


MAX_ELEMENTS = 1 << 22
"""The most elements a value may have for --check-semantics to interpret
the module (with every symbol at its largest sampled value): it runs on
small inputs, and a huge static shape would exhaust memory."""


def start_checker(
    module: ModuleOp,
    args: argparse.Namespace,
    where: str,
    op_spans: dict[Operation, Span[str]],
) -> SemanticsChecker | None:
    """With --check-semantics, the input's results on random bindings and
    inputs, to compare each pass's output with; None without the flag."""
    if not args.check_semantics:
        return None
    from irc.testing.sampling import MAX_SYMBOL_VALUE
    from irc.testing.semantics import SemanticsChecker

    _check_sizes(module, MAX_SYMBOL_VALUE, where, op_spans)
    with CrashReporting("the reference interpreter", where, let_raise=args.traceback):
        try:
            return SemanticsChecker(
                module,
                runs=args.check_semantics_runs,
                seed=args.check_semantics_seed,
                rtol=args.rtol,
                atol=args.atol,
            )
        except (IrcError, MemoryError) as error:
            message = f"--check-semantics cannot run the input: {error}"
            if isinstance(error, MemoryError):
                message = "--check-semantics cannot run the input: out of memory"
            raise Failure(_located(message, error, where, op_spans)) from error


def _located(
    message: str, error: BaseException, where: str, op_spans: dict[Operation, Span[str]]
) -> Report:
    """A report at the input op the interpreter was running, if known: the
    innermost one in the tracebacks of ``error`` and of the errors it was
    raised from (irc's interpreters re-raise their errors without xDSL's
    frames, whose locals hold the op)."""
    chain: list[BaseException] = []
    cause: BaseException | None = error
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    running = None
    for each in reversed(chain):
        running = op_in_traceback(each, lambda op: input_op(op, op_spans) is not None)
        if running is not None:
            break
    op = None if running is None else input_op(running, op_spans)
    if op is None:
        op = _binding_site(op_spans)
    if op is None:
        return Report(message, where=where)
    return op_report(f"'{op.name}' op: {message}", op, op_spans, where)


def _binding_site(op_spans: dict[Operation, Span[str]]) -> Operation | None:
    """Where a failure no op raised is placed: the input's first guard (its
    facts choose the bindings the checker draws), else its first function."""
    guards = [op for op in op_spans if isinstance(op, GuardOp)]
    functions = [op for op in op_spans if isinstance(op, func.FuncOp)]
    return next(iter(guards or functions), None)


def _check_sizes(
    module: ModuleOp,
    symbol_value: int,
    where: str,
    op_spans: dict[Operation, Span[str]],
) -> None:
    """Refuse a module with a value of more than :data:`MAX_ELEMENTS`
    elements when every symbol is ``symbol_value``, at the op defining it."""
    for op in module.walk():
        values = [
            *op.results,
            *(a for r in op.regions for b in r.blocks for a in b.args),
        ]
        for value in values:
            count = _elements(value.type, symbol_value)
            if count is not None and count > MAX_ELEMENTS:
                message = (
                    f"--check-semantics cannot run the input: '{op.name}' makes a "
                    f"value of {count} elements, more than the {MAX_ELEMENTS} it "
                    "interprets (on small inputs); check a smaller shape"
                )
                located = input_op(op, op_spans)
                if located is None:
                    raise Failure(Report(message, where=where))
                raise Failure(op_report(message, located, op_spans, where))


def _elements(type: Attribute, symbol_value: int) -> int | None:
    """How many elements a value of ``type`` has with every symbol at
    ``symbol_value``, for types with a shape; None for others."""
    shape = getattr(type, "shape", None)
    if not isinstance(shape, ArrayAttr):
        return None
    count = 1
    for dim in shape.data:
        if isinstance(dim, IntAttr):
            count *= dim.data
        elif isinstance(dim, SymExprAttr):
            binding = dict.fromkeys(dim.data.symbols, symbol_value)
            try:
                count *= dim.data.evaluate(binding)
            except Exception:  # a size that does not evaluate: not ours to judge
                return None
    return count


def check_pass(
    checker: SemanticsChecker, done: ModulePass, module: ModuleOp, where: str
) -> None:
    """Blame ``done`` if it changed the results (a miscompile is a bug in
    the pass, never a tolerated diagnostic)."""
    from irc.testing.semantics import PassCheckError

    try:
        checker.check(
            str(done.spec()),
            module,
            appends_to_signature=getattr(done, "appends_to_signature", False),
            changes_precision=getattr(done, "changes_precision", False),
        )
    except PassCheckError as error:
        raise Failure(
            Report(
                f"{error.headline} (--check-semantics)",
                ErrorKind.INTERNAL,
                where=where,
                notes=_notes(error),
            )
        ) from error


def _notes(error: PassCheckError) -> str:
    """The mismatch, the binding and the seed, then the IR before and after
    the pass, as diagnostic notes."""
    notes = "".join(f"note: {line}\n" for line in error.context_lines())
    notes += f"note: the IR before the pass:\n{error.program}"
    return notes + f"note: the IR after the pass:\n{error.after}"


def _positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative_float(text: str) -> float:
    """An argparse type: a finite float of at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a non-negative number, got {text!r}"
        )
    return value
