// Every triton op and type, in custom syntax: printed, re-parsed and printed
// again, directly and through the generic form; host functions keep their
// memory ops and launch triton kernels.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: triton.kernel @rowsum reduction (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "row sum: t.py:3" {
// CHECK-NEXT:    %row = tile.program_id 0 : i64
// CHECK-NEXT:    %d = tile.size D : i64
// CHECK-NEXT:    %nd = tile.size D*N + 1 : i64
// CHECK-NEXT:    %zero = tile.constant 0 : i64
// CHECK-NEXT:    %step = tile.constant 32 : i64
// CHECK-NEXT:    %r = tile.range "BLOCK" : !triton.tensor<[32], i64>
// CHECK-NEXT:    %fz = tile.constant 0.000000e+00 : f32
// CHECK-NEXT:    %init = tile.splat %fz : f32 -> !triton.tensor<[32], f32>
// CHECK-NEXT:    %base = tile.binary mul %row, %d : (i64, i64) -> i64
// CHECK-NEXT:    %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!triton.tensor<[32], f32>) : i64 {
// CHECK-NEXT:      %col = tile.binary add %r, %k : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %m = tile.cmp lt %col, %d : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i1>
// CHECK-NEXT:      %off = tile.binary add %col, %base : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %v = triton.load %x[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[32], i64>] mask !triton.tensor<[32], i1> -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %e = tile.unary exp %v : !triton.tensor<[32], f32>
// CHECK-NEXT:      %z = tile.select %m, %e, %fz : (!triton.tensor<[32], i1>, !triton.tensor<[32], f32>, f32) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %n = tile.binary add %a, %z : (!triton.tensor<[32], f32>, !triton.tensor<[32], f32>) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      scf.yield %n : !triton.tensor<[32], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = tile.reduce sum %acc 0 : !triton.tensor<[32], f32> -> f32
// CHECK-NEXT:    %i = tile.reduce argmax %acc 0 : !triton.tensor<[32], f32> -> i64
// CHECK-NEXT:    %c = tile.cast %i : i64 -> f32
// CHECK-NEXT:    %t = tile.binary add %s, %c : (f32, f32) -> f32
// CHECK-NEXT:    triton.store %t, %out[%row] : f32, !triton.ptr<f32>[i64]
// CHECK-NEXT:  }
triton.kernel @rowsum reduction (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "row sum: t.py:3" {
  %row = tile.program_id 0 : i64
  %d = tile.size D : i64
  %nd = tile.size N * D + 1 : i64
  %zero = tile.constant 0 : i64
  %step = tile.constant 32 : i64
  %r = tile.range "BLOCK" : !triton.tensor<[32], i64>
  %fz = tile.constant 0.0 : f32
  %init = tile.splat %fz : f32 -> !triton.tensor<[32], f32>
  %base = tile.binary mul %row, %d : (i64, i64) -> i64
  %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!triton.tensor<[32], f32>) : i64 {
    %col = tile.binary add %r, %k : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
    %m = tile.cmp lt %col, %d : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i1>
    %off = tile.binary add %col, %base : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
    %v = triton.load %x[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[32], i64>] mask !triton.tensor<[32], i1> -> !triton.tensor<[32], f32>
    %e = tile.unary exp %v : !triton.tensor<[32], f32>
    %z = tile.select %m, %e, %fz : (!triton.tensor<[32], i1>, !triton.tensor<[32], f32>, f32) -> !triton.tensor<[32], f32>
    %n = tile.binary add %a, %z : (!triton.tensor<[32], f32>, !triton.tensor<[32], f32>) -> !triton.tensor<[32], f32>
    scf.yield %n : !triton.tensor<[32], f32>
  }
  %s = tile.reduce sum %acc 0 : !triton.tensor<[32], f32> -> f32
  %i = tile.reduce argmax %acc 0 : !triton.tensor<[32], f32> -> i64
  %c = tile.cast %i : i64 -> f32
  %t = tile.binary add %s, %c : (f32, f32) -> f32
  triton.store %t, %out[%row] : f32, !triton.ptr<f32>[i64]
}

// CHECK-LABEL: triton.kernel @matmul matmul (%a: !triton.ptr<f32>, %b: !triton.ptr<f32>, %c: !triton.ptr<f32>, %K: i32) inputs 2 grid [4, 1] tiles {BM = 16, BN = 16, BK = 16} symbols [K] reason "" {
// CHECK:         %rm = tile.range "BM" : !triton.tensor<[16, 1], i32>
// CHECK-NEXT:    %rn = tile.range "BN" : !triton.tensor<[1, 16], i32>
// CHECK:         %lhs = triton.load %a[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
// CHECK:         %dot = tile.dot %lhs, %rhs, %acc : (!triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>) -> !triton.tensor<[16, 16], f32>
// CHECK:         triton.store %dot, %c[%co] : !triton.tensor<[16, 16], f32>, !triton.ptr<f32>[!triton.tensor<[16, 16], i32>]
triton.kernel @matmul matmul (%a: !triton.ptr<f32>, %b: !triton.ptr<f32>, %c: !triton.ptr<f32>, %K: i32) inputs 2 grid [4, 1] tiles {BM = 16, BN = 16, BK = 16} symbols [K] reason "" {
  %rm = tile.range "BM" : !triton.tensor<[16, 1], i32>
  %rn = tile.range "BN" : !triton.tensor<[1, 16], i32>
  %sixteen = tile.constant 16 : i32
  %rows = tile.binary mul %rm, %sixteen : (!triton.tensor<[16, 1], i32>, i32) -> !triton.tensor<[16, 1], i32>
  %ao = tile.binary add %rows, %rn : (!triton.tensor<[16, 1], i32>, !triton.tensor<[1, 16], i32>) -> !triton.tensor<[16, 16], i32>
  %lhs = triton.load %a[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
  %rhs = triton.load %b[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
  %zero = tile.constant 0.0 : f32
  %acc = tile.splat %zero : f32 -> !triton.tensor<[16, 16], f32>
  %dot = tile.dot %lhs, %rhs, %acc : (!triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>) -> !triton.tensor<[16, 16], f32>
  %co = tile.binary add %rows, %rn : (!triton.tensor<[16, 1], i32>, !triton.tensor<[1, 16], i32>) -> !triton.tensor<[16, 16], i32>
  triton.store %dot, %c[%co] : !triton.tensor<[16, 16], f32>, !triton.ptr<f32>[!triton.tensor<[16, 16], i32>]
}

// CHECK-LABEL: func.func @host(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N], [1], f32> {
// CHECK-NEXT:    sym.guard N <= 1024, "rows fit"
// CHECK-NEXT:    %0 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @rowsum(%x, %0) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
// CHECK-NEXT:    func.return %0 : !memory.buffer<[N], [1], f32>
func.func @host(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N], [1], f32> {
  sym.guard N <= 1024, "rows fit"
  %0 = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum(%x, %0) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  func.return %0 : !memory.buffer<[N], [1], f32>
}

// GENERIC: "triton.kernel"() <{sym_name = "rowsum", kind = "reduction", inputs = 1 : i64, grid = [#sym.expr<N>], tiles = {BLOCK = 32 : i64}, symbols = ["D", "N"], reason = "row sum: t.py:3"}> ({
// GENERIC-NEXT: ^bb0(%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64):
// GENERIC:      "tile.size"() <{expr = #sym.expr<D*N + 1>}> : () -> i64
// GENERIC:      "tile.range"() <{block = "BLOCK"}> : () -> !triton.tensor<[32], i64>
// GENERIC:      "triton.load"(%x, %off, %m) <{operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC:      "tile.reduce"(%acc) <{kind = #elementwise<reduction argmax>, axis = 0 : i64}>
// GENERIC:      "triton.store"(%t, %out, %row) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (f32, !triton.ptr<f32>, i64) -> ()
