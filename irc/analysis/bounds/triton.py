"""Bounds of the triton level: every ``triton.load`` and ``triton.store``
of a ``triton.kernel`` offsets inside the buffer its pointer stands for.

A pointer argument says nothing of its extent: the buffer is the operand
of the host function's ``memory.launch`` in the pointer's place (the
kernel's argument order), whose ``!memory.buffer`` type gives the
footprint. The kernel is checked once for each distinct launch (buffer
types and launching function); one nothing launches is checked for its
grid only. The trailing integer arguments carry the symbols' values. The
program ids of a piece of a combined kernel (``triton.piece``) range over
the piece's own grid, so each piece is checked as the kernel it was.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from irc.analysis.bounds.core import (
    Access,
    BoundsViolation,
    KernelIntervals,
    facts_of,
    footprint,
    grid_violations,
)
from irc.dialects.memory import BufferType, LaunchOp
from irc.dialects.triton import KernelOp, LoadOp, StoreOp
from irc.shapes import SymExpr


def check_module(module: ModuleOp) -> list[BoundsViolation]:
    """The violations of every ``triton.kernel`` in ``module``."""
    launches: dict[str, list[LaunchOp]] = {}
    for op in module.walk():
        if isinstance(op, LaunchOp):
            launches.setdefault(op.kernel_name, []).append(op)
    found: list[BoundsViolation] = []
    for kernel in module.walk():
        if isinstance(kernel, KernelOp):
            found.extend(check_kernel(kernel, launches.get(kernel.kernel_name, [])))
    return found


def _distinct(launches: list[LaunchOp]) -> list[LaunchOp]:
    """One launch per launching function and buffer types."""
    seen: dict[tuple[Operation | None, tuple[Attribute, ...]], LaunchOp] = {}
    for launch in launches:
        key = (launch.parent_op(), tuple(a.type for a in launch.args))
        seen.setdefault(key, launch)
    return list(seen.values())


def check_kernel(kernel: KernelOp, launches: list[LaunchOp]) -> list[BoundsViolation]:
    symbols: dict[SSAValue, SymExpr] = {
        arg: SymExpr.symbol(name)
        for name, arg in zip(kernel.symbol_names, kernel.symbol_args, strict=True)
    }
    if not launches:
        facts = facts_of([kernel])
        return [] if facts is None else grid_violations(kernel, facts)
    for launch in _distinct(launches):
        facts = facts_of([kernel, launch])
        if facts is None:  # contradictory guards: this launch never runs
            continue
        found = grid_violations(kernel, facts)
        for scope, grid in _scopes(kernel):
            intervals = KernelIntervals(kernel, facts, symbols, grid)
            for access in accesses(scope, kernel, launch):
                if (violation := intervals.check(access)) is not None:
                    found.append(violation)
        if found:
            return found
    return []


def _scopes(kernel: KernelOp) -> list[tuple[Operation, tuple[SymExpr, ...]]]:
    """The parts of ``kernel`` whose program ids range over one grid: each
    piece of a combined kernel on its own grid, else the whole kernel."""
    if kernel.pieces:
        return [(piece, piece.grid_exprs) for piece in kernel.pieces]
    return [(kernel, kernel.grid_exprs)]


def _buffer(
    kernel: KernelOp, launch: LaunchOp, pointer: SSAValue
) -> tuple[BufferType, str] | None:
    """The buffer ``launch`` passes for ``pointer``, and how to name it."""
    if not isinstance(pointer, BlockArgument) or pointer.index >= len(launch.args):
        return None
    if pointer not in kernel.pointer_args:
        return None
    operand = launch.args[pointer.index]
    buffer = operand.type
    if not isinstance(buffer, BufferType):
        return None
    inner = f"%{pointer.name_hint}" if pointer.name_hint else f"pointer {pointer.index}"
    outer = f"%{operand.name_hint}, " if operand.name_hint else ""
    return buffer, (
        f"{inner} of @{kernel.kernel_name} ({outer}operand {pointer.index} of its "
        f"memory.launch: {buffer})"
    )


def accesses(scope: Operation, kernel: KernelOp, launch: LaunchOp) -> Iterator[Access]:
    """The loads and stores inside ``scope`` (``kernel`` or one of its
    pieces), each with the buffer ``launch`` passes for its pointer."""
    for op in scope.walk():
        if not isinstance(op, LoadOp | StoreOp):
            continue
        known = _buffer(kernel, launch, op.pointer)
        if known is None:
            continue
        buffer, name = known
        yield Access(
            op,
            "reads" if isinstance(op, LoadOp) else "writes",
            (op.offset,),
            (footprint(buffer.dims, buffer.strides),),
            op.mask,
            name,
        )
