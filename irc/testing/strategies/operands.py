"""Operands of the kind and type an op needs.

:class:`Operands` gives a step its operands: earlier values of the element
kinds it takes (cast if need be, and kept away from discontinuous ops in
``smooth`` programs), values of a given type (a new argument, an earlier
value cast and broadcast to fit, or a constant), and constants, splat or
small dense literals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.dialects.builtin import TensorType as LiteralType
from xdsl.ir import Attribute, SSAValue

from irc.dialects import graph as g
from irc.dtypes import DType, dtype
from irc.shapes import SymExpr
from irc.testing.strategies.program import Program
from irc.testing.strategies.ranges import _span

_FLOAT_CONSTANTS = (1.0, 0.0, -1.0, 0.5, 2.0, -2.5, 3.0)
_INT_CONSTANTS = (1, 0, -1, 2, 3, -7)
_BOOL_CONSTANTS = (1, 0)
_MAX_DENSE_ELEMENTS = 16


class Operands:
    """The operands of the steps of ``program``."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.choices = program.choices
        self.options = program.options

    def cast(self, value: SSAValue, target: DType) -> SSAValue:
        lo, hi = self.program.ranges[value]
        if target.kind == "b":
            value_range = (0.0, 1.0)
        elif target.kind == "i" and self.program.kind(value) == "f":
            value_range = (math.floor(lo), math.ceil(hi))
        else:
            value_range = (lo, hi)
        return self.program.emit(g.CastOp(value, target.ir_type), value_range)

    def as_kind(self, value: SSAValue, kinds: str) -> SSAValue:
        """``value``, cast to an element type of ``kinds`` if needed."""
        if self.program.kind(value) in kinds:
            return value
        return self.cast(value, self.program.element(kinds))

    def operand(self, kinds: str, discontinuous: bool = False) -> SSAValue:
        """A value of one of ``kinds``, cast if need be.

        In ``smooth`` programs no float is cast to an integer or a bool, and
        the operands of ops that jump where a float crosses a threshold
        (``discontinuous``: comparisons, ``floordiv``, ...) are never floats.
        """
        if self.options.smooth:
            if discontinuous:
                kinds = kinds.replace("f", "") or "i"
            if "f" not in kinds:
                return self.program.pick_or_new(
                    lambda t: dtype(t.element_type).kind in kinds, kinds, 0
                )
        value = self.program.pick()
        assert value is not None, "the first argument exists from the start"
        return self.as_kind(value, kinds)

    def broadcastable(
        self, source: Sequence[SymExpr], target: Sequence[SymExpr]
    ) -> bool:
        if len(source) > len(target):
            return False
        aligned = target[len(target) - len(source) :]
        return all(
            s == 1 or s == t or self.program.facts.prove_eq(s, t)
            for s, t in zip(source, aligned)
        )

    def match(self, value: SSAValue, target: g.TensorType) -> SSAValue | None:
        """``value`` cast and broadcast to ``target``, if its shape allows
        (and, in ``smooth`` programs, unless that casts a float to a
        non-float)."""
        source = g.tensor_type(value)
        if not self.broadcastable(source.dims, target.dims):
            return None
        target_kind = dtype(target.element_type).kind
        if (
            self.options.smooth
            and self.program.kind(value) == "f"
            and target_kind != "f"
        ):
            return None
        if source.element_type != target.element_type:
            value = self.cast(value, dtype(target.element_type))
        if source.dims != target.dims:
            value = self.program.emit(
                g.BroadcastOp(value, target.dims), self.program.ranges[value]
            )
        return value

    def operand_like(self, value: SSAValue) -> SSAValue:
        """A second operand of ``value``'s type (see :meth:`operand_of`)."""
        return self.operand_of(g.tensor_type(value))

    def operand_of(self, tensor: g.TensorType) -> SSAValue:
        """A value of type ``tensor``: a new argument (first, so that failing
        programs shrink to ops over fresh arguments), an earlier value made
        to fit, or a constant."""
        source = self.choices.one_of(("argument", "value", "constant"))
        if source == "value":
            other = self.program.pick()
            matched = None if other is None else self.match(other, tensor)
            if matched is not None:
                return matched
        if source == "constant":
            return self.constant(tensor)
        return self.program.new_argument(tensor)

    def splat(self, number: float, tensor: g.TensorType) -> SSAValue:
        element = dtype(tensor.element_type)
        scalar = np.asarray(number).astype(element.numpy)
        attribute: Attribute
        if element.kind == "f":
            attribute = FloatAttr(float(scalar), tensor.element_type)
        else:
            attribute = IntegerAttr(int(scalar), tensor.element_type)
        return self.program.emit(g.ConstantOp(attribute, tensor), (float(scalar),) * 2)

    def dense(self, tensor: g.TensorType, shape: tuple[int, ...]) -> SSAValue:
        element = dtype(tensor.element_type)
        count = math.prod(shape)
        numbers = self.choices.samples(_constant_values(element.kind), count)
        array = np.asarray(numbers).astype(element.numpy)
        wide = np.float64 if element.kind == "f" else np.int64
        literal = DenseIntOrFPElementsAttr.from_list(
            LiteralType(tensor.element_type, shape), array.astype(wide).tolist()
        )
        value_range = _span(array.astype(np.float64).tolist() or [0.0])
        return self.program.emit(g.ConstantOp(literal, tensor), value_range)

    def constant(self, tensor: g.TensorType) -> SSAValue:
        """A splat, or a dense literal when the shape is static and small."""
        shape = tensor.static_shape
        if (
            self.choices.flag()
            and shape is not None
            and math.prod(shape) <= _MAX_DENSE_ELEMENTS
        ):
            return self.dense(tensor, shape)
        kind = dtype(tensor.element_type).kind
        return self.splat(self.choices.one_of(_constant_values(kind)), tensor)


def _constant_values(kind: str) -> tuple[float, ...]:
    """The numbers constants of element ``kind`` hold."""
    if kind == "f":
        return _FLOAT_CONSTANTS
    return _INT_CONSTANTS if kind == "i" else _BOOL_CONSTANTS
