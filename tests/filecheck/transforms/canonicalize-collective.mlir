// canonicalize on collectives: an all-reduce of a value every member holds
// alike needs no communication (a sum is the value times the group size),
// a broadcast of one is the value, and two all-reduces in a row over
// disjoint axes are one. tests/test_distributed.py checks the patterns
// keep meaning on simulated ranks (check_pass).

// RUN: irc-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @reduce_twice
func.func @reduce_twice(%x: !graph.tensor<[4], f32>) -> !graph.tensor<[4], f32> {
  // CHECK: %[[A:.*]] = collective.all_reduce %x
  // CHECK-NEXT: %[[N:.*]] = graph.constant 2.000000e+00
  // CHECK-NEXT: %{{.*}} = graph.mul %[[A]], %[[N]]
  // CHECK-NOT: collective.
  %a = collective.all_reduce %x {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  %b = collective.all_reduce %a {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return %b : !graph.tensor<[4], f32>
}

// -----

// CHECK-LABEL: func.func @merge_axes
func.func @merge_axes(%x: !graph.tensor<[4], f32>) -> !graph.tensor<[4], f32> {
  // CHECK: collective.all_reduce %x {{.*}} axes = ["data", "model"], reduction = "max"
  // CHECK-NOT: collective.all_reduce
  %a = collective.all_reduce %x {mesh = #collective.mesh<data = 2, model = 2>, axes = ["model"], reduction = "max"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  %b = collective.all_reduce %a {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data"], reduction = "max"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return %b : !graph.tensor<[4], f32>
}

// -----

// The function declares the mesh its ranks run it on: none of its
// collectives is left to say so.
// CHECK-LABEL: func.func @replicated_by_construction
func.func @replicated_by_construction() -> !graph.tensor<[4], f32> attributes {collective.spmd = #collective.mesh<data = 2>} {
  // CHECK-NOT: = collective.
  %c = graph.constant 3.000000e+00 : f32 -> !graph.tensor<[4], f32>
  %e = graph.exp %c : !graph.tensor<[4], f32>
  %m = collective.all_reduce %e {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "mean"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  %b = collective.broadcast %m {mesh = #collective.mesh<data = 2>, axes = ["data"], root = 1 : i64} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return %b : !graph.tensor<[4], f32>
}

// -----

// An argument differs per rank: its all-reduce stays.
// CHECK-LABEL: func.func @argument
func.func @argument(%x: !graph.tensor<[4], f32>) -> !graph.tensor<[4], f32> {
  // CHECK: collective.all_reduce %x
  %a = collective.all_reduce %x {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "mean"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return %a : !graph.tensor<[4], f32>
}
