"""Bounds of the memory level: every ``memory.load`` and ``memory.store``
of a ``memory.kernel`` offsets inside its buffer's footprint.

A buffer argument ``!memory.buffer<shape, strides, T>`` spans offsets
``0 .. sum((size - 1) * stride)``. The facts are the kernel's guards and
those of each host function that launches it (``memory.launch``): the
kernel is checked once per launching function.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from irc.analysis.bounds.core import (
    Access,
    BoundsViolation,
    KernelIntervals,
    facts_of,
    footprint,
    grid_violations,
)
from irc.dialects.memory import BufferType, KernelOp, LaunchOp, LoadOp, StoreOp


def check_module(module: ModuleOp) -> list[BoundsViolation]:
    """The violations of every ``memory.kernel`` in ``module``."""
    launches = launches_by_kernel(module)
    found: list[BoundsViolation] = []
    for kernel in module.walk():
        if isinstance(kernel, KernelOp):
            found.extend(check_kernel(kernel, launches.get(kernel.kernel_name, [])))
    return found


def launches_by_kernel(module: ModuleOp) -> dict[str, list[LaunchOp]]:
    """The ``memory.launch`` ops of ``module``, by the kernel they run."""
    launches: dict[str, list[LaunchOp]] = {}
    for op in module.walk():
        if isinstance(op, LaunchOp):
            launches.setdefault(op.kernel_name, []).append(op)
    return launches


def fact_scopes(kernel: Operation, launches: list[LaunchOp]) -> list[list[Operation]]:
    """The ops around which the guards that hold for a kernel are: the
    kernel and one launch of each function that launches it (the kernel
    alone when nothing does)."""
    per_function: dict[Operation | None, LaunchOp] = {}
    for launch in launches:
        per_function.setdefault(launch.parent_op(), launch)
    return [[kernel, launch] for launch in per_function.values()] or [[kernel]]


def check_kernel(kernel: KernelOp, launches: list[LaunchOp]) -> list[BoundsViolation]:
    """The violations of ``kernel`` under the facts of the first launching
    function that has any."""
    for scope in fact_scopes(kernel, launches):
        facts = facts_of(scope)
        if facts is None:  # contradictory guards: this launch never runs
            continue
        found = grid_violations(kernel, facts)
        intervals = KernelIntervals(kernel, facts)
        for access in accesses(kernel):
            if (violation := intervals.check(access)) is not None:
                found.append(violation)
        if found:
            return found
    return []


def buffer_name(kernel: KernelOp, value: SSAValue) -> str:
    """``%out: type``, or ``argument 0 of @k0: type`` for an unnamed one."""
    if value.name_hint:
        name = f"%{value.name_hint}"
    elif isinstance(value, BlockArgument):
        name = f"argument {value.index} of @{kernel.kernel_name}"
    else:
        name = "a buffer"
    return f"{name}: {value.type}"


def accesses(kernel: KernelOp) -> Iterator[Access]:
    for op in kernel.body.walk():
        if isinstance(op, LoadOp | StoreOp):
            buffer = op.buffer.type
            assert isinstance(buffer, BufferType)
            yield Access(
                op,
                "reads" if isinstance(op, LoadOp) else "writes",
                (op.offset,),
                (footprint(buffer.dims, buffer.strides),),
                op.mask,
                buffer_name(kernel, op.buffer),
            )
