"""The vocabulary of primitives' gradient rules (``Primitive.gradient``).

A rule gives the cotangent of one operand: ``rule(emit, op, cotangent)``,
where ``op`` is the forward graph op, ``cotangent`` its result's cotangent
and ``emit`` autodiff's graph builder (irc.passes.autodiff.emitter: ``add``,
``mul``, ``neg``, ``apply(primitive, *operands)``, ``compare``, ``select``,
``constant_like``...). None means zero: the result does not vary with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from irc.primitives.declaration import OperandGradient

#: ``(emit, x, z) -> value`` for a unary op ``z = f(x)``.
Factor = Callable[[Any, Any, Any], Any]


def zero(emit: Any, op: Any, cotangent: Any) -> None:
    """A piecewise constant function: zero derivative."""
    return None


def identity(emit: Any, op: Any, cotangent: Any) -> Any:
    return cotangent


def negated(emit: Any, op: Any, cotangent: Any) -> Any:
    return emit.neg(cotangent)


def times(factor: Factor) -> OperandGradient:
    """``g * factor(x, z)`` for a unary op ``z = f(x)``."""

    def rule(emit: Any, op: Any, cotangent: Any) -> Any:
        return emit.mul(cotangent, factor(emit, op.operands[0], op.results[0]))

    return rule


def reciprocal_of(denominator: Factor) -> OperandGradient:
    """``g / denominator(x, z)`` for a unary op ``z = f(x)``."""

    def rule(emit: Any, op: Any, cotangent: Any) -> Any:
        return emit.div(cotangent, denominator(emit, op.operands[0], op.results[0]))

    return rule


def one_minus(emit: Any, value: Any) -> Any:
    return emit.sub(emit.constant_like(1, value), value)


def one_plus(emit: Any, value: Any) -> Any:
    return emit.add(emit.constant_like(1, value), value)
