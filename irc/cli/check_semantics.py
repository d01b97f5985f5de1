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

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.cli.diagnostics import CrashReporting, ErrorKind, Failure, Report
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
        "--check-semantics-seed",
        type=int,
        default=0,
        metavar="SEED",
        help="the seed --check-semantics draws bindings and inputs from (default 0)",
    )


def start_checker(
    module: ModuleOp, args: argparse.Namespace, where: str
) -> SemanticsChecker | None:
    """With --check-semantics, the input's results on random bindings and
    inputs, to compare each pass's output with; None without the flag."""
    if not args.check_semantics:
        return None
    from irc.testing.semantics import SemanticsChecker

    with CrashReporting("the reference interpreter", where, let_raise=args.traceback):
        try:
            return SemanticsChecker(
                module,
                runs=args.check_semantics_runs,
                seed=args.check_semantics_seed,
            )
        except IrcError as error:
            raise Failure(
                Report(f"--check-semantics cannot run the input: {error}", where=where)
            ) from error


def check_pass(
    checker: SemanticsChecker, done: ModulePass, module: ModuleOp, where: str
) -> None:
    """Blame ``done`` if it changed the results (a miscompile is a bug in
    the pass, never a tolerated diagnostic)."""
    from irc.testing.semantics import PassCheckError

    try:
        checker.check(str(done.spec()), module)
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
