"""The kinds of kernel: what ``fuse`` decides and every level below keeps.

A ``fusion.kernel``'s kind fixes its iteration space (one program per tile of
elements, per row, or per output tile of a matmul); ``tile`` builds the loop
nest of that kind, and the ``loop``, ``memory`` and ``triton`` kernels carry
it on, so that each level's verifier and each pass read the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

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


class KernelKind:
    """One kind of kernel, the one object every level names it by.

    The kind's behaviour at each level is defined by that level, in a
    ``KindTable`` keyed by these objects: the fusion dialect's contract
    (``irc.dialects.fusion.CONTRACTS``), what a group of the kind admits in
    ``fuse`` (``irc.lowering.graph_to_fusion``) and its strategy in ``tile``
    (``irc.lowering.fusion_to_loop.STRATEGIES``). A level-neutral module
    cannot hold them: a dialect may not import lowering code. A new kind is
    an object here, listed in ``KERNEL_KINDS``, and an entry in each table;
    a table left without it fails when the level's module loads.
    """

    def __init__(self, name: str):
        #: The kind as the kernels' syntax spells it.
        self.name = name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"KernelKind({self.name!r})"


T = TypeVar("T")

POINTWISE = KernelKind("pointwise")
REDUCTION = KernelKind("reduction")
MATMUL = KernelKind("matmul")
ATTENTION = KernelKind("attention")
ATTENTION_BACKWARD = KernelKind("attention_backward")

#: Every kernel kind by its name (in the order verifiers list them).
KERNEL_KINDS: dict[str, KernelKind] = {
    kind.name: kind
    for kind in (POINTWISE, REDUCTION, MATMUL, ATTENTION, ATTENTION_BACKWARD)
}


def kernel_kind_error(kind: str) -> str | None:
    """Why ``kind`` is not a kernel kind's name, or None if it is one."""
    if kind in KERNEL_KINDS:
        return None
    return f"unknown kernel kind '{kind}'; expected one of {', '.join(KERNEL_KINDS)}"


def kernel_kind(name: str) -> KernelKind:
    """The kind named ``name`` (a verified kernel's: the verifier checks it
    with ``kernel_kind_error``)."""
    return KERNEL_KINDS[name]


class KindTable(Generic[T]):
    """What one level knows of every kernel kind (its ``T``), filled by
    that level's module with ``register`` and complete once it has loaded
    (``check_complete``), so that a new kind cannot be forgotten by a
    level."""

    def __init__(self, what: str):
        #: What the table holds, for its errors (``the tiling strategy``).
        self.what = what
        self._entries: dict[KernelKind, T] = {}

    def register(self, kind: KernelKind) -> Callable[[T], T]:
        """A decorator making its argument the entry of ``kind``."""

        def add(entry: T) -> T:
            assert kind not in self._entries, f"{self.what} of {kind} given twice"
            self._entries[kind] = entry
            return entry

        return add

    def __getitem__(self, kind: KernelKind) -> T:
        return self._entries[kind]

    def check_complete(self) -> None:
        missing = [
            kind.name for kind in KERNEL_KINDS.values() if kind not in self._entries
        ]
        assert not missing, f"no {self.what} for the kernel kinds {', '.join(missing)}"


def parse_kernel_kind(parser: Parser) -> str:
    """A kernel's kind in its header: an identifier (or a string literal,
    which is how an unknown kind that is no identifier prints)."""
    kind = parser.parse_optional_identifier_or_str_literal()
    if kind is None:
        parser.raise_error(
            f"identifier expected (the kernel kind: {', '.join(KERNEL_KINDS)})"
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
