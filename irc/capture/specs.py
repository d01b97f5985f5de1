"""Argument specifications: what a captured function's tensor inputs look like."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irc.dtypes import DType
from irc.dtypes import dtype as to_dtype
from irc.errors import TracingError
from irc.shapes import ShapeError, SymExpr, parse_expr


@dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype of a tensor argument.

    A ``str`` dim names a symbol (``TensorSpec(("N", 768), "float32")``): the
    compiled code serves every size of that dim, and dims named alike must be
    equal at call time. A ``str`` dim may also be an expression of symbols
    (``"N*M"``, ``"2*N"``), each of which some other dim names alone: a call
    checks it rather than binding it. An ``int`` dim is static.
    """

    shape: tuple[int | str, ...]
    dtype: DType

    def __init__(self, shape: Sequence[int | str], dtype: object = "float32"):
        if isinstance(shape, int | str):
            shape = (shape,)
        dims = tuple(_check_dim(d) for d in shape)
        object.__setattr__(self, "shape", dims)
        object.__setattr__(self, "dtype", to_dtype(dtype))

    @property
    def dims(self) -> tuple[SymExpr, ...]:
        return tuple(
            parse_expr(d) if isinstance(d, str) else SymExpr.const(d)
            for d in self.shape
        )

    def __repr__(self) -> str:
        return f"TensorSpec({self.shape!r}, {self.dtype.name!r})"


def _check_dim(dim: object) -> int | str:
    if isinstance(dim, bool) or not isinstance(dim, int | str):
        raise TracingError(
            f"a TensorSpec dim must be an int (static) or a str naming a symbol, "
            f"got {dim!r}"
        )
    if isinstance(dim, int):
        if dim < 0:
            raise TracingError(f"a TensorSpec dim must not be negative, got {dim}")
        return dim
    try:
        expr = parse_expr(dim)
    except ShapeError as err:
        raise TracingError(
            f"TensorSpec dim {dim!r} is not a valid symbol name or expression "
            f"({err}); use an identifier such as 'N' or 'seq', or an expression "
            "of them such as 'N*M'"
        ) from None
    if not expr.symbols:
        raise TracingError(
            f"TensorSpec dim {dim!r} is a constant; give it as the int {expr}"
        )
    return dim
