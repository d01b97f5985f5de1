"""The default lowering from graph to triton, and the levels it goes through.

``lower-to-triton`` runs the passes of ``LOWERING`` in order; ``irc.compile``
runs them one by one (after the graph clean-ups) so that it can keep the IR
of every level. A pipeline that stops early is finished with the passes that
follow its last level, so a researcher's own pipeline always yields a
runnable program.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from irc.errors import IrcError
from irc.ir import used_dialects

#: The levels, highest first; each level's dialect has its name, and its
#: ops or types mark a module as at that level.
LEVEL_NAMES = ("graph", "fusion", "loop", "memory", "triton")

#: The passes that lower a module from each level to the next (the i-th
#: from ``LEVEL_NAMES[i]``): the lowering, then clean-ups at the new level
#: (bufferize computes strides and offsets that the tiler's sizes may
#: already hold; cse merges them; equal kernels, as a stack of layers
#: makes, become one before each is lowered to Triton; independent
#: launches of triton kernels become one launch).
LOWERING: tuple[tuple[str, ...], ...] = (
    ("fuse",),
    ("tile",),
    ("bufferize", "cse", "dedupe-kernels"),
    ("lower-memory-to-triton", "combine-launches"),
)

#: The level each lowering pass leaves a module at.
LEVEL_AFTER: dict[str, str] = {
    passes[0]: LEVEL_NAMES[index + 1] for index, passes in enumerate(LOWERING)
} | {"lower-to-triton": "triton"}

#: The names of the passes that leave the graph level.
LOWERING_PASSES = frozenset(LEVEL_AFTER)

#: Clean-ups that leave a module at the level they find it. The driver
#: keeps a copy of each level's IR; it need not copy the module before one
#: of these, which cannot end the level (a copy is a fifth of a compile).
LEVEL_KEEPING_PASSES = frozenset(
    {
        "canonicalize",
        "cse",
        "horizontal-fusion",
        "unroll-while",
        "dedupe-kernels",
        "combine-launches",
    }
)

#: What ``irc.compile`` runs by default: graph clean-ups, identical
#: per-head computations batched into one (after the clean-ups, which merge
#: what the heads share; then ``canonicalize`` folds the reshapes of
#: reshapes batching leaves), then the lowering.
DEFAULT_PIPELINE = ",".join(
    [
        "canonicalize",
        "cse",
        "horizontal-fusion",
        "canonicalize",
        *(name for names in LOWERING for name in names),
    ]
)


@dataclass(frozen=True)
class Pipeline:
    """A pass pipeline, parsed once: its passes and where the graph passes
    end and the lowering begins (the first pass that leaves the graph
    level), which every part of a compilation reads from here."""

    passes: tuple[ModulePass, ...]
    #: The index of the first lowering pass; ``len(passes)`` when none is.
    lowering_start: int

    @staticmethod
    def of(passes: Iterable[ModulePass]) -> Pipeline:
        passes = tuple(passes)
        start = next(
            (i for i, p in enumerate(passes) if p.name in LOWERING_PASSES),
            len(passes),
        )
        return Pipeline(passes, start)

    @staticmethod
    def parse(pipeline: str | Sequence[ModulePass] | Pipeline) -> Pipeline:
        """A pipeline as ``irc-opt -p`` takes it, or pass instances; an
        invalid spec is an ``IrcError``."""
        if isinstance(pipeline, Pipeline):
            return pipeline
        if not isinstance(pipeline, str):
            return Pipeline.of(pipeline)
        if not pipeline:
            return Pipeline.of(())
        from irc.passes.registry import get_all_passes

        try:
            parsed = PassPipeline.parse_spec(get_all_passes(), pipeline)
        except (Exception, ArgSpecParseError) as err:
            raise IrcError(f"invalid pass pipeline {pipeline!r}: {err}") from None
        return Pipeline.of(parsed.passes)

    @property
    def graph_passes(self) -> tuple[ModulePass, ...]:
        return self.passes[: self.lowering_start]

    @property
    def lowering_passes(self) -> tuple[ModulePass, ...]:
        return self.passes[self.lowering_start :]

    def with_graph_passes(self, *added: ModulePass) -> Pipeline:
        """This pipeline with ``added`` run after its graph passes."""
        start = self.lowering_start
        passes = (*self.passes[:start], *added, *self.passes[start:])
        return Pipeline(passes, start + len(added))

    def with_options(self, kind: type[ModulePass], **options: Any) -> Pipeline:
        """This pipeline with ``options`` set on each pass of type ``kind``
        (options leave a pass's name, hence the lowering start, as it is)."""
        passes = tuple(
            replace(p, **options) if isinstance(p, kind) else p for p in self.passes
        )
        return Pipeline(passes, self.lowering_start)

    def spec(self) -> list[str]:
        """Each pass's canonical spec (``tile{...}`` with its options)."""
        return [str(p.pipeline_pass_spec()) for p in self.passes]


def module_level(module: ModuleOp) -> str:
    """The lowest level whose ops or types ``module`` holds (kernels of a
    level mark it: a loop-level module still holds graph constants)."""
    dialects = used_dialects(module)
    return max(
        (name for name in LEVEL_NAMES if name in dialects),
        key=LEVEL_NAMES.index,
        default="graph",
    )


def lowest_level(*levels: str) -> str:
    """The lowest of ``levels`` (triton is the lowest)."""
    return max(levels, key=LEVEL_NAMES.index)


def passes_after(level: str) -> list[ModulePass]:
    """The default lowering passes that take a module from ``level`` down
    to triton."""
    from irc.passes.registry import get_all_passes

    available = get_all_passes()
    start = LEVEL_NAMES.index(level)
    return [available[name]()() for names in LOWERING[start:] for name in names]


@dataclass(frozen=True)
class LowerToTritonPass(ModulePass):
    """graph -> fusion -> loop -> memory -> triton with the default passes
    and options; ``irc-opt -p lower-to-triton -t triton`` prints the
    emitted Python module."""

    name = "lower-to-triton"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for lowering in passes_after(module_level(op)):
            lowering.apply(ctx, op)
