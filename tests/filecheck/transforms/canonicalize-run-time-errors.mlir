// canonicalize on programs that fail at run time: an integer raised to a
// negative power has no integer result, so the pow is left for run time to
// report, with what can fold around it folded. --check-semantics cannot run
// these programs (the reference interpreter raises), which is why they are
// not in canonicalize.mlir; tests/test_graph_canonicalization.py checks that
// each still raises after the pass.

// RUN: irc-opt %s --split-input-file -p canonicalize | filecheck %s

// A second run changes nothing (the output is a fixed point).
// RUN: irc-opt %s --split-input-file -p canonicalize > %t.mlir
// RUN: irc-opt %t.mlir --split-input-file -p canonicalize | diff %t.mlir -

// Left to run time: integer division by zero, NaN cast to int, int ** -1.
// The composites (rsqrt here) fold with the reference interpreter's rounding.
// CHECK-LABEL: func.func @no_fold(
// CHECK:         %q = graph.floordiv %seven, %zero
// CHECK-NEXT:    %c = graph.cast %nan
// CHECK-NEXT:    %p = graph.pow %seven, %minus
// CHECK-NEXT:    %s = graph.constant 0.707106769 : f32
// CHECK-NEXT:    func.return %q, %c, %p, %s :
func.func @no_fold(%x: !graph.tensor<[], f32>) -> (!graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], f32>) {
  %seven = graph.constant 7 : i32 -> !graph.tensor<[], i32>
  %zero = graph.constant 0 : i32 -> !graph.tensor<[], i32>
  %minus = graph.constant -1 : i32 -> !graph.tensor<[], i32>
  %nan = graph.constant 0x7FC00000 : f32 -> !graph.tensor<[], f32>
  %q = graph.floordiv %seven, %zero : !graph.tensor<[], i32>
  %c = graph.cast %nan : !graph.tensor<[], f32> -> !graph.tensor<[], i32>
  %p = graph.pow %seven, %minus : !graph.tensor<[], i32>
  %two = graph.constant 2.0 : f32 -> !graph.tensor<[], f32>
  %s = graph.rsqrt %two : !graph.tensor<[], f32>
  func.return %q, %c, %p, %s : !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], f32>
}

// -----

// CHECK-LABEL: func.func @negative_integer_power(
// CHECK-NEXT:    %a = graph.constant 2 : i32 -> !graph.tensor<[], i32>
// CHECK-NEXT:    %b = graph.constant -1 : i32 -> !graph.tensor<[], i32>
// CHECK-NEXT:    %r = graph.pow %a, %b : !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[], i32>
func.func @negative_integer_power() -> !graph.tensor<[], i32> {
  %a = graph.constant 2 : i32 -> !graph.tensor<[], i32>
  %b = graph.constant -1 : i32 -> !graph.tensor<[], i32>
  %r = graph.pow %a, %b : !graph.tensor<[], i32>
  func.return %r : !graph.tensor<[], i32>
}

// -----

// Writing back a window read from [2] of an axis of size N, which fails at
// run time for N <= 2, is kept.
// CHECK-LABEL: func.func @insert_own_slice_unproven_stays(
// CHECK-NEXT:    %s = graph.slice %x [2] [1]
// CHECK-NEXT:    %r = graph.insert_slice %s into %x [2] [1]
func.func @insert_own_slice_unproven_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %s = graph.slice %x [2] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[1], f32>
  %r = graph.insert_slice %s into %x [2] [1] : !graph.tensor<[1], f32> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}
