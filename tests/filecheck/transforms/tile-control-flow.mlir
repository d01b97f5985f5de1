// tile: a graph.for whose body is one pointwise kernel, elementwise in its
// carries and slices, becomes one loop.kernel with the loop inside (an
// scf.for over the trip count, the carries in registers, xs read and ys
// written per iteration); any other graph.for keeps its loop on the host,
// its body's kernels tiled in place.

// RUN: irc-opt %s --split-input-file -p fuse,tile | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse,tile | irc-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @devloop(
// CHECK-NOT:     = graph.for
// CHECK:         %r, %r_1 = loop.kernel @k0 pointwise (%c, %xs) grid [(D*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [D, N, T] reason "{{.*}}device loop: the whole graph.for (T iterations) runs in this kernel
// CHECK:           %[[INIT:.*]] = loop.read %0[
// CHECK:           %[[LAST:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %[[INIT]]) -> (!loop.tile<[1024], f32>) : i64 {
// CHECK:             loop.read %1[%[[I]], %{{.*}}, %{{.*}}]
// CHECK:             loop.write %{{.*}} to 1[%[[I]], %{{.*}}, %{{.*}}]
// CHECK:             scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.write %[[LAST]] to 0[
func.func @devloop(%c: !graph.tensor<[N, D], f32>, %xs: !graph.tensor<[T, N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>) {
  %r:2 = graph.for T carries (%c) : (!graph.tensor<[N, D], f32>) xs (%xs) : (!graph.tensor<[T, N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[N, D], f32>, %x: !graph.tensor<[N, D], f32>):
    %f = graph.cast %i : !graph.tensor<[], i64> -> !graph.tensor<[], f32>
    %fb = graph.broadcast %f : !graph.tensor<[], f32> -> !graph.tensor<[N, D], f32>
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[N, D], f32>
    %t = graph.mul %s, %h : !graph.tensor<[N, D], f32>
    %t2 = graph.add %t, %x : !graph.tensor<[N, D], f32>
    %u = graph.add %t2, %fb : !graph.tensor<[N, D], f32>
    graph.yield %u, %t2 : !graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>
}

// -----

// CHECK-LABEL: func.func @host_for(
// CHECK:         %r, %r_1 = graph.for N reverse carries (%c)
// CHECK:           loop.kernel @k0 reduction
// CHECK:           graph.yield
func.func @host_for(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N], f32>) {
  %r:2 = graph.for N reverse carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %t = graph.reduce sum %x [0] : !graph.tensor<[D], f32> -> !graph.tensor<[], f32>
    %tb = graph.broadcast %t : !graph.tensor<[], f32> -> !graph.tensor<[D], f32>
    %u = graph.add %s, %tb : !graph.tensor<[D], f32>
    graph.yield %u, %t : !graph.tensor<[D], f32>, !graph.tensor<[], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[D], f32>, !graph.tensor<[N], f32>
}
