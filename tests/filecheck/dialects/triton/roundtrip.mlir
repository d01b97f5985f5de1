// Every triton op and type, in custom syntax: printed, re-parsed and printed
// again, directly and through the generic form; host functions keep their
// memory ops and launch triton kernels.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: triton.kernel @rowsum reduction (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "row sum: t.py:3" {
// CHECK-NEXT:    %row = triton.program_id 0 : i64
// CHECK-NEXT:    %d = triton.size D : i64
// CHECK-NEXT:    %nd = triton.size D*N + 1 : i64
// CHECK-NEXT:    %zero = triton.constant 0 : i64
// CHECK-NEXT:    %step = triton.constant 32 : i64
// CHECK-NEXT:    %r = triton.arange "BLOCK" : !triton.tensor<[32], i64>
// CHECK-NEXT:    %fz = triton.constant 0.000000e+00 : f32
// CHECK-NEXT:    %init = triton.full %fz : f32 -> !triton.tensor<[32], f32>
// CHECK-NEXT:    %base = triton.binary mul %row, %d : (i64, i64) -> i64
// CHECK-NEXT:    %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!triton.tensor<[32], f32>) : i64 {
// CHECK-NEXT:      %col = triton.binary add %r, %k : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %m = triton.cmp lt %col, %d : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i1>
// CHECK-NEXT:      %off = triton.binary add %col, %base : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %v = triton.load %x[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[32], i64>] mask !triton.tensor<[32], i1> -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %e = triton.unary exp %v : !triton.tensor<[32], f32>
// CHECK-NEXT:      %z = triton.where %m, %e, %fz : (!triton.tensor<[32], i1>, !triton.tensor<[32], f32>, f32) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %n = triton.binary add %a, %z : (!triton.tensor<[32], f32>, !triton.tensor<[32], f32>) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      scf.yield %n : !triton.tensor<[32], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = triton.reduce sum %acc 0 : !triton.tensor<[32], f32> -> f32
// CHECK-NEXT:    %i = triton.reduce argmax %acc 0 : !triton.tensor<[32], f32> -> i64
// CHECK-NEXT:    %c = triton.cast %i : i64 -> f32
// CHECK-NEXT:    %t = triton.binary add %s, %c : (f32, f32) -> f32
// CHECK-NEXT:    triton.store %t, %out[%row] : f32, !triton.ptr<f32>[i64]
// CHECK-NEXT:  }
triton.kernel @rowsum reduction (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "row sum: t.py:3" {
  %row = triton.program_id 0 : i64
  %d = triton.size D : i64
  %nd = triton.size N * D + 1 : i64
  %zero = triton.constant 0 : i64
  %step = triton.constant 32 : i64
  %r = triton.arange "BLOCK" : !triton.tensor<[32], i64>
  %fz = triton.constant 0.0 : f32
  %init = triton.full %fz : f32 -> !triton.tensor<[32], f32>
  %base = triton.binary mul %row, %d : (i64, i64) -> i64
  %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!triton.tensor<[32], f32>) : i64 {
    %col = triton.binary add %r, %k : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
    %m = triton.cmp lt %col, %d : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i1>
    %off = triton.binary add %col, %base : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
    %v = triton.load %x[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[32], i64>] mask !triton.tensor<[32], i1> -> !triton.tensor<[32], f32>
    %e = triton.unary exp %v : !triton.tensor<[32], f32>
    %z = triton.where %m, %e, %fz : (!triton.tensor<[32], i1>, !triton.tensor<[32], f32>, f32) -> !triton.tensor<[32], f32>
    %n = triton.binary add %a, %z : (!triton.tensor<[32], f32>, !triton.tensor<[32], f32>) -> !triton.tensor<[32], f32>
    scf.yield %n : !triton.tensor<[32], f32>
  }
  %s = triton.reduce sum %acc 0 : !triton.tensor<[32], f32> -> f32
  %i = triton.reduce argmax %acc 0 : !triton.tensor<[32], f32> -> i64
  %c = triton.cast %i : i64 -> f32
  %t = triton.binary add %s, %c : (f32, f32) -> f32
  triton.store %t, %out[%row] : f32, !triton.ptr<f32>[i64]
}

// CHECK-LABEL: triton.kernel @matmul matmul (%a: !triton.ptr<f32>, %b: !triton.ptr<f32>, %c: !triton.ptr<f32>, %K: i32) inputs 2 grid [4, 1] tiles {BM = 16, BN = 16, BK = 16} symbols [K] reason "" {
// CHECK:         %rm = triton.arange "BM" : !triton.tensor<[16, 1], i32>
// CHECK-NEXT:    %rn = triton.arange "BN" : !triton.tensor<[1, 16], i32>
// CHECK:         %lhs = triton.load %a[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
// CHECK:         %dot = triton.dot %lhs, %rhs, %acc : (!triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>) -> !triton.tensor<[16, 16], f32>
// CHECK:         triton.store %dot, %c[%co] : !triton.tensor<[16, 16], f32>, !triton.ptr<f32>[!triton.tensor<[16, 16], i32>]
triton.kernel @matmul matmul (%a: !triton.ptr<f32>, %b: !triton.ptr<f32>, %c: !triton.ptr<f32>, %K: i32) inputs 2 grid [4, 1] tiles {BM = 16, BN = 16, BK = 16} symbols [K] reason "" {
  %rm = triton.arange "BM" : !triton.tensor<[16, 1], i32>
  %rn = triton.arange "BN" : !triton.tensor<[1, 16], i32>
  %sixteen = triton.constant 16 : i32
  %rows = triton.binary mul %rm, %sixteen : (!triton.tensor<[16, 1], i32>, i32) -> !triton.tensor<[16, 1], i32>
  %ao = triton.binary add %rows, %rn : (!triton.tensor<[16, 1], i32>, !triton.tensor<[1, 16], i32>) -> !triton.tensor<[16, 16], i32>
  %lhs = triton.load %a[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
  %rhs = triton.load %b[%ao] : !triton.ptr<f32>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f32>
  %zero = triton.constant 0.0 : f32
  %acc = triton.full %zero : f32 -> !triton.tensor<[16, 16], f32>
  %dot = triton.dot %lhs, %rhs, %acc : (!triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>, !triton.tensor<[16, 16], f32>) -> !triton.tensor<[16, 16], f32>
  %co = triton.binary add %rows, %rn : (!triton.tensor<[16, 1], i32>, !triton.tensor<[1, 16], i32>) -> !triton.tensor<[16, 16], i32>
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
// GENERIC:      "triton.size"() <{expr = #sym.expr<D*N + 1>}> : () -> i64
// GENERIC:      "triton.arange"() <{block = "BLOCK"}> : () -> !triton.tensor<[32], i64>
// GENERIC:      "triton.load"(%x, %off, %m) <{operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC:      "triton.reduce"(%acc) <{kind = #elementwise<reduction argmax>, axis = 0 : i64}>
// GENERIC:      "triton.store"(%t, %out, %row) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (f32, !triton.ptr<f32>, i64) -> ()
