"""The dialects and passes that irc's tools know by name.

``irc-opt`` (and anything else that resolves names, such as a pipeline given
as a string) looks passes and dialects up here. Entries are import paths
(``"module:attribute"``) rather than imported objects so that a tool imports
only what it uses: importing every pass up front would add to the start-up
time of each ``irc-opt`` invocation.

Adding a pass is one line in ``_PASSES``: its name (the ``name`` class
variable of the ``ModulePass``) and where it lives. Passes from outside irc
come through ``irc.passes.plugins``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

_PASSES: dict[str, str] = {
    # Generic clean-ups from xDSL; graph ops join `canonicalize` through their
    # HasCanonicalizationPatternsTrait.
    "canonicalize": "xdsl.transforms.canonicalize:CanonicalizePass",
    "cse": "xdsl.transforms.common_subexpression_elimination:CommonSubexpressionElimination",
    "dce": "xdsl.transforms.dead_code_elimination:DeadCodeElimination",
    # Reverse-mode differentiation: the joint forward and backward function.
    "autodiff": "irc.passes.autodiff:AutodiffPass",
    # Matmuls and their epilogues in bf16 or f16, the rest in float32.
    "auto-mixed-precision": "irc.passes.auto_mixed_precision:AutoMixedPrecisionPass",
    # Identical computations on side-by-side slices (heads) as one batched one.
    "horizontal-fusion": "irc.passes.horizontal_fusion:HorizontalFusionPass",
    "propagate-sharding": "irc.passes.sharding_propagation:PropagateShardingPass",
    "partition": "irc.passes.partition:PartitionPass",
    "annotate-sharding": "irc.passes.sharding_annotation:AnnotateShardingPass",
    # Cheap while loops run several iterations per host decision.
    "unroll-while": "irc.passes.while_unrolling:UnrollWhilePass",
    # One kernel per distinct computation (a stack of layers emits one layer's).
    "dedupe-kernels": "irc.passes.kernel_deduplication:DedupeKernelsPass",
    # Independent launches as one launch of a combined kernel.
    "combine-launches": "irc.passes.combo_kernels:CombineLaunchesPass",
    # The lowering, one pass per level (irc.lowering.pipeline), and all of it.
    "fuse": "irc.lowering.graph_to_fusion:FusePass",
    "tile": "irc.lowering.fusion_to_loop:TilePass",
    "bufferize": "irc.lowering.loop_to_memory:BufferizePass",
    "lower-memory-to-triton": "irc.lowering.memory_to_triton:LowerMemoryToTritonPass",
    "lower-to-triton": "irc.lowering.pipeline:LowerToTritonPass",
}

_DIALECTS: dict[str, str] = {
    "sym": "irc.dialects.sym:Sym",
    "debug": "irc.dialects.debug:Debug",
    "collective": "irc.dialects.collective:Collective",
    "elementwise": "irc.dialects.elementwise:Elementwise",
    "graph": "irc.dialects.graph:Graph",
    "fusion": "irc.dialects.fusion:Fusion",
    "loop": "irc.dialects.loop:Loop",
    "tile": "irc.dialects.tile:Tile",
    "memory": "irc.dialects.memory:Memory",
    "triton": "irc.dialects.triton:Triton",
    # Upstream dialects that irc's IR embeds (functions, scalars, loops).
    "builtin": "xdsl.dialects.builtin:Builtin",
    "func": "xdsl.dialects.func:Func",
    "arith": "xdsl.dialects.arith:Arith",
    "math": "xdsl.dialects.math:Math",
    "scf": "xdsl.dialects.scf:Scf",
}


def _loader(path: str) -> Callable[[], Any]:
    """A factory that imports ``module:attribute`` when called, not before."""
    module_name, _, attribute = path.partition(":")

    def load() -> Any:
        return getattr(import_module(module_name), attribute)

    return load


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass by pipeline name, as a factory returning the pass class:
    irc's own and those installed packages declare (``irc.passes.plugins``;
    irc's win a clash of names)."""
    from irc.passes.plugins import installed_passes

    return installed_passes() | {name: _loader(path) for name, path in _PASSES.items()}


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Every dialect by name, as a factory returning the ``Dialect``."""
    return {name: _loader(path) for name, path in _DIALECTS.items()}
