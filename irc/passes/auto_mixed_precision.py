"""``auto-mixed-precision``: float32 graph programs computing in bf16 or f16.

``irc-opt -p 'auto-mixed-precision{dtype=bf16}'`` (``dtype=f16`` for half
precision; ``irc.compile(..., mixed_precision="bf16")``). The pass walks each
function in order and decides per op where it computes: a primitive by its
declaration (``Primitive.precision``), other ops by ``POLICY`` (``LOW``,
``FOLLOW``, ``FULL``, ``KEEP``, in the manner of ``torch.autocast``). Only
float32 values change, and results come back in the caller's dtypes; each
cast it inserts carries ``amp``, the op it was inserted for.

See docs/mixed-precision.md, section "The policy".
"""

# No ``from __future__ import annotations``: xDSL reads the option fields'
# types at run time to parse ``auto-mixed-precision{dtype=f16}``.

from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.primitives.declaration import Precision

__all__ = [
    "LOW_TYPES",
    "POLICY",
    "POLICY_ATTRIBUTE",
    "REASON_ATTRIBUTE",
    "AutoMixedPrecisionPass",
    "Precision",
    "apply_mixed_precision",
]

#: The low types by option value (MLIR's spelling, as in the IR).
LOW_TYPES: dict[str, Attribute] = {"bf16": BFloat16Type(), "f16": Float16Type()}

#: The module attribute recording the policy applied (its low type).
POLICY_ATTRIBUTE = "irc.mixed_precision"
#: The attribute of each inserted cast naming the op it was inserted for.
REASON_ATTRIBUTE = "amp"


#: The policy as data: every graph op not named here is ``FOLLOW``.
POLICY: dict[type[Operation], Precision] = {
    g.MatmulOp: Precision.LOW,
    g.CastOp: Precision.KEEP,
    # Accumulations: each partial sum would round to 8 (bf16) or 11 (f16) bits.
    g.ReduceOp: Precision.FULL,
    g.ScanOp: Precision.FULL,
    g.ScatterAddOp: Precision.FULL,
    # Decisions: a rounded operand would flip comparisons near a tie.
    g.CompareOp: Precision.FULL,
    g.ArgMaxOp: Precision.FULL,
}


def precision_of(op: Operation) -> Precision:
    """A primitive's declared precision (``Primitive.precision``: FULL for
    exponentials, logarithms, divisions, roots and the decisions floordiv
    and rem), else ``op``'s row of :data:`POLICY`; ops of other dialects
    take their operands in their original types (``FULL``)."""
    if g.is_elementwise_op(op):
        return op.KIND.precision
    if isinstance(op, g.GraphOp):
        return POLICY.get(type(op), Precision.FOLLOW)
    return Precision.FULL


@dataclass(frozen=True)
class AutoMixedPrecisionPass(ModulePass):
    """Compute a module's float32 matmuls and their epilogues in ``dtype``
    (``bf16`` or ``f16``), the precision-sensitive ops in float32."""

    name = "auto-mixed-precision"

    #: For ``irc.testing.check_pass``: results may move by the rounding of
    #: the low type (``irc.testing.semantics.precision_slack``).
    changes_precision: ClassVar[bool] = True

    dtype: str = "bf16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        low = LOW_TYPES.get(self.dtype)
        if low is None:
            raise PassFailedException(
                f"auto-mixed-precision: dtype={self.dtype} is not a low type; "
                f"use one of {', '.join(LOW_TYPES)}"
            )
        apply_mixed_precision(op, low)


def apply_mixed_precision(module: ModuleOp, low: Attribute) -> None:
    """Rewrite every function of ``module`` under :data:`POLICY` with low
    type ``low`` (``bf16`` or ``f16``); record the low type on the module
    when that changed any."""
    changed = False
    for function in module.ops:
        if isinstance(function, func.FuncOp) and function.body.blocks:
            changed |= _Converter(low).convert(function.body.blocks[0])
    if changed:
        name = next(key for key, value in LOW_TYPES.items() if value == low)
        module.attributes[POLICY_ATTRIBUTE] = StringAttr(name)


@dataclass
class _Converter:
    """The walk over one function's body."""

    low: Attribute
    #: The float32 values retyped to the low type by this walk.
    lowered: set[SSAValue] = field(default_factory=set)
    #: A float32 value's low twin (its cast down, or the lowered value it is
    #: the cast up of), and a lowered value's cast up.
    cast_down: dict[SSAValue, SSAValue] = field(default_factory=dict)
    cast_up: dict[SSAValue, SSAValue] = field(default_factory=dict)

    def convert(self, body: Block) -> bool:
        """Rewrite ``body``; whether anything changed."""
        precisions = _resolved_precisions(body)
        for op in list(body.ops):
            self.visit(op, precisions[op])
        return bool(self.lowered)

    def visit(self, op: Operation, precision: Precision) -> None:
        if self._runs_low(op, precision):
            self._run_low(op)
        elif precision is Precision.FULL:
            for index, operand in enumerate(op.operands):
                if operand in self.lowered:
                    op.operands[index] = self._full(operand, op)

    def _runs_low(self, op: Operation, precision: Precision) -> bool:
        """A ``LOW`` op with a float32 or lowered operand, or a ``FOLLOW``
        op with a lowered one."""
        if precision is Precision.LOW:
            return any(_is_f32(o) or o in self.lowered for o in op.operands)
        if precision is Precision.FOLLOW:
            return any(o in self.lowered for o in op.operands)
        return False

    def _run_low(self, op: Operation) -> None:
        """Cast ``op``'s float32 operands down and retype its float32 results."""
        for index, operand in enumerate(op.operands):
            if _is_f32(operand):
                op.operands[index] = self._low(operand, op)
        for result in list(op.results):
            if _is_f32(result):
                low_type = g.tensor_type(result).with_element_type(self.low)
                self.lowered.add(Rewriter.replace_value_with_new_type(result, low_type))

    def _low(self, value: SSAValue, user: Operation) -> SSAValue:
        """``value`` (float32) in the low type: the lowered value it is the
        float32 cast of, or its one cast down, inserted before its first user."""
        if value not in self.cast_down:
            self.cast_down[value] = _insert_cast(value, self.low, user)
        return self.cast_down[value]

    def _full(self, value: SSAValue, user: Operation) -> SSAValue:
        """A lowered ``value`` back in float32, cast once."""
        if value not in self.cast_up:
            full = _insert_cast(value, Float32Type(), user)
            self.cast_up[value] = full
            self.cast_down[full] = value
        return self.cast_up[value]


def _resolved_precisions(body: Block) -> dict[Operation, Precision]:
    """Each op's precision, a ``FOLLOW`` op all of whose users compute in
    float32 (``x - max(x)`` before an ``exp``, an epilogue that is returned)
    made ``FULL``: in the low type its result would only be rounded before
    being cast back up. Users come after their operands, so one walk from
    the end resolves chains of such ops."""
    precisions: dict[Operation, Precision] = {}
    for op in reversed(list(body.ops)):
        precision = precision_of(op)
        if precision is Precision.FOLLOW and all(
            precisions.get(use.operation) is Precision.FULL
            for result in op.results
            for use in result.uses
        ):
            precision = Precision.FULL
        precisions[op] = precision
    return precisions


def _is_f32(value: SSAValue) -> bool:
    return isinstance(value.type, g.TensorType) and isinstance(
        value.type.element_type, Float32Type
    )


def _insert_cast(value: SSAValue, element: Attribute, user: Operation) -> SSAValue:
    """A ``graph.cast`` of ``value`` to ``element`` before ``user``, with
    ``user``'s source location and its name as the reason."""
    cast = g.CastOp(value, element)
    cast.location = user.location
    cast.attributes[REASON_ATTRIBUTE] = StringAttr(user.name)
    Rewriter.insert_op(cast, InsertPoint.before(user))
    return cast.result
