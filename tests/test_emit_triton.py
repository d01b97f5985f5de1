"""The Triton back end: ``lower-memory-to-triton``, the emitter and the
runtime, on hand-written memory-level modules.

Each module is lowered, printed as Python and run under Triton's
interpreter (``TRITON_INTERPRET=1``, serially on the CPU) at several
bindings (1, non-powers of two, past one block), against NumPy and against
the memory level's reference interpreter on the same inputs. Every unary,
binary and comparison kind is checked in float and integer types, with the
operands NumPy is particular about (NaN, infinities, signed zeros, negative
divisors, division by zero). Launchers must refuse bad calls with messages
that name what is wrong; hostile names and texts in the IR must not reach
the source as code. The launchers also run through Triton's real JIT path
under a fake CUDA driver (no GPU needed), which compiles their kernels for
an H100, in a subprocess: Triton fixes at import whether a process
interprets or compiles, so this module never imports triton itself (the
runtime does, for the interpreter).
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from fake_gpu_suite import expected_launches, run_compiling
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute

from irc import testing
from irc.backend.triton import EmitError, emit_module
from irc.backend.triton.pruning import prelude_definitions
from irc.dialects import triton as tt
from irc.dialects.kernel_kind import LAUNCH_TILES_ATTRIBUTE
from irc.dialects.sym import SymExprAttr
from irc.dtypes import dtype
from irc.errors import BindingError
from irc.interpreters.memory import run_memory
from irc.ir import default_context, parse_module
from irc.lowering.memory_to_triton import LowerMemoryToTritonPass
from irc.lowering.pipeline import Pipeline
from irc.runtime import triton_backend
from irc.shapes import parse_expr
from irc.testing.interpreters import level_of, run_module

torch = pytest.importorskip("torch")

# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def lower(text: str) -> tuple[ModuleOp, ModuleOp]:
    """The memory-level module of ``text`` and its triton-level lowering."""
    ctx = default_context()
    memory_module = parse_module(text, ctx)
    memory_module.verify()
    lowered = memory_module.clone()
    LowerMemoryToTritonPass().apply(ctx, lowered)
    lowered.verify()
    return memory_module, lowered


def interpret(module: ModuleOp, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Emit ``module`` and run it under Triton's interpreter."""
    loaded = triton_backend.load_source(emit_module(module), interpret=True)
    results = triton_backend.run(loaded, arrays, interpret=True)
    return [_numpy(r) for r in results]


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def assert_same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0) -> None:
    """Equal shapes and dtypes; values equal (NaN where NaN, zeros of the
    same sign) or, with ``rtol``, close."""
    assert got.shape == want.shape and got.dtype == want.dtype
    if got.dtype.kind != "f" and got.dtype != ml_dtypes.bfloat16:
        np.testing.assert_array_equal(got, want)
        return
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(got64, want64, rtol=rtol, atol=0, equal_nan=True)
    zeros = (got64 == 0) & (want64 == 0)
    if rtol == 0:
        np.testing.assert_array_equal(
            np.signbit(got64[zeros]), np.signbit(want64[zeros])
        )


# --------------------------------------------------------------------------
# Hand-written kernels
# --------------------------------------------------------------------------

SOFTMAX = """
memory.kernel @softmax_k0 reduction (%x: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N, D], [D, 1], f32>) inputs 1 grid [N] tiles {BLOCK = 128} symbols [D, N] reason "softmax at model.py:12" {
  %row = tile.program_id 0 : i64
  %d = tile.size D : i64
  %r = tile.range "BLOCK" : !loop.tile<[128], i64>
  %m = tile.cmp lt %r, %d : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
  %base = tile.binary mul %row, %d : (i64, i64) -> i64
  %off = tile.binary add %r, %base : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i64>
  %v = memory.load %x[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
  %ninf = tile.constant 0xFF800000 : f32
  %vm = tile.select %m, %v, %ninf : (!loop.tile<[128], i1>, !loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
  %mx = tile.reduce max %vm 0 : !loop.tile<[128], f32> -> f32
  %dd = tile.binary sub %v, %mx : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
  %e = tile.unary exp %dd : !loop.tile<[128], f32>
  %zero = tile.constant 0.000000e+00 : f32
  %em = tile.select %m, %e, %zero : (!loop.tile<[128], i1>, !loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
  %s = tile.reduce sum %em 0 : !loop.tile<[128], f32> -> f32
  %y = tile.binary div %e, %s : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
  memory.store %y, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
}
func.func @softmax(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  sym.guard D <= 128, "a row fits one block"
  %0 = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @softmax_k0(%x, %0) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %0 : !memory.buffer<[N, D], [D, 1], f32>
}
"""

ROW_SUM = """
memory.kernel @rowsum_k0 reduction (%x: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "x.sum(axis=1) at model.py:20" {
  %row = tile.program_id 0 : i64
  %d = tile.size D : i64
  %zero = tile.constant 0 : i64
  %step = tile.constant 32 : i64
  %r = tile.range "BLOCK" : !loop.tile<[32], i64>
  %fz = tile.constant 0.000000e+00 : f32
  %init = tile.splat %fz : f32 -> !loop.tile<[32], f32>
  %base = tile.binary mul %row, %d : (i64, i64) -> i64
  %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!loop.tile<[32], f32>) : i64 {
    %col = tile.binary add %r, %k : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i64>
    %m = tile.cmp lt %col, %d : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i1>
    %off = tile.binary add %col, %base : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i64>
    %v = memory.load %x[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[32], i64>] mask !loop.tile<[32], i1> -> !loop.tile<[32], f32>
    %n = tile.binary add %a, %v : (!loop.tile<[32], f32>, !loop.tile<[32], f32>) -> !loop.tile<[32], f32>
    scf.yield %n : !loop.tile<[32], f32>
  }
  %s = tile.reduce sum %acc 0 : !loop.tile<[32], f32> -> f32
  memory.store %s, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}
func.func @rowsum(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N], [1], f32> {
  %0 = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %0) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  func.return %0 : !memory.buffer<[N], [1], f32>
}
"""

#: y = x * scale[col] + 1 over flat i64 offsets; the mask combines a scalar
#: test of the program id with the block test of the offsets.
SCALE_BIAS = """
memory.kernel @scale_k0 pointwise (%x: !memory.buffer<[N, D], [D, 1], f32>, %s: !memory.buffer<[D], [1], f32>, %y: !memory.buffer<[N, D], [D, 1], f32>) inputs 2 grid [(D*N + 255) floordiv 256] tiles {BLOCK = 256} symbols [D, N] reason "x * s + 1 at model.py:30" {
  %pid = tile.program_id 0 : i64
  %block = tile.size 256 : i64
  %start = tile.binary mul %pid, %block : (i64, i64) -> i64
  %r = tile.range "BLOCK" : !loop.tile<[256], i64>
  %off = tile.binary add %r, %start : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i64>
  %total = tile.size D*N : i64
  %programs = tile.size (D*N + 255) floordiv 256 : i64
  %live = tile.cmp lt %pid, %programs : (i64, i64) -> i1
  %inside = tile.cmp lt %off, %total : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i1>
  %m = tile.binary and %live, %inside : (i1, !loop.tile<[256], i1>) -> !loop.tile<[256], i1>
  %d = tile.size D : i64
  %col = tile.binary rem %off, %d : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i64>
  %xv = memory.load %x[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1> -> !loop.tile<[256], f32>
  %sv = memory.load %s[%col] mask %m : !memory.buffer<[D], [1], f32>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1> -> !loop.tile<[256], f32>
  %p = tile.binary mul %xv, %sv : (!loop.tile<[256], f32>, !loop.tile<[256], f32>) -> !loop.tile<[256], f32>
  %one = tile.constant 1.000000e+00 : f32
  %q = tile.binary add %p, %one : (!loop.tile<[256], f32>, f32) -> !loop.tile<[256], f32>
  memory.store %q, %y[%off] mask %m : !loop.tile<[256], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1>
}
func.func @scale_bias(%x: !memory.buffer<[N, D], [D, 1], f32>, %s: !memory.buffer<[D], [1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  %0 = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @scale_k0(%x, %s, %0) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[D], [1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %0 : !memory.buffer<[N, D], [D, 1], f32>
}
"""


def matmul_module(element: str, accumulator: str) -> str:
    """C = A @ B with 16x16 blocks and a loop over K in steps of 16; grid
    axis 0 the row blocks, axis 1 the column blocks."""
    a = f"!memory.buffer<[M, K], [K, 1], {element}>"
    b = f"!memory.buffer<[K, N], [N, 1], {element}>"
    c = f"!memory.buffer<[M, N], [N, 1], {accumulator}>"
    col = "!loop.tile<[1, 16], i64>"
    row = "!loop.tile<[16, 1], i64>"
    sq = "!loop.tile<[16, 16], i64>"
    crow = "!loop.tile<[16, 1], i1>"
    ccol = "!loop.tile<[1, 16], i1>"
    csq = "!loop.tile<[16, 16], i1>"
    tile = f"!loop.tile<[16, 16], {element}>"
    acc = f"!loop.tile<[16, 16], {accumulator}>"
    zero = "0.000000e+00" if accumulator.startswith("f") else "0"
    return f"""
memory.kernel @mm_k0 matmul (%a: {a}, %b: {b}, %c: {c}) inputs 2 grid [(M + 15) floordiv 16, (N + 15) floordiv 16] tiles {{BM = 16, BN = 16, BK = 16}} symbols [K, M, N] reason "a @ b at mm.py:5" {{
  %pm = tile.program_id 0 : i64
  %pn = tile.program_id 1 : i64
  %c16 = tile.constant 16 : i64
  %m0 = tile.binary mul %pm, %c16 : (i64, i64) -> i64
  %n0 = tile.binary mul %pn, %c16 : (i64, i64) -> i64
  %rm = tile.range "BM" : {row}
  %rn = tile.range "BN" : {col}
  %rka = tile.range "BK" : {col}
  %rkb = tile.range "BK" : {row}
  %rows = tile.binary add %rm, %m0 : ({row}, i64) -> {row}
  %cols = tile.binary add %rn, %n0 : ({col}, i64) -> {col}
  %M = tile.size M : i64
  %N = tile.size N : i64
  %K = tile.size K : i64
  %rmask = tile.cmp lt %rows, %M : ({row}, i64) -> {crow}
  %cmask = tile.cmp lt %cols, %N : ({col}, i64) -> {ccol}
  %zero = tile.constant {zero} : {accumulator}
  %acc0 = tile.splat %zero : {accumulator} -> {acc}
  %k0 = tile.constant 0 : i64
  %acc = scf.for %k = %k0 to %K step %c16 iter_args(%acc_i = %acc0) -> ({acc}) : i64 {{
    %ka = tile.binary add %rka, %k : ({col}, i64) -> {col}
    %kb = tile.binary add %rkb, %k : ({row}, i64) -> {row}
    %kam = tile.cmp lt %ka, %K : ({col}, i64) -> {ccol}
    %kbm = tile.cmp lt %kb, %K : ({row}, i64) -> {crow}
    %am = tile.binary and %rmask, %kam : ({crow}, {ccol}) -> {csq}
    %bm = tile.binary and %kbm, %cmask : ({crow}, {ccol}) -> {csq}
    %arow = tile.binary mul %rows, %K : ({row}, i64) -> {row}
    %aoff = tile.binary add %arow, %ka : ({row}, {col}) -> {sq}
    %brow = tile.binary mul %kb, %N : ({row}, i64) -> {row}
    %boff = tile.binary add %brow, %cols : ({row}, {col}) -> {sq}
    %av = memory.load %a[%aoff] mask %am : {a}[{sq}] mask {csq} -> {tile}
    %bv = memory.load %b[%boff] mask %bm : {b}[{sq}] mask {csq} -> {tile}
    %next = tile.dot %av, %bv, %acc_i : ({tile}, {tile}, {acc}) -> {acc}
    scf.yield %next : {acc}
  }}
  %crow = tile.binary mul %rows, %N : ({row}, i64) -> {row}
  %coff = tile.binary add %crow, %cols : ({row}, {col}) -> {sq}
  %cm = tile.binary and %rmask, %cmask : ({crow}, {ccol}) -> {csq}
  memory.store %acc, %c[%coff] mask %cm : {acc}, {c}[{sq}] mask {csq}
}}
func.func @matmul(%a: {a}, %b: {b}) -> {c} {{
  %0 = memory.alloc : {c}
  memory.launch @mm_k0(%a, %b, %0) : ({a}, {b}, {c})
  func.return %0 : {c}
}}
"""


def row_reduce_module(kind: str, element: str, result: str, identity: str) -> str:
    """One ``tile.reduce`` of [4, 64] blocks of rows along axis 1 (masked
    lanes hold ``identity``): four rows per program, D <= 64 columns."""
    x = f"!memory.buffer<[N, D], [D, 1], {element}>"
    y = f"!memory.buffer<[N], [1], {result}>"
    tile = f"!loop.tile<[4, 64], {element}>"
    row, col, sq = (
        "!loop.tile<[4, 1], i64>",
        "!loop.tile<[1, 64], i64>",
        "!loop.tile<[4, 64], i64>",
    )
    return f"""
memory.kernel @reduce_k0 reduction (%x: {x}, %y: {y}) inputs 1 grid [(N + 3) floordiv 4] tiles {{BR = 4, BD = 64}} symbols [D, N] reason "reduce" {{
  %pid = tile.program_id 0 : i64
  %c4 = tile.constant 4 : i64
  %r0 = tile.binary mul %pid, %c4 : (i64, i64) -> i64
  %rr = tile.range "BR" : {row}
  %rows = tile.binary add %rr, %r0 : ({row}, i64) -> {row}
  %cols = tile.range "BD" : {col}
  %N = tile.size N : i64
  %D = tile.size D : i64
  %rm = tile.cmp lt %rows, %N : ({row}, i64) -> !loop.tile<[4, 1], i1>
  %cm = tile.cmp lt %cols, %D : ({col}, i64) -> !loop.tile<[1, 64], i1>
  %m = tile.binary and %rm, %cm : (!loop.tile<[4, 1], i1>, !loop.tile<[1, 64], i1>) -> !loop.tile<[4, 64], i1>
  %base = tile.binary mul %rows, %D : ({row}, i64) -> {row}
  %off = tile.binary add %base, %cols : ({row}, {col}) -> {sq}
  %v = memory.load %x[%off] mask %m : {x}[{sq}] mask !loop.tile<[4, 64], i1> -> {tile}
  %id = tile.constant {identity} : {element}
  %vm = tile.select %m, %v, %id : (!loop.tile<[4, 64], i1>, {tile}, {element}) -> {tile}
  %r = tile.reduce {kind} %vm 1 : {tile} -> !loop.tile<[4], {result}>
  %rows1 = tile.range "BR" : !loop.tile<[4], i64>
  %out = tile.binary add %rows1, %r0 : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i64>
  %om = tile.cmp lt %out, %N : (!loop.tile<[4], i64>, i64) -> !loop.tile<[4], i1>
  memory.store %r, %y[%out] mask %om : !loop.tile<[4], {result}>, {y}[!loop.tile<[4], i64>] mask !loop.tile<[4], i1>
}}
func.func @reduce(%x: {x}) -> {y} {{
  sym.guard D <= 64, "a row fits one block"
  %0 = memory.alloc : {y}
  memory.launch @reduce_k0(%x, %0) : ({x}, {y})
  func.return %0 : {y}
}}
"""


#: Sizes computed in the kernel, stored as i64: products past 2**31, and
#: floor division, modulo, max and min of a negative numerator.
SIZES = """
memory.kernel @sizes_k0 pointwise (%out: !memory.buffer<[6], [1], i64>) inputs 0 grid [1] tiles {} symbols [M, N] reason "sizes" {
  %s0 = tile.size N*N*N + 7 : i64
  %s1 = tile.size (N - 5) floordiv 3 : i64
  %s2 = tile.size (N - 5) mod 3 : i64
  %s3 = tile.size max(M, N) - 2*min(M, N) : i64
  %s4 = tile.size 65536*M*N : i64
  %s5 = tile.size (M*N + 15) floordiv 16 : i64
  %c0 = tile.constant 0 : i64
  %c1 = tile.constant 1 : i64
  %c2 = tile.constant 2 : i64
  %c3 = tile.constant 3 : i64
  %c4 = tile.constant 4 : i64
  %c5 = tile.constant 5 : i64
  memory.store %s0, %out[%c0] : i64, !memory.buffer<[6], [1], i64>[i64]
  memory.store %s1, %out[%c1] : i64, !memory.buffer<[6], [1], i64>[i64]
  memory.store %s2, %out[%c2] : i64, !memory.buffer<[6], [1], i64>[i64]
  memory.store %s3, %out[%c3] : i64, !memory.buffer<[6], [1], i64>[i64]
  memory.store %s4, %out[%c4] : i64, !memory.buffer<[6], [1], i64>[i64]
  memory.store %s5, %out[%c5] : i64, !memory.buffer<[6], [1], i64>[i64]
}
func.func @sizes(%m: !memory.buffer<[M], [1], f32>, %n: !memory.buffer<[N], [1], f32>) -> !memory.buffer<[6], [1], i64> {
  %0 = memory.alloc : !memory.buffer<[6], [1], i64>
  memory.launch @sizes_k0(%0) : (!memory.buffer<[6], [1], i64>)
  func.return %0 : !memory.buffer<[6], [1], i64>
}
"""


def expected_sizes(m: int, n: int) -> list[int]:
    return [
        n**3 + 7,
        (n - 5) // 3,
        (n - 5) % 3,
        max(m, n) - 2 * min(m, n),
        65536 * m * n,
        (m * n + 15) // 16,
    ]


#: Three kernels through two intermediates: t = exp(x), u = t + c (c a dense
#: constant), then y = u * 2 in the storage of the dead t (memory.reuse), u
#: deallocated after its last use; a launch with an empty grid at N = 1.
def _chain_kernel(name: str, op: str, second: str) -> str:
    buf = "!memory.buffer<[N, 3], [3, 1], f32>"
    other = "!memory.buffer<[3], [1], f32>" if second == "c" else ""
    args = f"%x: {buf}, %c: {other}, %y: {buf}" if other else f"%x: {buf}, %y: {buf}"
    inputs = 2 if other else 1
    tile = "!loop.tile<[4], f32>"
    idx = "!loop.tile<[4], i64>"
    mask = "!loop.tile<[4], i1>"
    lines = {
        "exp": f"%r = tile.unary exp %v : {tile}",
        "addc": f"""%col = tile.binary rem %off, %three : ({idx}, i64) -> {idx}
  %cv = memory.load %c[%col] mask %m : {other}[{idx}] mask {mask} -> {tile}
  %r = tile.binary add %v, %cv : ({tile}, {tile}) -> {tile}""",
        "double": f"""%two = tile.constant 2.000000e+00 : f32
  %r = tile.binary mul %v, %two : ({tile}, f32) -> {tile}""",
    }[op]
    return f"""
memory.kernel @{name} pointwise ({args}) inputs {inputs} grid [(3*N + 3) floordiv 4] tiles {{B = 4}} symbols [N] reason "{op}" {{
  %pid = tile.program_id 0 : i64
  %four = tile.constant 4 : i64
  %three = tile.constant 3 : i64
  %s = tile.binary mul %pid, %four : (i64, i64) -> i64
  %r0 = tile.range "B" : {idx}
  %off = tile.binary add %r0, %s : ({idx}, i64) -> {idx}
  %n = tile.size 3*N : i64
  %m = tile.cmp lt %off, %n : ({idx}, i64) -> {mask}
  %v = memory.load %x[%off] mask %m : {buf}[{idx}] mask {mask} -> {tile}
  {lines}
  memory.store %r, %y[%off] mask %m : {tile}, {buf}[{idx}] mask {mask}
}}"""


CHAIN = (
    _chain_kernel("k_exp", "exp", "")
    + _chain_kernel("k_add", "addc", "c")
    + _chain_kernel("k_double", "double", "")
    + """
memory.kernel @k_diff pointwise (%x: !memory.buffer<[N], [1], f32>, %y: !memory.buffer<[N - 1], [1], f32>) inputs 1 grid [N - 1] tiles {} symbols [N] reason "x[1:] - x[:-1]" {
  %i = tile.program_id 0 : i64
  %one = tile.constant 1 : i64
  %j = tile.binary add %i, %one : (i64, i64) -> i64
  %a = memory.load %x[%i] : !memory.buffer<[N], [1], f32>[i64] -> f32
  %b = memory.load %x[%j] : !memory.buffer<[N], [1], f32>[i64] -> f32
  %d = tile.binary sub %b, %a : (f32, f32) -> f32
  memory.store %d, %y[%i] : f32, !memory.buffer<[N - 1], [1], f32>[i64]
}
func.func @chain(%x: !memory.buffer<[N, 3], [3, 1], f32>, %v: !memory.buffer<[N], [1], f32>) -> (!memory.buffer<[N, 3], [3, 1], f32>, !memory.buffer<[N - 1], [1], f32>) {
  %c = memory.constant dense<[1.0, -2.5, 1.0e+30]> : tensor<3xf32> -> !memory.buffer<[3], [1], f32>
  %t = memory.alloc : !memory.buffer<[N, 3], [3, 1], f32>
  memory.launch @k_exp(%x, %t) : (!memory.buffer<[N, 3], [3, 1], f32>, !memory.buffer<[N, 3], [3, 1], f32>)
  %u = memory.alloc : !memory.buffer<[N, 3], [3, 1], f32>
  memory.launch @k_add(%t, %c, %u) : (!memory.buffer<[N, 3], [3, 1], f32>, !memory.buffer<[3], [1], f32>, !memory.buffer<[N, 3], [3, 1], f32>)
  %y = memory.reuse %t : !memory.buffer<[N, 3], [3, 1], f32> -> !memory.buffer<[N, 3], [3, 1], f32>
  memory.launch @k_double(%u, %y) : (!memory.buffer<[N, 3], [3, 1], f32>, !memory.buffer<[N, 3], [3, 1], f32>)
  memory.dealloc %u : !memory.buffer<[N, 3], [3, 1], f32>
  %d = memory.alloc : !memory.buffer<[N - 1], [1], f32>
  memory.launch @k_diff(%v, %d) : (!memory.buffer<[N], [1], f32>, !memory.buffer<[N - 1], [1], f32>)
  func.return %y, %d : !memory.buffer<[N, 3], [3, 1], f32>, !memory.buffer<[N - 1], [1], f32>
}
"""
)

RNG = np.random.default_rng(2024)


def _rows(n: int, d: int) -> np.ndarray:
    return RNG.standard_normal((n, d)).astype(np.float32)


# --------------------------------------------------------------------------
# Kernels against NumPy and the memory-level interpreter
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 7), (2, 128), (5, 100)])
def test_softmax(n: int, d: int) -> None:
    memory_module, module = lower(SOFTMAX)
    x = _rows(n, d) * 4
    (got,) = interpret(module, [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        got, e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-7
    )
    assert_same(got, run_memory(memory_module, [x])[0], rtol=1e-6)


def test_softmax_guard_names_symbol_values_and_reason() -> None:
    _, module = lower(SOFTMAX)
    with pytest.raises(
        BindingError,
        match=r"guard `D <= 128` does not hold with D = 129: a row fits one block",
    ):
        interpret(module, [_rows(2, 129)])


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 31), (2, 32), (4, 33), (2, 100)])
def test_looped_row_sum(n: int, d: int) -> None:
    memory_module, module = lower(ROW_SUM)
    x = _rows(n, d)
    (got,) = interpret(module, [x])
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-5, atol=1e-5)
    assert_same(got, run_memory(memory_module, [x])[0])


@pytest.mark.parametrize(("n", "d"), [(1, 1), (3, 7), (1, 256), (5, 77), (300, 3)])
def test_pointwise_with_i64_offsets(n: int, d: int) -> None:
    memory_module, module = lower(SCALE_BIAS)
    x, s = _rows(n, d), _rows(1, d)[0]
    (got,) = interpret(module, [x, s])
    assert_same(got, x * s + np.float32(1))
    assert_same(got, run_memory(memory_module, [x, s])[0])


@pytest.mark.parametrize(
    ("m", "k", "n"), [(1, 1, 1), (16, 16, 16), (5, 37, 3), (33, 20, 17)]
)
def test_matmul_with_k_loop(m: int, k: int, n: int) -> None:
    memory_module, module = lower(matmul_module("f32", "f32"))
    a, b = _rows(m, k), _rows(k, n)
    (got,) = interpret(module, [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        got, run_memory(memory_module, [a, b])[0], rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize(
    ("element", "accumulator"),
    [("i32", "i32"), ("i64", "i64"), ("f16", "f32"), ("bf16", "f32")],
)
def test_matmul_other_types(element: str, accumulator: str) -> None:
    memory_module, module = lower(matmul_module(element, accumulator))
    numpy_type = {
        "i32": np.int32,
        "i64": np.int64,
        "f16": np.float16,
        "bf16": ml_dtypes.bfloat16,
    }[element]
    a = RNG.integers(-4, 5, (19, 21)).astype(numpy_type)
    b = RNG.integers(-4, 5, (21, 18)).astype(numpy_type)
    (got,) = interpret(module, [a, b])
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(got.dtype)
    assert_same(got, want)  # small integers: every sum is exact
    assert_same(got, run_memory(memory_module, [a, b])[0])


REDUCTIONS = [
    ("sum", "f32", "f32", "0.000000e+00"),
    ("prod", "f32", "f32", "1.000000e+00"),
    ("max", "f32", "f32", "0xFF800000"),
    ("min", "f32", "f32", "0x7F800000"),
    ("argmax", "f32", "i64", "0xFF800000"),
    ("sum", "i32", "i32", "0"),
    ("prod", "i64", "i64", "1"),
    ("max", "i64", "i64", "-9223372036854775808"),
    ("min", "i32", "i32", "2147483647"),
    ("argmax", "i32", "i32", "-2147483648"),
    ("sum", "f16", "f16", "0.000000e+00"),
    ("max", "bf16", "bf16", "0xFF80"),
]


@pytest.mark.parametrize(("kind", "element", "result", "identity"), REDUCTIONS)
def test_row_reductions(kind: str, element: str, result: str, identity: str) -> None:
    memory_module, module = lower(row_reduce_module(kind, element, result, identity))
    numpy_type = {
        "f32": np.float32,
        "i32": np.int32,
        "i64": np.int64,
        "f16": np.float16,
        "bf16": ml_dtypes.bfloat16,
    }[element]
    for n, d in [(1, 1), (6, 5), (9, 64)]:
        if element.startswith("i"):
            x = RNG.integers(-3, 4, (n, d)).astype(numpy_type)
        else:
            x = (RNG.standard_normal((n, d)) * (0.9 if kind == "prod" else 3)).astype(
                numpy_type
            )
            x[0, :] = x[0, 0]  # ties: argmax takes the first
            if n > 2 and element == "f32":
                x[1, d // 2] = np.nan  # max, min and argmax propagate NaN
        (got,) = interpret(module, [x])
        want = run_memory(memory_module, [x])[0]
        assert_same(
            got, want, rtol=1e-6 if kind in ("sum", "prod") and element != "i32" else 0
        )


@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 9), (70000, 5), (1, 70000)])
def test_sizes_are_64_bit_with_numpy_division(m: int, n: int) -> None:
    _, module = lower(SIZES)
    args = [np.zeros(m, np.float32), np.zeros(n, np.float32)]
    (got,) = interpret(module, args)
    assert got.tolist() == expected_sizes(m, n)


def test_launcher_allocates_reuses_deallocates_and_skips_empty_grids() -> None:
    memory_module, module = lower(CHAIN)
    source = emit_module(module)
    assert "as_strided(" in source and "del v_u" in source
    # k_diff's grid (N - 1 programs) may be empty and is tested per launch;
    # k_exp's is at least 1. Both are tested against CUDA's limits up front.
    assert "if 0 < grid_1[0]:\n        config_k_diff = " in source
    assert "if 0 < grid_0[0]" not in source
    assert "_irc_check_grid('k_exp', grid_0, (2147483647, 65535, 65535))" in source
    assert "_irc_check_grid('k_diff', grid_1, (2147483647, 65535, 65535))" in source
    for n in (1, 2, 7):
        x, v = _rows(n, 3), _rows(1, n)[0]
        got = interpret(module, [x, v])
        want = [
            (np.exp(x) + np.float32([1.0, -2.5, 1e30])) * np.float32(2),
            v[1:] - v[:-1],
        ]
        for g, w, r in zip(got, want, run_memory(memory_module, [x, v]), strict=True):
            assert_same(g, w, rtol=1e-6)
            assert_same(g, r)


def test_one_source_serves_every_binding_and_keeps_torch_tensors() -> None:
    _, module = lower(SCALE_BIAS)
    loaded = triton_backend.load_source(emit_module(module), interpret=True)
    assert triton_backend.load_source(emit_module(module), interpret=True) is loaded
    x, s = torch.randn(4, 6), torch.randn(6)
    (y,) = triton_backend.run(loaded, [x.t().contiguous().t(), s], interpret=True)
    assert isinstance(y, torch.Tensor) and y.shape == (4, 6)
    torch.testing.assert_close(y, x * s + 1)


# --------------------------------------------------------------------------
# Launchers refuse bad calls
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (
            [np.zeros((2, 3), np.float32)],
            r"takes 2 argument\(s\) \(x, s\) but was called with 1",
        ),
        (
            [np.zeros((2, 3), np.float32), np.zeros(4, np.float32)],
            r"argument 's' axis 0: symbol D is 4 here but 3 from argument 'x' axis 1",
        ),
        (
            [np.zeros((2, 3), np.float64), np.zeros(3, np.float32)],
            r"argument 'x' has dtype float64 but the function expects float32; "
            r"convert it to float32 first",
        ),
        (
            [np.zeros(3, np.float32), np.zeros(3, np.float32)],
            r"argument 'x' has rank 1 \(shape \(3,\)\) but the function expects rank 2",
        ),
    ],
)
def test_launcher_refuses_bad_calls(arrays: list[np.ndarray], message: str) -> None:
    _, module = lower(SCALE_BIAS)
    with pytest.raises(BindingError, match=message):
        interpret(module, arrays)


EMPTY_GRID = r"""
builtin.module {
  triton.kernel @"k0\n    print('INJECTED')\n    #" pointwise (%0: !triton.ptr<f32>, %out: !triton.ptr<f32>) inputs 1 grid [0] tiles {BLOCK = 1} symbols [] reason "pointwise over [0] (graph.add %z); pointwise over [0] in blocks of 1" {
    %1 = tile.constant 0 : i32
    %2 = tile.program_id 0 : i32
    %3 = tile.range "BLOCK" : !triton.tensor<[1], i32>
    %4 = tile.binary add %2, %3 : (i32, !triton.tensor<[1], i32>) -> !triton.tensor<[1], i32>
    %5 = tile.cmp lt %4, %1 : (!triton.tensor<[1], i32>, i32) -> !triton.tensor<[1], i1>
    %6 = triton.load %0[%4] mask %5 : !triton.ptr<f32>[!triton.tensor<[1], i32>] mask !triton.tensor<[1], i1> -> !triton.tensor<[1], f32>
    %7 = tile.binary add %6, %6 : (!triton.tensor<[1], f32>, !triton.tensor<[1], f32>) -> !triton.tensor<[1], f32>
    triton.store %7, %out[%4] mask %5 : !triton.tensor<[1], f32>, !triton.ptr<f32>[!triton.tensor<[1], i32>] mask !triton.tensor<[1], i1>
  }
  func.func @f(%x: !memory.buffer<[0], [1], f32>) -> !memory.buffer<[0], [1], f32> {
    %z = memory.alloc : !memory.buffer<[0], [1], f32>
    memory.launch @"k0\n    print('INJECTED')\n    #"(%x, %z) : (!memory.buffer<[0], [1], f32>, !memory.buffer<[0], [1], f32>)
    func.return %z : !memory.buffer<[0], [1], f32>
  }
}
"""


def test_a_launch_with_an_empty_grid_names_its_kernel_in_a_comment_only() -> None:
    """A statically empty grid launches nothing: the launcher says so in a
    comment, which a kernel name with newlines must not end."""
    module = parse_module(EMPTY_GRID, default_context())
    source = emit_module(module)
    calls = [
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert "print" not in calls
    assert "its grid is empty, nothing to launch" in source


DIVIDED = """
func.func @f(%x: !memory.buffer<[N floordiv M], [1], f32>, %y: !memory.buffer<[M], [1], f32>, %w: !memory.buffer<[N], [1], f32>) -> !memory.buffer<[N floordiv M], [1], f32> {
  func.return %x : !memory.buffer<[N floordiv M], [1], f32>
}
"""


def test_launcher_tests_symbols_before_dims_that_divide_by_them() -> None:
    """``N floordiv M`` with ``M = 0`` is not computed: the symbol's own
    test (sizes are at least 1) comes first and names it."""
    with pytest.raises(BindingError, match=r"argument 'y' axis 0: symbol M would be 0"):
        interpret(
            parse_module(DIVIDED, default_context()),
            [np.ones(2, np.float32), np.ones(0, np.float32), np.ones(7, np.float32)],
        )


def test_launcher_checks_static_and_expression_dims() -> None:
    text = CHAIN.replace(
        "func.func @chain(%x: !memory.buffer<[N, 3], [3, 1], f32>, %v: !memory.buffer<[N], [1], f32>)",
        "func.func @chain(%x: !memory.buffer<[N, 3], [3, 1], f32>, %v: !memory.buffer<[2*N], [1], f32>)",
    )
    text = text.replace(
        "memory.launch @k_diff(%v, %d)", "memory.launch @k_diff(%x2, %d)"
    )
    text = text.replace(
        "%d = memory.alloc : !memory.buffer<[N - 1], [1], f32>\n",
        "%d = memory.alloc : !memory.buffer<[N - 1], [1], f32>\n  %x2 = memory.alloc : !memory.buffer<[N], [1], f32>\n",
    )
    _, module = lower(text)
    with pytest.raises(
        BindingError, match=r"argument 'x' axis 1: expected size 3, got 4"
    ):
        interpret(module, [np.zeros((2, 4), np.float32), np.zeros(4, np.float32)])
    with pytest.raises(
        BindingError,
        match=r"argument 'v' axis 0: dim 2\*N is 4 with N = 2 \(from argument 'x' "
        r"axis 0\), but the array has size 5",
    ):
        interpret(module, [np.zeros((2, 3), np.float32), np.zeros(5, np.float32)])


def test_constants_of_every_rank_are_returned_as_they_are() -> None:
    _, module = lower("""
func.func @constants(%a: !memory.buffer<[], [], i32>) -> (!memory.buffer<[], [], f32>, !memory.buffer<[2, 2], [2, 1], bf16>) {
  %0 = memory.constant dense<1.500000e+00> : tensor<f32> -> !memory.buffer<[], [], f32>
  %1 = memory.constant dense<[[1.0, -2.0], [0.5, 3.0]]> : tensor<2x2xbf16> -> !memory.buffer<[2, 2], [2, 1], bf16>
  func.return %0, %1 : !memory.buffer<[], [], f32>, !memory.buffer<[2, 2], [2, 1], bf16>
}
""")
    scalar, matrix = interpret(module, [np.array(7, np.int32)])
    assert_same(scalar, np.array(1.5, np.float32))
    assert_same(matrix, np.array([[1.0, -2.0], [0.5, 3.0]], ml_dtypes.bfloat16))


def test_emitter_refuses_memory_level_kernels() -> None:
    memory_module, _ = lower(ROW_SUM)
    with pytest.raises(EmitError, match="run lower-memory-to-triton first"):
        emit_module(memory_module)


@pytest.mark.parametrize(
    ("launch_tiles", "tiles", "message"),
    [
        (StringAttr("D"), {"BLOCK": 32}, "must map tiles to symbolic extents"),
        (
            DictionaryAttr({"OTHER": SymExprAttr(parse_expr("D"))}),
            {"BLOCK": 32},
            "names 'OTHER', not a tile of the kernel",
        ),
        (
            DictionaryAttr({"BLOCK": SymExprAttr(parse_expr("D"))}),
            {"BLOCK": 32, "BLOCK_C": 32},
            "tile BLOCK has the declared size of another tile",
        ),
    ],
)
def test_emitter_refuses_launch_tiles_it_cannot_spell(
    launch_tiles: Attribute, tiles: dict[str, int], message: str
) -> None:
    """A kernel's ``launch_tiles`` (hand-written IR may hold anything) names
    tiles of the kernel with their extents; a chosen tile's declared size
    stands for it in the tile types, so no other tile may share it."""
    _, module = lower(ROW_SUM)
    kernel = next(op for op in module.walk() if isinstance(op, tt.KernelOp))
    kernel.attributes[LAUNCH_TILES_ATTRIBUTE] = launch_tiles
    kernel.properties["tiles"] = DictionaryAttr(
        {name: IntegerAttr(size, 64) for name, size in tiles.items()}
    )
    with pytest.raises(EmitError, match=re.escape(message)):
        emit_module(module)


def test_emitter_refuses_a_guard_on_a_symbol_no_argument_binds() -> None:
    """Regression (the irc-opt fuzzer): a guard naming a symbol that no
    argument's dim binds made the launcher fail with a bare ``KeyError``."""
    module = parse_module(
        """
        func.func @first_column(%x: !graph.tensor<[M, D], f32>) -> !graph.tensor<[M], f32> {
          sym.guard M*K <= 128, "offsets fit i32"
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
    )
    for each in Pipeline.parse("bufferize,lower-memory-to-triton").passes:
        each.apply(default_context(), module)
    with pytest.raises(EmitError, match="uses symbol K, which is not the whole"):
        emit_module(module)


def test_triton_level_is_registered_for_the_checkers() -> None:
    memory_module, module = lower(ROW_SUM)
    assert level_of(memory_module).name == "memory"
    assert level_of(module).name == "triton"
    x = _rows(3, 40)
    assert_same(run_module(module, [x])[0], run_memory(memory_module, [x])[0])


def test_lowering_keeps_the_meaning_of_the_hand_written_kernels() -> None:
    """``check_pass``: the memory interpreter before, the emitted kernels
    under Triton's interpreter after, on drawn bindings and inputs."""
    texts = [
        SOFTMAX,
        ROW_SUM,
        SCALE_BIAS,
        matmul_module("f32", "f32"),
        CHAIN,
        row_reduce_module("argmax", "f32", "i64", "0xFF800000"),
    ]
    testing.check_pass(LowerMemoryToTritonPass(), texts, max_examples=40)


@pytest.mark.slow  # generated programs through every level and Triton's interpreter
def test_the_whole_lowering_keeps_the_meaning_of_random_programs() -> None:
    """Random graph programs through fuse, tile, bufferize and this pass,
    run under Triton's interpreter against the graph interpreter."""
    pipeline = "fuse,tile,bufferize,lower-memory-to-triton"
    testing.check_pass(pipeline, max_examples=150)


# --------------------------------------------------------------------------
# Every elementwise kind against NumPy
# --------------------------------------------------------------------------

UNARY_FLOAT = [
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "sin",
    "cos",
    "floor",
]
BINARY_FLOAT = ["add", "sub", "mul", "div", "floordiv", "rem", "pow", "max", "min"]
BINARY_INT = ["add", "sub", "mul", "floordiv", "rem", "max", "min", "and", "or", "xor"]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
#: Kinds whose Triton spelling is not bit-exact against NumPy, with rtol.
INEXACT = {"tanh": 3e-7, "pow": 2e-7}
#: The same on one 16-bit type: Triton's exponential in float32 is not
#: NumPy's to the last bit, and a result that close to a tie between two
#: bfloat16 values rounds to either (exp(6.84375): 936 against 940), one
#: bfloat16 step, 2**-7 relative at most.
INEXACT_ON = {("bf16", "exp"): 2.0**-7}


def elementwise_module(
    element: str, ops: Sequence[tuple[str, str]], *, scalar_rhs: bool = False
) -> str:
    """One kernel applying each (op, kind) to blocks ``x`` (from ``a``) and
    ``y`` (from ``b``, or its first element as a scalar), one output each."""
    buf = f"!memory.buffer<[N], [1], {element}>"
    tile = f"!loop.tile<[64], {element}>"
    idx, mask = "!loop.tile<[64], i64>", "!loop.tile<[64], i1>"
    results = ["i1" if op == "cmp" else element for op, _ in ops]
    outs = [f"!memory.buffer<[N], [1], {t}>" for t in results]
    body = [
        "%pid = tile.program_id 0 : i64",
        "%block = tile.constant 64 : i64",
        "%start = tile.binary mul %pid, %block : (i64, i64) -> i64",
        f'%r = tile.range "BLOCK" : {idx}',
        f"%off = tile.binary add %r, %start : ({idx}, i64) -> {idx}",
        "%n = tile.size N : i64",
        f"%m = tile.cmp lt %off, %n : ({idx}, i64) -> {mask}",
        f"%x = memory.load %a[%off] mask %m : {buf}[{idx}] mask {mask} -> {tile}",
    ]
    if scalar_rhs:
        body += [
            "%z = tile.constant 0 : i64",
            f"%y = memory.load %b[%z] : {buf}[i64] -> {element}",
        ]
    else:
        body += [
            f"%y = memory.load %b[%off] mask %m : {buf}[{idx}] mask {mask} -> {tile}"
        ]
    y_type = element if scalar_rhs else tile
    for i, (op, kind) in enumerate(ops):
        result = f"!loop.tile<[64], {results[i]}>"
        if op == "unary":
            body.append(f"%r{i} = tile.unary {kind} %x : {tile}")
        else:
            body.append(
                f'%r{i} = tile.{op} "{kind}" %x, %y : ({tile}, {y_type}) -> {result}'
            )
        body.append(
            f"memory.store %r{i}, %o{i}[%off] mask %m : {result}, {outs[i]}[{idx}] mask {mask}"
        )
    args = ", ".join(
        [f"%a: {buf}", f"%b: {buf}", *(f"%o{i}: {t}" for i, t in enumerate(outs))]
    )
    allocs = "\n".join(f"  %{i} = memory.alloc : {t}" for i, t in enumerate(outs))
    launch_args = ", ".join(["%a", "%b", *(f"%{i}" for i in range(len(outs)))])
    launch_types = ", ".join([buf, buf, *outs])
    returned = ", ".join(f"%{i}" for i in range(len(outs)))
    body_text = "\n  ".join(body)
    return f"""
memory.kernel @ops_k0 pointwise ({args}) inputs 2 grid [(N + 63) floordiv 64] tiles {{BLOCK = 64}} symbols [N] reason "ops" {{
  {body_text}
}}
func.func @ops(%a: {buf}, %b: {buf}) -> ({", ".join(outs)}) {{
{allocs}
  memory.launch @ops_k0({launch_args}) : ({launch_types})
  func.return {returned} : {", ".join(outs)}
}}
"""


SPECIAL_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    7.25,
    -7.25,
    1e-30,
    -1e-30,
    1e30,
    -1e30,
    np.inf,
    -np.inf,
    np.nan,
    1e-4,
    4.0,
    0.25,
    100.0,
    -64.0,
]


def float_operands(numpy_type: type, count: int = 150) -> tuple[np.ndarray, np.ndarray]:
    """Operands pairing every special value with every other, then random
    ones, the same whatever ran before (a generator of their own)."""
    special = np.array(SPECIAL_FLOATS)
    a = np.repeat(special, len(special))
    b = np.tile(special, len(special))
    extra = np.random.default_rng(902).standard_normal((2, count)) * 5
    a = np.concatenate([a, extra[0], np.round(extra[0])])
    b = np.concatenate([b, extra[1], np.round(extra[1])])
    with np.errstate(over="ignore"):
        return a.astype(numpy_type), b.astype(numpy_type)


def check_elementwise(
    element: str,
    ops: list[tuple[str, str]],
    a: np.ndarray,
    b: np.ndarray,
    *,
    scalar_rhs: bool = False,
) -> None:
    memory_module, module = lower(
        elementwise_module(element, ops, scalar_rhs=scalar_rhs)
    )
    got = interpret(module, [a, b])
    want = run_memory(memory_module, [a, b])
    for (op, kind), g, w in zip(ops, got, want, strict=True):
        try:
            assert_same(
                g, w, rtol=INEXACT_ON.get((element, kind), INEXACT.get(kind, 0.0))
            )
        except AssertionError as error:
            raise AssertionError(f"{op} {kind!r} on {element}: {error}") from None


@pytest.mark.parametrize(
    ("element", "numpy_type"),
    [
        ("f32", np.float32),
        ("f64", np.float64),
        ("f16", np.float16),
        ("bf16", ml_dtypes.bfloat16),
    ],
)
def test_float_kinds_match_numpy(element: str, numpy_type: type) -> None:
    a, b = float_operands(numpy_type)
    ops = (
        [("unary", k) for k in UNARY_FLOAT]
        + [("binary", k) for k in BINARY_FLOAT]
        + [("cmp", k) for k in COMPARE]
    )
    check_elementwise(element, ops, a, b)


@pytest.mark.parametrize("rhs", [-3.0, -0.0, 0.0, 2.0, np.nan])
def test_float_kinds_with_a_scalar_operand(rhs: float) -> None:
    a, b = float_operands(np.float32)
    b[0] = rhs
    ops = [("binary", k) for k in BINARY_FLOAT] + [("cmp", k) for k in COMPARE]
    check_elementwise("f32", ops, a, b, scalar_rhs=True)


@pytest.mark.parametrize(
    ("element", "numpy_type"), [("i32", np.int32), ("i64", np.int64)]
)
def test_int_kinds_match_numpy(element: str, numpy_type: type) -> None:
    a = RNG.integers(-40, 41, 400).astype(numpy_type)
    b = RNG.integers(-9, 10, 400).astype(numpy_type)
    info = np.iinfo(numpy_type)
    a[:4], b[:4] = [info.max, info.min, 7, -7], [2, 3, 0, 0]  # wrapping, x // 0, x % 0
    ops = (
        [("unary", k) for k in ("neg", "abs", "not")]
        + [("binary", k) for k in BINARY_INT]
        + [("cmp", k) for k in COMPARE]
    )
    check_elementwise(element, ops, a, b)
    check_elementwise(
        element, [("binary", k) for k in BINARY_INT], a, b, scalar_rhs=True
    )
    exponents = RNG.integers(0, 70, 400).astype(numpy_type)
    check_elementwise(element, [("binary", "pow")], a, exponents)


def test_floordiv_and_rem_of_negative_operands_are_numpys() -> None:
    a = np.array([7, -7, 7, -7, 0, 6, -6, 1, -1], np.int64)
    b = np.array([2, 2, -2, -2, 3, -3, 3, 0, 0], np.int64)
    _, module = lower(
        elementwise_module("i64", [("binary", "floordiv"), ("binary", "rem")])
    )
    quotient, remainder = interpret(module, [a, b])
    with np.errstate(divide="ignore"):
        assert (
            quotient.tolist()
            == np.floor_divide(a, b).tolist()
            == [3, -4, -4, 3, 0, -2, -2, 0, 0]
        )
        assert (
            remainder.tolist()
            == np.remainder(a, b).tolist()
            == [1, 1, -1, -1, 0, 0, 0, 0, 0]
        )
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    _, module = lower(
        elementwise_module("f32", [("binary", "floordiv"), ("binary", "rem")])
    )
    quotient, remainder = interpret(module, [fa, fb])
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_same(quotient, np.floor_divide(fa, fb))
        assert_same(remainder, np.remainder(fa, fb))


def test_bool_kinds_match_numpy() -> None:
    a = np.array([True, False] * 20)
    b = np.array([True, True, False, False] * 10)
    ops = (
        [("unary", "not"), ("unary", "abs")]
        + [("binary", k) for k in ("and", "or", "xor", "max", "min")]
        + [("cmp", k) for k in COMPARE]
    )
    check_elementwise("i1", ops, a, b)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("f32", "i32"),
        ("f32", "i1"),
        ("i64", "f32"),
        ("i1", "f32"),
        ("f32", "bf16"),
        ("f16", "bf16"),
        ("i64", "i32"),
        ("f64", "f16"),
    ],
)
def test_casts_are_numpys_astype(source: str, target: str) -> None:
    text = (
        elementwise_module(source, [("unary", "neg")])
        .replace(
            f"%r0 = tile.unary neg %x : !loop.tile<[64], {source}>",
            f"%r0 = tile.cast %x : !loop.tile<[64], {source}> -> !loop.tile<[64], {target}>",
        )
        .replace(
            f"%o0: !memory.buffer<[N], [1], {source}>",
            f"%o0: !memory.buffer<[N], [1], {target}>",
        )
    )
    text = text.replace(
        f"memory.store %r0, %o0[%off] mask %m : !loop.tile<[64], {source}>, !memory.buffer<[N], [1], {source}>",
        f"memory.store %r0, %o0[%off] mask %m : !loop.tile<[64], {target}>, !memory.buffer<[N], [1], {target}>",
    )
    head, _, tail = text.partition("func.func")
    tail = tail.replace(
        f"!memory.buffer<[N], [1], {source}>) {{",
        f"!memory.buffer<[N], [1], {target}>) {{",
    )
    tail = tail.replace(
        f"%0 = memory.alloc : !memory.buffer<[N], [1], {source}>",
        f"%0 = memory.alloc : !memory.buffer<[N], [1], {target}>",
    )
    tail = tail.replace(
        f"-> (!memory.buffer<[N], [1], {source}>)",
        f"-> (!memory.buffer<[N], [1], {target}>)",
    )
    tail = tail.replace(
        f"!memory.buffer<[N], [1], {source}>, !memory.buffer<[N], [1], {source}>, !memory.buffer<[N], [1], {source}>)",
        f"!memory.buffer<[N], [1], {source}>, !memory.buffer<[N], [1], {source}>, !memory.buffer<[N], [1], {target}>)",
    )
    tail = tail.replace(
        f"func.return %0 : !memory.buffer<[N], [1], {source}>",
        f"func.return %0 : !memory.buffer<[N], [1], {target}>",
    )
    memory_module, module = lower(head + "func.func" + tail)
    numpy_type = {
        "f32": np.float32,
        "f64": np.float64,
        "f16": np.float16,
        "i64": np.int64,
        "i1": np.bool_,
    }[source]
    values = np.array([0.0, -0.0, 1.0, -1.5, 2.5, 1e5, -7.9, 3.99, 65504.0, 1.00390625])
    with np.errstate(over="ignore"):  # 1e5 is inf in float16
        a = (
            values.astype(numpy_type)
            if source != "i64"
            else np.array([0, 1, -1, 2**40 + 1, -(2**35), 7])
        )
    (got,) = interpret(module, [a, a])
    assert_same(got, run_memory(memory_module, [a, a])[0])


# --------------------------------------------------------------------------
# No IR text reaches the source as code
# --------------------------------------------------------------------------

HOSTILE_REASON = (
    r"pwned\n\"\"\"\nimport os; os.system(\"echo pwned\") # {__import__(\"os\")}\n"
    + "'''"
)
HOSTILE = f"""
memory.kernel @"k\\"); import os #" pointwise (%x: !memory.buffer<[tl, range], [range, 1], f32>, %y: !memory.buffer<[tl, range], [range, 1], f32>) inputs 1 grid [tl] tiles {{B = 8}} symbols [__import__, range, tl] reason "{HOSTILE_REASON}" {{
  %row = tile.program_id 0 : i64
  %d = tile.size range : i64
  %junk = tile.size __import__ : i64
  %r = tile.range "B" : !loop.tile<[8], i64>
  %m = tile.cmp lt %r, %d : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i1>
  %base = tile.binary mul %row, %d : (i64, i64) -> i64
  %off = tile.binary add %r, %base : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i64>
  %v = memory.load %x[%off] mask %m : !memory.buffer<[tl, range], [range, 1], f32>[!loop.tile<[8], i64>] mask !loop.tile<[8], i1> -> !loop.tile<[8], f32> loc("evil\\nimport os\\n.py":3:1)
  memory.store %v, %y[%off] mask %m : !loop.tile<[8], f32>, !memory.buffer<[tl, range], [range, 1], f32>[!loop.tile<[8], i64>] mask !loop.tile<[8], i1>
}}
func.func @"f(); import os; os.system('x'); def g" (%x: !memory.buffer<[tl, range], [range, 1], f32>, %__import__: !memory.buffer<[__import__], [1], f32>) -> !memory.buffer<[tl, range], [range, 1], f32> {{
  sym.guard range <= 8, "{HOSTILE_REASON}"
  %0 = memory.alloc : !memory.buffer<[tl, range], [range, 1], f32>
  memory.launch @"k\\"); import os #"(%x, %0) : (!memory.buffer<[tl, range], [range, 1], f32>, !memory.buffer<[tl, range], [range, 1], f32>)
  func.return %0 : !memory.buffer<[tl, range], [range, 1], f32>
}}
"""


def _bound(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines."""
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    return []


def test_hostile_names_and_texts_do_not_reach_the_source_as_code() -> None:
    _, module = lower(HOSTILE)
    source = emit_module(module)
    tree = ast.parse(source)
    # The prelude's helpers (copied text of irc's, which may import the
    # standard library inside them) aside, what the module's own code reads.
    prelude = {name for d in prelude_definitions() for name in d.names}
    own = ast.Module(
        body=[node for node in tree.body if not set(_bound(node)) & prelude],
        type_ignores=[],
    )
    top_level = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert top_level == {"torch", "triton", "triton.language"}
    assert not any(
        isinstance(node, ast.Import) for node in ast.walk(own) if node not in tree.body
    )
    assert not any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
    names = {node.id for node in ast.walk(own) if isinstance(node, ast.Name)}
    assert not names & {"os", "__import__", "system", "eval", "exec", "open", "g"}
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {
        "kernel_k____import_os__",
        "launch_f____import_os__os_system__x____def_g",
    } <= functions
    comments = [
        line.strip() for line in source.splitlines() if line.strip().startswith("#")
    ]
    assert any(
        "import os; os.system" in line for line in comments
    )  # the reason, as comments
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (y,) = interpret(module, [x, np.zeros(2, np.float32)])
    np.testing.assert_array_equal(y, x)
    with pytest.raises(
        BindingError,
        match=r'guard `range <= 8` does not hold with range = 9: pwned \| """ \| import os',
    ):
        interpret(module, [np.zeros((1, 9), np.float32), np.zeros(2, np.float32)])


# --------------------------------------------------------------------------
# The real launch path: every kernel compiles for an H100
# --------------------------------------------------------------------------

#: Run in a subprocess (this process interprets): each module's launcher,
#: called under the fake CUDA driver of ``irc.testing.fake_driver`` on torch
#: CPU tensors, at each binding. Triton's real JIT path binds, specialises
#: and compiles every kernel launched for an H100 (sm_90, with ptxas) and
#: checks its globals; the driver records each launch instead of running
#: it. Prints, per module and binding, what each launch bound and compiled
#: (or the traceback of a launch that failed).
LAUNCH_SCRIPT = textwrap.dedent(
    """
    import json, math, mmap, sys, tempfile, traceback
    import torch
    from irc.runtime import triton_backend
    from irc.testing.fake_driver import compiled_kernels, fake_cuda

    def tensor(shape, dtype):
        dtype = getattr(torch, dtype)
        size = math.prod(shape) * dtype.itemsize
        if size < 2**30:
            return torch.empty(shape, dtype=dtype)
        # A sparse file mapped shared: address space, but neither memory nor
        # disk, since no kernel runs and nothing touches the elements.
        file = tempfile.TemporaryFile()
        file.truncate(size)
        return torch.frombuffer(mmap.mmap(file.fileno(), size), dtype=dtype).view(shape)

    def facts(launch, module, binaries):
        params = list(launch.args)
        binary = binaries[launch.metadata.hash]
        ptx, cubin = binary.asm["ptx"], binary.asm["cubin"]
        _, declared, _ = module.KERNELS[launch.kernel]
        return {
            "kernel": launch.kernel,
            "grid": list(launch.grid),
            # Each symbol: its value, Triton's type for it, divisible by 16.
            "symbols": [
                [
                    launch.args[param],
                    launch.signature[param],
                    ["tt.divisibility", 16] in launch.attrs[(params.index(param),)],
                ]
                for param, kind in declared.items()
                if not kind.startswith("*")
            ],
            "sm_90": ".target sm_90" in ptx,
            "entry": f".entry {launch.kernel}(" in ptx,
            "cubin_bytes": len(cubin) if cubin[:4] == b"\\x7fELF" else 0,
            "widenings": ptx.count("cvt.s64.s32"),
        }

    report = []
    with fake_cuda() as gpu:
        for job in json.load(open(sys.argv[1])):
            module = triton_backend.load_source(job["source"], interpret=False)
            entry = getattr(module, module.ENTRY)
            results = {}
            for label, arguments in job["bindings"].items():
                start = len(gpu.launches)
                try:
                    entry(*(tensor(shape, dtype) for shape, dtype in arguments))
                except Exception:
                    results[label] = {"error": traceback.format_exc()}
                    continue
                binaries = {
                    digest: binary
                    for function, _, _ in module.KERNELS.values()
                    for digest, binary in compiled_kernels(function).items()
                }
                results[label] = {
                    "launches": [
                        facts(launch, module, binaries)
                        for launch in gpu.launches[start:]
                    ]
                }
            report.append({"kernels": list(module.KERNELS), "bindings": results})
    print(json.dumps(report))
    """
)

#: Triton's binder specialises each integer argument: 1 becomes a
#: constexpr, other values below 2**31 are i32 (a multiple of 16 with a
#: divisibility hint), larger ones i64.
I64_SIZE = 2**31 + 1


def specialising_bindings(module: ModuleOp) -> dict[str, dict[str, int]]:
    """Bindings of the kernels' symbols at which Triton specialises them
    differently: all 1, all odd, all multiples of 16 (distinct values, so
    that a symbol passed in another's place shows)."""
    symbols = sorted(
        {s for op in module.ops if isinstance(op, tt.KernelOp) for s in op.symbol_names}
    )
    return {
        "one": dict.fromkeys(symbols, 1),
        "odd": {s: 5 + 2 * i for i, s in enumerate(symbols)},
        "div16": {s: 16 * (i + 1) for i, s in enumerate(symbols)},
    }


def host_arguments(module: ModuleOp, binding: dict[str, int]) -> list[list]:
    """[shape, torch dtype name] of each argument of the host function."""
    (function,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return [
        [[d.evaluate(binding) for d in buffer.dims], dtype(buffer.element_type).name]
        for buffer in function.function_type.inputs.data
    ]


def triton_type(value: int) -> str:
    if value == 1:
        return "constexpr"
    return "i32" if -(2**31) <= value < 2**31 else "i64"


def test_every_kernel_launches_on_the_real_path_for_an_h100(tmp_path: Path) -> None:
    """Each module's launcher at each specialising binding through Triton's
    real JIT path (binder, specialisation, compiler, cache, globals check):
    the launches the IR makes, each kernel compiled to sm_90 PTX and a
    cubin, with the specialisation the binding asked for, and the sizes
    kernel widening every symbol passed as i32 before any arithmetic."""
    texts = {
        "softmax": SOFTMAX,
        "row_sum": ROW_SUM,
        "scale_bias": SCALE_BIAS,
        "matmul f32": matmul_module("f32", "f32"),
        "matmul f16": matmul_module("f16", "f32"),
        "matmul i32": matmul_module("i32", "i32"),
        "chain": CHAIN,
        **{
            f"reduce {kind} {element}": row_reduce_module(kind, element, *rest)
            for kind, element, *rest in REDUCTIONS
        },
        "elementwise f32": elementwise_module(
            "f32",
            [("unary", k) for k in UNARY_FLOAT]
            + [("binary", k) for k in BINARY_FLOAT]
            + [("cmp", k) for k in COMPARE],
        ),
        "elementwise bf16": elementwise_module(
            "bf16",
            [("unary", k) for k in UNARY_FLOAT] + [("binary", k) for k in BINARY_FLOAT],
        ),
        "elementwise i64": elementwise_module(
            "i64", [("binary", k) for k in [*BINARY_INT, "pow"]], scalar_rhs=True
        ),
        "hostile": HOSTILE,
        "sizes": SIZES,
    }
    jobs, expected = [], {}
    for name, text in texts.items():
        _, module = lower(text)
        bindings = specialising_bindings(module)
        if name == "hostile":
            bindings["div16"]["range"] = 8  # its guard: range <= 8
        if name == "sizes":
            # M past 2**31 (an i64), N odd (an i32). The launcher reads M
            # from an argument of 2**31 + 1 floats: a sparse file mapping.
            bindings["i64"] = {"M": I64_SIZE, "N": 7}
        jobs.append(
            {
                "source": emit_module(module),
                "bindings": {
                    label: host_arguments(module, binding)
                    for label, binding in bindings.items()
                },
            }
        )
        for label, binding in bindings.items():
            expected[name, label] = expected_launches(module, binding)
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs))
    # Triton's disk cache (TRITON_CACHE_DIR, else ~/.triton/cache) keys each
    # binary by source, specialisation, options, target and Triton version:
    # a cold run compiles every kernel with ptxas (about 15 s on 2 cores), a
    # warm one reads the same binaries back (about 4 s).
    completed = run_compiling(["-c", LAUNCH_SCRIPT, str(path)], timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    report = dict(
        zip(texts, json.loads(completed.stdout.strip().splitlines()[-1]), strict=True)
    )
    specialisations = set()
    for name, result in report.items():
        launched_kernels = set()
        for label, call in result["bindings"].items():
            where = f"{name} at {label}"
            assert "error" not in call, f"{where}: {call.get('error')}"
            launches = call["launches"]
            assert [
                [launch["kernel"], launch["grid"], [s[0] for s in launch["symbols"]]]
                for launch in launches
            ] == expected[name, label], where
            for launch in launches:
                at = f"{where}: {launch['kernel']}"
                assert launch["sm_90"], f"{at}: no sm_90 PTX"
                assert launch["entry"], f"{at}: the PTX has no entry for the kernel"
                assert launch["cubin_bytes"] > 0, f"{at}: no cubin"
                for value, kind, divisible in launch["symbols"]:
                    assert kind == triton_type(value), f"{at}: {value} bound as {kind}"
                    assert divisible == (kind != "constexpr" and value % 16 == 0), at
                    specialisations.add((kind, divisible))
                launched_kernels.add(launch["kernel"])
        assert launched_kernels == set(result["kernels"]), name
    # Every specialisation was compiled: constexpr, i32 with and without
    # the divisibility hint, and i64 (with an odd value).
    assert specialisations == {
        ("constexpr", False),
        ("i32", False),
        ("i32", True),
        ("i64", False),
    }
    # Symbols passed as i32 are widened to 64 bits before any arithmetic:
    # one sign extension per i32 symbol, none for constants and i64s (the
    # sizes kernel has no program id, whose widening would count too).
    for label, call in report["sizes"]["bindings"].items():
        (launch,) = call["launches"]
        i32s = [kind for _, kind, _ in launch["symbols"]].count("i32")
        assert launch["widenings"] == i32s, f"sizes at {label}"
    assert [
        [kind for _, kind, _ in call["launches"][0]["symbols"]]
        for call in report["sizes"]["bindings"].values()
    ] == [["constexpr"] * 2, ["i32"] * 2, ["i32"] * 2, ["i64", "i32"]]
