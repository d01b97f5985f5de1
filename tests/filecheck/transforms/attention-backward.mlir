// Attention's backward: autodiff differentiates softmax(x) @ v as one chain
// (dv = P^T @ dO, dx = P * (dP - D) with D = sum(dO * O)), so the backward
// reads the probabilities only through elementwise ops and matmuls; fuse
// then recomputes them block by block from q, k and the rows' statistics,
// which the forward's attention kernel yields: the queries' gradient walks
// the keys, the keys' and values' walk the queries (one kernel for both),
// and no [S, S] tensor is stored.

// RUN: irc-opt %s -p autodiff | filecheck %s --check-prefix=AUTODIFF
// RUN: irc-opt %s -p autodiff,fuse | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s -p autodiff,fuse | irc-opt | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s -p autodiff,fuse --check-semantics --check-semantics-runs=3 | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s -p autodiff,fuse,tile | filecheck %s --check-prefix=TILE

// AUTODIFF-LABEL: func.func @causal(
// AUTODIFF:         %o = graph.matmul %p, %v
// AUTODIFF-NEXT:    %[[PT:.*]] = graph.transpose %p [1, 0]
// AUTODIFF-NEXT:    %[[DV:.*]] = graph.matmul %[[PT]], %cotangent0
// AUTODIFF-NEXT:    %[[PROD:.*]] = graph.mul %cotangent0, %o
// AUTODIFF-NEXT:    %[[D:.*]] = graph.reduce sum %[[PROD]] [1] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 1], f32>
// AUTODIFF-NEXT:    %[[VT:.*]] = graph.transpose %v [1, 0]
// AUTODIFF-NEXT:    %[[DP:.*]] = graph.matmul %cotangent0, %[[VT]]
// AUTODIFF-NEXT:    %[[DB:.*]] = graph.broadcast %[[D]]
// AUTODIFF-NEXT:    %[[C:.*]] = graph.sub %[[DP]], %[[DB]]
// AUTODIFF-NEXT:    %{{.*}} = graph.mul %p, %[[C]]
// AUTODIFF-NOT:     graph.argmax
// AUTODIFF-NOT:     graph.reduce max
// AUTODIFF:         func.return %o, %{{.*}}, %{{.*}}, %[[DV]]

// FUSE-LABEL: func.func @causal(
// FUSE-NEXT:    %m, %l, %o = fusion.kernel @k0 attention (%k, %q, %v) : ({{.*}}) -> (!graph.tensor<[S, 1], f32>, !graph.tensor<[S, 1], f32>, !graph.tensor<[S, 16], f32>) reason "attention: {{.*}}; graph.reduce sum %l at attn.py:5 stored for k2, k3 (not recomputed: it is a reduction); graph.reduce max %m at attn.py:4 stored for k2, k3 (not recomputed: it is a reduction)
// FUSE:           fusion.yield %m_1, %l_1, %o_1
// FUSE:         %[[D:.*]] = fusion.kernel @k1 reduction (%cotangent0, %o) : ({{.*}}) -> (!graph.tensor<[S, 1], f32>)
// FUSE:         %[[DQ:.*]] = fusion.kernel @k2 attention_backward (%k, %v, %q, %m, %l, %cotangent0, %[[D]]) : ({{.*}}) -> (!graph.tensor<[S, 16], f32>) reason "attention backward: matmul [S, S] x [S, 16] (graph.matmul at attn.py:2) contracting scores that each block recomputes from 2 matmul(s) of a head dim, so no score-shaped tensor is stored; recomputed per block of scores: graph.matmul x2, graph.mul x3, graph.select x2, graph.broadcast x3, graph.sub x2, graph.exp, graph.div;
// FUSE:           %s = graph.matmul %q_1, %kt
// FUSE:           %p = graph.div %e, %lb
// FUSE:           %[[DQ_1:.*]] = graph.matmul %{{.*}}, %{{.*}} : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32>
// FUSE-NEXT:      fusion.yield %[[DQ_1]]
// FUSE:         %[[DV:.*]], %[[DK:.*]] = fusion.kernel @k3 attention_backward (%k, %v, %q, %m, %l, %cotangent0, %[[D]]) : ({{.*}}) -> (!graph.tensor<[S, 16], f32>, !graph.tensor<[S, 16], f32>) reason "attention backward: matmul [S, S] x [S, 16] (graph.matmul at attn.py:6), [16, S] x [S, S] (graph.matmul at attn.py:2) {{.*}}; recomputed per block of scores: {{.*}}graph.transpose; duplicated here: {{.*}}; graph.transpose joined with its kernel: it reads only this kernel's values and arguments"
// FUSE:           %[[PT:.*]] = graph.transpose %p [1, 0]
// FUSE:           %[[DV_1:.*]] = graph.matmul %[[PT]], %cotangent0_1
// FUSE-NEXT:      %[[DKT:.*]] = graph.matmul %{{.*}}, %{{.*}} : (!graph.tensor<[16, S], f32>, !graph.tensor<[S, S], f32>) -> !graph.tensor<[16, S], f32>
// FUSE-NEXT:      %[[DK_1:.*]] = graph.transpose %[[DKT]] [1, 0]
// FUSE-NEXT:      fusion.yield %[[DV_1]], %[[DK_1]]
// FUSE:         func.return %o, %[[DQ]], %[[DK]], %[[DV]]

// The keys' and values' kernel: per block of 64 keys, a walk over the
// queries in blocks of 64 with four dots: the scores (recomputed), dv's
// P^T @ dO, dP^T = v @ dO^T, and dk's dS^T @ q.
// TILE-LABEL: func.func @causal(
// TILE:         loop.kernel @k3 attention_backward {{.*}} grid [(S + 63) floordiv 64] tiles {BLOCK_F = 64, BLOCK_H16 = 16, BLOCK_W = 64} symbols [S] reason "{{.*}}attention backward: 64 lanes of S per program, walking S in blocks of 64, the scores recomputed per block"
// TILE:         scf.for
// TILE:           %[[S:.*]] = tile.dot {{.*}} : (!loop.tile<[64, 16], f32>, !loop.tile<[16, 64], f32>, !loop.tile<[64, 64], f32>)
// TILE:           tile.unary exp
// TILE:           %[[DV:.*]] = tile.dot {{.*}} : (!loop.tile<[64, 64], f32>, !loop.tile<[64, 16], f32>, !loop.tile<[64, 16], f32>)
// TILE:           %[[DP:.*]] = tile.dot {{.*}} : (!loop.tile<[64, 16], f32>, !loop.tile<[16, 64], f32>, !loop.tile<[64, 64], f32>)
// TILE:           %[[DK:.*]] = tile.dot {{.*}} : (!loop.tile<[64, 64], f32>, !loop.tile<[64, 16], f32>, !loop.tile<[64, 16], f32>)
// TILE-NEXT:      scf.yield %[[DV]], %[[DK]]
// TILE:         loop.write
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
