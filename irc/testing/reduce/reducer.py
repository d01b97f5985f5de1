"""The delta-debugging driver: shrink a module while a test stays interesting.

For each reduction in turn (``irc.testing.reduce.reductions``), the
reducer lists its sites in the current module and tries to apply them in
chunks, first all at once, then halves, quarters, ... down to one at a
time, as ddmin and ``llvm-reduce`` do: a chunk whose candidate verifies
and is still interesting is kept, and the sites are listed anew on the
smaller module. Rounds over all reductions repeat until one changes
nothing. Everything is in a fixed order, so a run is deterministic (given
a deterministic test), and each candidate text is tested at most once.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from irc.errors import IrcError
from irc.ir import default_context, parse_module, print_module, verify_module
from irc.testing.reduce.interestingness import InterestingnessTest, Outcome, warm_up
from irc.testing.reduce.reductions import REDUCTIONS, Reduction, Site, count_ops


class ReduceError(IrcError):
    """The reduction cannot start: the input does not parse, or the test
    does not find it interesting."""


class _OutOfTests(Exception):
    """The budget of tests is spent: stop with ``smallest``, the smallest
    module so far."""

    def __init__(self, smallest: ModuleOp):
        super().__init__("out of tests")
        self.smallest = smallest


@dataclass(frozen=True)
class ReduceResult:
    """The reduced IR and what it took to get there."""

    text: str
    ops_before: int
    ops_after: int
    tests_run: int
    seconds: float
    #: The command that shows the failure on the reduced file.
    repro: str
    #: Whether the budget of tests ran out before a fixed point.
    exhausted: bool

    def __str__(self) -> str:
        stop = " (stopped: the test budget is spent)" if self.exhausted else ""
        return (
            f"reduced {self.ops_before} ops to {self.ops_after} in "
            f"{self.tests_run} tests ({self.seconds:.1f} s){stop}"
        )


def reduce(
    source: str,
    test: InterestingnessTest,
    *,
    output: str | Path = "reduced.mlir",
    name: str = "<input>",
    max_tests: int = 2000,
    timeout: float = 30.0,
    ctx: Context | None = None,
    log: Callable[[str], None] | None = None,
) -> ReduceResult:
    """Reduce the IR text ``source`` to a small module on which ``test`` is
    still interesting, and write it to ``output``.

    ``max_tests`` bounds the number of test runs (the smallest module found
    so far is the result when it runs out), ``timeout`` the seconds of one
    run; ``name`` is the input's name in a parse error; ``log`` receives a
    line per accepted step. Raises :class:`ReduceError` when ``source`` does
    not parse or ``test`` is not interesting on it.
    """
    output = Path(output)
    start = time.monotonic()
    module = _parse(source, ctx or default_context(), name)
    with tempfile.TemporaryDirectory(prefix="irc-reduce-") as scratch:
        # Candidates carry the output's name, which diagnostics quote.
        reducer = _Reducer(test, Path(scratch) / output.name, max_tests, timeout, log)
        reducer.check_input(source, module)
        reduced, exhausted = reducer.minimize(module)
    text = print_module(reduced)
    output.write_text(text)
    return ReduceResult(
        text=text,
        ops_before=count_ops(module),
        ops_after=count_ops(reduced),
        tests_run=reducer.tests_run,
        seconds=time.monotonic() - start,
        repro=test.repro(output),
        exhausted=exhausted,
    )


def _parse(source: str, ctx: Context, name: str) -> ModuleOp:
    from irc.cli.diagnostics import parse_report

    try:
        return parse_module(source, ctx, name)
    except ParseError as error:
        raise ReduceError(
            "cannot parse the input:\n" + parse_report(error, 0).render()
        ) from error


def _verifies(module: ModuleOp) -> bool:
    try:
        verify_module(module)
    except Exception:  # invalid IR, or a verifier crashing on it
        return False
    return True


class _Reducer:
    """One reduction's state: the test, its budget, and the texts tested."""

    def __init__(
        self,
        test: InterestingnessTest,
        path: Path,
        max_tests: int,
        timeout: float,
        log: Callable[[str], None] | None,
    ):
        self.test = test
        self.path = path
        self.max_tests = max_tests
        self.timeout = timeout
        self.log = log
        self.tests_run = 0
        self.seen: dict[str, bool] = {}
        #: Candidates must verify when the input does; an invalid input
        #: (reducing a verifier's crash) may stay invalid.
        self.keep_valid = True
        #: The text of the module reduced so far.
        self.current = ""

    def check_input(self, source: str, module: ModuleOp) -> None:
        """Stop unless the test is interesting on the input as given and
        as irc prints it back (which every candidate is)."""
        warm_up()
        self.keep_valid = _verifies(module)
        outcome = self._run(source)
        if not self.test.is_interesting(outcome):
            raise ReduceError(
                "the test is not interesting on the input, so there is nothing "
                f"to reduce: {outcome.describe()}"
            )
        outcome = self._run(print_module(module))
        if not self.test.is_interesting(outcome):
            raise ReduceError(
                "the test is interesting on the input, but not on the input as "
                f"irc prints it (which every candidate is): {outcome.describe()}"
            )

    def minimize(self, module: ModuleOp) -> tuple[ModuleOp, bool]:
        """The smallest interesting module found, and whether the budget ran
        out first."""
        self.current = print_module(module)
        self.seen[self.current] = True
        try:
            progress = True
            while progress:
                progress = False
                for reduction in REDUCTIONS:
                    module, changed = self._ddmin(module, reduction)
                    progress |= changed
        except _OutOfTests as out:
            return out.smallest, True
        return module, False

    def _ddmin(self, module: ModuleOp, reduction: Reduction) -> tuple[ModuleOp, bool]:
        """Apply the reduction's sites in ever smaller chunks, keeping every
        chunk that leaves the module interesting."""
        changed = False
        sites = reduction.sites(module)
        size = len(sites)
        while size >= 1 and sites:
            start = 0
            while start < len(sites):
                candidate = self._candidate(
                    module, reduction, sites[start : start + size]
                )
                if candidate is None:
                    start += size
                    continue
                module, changed = candidate, True
                sites = reduction.sites(module)
                if self.log is not None:
                    self.log(
                        f"{reduction.name}: {count_ops(module)} ops "
                        f"(after {self.tests_run} tests)"
                    )
            size //= 2
        return module, changed

    def _candidate(
        self, module: ModuleOp, reduction: Reduction, chunk: Sequence[Site]
    ) -> ModuleOp | None:
        """The module with the chunk applied, if it is valid, new and still
        interesting."""
        candidate = module.clone()
        try:
            reduction.apply(candidate, chunk)
            if self.keep_valid and not _verifies(candidate):
                return None
            text = print_module(candidate)
        except Exception:  # a rewrite that does not fit this IR: not a candidate
            return None
        if text not in self.seen:
            if self.tests_run >= self.max_tests:
                raise _OutOfTests(module)
            self.seen[text] = self.test.is_interesting(self._run(text))
        if text == self.current or not self.seen[text]:
            return None
        self.current = text
        return candidate

    def _run(self, text: str) -> Outcome:
        self.path.write_text(text)
        self.tests_run += 1
        return self.test.run(self.path, self.timeout)
