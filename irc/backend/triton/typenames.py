"""irc's element types as the emitted source spells them: Triton's ``tl``
types (``tl.float32``; ``tl.int1`` for bool), ``ASTSource`` signature types
(``*fp32``, ``i64``) and PyTorch's dtypes (``torch.float32``, or the
prelude's global of it, ``_IRC_FLOAT32``, in a launcher's per-call code), and the
family of code (float, int, bool) an element type takes. An element type
with no counterpart is an ``EmitError``.
"""

from __future__ import annotations

from xdsl.ir import Attribute

from irc.backend.triton.errors import EmitError
from irc.dialects import triton as tt
from irc.dtypes import ALL_DTYPES, BOOL, DType, dtype
from irc.errors import IrcError

#: Triton's name of each dtype: its own, but ``tl.int1`` for bool.
_TL_TYPES = {d.name: "tl.int1" if d is BOOL else f"tl.{d.name}" for d in ALL_DTYPES}
_SIGNATURE_TYPES = {
    "bool": "i1",
    "int32": "i32",
    "int64": "i64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
}
#: Signed integer types of each float's bit width, to spell special values.
BITS_TYPES = {16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}


def _dtype(element: Attribute) -> DType:
    try:
        return dtype(element)
    except IrcError as err:
        raise EmitError(f"element type {element} has no Triton counterpart") from err


def _dtype_name(element: Attribute) -> str:
    return _dtype(element).name


def tl_type(element: Attribute) -> str:
    """``tl.float32`` for ``f32``, ..."""
    return _TL_TYPES[_dtype_name(element)]


def signature_type(type_: Attribute) -> str:
    """The ``ASTSource`` signature of a kernel argument: ``*fp32``, ``i64``."""
    if isinstance(type_, tt.PointerType):
        return "*" + _SIGNATURE_TYPES[_dtype_name(type_.element_type)]
    return _SIGNATURE_TYPES[_dtype_name(type_)]


def element_kind(element: Attribute) -> str:
    """``"f"``, ``"i"`` or ``"b"``: what family of Triton code applies."""
    return _dtype(element).kind


def is_half(element: Attribute) -> bool:
    return element_kind(element) == "f" and dtype(element).bits == 16


#: PyTorch's name of each dtype.
_TORCH_TYPES = {d.name: f"torch.{d.name}" for d in ALL_DTYPES}


def torch_type(element: Attribute) -> str:
    return _TORCH_TYPES[_dtype_name(element)]


def host_torch_type(element: Attribute) -> str:
    """``_IRC_FLOAT32`` for ``f32``: the prelude's global of its torch dtype,
    which a launcher reads per call (faster than ``torch.float32``)."""
    return f"_IRC_{_dtype_name(element).upper()}"
