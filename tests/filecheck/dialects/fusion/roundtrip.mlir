// Every fusion.kernel kind in custom syntax: printed, re-parsed and printed
// again, directly and through the generic form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @pointwise(
// CHECK-NEXT:    %0, %1 = fusion.kernel @k0 pointwise (%a, %b) : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) reason "two outputs \22quoted\22" {
// CHECK-NEXT:    ^bb0(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %2 = graph.add %x, %y : !graph.tensor<[N], f32>
// CHECK-NEXT:      fusion.yield %2, %x : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0, %1
func.func @pointwise(%a: !graph.tensor<[N], f32>, %b: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %0:2 = fusion.kernel @k0 pointwise (%a, %b) : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) reason "two outputs \"quoted\"" {
  ^bb0(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>):
    %1 = graph.add %x, %y : !graph.tensor<[N], f32>
    fusion.yield %1, %x : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  func.return %0#0, %0#1 : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// A kernel without operands, and one with further attributes.
// CHECK-LABEL: func.func @no_inputs(
// CHECK-NEXT:    %0 = fusion.kernel @k0 pointwise () : () -> (!graph.tensor<[N], i64>) reason "" {
// CHECK-NEXT:      %1 = graph.iota [0] : !graph.tensor<[N], i64>
// CHECK-NEXT:      fusion.yield %1 : !graph.tensor<[N], i64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %1 = fusion.kernel @k1 pointwise (%0) : (!graph.tensor<[N], i64>) -> (!graph.tensor<[N], i64>) reason "r" attributes {tag = 1 : i64} {
func.func @no_inputs() -> !graph.tensor<[N], i64> {
  %0 = fusion.kernel @k0 pointwise () : () -> (!graph.tensor<[N], i64>) reason "" {
    %1 = graph.iota [0] : !graph.tensor<[N], i64>
    fusion.yield %1 : !graph.tensor<[N], i64>
  }
  %1 = fusion.kernel @k1 pointwise (%0) : (!graph.tensor<[N], i64>) -> (!graph.tensor<[N], i64>) reason "r" attributes {tag = 1 : i64} {
  ^bb0(%i: !graph.tensor<[N], i64>):
    %2 = graph.add %i, %i : !graph.tensor<[N], i64>
    fusion.yield %2 : !graph.tensor<[N], i64>
  }
  func.return %1 : !graph.tensor<[N], i64>
}

// Softmax: two reductions of one row structure, a row-mapping broadcast.
// CHECK-LABEL: func.func @reduction(
// CHECK-NEXT:    %0 = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "softmax" {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %m = graph.reduce max %x_1 [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
// CHECK-NEXT:      %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
// CHECK-NEXT:      %d = graph.sub %x_1, %mb : !graph.tensor<[N, D], f32>
// CHECK-NEXT:      %e = graph.exp %d : !graph.tensor<[N, D], f32>
// CHECK-NEXT:      %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
// CHECK-NEXT:      %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
// CHECK-NEXT:      %r = graph.div %e, %sb : !graph.tensor<[N, D], f32>
// CHECK-NEXT:      fusion.yield %r : !graph.tensor<[N, D], f32>
func.func @reduction(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %0 = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "softmax" {
  ^bb0(%x_1: !graph.tensor<[N, D], f32>):
    %m = graph.reduce max %x_1 [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %x_1, %mb : !graph.tensor<[N, D], f32>
    %e = graph.exp %d : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %r = graph.div %e, %sb : !graph.tensor<[N, D], f32>
    fusion.yield %r : !graph.tensor<[N, D], f32>
  }
  func.return %0 : !graph.tensor<[N, D], f32>
}

// A matmul with a transposed operand and a bias epilogue.
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %0 = fusion.kernel @k0 matmul (%a, %w, %b) : (!graph.tensor<[M, K], f32>, !graph.tensor<[N, K], f32>, !graph.tensor<[N], f32>) -> (!graph.tensor<[M, N], f32>) reason "linear" {
// CHECK-NEXT:    ^bb0(%a_1: !graph.tensor<[M, K], f32>, %w_1: !graph.tensor<[N, K], f32>, %b_1: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %wt = graph.transpose %w_1 [1, 0] : !graph.tensor<[N, K], f32> -> !graph.tensor<[K, N], f32>
// CHECK-NEXT:      %p = graph.matmul %a_1, %wt : (!graph.tensor<[M, K], f32>, !graph.tensor<[K, N], f32>) -> !graph.tensor<[M, N], f32>
// CHECK-NEXT:      %bb = graph.broadcast %b_1 : !graph.tensor<[N], f32> -> !graph.tensor<[M, N], f32>
// CHECK-NEXT:      %y = graph.add %p, %bb : !graph.tensor<[M, N], f32>
// CHECK-NEXT:      fusion.yield %y : !graph.tensor<[M, N], f32>
// CHECK-NEXT:    }
func.func @matmul(%a: !graph.tensor<[M, K], f32>, %w: !graph.tensor<[N, K], f32>, %b: !graph.tensor<[N], f32>) -> !graph.tensor<[M, N], f32> {
  %0 = fusion.kernel @k0 matmul (%a, %w, %b) : (!graph.tensor<[M, K], f32>, !graph.tensor<[N, K], f32>, !graph.tensor<[N], f32>) -> (!graph.tensor<[M, N], f32>) reason "linear" {
  ^bb0(%a_1: !graph.tensor<[M, K], f32>, %w_1: !graph.tensor<[N, K], f32>, %b_1: !graph.tensor<[N], f32>):
    %wt = graph.transpose %w_1 [1, 0] : !graph.tensor<[N, K], f32> -> !graph.tensor<[K, N], f32>
    %p = graph.matmul %a_1, %wt : (!graph.tensor<[M, K], f32>, !graph.tensor<[K, N], f32>) -> !graph.tensor<[M, N], f32>
    %bb = graph.broadcast %b_1 : !graph.tensor<[N], f32> -> !graph.tensor<[M, N], f32>
    %y = graph.add %p, %bb : !graph.tensor<[M, N], f32>
    fusion.yield %y : !graph.tensor<[M, N], f32>
  }
  func.return %0 : !graph.tensor<[M, N], f32>
}

// A kernel name that is not an identifier is quoted.
// CHECK-LABEL: func.func @quoted_name(
// CHECK-NEXT:    %0 = fusion.kernel @"my kernel" pointwise (%x) : (!graph.tensor<[], f32>) -> (!graph.tensor<[], f32>) reason "r" {
func.func @quoted_name(%x: !graph.tensor<[], f32>) -> !graph.tensor<[], f32> {
  %0 = fusion.kernel @"my kernel" pointwise (%x) : (!graph.tensor<[], f32>) -> (!graph.tensor<[], f32>) reason "r" {
  ^bb0(%y: !graph.tensor<[], f32>):
    %1 = graph.neg %y : !graph.tensor<[], f32>
    fusion.yield %1 : !graph.tensor<[], f32>
  }
  func.return %0 : !graph.tensor<[], f32>
}

// The generic form spells the kernel's name, kind and reason as properties.

// GENERIC: "fusion.kernel"(%a, %b) <{sym_name = "k0", kind = "pointwise", reason = "two outputs \22quoted\22"}> ({
// GENERIC-NEXT: ^bb0(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>):
// GENERIC: "fusion.yield"(%2, %x) : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> ()
// GENERIC: "fusion.kernel"(%x) <{sym_name = "k0", kind = "reduction", reason = "softmax"}>
// GENERIC: "fusion.kernel"(%a, %w, %b) <{sym_name = "k0", kind = "matmul", reason = "linear"}>
