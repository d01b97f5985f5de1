// --check-semantics interprets the module before and after every pass; a
// pipeline that keeps the results prints what it prints without the flag.
// (A pass that changes them is caught in tests/test_check_pass.py, which
// can register a deliberately wrong pass.)

// RUN: irc-opt %s -p canonicalize,cse --check-semantics --check-semantics-runs=8 | filecheck %s
// RUN: irc-opt %s -p canonicalize,cse | filecheck %s
// RUN: not irc-opt %s --check-semantics-runs=0 2>&1 | filecheck %s --check-prefix=RUNS

// CHECK:      func.func @f(%x: !graph.tensor<[N, 2], f32>, %y: !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 2], f32> {
// CHECK-NEXT:   %d = graph.sub %x, %y : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:   %e = graph.exp %d : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:   %s = graph.add %e, %e : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:   func.return %s : !graph.tensor<[N, 2], f32>

// RUNS: error: argument --check-semantics-runs: expected a positive integer, got '0'

func.func @f(%x: !graph.tensor<[N, 2], f32>, %y: !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 2], f32> {
  %d = graph.sub %x, %y : !graph.tensor<[N, 2], f32>
  %one = graph.constant 1.0 : f32 -> !graph.tensor<[N, 2], f32>
  %d1 = graph.mul %d, %one : !graph.tensor<[N, 2], f32>
  %e = graph.exp %d1 : !graph.tensor<[N, 2], f32>
  %e2 = graph.exp %d : !graph.tensor<[N, 2], f32>
  %s = graph.add %e, %e2 : !graph.tensor<[N, 2], f32>
  func.return %s : !graph.tensor<[N, 2], f32>
}
