// fuse in a joint function: which forward values the backward reads is a
// min-cut over bytes of the whole graph (irc.lowering.saved_activations).
// Backward ops are those whose location autodiff marked loc("backward"(...)).

// RUN: irc-opt %s --split-input-file -p fuse | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse --check-semantics --check-semantics-runs=4 | filecheck %s

// The backward reads sin(u) and cos(u), u a sum of three arguments. The cut
// saves u (a write and a read) rather than sin and cos (two of each) or the
// three arguments (three reads): the forward kernel stores u, and the
// backward's kernel recomputes sin and cos from it.

// CHECK-LABEL: func.func @shared_sum(
// CHECK-NEXT:    %u, %y = fusion.kernel @k0 pointwise (%a, %b, %c) : {{.*}} reason "pointwise over [N, D] (graph.mul %y at f.py:4); fused: graph.add x2; recomputed here, not stored: graph.sin, graph.cos (elementwise, its users are in several kernels); graph.add %u at f.py:1 stored for k1 (not recomputed: the min-cut of forward and backward saves it: saving it moves fewer bytes than recomputing it)" {
// CHECK:         %dc = fusion.kernel @k1 reduction (%u, %g) : {{.*}} reason "row reduction over [0] of [N, D] (graph.reduce sum %dc at f.py:1); producers: graph.mul x2, graph.sub; recomputed here, not stored: graph.sin, graph.cos (elementwise, its users are in several kernels)" {
// CHECK-NEXT:    ^bb0(%u_1: !graph.tensor<[N, D], f32>, %g_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %v = graph.sin %u_1
// CHECK-NEXT:      %w = graph.cos %u_1
func.func @shared_sum(%a: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[N, D], f32>, %c: !graph.tensor<[N, D], f32>, %g: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>) {
  %ab = graph.add %a, %b : !graph.tensor<[N, D], f32> loc("f.py":5:1)
  %u = graph.add %ab, %c : !graph.tensor<[N, D], f32> loc("f.py":1:1)
  %v = graph.sin %u : !graph.tensor<[N, D], f32> loc("f.py":2:1)
  %w = graph.cos %u : !graph.tensor<[N, D], f32> loc("f.py":3:1)
  %y = graph.mul %v, %w : !graph.tensor<[N, D], f32> loc("f.py":4:1)
  %dv = graph.mul %g, %w : !graph.tensor<[N, D], f32> loc("backward"("f.py":4:1))
  %dw = graph.mul %g, %v : !graph.tensor<[N, D], f32> loc("backward"("f.py":4:1))
  %du = graph.sub %dw, %dv : !graph.tensor<[N, D], f32> loc("backward"("f.py":2:1))
  %dc = graph.reduce sum %du [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[1, D], f32> loc("backward"("f.py":1:1))
  func.return %y, %dc : !graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>
}

// -----

// The same function without the marks is no joint function to fuse: each of
// sin and cos is decided alone, and each would read three tensors, so both
// are stored.

// CHECK-LABEL: func.func @unmarked(
// CHECK-NEXT:    %v, %w, %y = fusion.kernel @k0 pointwise (%a, %b, %c) : {{.*}} graph.cos %w at f.py:3 stored for k1 (not recomputed: it would read 3 tensors of its shape); graph.sin %v at f.py:2 stored for k1 (not recomputed: it would read 3 tensors of its shape)" {
// CHECK:         fusion.kernel @k1 reduction (%g, %w, %v)
func.func @unmarked(%a: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[N, D], f32>, %c: !graph.tensor<[N, D], f32>, %g: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>) {
  %ab = graph.add %a, %b : !graph.tensor<[N, D], f32> loc("f.py":5:1)
  %u = graph.add %ab, %c : !graph.tensor<[N, D], f32> loc("f.py":1:1)
  %v = graph.sin %u : !graph.tensor<[N, D], f32> loc("f.py":2:1)
  %w = graph.cos %u : !graph.tensor<[N, D], f32> loc("f.py":3:1)
  %y = graph.mul %v, %w : !graph.tensor<[N, D], f32> loc("f.py":4:1)
  %dv = graph.mul %g, %w : !graph.tensor<[N, D], f32> loc("f.py":4:1)
  %dw = graph.mul %g, %v : !graph.tensor<[N, D], f32> loc("f.py":4:1)
  %du = graph.sub %dw, %dv : !graph.tensor<[N, D], f32> loc("f.py":2:1)
  %dc = graph.reduce sum %du [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[1, D], f32> loc("f.py":1:1)
  func.return %y, %dc : !graph.tensor<[N, D], f32>, !graph.tensor<[1, D], f32>
}
