"""64-bit safety by construction (issue 33, item 4).

- ``bufferize`` computes a hand-written kernel's offsets (``row * D +
  col``) in the indices' narrow type only where the guards prove the
  buffer small enough, by the tiler's own rule (``indices_fit``); otherwise
  in ``i64``. The pipeline's own i32 kernels are proven by that rule, so
  their IR is unchanged.
- The bounds checker's counter-example search evaluates narrow integers as
  the GPU does, wrapping around, and reports an access whose index went
  through a wrap on a lane where it is active, with the wrapping values;
  bindings past ``2**16`` and ``2**31`` are tried when an index is narrow.
- The interval analysis narrows each branch of a ``tile.select`` by its
  condition (``select(i < N, i, 0)`` reads ``i`` only below ``N``).

FileCheck forms: ``tests/filecheck/transforms/bufferize-index-width.mlir``
and ``tests/filecheck/irc-opt/check-bounds-wrap.mlir``.
"""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialects.builtin import IntegerType, ModuleOp

import irc
from irc.analysis.bounds import check_bounds
from irc.analysis.bounds.core import (
    Access,
    KernelIntervals,
    facts_of,
    find_counter_example,
)
from irc.backend.triton import emit_module
from irc.dialects import loop, memory, tile
from irc.ir import default_context, parse_module, print_module, verify_module
from irc.lowering.fusion_to_loop.builder import indices_fit
from irc.lowering.loop_to_memory import BufferizePass
from irc.lowering.memory_to_triton import LowerMemoryToTritonPass
from irc.shapes import Facts, SymExpr
from irc.testing import check_semantics

#: A hand-written loop kernel over ``[N, D]`` rows in i32: program ``row``
#: of axis 0, 128 columns per program of axis 1. ``bufferize`` makes its
#: offsets ``row * D + col``, which wrap in i32 once ``N*D`` passes 2**31.
ROWS = """
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  GUARDS
  %y = loop.kernel @k0 pointwise (%x) grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "hand-written" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %row = tile.program_id 0 : i32
    %cb = tile.program_id 1 : i32
    %c128 = tile.constant 128 : i32
    %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
    %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
    %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
    %d = tile.size D : i32
    %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
    %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    %e = tile.unary exp %v : !loop.tile<[128], f32>
    loop.write %e to 0[%row, %col] mask %m : !loop.tile<[128], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1>
  }
  func.return %y : !graph.tensor<[N, D], f32>
}
"""

#: What ``bufferize`` made of ``ROWS`` before issue 33: the offsets in
#: i32, ``row * D`` wrapping around on a buffer past 2**31 elements.
OLD_FORM = """
memory.kernel @k0 pointwise (%a: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N, D], [D, 1], f32>) inputs 1 grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "hand-written" {
  %0 = tile.size D : i32
  %row = tile.program_id 0 : i32
  %cb = tile.program_id 1 : i32
  %c128 = tile.constant 128 : i32
  %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
  %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
  %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
  %d = tile.size D : i32
  %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
  %rowstart = tile.binary mul %row, %0 : (i32, i32) -> i32
  %off = tile.binary add %rowstart, %col : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
  %v = memory.load %a[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
  %e = tile.unary exp %v : !loop.tile<[128], f32>
  memory.store %e, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1>
}
func.func @rows(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  GUARDS
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}
"""

#: Symbols bound to large values: a buffer of 65537 * 65537 = 4295098369
#: elements, past 2**32, checked symbolically (nothing is allocated).
LARGE = ["N == 65537", "D == 65537"]


def _with_guards(text: str, facts: list[str]) -> ModuleOp:
    guards = "\n  ".join(f'sym.guard {fact}, "test"' for fact in facts)
    module = parse_module(text.replace("GUARDS", guards))
    verify_module(module)
    return module


def _bufferized(facts: list[str]) -> ModuleOp:
    module = _with_guards(ROWS, facts)
    BufferizePass().apply(default_context(), module)
    verify_module(module)
    return module


def _offset_widths(module: ModuleOp) -> list[int]:
    widths = []
    for op in module.walk():
        if isinstance(op, memory.LoadOp | memory.StoreOp):
            element = loop.element_of(op.offset.type)
            assert isinstance(element, IntegerType)
            widths.append(element.width.data)
    return widths


def _narrow_products(module: ModuleOp) -> list[tile.BinaryOp]:
    """The ``mul`` ops of ``module`` computed in fewer than 64 bits."""
    return [
        op
        for op in module.walk()
        if isinstance(op, tile.BinaryOp)
        and op.kind.data.name == "mul"
        and loop.element_of(op.result.type) != IntegerType(64)
    ]


# bufferize ------------------------------------------------------------------------


def test_bufferize_widens_offsets_that_could_wrap() -> None:
    """Without guards ``N*D`` is unbounded: the offsets are i64, the i32
    indices cast up before ``row * D``, the stride an i64 size."""
    module = _bufferized([])
    assert _offset_widths(module) == [64, 64]
    text = print_module(module)
    assert "tile.size D : i64" in text
    assert "tile.cast %row : i32 -> i64" in text
    # Only the kernel's own column arithmetic stays i32 (cb * 128).
    assert [op.result.name_hint for op in _narrow_products(module)] == ["start"]


def test_bufferize_keeps_narrow_offsets_the_guards_prove() -> None:
    """``N*D <= 2**30 - 1`` is the tiler's rule for i32: kept."""
    module = _bufferized(["N*D <= 1073741823"])
    assert _offset_widths(module) == [32, 32]
    assert "tile.cast" not in print_module(module)


def test_bufferize_widens_just_past_the_rule() -> None:
    """One element more than the rule allows: i64 (the boundary is the
    tiler's, ``2**30 - 1`` leaving room for an offset plus a block)."""
    assert _offset_widths(_bufferized(["N*D <= 1073741824"])) == [64, 64]
    assert _offset_widths(_bufferized(LARGE)) == [64, 64]


def test_an_index_used_as_it_is_keeps_its_type() -> None:
    """A 1-D access adds no arithmetic, so nothing of bufferize's can wrap:
    the index stays the offset, in its own type."""
    # A column-0 reader: out[row] = x[row, 0].
    source = """
func.func @first(%x: !graph.tensor<[M, D], f32>) -> !graph.tensor<[M], f32> {
  %y = loop.kernel @k0 pointwise (%x) grid [M] tiles {} symbols [] reason "" : (!graph.tensor<[M, D], f32>) -> (!graph.tensor<[M], f32>) {
  ^bb0(%a: !graph.tensor<[M, D], f32>):
    %row = tile.program_id 0 : i32
    %zero = tile.constant 0 : i32
    %v = loop.read %a[%row, %zero] : !graph.tensor<[M, D], f32>[i32, i32] -> f32
    loop.write %v to 0[%row] : f32[i32]
  }
  func.return %y : !graph.tensor<[M], f32>
}
"""
    module = parse_module(source)
    BufferizePass().apply(default_context(), module)
    verify_module(module)
    # The 2-D read is widened, the 1-D write keeps %row as its offset.
    assert _offset_widths(module) == [64, 32]
    store = next(op for op in module.walk() if isinstance(op, memory.StoreOp))
    assert store.offset.name_hint == "row"


def test_the_pipeline_keeps_its_i32_kernels() -> None:
    """Facts that bound the sizes give the tiler i32 indices, which
    bufferize keeps: no offset widened, no cast added."""

    def softmax(x: np.ndarray) -> np.ndarray:
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    compiled = irc.compile(
        softmax,
        irc.TensorSpec(("N", "D"), "float32"),
        facts=["N <= 4096", "D <= 4096"],
    )
    loop_text, memory_text = compiled.ir("loop"), compiled.ir("memory")
    assert "tile.program_id 0 : i32" in loop_text
    module = parse_module(memory_text)
    assert set(_offset_widths(module)) == {32}
    casts = re.compile(r"tile\.cast .* -> (!loop\.tile<\[[^]]*\], )?i64")
    assert len(casts.findall(memory_text)) == len(casts.findall(loop_text))


def test_the_widened_kernel_computes_what_the_loop_kernel_does() -> None:
    """The loop and memory interpreters agree on random bindings and
    inputs: the casts and i64 offsets address the same elements."""
    check_semantics(parse_module(ROWS.replace("GUARDS", "")), "bufferize", runs=3)


def test_the_widened_kernel_lowers_to_triton_in_64_bits() -> None:
    """The triton level keeps the i64 offsets; the emitted kernel widens the
    row before multiplying it by D."""
    module = _bufferized([])
    LowerMemoryToTritonPass().apply(default_context(), module)
    verify_module(module)
    source = emit_module(module)
    assert "v_row.to(tl.int64)" in source


# The bounds checker: wrapping ----------------------------------------------------------


def test_the_old_form_is_reported_with_the_wrapping_values() -> None:
    """The i32 offsets that bufferize used to make, on a buffer of
    65537 x 65537 elements: the checker names the ``mul`` that wraps, its
    operands, and the exact and wrapped values."""
    (load, store) = check_bounds(_with_guards(OLD_FORM, LARGE))
    assert load.message == (
        "memory.load reads %a: !memory.buffer<[N, D], [D, 1], f32> at an offset "
        "that wraps around: with D = 65537, N = 65537, program id [65533, 0], "
        "lane [0] reads offset -131075, outside [0, 4295098369), through "
        "%rowstart = tile.binary mul of 65533 and 65537, which is 4294836221 "
        "but wraps around to -131075 in i32"
    )
    assert 65533 * 65537 == 4294836221
    assert 4294836221 - 2**32 == -131075
    assert store.message.startswith("memory.store writes %out")


def test_the_old_form_wraps_without_guards_too() -> None:
    """Unbounded sizes: large bindings are tried once the index is i32,
    and the smallest that wraps is reported."""
    found = check_bounds(_with_guards(OLD_FORM, []))
    assert len(found) == 2
    assert all("at an offset that wraps around" in v.message for v in found)
    assert "with D = 65537, N = 65537" in found[0].message


def test_a_buffer_past_2_31_elements_is_proven_in_i64() -> None:
    """The new form under the same large binding: every access proven at
    the memory and triton levels (4295098369 elements, symbolically)."""
    module = _bufferized(LARGE)
    assert check_bounds(module) == []
    LowerMemoryToTritonPass().apply(default_context(), module)
    assert check_bounds(module) == []


def test_small_guards_prove_the_old_form() -> None:
    """The same i32 offsets where the guards keep ``N*D`` below 2**31:
    nothing wraps, nothing reported."""
    assert check_bounds(_with_guards(OLD_FORM, ["N*D <= 1073741823"])) == []


#: A kernel reading only row 0 through a select: ``row * D`` wraps in i32
#: on later rows, where the select picks 0 instead.
FIRST_ROW = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [D] reason "row 0" {
  %row = tile.program_id 0 : i32
  %d = tile.size D : i32
  %one = tile.constant 1 : i32
  %zero = tile.constant 0 : i32
  %first = tile.cmp lt %row, %one : (i32, i32) -> i1
  %prod = tile.binary mul %row, %d : (i32, i32) -> i32
  %off = tile.select %first, %prod, %zero : (i1, i32, i32) -> i32
  %v = memory.load %x[%off] : !memory.buffer<[N, D], [D, 1], f32>[i32] -> f32
  memory.store %v, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i32]
}
func.func @f(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N], [1], f32> {
  GUARDS
  %y = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  func.return %y : !memory.buffer<[N], [1], f32>
}
"""


def _load_access(module: ModuleOp) -> tuple[KernelIntervals, Access]:
    kernel = next(op for op in module.walk() if isinstance(op, memory.KernelOp))
    load = next(op for op in kernel.walk() if isinstance(op, memory.LoadOp))
    launch = next(op for op in module.walk() if isinstance(op, memory.LaunchOp))
    facts = facts_of([kernel, launch])  # the launching function's guards
    assert facts is not None
    buffer = load.buffer.type
    assert isinstance(buffer, memory.BufferType)
    access = Access(load, "reads", (load.offset,), (buffer.numel,), load.mask, "%x")
    return KernelIntervals(kernel, facts), access


def test_a_wrap_the_select_does_not_pick_is_no_counter_example() -> None:
    """The search evaluates ``row * D`` on every row and it wraps at
    N = D = 65537, but the select reads it only on row 0: no lane reads
    through the wrap, so there is no counter-example."""
    intervals, access = _load_access(_with_guards(FIRST_ROW, LARGE))
    assert find_counter_example(intervals, access) is None


def test_a_wrap_the_select_picks_is_a_counter_example() -> None:
    """The same kernel selecting the product on every row but the first:
    the wrap is reported."""
    text = FIRST_ROW.replace(
        "%off = tile.select %first, %prod, %zero",
        "%off = tile.select %first, %zero, %prod",
    )
    intervals, access = _load_access(_with_guards(text, LARGE))
    found = find_counter_example(intervals, access)
    assert found is not None and found.wraps
    assert "through %prod = tile.binary mul of" in found.text


#: A kernel that computes its own flat index ``row * D + col`` in i32: not
#: bufferize's arithmetic (a 1-D index is its own offset), so the bounds
#: checker is what catches the wrap, at the loop level already.
FLAT = """
func.func @flat(%x: !graph.tensor<[N*D], f32>) -> !graph.tensor<[N*D], f32> {
  sym.guard N == 65537, "large"
  sym.guard D <= 65536, "columns fit one block row"
  %y = loop.kernel @k0 pointwise (%x) grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "flat rows" : (!graph.tensor<[N*D], f32>) -> (!graph.tensor<[N*D], f32>) {
  ^bb0(%a: !graph.tensor<[N*D], f32>):
    %row = tile.program_id 0 : i32
    %cb = tile.program_id 1 : i32
    %c128 = tile.constant 128 : i32
    %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
    %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
    %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
    %d = tile.size D : i32
    %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
    %rowstart = tile.binary mul %row, %d : (i32, i32) -> i32
    %i = tile.binary add %rowstart, %col : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
    %v = loop.read %a[%i] mask %m : !graph.tensor<[N*D], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    loop.write %v to 0[%i] mask %m : !loop.tile<[128], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1>
  }
  func.return %y : !graph.tensor<[N*D], f32>
}
"""


def test_a_kernels_own_wrap_is_reported_at_the_loop_level() -> None:
    (read, write) = check_bounds(parse_module(FLAT))
    assert read.message.startswith(
        "loop.read reads %x: !graph.tensor<[D*N], f32> at an offset that wraps "
        "around: with D = 65536, N = 65537, program id [65533, 0], lane [0]"
    )
    assert read.message.endswith(
        "through %rowstart = tile.binary mul of 65533 and 65536, which is "
        "4294770688 but wraps around to -196608 in i32"
    )
    assert write.message.startswith("loop.write writes output 0 of @k0")
    # bufferize leaves the kernel's own arithmetic alone: still i32.
    module = parse_module(FLAT)
    BufferizePass().apply(default_context(), module)
    assert _offset_widths(module) == [32, 32]


# The bounds checker: selects narrowed by their condition -----------------------------


#: Reads through ``select(i < N, i, 0)`` and ``select(i >= N, 0, i)``,
#: without masks: in bounds on every lane.
CLAMPED = """
memory.kernel @k0 pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [(N + 127) floordiv 128] tiles {BLOCK = 128} symbols [N] reason "clamped reads" {
  %pid = tile.program_id 0 : i64
  %c128 = tile.constant 128 : i64
  %start = tile.binary mul %pid, %c128 : (i64, i64) -> i64
  %lanes = tile.range "BLOCK" : !loop.tile<[128], i64>
  %i = tile.binary add %start, %lanes : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
  %n = tile.size N : i64
  %zero = tile.constant 0 : i64
  %in = tile.cmp lt %i, %n : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
  %safe = tile.select %in, %i, %zero : (!loop.tile<[128], i1>, !loop.tile<[128], i64>, i64) -> !loop.tile<[128], i64>
  %v = memory.load %x[%safe] : !memory.buffer<[N], [1], f32>[!loop.tile<[128], i64>] -> !loop.tile<[128], f32>
  %past = tile.cmp ge %i, %n : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
  %back = tile.select %past, %zero, %i : (!loop.tile<[128], i1>, i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
  %w = memory.load %x[%back] : !memory.buffer<[N], [1], f32>[!loop.tile<[128], i64>] -> !loop.tile<[128], f32>
  %s = tile.binary add %v, %w : (!loop.tile<[128], f32>, !loop.tile<[128], f32>) -> !loop.tile<[128], f32>
  memory.store %s, %out[%i] mask %in : !loop.tile<[128], f32>, !memory.buffer<[N], [1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
}
"""


def test_a_select_is_narrowed_by_its_condition() -> None:
    module = parse_module(CLAMPED)
    assert check_bounds(module) == []
    kernel = next(op for op in module.walk() if isinstance(op, memory.KernelOp))
    facts = facts_of([kernel])
    assert facts is not None
    intervals = KernelIntervals(kernel, facts)
    safe, back = (op.offset for op in kernel.walk() if isinstance(op, memory.LoadOp))
    last = SymExpr.symbol("N") - 1
    for offset in (safe, back):
        low, high = intervals.interval(offset)
        assert low == SymExpr.const(0)
        assert high is not None and facts.prove_le(high, last)


def test_a_select_on_the_wrong_condition_is_reported() -> None:
    """``i <= N`` lets lane N through: a counter-example, on each read."""
    text = CLAMPED.replace("%in = tile.cmp lt", "%in = tile.cmp le").replace(
        "%past = tile.cmp ge", "%past = tile.cmp gt"
    )
    found = check_bounds(parse_module(text))
    reads = [v.message for v in found if v.message.startswith("memory.load")]
    assert len(reads) == 2
    assert all(
        m.endswith(
            "with N = 1, program id [0], lane [1] reads offset 1, outside [0, 1)"
        )
        for m in reads
    )


def test_a_conjunction_narrows_only_its_true_branch() -> None:
    """``not (a and b)`` is no comparison: the false branch is not
    narrowed, so ``select(i >= N and i >= 0, 0, i)`` stays unproven (and
    in bounds: no counter-example)."""
    text = CLAMPED.replace(
        "%back = tile.select %past, %zero, %i",
        "%nonneg = tile.cmp ge %i, %zero : (!loop.tile<[128], i64>, i64) -> "
        "!loop.tile<[128], i1>\n  %both = tile.binary and %past, %nonneg : "
        "(!loop.tile<[128], i1>, !loop.tile<[128], i1>) -> !loop.tile<[128], i1>\n"
        "  %back = tile.select %both, %zero, %i",
    )
    found = check_bounds(parse_module(text))
    assert len(found) == 1
    assert "memory.load may read" in found[0].message
    assert "no counter-example found" in found[0].message


def test_the_index_width_rule_is_the_tilers() -> None:
    """One rule for both passes: at most 2**30 - 1 elements for i32."""
    n = SymExpr.symbol("N")
    assert indices_fit(Facts(["N <= 1073741823"]), [n])
    assert not indices_fit(Facts(["N <= 1073741824"]), [n])
    assert not indices_fit(Facts(), [n])
