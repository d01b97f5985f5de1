// A row kernel over a symbolic row length D takes its row block BLOCK_R from
// the launch: the loop kernel declares BLOCK_R = max-row-block (8192: the
// size its tile types hold and the reference interpreters run) and names it
// in launch_tiles with the extent its lanes walk. The emitted kernel spells
// every dim of that size as the constexpr c_BLOCK_R and steps its loops by
// it (tile.block_size); the launcher passes what its tuner chose for the
// bucket of D (the cost model: the next power of two of D, between 128 and
// 8192, with warps to match), so one compiled module serves every D (Triton
// compiles one variant per configuration it is launched with).

// RUN: irc-opt %s -p tile,bufferize,cse,lower-memory-to-triton | filecheck %s
// RUN: irc-opt %s -p tile,bufferize,cse,lower-memory-to-triton -t triton | filecheck %s --check-prefix=PY
// RUN: irc-opt %s -p "tile{max-row-block=1024}" | filecheck %s --check-prefix=SMALL

func.func @softmax(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "softmax" {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %m = graph.reduce max %a [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %a, %mb : !graph.tensor<[N, D], f32>
    %e = graph.exp %d : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %y = graph.div %e, %sb : !graph.tensor<[N, D], f32>
    fusion.yield %y : !graph.tensor<[N, D], f32>
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// CHECK:       triton.kernel @k0 reduction
// CHECK-SAME:  tiles {BLOCK_R = 8192}
// CHECK-SAME:  attributes {launch_tiles = {BLOCK_R = #sym.expr<D>}}
// CHECK:         %[[BLOCK:.*]] = tile.block_size "BLOCK_R" : i64
// CHECK:         tile.range "BLOCK_R" : !triton.tensor<[8192], i64>
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %{{.*}} step %[[BLOCK]]
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %{{.*}} step %[[BLOCK]]

// PY:       def kernel_k0(p_arg0: '*fp32', p_out: '*fp32', s_D, c_BLOCK_R: tl.constexpr):
// PY:         v[[BLOCK:[0-9]+]] = tl.full([], c_BLOCK_R, tl.int64)
// PY:         tl.arange(0, c_BLOCK_R)
// PY:         tl.broadcast_to(v{{[0-9]+}}, [c_BLOCK_R])
// PY-NOT:     8192
// PY:         for v{{[0-9]+}} in range(v[[BLOCK]], v{{[0-9]+}}, v[[BLOCK]]):
// PY:         for v{{[0-9]+}} in range(v[[BLOCK]], v{{[0-9]+}}, v[[BLOCK]]):
// PY:       def launch_softmax(*tensors):
// PY:         b_D = _irc_bucket(s_D)
// PY-NEXT:    b_N = _irc_bucket(s_N)
// PY:         config_k0 = _IRC_CHOSEN.get(('kernel_k0', b_D, b_N))
// PY-NEXT:    if config_k0 is None:
// PY-NEXT:        _IRC_TUNER.launch(('kernel_k0', b_D, b_N), kernel_k0, (t_x, v_r, s_D), grid_0)
// PY-NEXT:    else:
// PY-NEXT:        kernel_k0.run(t_x, v_r, s_D, grid=grid_0, warmup=False, c_BLOCK_R=config_k0[0], num_warps=config_k0[1], num_stages=config_k0[2], enable_fp_fusion=False)
// PY:       _IRC_TUNING = {
// PY-NEXT:      'kernel_k0': ('{{[0-9a-f]+}}', ((128, 8192),), None, 3, False, ('c_BLOCK_R',)),
// PY:       'kernel_k0': (kernel_k0, {{.*}}, {'c_BLOCK_R': 8192}),

// SMALL:     loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 1024}
// SMALL-SAME: attributes {launch_tiles = {BLOCK_R = #sym.expr<D>}}
