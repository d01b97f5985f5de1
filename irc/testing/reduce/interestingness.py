"""Interestingness tests: whether a candidate file still shows the failure.

Each test runs in a process of its own, so that a pass that hangs, blows
the stack or kills the interpreter costs one candidate, not the reducer:

- the ``irc-opt`` tests (:class:`Crash`, :class:`ErrorMatches`,
  :class:`Miscompile`) fork the reducer, which has imported irc and its
  passes once (:func:`warm_up`), and run ``irc-opt``'s ``main`` in the
  child on the candidate: a new process without the seconds of imports a
  fresh ``irc-opt`` pays;
- :class:`Script` runs the user's command with the candidate's path as its
  last argument; exit status 0 means "still interesting", as for
  ``creduce`` and ``llvm-reduce``.

A test that runs past its timeout is not interesting: the reducer looks for
the failure, and a candidate that hangs instead does not show it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

#: How irc-opt reports an exception escaping a pass, parser, verifier or
#: printer: a bug, not a diagnostic about the input (``irc.cli.diagnostics``).
INTERNAL_ERROR = re.compile(r"error: internal error in ")
#: How irc-opt's ``--check-semantics`` reports a pass changing the results.
MISMATCH = re.compile(r"changed the results \(--check-semantics\)")


@dataclass(frozen=True)
class Outcome:
    """How one run of a test ended: its exit status (None when a signal
    killed it), the signal, whether that was the timeout, and its output."""

    status: int | None
    signal: int | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""

    def describe(self) -> str:
        """The ending in words, with the tail of the error output."""
        if self.timed_out:
            ending = "it timed out"
        elif self.signal is not None:
            ending = f"it was killed by signal {signal.Signals(self.signal).name}"
        else:
            ending = f"it exited with status {self.status}"
        tail = "\n".join(self.stderr.rstrip().splitlines()[-8:])
        return ending + (f"; its error output ends:\n{tail}" if tail else "")


class InterestingnessTest(Protocol):
    """What the reducer asks of a test."""

    def run(self, path: Path, timeout: float) -> Outcome:
        """Run the test on the candidate file ``path``."""
        ...

    def is_interesting(self, outcome: Outcome) -> bool:
        """Whether the run showed the failure being reduced."""
        ...

    def repro(self, path: Path) -> str:
        """The shell command that shows the failure on ``path``."""
        ...


@dataclass(frozen=True, kw_only=True)
class IrcOptTest:
    """A test that runs ``irc-opt FILE -p PASSES`` with the pass plugins
    ``plugins`` (``--load-pass-plugin``) and further irc-opt arguments
    ``extra``."""

    passes: str = ""
    plugins: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    #: The arguments the kind of test itself adds.
    flags: tuple[str, ...] = field(default=(), init=False)

    def arguments(self, path: Path) -> list[str]:
        """irc-opt's command line, without the program name."""
        arguments = [str(path)]
        if self.passes:
            arguments += ["-p", self.passes]
        for plugin in self.plugins:
            arguments += ["--load-pass-plugin", plugin]
        return [*arguments, *self.flags, *self.extra]

    def run(self, path: Path, timeout: float) -> Outcome:
        return run_irc_opt(self.arguments(path), timeout)

    def repro(self, path: Path) -> str:
        return shlex.join(["irc-opt", *self.arguments(path)])


@dataclass(frozen=True, kw_only=True)
class Crash(IrcOptTest):
    """irc-opt crashes: a pass (or irc's parser, verifier, printer) raises
    an exception that is not a diagnostic about the input, reported as an
    internal error, or the process dies of a signal (other than the
    timeout's)."""

    def is_interesting(self, outcome: Outcome) -> bool:
        died = outcome.signal is not None and not outcome.timed_out
        return died or bool(INTERNAL_ERROR.search(outcome.stderr))


@dataclass(frozen=True, kw_only=True)
class ErrorMatches(IrcOptTest):
    """irc-opt's error output matches the regular expression ``pattern``
    (``re.search``, ``^`` and ``$`` at each line): any diagnostic, a crash
    or a ``--check-semantics`` report."""

    pattern: str

    def is_interesting(self, outcome: Outcome) -> bool:
        return re.search(self.pattern, outcome.stderr, re.MULTILINE) is not None


@dataclass(frozen=True, kw_only=True)
class Miscompile(IrcOptTest):
    """``irc-opt --check-semantics`` finds a pass of the pipeline that
    changes the results (its random bindings and inputs depend only on the
    seed, ``--check-semantics-seed`` in ``extra``, so the test is
    deterministic)."""

    flags: tuple[str, ...] = field(default=("--check-semantics",), init=False)

    def is_interesting(self, outcome: Outcome) -> bool:
        return bool(MISMATCH.search(outcome.stderr))


@dataclass(frozen=True)
class Script:
    """The user's command, run with the candidate's path appended; exit
    status 0 means the candidate is still interesting."""

    command: tuple[str, ...]

    def run(self, path: Path, timeout: float) -> Outcome:
        # A session of its own, so that the timeout kills what the script
        # started too (a shell's children would otherwise hold its pipes).
        with subprocess.Popen(
            [*self.command, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        ) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                stdout, stderr = process.communicate()
                return Outcome(None, signal.SIGKILL, True, stdout, stderr)
        if process.returncode < 0:
            return Outcome(None, -process.returncode, stdout=stdout, stderr=stderr)
        return Outcome(process.returncode, stdout=stdout, stderr=stderr)

    def is_interesting(self, outcome: Outcome) -> bool:
        return outcome.status == 0

    def repro(self, path: Path) -> str:
        return shlex.join([*self.command, str(path)])


def warm_up() -> None:
    """Import what irc-opt imports only when a pipeline or an input names it
    (its passes, dialects and ``--check-semantics``' interpreters), so that
    every forked test finds it imported."""
    from irc.cli import irc_opt  # noqa: F401
    from irc.passes.registry import get_all_dialects, get_all_passes
    from irc.testing import semantics  # noqa: F401

    for load in (*get_all_passes().values(), *get_all_dialects().values()):
        # Only a head start: a pass that fails to load fails in the test.
        with contextlib.suppress(Exception):
            load()


def run_irc_opt(arguments: Sequence[str], timeout: float) -> Outcome:
    """Run ``irc-opt`` with ``arguments`` in a forked child, its output in
    temporary files, killed by ``SIGALRM`` after ``timeout`` seconds."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()  # the child must not inherit buffered output
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child process)
            os._exit(_child(arguments, out.fileno(), err.fileno(), timeout))
        _, wait_status = os.waitpid(pid, 0)
        stdout, stderr = (_read(stream) for stream in (out, err))
    if os.WIFSIGNALED(wait_status):
        killed_by = os.WTERMSIG(wait_status)
        return Outcome(None, killed_by, killed_by == signal.SIGALRM, stdout, stderr)
    return Outcome(os.WEXITSTATUS(wait_status), stdout=stdout, stderr=stderr)


def _read(stream: IO[bytes]) -> str:
    stream.seek(0)
    return stream.read().decode(errors="replace")


def _child(arguments: Sequence[str], out: int, err: int, timeout: float) -> int:
    """In the forked child: irc-opt's exit status, its output on ``out``
    and ``err``; never returns into the reducer."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(max(1, math.ceil(timeout)))
    os.dup2(out, 1)
    os.dup2(err, 2)
    # New streams on the descriptors: the parent's may be another file
    # (pytest's capture) or hold buffered text.
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    if faulthandler.is_enabled():  # its dump on a fatal signal: to the output too
        faulthandler.enable(sys.stderr)
    status = 70  # EX_SOFTWARE: irc-opt's own main failed
    try:
        from irc.cli.irc_opt import main

        status = main(list(arguments))
    except SystemExit as stop:  # argparse's exit on a bad command line
        status = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return status
