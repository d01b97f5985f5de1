// The collective verifiers say what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @unknown_axis(%x: !graph.tensor<[4], f32>) {
  // expected-error@+1 {{collective.all_reduce over ['model']: each axis must be one of the mesh's ['data'], once}}
  %y = collective.all_reduce %x {mesh = #collective.mesh<data = 2>, axes = ["model"], reduction = "sum"} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return
}

// -----

func.func @gather_size(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{collective.all_gather over 2 members makes [2*N] from [N], not [N]}}
  %y = collective.all_gather %x {mesh = #collective.mesh<data = 2>, axes = ["data"], dim = 0 : i64, tiled} : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @scatter_split(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{a dim of size N does not split into 2 equal blocks}}
  %y = collective.reduce_scatter %x {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum", dim = 0 : i64, tiled} : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @not_a_permutation(%x: !graph.tensor<[4], f32>) {
  // expected-error@+1 {{each member sends at most once and receives at most once}}
  %y = collective.ppermute %x {mesh = #collective.mesh<data = 2>, axes = ["data"], pairs = array<i64: 0, 1, 1, 1>} : !graph.tensor<[4], f32> -> !graph.tensor<[4], f32>
  func.return
}

// -----

func.func @index_type() {
  // expected-error@+1 {{collective.axis_index makes a rank-0 i32 value}}
  %i = collective.axis_index {mesh = #collective.mesh<data = 2>, axes = ["data"]} : !graph.tensor<[], i64>
  func.return
}
