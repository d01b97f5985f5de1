// cse and dce (xDSL's) inside the regions of graph.for, graph.while and
// graph.cond: each region is a block of pure graph ops, so equal ops merge
// and unused ones go there as in a function body; an unused loop goes as a
// whole (the region ops have no effects of their own).

// RUN: irc-opt %s -p cse,dce | filecheck %s
// RUN: irc-opt %s -p cse,dce --check-semantics | filecheck %s

// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %r = graph.for N carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
// CHECK-NEXT:      %a = graph.exp %s : !graph.tensor<[D], f32>
// CHECK-NEXT:      %u = graph.add %a, %a : !graph.tensor<[D], f32>
// CHECK-NEXT:      graph.yield %u : !graph.tensor<[D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @f(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> !graph.tensor<[D], f32> {
  %e0 = graph.exp %c : !graph.tensor<[D], f32>
  %r = graph.for N carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %a = graph.exp %s : !graph.tensor<[D], f32>
    %b = graph.exp %s : !graph.tensor<[D], f32>
    %dead = graph.tanh %s : !graph.tensor<[D], f32>
    %u = graph.add %a, %b : !graph.tensor<[D], f32>
    graph.yield %u : !graph.tensor<[D], f32>
  }
  %unused = graph.for N carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
    graph.yield %s : !graph.tensor<[D], f32>
  }
  func.return %r : !graph.tensor<[D], f32>
}
