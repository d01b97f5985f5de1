// Every memory op and the buffer type, in custom syntax: printed, re-parsed
// and printed again, directly and through the generic form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @types(
// CHECK-SAME: %rows: !memory.buffer<[N, D], [D, 1], f32>, %cols: !memory.buffer<[N, D], [1, N], f32>,
// CHECK-SAME: %scalar: !memory.buffer<[], [], i1>, %static: !memory.buffer<[2, 3], [3, 1], i64>,
// CHECK-SAME: %expr: !memory.buffer<[(N + 127) floordiv 128, 4*N], [4*N, 1], bf16>)
func.func @types(%rows: !memory.buffer<[N, D], [D, 1], f32>, %cols: !memory.buffer<[N, D], [1, N], f32>,
                 %scalar: !memory.buffer<[], [], i1>, %static: !memory.buffer<[2, 3], [3, 1], i64>,
                 %expr: !memory.buffer<[N ceildiv 128, N * 4], [4 * N, 1], bf16>) {
  func.return
}

// CHECK-LABEL: memory.kernel @rows reduction (%x: !memory.buffer<[N, 128], [128, 1], f32>, %out: !memory.buffer<[N, 128], [128, 1], f32>) inputs 1 grid [N] tiles {BLOCK_R = 128} symbols [N] reason "one row per program" {
// CHECK-NEXT:    %row = tile.program_id 0 : i64
// CHECK-NEXT:    %r = tile.range "BLOCK_R" : !loop.tile<[128], i64>
// CHECK-NEXT:    %c128 = tile.size 128 : i64
// CHECK-NEXT:    %m = tile.cmp lt %r, %c128 : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
// CHECK-NEXT:    %base = tile.binary mul %row, %c128 : (i64, i64) -> i64
// CHECK-NEXT:    %off = tile.binary add %base, %r : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
// CHECK-NEXT:    %v = memory.load %x[%off] mask %m : !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
// CHECK-NEXT:    %first = memory.load %x[%base] : !memory.buffer<[N, 128], [128, 1], f32>[i64] -> f32
// CHECK-NEXT:    %y = tile.binary sub %v, %first : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
// CHECK-NEXT:    memory.store %y, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
// CHECK-NEXT:    memory.store %first, %out[%base] : f32, !memory.buffer<[N, 128], [128, 1], f32>[i64]
// CHECK-NEXT:  }
memory.kernel @rows reduction (%x: !memory.buffer<[N, 128], [128, 1], f32>, %out: !memory.buffer<[N, 128], [128, 1], f32>) inputs 1 grid [N] tiles {BLOCK_R = 128} symbols [N] reason "one row per program" {
  %row = tile.program_id 0 : i64
  %r = tile.range "BLOCK_R" : !loop.tile<[128], i64>
  %c128 = tile.size 128 : i64
  %m = tile.cmp lt %r, %c128 : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
  %base = tile.binary mul %row, %c128 : (i64, i64) -> i64
  %off = tile.binary add %base, %r : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
  %v = memory.load %x[%off] mask %m : !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
  %first = memory.load %x[%base] : !memory.buffer<[N, 128], [128, 1], f32>[i64] -> f32
  %y = tile.binary sub %v, %first : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
  memory.store %y, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
  memory.store %first, %out[%base] : f32, !memory.buffer<[N, 128], [128, 1], f32>[i64]
}

// Several outputs, a 3-axis grid, no tiles, i32 offsets, a looped body and
// extra attributes.
// CHECK-LABEL: memory.kernel @many pointwise (%a: !memory.buffer<[B, N], [N, 1], i32>, %o0: !memory.buffer<[B, N], [N, 1], i32>, %o1: !memory.buffer<[B], [1], i32>) inputs 1 grid [B, 1, (N + 7) floordiv 8] tiles {} symbols [B, N] reason "" attributes {note = "kept"} {
// CHECK-NEXT:    %p = tile.program_id 0 : i32
// CHECK-NEXT:    %n = tile.size N : i32
// CHECK-NEXT:    %start = tile.binary mul %p, %n : (i32, i32) -> i32
// CHECK-NEXT:    %zero = tile.constant 0 : i32
// CHECK-NEXT:    %one = tile.constant 1 : i32
// CHECK-NEXT:    %total = scf.for %k = %zero to %n step %one iter_args(%acc = %zero) -> (i32) : i32 {
// CHECK-NEXT:      %at = tile.binary add %start, %k : (i32, i32) -> i32
// CHECK-NEXT:      %v = memory.load %a[%at] : !memory.buffer<[B, N], [N, 1], i32>[i32] -> i32
// CHECK-NEXT:      memory.store %v, %o0[%at] : i32, !memory.buffer<[B, N], [N, 1], i32>[i32]
// CHECK-NEXT:      %next = tile.binary add %acc, %v : (i32, i32) -> i32
// CHECK-NEXT:      scf.yield %next : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    memory.store %total, %o1[%p] : i32, !memory.buffer<[B], [1], i32>[i32]
// CHECK-NEXT:  }
memory.kernel @many pointwise (%a: !memory.buffer<[B, N], [N, 1], i32>, %o0: !memory.buffer<[B, N], [N, 1], i32>, %o1: !memory.buffer<[B], [1], i32>) inputs 1 grid [B, 1, N ceildiv 8] tiles {} symbols [N, B] reason "" attributes {note = "kept"} {
  %p = tile.program_id 0 : i32
  %n = tile.size N : i32
  %start = tile.binary mul %p, %n : (i32, i32) -> i32
  %zero = tile.constant 0 : i32
  %one = tile.constant 1 : i32
  %total = scf.for %k = %zero to %n step %one iter_args(%acc = %zero) -> (i32) : i32 {
    %at = tile.binary add %start, %k : (i32, i32) -> i32
    %v = memory.load %a[%at] : !memory.buffer<[B, N], [N, 1], i32>[i32] -> i32
    memory.store %v, %o0[%at] : i32, !memory.buffer<[B, N], [N, 1], i32>[i32]
    %next = tile.binary add %acc, %v : (i32, i32) -> i32
    scf.yield %next : i32
  }
  memory.store %total, %o1[%p] : i32, !memory.buffer<[B], [1], i32>[i32]
}

// CHECK-LABEL: func.func @host(%x: !memory.buffer<[N, 128], [128, 1], f32>) -> (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[2], [1], f32>) {
// CHECK-NEXT:    sym.guard N <= 1024, "one row per program"
// CHECK-NEXT:    sym.guard N mod 16 == 0
// CHECK-NEXT:    %c = memory.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32> -> !memory.buffer<[2], [1], f32>
// CHECK-NEXT:    %t = memory.alloc : !memory.buffer<[N, 128], [128, 1], f32>
// CHECK-NEXT:    memory.launch @rows(%x, %t) : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>)
// CHECK-NEXT:    %u = memory.reuse %t : !memory.buffer<[N, 128], [128, 1], f32> -> !memory.buffer<[128, N], [N, 1], f32>
// CHECK-NEXT:    %y = memory.alloc {align = 16 : i64} : !memory.buffer<[N, 128], [128, 1], f32>
// CHECK-NEXT:    memory.launch @rows(%x, %y) : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>)
// CHECK-NEXT:    memory.dealloc %u : !memory.buffer<[128, N], [N, 1], f32>
// CHECK-NEXT:    func.return %y, %c : !memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[2], [1], f32>
// CHECK-NEXT:  }
func.func @host(%x: !memory.buffer<[N, 128], [128, 1], f32>) -> (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[2], [1], f32>) {
  sym.guard N <= 1024, "one row per program"
  sym.guard N mod 16 == 0
  %c = memory.constant dense<[1.0, 2.0]> : tensor<2xf32> -> !memory.buffer<[2], [1], f32>
  %t = memory.alloc : !memory.buffer<[N, 128], [128, 1], f32>
  memory.launch @rows(%x, %t) : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>)
  %u = memory.reuse %t : !memory.buffer<[N, 128], [128, 1], f32> -> !memory.buffer<[128, N], [N, 1], f32>
  %y = memory.alloc {align = 16} : !memory.buffer<[N, 128], [128, 1], f32>
  memory.launch @rows(%x, %y) : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>)
  memory.dealloc %u : !memory.buffer<[128, N], [N, 1], f32>
  func.return %y, %c : !memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[2], [1], f32>
}

// Reuse of a buffer whose size equals only under a guard, stated anywhere
// in the block.
// CHECK-LABEL: func.func @reuse_under_guard(
// CHECK-NEXT:    %t = memory.alloc : !memory.buffer<[M], [1], i64>
// CHECK-NEXT:    %u = memory.reuse %t : !memory.buffer<[M], [1], i64> -> !memory.buffer<[N, 2], [2, 1], i64>
// CHECK-NEXT:    sym.guard M == 2*N
func.func @reuse_under_guard(%x: !memory.buffer<[N], [1], i64>) {
  %t = memory.alloc : !memory.buffer<[M], [1], i64>
  %u = memory.reuse %t : !memory.buffer<[M], [1], i64> -> !memory.buffer<[N, 2], [2, 1], i64>
  sym.guard M == 2*N
  func.return
}

// GENERIC: "memory.kernel"() <{sym_name = "rows", kind = "reduction", inputs = 1 : i64, grid = [#sym.expr<N>], tiles = {BLOCK_R = 128 : i64}, symbols = ["N"], reason = "one row per program"}> ({
// GENERIC-NEXT: ^bb0(%x: !memory.buffer<[N, 128], [128, 1], f32>, %out: !memory.buffer<[N, 128], [128, 1], f32>):
// GENERIC: "memory.load"(%x, %off, %m) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (!memory.buffer<[N, 128], [128, 1], f32>, !loop.tile<[128], i64>, !loop.tile<[128], i1>) -> !loop.tile<[128], f32>
// GENERIC: "memory.load"(%x, %base) <{operandSegmentSizes = array<i32: 1, 1, 0>}>
// GENERIC: "memory.store"(%y, %out, %off, %m) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}>
// GENERIC: "sym.guard"() <{fact = #sym.fact<N <= 1024>, reason = "one row per program"}> : () -> ()
// GENERIC: "memory.constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}> : () -> !memory.buffer<[2], [1], f32>
// GENERIC: "memory.alloc"() : () -> !memory.buffer<[N, 128], [128, 1], f32>
// GENERIC: "memory.launch"(%x, %t) <{kernel = @rows}> : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>) -> ()
// GENERIC: "memory.reuse"(%t) : (!memory.buffer<[N, 128], [128, 1], f32>) -> !memory.buffer<[128, N], [N, 1], f32>
// GENERIC: "memory.dealloc"(%u) : (!memory.buffer<[128, N], [N, 1], f32>) -> ()
