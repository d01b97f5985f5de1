// The fusion dialect's verifiers reject kernels that break their structure
// or their kind's contract, with a message that says what is wrong. Each
// chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

// Structure.

func.func @unknown_kind(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: unknown kernel kind 'elementwise'; expected one of pointwise, reduction, matmul, attention, attention_backward}}
  %0 = fusion.kernel @k0 elementwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    fusion.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @argument_count(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0 has 1 operands but its block has 0 arguments; they must match one to one}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
    %1 = graph.iota [0] : !graph.tensor<[N], f32>
    fusion.yield %1 : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @argument_type(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: block argument 0 has type !graph.tensor<[N], f16> but operand 0 has type !graph.tensor<[N], f32>}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f16>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f16>):
    fusion.yield %x : !graph.tensor<[N], f16>
  }
  func.return
}

// -----

func.func @yield_types(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0 yields (!graph.tensor<[N], f32>) but its results are (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>)}}
  %0:2 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    fusion.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @no_yield(%a: !graph.tensor<[N], f32>) {
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    // expected-error@+1 {{Operation graph.neg terminates block in single-block region but is not a terminator}}
    %1 = graph.neg %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @yield_outside(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{'fusion.yield' expects parent op 'fusion.kernel'}}
  fusion.yield %a : !graph.tensor<[N], f32>
}

// -----

func.func @not_isolated(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Operation using value defined out of its IsolatedFromAbove parent}}
  %0 = fusion.kernel @k0 pointwise () : () -> (!graph.tensor<[N], f32>) reason "" {
    %1 = graph.neg %a : !graph.tensor<[N], f32>
    fusion.yield %1 : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

// What stays outside every kernel.

func.func @guard_inside(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: sym.guard stays outside kernels (the launcher checks it)}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    sym.guard N > 1, "why"
    fusion.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @dense_constant_inside() {
  // expected-error@+1 {{kernel @k0: a dense graph.constant stays outside kernels (pass it as an operand)}}
  %0 = fusion.kernel @k0 pointwise () : () -> (!graph.tensor<[2], f32>) reason "" {
    %1 = graph.constant dense<[1.0, 2.0]> : tensor<2xf32> -> !graph.tensor<[2], f32>
    fusion.yield %1 : !graph.tensor<[2], f32>
  }
  func.return
}

// -----

func.func @foreign_op_inside(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: a kernel holds graph ops only, not arith.constant}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %c = arith.constant 1 : i64
    fusion.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

// Pointwise kernels.

func.func @pointwise_reduce(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: a pointwise kernel cannot hold graph.reduce}}
  %0 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %1 = graph.reduce sum %x [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    fusion.yield %1 : !graph.tensor<[], f32>
  }
  func.return
}

// -----

func.func @pointwise_shapes(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: a pointwise kernel yields values of one shape (its iteration space), not [N, D], [D, N]}}
  %0:2 = fusion.kernel @k0 pointwise (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[D, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %1 = graph.transpose %x [1, 0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D, N], f32>
    fusion.yield %x, %1 : !graph.tensor<[N, D], f32>, !graph.tensor<[D, N], f32>
  }
  func.return
}

// -----

// Reduction kernels.

func.func @reduction_without_reduce(%a: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{kernel @k0: a reduction kernel holds at least one graph.reduce, graph.argmax or graph.scan}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N], f32>):
    fusion.yield %x : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @reduction_rows_differ(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: the reductions of a reduction kernel share one row structure: graph.reduce reduces over [1] of [N, D], graph.argmax over [0] of [N, D]}}
  %0:2 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[D], i64>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %1 = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
    %2 = graph.argmax %x [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D], i64>
    fusion.yield %1, %2 : !graph.tensor<[N], f32>, !graph.tensor<[D], i64>
  }
  func.return
}

// -----

func.func @reduction_yield_shape(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: a reduction kernel yields values of its rows' shape or of a reduction's result ([N, D], [N, 1], [N]), not [D, N]}}
  %0:2 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>, !graph.tensor<[D, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %1 = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %2 = graph.transpose %x [1, 0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D, N], f32>
    fusion.yield %1, %2 : !graph.tensor<[N, 1], f32>, !graph.tensor<[D, N], f32>
  }
  func.return
}

// -----

// [N] -> [N, D] aligns N with axis 1, the reduced one: not the rows.
func.func @reduction_broadcast_across_rows(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: graph.broadcast uses a reduction's result but is neither elementwise, nor a reshape between the per-row shapes, nor a broadcast mapping it back onto the rows over [1] of [N, N]}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.reduce max %x [1] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N], f32>
    %2 = graph.broadcast %1 : !graph.tensor<[N], f32> -> !graph.tensor<[N, N], f32>
    %3 = graph.sub %x, %2 : !graph.tensor<[N, N], f32>
    fusion.yield %3 : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

// A reshape between the per-row shapes ([N, 1] <-> [N]) is fine; one to
// [1, N] is not.
func.func @reduction_reshaped(%a: !graph.tensor<[N, D], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reshape uses a reduction's result but is neither elementwise, nor a reshape between the per-row shapes, nor a broadcast mapping it back onto the rows over [1] of [N, D]}}
  %0:2 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, D], f32>):
    %1 = graph.reduce sum %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %t = graph.reshape %1 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[1, N], f32>
    %2 = graph.reshape %t : !graph.tensor<[1, N], f32> -> !graph.tensor<[N], f32>
    %3 = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
    fusion.yield %2, %3 : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  func.return
}

// -----

func.func @reduction_matmul(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: a reduction kernel cannot hold graph.matmul}}
  %0 = fusion.kernel @k0 reduction (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.matmul %x, %x : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    %2 = graph.reduce sum %1 [1] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N], f32>
    fusion.yield %2 : !graph.tensor<[N], f32>
  }
  func.return
}

// -----

// Matmul kernels.

func.func @two_matmuls(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: a matmul kernel holds exactly one graph.matmul, not 2}}
  %0 = fusion.kernel @k0 matmul (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.matmul %x, %x : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    %2 = graph.matmul %1, %x : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    fusion.yield %2 : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

func.func @matmul_yield_shape(%a: !graph.tensor<[M, K], f32>, %b: !graph.tensor<[K, N], f32>) {
  // expected-error@+1 {{kernel @k0: a matmul kernel yields values of the matmul's result shape [M, N] or computed from that result, not [M, K]}}
  %0:2 = fusion.kernel @k0 matmul (%a, %b) : (!graph.tensor<[M, K], f32>, !graph.tensor<[K, N], f32>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M, K], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[M, K], f32>, %y: !graph.tensor<[K, N], f32>):
    %1 = graph.matmul %x, %y : (!graph.tensor<[M, K], f32>, !graph.tensor<[K, N], f32>) -> !graph.tensor<[M, N], f32>
    fusion.yield %1, %x : !graph.tensor<[M, N], f32>, !graph.tensor<[M, K], f32>
  }
  func.return
}

// -----

func.func @matmul_epilogue_layouts(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: graph.add combines the matmul's result in two layouts (an epilogue is computed on the result tile)}}
  %0 = fusion.kernel @k0 matmul (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.matmul %x, %x : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    %2 = graph.transpose %1 [1, 0] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N, N], f32>
    %3 = graph.add %1, %2 : !graph.tensor<[N, N], f32>
    fusion.yield %3 : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

// A reshape that neither splits the last axis nor joins axes (the rows
// would be cut across).
func.func @matmul_epilogue_reshape(%a: !graph.tensor<[N, 4], f32>, %b: !graph.tensor<[4, 6], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reshape uses the matmul's result but is not elementwise, a reshape of its last axis, a join of axes or a transpose (an epilogue is computed on the result tile)}}
  %0 = fusion.kernel @k0 matmul (%a, %b) : (!graph.tensor<[N, 4], f32>, !graph.tensor<[4, 6], f32>) -> (!graph.tensor<[2*N, 3], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, 4], f32>, %y: !graph.tensor<[4, 6], f32>):
    %1 = graph.matmul %x, %y : (!graph.tensor<[N, 4], f32>, !graph.tensor<[4, 6], f32>) -> !graph.tensor<[N, 6], f32>
    %2 = graph.reshape %1 : !graph.tensor<[N, 6], f32> -> !graph.tensor<[2*N, 3], f32>
    fusion.yield %2 : !graph.tensor<[2*N, 3], f32>
  }
  func.return
}

// -----

func.func @matmul_prologue_compute(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: graph.exp feeds the matmul's operands, where only layout ops, concats, splats, casts and scalings by a constant go (they become the way tiles are loaded)}}
  %0 = fusion.kernel @k0 matmul (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.transpose %x [1, 0] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N, N], f32>
    %2 = graph.exp %1 : !graph.tensor<[N, N], f32>
    %3 = graph.matmul %x, %2 : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    fusion.yield %3 : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

func.func @matmul_with_reduction(%a: !graph.tensor<[N, N], f32>) {
  // expected-error@+1 {{kernel @k0: a matmul kernel cannot hold graph.argmax}}
  %0 = fusion.kernel @k0 matmul (%a) : (!graph.tensor<[N, N], f32>) -> (!graph.tensor<[N, N], f32>) reason "" {
  ^bb0(%x: !graph.tensor<[N, N], f32>):
    %1 = graph.argmax %x [1] : !graph.tensor<[N, N], f32> -> !graph.tensor<[N], i64>
    %2 = graph.matmul %x, %x : (!graph.tensor<[N, N], f32>, !graph.tensor<[N, N], f32>) -> !graph.tensor<[N, N], f32>
    fusion.yield %2 : !graph.tensor<[N, N], f32>
  }
  func.return
}

// -----

// Attention: the second matmul's lhs must be exp(x - max(x)) times per-row
// factors; a softmax of the scores without the max shift is not.

func.func @attention_without_max(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[16, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: the second matmul's lhs is not exp(x - max(x)) along the keys times per-row factors}}
  %0 = fusion.kernel @k0 attention (%q, %k, %v) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
    %e = graph.exp %s : !graph.tensor<[S, S], f32>
    %l = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
    %lb = graph.broadcast %l : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
    %p = graph.div %e, %lb : !graph.tensor<[S, S], f32>
    %o = graph.matmul %p, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %o : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

// A head dim must be static: the kernel keeps a block of query rows in
// registers.

func.func @attention_symbolic_head_dim(%q: !graph.tensor<[S, D], f32>, %k: !graph.tensor<[D, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: the first matmul's contracted dim (D) is not static and at most 256: an attention kernel keeps a block of query rows and of its output in registers}}
  %0 = fusion.kernel @k0 attention (%q, %k, %v) : (!graph.tensor<[S, D], f32>, !graph.tensor<[D, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, D], f32>, %b: !graph.tensor<[D, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, D], f32>, !graph.tensor<[D, S], f32>) -> !graph.tensor<[S, S], f32>
    %m = graph.reduce max %s [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
    %d = graph.sub %s, %mb : !graph.tensor<[S, S], f32>
    %e = graph.exp %d : !graph.tensor<[S, S], f32>
    %o = graph.matmul %e, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %o : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

// A score-shaped op reading a reduction, other than the online forms, is
// not computable one block of keys at a time.

func.func @attention_reads_the_max_across_keys(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[16, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: graph.add reads the scores, but is neither elementwise on them (before the max), nor a per-row computation of the reductions, nor exp(x - max(x)) times per-row factors feeding the second matmul}}
  %0 = fusion.kernel @k0 attention (%q, %k, %v) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
    %m = graph.reduce max %s [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
    %d = graph.sub %s, %mb : !graph.tensor<[S, S], f32>
    %e = graph.exp %d : !graph.tensor<[S, S], f32>
    %w = graph.add %s, %mb : !graph.tensor<[S, S], f32>
    %o = graph.matmul %e, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %o : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

// attention_backward: matmuls contracting scores recomputed per block.

func.func @attention_backward_reduces(%q: !graph.tensor<[S, 16], f32>, %kt: !graph.tensor<[16, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reduce is in an attention_backward kernel, which reduces nothing but its matmuls (the rows' statistics are its inputs)}}
  %0 = fusion.kernel @k0 attention_backward (%q, %kt, %v) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
    %m = graph.reduce max %s [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
    %x = graph.sub %s, %mb : !graph.tensor<[S, S], f32>
    %o = graph.matmul %x, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %o : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

func.func @attention_backward_yields_scores(%q: !graph.tensor<[S, 16], f32>, %kt: !graph.tensor<[16, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: an attention_backward kernel yields its accumulating matmuls' results and their epilogues' values}}
  %0, %1 = fusion.kernel @k0 attention_backward (%q, %kt, %v) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
    %e = graph.exp %s : !graph.tensor<[S, S], f32>
    %o = graph.matmul %e, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %e, %o : !graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

func.func @attention_backward_reshapes_scores(%q: !graph.tensor<[S, 16], f32>, %kt: !graph.tensor<[16, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: graph.reshape reads the scores in an attention_backward kernel, where only elementwise ops and transposes of the last two axes do}}
  %0 = fusion.kernel @k0 attention_backward (%q, %kt, %v) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
    %r = graph.reshape %s : !graph.tensor<[S, S], f32> -> !graph.tensor<[1, S, S], f32>
    %c3 = graph.reshape %c : !graph.tensor<[S, 16], f32> -> !graph.tensor<[1, S, 16], f32>
    %o = graph.matmul %r, %c3 : (!graph.tensor<[1, S, S], f32>, !graph.tensor<[1, S, 16], f32>) -> !graph.tensor<[1, S, 16], f32>
    %o2 = graph.reshape %o : !graph.tensor<[1, S, 16], f32> -> !graph.tensor<[S, 16], f32>
    fusion.yield %o2 : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

func.func @attention_backward_symbolic_head_dim(%q: !graph.tensor<[S, D], f32>, %kt: !graph.tensor<[D, S], f32>, %v: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: a scores matmul's contracted dim (D) is symbolic or above 256: an attention_backward kernel keeps its blocks of head dims in registers}}
  %0 = fusion.kernel @k0 attention_backward (%q, %kt, %v) : (!graph.tensor<[S, D], f32>, !graph.tensor<[D, S], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, D], f32>, %b: !graph.tensor<[D, S], f32>, %c: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, D], f32>, !graph.tensor<[D, S], f32>) -> !graph.tensor<[S, S], f32>
    %o = graph.matmul %s, %c : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
    fusion.yield %o : !graph.tensor<[S, 16], f32>
  }
  func.return
}

// -----

func.func @attention_backward_two_walks(%q: !graph.tensor<[S, 16], f32>, %kt: !graph.tensor<[16, T], f32>, %v: !graph.tensor<[T, 16], f32>, %dq: !graph.tensor<[S, 16], f32>) {
  // expected-error@+1 {{kernel @k0: the accumulating matmuls of an attention_backward kernel keep one axis, walk another and share their batch: keeping T, walking S against keeping S, walking T}}
  %0, %1 = fusion.kernel @k0 attention_backward (%q, %kt, %v, %dq) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, T], f32>, !graph.tensor<[T, 16], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>, !graph.tensor<[T, 16], f32>) reason "" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %b: !graph.tensor<[16, T], f32>, %c: !graph.tensor<[T, 16], f32>, %d: !graph.tensor<[S, 16], f32>):
    %s = graph.matmul %a, %b : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, T], f32>) -> !graph.tensor<[S, T], f32>
    %o = graph.matmul %s, %c : (!graph.tensor<[S, T], f32>, !graph.tensor<[T, 16], f32>) -> !graph.tensor<[S, 16], f32>
    %st = graph.transpose %s [1, 0] : !graph.tensor<[S, T], f32> -> !graph.tensor<[T, S], f32>
    %g = graph.matmul %st, %d : (!graph.tensor<[T, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[T, 16], f32>
    fusion.yield %o, %g : !graph.tensor<[S, 16], f32>, !graph.tensor<[T, 16], f32>
  }
  func.return
}
