"""Values brought into an op's domain, or within the magnitude limit.

:class:`Domains` squashes a value whose op's result could grow past
``MAGNITUDE_LIMIT`` (``tanh`` for floats, ``rem`` by a small constant for
integers) and makes values positive or bounded away from zero for the ops
that need it (``log``, ``rsqrt``, divisors), adding the ops this takes and
recording their ranges.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from irc.dialects import graph as g
from irc.primitives import builtin as p
from irc.testing.strategies.operands import Operands
from irc.testing.strategies.program import Program

#: Integers are squashed into ``[0, _INT_SQUASH)`` by ``rem``.
_INT_SQUASH = 8

#: The bound of ``asin``'s and ``acos``' operands.
_UNIT_BOUND = 0.9


class Domains:
    """The domain fixes of the steps of ``program``."""

    def __init__(self, program: Program, operands: Operands) -> None:
        self.program = program
        self.choices = program.choices
        self.operands = operands

    def squash(self, value: SSAValue, unit: bool = False) -> SSAValue:
        """``value`` mapped into ``[-1, 1]`` (floats, by tanh) or into
        ``[0, 8)`` (``[0, 2)`` if ``unit``; integers, by rem)."""
        kind = self.program.kind(value)
        modulus = 2 if unit else _INT_SQUASH
        if kind == "b" or (kind == "i" and self.program.magnitude(value) < modulus):
            return value
        if kind == "f":
            if self.program.magnitude(value) <= 1:
                return value
            return self.program.emit(g.elementwise(p.TANH, value), (-1.0, 1.0))
        divisor = self.operands.splat(modulus, g.tensor_type(value))
        return self.program.emit(
            g.elementwise(p.REM, value, divisor), (0.0, modulus - 1.0)
        )

    def well_conditioned_unit(self, value: SSAValue) -> SSAValue:
        """A float ``value`` within ``[-0.9, 0.9]``, as is or as
        ``0.9 * tanh(value)``: ``asin`` and ``acos`` are ill-conditioned
        near +-1 (their slope grows without bound), where one rounding of
        their operand moves them by far more than a tolerance, while their
        slope is at most 2.3 within 0.9."""
        if self.program.magnitude(value) <= _UNIT_BOUND:
            return value
        squashed = self.program.emit(g.elementwise(p.TANH, value), (-1.0, 1.0))
        bound = self.operands.splat(_UNIT_BOUND, g.tensor_type(value))
        return self.program.emit(
            g.elementwise(p.MUL, squashed, bound), (-_UNIT_BOUND, _UNIT_BOUND)
        )

    def positive(self, value: SSAValue, minimum: float) -> SSAValue:
        """``value`` if it is at least ``minimum``, else ``abs(value) + 1``."""
        if self.program.ranges[value][0] >= minimum:
            return value
        absolute = self.program.emit(
            g.elementwise(p.ABS, value), (0.0, self.program.magnitude(value))
        )
        one = self.operands.splat(1, g.tensor_type(value))
        return self.program.emit(
            g.elementwise(p.ADD, absolute, one),
            (1.0, self.program.magnitude(value) + 1),
        )

    def nonzero(self, value: SSAValue) -> SSAValue:
        """``value`` if it is bounded away from 0, else ``abs(value) + 1``
        or, half of the time, its negation: divisors of both signs, as
        ``rem`` and ``floordiv`` round differently for each."""
        margin = 0.5 if self.program.kind(value) == "f" else 1.0
        lo, hi = self.program.ranges[value]
        if lo >= margin or hi <= -margin:
            return value
        value = self.positive(value, margin)
        if not self.choices.flag():
            return value
        lo, hi = self.program.ranges[value]
        return self.program.emit(g.elementwise(p.NEG, value), (-hi, -lo))
