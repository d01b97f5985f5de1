// auto-mixed-precision: float32 matmuls run in the low type (bf16 by
// default), with their epilogues; reductions, exp/log, division and
// comparisons in float32; results cast back to the caller's dtypes. The
// module records the low type, each inserted cast the op it was made for.

// RUN: irc-opt %s --split-input-file -p auto-mixed-precision | filecheck %s
// RUN: irc-opt %s --split-input-file -p auto-mixed-precision | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p auto-mixed-precision --check-semantics --check-semantics-runs=4 | filecheck %s
// RUN: irc-opt %s --split-input-file -p 'auto-mixed-precision{dtype=f16}' | filecheck %s --check-prefix=F16

// Two layers: the bias add and tanh between the matmuls stay bf16 (their
// user is a matmul); x, w1, b and w2 are cast down once each, and the
// result cast back at the return.
// CHECK:       builtin.module attributes {irc.mixed_precision = "bf16"} {
// CHECK-LABEL: func.func @two_layers(
// CHECK-NEXT:    %0 = graph.cast %x {amp = "graph.matmul"} : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N, 8], bf16>
// CHECK-NEXT:    %1 = graph.cast %w1 {amp = "graph.matmul"} : !graph.tensor<[8, 16], f32> -> !graph.tensor<[8, 16], bf16>
// CHECK-NEXT:    %h = graph.matmul %0, %1 : (!graph.tensor<[N, 8], bf16>, !graph.tensor<[8, 16], bf16>) -> !graph.tensor<[N, 16], bf16>
// CHECK-NEXT:    %2 = graph.cast %b {amp = "graph.add"} : !graph.tensor<[N, 16], f32> -> !graph.tensor<[N, 16], bf16>
// CHECK-NEXT:    %hb = graph.add %h, %2 : !graph.tensor<[N, 16], bf16>
// CHECK-NEXT:    %t = graph.tanh %hb : !graph.tensor<[N, 16], bf16>
// CHECK-NEXT:    %3 = graph.cast %w2 {amp = "graph.matmul"} : !graph.tensor<[16, 4], f32> -> !graph.tensor<[16, 4], bf16>
// CHECK-NEXT:    %z = graph.matmul %t, %3 : (!graph.tensor<[N, 16], bf16>, !graph.tensor<[16, 4], bf16>) -> !graph.tensor<[N, 4], bf16>
// CHECK-NEXT:    %4 = graph.cast %z {amp = "func.return"} : !graph.tensor<[N, 4], bf16> -> !graph.tensor<[N, 4], f32>
// CHECK-NEXT:    func.return %4 : !graph.tensor<[N, 4], f32>
// F16:         builtin.module attributes {irc.mixed_precision = "f16"} {
// F16-LABEL:   func.func @two_layers(
// F16:           %z = graph.matmul %t, %3 : (!graph.tensor<[N, 16], f16>, !graph.tensor<[16, 4], f16>) -> !graph.tensor<[N, 4], f16>
func.func @two_layers(%x: !graph.tensor<[N, 8], f32>, %w1: !graph.tensor<[8, 16], f32>, %b: !graph.tensor<[N, 16], f32>, %w2: !graph.tensor<[16, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  %h = graph.matmul %x, %w1 : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 16], f32>) -> !graph.tensor<[N, 16], f32>
  %hb = graph.add %h, %b : !graph.tensor<[N, 16], f32>
  %t = graph.tanh %hb : !graph.tensor<[N, 16], f32>
  %z = graph.matmul %t, %w2 : (!graph.tensor<[N, 16], f32>, !graph.tensor<[16, 4], f32>) -> !graph.tensor<[N, 4], f32>
  func.return %z : !graph.tensor<[N, 4], f32>
}

// -----

// Softmax of a matmul: the row max, x - max (whose only user is exp), exp,
// the sum and the division all run in float32 from one cast of the matmul.
// CHECK-LABEL: func.func @softmax_of_scores(
// CHECK-NEXT:    %0 = graph.cast %q {amp = "graph.matmul"}
// CHECK-NEXT:    %1 = graph.cast %k {amp = "graph.matmul"}
// CHECK-NEXT:    %s = graph.matmul %0, %1 : (!graph.tensor<[S, 16], bf16>, !graph.tensor<[16, S], bf16>) -> !graph.tensor<[S, S], bf16>
// CHECK-NEXT:    %2 = graph.cast %s {amp = "graph.reduce"} : !graph.tensor<[S, S], bf16> -> !graph.tensor<[S, S], f32>
// CHECK-NEXT:    %m = graph.reduce max %2 [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
// CHECK-NEXT:    %mb = graph.broadcast %m
// CHECK-NEXT:    %d = graph.sub %2, %mb : !graph.tensor<[S, S], f32>
// CHECK-NEXT:    %e = graph.exp %d : !graph.tensor<[S, S], f32>
// CHECK-NEXT:    %z = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
// CHECK-NEXT:    %zb = graph.broadcast %z
// CHECK-NEXT:    %p = graph.div %e, %zb : !graph.tensor<[S, S], f32>
// CHECK-NEXT:    func.return %p : !graph.tensor<[S, S], f32>
func.func @softmax_of_scores(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32> {
  %s = graph.matmul %q, %k : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
  %m = graph.reduce max %s [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %d = graph.sub %s, %mb : !graph.tensor<[S, S], f32>
  %e = graph.exp %d : !graph.tensor<[S, S], f32>
  %z = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %zb = graph.broadcast %z : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p = graph.div %e, %zb : !graph.tensor<[S, S], f32>
  func.return %p : !graph.tensor<[S, S], f32>
}

// -----

// Casts fold where they meet: the matmul's result, cast up once for the
// comparison, is not cast back down for the select; a returned low value
// and a float32 op share that one cast up.
// CHECK-LABEL: func.func @relu_mask(
// CHECK:         %y = graph.matmul %0, %1
// CHECK-NEXT:    %zero = graph.constant
// CHECK-NEXT:    %2 = graph.cast %y {amp = "graph.cmp"} : !graph.tensor<[N, N], bf16> -> !graph.tensor<[N, N], f32>
// CHECK-NEXT:    %pos = graph.cmp gt, %2, %zero : !graph.tensor<[N, N], f32>
// CHECK-NEXT:    %3 = graph.cast %zero {amp = "graph.select"} : !graph.tensor<[N, N], f32> -> !graph.tensor<[N, N], bf16>
// CHECK-NEXT:    %r = graph.select %pos, %y, %3 : !graph.tensor<[N, N], i1>, !graph.tensor<[N, N], bf16>
// CHECK-NEXT:    %out = graph.matmul %r, %1
// CHECK-NEXT:    %4 = graph.cast %out {amp = "func.return"}
// CHECK-NEXT:    func.return %4, %2 : !graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>
func.func @relu_mask(%x: !graph.tensor<[N, N], f32>, %w: !graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) {
  %y = graph.matmul %x, %w : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N, N], f32>
  %pos = graph.cmp gt, %y, %zero : !graph.tensor<[N, N], f32>
  %r = graph.select %pos, %y, %zero : !graph.tensor<[N, N], i1>, !graph.tensor<[N, N], f32>
  %out = graph.matmul %r, %w : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
  func.return %out, %y : !graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>
}

// -----

// Nothing to lower (float64, integers): the module is left as it is, with
// no policy attribute.
// CHECK-NOT:   irc.mixed_precision
// CHECK-LABEL: func.func @wide(
// CHECK-NEXT:    %y = graph.matmul %x, %w : (!graph.tensor<[N, 4], f64>, !graph.tensor<[4, 4], f64>) -> !graph.tensor<[N, 4], f64>
// CHECK-NEXT:    func.return %y
func.func @wide(%x: !graph.tensor<[N, 4], f64>, %w: !graph.tensor<[4, 4], f64>) -> !graph.tensor<[N, 4], f64> {
  %y = graph.matmul %x, %w : (!graph.tensor<[N, 4], f64>, !graph.tensor<[4, 4], f64>) -> !graph.tensor<[N, 4], f64>
  func.return %y : !graph.tensor<[N, 4], f64>
}
