// autodiff{loss=0 wrt=1}: grad mode, a seed of 1 for the rank-0 loss; only
// the argument wrt names is differentiated, and no cotangent argument is
// added. dot(x, w)**2 gives 2 * dot(x, w) * x for w.

// RUN: irc-opt %s -p 'autodiff{loss=0 wrt=1}' | filecheck %s
// RUN: irc-opt %s -p 'autodiff{loss=0 wrt=1}' | irc-opt | filecheck %s

// CHECK-LABEL: func.func @square_of_dot(%x: !graph.tensor<[N], f32>, %w: !graph.tensor<[N], f32>) -> (!graph.tensor<[], f32>, !graph.tensor<[N], f32>)
// CHECK-NEXT:    %p = graph.mul %x, %w
// CHECK-NEXT:    %d = graph.reduce sum %p [0]
// CHECK-NEXT:    %s = graph.mul %d, %d
// CHECK-NEXT:    %0 = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %1 = graph.mul %0, %d
// CHECK-NEXT:    %2 = graph.mul %0, %d
// CHECK-NEXT:    %3 = graph.add %1, %2
// CHECK-NEXT:    %4 = graph.reshape %3 : !graph.tensor<[], f32> -> !graph.tensor<[1], f32>
// CHECK-NEXT:    %5 = graph.broadcast %4 : !graph.tensor<[1], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %6 = graph.mul %5, %x
// CHECK-NEXT:    func.return %s, %6 : !graph.tensor<[], f32>, !graph.tensor<[N], f32>
func.func @square_of_dot(%x: !graph.tensor<[N], f32>, %w: !graph.tensor<[N], f32>) -> !graph.tensor<[], f32> {
  %p = graph.mul %x, %w : !graph.tensor<[N], f32>
  %d = graph.reduce sum %p [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  %s = graph.mul %d, %d : !graph.tensor<[], f32>
  func.return %s : !graph.tensor<[], f32>
}
