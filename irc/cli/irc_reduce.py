"""``irc-reduce``: shrink an IR file to a small one that still fails.

irc's peer of ``mlir-reduce``/``llvm-reduce``/``creduce``, the command line
of ``irc.testing.reduce``. One of four tests says what "still fails" means:

- ``--crash``: ``irc-opt FILE -p PASSES`` crashes (an internal error, not a
  diagnostic about the input, or the process dies of a signal);
- ``--error REGEX``: irc-opt's error output matches ``REGEX``;
- ``--miscompile``: ``irc-opt FILE -p PASSES --check-semantics`` finds a
  pass that changes the results;
- ``--test SCRIPT``: ``SCRIPT FILE`` exits with status 0.

Arguments after ``--`` go to every irc-opt run. The reduced IR goes to
``-o`` (``INPUT.reduced.mlir`` by default), the command that shows the
failure on it to stdout, a summary to stderr. Errors a user can cause (a
missing or unparsable input, a test that does not hold on the input) are
one diagnostic and exit status 1. See docs/testing.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from irc.testing.reduce import (
    Crash,
    ErrorMatches,
    InterestingnessTest,
    Miscompile,
    ReduceError,
    Script,
    reduce,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="irc-reduce",
        description="Reduce an IR file to a small module on which a test still "
        "holds, and print the command that shows the failure on it. Arguments "
        "after '--' are passed to every irc-opt run.",
    )
    parser.add_argument("input", help="the IR file to reduce")
    tests = parser.add_mutually_exclusive_group(required=True)
    tests.add_argument(
        "--crash",
        action="store_true",
        help="interesting: irc-opt crashes (an internal error or a signal)",
    )
    tests.add_argument(
        "--error",
        metavar="REGEX",
        help="interesting: irc-opt's error output matches REGEX (re.search)",
    )
    tests.add_argument(
        "--miscompile",
        action="store_true",
        help="interesting: irc-opt --check-semantics finds a pass that "
        "changes the results",
    )
    tests.add_argument(
        "--test",
        metavar="SCRIPT",
        help="interesting: the command SCRIPT (split as a shell would), given "
        "the candidate file's path, exits with status 0",
    )
    parser.add_argument("-p", "--passes", default="", help="irc-opt's pipeline")
    parser.add_argument(
        "--load-pass-plugin",
        action="append",
        default=[],
        metavar="PLUGIN",
        help="a pass plugin for irc-opt (repeatable)",
    )
    parser.add_argument(
        "-o", "--output", help="where to write the reduced IR (INPUT.reduced.mlir)"
    )
    parser.add_argument(
        "--max-tests",
        type=_positive_int,
        default=2000,
        help="stop after this many test runs, with the smallest module found",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds one test run may take; a run past it is not interesting",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log every accepted step"
    )
    return parser


def _positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _test(args: argparse.Namespace, extra: Sequence[str]) -> InterestingnessTest:
    """The interestingness test the flags ask for."""
    if args.test is not None:
        return Script(tuple(shlex.split(args.test)))
    common = {
        "passes": args.passes,
        "plugins": tuple(args.load_pass_plugin),
        "extra": tuple(extra),
    }
    if args.error is not None:
        return ErrorMatches(pattern=args.error, **common)
    if args.miscompile:
        return Miscompile(**common)
    return Crash(**common)


def _error(where: str, message: str) -> int:
    print(f"{where}: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """The ``irc-reduce`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    args = _parser().parse_args(argv)
    path = Path(args.input)
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return _error(args.input, f"cannot read input file: {reason}")
    if args.test is not None and not shlex.split(args.test):
        return _error("--test", "the test command is empty")
    output = Path(args.output or path.with_suffix(".reduced.mlir"))

    def log(line: str) -> None:
        print(line, file=sys.stderr)

    try:
        result = reduce(
            source,
            _test(args, extra),
            output=output,
            name=args.input,
            max_tests=args.max_tests,
            timeout=args.timeout,
            log=log if args.verbose else None,
        )
    except ReduceError as error:
        return _error(args.input, str(error))
    except OSError as error:  # the script cannot be run, or -o not written
        return _error(error.filename or args.input, str(error.strerror or error))
    print(f"irc-reduce: {result}; wrote {output}", file=sys.stderr)
    print(result.repro)
    return 0


if __name__ == "__main__":
    sys.exit(main())
