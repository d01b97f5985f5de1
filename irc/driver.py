"""The compiler driver: runs a pipeline on a captured function and fills its
record (``irc.compilation``), telling its listeners (the logs, the compile
cache) as it goes.

The graph passes run when the driver starts; the lowering passes (from the
pipeline's first one that leaves the graph level) run once, when a lower
level is first needed, so that the reference backend never depends on them.
A pipeline that stops above triton is finished with the default lowering,
so the result always runs on every backend. The module is kept at every
level it passes through. Lowering and emission run under the driver's lock:
threads asking a fresh compilation for a lower level at once wait for the
one that lowers it.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from irc.capture import Captured
from irc.compilation import Compilation, Listener, StoredLevels
from irc.ir import default_context
from irc.lowering import pipeline as levels
from irc.lowering.pipeline import Pipeline

#: What runs after each pass: the pass, the module, its wall time.
AfterPass = Callable[[ModulePass, ModuleOp, float], None]
#: What runs before each pass but the first: the pass about to run.
BeforePass = Callable[[ModulePass], None]


def apply_passes(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    after_each: AfterPass,
    before_next: BeforePass = lambda _pass: None,
) -> None:
    """Run ``passes`` on ``module`` as an xDSL ``PassPipeline``, whose
    callback between passes times each one and hands it to ``after_each``,
    then tells ``before_next`` which pass comes next."""
    started = time.perf_counter()

    def between(
        previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None
    ) -> None:
        nonlocal started
        if previous is not None:
            after_each(previous, module, time.perf_counter() - started)
            if next_ is not None:
                before_next(next_)
        started = time.perf_counter()

    with collector_paused():
        PassPipeline(tuple(passes), between).apply(default_context(), module)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block. Passes build
    and erase IR whose ops, blocks and uses point at each other, so the
    collector runs often and, on a heap of IR, slowly: a fifth of the GPT-2
    block training step's compile, for 3 MB more at its peak. It is turned
    back on (unless it was off already) and then collects what the passes
    left."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Driver:
    """One compilation under way: its record, the working module, and how
    far down it is."""

    def __init__(self, compilation: Compilation, listeners: Sequence[Listener]):
        self.compilation = compilation
        self._listeners = tuple(listeners)
        self._working: ModuleOp | None = None
        #: The level the working module is at.
        self._level = "graph"
        #: Whether ``compilation.modules`` holds the working module as it is.
        self._kept = False
        self._lowered = compilation.restored
        self._failure: Exception | None = None
        #: Held while lowering or emitting (``emitted`` lowers first).
        self._lock = threading.RLock()

    @staticmethod
    def start(
        captured: Captured, pipeline: Pipeline, listeners: Sequence[Listener]
    ) -> Driver:
        """A driver that has run the graph passes of ``pipeline``."""
        driver = Driver(Compilation(captured, pipeline), listeners)
        driver._run_graph_passes()
        return driver

    @staticmethod
    def restore(
        captured: Captured,
        pipeline: Pipeline | None,
        stored: StoredLevels,
        listeners: Sequence[Listener],
    ) -> Driver:
        """A driver whose record is ``stored``: nothing is left to run."""
        compilation = Compilation(
            captured, pipeline, stored=stored, source=stored.source
        )
        driver = Driver(compilation, listeners)
        for listener in driver._listeners:
            listener.restored(compilation)
        driver._tell_levels(compilation.levels)
        for listener in driver._listeners:
            listener.source_emitted(compilation)
        return driver

    def _run_graph_passes(self) -> None:
        compilation = self.compilation
        assert compilation.pipeline is not None
        self._working = compilation.captured.module.clone()
        self._run(compilation.pipeline.graph_passes)
        self._keep()
        self._tell_levels(["graph"])

    def lowered(self) -> Compilation:
        """The record with every level: the rest of the pipeline and the
        default lowering after it run the first time; a lowering that
        failed fails again the same way."""
        with self._lock:
            return self._lower()

    def _lower(self) -> Compilation:
        if self._failure is not None:
            raise self._failure
        if self._lowered:
            return self.compilation
        self._lowered = True
        pipeline = self.compilation.pipeline
        assert self._working is not None and pipeline is not None
        try:
            self._run(pipeline.lowering_passes)
            rest = levels.passes_after(self._level)
            if rest:
                self._before(rest[0])
                self._run(rest)
            self._keep(last=True)
        except Exception as failure:
            self._failure = failure
            raise
        finally:  # what was reached, also when a lowering failed
            reached = self.compilation.modules
            self._tell_levels([lv for lv in levels.LEVEL_NAMES[1:] if lv in reached])
        return self.compilation

    def emitted(self) -> Compilation:
        """The record with its emitted module, emitted the first time."""
        with self._lock:
            compilation = self._lower()
            if compilation.source is None:
                from irc.backend.triton import emit_module

                with collector_paused():
                    compilation.source = emit_module(compilation.modules["triton"])
                for listener in self._listeners:
                    listener.source_emitted(compilation)
            return compilation

    def _run(self, passes: Sequence[ModulePass]) -> None:
        """Run ``passes`` on the working module, keeping the IR of each level
        it leaves (the caller keeps the one it ends at). When a pass fails,
        the levels kept are those before the last pass that may leave a level
        (a clean-up that fails takes the IR since then with it: a failing
        pass may leave the module half rewritten, which is no level's IR)."""
        assert self._working is not None
        apply_passes(self._working, passes, self._ran, self._before)

    def _ran(self, applied: ModulePass, module: ModuleOp, seconds: float) -> None:
        """Tell the listeners, and note the level ``module`` is now at: what
        its ops and types show, or what the pass lowers to (a function
        returning its argument shows nothing)."""
        for listener in self._listeners:
            listener.pass_ran(self.compilation, applied, seconds)
        self._kept = False
        if applied.name in levels.LEVEL_KEEPING_PASSES:
            return  # no walk over the module to find what a clean-up keeps
        self._level = levels.lowest_level(
            self._level,
            levels.module_level(module),
            levels.LEVEL_AFTER.get(applied.name, "graph"),
        )

    def _before(self, next_pass: ModulePass) -> None:
        """Keep the working module as its level's IR unless ``next_pass``
        surely leaves it at that level: the last pass that leaves a module
        at a level gives that level's IR."""
        if next_pass.name not in levels.LEVEL_KEEPING_PASSES:
            self._keep()

    def _keep(self, last: bool = False) -> None:
        """Keep the working module as its level's IR: a copy, or the module
        itself when no pass will run on it again (``last``)."""
        assert self._working is not None
        if not self._kept:
            working = self._working
            self.compilation.modules[self._level] = working if last else working.clone()
            self._kept = True
        if last:
            self._working = None

    def _tell_levels(self, reached: Sequence[str]) -> None:
        for listener in self._listeners:
            listener.levels_reached(self.compilation, reached)
