// The contract of a reduction kernel of scans (irc.dialects.fusion): one
// row structure, no reduction, only elementwise ops or scans using a scan,
// outputs of the rows' shape; and no scan in a pointwise or matmul kernel.
// Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @scan_and_reduction(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: a kernel of scans cannot hold graph.reduce: a reduction and a scan do not share a kernel}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %c = graph.scan sum %x [1] : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %c [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %b = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    fusion.yield %b : !graph.tensor<[N, D], f32>
  }
  func.return
}

// -----

func.func @scans_of_two_axes(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: the scans of a reduction kernel share one row structure: graph.scan scans over [1] of [N, D], graph.scan over [0] of [N, D]}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %c = graph.scan sum %x [1] : !graph.tensor<[N, D], f32>
    %d = graph.scan prod %c [0] : !graph.tensor<[N, D], f32>
    fusion.yield %d : !graph.tensor<[N, D], f32>
  }
  func.return
}

// -----

func.func @transposed_scan(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: graph.transpose uses a scan's result but is neither elementwise nor a scan}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %c = graph.scan sum %x [1] : !graph.tensor<[N, N], f32>
    %t = graph.transpose %c [1, 0] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N, N], f32>
    fusion.yield %t : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

func.func @scan_yields_per_row(%a: !graph.tensor<[N, D], f32>, %m: !graph.tensor<[N, 1], f32>) {
  // expected-error@+1 {{kernel @k0: a kernel of scans yields values of its rows' shape [N, D], not [N, 1]}}
  %0:2 = fusion.kernel @k0 reduction (%a, %m) : (!graph.tensor<[N, D], f32>, !graph.tensor<[N, 1], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[N, 1], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>, %y: !graph.tensor<[N, 1], f32>):
    %c = graph.scan sum %x [1] : !graph.tensor<[N, D], f32>
    %e = graph.exp %y : !graph.tensor<[N, 1], f32>
    fusion.yield %c, %e : !graph.tensor<[N, D], f32>, !graph.tensor<[N, 1], f32>
  }
  func.return
}

// -----

func.func @pointwise_scan(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: a pointwise kernel cannot hold graph.scan}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %c = graph.scan sum %x [0] : !graph.tensor<[N], f32>
    fusion.yield %c : !graph.tensor<[N], f32>
  }
  func.return
}
