// fuse fuses the body of each region like a function body, recursively: the
// control-flow ops stay, holding fusion.kernels, named uniquely in the
// function; a value a region uses is already an operand (regions are
// isolated from above).

// RUN: irc-opt %s -p fuse | filecheck %s
// RUN: irc-opt %s -p fuse | irc-opt | filecheck %s
// RUN: irc-opt %s -p fuse --print-op-generic | irc-opt | filecheck %s

// CHECK-LABEL: func.func @classic(
// CHECK:         %zero = fusion.kernel @k0 pointwise ()
// CHECK:         graph.while (%zero, %n, %x)
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %p = fusion.kernel @k1 pointwise (%i, %m)
// CHECK:           graph.yield %p : !graph.tensor<[], i1>
// CHECK-NEXT:    } body {
// CHECK:           %j = fusion.kernel @k2 pointwise (%i_1)
// CHECK:           %q = fusion.kernel @k3 reduction (%v_1)
// CHECK:           %w = graph.cond %q (%v_1)
// CHECK:             %b = fusion.kernel @k4 pointwise (%a)
// CHECK:             graph.yield %b : !graph.tensor<[N], f32>
// CHECK-NEXT:      } else {
// CHECK:             %b_1 = fusion.kernel @k5 pointwise (%a_1)
// CHECK:             graph.yield %b_1 : !graph.tensor<[N], f32>
// CHECK:           graph.yield %j, %m_1, %w : !graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>
// CHECK:         func.return %r_2 : !graph.tensor<[N], f32>
func.func @classic(%x: !graph.tensor<[N], f32>, %n: !graph.tensor<[], i64>) -> !graph.tensor<[N], f32> {
  %zero = graph.constant 0 : i64 -> !graph.tensor<[], i64>
  %r:3 = graph.while (%zero, %n, %x) : (!graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %p = graph.cmp lt, %i, %m : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %one = graph.constant 1 : i64 -> !graph.tensor<[], i64>
    %j = graph.add %i, %one : !graph.tensor<[], i64>
    %s = graph.reduce sum %v [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %z = graph.constant 0.0 : f32 -> !graph.tensor<[], f32>
    %q = graph.cmp gt, %s, %z : !graph.tensor<[], f32>
    %w = graph.cond %q (%v) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %h = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
      %b = graph.mul %a, %h : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    } else {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %t = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
      %b = graph.add %a, %t : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    }
    graph.yield %j, %m, %w : !graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>
  }
  func.return %r#2 : !graph.tensor<[N], f32>
}
