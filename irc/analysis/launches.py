"""Kernel launches per call of a compiled function, counted from its host
schedule.

A host function's launches are not the ``memory.launch`` ops it holds: a
launch inside a host ``scf.for`` runs once per iteration, one inside a
``scf.while`` once per iteration its loop runs, one inside a ``scf.if`` only
when its branch is taken. The count is a symbolic expression: a loop over a
symbolic length multiplies by that length, and what only the data decides
(how many iterations a while loop runs, how often a branch is taken) is a
symbol of its own, described by what it counts. A program of straight-line
launches counts a constant; a ``fori_loop`` of one device loop counts 1
whatever its length (the loop runs inside its kernel).

The analysis reads memory's host schedule, which the triton level keeps.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable

from irc.dialects.memory import BufferType, LaunchOp, SizeOp
from irc.errors import IrcError
from irc.shapes.expr import SymExpr, parse_expr
from irc.source_locations import source_location


@dataclass(frozen=True)
class Launches:
    """The kernel launches of one call: ``per_call``, an expression over the
    function's symbols and ``unknowns``, the counts only the data decides
    (each symbol's meaning); ``sites``, the launch ops the function holds."""

    per_call: SymExpr
    unknowns: Mapping[str, str] = field(default_factory=dict)
    sites: int = 0

    @property
    def constant(self) -> int | None:
        """The launches per call when every call makes the same number."""
        return self.per_call.constant

    def count(self, function_name: str) -> int:
        """The launches per call as a number, or an error that says what
        the count depends on."""
        constant = self.constant
        if constant is not None:
            return constant
        raise IrcError(
            f"@{function_name} launches {self} kernels per call: the count "
            "depends on its sizes or its data, so it is not one number; read "
            "`launches` for the expression (`launches.evaluate(...)` for one "
            "call) and `launch_sites` for the launches it holds"
        )

    def evaluate(self, **values: int) -> int:
        """The launches of a call with these sizes and data counts."""
        missing = sorted(self.per_call.symbols - values.keys())
        if missing:
            raise IrcError(
                f"launches per call {self} need a value for {', '.join(missing)}"
                f"{self._meanings(missing)}"
            )
        return self.per_call.evaluate(values)

    def _meanings(self, names: list[str]) -> str:
        meanings = [f"{n}: {self.unknowns[n]}" for n in names if n in self.unknowns]
        return f" ({'; '.join(meanings)})" if meanings else ""

    def __str__(self) -> str:
        return str(self.per_call)

    def describe(self) -> str:
        """The expression, and what each count the data decides counts."""
        return f"{self}{self._meanings(sorted(self.unknowns))}"

    def to_json(self) -> dict[str, Any]:
        return {
            "per_call": str(self.per_call),
            "unknowns": dict(self.unknowns),
            "sites": self.sites,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Launches:
        return Launches(
            parse_expr(data["per_call"]),
            dict(data["unknowns"]),
            int(data["sites"]),
        )


def count_launches(module: ModuleOp, function_name: str) -> Launches:
    """The launches per call of ``module``'s host function ``function_name``
    (at the memory or triton level)."""
    function = SymbolTable.lookup_symbol(module, function_name)
    assert isinstance(function, func.FuncOp), f"no host function @{function_name}"
    counter = _Counter(_taken_names(function))
    total = counter.block(function.body.block, SymExpr.const(1))
    sites = sum(
        isinstance(op, LaunchOp) and not _never_launches(op) for op in function.walk()
    )
    return Launches(total, counter.unknowns, sites)


def _taken_names(function: func.FuncOp) -> set[str]:
    """The symbols of the function's sizes, which the data's counts avoid."""
    names = {
        name
        for op in function.walk()
        if isinstance(op, SizeOp)
        for name in op.expr.data.symbols
    }
    for buffer in (*function.function_type.inputs, *function.function_type.outputs):
        if isinstance(buffer, BufferType):
            names.update(name for dim in buffer.dims for name in dim.symbols)
    return names


def _never_launches(launch: LaunchOp) -> bool:
    """Whether the launched kernel's grid is empty whatever the sizes: the
    launcher launches nothing for it."""
    kernel = launch.callee()
    assert kernel is not None, f"@{launch.kernel_name} is not in the module"
    return kernel.never_launches


def _launched(launch: LaunchOp) -> SymExpr:
    """1 for a launch, 0 for one whose grid is empty whatever the sizes. A
    grid empty at some sizes only (``N - 1`` programs at ``N = 1``) counts
    1: the count is exact at the sizes where every grid has programs, one
    more per such launch at the others (the launcher skips it)."""
    return SymExpr.const(0 if _never_launches(launch) else 1)


class _Counter:
    """Counts a host block's launches over a call, naming what the data
    decides as it meets it."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.unknowns: dict[str, str] = {}
        #: Each block's launches per run, None where the data decides them.
        self._per_run: dict[Block, SymExpr | None] = {}

    def block(self, block: Block, runs: SymExpr) -> SymExpr:
        """The launches of ``block`` over a call in which it runs ``runs``
        times."""
        total = SymExpr.const(0)
        for op in block.ops:
            total = total + self.op(op, runs)
        return total

    def op(self, op: Operation, runs: SymExpr) -> SymExpr:
        if isinstance(op, LaunchOp):
            return runs * _launched(op)
        if isinstance(op, scf.ForOp):
            return self.block(op.body.block, runs * self._trips(op))
        if isinstance(op, scf.WhileOp):
            # The condition runs once more than the body in each run of
            # the loop: iterations + runs decisions.
            iterations = self._unknown("while", op, "iterations of the host while loop")
            return self.block(op.before_region.block, runs + iterations) + self.block(
                op.after_region.block, iterations
            )
        if isinstance(op, scf.IfOp):
            return self._branches(op, runs)
        return SymExpr.const(0)

    def _branches(self, op: scf.IfOp, runs: SymExpr) -> SymExpr:
        then_block, else_block = op.true_region.block, op.false_region.block
        per_run = self.per_run(then_block)
        if per_run is not None and per_run == self.per_run(else_block):
            return runs * per_run
        taken = self._unknown("cond", op, "runs of the host branch's true side")
        return self.block(then_block, taken) + self.block(else_block, runs - taken)

    def per_run(self, block: Block) -> SymExpr | None:
        """The launches of one run of ``block``, or None if its data decides
        them (a while loop, or a branch whose sides differ, inside it)."""
        if block not in self._per_run:
            self._per_run[block] = self._count_per_run(block)
        return self._per_run[block]

    def _count_per_run(self, block: Block) -> SymExpr | None:
        total = SymExpr.const(0)
        for op in block.ops:
            if isinstance(op, LaunchOp):
                total = total + _launched(op)
            elif isinstance(op, scf.ForOp):
                body = self.per_run(op.body.block)
                trips = _trips(op)
                if body is None or trips is None:
                    return None
                total = total + trips * body
            elif isinstance(op, scf.WhileOp):
                return None
            elif isinstance(op, scf.IfOp):
                sides = self.per_run(op.true_region.block)
                if sides is None or sides != self.per_run(op.false_region.block):
                    return None
                total = total + sides
        return total

    def _trips(self, op: scf.ForOp) -> SymExpr:
        trips = _trips(op)
        if trips is None:
            return self._unknown("for", op, "iterations of the host for loop")
        return trips

    def _unknown(self, kind: str, op: Operation, meaning: str) -> SymExpr:
        """A new symbol for a count the data decides, unlike any size's or
        any other count's."""
        used = self.taken | self.unknowns.keys()
        name = next(
            name
            for index in itertools.count()
            if (name := f"{kind}_{index}") not in used
        )
        where = source_location(op)
        place = f" at {where}" if where else ""
        self.unknowns[name] = f"{meaning}{place}, over the call"
        return SymExpr.symbol(name)


def _trips(op: scf.ForOp) -> SymExpr | None:
    """The iterations of a host for loop whose bounds are sizes
    (``memory.size``) and whose step is 1, as ``bufferize`` makes them."""
    lower, upper, step = (_size(v) for v in (op.lb, op.ub, op.step))
    if lower is None or upper is None or step is None or step.constant != 1:
        return None
    return upper - lower


def _size(value: SSAValue) -> SymExpr | None:
    owner = value.owner
    return owner.expr.data if isinstance(owner, SizeOp) else None
