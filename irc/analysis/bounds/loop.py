"""Bounds of the loop level: every ``loop.read`` and ``loop.write`` of a
``loop.kernel`` indexes inside its tensor, dim by dim.

A read's tensor is a kernel input (its entry block's argument), a write's
the kernel's output it names; their shapes are in their
``!graph.tensor`` types. The facts are those of the guards around the
kernel and in it.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, SSAValue

from irc.analysis.bounds.core import (
    Access,
    BoundsViolation,
    KernelIntervals,
    facts_of,
    grid_violations,
)
from irc.dialects.graph import TensorType
from irc.dialects.loop import KernelOp, ReadOp, WriteOp


def check_module(module: ModuleOp) -> list[BoundsViolation]:
    """The violations of every ``loop.kernel`` in ``module``."""
    found: list[BoundsViolation] = []
    for kernel in module.walk():
        if isinstance(kernel, KernelOp):
            found.extend(check_kernel(kernel))
    return found


def check_kernel(kernel: KernelOp) -> list[BoundsViolation]:
    facts = facts_of([kernel])
    if facts is None:  # contradictory guards: the kernel never runs
        return []
    found = grid_violations(kernel, facts)
    intervals = KernelIntervals(kernel, facts)
    for access in accesses(kernel):
        if (violation := intervals.check(access)) is not None:
            found.append(violation)
    return found


def _input_name(kernel: KernelOp, arg: SSAValue) -> str:
    """``%x`` of the kernel operand an entry block argument stands for."""
    if isinstance(arg, BlockArgument) and arg.index < len(kernel.inputs):
        outer = kernel.inputs[arg.index]
        if outer.name_hint:
            return f"%{outer.name_hint}"
        return f"input {arg.index}"
    return "a tensor"


def accesses(kernel: KernelOp) -> Iterator[Access]:
    for op in kernel.body.walk():
        if isinstance(op, ReadOp):
            tensor = op.tensor.type
            assert isinstance(tensor, TensorType)
            yield Access(
                op,
                "reads",
                tuple(op.indices),
                tensor.dims,
                op.mask,
                f"{_input_name(kernel, op.tensor)}: {tensor}",
            )
        elif isinstance(op, WriteOp) and op.output_index < len(kernel.outputs):
            tensor = kernel.outputs[op.output_index].type
            assert isinstance(tensor, TensorType)
            yield Access(
                op,
                "writes",
                tuple(op.indices),
                tensor.dims,
                op.mask,
                f"output {op.output_index} of @{kernel.kernel_name}: {tensor}",
            )
