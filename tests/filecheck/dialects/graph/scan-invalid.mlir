// graph.scan's verifier rejects bad IR with a message that says what is
// wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @scan_axis_out_of_range(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{scan axis 2 is out of range for rank 2}}
  %0 = graph.scan sum %x [2] : !graph.tensor<[N, 4], f32>
  func.return
}

// -----

func.func @scan_of_max(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.scan computes sum, prod, not max}}
  %0 = graph.scan max %x [0] : !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @scan_of_bools(%x: !graph.tensor<[N], i1>) {
  // expected-error@+1 {{a sum scan is not defined on bool tensors; cast them first (NumPy accumulates them in int64)}}
  %0 = graph.scan sum %x [0] : !graph.tensor<[N], i1>
  func.return
}

// -----

func.func @scan_of_two_axes(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{graph.scan takes exactly one axis}}
  %0 = graph.scan sum %x [0, 1] : !graph.tensor<[N, 4], f32>
  func.return
}

// -----

func.func @scan_changes_type(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{result 'result' at position 0 does not verify}}
  %0 = "graph.scan"(%x) <{axis = 0 : i64, kind = #elementwise<reduction sum>}> : (!graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 4], f64>
  func.return
}
