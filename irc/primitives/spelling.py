"""The vocabulary of primitives' Triton spellings (``TritonSpelling``).

16-bit floats compute in float32 and round once to their type, which is
what NumPy (and ml_dtypes for bfloat16) does. It is also what keeps the
interpreter right: Triton 3.9's interpreter holds bfloat16 blocks as their
uint16 bits, so it negates, compares and multiplies the bits, and it
truncates float32 -> bfloat16 instead of rounding to nearest even;
``_irc_to_bf16`` (the emitted prelude) rounds with integer arithmetic that
both the interpreter and the GPU run the same way. float32 division and
square roots are the correctly rounded ``tl.div_rn``/``tl.sqrt_rn`` (the
defaults are approximate on GPUs).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Attribute

from irc.dtypes import dtype
from irc.primitives.declaration import Spelling


def is_half(element: Attribute) -> bool:
    """A 16-bit float, which computes in float32."""
    return dtype(element).name in ("float16", "bfloat16")


def wide(x: str, element: Attribute) -> str:
    """``x`` as float32 if it is a 16-bit float."""
    return f"{x}.to(tl.float32)" if is_half(element) else x


def narrow(x: str, element: Attribute) -> str:
    """A float32 ``x`` rounded (to nearest even) to a 16-bit ``element``."""
    if dtype(element).name == "bfloat16":
        return f"_irc_to_bf16({x})"
    if dtype(element).name == "float16":
        return f"{x}.to(tl.float16)"
    return x


def in_f32(text: Callable[..., str]) -> Spelling:
    """``text`` of the operands, computed in float32 for 16-bit floats."""

    def spell(element: Attribute, *operands: str) -> str:
        return narrow(text(*(wide(x, element) for x in operands)), element)

    return spell


def in_f64(template: str) -> Callable[[str], str]:
    """``template`` of the operand computed in float64 and rounded once back
    to its type (Triton's float32 functions are approximate on GPUs)."""
    return lambda x: template.format(f"{x}.to(tl.float64)") + f".to({x}.dtype)"


def as_is(text: Callable[..., str]) -> Spelling:
    """``text`` of the operands, in their own type."""
    return lambda element, *operands: text(*operands)


def infix(operator: str) -> Callable[[str, str], str]:
    return lambda a, b: f"({a} {operator} {b})"


def call(function: str) -> Callable[..., str]:
    return lambda *operands: f"{function}({', '.join(operands)})"


def nan_first(comparison: str) -> Spelling:
    """NumPy's maximum (``>``) or minimum (``<``) of floats: the first
    operand when it is NaN or wins, else the second (which decides the sign
    of a zero result); float16's loop keeps the first on ties."""

    def spell(element: Attribute, a: str, b: str) -> str:
        order = comparison + ("=" if dtype(element).name == "float16" else "")
        wa, wb = wide(a, element), wide(b, element)
        return f"tl.where(({wa} {order} {wb}) | ({wa} != {wa}), {a}, {b})"

    return spell


def int_pow(element: Attribute, a: str, b: str) -> str:
    """Integer powers by squaring (``_irc_pow_i`` of the prelude)."""
    return f"_irc_pow_i({a}, {b}, {dtype(element).bits - 1})"
