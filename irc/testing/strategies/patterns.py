"""Pattern steps: a given NumPy snippet spliced into a program.

A pass that rewrites one pattern (``x * 2`` to ``x + x``) sees it in few
random programs, so ``programs(patterns=[lambda x: x * 2])`` splices the
snippet into them: a pattern step picks operands as the other steps do,
traces the snippet on their types (as :func:`irc.trace` captures a
function), and copies the traced ops into ``@main``. Each program holds at
least one pattern step, and shrinks to the pattern over fresh arguments.

The snippet's results get the ranges the primitives' rules give its ops;
where an op has none (a reduction, say), or a range passes
``MAGNITUDE_LIMIT``, the result is squashed (``tanh``, ``rem``), whose range
holds whatever it squashes, so that later steps stay in their domains.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from irc.capture import TensorSpec, capture
from irc.dialects import graph as g
from irc.dtypes import dtype
from irc.errors import IrcError
from irc.testing.strategies.domains import Domains
from irc.testing.strategies.operands import Operands
from irc.testing.strategies.program import Program
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT, _magnitude, _Range, _span
from irc.testing.strategies.steps import Steps

#: A snippet of NumPy code over tensors, as ``irc.trace`` takes it.
Pattern = Callable[..., Any]

#: The action of a pattern step (not in ``ACTIONS``: ``programs(patterns=...)``
#: adds it).
PATTERN = "pattern"

#: Operands larger than this are squashed before a pattern takes them, so
#: that ``exp(x)`` or ``x * x`` in a snippet stays finite; inputs pass as is.
_OPERAND_LIMIT = 8.0

#: Ops whose result takes values of their (first) operand only.
_VALUE_PRESERVING = (g.BroadcastOp, g.ReshapeOp, g.TransposeOp, g.SliceOp)


def pattern_arity(pattern: Pattern) -> int:
    """The number of tensors ``pattern`` takes: its positional parameters."""
    try:
        parameters = inspect.signature(pattern).parameters.values()
    except (TypeError, ValueError) as error:
        raise IrcError(f"pattern {pattern!r} has no signature to read") from error
    count = sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in parameters
    )
    if count == 0:
        raise IrcError(f"pattern {pattern!r} takes no tensor")
    return count


class PatternSteps(Steps):
    """The pattern steps of ``program``: each splices one of ``patterns``."""

    def __init__(
        self,
        program: Program,
        operands: Operands,
        domains: Domains,
        patterns: Sequence[Pattern],
    ) -> None:
        super().__init__(program, operands, domains)
        self.patterns = tuple(patterns)
        self.taken = 0

    def pattern(self) -> bool:
        """Splice one pattern on operands of one type: an earlier value,
        cast to a float or replaced by a new float argument of the highest
        rank where the snippet does not trace on it, and values of its
        type."""
        pattern = self.choices.one_of(self.patterns)
        first = self._bounded(self.operands.operand("bif"))
        traced = _trace(pattern, g.tensor_type(first))
        if traced is None:
            first, traced = self._float_operand(pattern, first)
        operands = [first] + [
            self._bounded(self.operands.operand_like(first))
            for _ in range(pattern_arity(pattern) - 1)
        ]
        self._splice(traced, operands)
        self.taken += 1
        return True

    def _float_operand(
        self, pattern: Pattern, value: SSAValue
    ) -> tuple[SSAValue, func.FuncOp]:
        """A float operand ``pattern`` traces on, and the traced snippet:
        ``value`` cast, or a new argument of the highest rank (a snippet
        may reduce or transpose axes)."""
        element = self.program.element("f").ir_type
        tensor = g.tensor_type(value).with_element_type(element)
        traced = _trace(pattern, tensor)
        if traced is not None:
            return self.operands.cast(value, dtype(element)), traced
        rank = self.options.max_rank
        tensor = g.TensorType(
            self.program.shape(rank, rank, for_argument=True), element
        )
        traced = _trace(pattern, tensor)
        if traced is None:
            raise IrcError(
                f"pattern {pattern!r} does not trace on tensors of type {tensor} "
                "nor on earlier values: it must take tensors of one type"
            )
        return self.program.new_argument(tensor), traced

    def _bounded(self, value: SSAValue) -> SSAValue:
        if self.program.magnitude(value) <= _OPERAND_LIMIT:
            return value
        return self.domains.squash(value)

    def _splice(self, traced: func.FuncOp, operands: Sequence[SSAValue]) -> None:
        """Copy the body of ``traced`` after the ops of ``@main``, its
        arguments replaced by ``operands``; its results become values of
        the program, with their ranges."""
        ranges: dict[SSAValue, _Range | None] = {
            operand: self.program.ranges[operand] for operand in operands
        }
        for argument, operand in zip(traced.body.block.args, operands):
            argument.name_hint = None  # the snippet's names stay out of @main
            argument.replace_all_uses_with(operand)
        for op in list(traced.body.block.ops):
            if isinstance(op, func.ReturnOp):
                for result in op.arguments:
                    self._adopt(result, ranges.get(result))
                continue
            op.detach()
            self.program.block.add_op(op)
            for result in op.results:
                ranges[result] = _result_range(op, ranges)

    def _adopt(self, value: SSAValue, value_range: _Range | None) -> None:
        """``value`` (a result of the snippet) as a value of the program;
        squashed where its range is unknown or too large, as only the
        squashed value has a range that later steps can trust."""
        if value in self.program.ranges:  # an operand the snippet returns
            return
        if self.program.kind(value) == "b":
            value_range = (0.0, 1.0)
        if value_range is not None and _magnitude(value_range) <= MAGNITUDE_LIMIT:
            self.program.ranges[value] = value_range
            self.program.values.append(value)
            return
        # Large enough that squash squashes it; the squashed value's range
        # holds whatever value it takes.
        self.program.ranges[value] = (-MAGNITUDE_LIMIT, MAGNITUDE_LIMIT)
        self.domains.squash(value)


def _trace(pattern: Pattern, tensor: g.TensorType) -> func.FuncOp | None:
    """``pattern`` traced on tensors of type ``tensor``, or None if it does
    not trace there (or takes other types than it is given)."""
    spec = TensorSpec(
        [d.constant if d.is_constant else str(d) for d in tensor.dims],
        dtype(tensor.element_type),
    )
    specs = (spec,) * pattern_arity(pattern)
    try:
        module = capture(pattern, specs, {}, ()).module
    except IrcError:
        return None
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    if any(a.type != tensor for a in function.body.block.args):
        return None
    return function


def _result_range(
    op: Operation, ranges: dict[SSAValue, _Range | None]
) -> _Range | None:
    """The range of ``op``'s result from its operands' by its primitive's
    rule (None where there is none, or an operand's is unknown)."""
    if isinstance(op, g.ConstantOp):
        return _span(op.literal().astype(float).ravel().tolist() or [0.0])
    operand_ranges = [ranges.get(o) for o in op.operands]
    if any(r is None for r in operand_ranges):
        return None
    known: list[_Range] = [r for r in operand_ranges if r is not None]
    if isinstance(op, _VALUE_PRESERVING):
        return known[0]
    if isinstance(op, g.CastOp):
        return _cast_range(known[0], op)
    if isinstance(op, g.UnaryOp | g.BinaryOp) and op.KIND.test.range is not None:
        kind = dtype(g.tensor_type(op.operands[0]).element_type).kind
        try:
            return op.KIND.test.range(*known, kind)
        except (ArithmeticError, ValueError):
            return None
    return None


def _cast_range(source: _Range, op: g.CastOp) -> _Range:
    """A cast's range, as :meth:`Operands.cast` gives it."""
    target = dtype(g.tensor_type(op.result).element_type).kind
    if target == "b":
        return 0.0, 1.0
    if target == "i":
        return float(math.floor(source[0])), float(math.ceil(source[1]))
    return source
