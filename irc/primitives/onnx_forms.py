"""The vocabulary of primitives' ONNX exports (``OnnxForm.export``).

An export is ``(builder, op, operand names) -> result name``; ``builder`` is
irc.onnx's model builder: ``node(op_type, inputs, **attributes)``,
``kind(value)`` (``"f"``, ``"i"``, ``"b"``), ``numpy_dtype(value)``,
``in_float32(value, operand, compute)`` (``compute`` in float32 for 16-bit
floats, which onnxruntime's kernels often lack, rounded once) and
``float_constant(value, number)``. The decompositions below give NumPy's
results where ONNX has no operator of the same meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from irc.primitives.declaration import OnnxExport


def by_kind(op_types: Mapping[str, str]) -> OnnxExport:
    """One ONNX op type per element kind of the first operand."""

    def export(builder: Any, op: Any, operands: list[str]) -> str:
        return builder.node(op_types[builder.kind(op.operands[0])], operands)

    return export


def in_float32(op_type: str) -> OnnxExport:
    """``op_type`` of the operand, in float32 for 16-bit floats."""

    def export(builder: Any, op: Any, operands: list[str]) -> str:
        return builder.in_float32(
            op.operands[0], operands[0], lambda x: builder.node(op_type, [x])
        )

    return export


def trigonometric(op_type: str) -> OnnxExport:
    """ONNX's Sin and Cos take no bfloat16: computed in float32, rounded once."""

    def export(builder: Any, op: Any, operands: list[str]) -> str:
        if builder.numpy_dtype(op.operands[0]).name != "bfloat16":
            return builder.node(op_type, operands)
        wide = builder.node("Cast", operands, to=builder.onnx.TensorProto.FLOAT)
        narrow = builder.onnx.TensorProto.BFLOAT16
        return builder.node("Cast", [builder.node(op_type, [wide])], to=narrow)

    return export


def rsqrt(builder: Any, op: Any, operands: list[str]) -> str:
    """``1 / sqrt(x)``; irc rounds a 16-bit rsqrt once: computed in float32."""
    numpy_type = builder.numpy_dtype(op.operands[0])
    if numpy_type.itemsize >= 4:
        return builder.node("Reciprocal", [builder.node("Sqrt", operands)])
    wide = builder.node("Cast", operands, to=builder.onnx.TensorProto.FLOAT)
    result = builder.node("Reciprocal", [builder.node("Sqrt", [wide])])
    narrow = builder.onnx.helper.np_dtype_to_tensor_dtype(numpy_type)
    return builder.node("Cast", [result], to=narrow)


def floordiv(builder: Any, op: Any, operands: list[str]) -> str:
    lhs, rhs = operands
    if builder.kind(op.operands[0]) == "f":
        return builder.node("Floor", [builder.node("Div", operands)])
    remainder = builder.node("Mod", operands)  # fmod=0 floors, as NumPy does
    return builder.node("Div", [builder.node("Sub", [lhs, remainder]), rhs])


def remainder(builder: Any, op: Any, operands: list[str]) -> str:
    if builder.kind(op.operands[0]) != "f":
        return builder.node("Mod", operands)
    # NumPy's float remainder has the sign of the divisor: x - y * floor(x / y).
    lhs, rhs = operands
    quotient = builder.node("Floor", [builder.node("Div", operands)])
    return builder.node("Sub", [lhs, builder.node("Mul", [rhs, quotient])])


def extremum(op_type: str, on_bools: str) -> OnnxExport:
    """ONNX's Max and Min take no bools: ``on_bools`` (Or, And) there."""

    def export(builder: Any, op: Any, operands: list[str]) -> str:
        is_bool = builder.kind(op.operands[0]) == "b"
        return builder.node(on_bools if is_bool else op_type, operands)

    return export


def absolute(builder: Any, op: Any, operands: list[str]) -> str:
    return builder.node(
        "Identity" if builder.kind(op.operands[0]) == "b" else "Abs", operands
    )


def trunc(builder: Any, op: Any, operands: list[str]) -> str:
    # Rounding towards zero: sign(x) * floor(|x|) (keeps inf and nan; a zero
    # result may lose its sign, as onnxruntime drops it in places).
    def compute(x: str) -> str:
        floor = builder.node("Floor", [builder.node("Abs", [x])])
        return builder.node("Mul", [builder.node("Sign", [x]), floor])

    return builder.in_float32(op.operands[0], operands[0], compute)


def log1p(builder: Any, op: Any, operands: list[str]) -> str:
    # Kahan's log1p: with u = 1 + x rounded, log(u) * x / (u - 1) corrects
    # the rounding of u; where u is 1, x is the answer; inf stays inf.
    def compute(x: str) -> str:
        one = builder.float_constant(op.operands[0], 1.0)
        u = builder.node("Add", [one, x])
        ratio = builder.node("Div", [x, builder.node("Sub", [u, one])])
        corrected = builder.node("Mul", [builder.node("Log", [u]), ratio])
        finite = builder.node(
            "Where", [builder.node("IsInf", [u], detect_negative=0), u, corrected]
        )
        return builder.node("Where", [builder.node("Equal", [u, one]), x, finite])

    return builder.in_float32(op.operands[0], operands[0], compute)


def expm1(builder: Any, op: Any, operands: list[str]) -> str:
    # Kahan's expm1: with u = exp(x), (u - 1) * x / log(u) corrects the
    # rounding of u; where u is 1, x is the answer; where u - 1 is -1, -1;
    # where u is inf, inf.
    def compute(x: str) -> str:
        one = builder.float_constant(op.operands[0], 1.0)
        minus_one = builder.float_constant(op.operands[0], -1.0)
        u = builder.node("Exp", [x])
        u_minus_one = builder.node("Sub", [u, one])
        ratio = builder.node("Div", [x, builder.node("Log", [u])])
        corrected = builder.node("Mul", [u_minus_one, ratio])
        saturated = builder.node(
            "Where",
            [builder.node("Equal", [u_minus_one, minus_one]), minus_one, corrected],
        )
        finite = builder.node(
            "Where", [builder.node("IsInf", [u], detect_negative=0), u, saturated]
        )
        return builder.node("Where", [builder.node("Equal", [u, one]), x, finite])

    return builder.in_float32(op.operands[0], operands[0], compute)


def log_base(base: float) -> OnnxExport:
    """``log(x) / log(base)``."""

    def export(builder: Any, op: Any, operands: list[str]) -> str:
        def compute(x: str) -> str:
            ln_base = builder.float_constant(op.operands[0], float(np.log(base)))
            return builder.node("Div", [builder.node("Log", [x]), ln_base])

        return builder.in_float32(op.operands[0], operands[0], compute)

    return export


def atan2(builder: Any, op: Any, operands: list[str]) -> str:
    # atan(y / x), moved by +-pi (the sign of y) where x's sign bit is set;
    # where both are zeros the quotient's angle is y itself (a signed zero),
    # and where both are infinities, their signs stand in for them (+-pi/4).
    # This gives C's atan2 (NumPy's) for every signed zero, infinity and nan.
    lhs = op.operands[0]

    def compute(y: str, x: str) -> str:
        zero = builder.float_constant(lhs, 0.0)
        one = builder.float_constant(lhs, 1.0)
        pi = builder.float_constant(lhs, float(np.pi))

        def sign_bit(v: str) -> str:
            negative = builder.node("Less", [v, zero])
            # -0.0 has its sign bit set: 1 / -0.0 is -inf.
            reciprocal = builder.node("Div", [one, v])
            return builder.node(
                "Or", [negative, builder.node("Less", [reciprocal, zero])]
            )

        both_inf = builder.node(
            "And", [builder.node("IsInf", [y]), builder.node("IsInf", [x])]
        )
        y_part = builder.node("Where", [both_inf, builder.node("Sign", [y]), y])
        x_part = builder.node("Where", [both_inf, builder.node("Sign", [x]), x])
        angle = builder.node("Atan", [builder.node("Div", [y_part, x_part])])
        both_zero = builder.node(
            "And",
            [builder.node("Equal", [y, zero]), builder.node("Equal", [x, zero])],
        )
        angle = builder.node("Where", [both_zero, y, angle])
        turn = builder.node("Where", [sign_bit(y), builder.node("Neg", [pi]), pi])
        turned = builder.node("Add", [angle, turn])
        result = builder.node("Where", [sign_bit(x), turned, angle])
        # onnxruntime's Where (and its optimizer, which drops a + 0) lose
        # the sign of zeros: the sign is put back by a product, |result| *
        # -1 where the result is negative, or a zero and y's sign bit is set.
        zero_result = builder.node("Equal", [result, zero])
        negative = builder.node(
            "Or",
            [
                builder.node("Less", [result, zero]),
                builder.node("And", [zero_result, sign_bit(y)]),
            ],
        )
        minus_one = builder.float_constant(lhs, -1.0)
        factor = builder.node("Where", [negative, minus_one, one])
        return builder.node("Mul", [builder.node("Abs", [result]), factor])

    numpy_type = builder.numpy_dtype(lhs)
    if numpy_type.itemsize >= 4:
        return compute(*operands)
    float32 = builder.onnx.TensorProto.FLOAT
    wide = [builder.node("Cast", [o], to=float32) for o in operands]
    narrow = builder.onnx.helper.np_dtype_to_tensor_dtype(numpy_type)
    return builder.node("Cast", [compute(*wide)], to=narrow)
