// Attention: a matmul whose rows are reduced along its last (key) axis by a
// max and a sum of exp(x - max), contracted along that axis by a second
// matmul, fuses into ONE attention kernel (matmul -> row reduction -> matmul);
// tile walks the keys in blocks with online rescaling, and with a causal mask
// of iotas stops at the program's last row.

// RUN: irc-opt %s --split-input-file -p fuse | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s --split-input-file -p fuse | irc-opt --split-input-file | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s --split-input-file -p fuse --check-semantics --check-semantics-runs=3 | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s --split-input-file -p fuse,tile | filecheck %s --check-prefix=TILE
// RUN: irc-opt %s --split-input-file -p fuse,tile | irc-opt --split-input-file | filecheck %s --check-prefix=TILE

// FUSE-LABEL: func.func @causal(
// FUSE-NEXT:    %o = fusion.kernel @k0 attention (%k, %q, %v) : ({{.*}}) -> (!graph.tensor<[S, 16], f32>) reason "attention: matmul [S, 16] x [16, S] -> [S, S] (graph.matmul %s at attn.py:2), its rows reduced along the key axis (graph.reduce max %m at attn.py:4, graph.reduce sum %l at attn.py:5), contracted along the keys by matmul [S, S] x [S, 16] -> [S, 16] (graph.matmul %o at attn.py:6); one kernel (matmul -> row reduction -> matmul): {{.*}} so the [S, S] scores never reach memory; between the matmuls: graph.mul, graph.select, graph.broadcast x2, graph.sub, graph.exp, graph.div; duplicated here: graph.transpose, graph.constant x2, graph.iota x2, graph.cmp"
// FUSE:           %s = graph.matmul
// FUSE:           %m = graph.reduce max {{.*}} [1] :
// FUSE:           %l = graph.reduce sum {{.*}} [1] {fusion.idiom = "online_sum"} :
// FUSE:           %o_1 = graph.matmul %p, %v_1
// FUSE-NEXT:      fusion.yield %o_1
// FUSE-NEXT:    }
// FUSE-NEXT:    func.return %o

// TILE-LABEL: func.func @causal(
// TILE:         loop.kernel @k0 attention (%k, %q, %v) grid [(S + 63) floordiv 64] tiles {BLOCK_M = 64, BLOCK_D = 16, BLOCK_N = 64, BLOCK_DV = 16} symbols [S] reason "{{.*}}attention: 64 query rows per program, keys in blocks of 64, up to the program's last row (the keys past it are masked), with online rescaling"
// TILE:         %[[ROWS:.*]] = tile.binary add %[[START:.*]], %{{.*}} : (i64, !loop.tile<[1, 64], i64>)
// TILE:         %[[QT:.*]] = loop.read %{{.*}}[%[[ROWS]], %{{.*}}] mask {{.*}} -> !loop.tile<[16, 64], f32>
// TILE:         %[[LAST:.*]] = tile.binary add %[[START]], %{{.*}} : (i64, i64) -> i64
// TILE:         %[[END:.*]] = tile.binary min %{{.*}}, %[[LAST]] : (i64, i64) -> i64
// TILE:         scf.for %{{.*}} = %{{.*}} to %[[END]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}}) -> (!loop.tile<[64], f32>, !loop.tile<[64], f32>, !loop.tile<[16, 64], f32>)
// TILE:           %[[ST:.*]] = tile.dot %{{.*}}, %[[QT]], %{{.*}} : (!loop.tile<[64, 16], f32>, !loop.tile<[16, 64], f32>, !loop.tile<[64, 64], f32>)
// TILE:           %[[BMAX:.*]] = tile.reduce max %{{.*}} 0 : !loop.tile<[64, 64], f32> -> !loop.tile<[64], f32>
// TILE:           %[[MNEW:.*]] = tile.binary max %[[M]], %[[BMAX]]
// TILE:           tile.binary sub %[[M]], %[[MNEW]]
// TILE:           tile.unary exp
// TILE:           tile.reduce sum
// TILE:           tile.binary mul %[[L]],
// TILE:           tile.binary mul %[[O]],
// TILE:           tile.dot {{.*}} : (!loop.tile<[16, 64], f32>, !loop.tile<[64, 64], f32>, !loop.tile<[16, 64], f32>)
// TILE:           scf.yield %[[MNEW]],
// TILE:         tile.binary div
// TILE:         loop.write
func.func @causal(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[S, 16], f32>, %v: !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> {
  %kt = graph.transpose %k [1, 0] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[16, S], f32>
  %s = graph.matmul %q, %kt : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32> loc("attn.py":2:0)
  %c = graph.constant 2.500000e-01 : f32 -> !graph.tensor<[S, S], f32>
  %x0 = graph.mul %s, %c : !graph.tensor<[S, S], f32>
  %i = graph.iota [0] : !graph.tensor<[S, S], i64>
  %j = graph.iota [1] : !graph.tensor<[S, S], i64>
  %after = graph.cmp gt, %j, %i : !graph.tensor<[S, S], i64>
  %fill = graph.constant -1.000000e+09 : f32 -> !graph.tensor<[S, S], f32>
  %x = graph.select %after, %fill, %x0 : !graph.tensor<[S, S], i1>, !graph.tensor<[S, S], f32>
  %m = graph.reduce max %x [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32> loc("attn.py":4:0)
  %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %d = graph.sub %x, %mb : !graph.tensor<[S, S], f32>
  %e = graph.exp %d : !graph.tensor<[S, S], f32>
  %l = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32> loc("attn.py":5:0)
  %lb = graph.broadcast %l : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p = graph.div %e, %lb : !graph.tensor<[S, S], f32>
  %o = graph.matmul %p, %v : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> loc("attn.py":6:0)
  func.return %o : !graph.tensor<[S, 16], f32>
}

// -----

// The probabilities are also returned: they must be stored, so the chain is
// three kernels, and the softmax kernel says why the second matmul is apart.

// FUSE-LABEL: func.func @probabilities_returned(
// FUSE:         fusion.kernel @k0 matmul
// FUSE:         fusion.kernel @k1 reduction {{.*}} reason "{{.*}}graph.div %p not fused into k2: it feeds the matmul's operands, where only layout ops, concats, splats, casts and scalings by a constant go"
// FUSE:         fusion.kernel @k2 matmul {{.*}} reason "matmul [S, S] x [S, 16] -> [S, 16] (graph.matmul %o); no attention kernel with the matmul -> row reduction -> graph.matmul %o chain: graph.div %p is also used outside it, so it is stored"
// TILE-LABEL: func.func @probabilities_returned(
// TILE-NOT:     loop.kernel @{{[a-z0-9]+}} attention
// TILE:         func.return
func.func @probabilities_returned(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[S, 16], f32>, %v: !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>, !graph.tensor<[S, S], f32>) {
  %kt = graph.transpose %k [1, 0] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[16, S], f32>
  %s = graph.matmul %q, %kt : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
  %m = graph.reduce max %s [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %d = graph.sub %s, %mb : !graph.tensor<[S, S], f32>
  %e = graph.exp %d : !graph.tensor<[S, S], f32>
  %l = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %lb = graph.broadcast %l : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p = graph.div %e, %lb : !graph.tensor<[S, S], f32>
  %o = graph.matmul %p, %v : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
  func.return %o, %p : !graph.tensor<[S, 16], f32>, !graph.tensor<[S, S], f32>
}

// -----

// Attention as torch's ONNX exporters write SDPA with a mask: q and k each
// scaled by a constant (loaded scaled: their tiles' masked lanes stay 0) and
// the softmax guarded by where(isnan(p), 0, p), which zeroes the rows whose
// sum is NaN after the walk: still ONE attention kernel.

// FUSE-LABEL: func.func @exported_sdpa(
// FUSE-NEXT:    %o = fusion.kernel @k0 attention (%q, %k, %keep, %v) : ({{.*}}) -> (!graph.tensor<[S, 16], f32>) reason "attention: {{.*}}; prologue: graph.mul x2; between the matmuls: graph.select x2, graph.broadcast x2, graph.sub, graph.exp, graph.div, graph.cmp; duplicated here: graph.constant x4, graph.transpose"
// FUSE:           %p = graph.div
// FUSE-NEXT:      %nan = graph.cmp ne, %p, %p
// FUSE-NEXT:      %zero = graph.constant
// FUSE-NEXT:      %guarded = graph.select %nan, %zero, %p
// FUSE-NEXT:      %o_1 = graph.matmul %guarded, %v_1
// FUSE-NEXT:      fusion.yield %o_1
// TILE-LABEL: func.func @exported_sdpa(
// TILE:         loop.kernel @k0 attention
// TILE:         scf.for
// TILE:         scf.yield
// TILE:         %[[PRODUCT:[0-9]+]] = tile.binary div
// TILE:         %[[NAN:[0-9]+]] = tile.cmp ne %[[SUM:[0-9]+]], %[[SUM]]
// TILE-NEXT:    tile.select %[[NAN]], %{{[0-9]+}}, %[[PRODUCT]]
// TILE:         loop.write
func.func @exported_sdpa(%q: !graph.tensor<[S, 16], f32>, %k: !graph.tensor<[S, 16], f32>, %keep: !graph.tensor<[S, S], i1>, %v: !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> {
  %half_q = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[S, 16], f32>
  %qs = graph.mul %q, %half_q : !graph.tensor<[S, 16], f32>
  %kt = graph.transpose %k [1, 0] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[16, S], f32>
  %half_k = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[16, S], f32>
  %ks = graph.mul %kt, %half_k : !graph.tensor<[16, S], f32>
  %s = graph.matmul %qs, %ks : (!graph.tensor<[S, 16], f32>, !graph.tensor<[16, S], f32>) -> !graph.tensor<[S, S], f32>
  %minus_inf = graph.constant 0xff800000 : f32 -> !graph.tensor<[S, S], f32>
  %x = graph.select %keep, %s, %minus_inf : !graph.tensor<[S, S], i1>, !graph.tensor<[S, S], f32>
  %m = graph.reduce max %x [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %mb = graph.broadcast %m : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %d = graph.sub %x, %mb : !graph.tensor<[S, S], f32>
  %e = graph.exp %d : !graph.tensor<[S, S], f32>
  %l = graph.reduce sum %e [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %lb = graph.broadcast %l : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p = graph.div %e, %lb : !graph.tensor<[S, S], f32>
  %nan = graph.cmp ne, %p, %p : !graph.tensor<[S, S], f32>
  %zero = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[S, S], f32>
  %guarded = graph.select %nan, %zero, %p : !graph.tensor<[S, S], i1>, !graph.tensor<[S, S], f32>
  %o = graph.matmul %guarded, %v : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
  func.return %o : !graph.tensor<[S, 16], f32>
}
