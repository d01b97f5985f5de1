"""Element types: their names, their xDSL types, their NumPy dtypes, and
NumPy 2 (NEP 50) type promotion.

irc supports bool, int32, int64, float16, bfloat16, float32 and float64 on
every level. NumPy has no bfloat16 of its own; ``ml_dtypes`` (the package JAX
uses for the same purpose) provides it to the reference interpreter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from irc.errors import IrcTypeError


@dataclass(frozen=True)
class DType:
    """One element type, known by name to the user, by type to the IR."""

    name: str
    kind: str  # "b" (bool), "i" (signed int) or "f" (float)
    bits: int

    @property
    def numpy(self) -> np.dtype:
        """NumPy's dtype, for the reference interpreter and the runtime."""
        return _numpy_dtype(self.name)

    @property
    def ir_type(self) -> Attribute:
        return _IR_TYPES[self.name]

    def __str__(self) -> str:
        return self.name


BOOL = DType("bool", "b", 1)
INT32 = DType("int32", "i", 32)
INT64 = DType("int64", "i", 64)
FLOAT16 = DType("float16", "f", 16)
BFLOAT16 = DType("bfloat16", "f", 16)
FLOAT32 = DType("float32", "f", 32)
FLOAT64 = DType("float64", "f", 64)

ALL_DTYPES = (BOOL, INT32, INT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64)


@functools.cache
def _numpy_dtype(name: str) -> np.dtype:
    """bfloat16's dtype is ``ml_dtypes``', imported on first use: its
    extension module takes most of a second to load, most of ``irc-opt``'s
    start-up otherwise, where no array is ever made."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


_IR_TYPES: dict[str, Attribute] = {
    "bool": IntegerType(1),
    "int32": IntegerType(32),
    "int64": IntegerType(64),
    "float16": Float16Type(),
    "bfloat16": BFloat16Type(),
    "float32": Float32Type(),
    "float64": Float64Type(),
}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_IR_TYPE = {_IR_TYPES[d.name]: d for d in ALL_DTYPES}
_ALIASES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f64": "float64",
    "i32": "int32",
    "i64": "int64",
    "i1": "bool",
    "bool_": "bool",
}


def dtype(value: object) -> DType:
    """The irc dtype of a name, a NumPy/torch dtype, or an xDSL type."""
    if isinstance(value, DType):
        return value
    if isinstance(value, Attribute):
        if value in _BY_IR_TYPE:
            return _BY_IR_TYPE[value]
        raise IrcTypeError(f"element type {value} is not supported by irc")
    if isinstance(value, str):
        name = _ALIASES.get(value, value)
        if name in _BY_NAME:
            return _BY_NAME[name]
    if value is bool:
        return BOOL
    if value is float:
        return FLOAT64
    if value is int:
        return INT64
    name = str(value).removeprefix("torch.")
    if name in _BY_NAME:
        return _BY_NAME[name]
    try:
        numpy_name = np.dtype(value).name  # type: ignore[call-overload]
    except TypeError:
        numpy_name = None
    if numpy_name in _BY_NAME:
        return _BY_NAME[numpy_name]
    supported = ", ".join(d.name for d in ALL_DTYPES)
    raise IrcTypeError(
        f"dtype {value!r} is not supported by irc; use one of {supported}"
    )


def promote(lhs: DType, rhs: DType) -> DType:
    """NumPy 2 promotion of two array dtypes (both strong)."""
    if lhs == rhs:
        return lhs
    if lhs.kind == rhs.kind:
        if lhs.kind == "f" and {lhs, rhs} == {FLOAT16, BFLOAT16}:
            return FLOAT32
        return lhs if lhs.bits >= rhs.bits else rhs
    if "b" in (lhs.kind, rhs.kind):
        return rhs if lhs.kind == "b" else lhs  # bool promotes to any number
    # An int with a float: NumPy 2 picks float64 (no narrower float holds
    # every int32 or int64 value).
    return FLOAT64


def promote_weak(strong: DType, scalar: bool | int | float) -> DType:
    """NEP 50: a Python scalar is weak and takes the array's dtype unless its
    kind is higher (an int array times 0.5 gives float64, as in NumPy)."""
    if isinstance(scalar, bool):
        return strong
    if isinstance(scalar, int):
        return strong if strong.kind in "if" else INT64
    if isinstance(scalar, float):
        return strong if strong.kind == "f" else FLOAT64
    raise IrcTypeError(f"cannot combine {type(scalar).__name__} with a tensor")


def scalar_dtype(scalar: bool | int | float) -> DType:
    """The dtype a Python scalar gets on its own (NumPy's default)."""
    if isinstance(scalar, bool):
        return BOOL
    if isinstance(scalar, int):
        return INT64
    return FLOAT64


# --------------------------------------------------------------------------
# Element types in the IR
# --------------------------------------------------------------------------

#: The element types of every level, as xDSL types.
ELEMENT_TYPES: tuple[Attribute, ...] = (
    IntegerType(1),
    IntegerType(32),
    IntegerType(64),
    Float16Type(),
    BFloat16Type(),
    Float32Type(),
    Float64Type(),
)


def is_float_type(element_type: Attribute) -> bool:
    return isinstance(
        element_type, Float16Type | BFloat16Type | Float32Type | Float64Type
    )


def is_bool_type(element_type: Attribute) -> bool:
    return element_type == IntegerType(1)


def is_int_type(element_type: Attribute) -> bool:
    """Integer types proper (bool is its own kind, as in NumPy)."""
    return isinstance(element_type, IntegerType) and element_type.width.data > 1


#: The element kinds, by the letters ``DType.kind`` uses.
_KIND_NAMES: dict[str, str] = {"b": "bool", "i": "integer", "f": "floating-point"}


def element_kind(element_type: Attribute) -> str:
    """``"b"`` (bool), ``"i"`` (integer) or ``"f"`` (floating point): the
    kind that decides which ops are defined on an element type."""
    if is_bool_type(element_type):
        return "b"
    return "f" if is_float_type(element_type) else "i"


def verify_element_kind(
    op_name: str, element_type: Attribute, kinds: frozenset[str]
) -> None:
    """Reject an element type whose kind is not among ``kinds`` with a
    message naming the kinds the op is defined on."""
    kind = element_kind(element_type)
    if kind not in kinds:
        defined = " and ".join(_KIND_NAMES[k] for k in "bif" if k in kinds)
        raise VerifyException(
            f"{op_name} is not defined on {_KIND_NAMES[kind]} tensors, only on "
            f"{defined} ones; cast them first"
        )


def compute_dtype(value_dtype: np.dtype) -> np.dtype:
    """Where 16-bit floats are computed and accumulated: float32, as on a
    GPU."""
    return (
        FLOAT32.numpy if value_dtype in (FLOAT16.numpy, BFLOAT16.numpy) else value_dtype
    )
