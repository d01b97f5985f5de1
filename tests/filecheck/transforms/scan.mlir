// graph.scan through the levels: fuse makes it a reduction kernel of scans
// (producers and consumers join; a reduction does not), tile walks each row
// in order (one tile for a short static row; an scf.for carrying the running
// value for a symbolic one), and lower-to-triton spells tile.scan as
// tile.scan, emitted as tl.cumsum / tl.cumprod. --check-semantics runs the
// interpreters before and after each pass. The carry starts at -0.0 (the
// identity of float addition) and the next one is the last lane, picked
// exactly by a max over a tile holding -inf elsewhere.

// RUN: irc-opt %s -p fuse | filecheck %s --check-prefix=FUSE
// RUN: irc-opt %s -p fuse,tile | filecheck %s --check-prefix=TILE
// RUN: irc-opt %s -p lower-to-triton | filecheck %s --check-prefix=TRITON
// RUN: irc-opt %s -p lower-to-triton -t triton | filecheck %s --check-prefix=PY
// RUN: irc-opt %s -p fuse,tile,bufferize --check-semantics --check-semantics-runs=3 | filecheck %s --check-prefix=CHECKED

// FUSE-LABEL: func.func @cumsum_exp(
// FUSE-NEXT:    %y = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "row scan over [1] of [N, D] (graph.scan sum %c); producers: graph.exp; consumers: graph.mul; duplicated here: graph.constant" {
// FUSE:           graph.exp
// FUSE-NEXT:      graph.scan sum
// FUSE-NEXT:      graph.constant
// FUSE-NEXT:      graph.mul
// FUSE-NEXT:      fusion.yield

// TILE-LABEL: func.func @cumsum_exp(
// TILE:         loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D]
// TILE-SAME:    looped scan over D lanes per row, 1024 at a time, carrying each scan's running value
// TILE-DAG:     %[[ZERO:.*]] = tile.constant -0.000000e+00 : f32
// TILE-DAG:     %[[LAST:.*]] = tile.constant 1023 : i64
// TILE-DAG:     %[[LOWEST:.*]] = tile.constant 0xff800000 : f32
// TILE-DAG:     %[[ROW:.*]] = tile.program_id 0 : i64
// TILE:         %{{.*}} = scf.for %[[START:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[CARRY:.*]] = %[[ZERO]]) -> (f32) : i64 {
// TILE:           %[[LANES:.*]] = tile.binary add %[[START]], %{{.*}}
// TILE:           %[[MASK:.*]] = tile.cmp lt %[[LANES]], %{{.*}}
// TILE:           %[[IS_LAST:.*]] = tile.cmp eq %{{.*}}, %[[LAST]]
// TILE:           %[[READ:.*]] = loop.read %{{.*}}[%[[ROW]], %[[LANES]]] mask %[[MASK]]
// TILE-NEXT:      %[[EXP:.*]] = tile.unary exp %[[READ]]
// TILE-NEXT:      %[[MASKED:.*]] = tile.select %[[MASK]], %[[EXP]], %[[ZERO]]
// TILE-NEXT:      %[[SCAN:.*]] = tile.scan sum %[[MASKED]] 0 : !loop.tile<[1024], f32>
// TILE-NEXT:      %[[RUNNING:.*]] = tile.binary add %[[CARRY]], %[[SCAN]] : (f32, !loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// TILE-NEXT:      %[[PICKED:.*]] = tile.select %[[IS_LAST]], %[[RUNNING]], %[[LOWEST]]
// TILE-NEXT:      %[[NEXT:.*]] = tile.reduce max %[[PICKED]] 0 : !loop.tile<[1024], f32> -> f32
// TILE-NEXT:      %[[TWICE:.*]] = tile.binary mul %[[RUNNING]], %{{.*}}
// TILE-NEXT:      loop.write %[[TWICE]] to 0[%[[ROW]], %[[LANES]]] mask %[[MASK]]
// TILE-NEXT:      scf.yield %[[NEXT]] : f32

// TRITON-LABEL: triton.kernel @cumsum_exp_k0 reduction
// TRITON:         scf.for
// TRITON:           tile.scan sum %{{.*}} 0 : !triton.tensor<[1024], f32>
// TRITON:           scf.yield %{{.*}} : f32

// PY-LABEL: def kernel_cumsum_exp_k0(p_arg0: '*fp32', p_out: '*fp32', s_D, c_BLOCK_R: tl.constexpr = 1024):
// PY:         for v{{.*}} in range(
// PY:           v{{.*}} = tl.cumsum(v{{.*}}, 0)

func.func @cumsum_exp(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %e = graph.exp %x : !graph.tensor<[N, D], f32>
  %c = graph.scan sum %e [1] : !graph.tensor<[N, D], f32>
  %two = graph.constant 2.0 : f32 -> !graph.tensor<[N, D], f32>
  %y = graph.mul %c, %two : !graph.tensor<[N, D], f32>
  func.return %y : !graph.tensor<[N, D], f32>
}

// A short static row is one tile, no loop; float16 is scanned in float32
// and rounded once.

// TILE-LABEL: func.func @cumprod_half(
// TILE:         loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 8} symbols []
// TILE-SAME:    persistent scan of 5 lanes per row
// TILE-NOT:     scf.for
// TILE:         %[[WIDE:.*]] = tile.cast %{{.*}} : !loop.tile<[8], f16> -> !loop.tile<[8], f32>
// TILE-NEXT:    %[[MASKED:.*]] = tile.select %{{.*}}, %[[WIDE]], %{{.*}}
// TILE-NEXT:    %[[SCAN:.*]] = tile.scan prod %[[MASKED]] 0 : !loop.tile<[8], f32>
// TILE-NEXT:    %[[NARROW:.*]] = tile.cast %[[SCAN]] : !loop.tile<[8], f32> -> !loop.tile<[8], f16>
// TILE-NEXT:    loop.write %[[NARROW]] to 0

// PY-LABEL: def kernel_cumprod_half_k0(p_arg0: '*fp16', p_out: '*fp16', c_BLOCK_R: tl.constexpr = 8):
// PY-NOT:     for
// PY:         tl.cumprod(v{{.*}}, 0)

func.func @cumprod_half(%x: !graph.tensor<[N, 5], f16>) -> !graph.tensor<[N, 5], f16> {
  %c = graph.scan prod %x [1] : !graph.tensor<[N, 5], f16>
  func.return %c : !graph.tensor<[N, 5], f16>
}

// A reduction of a scan is two kernels: a reduction's loop would need the
// scan's carry.

// FUSE-LABEL: func.func @sum_of_cumsum(
// FUSE:         fusion.kernel @k0 reduction (%x) {{.*}} reason "row scan over [1] of [N, D] (graph.scan sum %c); graph.scan sum %c not fused into k1: a reduction and a scan do not share a kernel (the reduction's loop would need the scan's running carry)"
// FUSE:         fusion.kernel @k1 reduction (%c) {{.*}} reason "row reduction over [1] of [N, D] (graph.reduce sum %s)"

func.func @sum_of_cumsum(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.scan sum %x [1] : !graph.tensor<[N, D], f32>
  %s = graph.reduce sum %c [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
  func.return %s : !graph.tensor<[N], f32>
}

// CHECKED: memory.launch @cumsum_exp_k0
// CHECKED: memory.launch @cumprod_half_k0
// CHECKED: memory.launch @sum_of_cumsum_k0
// CHECKED: memory.launch @sum_of_cumsum_k1
