"""The kinds of kernel: what ``fuse`` decides and every level below keeps.

A ``fusion.kernel``'s kind fixes its iteration space (one program per tile of
elements, per row, or per output tile of a matmul); ``tile`` builds the loop
nest of that kind, and the ``loop``, ``memory`` and ``triton`` kernels carry
it on, so that each level's verifier and each pass read the same names.
"""

from __future__ import annotations

from xdsl.utils.str_enum import StrEnum


class KernelKind(StrEnum):
    """A kernel's kind, as the kernels' syntax spells it (in the order
    verifiers list them)."""

    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    MATMUL = "matmul"


_NAMES = frozenset(KernelKind)


def kernel_kind_error(kind: str) -> str | None:
    """Why ``kind`` is not a kernel kind, or None if it is one."""
    if kind in _NAMES:
        return None
    known = ", ".join(KernelKind)
    return f"unknown kernel kind '{kind}'; expected one of {known}"
