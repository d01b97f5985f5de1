// The verifier rejects an idiom record (fusion.idiom) that names no idiom, is
// no string, or names an idiom whose form the reduction does not have. Each
// chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @unknown_idiom(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce records fusion.idiom "fast_sum", not one of online_sum, centred_sum, one_hot_pick}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %s = graph.reduce sum %x [1] {fusion.idiom = "fast_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return
}

// -----

func.func @idiom_not_a_string(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce records fusion.idiom 1 : i64, not one of online_sum, centred_sum, one_hot_pick}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %s = graph.reduce sum %x [1] {fusion.idiom = 1 : i64} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return
}

// -----

// A plain sum recorded as online: its operand is no exp(x - max(x)).
func.func @not_an_online_sum(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce records the idiom online_sum, but it is not a float sum(exp(a - max(a))) with its max in this reduction kernel}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %s = graph.reduce sum %x [1] {fusion.idiom = "online_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return
}

// -----

// The sum of exp(x - m) whose max m is an input, not computed in the kernel.
func.func @online_sum_without_its_max(%a: !graph.tensor<[N, D], f32>, %mx: !graph.tensor<[N, 1], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce records the idiom online_sum, but it is not a float sum(exp(a - max(a))) with its max in this reduction kernel}}
  %0 = fusion.kernel @k0 reduction (%a, %mx) : (!graph.tensor<[N, D], f32>, !graph.tensor<[N, 1], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>, %m: !graph.tensor<[N, 1], f32>):
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %x, %mb : !graph.tensor<[N, D], f32>
    %e = graph.exp %d : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %e [1] {fusion.idiom = "online_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return
}

// -----

func.func @not_a_centred_sum(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce records the idiom centred_sum, but it is not a float sum((a - c)**2) about a per-row c in this reduction kernel}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %sq = graph.mul %x, %x : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %sq [1] {fusion.idiom = "centred_sum"} : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return
}
