// RUN: irc-opt %s -p tile --split-input-file | filecheck %s

// A reshape and a transpose are index maps: the head split reads the input
// at (n, h*64 + d) and writes (h, n, d) of a block of 16 rows of the outer
// dims [12, N] by the 64 columns of the innermost: only the row index is
// divided (by N), once per row; the columns are consecutive.

func.func @heads(%x: !graph.tensor<[N, 768], f32>) -> !graph.tensor<[12, N, 64], f32> {
  %r = fusion.kernel @k0 pointwise (%x) : (!graph.tensor<[N, 768], f32>) -> (!graph.tensor<[12, N, 64], f32>) reason "head split" {
  ^bb0(%a: !graph.tensor<[N, 768], f32>):
    %0 = graph.reshape %a : !graph.tensor<[N, 768], f32> -> !graph.tensor<[N, 12, 64], f32>
    %1 = graph.transpose %0 [1, 0, 2] : !graph.tensor<[N, 12, 64], f32> -> !graph.tensor<[12, N, 64], f32>
    fusion.yield %1 : !graph.tensor<[12, N, 64], f32>
  }
  func.return %r : !graph.tensor<[12, N, 64], f32>
}

// CHECK-LABEL: func.func @heads
// CHECK:       loop.kernel @k0 pointwise (%x) grid [(12*N + 15) floordiv 16] tiles {BLOCK_R = 16, BLOCK_C = 64} symbols [N]
// CHECK-SAME:  reason "head split; pointwise over [12, N, 64] in blocks of 16 rows by 64 columns"
// CHECK:         %[[PID:.*]] = tile.program_id 0 : i64
// CHECK:         %[[ROWS:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[16, 1], i64>)
// CHECK:         %[[D:.*]] = tile.range "BLOCK_C" : !loop.tile<[1, 64], i64>
// CHECK:         %[[MASK:.*]] = tile.cmp lt %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[N:.*]] = tile.binary rem %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[H:.*]] = tile.binary floordiv %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[HD:.*]] = tile.binary add %[[D]], %{{.*}}
// CHECK:         %[[V:.*]] = loop.read %{{.*}}[%[[N]], %[[HD]]] mask %[[MASK]]
// CHECK:         loop.write %[[V]] to 0[%[[H]], %[[N]], %[[D]]] mask %[[MASK]]

// -----

// A static row of 100 lanes: a persistent reduction; max and sum read the
// row once; masked lanes hold each reduction's identity.

func.func @softmax(%x: !graph.tensor<[N, 100], f32>) -> !graph.tensor<[N, 100], f32> {
  %r = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, 100], f32>) -> (!graph.tensor<[N, 100], f32>) reason "softmax" {
  ^bb0(%a: !graph.tensor<[N, 100], f32>):
    %m = graph.reduce max %a [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 100], f32>
    %d = graph.sub %a, %mb : !graph.tensor<[N, 100], f32>
    %e = graph.exp %d : !graph.tensor<[N, 100], f32>
    %s = graph.reduce sum %e [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 100], f32>
    %y = graph.div %e, %sb : !graph.tensor<[N, 100], f32>
    fusion.yield %y : !graph.tensor<[N, 100], f32>
  }
  func.return %r : !graph.tensor<[N, 100], f32>
}

// CHECK-LABEL: func.func @softmax
// CHECK:       loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 128} symbols []
// CHECK-SAME:  persistent reduction of 100 lanes per row
// CHECK:         %[[NEG_INF:.*]] = tile.constant 0xff800000 : f32
// CHECK:         %[[ROW:.*]] = tile.program_id 0 : i64
// CHECK:         %[[R:.*]] = tile.range "BLOCK_R" : !loop.tile<[128], i64>
// CHECK:         %[[M:.*]] = tile.cmp lt %[[R]], %{{.*}}
// CHECK:         %[[X:.*]] = loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         %[[XM:.*]] = tile.select %[[M]], %[[X]], %[[NEG_INF]]
// CHECK:         %[[MAX:.*]] = tile.reduce max %[[XM]] 0
// CHECK:         tile.binary sub %[[X]], %[[MAX]]
// CHECK:         tile.reduce sum
// CHECK-NOT:     loop.read
// CHECK:         loop.write %{{.*}} to 0[%[[ROW]], %[[R]]] mask %[[M]]

// -----

// A symbolic row: the sum of exp(a - max(a)) is online, in the max's walk
// over the row (each lane carries its max and a sum rescaled when the max
// grows; the lanes' sums are brought to the row's max after it), then a walk
// writing the rows. BLOCK_R's size is the launch's choice (launch_tiles: the
// next power of two of D, at most the declared max-row-block 8192, which the
// tile types hold); each walk takes the row's first block from the one read
// of it in the kernel body, then loops over the blocks after it, in steps of
// tile.block_size: a row that fits the block is read once.

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

// CHECK-LABEL: func.func @softmax
// CHECK:       loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 8192} symbols [D]
// CHECK-SAME:  looped reduction over D lanes per row, BLOCK_R (chosen at launch, at most 8192) at a time, the first block kept in registers
// CHECK-SAME:  attributes {launch_tiles = {BLOCK_R = #sym.expr<D>}}
// CHECK:         %[[D:.*]] = tile.size D : i64
// CHECK:         %[[BLOCK:.*]] = tile.block_size "BLOCK_R" : i64
// CHECK:         %[[ROW:.*]] = tile.program_id 0 : i64
// CHECK:         %[[R:.*]] = tile.range "BLOCK_R" : !loop.tile<[8192], i64>
// CHECK:         %[[M:.*]] = tile.cmp lt %[[R]], %[[D]]
// CHECK:         %[[FIRST:.*]] = loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         %[[FIRST_MAX:.*]] = tile.binary max
// CHECK:         %[[MAXES:.*]], %[[SUMS:.*]] = scf.for %{{.*}} = %[[BLOCK]] to %[[D]] step %[[BLOCK]] iter_args(%[[OLD:.*]] = %[[FIRST_MAX]], %[[RUNNING:.*]] = %{{.*}}) -> (!loop.tile<[8192], f32>, !loop.tile<[8192], f32>)
// CHECK:           loop.read
// CHECK:           %[[NEW:.*]] = tile.binary max %[[OLD]], %{{.*}}
// CHECK:           %[[GROWTH:.*]] = tile.binary sub %[[OLD]], %[[NEW]]
// CHECK:           %[[SCALE:.*]] = tile.unary exp %[[GROWTH]]
// CHECK:           tile.binary mul %[[RUNNING]], %[[SCALE]]
// CHECK:           scf.yield %[[NEW]], %{{.*}}
// CHECK:         %[[MAX:.*]] = tile.reduce max %[[MAXES]] 0
// CHECK:         tile.binary sub %[[MAXES]], %[[MAX]]
// CHECK:         tile.binary mul %[[SUMS]]
// CHECK:         %[[LANE_SUMS:.*]] = tile.reduce sum
// CHECK:         %[[SUM:.*]] = tile.select %{{.*}}, %{{.*}}, %[[LANE_SUMS]]
// CHECK-NOT:     loop.read
// CHECK:         %[[SHIFTED:.*]] = tile.binary sub %[[FIRST]], %[[MAX]]
// CHECK:         %[[E:.*]] = tile.unary exp %[[SHIFTED]]
// CHECK:         %[[Y:.*]] = tile.binary div %[[E]], %[[SUM]]
// CHECK:         loop.write %[[Y]] to 0[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %[[D]] step %[[BLOCK]]
// CHECK:           loop.read
// CHECK:           tile.binary div %{{.*}}, %[[SUM]]
// CHECK:           loop.write
// CHECK-NOT:     scf.for

// -----

// A sum of squares about a per-row centre computed from a reduction of the
// same loop (a variance about the mean; here about the sum) is Welford's:
// each lane carries its count, mean and squared deviations, and after the
// loop sum(squares + count * (mean - centre)**2) gives it. One loop, not
// one for the centre and one for the squares.

func.func @variance(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, 1], f32> {
  %r = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, 1], f32>) reason "variance" {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %m = graph.reduce sum %a [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %d = graph.sub %a, %mb : !graph.tensor<[N, D], f32>
    %e = graph.mul %d, %d : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    fusion.yield %s : !graph.tensor<[N, 1], f32>
  }
  func.return %r : !graph.tensor<[N, 1], f32>
}

// CHECK-LABEL: func.func @variance
// CHECK:         %[[SUMS:.*]], %[[COUNTS:.*]], %[[MEANS:.*]], %[[SQUARES:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[COUNT:.*]] = %{{.*}}, %[[MEAN:.*]] = %{{.*}}, %[[SQUARE:.*]] = %{{.*}})
// CHECK:           %[[X:.*]] = loop.read
// CHECK:           %[[N:.*]] = tile.binary add %[[COUNT]], %{{.*}}
// CHECK:           %[[DELTA:.*]] = tile.binary sub %[[X]], %[[MEAN]]
// CHECK:           %[[STEP:.*]] = tile.binary div %[[DELTA]], %[[N]]
// CHECK:           %[[MOVED:.*]] = tile.binary add %[[MEAN]], %[[STEP]]
// CHECK:           %[[AFTER:.*]] = tile.binary sub %[[X]], %[[MOVED]]
// CHECK:           %[[GROWTH:.*]] = tile.binary mul %[[DELTA]], %[[AFTER]]
// CHECK:           tile.binary add %[[SQUARE]], %[[GROWTH]]
// CHECK:         %[[CENTRE:.*]] = tile.reduce sum %[[SUMS]] 0
// CHECK:         %[[OFF:.*]] = tile.binary sub %[[MEANS]], %[[CENTRE]]
// CHECK:         %[[OFF2:.*]] = tile.binary mul %[[OFF]], %[[OFF]]
// CHECK:         %[[WEIGHTED:.*]] = tile.binary mul %[[COUNTS]], %[[OFF2]]
// CHECK:         %[[SPREAD:.*]] = tile.binary add %[[SQUARES]], %[[WEIGHTED]]
// CHECK:         %[[TOTAL:.*]] = tile.reduce sum %[[SPREAD]] 0
// CHECK:         loop.write %[[TOTAL]]
// CHECK-NOT:     scf.for

// -----

// matmul with a bias and ReLU epilogue: 2-D tiles, a K loop of tile.dot, the
// epilogue on the accumulator tile.

func.func @f(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[8, 16], f32>, %b: !graph.tensor<[16], f32>) -> !graph.tensor<[N, 16], f32> {
  %r = fusion.kernel @k0 matmul (%x, %w, %b) : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 16], f32>, !graph.tensor<[16], f32>) -> (!graph.tensor<[N, 16], f32>) reason "mm" {
  ^bb0(%a: !graph.tensor<[N, 8], f32>, %bw: !graph.tensor<[8, 16], f32>, %bb: !graph.tensor<[16], f32>):
    %0 = graph.matmul %a, %bw : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 16], f32>) -> !graph.tensor<[N, 16], f32>
    %1 = graph.broadcast %bb : !graph.tensor<[16], f32> -> !graph.tensor<[N, 16], f32>
    %2 = graph.add %0, %1 : !graph.tensor<[N, 16], f32>
    %3 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N, 16], f32>
    %4 = graph.maximum %2, %3 : !graph.tensor<[N, 16], f32>
    fusion.yield %4 : !graph.tensor<[N, 16], f32>
  }
  func.return %r : !graph.tensor<[N, 16], f32>
}

// CHECK-LABEL: func.func @f
// CHECK:       loop.kernel @k0 matmul (%x, %w, %b) grid [(N + 63) floordiv 64] tiles {BLOCK_M = 64, BLOCK_N = 16, BLOCK_K = 16} symbols [N]
// The size-class table's launch and the default IEEE precision, as attributes.
// CHECK-SAME:    attributes {matmul_precision = "ieee", num_warps = 4 : i64, num_stages = 3 : i64}
// CHECK:         %[[ROWS:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[64, 1], i64>)
// One column tile: the columns are the range itself.
// CHECK:         %[[COLS:.*]] = tile.range "BLOCK_N" : !loop.tile<[1, 16], i64>
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} -> (!loop.tile<[64, 16], f32>)
// CHECK:           %[[A:.*]] = loop.read %{{.*}}[%[[ROWS]], %{{.*}}]
// CHECK:           %[[B:.*]] = loop.read %{{.*}}[%{{.*}}, %[[COLS]]]
// CHECK:           tile.dot %[[A]], %[[B]], %{{.*}} : (!loop.tile<[64, 16], f32>, !loop.tile<[16, 16], f32>, !loop.tile<[64, 16], f32>)
// CHECK:         %[[BIAS:.*]] = loop.read %{{.*}}[%[[COLS]]]
// CHECK:         %[[SUM:.*]] = tile.binary add %[[ACC]], %[[BIAS]]
// CHECK:         %[[RELU:.*]] = tile.binary max %[[SUM]]
// CHECK:         loop.write %[[RELU]] to 0[%[[ROWS]], %[[COLS]]]

// -----

// A dim is data, not an index: under guards that make the index type i32 a
// dim beyond i32 stays an i64 constant, while indices are i32.

// CHECK-LABEL: func.func @large_dim(
// CHECK-DAG:     tile.constant 4294967296 : i64
// CHECK-DAG:     tile.program_id 0 : i32
func.func @large_dim(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], i64> {
  sym.guard N <= 1024
  %b = fusion.kernel @k0 pointwise () : () -> (!graph.tensor<[N], i64>) reason "a dim" {
    %d = graph.dim 4294967296 : !graph.tensor<[], i64>
    %b_1 = graph.broadcast %d : !graph.tensor<[], i64> -> !graph.tensor<[N], i64>
    fusion.yield %b_1 : !graph.tensor<[N], i64>
  }
  func.return %b : !graph.tensor<[N], i64>
}

// -----

// An insert_slice is piecewise: inside the window (rows 1, 3, ... below
// 2*L + 1) the source at ((row - 1) floordiv 2), read under the window's
// mask; elsewhere the destination. Rows and columns are the two axes of a
// block: the window's mask is a column of it.

func.func @insert(%x: !graph.tensor<[N, D], f32>, %v: !graph.tensor<[L, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = fusion.kernel @k0 pointwise (%x, %v) : (!graph.tensor<[N, D], f32>, !graph.tensor<[L, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "strided write" {
  ^bb0(%a: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[L, D], f32>):
    %0 = graph.insert_slice %b into %a [1, 0] [2, 1] : !graph.tensor<[L, D], f32> -> !graph.tensor<[N, D], f32>
    fusion.yield %0 : !graph.tensor<[N, D], f32>
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// CHECK-LABEL: func.func @insert
// CHECK:         loop.kernel @k0 pointwise (%x, %v) grid [((D + 127) floordiv 128)*((N + 7) floordiv 8)] tiles {BLOCK_R = 8, BLOCK_C = 128}
// CHECK:         %[[ROW:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[8, 1], i64>)
// CHECK:         %[[COL:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[1, 128], i64>)
// CHECK:         %[[ROW_MASK:.*]] = tile.cmp lt %[[ROW]], %{{.*}}
// CHECK:         %[[COL_MASK:.*]] = tile.cmp lt %[[COL]], %{{.*}}
// CHECK:         %[[MASK:.*]] = tile.binary and %[[ROW_MASK]], %[[COL_MASK]]
// CHECK:         %[[ALONG:.*]] = tile.binary sub %[[ROW]], %{{.*}}
// CHECK:         %[[LOW:.*]] = tile.cmp ge %[[ALONG]], %{{.*}}
// CHECK:         %[[HIGH:.*]] = tile.cmp lt %[[ALONG]], %{{.*}}
// CHECK:         %[[SPAN:.*]] = tile.binary and %[[LOW]], %[[HIGH]]
// CHECK:         %[[ODD:.*]] = tile.binary rem %[[ALONG]], %{{.*}}
// CHECK:         %[[ON:.*]] = tile.cmp eq %[[ODD]], %{{.*}}
// CHECK:         %[[INSIDE:.*]] = tile.binary and %[[SPAN]], %[[ON]]
// CHECK:         %[[SRC_ROW:.*]] = tile.binary floordiv %[[ALONG]], %{{.*}}
// CHECK:         %[[KEPT:.*]] = loop.read %{{.*}}[%[[ROW]], %[[COL]]] mask %[[MASK]]
// CHECK:         %[[READ_MASK:.*]] = tile.binary and %[[MASK]], %[[INSIDE]]
// CHECK:         %[[WRITTEN:.*]] = loop.read %{{.*}}[%[[SRC_ROW]], %[[COL]]] mask %[[READ_MASK]]
// CHECK:         %[[V:.*]] = tile.select %[[INSIDE]], %[[WRITTEN]], %[[KEPT]]
// CHECK:         loop.write %[[V]] to 0[%[[ROW]], %[[COL]]] mask %[[MASK]]

// -----

// Cross-entropy's picked log-probability, sum(where(label == lane,
// (x - max) - log(sum(exp(x - max))), 0)), is a one-hot pick: the label
// matches one lane at most, so the sum is the picked x minus the two per-row
// offsets, in that order. It joins the walk of the max and the online sum
// (each lane carries its picked x and its count of picks, masked lanes pick
// nothing), and the offsets are subtracted after it: one walk over the row,
// not two; 0 where no lane is picked (a label out of range).

func.func @cross_entropy(%logits: !graph.tensor<[N, V], f32>, %labels: !graph.tensor<[N], i64>) -> !graph.tensor<[N], f32> {
  %0 = fusion.kernel @k0 reduction (%logits, %labels) : (!graph.tensor<[N, V], f32>, !graph.tensor<[N], i64>) -> (!graph.tensor<[N], f32>) reason "picked log-probability" {
  ^bb0(%x: !graph.tensor<[N, V], f32>, %label: !graph.tensor<[N], i64>):
    %1 = graph.reduce max %x [1] : !graph.tensor<[N, V], f32> -> !graph.tensor<[N, 1], f32>
    %2 = graph.broadcast %1 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, V], f32>
    %3 = graph.sub %x, %2 : !graph.tensor<[N, V], f32>
    %4 = graph.exp %3 : !graph.tensor<[N, V], f32>
    %5 = graph.reduce sum %4 [1] : !graph.tensor<[N, V], f32> -> !graph.tensor<[N, 1], f32>
    %6 = graph.log %5 : !graph.tensor<[N, 1], f32>
    %7 = graph.broadcast %6 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, V], f32>
    %8 = graph.sub %3, %7 : !graph.tensor<[N, V], f32>
    %9 = graph.reshape %label : !graph.tensor<[N], i64> -> !graph.tensor<[N, 1], i64>
    %10 = graph.iota [0] : !graph.tensor<[V], i64>
    %11 = graph.broadcast %9 : !graph.tensor<[N, 1], i64> -> !graph.tensor<[N, V], i64>
    %12 = graph.broadcast %10 : !graph.tensor<[V], i64> -> !graph.tensor<[N, V], i64>
    %13 = graph.cmp eq, %11, %12 : !graph.tensor<[N, V], i64>
    %14 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N, V], f32>
    %15 = graph.select %13, %8, %14 : !graph.tensor<[N, V], i1>, !graph.tensor<[N, V], f32>
    %16 = graph.reduce sum %15 [1] : !graph.tensor<[N, V], f32> -> !graph.tensor<[N], f32>
    fusion.yield %16 : !graph.tensor<[N], f32>
  }
  func.return %0 : !graph.tensor<[N], f32>
}

// CHECK-LABEL: func.func @cross_entropy
// CHECK:         %[[ZERO:.*]] = tile.constant 0.000000e+00 : f32
// CHECK:         %[[ONE:.*]] = tile.constant 1.000000e+00 : f32
// CHECK:         %[[X:.*]] = loop.read %{{.*}}[%[[ROW:.*]], %[[R:.*]]] mask %[[M:.*]] :
// CHECK:         %[[LABEL:.*]] = loop.read %{{.*}}[%[[ROW]]] :
// CHECK:         %[[IS:.*]] = tile.cmp eq %[[LABEL]], %[[R]]
// CHECK:         %[[CHOSEN:.*]] = tile.binary and %[[IS]], %[[M]]
// CHECK:         %[[PICK:.*]] = tile.select %[[CHOSEN]], %[[X]], %[[ZERO]]
// CHECK:         tile.select %[[CHOSEN]], %[[ONE]], %[[ZERO]]
// CHECK:         %[[MAXES:.*]], %[[SUMS:.*]], %[[PICKS:.*]], %[[COUNTS:.*]] = scf.for
// CHECK:         %[[MAX:.*]] = tile.reduce max %[[MAXES]] 0
// CHECK:         %[[LANE_SUMS:.*]] = tile.reduce sum
// CHECK:         %[[SUM:.*]] = tile.select %{{.*}}, %{{.*}}, %[[LANE_SUMS]]
// CHECK:         %[[PICKED:.*]] = tile.reduce sum %[[PICKS]] 0
// CHECK:         %[[COUNT:.*]] = tile.reduce sum %[[COUNTS]] 0
// CHECK:         %[[SHIFTED:.*]] = tile.binary sub %[[PICKED]], %[[MAX]]
// CHECK:         %[[LOG:.*]] = tile.unary log %[[SUM]]
// CHECK:         %[[LOGP:.*]] = tile.binary sub %[[SHIFTED]], %[[LOG]]
// CHECK:         %[[NONE:.*]] = tile.cmp eq %[[COUNT]], %[[ZERO]]
// CHECK:         %[[RESULT:.*]] = tile.select %[[NONE]], %[[ZERO]], %[[LOGP]]
// CHECK:         loop.write %[[RESULT]] to 0[%[[ROW]]]
// CHECK-NOT:     scf.for

// -----

// A row kernel reading an input broadcast along its rows (RMS norm's weight
// g, of the row's length) walks rows-per-program (16) rows a program: the
// grid is ceil(N / 16), a scf.for over the program's rows, from 16 * pid to
// min(16 * pid + 16, N) (a bound the bounds checker sees), and the weight's
// first block is read once, before it, where its index and mask are the
// same for every row.

func.func @rms_norm(%x: !graph.tensor<[N, D], f32>, %g: !graph.tensor<[D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = fusion.kernel @k0 reduction (%x, %g) : (!graph.tensor<[N, D], f32>, !graph.tensor<[D], f32>) -> (!graph.tensor<[N, D], f32>) reason "rms norm" {
  ^bb0(%a: !graph.tensor<[N, D], f32>, %w: !graph.tensor<[D], f32>):
    %sq = graph.mul %a, %a : !graph.tensor<[N, D], f32>
    %s = graph.reduce sum %sq [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %n = graph.div %a, %sb : !graph.tensor<[N, D], f32>
    %wb = graph.broadcast %w : !graph.tensor<[D], f32> -> !graph.tensor<[N, D], f32>
    %y = graph.mul %n, %wb : !graph.tensor<[N, D], f32>
    fusion.yield %y : !graph.tensor<[N, D], f32>
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// CHECK-LABEL: func.func @rms_norm
// CHECK:       loop.kernel @k0 reduction (%x, %g) grid [(N + 15) floordiv 16]
// CHECK-SAME:  16 rows per program, which read the inputs broadcast along the rows once
// CHECK:         %[[PID:.*]] = tile.program_id 0
// CHECK:         %[[R:.*]] = tile.range "BLOCK_R"
// CHECK:         %[[M:.*]] = tile.cmp lt %[[R]]
// CHECK:         %[[FIRST:.*]] = tile.binary mul %[[PID]], %[[SIXTEEN:.*]] :
// CHECK:         %[[NEXT:.*]] = tile.binary add %[[FIRST]], %[[SIXTEEN]]
// CHECK:         %[[END:.*]] = tile.binary min %[[NEXT]], %[[N:.*]] :
// CHECK:         %[[G:.*]] = loop.read %{{.*}}[%[[R]]] mask %[[M]]
// CHECK:         scf.for %[[ROW:.*]] = %[[FIRST]] to %[[END]] step %{{.*}}
// CHECK:           loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK-NOT:       loop.read %{{.*}}[%[[R]]]
// CHECK:           tile.binary mul %{{.*}}, %[[G]]
// CHECK:           loop.write %{{.*}} to 0[%[[ROW]], %[[R]]] mask %[[M]]
