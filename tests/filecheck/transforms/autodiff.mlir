// autodiff (vjp mode, the default): each function becomes its joint
// function, taking a cotangent per float result after its arguments and
// returning its results, then the gradient of every float argument.

// RUN: irc-opt %s --split-input-file -p autodiff | filecheck %s
// RUN: irc-opt %s --split-input-file -p autodiff | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p autodiff --check-semantics --check-semantics-runs=4 | filecheck %s

// sub: the second operand's cotangent is negated (the rule the planted-bug
// test of check_grad flips).
// CHECK-LABEL: func.func @sub(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>, %cotangent0: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>)
// CHECK-NEXT:    %d = graph.sub %x, %y
// CHECK-NEXT:    %0 = graph.neg %cotangent0
// CHECK-NEXT:    func.return %d, %cotangent0, %0
func.func @sub(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %d = graph.sub %x, %y : !graph.tensor<[N], f32>
  func.return %d : !graph.tensor<[N], f32>
}

// -----

// A value used twice gets the sum of both uses' cotangents.
// CHECK-LABEL: func.func @mul_fanout(
// CHECK-NEXT:    %p = graph.mul %x, %x
// CHECK-NEXT:    %0 = graph.mul %cotangent0, %x
// CHECK-NEXT:    %1 = graph.mul %cotangent0, %x
// CHECK-NEXT:    %2 = graph.add %0, %1
// CHECK-NEXT:    func.return %p, %2
func.func @mul_fanout(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %p = graph.mul %x, %x : !graph.tensor<[N], f32>
  func.return %p : !graph.tensor<[N], f32>
}

// -----

// broadcast: summed back over the added leading dim and the dim that was 1
// (against a symbolic M), then reshaped to the operand's type.
// CHECK-LABEL: func.func @broadcast(
// CHECK-NEXT:    %y = graph.broadcast %b
// CHECK-NEXT:    %z = graph.add %y, %c
// CHECK-NEXT:    %0 = graph.reduce sum %cotangent0 [0, 1] : !graph.tensor<[N, M, D], f32> -> !graph.tensor<[1, 1, D], f32>
// CHECK-NEXT:    %1 = graph.reshape %0 : !graph.tensor<[1, 1, D], f32> -> !graph.tensor<[1, D], f32>
// CHECK-NEXT:    func.return %z, %1, %cotangent0
func.func @broadcast(%b: !graph.tensor<[1, D], f32>, %c: !graph.tensor<[N, M, D], f32>) -> !graph.tensor<[N, M, D], f32> {
  %y = graph.broadcast %b : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, M, D], f32>
  %z = graph.add %y, %c : !graph.tensor<[N, M, D], f32>
  func.return %z : !graph.tensor<[N, M, D], f32>
}

// -----

// max: the whole cotangent goes to the first maximum, as np.argmax picks it.
// CHECK-LABEL: func.func @max(
// CHECK-NEXT:    %m = graph.reduce max %x [1]
// CHECK-NEXT:    %0 = graph.argmax %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], i64>
// CHECK-NEXT:    %1 = graph.iota [1] : !graph.tensor<[N, D], i64>
// CHECK-NEXT:    %2 = graph.broadcast %0
// CHECK-NEXT:    %3 = graph.cmp eq, %1, %2
// CHECK-NEXT:    %4 = graph.reshape %cotangent0 : !graph.tensor<[N], f32> -> !graph.tensor<[N, 1], f32>
// CHECK-NEXT:    %5 = graph.broadcast %4
// CHECK-NEXT:    %6 = graph.constant 0.000000e+00
// CHECK-NEXT:    %7 = graph.select %3, %5, %6
// CHECK-NEXT:    func.return %m, %7
func.func @max(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N], f32> {
  %m = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
  func.return %m : !graph.tensor<[N], f32>
}

// -----

// take: a scatter-add of the cotangent into the table's type; the integer
// indices get no gradient (and no cotangent argument is theirs).
// CHECK-LABEL: func.func @take(%table: !graph.tensor<[V, D], f32>, %ids: !graph.tensor<[N], i64>, %cotangent0: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[V, D], f32>)
// CHECK-NEXT:    %rows = graph.take %table, %ids [0]
// CHECK-NEXT:    %0 = graph.scatter_add %cotangent0, %ids [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[N], i64>) -> !graph.tensor<[V, D], f32>
// CHECK-NEXT:    func.return %rows, %0
func.func @take(%table: !graph.tensor<[V, D], f32>, %ids: !graph.tensor<[N], i64>) -> !graph.tensor<[N, D], f32> {
  %rows = graph.take %table, %ids [0] : (!graph.tensor<[V, D], f32>, !graph.tensor<[N], i64>) -> !graph.tensor<[N, D], f32>
  func.return %rows : !graph.tensor<[N, D], f32>
}

// -----

// A slice with stride -1: the cotangent reversed, after a zero block for the
// element not read; the guard stays, in scope of the backward ops.
// CHECK-LABEL: func.func @reversed(
// CHECK-NEXT:    sym.guard N >= 2
// CHECK-NEXT:    %r = graph.slice %x [N - 1] [-1]
// CHECK-NEXT:    %0 = graph.slice %cotangent0 [N - 2] [-1] : !graph.tensor<[N - 1], f32> -> !graph.tensor<[N - 1], f32>
// CHECK-NEXT:    %1 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[1], f32>
// CHECK-NEXT:    %2 = graph.concat %1, %0 [0] : (!graph.tensor<[1], f32>, !graph.tensor<[N - 1], f32>) -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r, %2
func.func @reversed(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N - 1], f32> {
  sym.guard N >= 2
  %r = graph.slice %x [N - 1] [-1] : !graph.tensor<[N], f32> -> !graph.tensor<[N - 1], f32>
  func.return %r : !graph.tensor<[N - 1], f32>
}

// -----

// A slice with stride 2 (the windows of a strided convolution): the
// cotangent spread between zeros by an insert_slice, read in place by fusion.
// CHECK-LABEL: func.func @strided(
// CHECK-NEXT:    %r = graph.slice %x [0, 1] [1, 2]
// CHECK-NEXT:    %0 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[4, N], f32>
// CHECK-NEXT:    %1 = graph.insert_slice %cotangent0 into %0 [0, 1] [1, 2] : !graph.tensor<[4, N floordiv 2], f32> -> !graph.tensor<[4, N], f32>
// CHECK-NEXT:    func.return %r, %1
func.func @strided(%x: !graph.tensor<[4, N], f32>) -> !graph.tensor<[4, N floordiv 2], f32> {
  %r = graph.slice %x [0, 1] [1, 2] : !graph.tensor<[4, N], f32> -> !graph.tensor<[4, N floordiv 2], f32>
  func.return %r : !graph.tensor<[4, N floordiv 2], f32>
}

// -----

// matmul with a broadcast batch dim: g @ b^T for a; a^T @ g summed over the
// batch for b.
// CHECK-LABEL: func.func @batched_matmul(
// CHECK-NEXT:    %c = graph.matmul %a, %b
// CHECK-NEXT:    %0 = graph.transpose %b [1, 0]
// CHECK-NEXT:    %1 = graph.matmul %cotangent0, %0 : (!graph.tensor<[B, M, P], f32>, !graph.tensor<[P, K], f32>) -> !graph.tensor<[B, M, K], f32>
// CHECK-NEXT:    %2 = graph.transpose %a [0, 2, 1]
// CHECK-NEXT:    %3 = graph.matmul %2, %cotangent0 : (!graph.tensor<[B, K, M], f32>, !graph.tensor<[B, M, P], f32>) -> !graph.tensor<[B, K, P], f32>
// CHECK-NEXT:    %4 = graph.reduce sum %3 [0] : !graph.tensor<[B, K, P], f32> -> !graph.tensor<[1, K, P], f32>
// CHECK-NEXT:    %5 = graph.reshape %4 : !graph.tensor<[1, K, P], f32> -> !graph.tensor<[K, P], f32>
// CHECK-NEXT:    func.return %c, %1, %5
func.func @batched_matmul(%a: !graph.tensor<[B, M, K], f32>, %b: !graph.tensor<[K, P], f32>) -> !graph.tensor<[B, M, P], f32> {
  %c = graph.matmul %a, %b : (!graph.tensor<[B, M, K], f32>, !graph.tensor<[K, P], f32>) -> !graph.tensor<[B, M, P], f32>
  func.return %c : !graph.tensor<[B, M, P], f32>
}
