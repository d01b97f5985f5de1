"""``irc-opt --check-bounds``: stop at the first load or store that may
run out of its buffer.

The bounds checker (``irc.analysis.bounds``) runs on the input and after
every pass, on the loop, memory and triton kernels of the module. An access
it cannot prove in bounds, or a grid beyond CUDA's limits, stops irc-opt
with a diagnostic at the op: in the input it is the input's error (which
``--verify-diagnostics`` annotations may expect); after a pass that
received a module in bounds, the pass's (see ``docs/irc-opt.md``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.lexer import Span

from irc.cli.diagnostics import CrashReporting, ErrorKind, Failure, Report, input_op

if TYPE_CHECKING:
    from irc.analysis.bounds import BoundsViolation


def add_arguments(arg_parser: argparse.ArgumentParser) -> None:
    arg_parser.add_argument(
        "--check-bounds",
        action="store_true",
        help="prove that every load and store of loop, memory and triton "
        "kernels stays inside its buffer (and every grid within CUDA's limits), "
        "on the input and after every pass; stop with a diagnostic at the "
        "first access that may not",
    )


def check(
    module: ModuleOp,
    done: ModulePass | None,
    args: argparse.Namespace,
    where: str,
    op_spans: dict[Operation, Span[str]],
) -> None:
    """With --check-bounds, raise ``Failure`` at the first violation of
    ``module`` (the input when ``done`` is None, else the output of
    ``done``)."""
    if not args.check_bounds:
        return
    from irc.analysis.bounds import check_bounds

    with CrashReporting("the bounds checker", where, let_raise=args.traceback):
        violations = check_bounds(module)
    if violations:
        raise Failure(_report(violations, done, where, op_spans))


def _report(
    violations: list[BoundsViolation],
    done: ModulePass | None,
    where: str,
    op_spans: dict[Operation, Span[str]],
) -> Report:
    first, *rest = violations
    kind = ErrorKind.DIAGNOSTIC
    message = f"{first.message} (--check-bounds)"
    if done is not None:
        kind = ErrorKind.INTERNAL
        message = f"after pass '{done.name}': {message}"
    notes = "".join(f"note: also {violation}\n" for violation in rest)
    located = input_op(first.op, op_spans)
    if located is None:
        return Report(message, kind, where=where, notes=notes)
    return Report(message, kind, span=op_spans[located], notes=notes)
