"""Elementwise steps: ``unary``, ``binary``, ``compare``, ``select`` and
``cast``.

Each keeps its op in its domain on its operands' ranges: ``log``,
``log2``, ``log10`` and ``rsqrt`` of ``abs(x) + 1`` unless ``x`` is known
positive (``log1p`` unless ``x > -0.99``), ``sqrt`` of ``abs(x)``, ``asin``
and ``acos`` of ``0.9 * tanh(x)`` unless ``|x| <= 0.9`` (they are
ill-conditioned near +-1), division by ``abs(y) + 1``
(or its negation) unless ``y`` is bounded away from zero, integer powers
with exponents in ``[0, 2]``, float powers of positive bases, ``exp``,
``expm1``, ``sinh`` and ``cosh`` of ``tanh(x)`` when ``x`` could overflow
them; operands whose result could grow past ``MAGNITUDE_LIMIT`` are squashed
first. In a repeated step, ``unary`` and ``binary`` add the previous step's
op again.
"""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from irc.dialects import graph as g
from irc.dialects.elementwise import ComparisonPredicate
from irc.dtypes import BOOL, dtype, is_bool_type
from irc.primitives import builtin as p
from irc.primitives.declaration import OperandDomain, primitives
from irc.primitives.ranges import additive_growth
from irc.testing.strategies.domains import Domains
from irc.testing.strategies.operands import Operands
from irc.testing.strategies.program import Program
from irc.testing.strategies.ranges import MAGNITUDE_LIMIT, _span, _union
from irc.testing.strategies.steps import StepMemory, Steps


class ElementwiseSteps(Steps):
    """The elementwise steps of ``program``; ``memory`` gives the op of a
    repeated step."""

    def __init__(
        self,
        program: Program,
        operands: Operands,
        domains: Domains,
        memory: StepMemory,
    ) -> None:
        super().__init__(program, operands, domains)
        self.memory = memory

    def unary(self) -> bool:
        op = self.memory.op_class("unary", self._unary_ops(), self.choices)
        value = self._in_domain(op, self.operands.operand(_domain(op)))
        rule = op.KIND.test.range
        assert rule is not None, "unary primitives declare their range"
        value_range = rule(self.program.ranges[value], self.program.kind(value))
        self.program.emit(op(value), value_range)
        return True

    def _in_domain(self, op: type[g.UnaryOp], value: SSAValue) -> SSAValue:
        """``value`` brought into ``op``'s domain, and squashed where ``op``
        could grow it past ``MAGNITUDE_LIMIT``."""
        low, high = self.program.ranges[value]
        growth = math.log(MAGNITUDE_LIMIT)
        domain = op.KIND.test.operands
        if domain is OperandDomain.EXPONENT and high > growth:
            return self.domains.squash(value)
        if domain is OperandDomain.TWO_SIDED_EXPONENT and max(-low, high) > growth:
            return self.domains.squash(value)
        if domain is OperandDomain.POSITIVE:
            return self.domains.positive(value, 0.01)
        if domain is OperandDomain.ABOVE_MINUS_ONE and low <= -0.99:
            return self.domains.positive(value, 0.01)
        if domain is OperandDomain.UNIT:
            return self.domains.well_conditioned_unit(value)
        if domain is OperandDomain.NON_NEGATIVE and low < 0:
            return self.program.emit(
                g.elementwise(p.ABS, value), (0.0, self.program.magnitude(value))
            )
        return value

    def _unary_ops(self) -> list[type[g.UnaryOp | g.BinaryOp]]:
        return self._ops(1)

    def _binary_ops(self) -> list[type[g.UnaryOp | g.BinaryOp]]:
        return self._ops(2)

    def _ops(self, arity: int) -> list[type[g.UnaryOp | g.BinaryOp]]:
        """The ops of the primitives of ``arity``; in ``smooth`` programs the
        continuous ones only (roundings jump where a float crosses an
        integer, arctan2 where its first operand crosses 0)."""
        return [
            g.elementwise_op(kind)
            for kind in primitives(arity)
            if kind.test.smooth or not self.options.smooth
        ]

    def binary(self) -> bool:
        op = self.memory.op_class("binary", self._binary_ops(), self.choices)
        lhs = self.operands.operand(_domain(op), discontinuous=op.KIND.test.steps)
        self._apply_binary(op, lhs, self.operands.operand_like(lhs))
        return True

    def _apply_binary(
        self, op: type[g.BinaryOp], lhs: SSAValue, rhs: SSAValue
    ) -> SSAValue:
        """``op(lhs, rhs)``, squashing the operands first if the result could
        grow too large, and keeping divisors and powers in their domains."""
        test = op.KIND.test
        growth = test.growth or additive_growth
        magnitudes = self.program.magnitude(lhs), self.program.magnitude(rhs)
        if growth(*magnitudes) > MAGNITUDE_LIMIT:
            lhs, rhs = self.domains.squash(lhs), self.domains.squash(rhs)
        if test.operands is OperandDomain.POWER:
            return self._power(lhs, rhs)
        if test.operands is OperandDomain.DIVISOR:
            rhs = self.domains.nonzero(rhs)
        assert test.range is not None, "binary primitives but pow declare a range"
        kind = self.program.kind(lhs)
        value_range = test.range(
            self.program.ranges[lhs], self.program.ranges[rhs], kind
        )
        return self.program.emit(op(lhs, rhs), value_range)

    def _power(self, base: SSAValue, exponent: SSAValue) -> SSAValue:
        """``base ** exponent`` kept finite: a small non-negative integer
        exponent takes any base; otherwise integer exponents are brought
        into ``[0, 2]`` and float bases made positive."""
        constant = _splat_number(exponent)
        if constant is not None and constant in (0, 1, 2, 3):
            return self._small_power(base, exponent, int(constant))
        if self.program.kind(base) == "i":
            return self._integer_power(base, exponent)
        return self._float_power(base, exponent)

    def _small_power(self, base: SSAValue, exponent: SSAValue, power: int) -> SSAValue:
        """``base ** exponent`` for a splat ``exponent`` equal to ``power``."""
        if self.program.magnitude(base) ** power > MAGNITUDE_LIMIT:
            base = self.domains.squash(base)
        lo, hi = self.program.ranges[base]
        values = [lo**power, hi**power] + ([0.0] if lo < 0 < hi else [])
        return self.program.emit(g.elementwise(p.POW, base, exponent), _span(values))

    def _integer_power(self, base: SSAValue, exponent: SSAValue) -> SSAValue:
        """``base ** (exponent rem 3)`` unless ``exponent`` is in ``[0, 2]``."""
        low, high = self.program.ranges[exponent]
        if not 0 <= low <= high <= 2:
            three = self.operands.splat(3, g.tensor_type(exponent))
            exponent = self.program.emit(
                g.elementwise(p.REM, exponent, three), (0.0, 2.0)
            )
        top = self.program.ranges[exponent][1]
        if max(self.program.magnitude(base), 1) ** top > MAGNITUDE_LIMIT:
            base = self.domains.squash(base)
        bound = max(self.program.magnitude(base), 1) ** top
        return self.program.emit(g.elementwise(p.POW, base, exponent), (-bound, bound))

    def _float_power(self, base: SSAValue, exponent: SSAValue) -> SSAValue:
        """A positive ``base`` to an ``exponent`` squashed if it could
        overflow."""
        base = self.domains.positive(base, 0.5)
        growth = self.program.magnitude(exponent) * math.log(
            max(self.program.magnitude(base), 2.0)
        )
        if growth > math.log(MAGNITUDE_LIMIT):
            exponent = self.domains.squash(exponent)
        corners = [
            b**e
            for b in self.program.ranges[base]
            for e in self.program.ranges[exponent]
        ]
        return self.program.emit(g.elementwise(p.POW, base, exponent), _span(corners))

    def compare(self) -> bool:
        lhs = self.operands.operand("bif", discontinuous=True)
        predicate = self.choices.one_of(list(ComparisonPredicate))
        self.program.emit(
            g.CompareOp(predicate, lhs, self.operands.operand_like(lhs)), (0.0, 1.0)
        )
        return True

    def select(self) -> bool:
        value = self.operands.operand("bif")
        other = self.operands.operand_like(value)
        condition = self._condition(g.tensor_type(value))
        value_range = _union(self.program.ranges[value], self.program.ranges[other])
        self.program.emit(g.SelectOp(condition, value, other), value_range)
        return True

    def _condition(self, tensor: g.TensorType) -> SSAValue:
        """A bool tensor of ``tensor``'s shape: an earlier one made to fit,
        or a new comparison (of non-floats in ``smooth`` programs)."""
        if self.choices.flag():
            found = self.program.pick(is_bool)
            target = tensor.with_element_type(BOOL.ir_type)
            matched = None if found is None else self.operands.match(found, target)
            if matched is not None:
                return matched
        kind = dtype(tensor.element_type).kind
        element = (
            self.program.element("bi") if self.options.smooth and kind == "f" else None
        )
        target = (
            tensor if element is None else tensor.with_element_type(element.ir_type)
        )
        lhs = self.operands.operand_of(target)
        predicate = self.choices.one_of(list(ComparisonPredicate))
        return self.program.emit(
            g.CompareOp(predicate, lhs, self.operands.operand_of(target)), (0.0, 1.0)
        )

    def cast(self) -> bool:
        value = self.operands.operand("bif")
        kinds = (
            "f" if self.options.smooth and self.program.kind(value) == "f" else "bif"
        )
        target = self.program.element(kinds)
        source = value.owner
        if isinstance(source, g.CastOp) and self.choices.flag():  # a round trip
            original = dtype(g.tensor_type(source.input).element_type)
            target = original if original.kind in kinds else target
        self.operands.cast(value, target)
        return True


def _domain(op: type[g.UnaryOp | g.BinaryOp]) -> str:
    """The element kinds ``op`` is defined on, as ``Operands`` takes them."""
    return "".join(k for k in "bif" if k in op.KIND.domain)


def is_bool(tensor: g.TensorType) -> bool:
    return is_bool_type(tensor.element_type)


def _splat_number(value: SSAValue) -> float | None:
    """The number a splat constant holds, else None."""
    op = value.owner
    if isinstance(op, g.ConstantOp) and op.is_splat:
        return float(op.value.value.data)  # type: ignore[union-attr]
    return None
