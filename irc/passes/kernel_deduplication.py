"""``dedupe-kernels``: one kernel per distinct computation.

A stack of identical layers lowers to identical kernels, one set per layer:
the same body, grid, tiles and symbols, on buffers of the same types; only
their names differ (and their reasons, which name neighbouring kernels, and
their ops' source locations). Each would become a ``@triton.jit`` function
of its own, compiled again on the first call on a GPU. This pass keeps the
first kernel of each set of equal ones, launches it in place of the others
and erases them, so a 12-layer stack emits one layer's kernels.

It runs on ``memory.kernel`` (in the default pipeline, right after
``bufferize``, so that the triton lowering lowers each computation once) and
on ``triton.kernel`` alike: both are module-level kernels launched by
``memory.launch``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irc.dialects.memory import LaunchOp
from irc.dialects.tile import ModuleKernelOp

#: Properties that name or explain a kernel without changing what it
#: computes.
_DESCRIPTIVE = frozenset({"sym_name", "reason"})


@dataclass(frozen=True)
class DedupeKernelsPass(ModulePass):
    """Launch one kernel for every set of kernels equal up to their names,
    reasons and source locations, and erase the others."""

    name = "dedupe-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.body.block.ops if isinstance(k, ModuleKernelOp)]
        replacement: dict[str, ModuleKernelOp] = {}
        for group in equal_kernels(kernels):
            kept, *copies = group
            for copy in copies:
                replacement[copy.kernel_name] = kept
            if copies:
                _note_copies(kept, copies)
        if not replacement:
            return
        for launch in op.walk():
            if isinstance(launch, LaunchOp) and launch.kernel_name in replacement:
                kept = replacement[launch.kernel_name]
                launch.properties["kernel"] = SymbolRefAttr(kept.kernel_name)
        for kernel in kernels:
            if kernel.kernel_name in replacement:
                Rewriter.erase_op(kernel)


def equal_kernels(kernels: Iterable[ModuleKernelOp]) -> list[list[ModuleKernelOp]]:
    """``kernels`` in groups of equal ones (:func:`same_computation`), each
    group and the groups in the kernels' order."""
    buckets: defaultdict[Hashable, list[list[ModuleKernelOp]]] = defaultdict(list)
    groups: list[list[ModuleKernelOp]] = []
    for kernel in kernels:
        candidates = buckets[_outline(kernel)]
        group = next((g for g in candidates if same_computation(g[0], kernel)), None)
        if group is None:
            group = [kernel]
            candidates.append(group)
            groups.append(group)
        else:
            group.append(kernel)
    return groups


def same_computation(a: ModuleKernelOp, b: ModuleKernelOp) -> bool:
    """Whether launching ``a`` computes what launching ``b`` does: the same op,
    properties other than the name and reason, attributes (launch options)
    and body, up to SSA names and source locations."""
    return (
        a.name == b.name
        and _computing_properties(a) == _computing_properties(b)
        and a.attributes == b.attributes
        and a.body.is_structurally_equivalent(b.body)
    )


def _computing_properties(kernel: ModuleKernelOp) -> dict[str, object]:
    return {k: v for k, v in kernel.properties.items() if k not in _DESCRIPTIVE}


def _outline(kernel: ModuleKernelOp) -> Hashable:
    """What equal kernels share, cheap to compute: only kernels with the same
    outline are compared op by op."""
    return (
        kernel.name,
        kernel.kind,
        tuple(arg.type for arg in kernel.args),
        len(kernel.body.block.ops),
    )


def _note_copies(kept: ModuleKernelOp, copies: list[ModuleKernelOp]) -> None:
    """Say in ``kept``'s reason which kernels it stands for."""
    names = ", ".join(copy.kernel_name for copy in copies)
    reason = kept.reason.data
    kept.properties["reason"] = StringAttr(
        f"{reason}; launched also in place of {names} (the same computation)"
    )
