"""The kinds of kernel: what ``fuse`` decides and every level below keeps.

A ``fusion.kernel``'s kind fixes its iteration space (one program per tile of
elements, per row, or per output tile of a matmul); ``tile`` builds the loop
nest of that kind, and the ``loop``, ``memory`` and ``triton`` kernels carry
it on, so that each level's verifier and each pass read the same names.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum


class KernelKind(StrEnum):
    """A kernel's kind, as the kernels' syntax spells it (in the order
    verifiers list them)."""

    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    MATMUL = "matmul"
    ATTENTION = "attention"


_NAMES = frozenset(KernelKind)


def kernel_kind_error(kind: str) -> str | None:
    """Why ``kind`` is not a kernel kind, or None if it is one."""
    if kind in _NAMES:
        return None
    known = ", ".join(KernelKind)
    return f"unknown kernel kind '{kind}'; expected one of {known}"


def parse_kernel_kind(parser: Parser) -> str:
    """A kernel's kind in its header: an identifier (or a string literal,
    which is how an unknown kind that is no identifier prints)."""
    kind = parser.parse_optional_identifier_or_str_literal()
    if kind is None:
        parser.raise_error(
            f"identifier expected (the kernel kind: {', '.join(KernelKind)})"
        )
    return kind


@irdl_custom_directive
class KernelKindName(CustomDirective):
    """``reduction``: a kernel's kind (a ``StringAttr`` property) in the
    kernels' headers, bare when it is an identifier (as every known kind
    is), else quoted."""

    kind: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.kind.set(state, StringAttr(parse_kernel_kind(parser)))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        kind = self.kind.get(op)
        assert isinstance(kind, StringAttr), "verified"
        printer.print_identifier_or_string_literal(kind.data)


# --------------------------------------------------------------------------
# Launch attributes: what ``tile`` decides about a kernel's compilation and
# launch, carried as discardable attributes of the loop, memory and triton
# kernels (``attributes {num_warps = 8 : i64, ...}``) down to the emitter
# and the launcher.
# --------------------------------------------------------------------------


class MatmulPrecision(StrEnum):
    """How a float32 matmul multiplies: IEEE fp32 (NumPy's results, as
    torch's ``"highest"``) or TF32 on tensor cores (10-bit mantissas,
    float32 accumulation, as torch's ``"high"``)."""

    IEEE = "ieee"
    TF32 = "tf32"


#: The kernel attribute naming its ``MatmulPrecision`` (matmul kernels).
MATMUL_PRECISION_ATTRIBUTE = "matmul_precision"
#: The kernel attributes a launch passes to Triton as ``num_warps=`` and
#: ``num_stages=`` (Triton's defaults without them).
NUM_WARPS_ATTRIBUTE = "num_warps"
NUM_STAGES_ATTRIBUTE = "num_stages"
#: The kernel attribute naming the tiles whose size the launch chooses: a
#: dictionary from a tile to the symbolic extent its lanes walk
#: (``launch_tiles = {BLOCK_R = #sym.expr<D>}``). The launcher passes the
#: next power of two of the extent, at most the tile's declared size (what
#: the IR's tile types hold and the reference interpreters run: masks cut
#: the same lanes either way), at least ``MIN_LAUNCH_TILE`` (fewer compiled
#: variants), with warps to match.
LAUNCH_TILES_ATTRIBUTE = "launch_tiles"
MIN_LAUNCH_TILE = 128
