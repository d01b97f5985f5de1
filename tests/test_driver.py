"""The driver keeps the IR of every level a compilation passes through: the
module after the last pass that leaves it at that level, whichever passes
the pipeline interleaves with the lowering. It copies the module only
before a pass that may end a level, not after every pass; the reference
here copies after every pass, as the driver once did."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st
from suite_programs import SUITE
from xdsl.passes import PassPipeline

import irc
from irc.driver import apply_passes
from irc.ir import default_context, print_module
from irc.lowering import pipeline as levels
from irc.passes.registry import get_all_passes

CLEAN_UPS = ("canonicalize", "cse", "dedupe-kernels")
#: Each lowering pass alone, in order, so that clean-ups can go between.
LOWERINGS = [name for names in levels.LOWERING for name in names[:1]]


def reference_levels(compiled: irc.Compiled, pipeline: list[str]) -> dict[str, str]:
    """Each level's IR, printed after every pass of ``pipeline`` run on
    what ``compiled`` captured."""
    module = compiled.compilation.captured.module.clone()
    passes = PassPipeline.parse_spec(get_all_passes(), ",".join(pipeline)).passes
    kept, level = {"graph": print_module(module)}, "graph"
    for each in passes:
        each.apply(default_context(), module)
        level = levels.lowest_level(
            level,
            levels.module_level(module),
            levels.LEVEL_AFTER.get(each.name, "graph"),
        )
        kept[level] = print_module(module)
    return kept


@st.composite
def pipelines(draw: st.DrawFn) -> list[str]:
    """The lowering passes in order, clean-ups drawn before, between and
    after them."""
    pipeline: list[str] = []
    for lowering in [*LOWERINGS, None]:
        pipeline += draw(st.lists(st.sampled_from(CLEAN_UPS), max_size=2))
        if lowering is not None:
            pipeline.append(lowering)
    return pipeline


@settings(max_examples=8, deadline=None)
@given(
    program=st.sampled_from(["softmax", "mlp", "causal_attention"]),
    pipeline=pipelines(),
)
def test_each_level_is_the_module_after_its_last_pass(
    program: str, pipeline: list[str]
) -> None:
    specs = SUITE[program].specs()
    compiled = irc.compile(
        SUITE[program].function, *specs.args, pipeline=",".join(pipeline)
    )
    expected = reference_levels(compiled, pipeline)
    kept = {level: print_module(compiled.module_at(level)) for level in expected}
    assert kept == expected


def test_the_collector_is_paused_while_passes_run_and_restored_after() -> None:
    seen: list[bool] = []

    class Probe:
        name = "probe"

        def apply(self, ctx: object, op: object) -> None:
            seen.append(gc.isenabled())

    compiled = irc.compile(SUITE["softmax"].function, *SUITE["softmax"].specs().args)
    working = compiled.compilation.captured.module.clone()
    assert gc.isenabled()
    apply_passes(working, [Probe()], lambda *_: None)  # type: ignore[list-item]
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        apply_passes(working, [Probe()], lambda *_: None)  # type: ignore[list-item]
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
