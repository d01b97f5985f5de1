// graph.scan: printed, re-parsed and printed again, directly and through the
// generic form; its verifier's errors; canonicalize drops a scan along an axis
// of size 1.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: irc-opt %s -p canonicalize | filecheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @scan(
// CANON-LABEL: func.func @scan(
func.func @scan(%x: !graph.tensor<[B, N, D], f32>, %i: !graph.tensor<[N], i64>, %h: !graph.tensor<[N, 1], f16>) -> (!graph.tensor<[B, N, D], f32>, !graph.tensor<[B, N, D], f32>, !graph.tensor<[N], i64>, !graph.tensor<[N, 1], f16>) {
  // CHECK-NEXT: %0 = graph.scan sum %x [2] : !graph.tensor<[B, N, D], f32>
  // CHECK-NEXT: %1 = graph.scan prod %x [0] : !graph.tensor<[B, N, D], f32>
  // CHECK-NEXT: %2 = graph.scan sum %i [0] : !graph.tensor<[N], i64>
  // CHECK-NEXT: %3 = graph.scan sum %h [1] : !graph.tensor<[N, 1], f16>
  // GENERIC: "graph.scan"(%x) <{kind = #elementwise<reduction sum>, axis = 2 : i64}> : (!graph.tensor<[B, N, D], f32>) -> !graph.tensor<[B, N, D], f32>
  // CANON-NEXT: %0 = graph.scan sum %x [2]
  // CANON-NEXT: %1 = graph.scan prod %x [0]
  // CANON-NEXT: %2 = graph.scan sum %i [0]
  // CANON-NEXT: func.return %0, %1, %2, %h
  %0 = graph.scan sum %x [2] : !graph.tensor<[B, N, D], f32>
  %1 = graph.scan prod %x [0] : !graph.tensor<[B, N, D], f32>
  %2 = graph.scan sum %i [0] : !graph.tensor<[N], i64>
  %3 = graph.scan sum %h [1] : !graph.tensor<[N, 1], f16>
  func.return %0, %1, %2, %3 : !graph.tensor<[B, N, D], f32>, !graph.tensor<[B, N, D], f32>, !graph.tensor<[N], i64>, !graph.tensor<[N, 1], f16>
}
