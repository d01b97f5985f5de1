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
// CHECK:         %[[PID:.*]] = loop.program_id 0 : i64
// CHECK:         %[[ROWS:.*]] = loop.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[16, 1], i64>)
// CHECK:         %[[D:.*]] = loop.range "BLOCK_C" : !loop.tile<[1, 64], i64>
// CHECK:         %[[MASK:.*]] = loop.cmp lt %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[N:.*]] = loop.binary rem %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[H:.*]] = loop.binary floordiv %[[ROWS]], %{{.*}} : (!loop.tile<[16, 1], i64>, i64)
// CHECK:         %[[HD:.*]] = loop.binary add %[[D]], %{{.*}}
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
// CHECK:         %[[NEG_INF:.*]] = loop.constant 0xff800000 : f32
// CHECK:         %[[ROW:.*]] = loop.program_id 0 : i64
// CHECK:         %[[R:.*]] = loop.range "BLOCK_R" : !loop.tile<[128], i64>
// CHECK:         %[[M:.*]] = loop.cmp lt %[[R]], %{{.*}}
// CHECK:         %[[X:.*]] = loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         %[[XM:.*]] = loop.select %[[M]], %[[X]], %[[NEG_INF]]
// CHECK:         %[[MAX:.*]] = loop.reduce max %[[XM]] 0
// CHECK:         loop.binary sub %[[X]], %[[MAX]]
// CHECK:         loop.reduce sum
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
// loop.block_size: a row that fits the block is read once.

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
// CHECK:         %[[D:.*]] = loop.size D : i64
// CHECK:         %[[BLOCK:.*]] = loop.block_size "BLOCK_R" : i64
// CHECK:         %[[ROW:.*]] = loop.program_id 0 : i64
// CHECK:         %[[R:.*]] = loop.range "BLOCK_R" : !loop.tile<[8192], i64>
// CHECK:         %[[M:.*]] = loop.cmp lt %[[R]], %[[D]]
// CHECK:         %[[FIRST:.*]] = loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         %[[FIRST_MAX:.*]] = loop.binary max
// CHECK:         %[[MAXES:.*]], %[[SUMS:.*]] = scf.for %{{.*}} = %[[BLOCK]] to %[[D]] step %[[BLOCK]] iter_args(%[[OLD:.*]] = %[[FIRST_MAX]], %[[RUNNING:.*]] = %{{.*}}) -> (!loop.tile<[8192], f32>, !loop.tile<[8192], f32>)
// CHECK:           loop.read
// CHECK:           %[[NEW:.*]] = loop.binary max %[[OLD]], %{{.*}}
// CHECK:           %[[GROWTH:.*]] = loop.binary sub %[[OLD]], %[[NEW]]
// CHECK:           %[[SCALE:.*]] = loop.unary exp %[[GROWTH]]
// CHECK:           loop.binary mul %[[RUNNING]], %[[SCALE]]
// CHECK:           scf.yield %[[NEW]], %{{.*}}
// CHECK:         %[[MAX:.*]] = loop.reduce max %[[MAXES]] 0
// CHECK:         loop.binary sub %[[MAXES]], %[[MAX]]
// CHECK:         loop.binary mul %[[SUMS]]
// CHECK:         %[[LANE_SUMS:.*]] = loop.reduce sum
// CHECK:         %[[SUM:.*]] = loop.select %{{.*}}, %{{.*}}, %[[LANE_SUMS]]
// CHECK-NOT:     loop.read
// CHECK:         %[[SHIFTED:.*]] = loop.binary sub %[[FIRST]], %[[MAX]]
// CHECK:         %[[E:.*]] = loop.unary exp %[[SHIFTED]]
// CHECK:         %[[Y:.*]] = loop.binary div %[[E]], %[[SUM]]
// CHECK:         loop.write %[[Y]] to 0[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %[[D]] step %[[BLOCK]]
// CHECK:           loop.read
// CHECK:           loop.binary div %{{.*}}, %[[SUM]]
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
// CHECK:           %[[N:.*]] = loop.binary add %[[COUNT]], %{{.*}}
// CHECK:           %[[DELTA:.*]] = loop.binary sub %[[X]], %[[MEAN]]
// CHECK:           %[[STEP:.*]] = loop.binary div %[[DELTA]], %[[N]]
// CHECK:           %[[MOVED:.*]] = loop.binary add %[[MEAN]], %[[STEP]]
// CHECK:           %[[AFTER:.*]] = loop.binary sub %[[X]], %[[MOVED]]
// CHECK:           %[[GROWTH:.*]] = loop.binary mul %[[DELTA]], %[[AFTER]]
// CHECK:           loop.binary add %[[SQUARE]], %[[GROWTH]]
// CHECK:         %[[CENTRE:.*]] = loop.reduce sum %[[SUMS]] 0
// CHECK:         %[[OFF:.*]] = loop.binary sub %[[MEANS]], %[[CENTRE]]
// CHECK:         %[[OFF2:.*]] = loop.binary mul %[[OFF]], %[[OFF]]
// CHECK:         %[[WEIGHTED:.*]] = loop.binary mul %[[COUNTS]], %[[OFF2]]
// CHECK:         %[[SPREAD:.*]] = loop.binary add %[[SQUARES]], %[[WEIGHTED]]
// CHECK:         %[[TOTAL:.*]] = loop.reduce sum %[[SPREAD]] 0
// CHECK:         loop.write %[[TOTAL]]
// CHECK-NOT:     scf.for

// -----

// matmul with a bias and ReLU epilogue: 2-D tiles, a K loop of loop.dot, the
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
// CHECK:         %[[ROWS:.*]] = loop.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[64, 1], i64>)
// One column tile: the columns are the range itself.
// CHECK:         %[[COLS:.*]] = loop.range "BLOCK_N" : !loop.tile<[1, 16], i64>
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} -> (!loop.tile<[64, 16], f32>)
// CHECK:           %[[A:.*]] = loop.read %{{.*}}[%[[ROWS]], %{{.*}}]
// CHECK:           %[[B:.*]] = loop.read %{{.*}}[%{{.*}}, %[[COLS]]]
// CHECK:           loop.dot %[[A]], %[[B]], %{{.*}} : (!loop.tile<[64, 16], f32>, !loop.tile<[16, 16], f32>, !loop.tile<[64, 16], f32>)
// CHECK:         %[[BIAS:.*]] = loop.read %{{.*}}[%[[COLS]]]
// CHECK:         %[[SUM:.*]] = loop.binary add %[[ACC]], %[[BIAS]]
// CHECK:         %[[RELU:.*]] = loop.binary max %[[SUM]]
// CHECK:         loop.write %[[RELU]] to 0[%[[ROWS]], %[[COLS]]]

// -----

// A dim is data, not an index: under guards that make the index type i32 a
// dim beyond i32 stays an i64 constant, while indices are i32.

// CHECK-LABEL: func.func @large_dim(
// CHECK-DAG:     loop.constant 4294967296 : i64
// CHECK-DAG:     loop.program_id 0 : i32
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
// CHECK:         %[[ROW:.*]] = loop.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[8, 1], i64>)
// CHECK:         %[[COL:.*]] = loop.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[1, 128], i64>)
// CHECK:         %[[ROW_MASK:.*]] = loop.cmp lt %[[ROW]], %{{.*}}
// CHECK:         %[[COL_MASK:.*]] = loop.cmp lt %[[COL]], %{{.*}}
// CHECK:         %[[MASK:.*]] = loop.binary and %[[ROW_MASK]], %[[COL_MASK]]
// CHECK:         %[[ALONG:.*]] = loop.binary sub %[[ROW]], %{{.*}}
// CHECK:         %[[LOW:.*]] = loop.cmp ge %[[ALONG]], %{{.*}}
// CHECK:         %[[HIGH:.*]] = loop.cmp lt %[[ALONG]], %{{.*}}
// CHECK:         %[[SPAN:.*]] = loop.binary and %[[LOW]], %[[HIGH]]
// CHECK:         %[[ODD:.*]] = loop.binary rem %[[ALONG]], %{{.*}}
// CHECK:         %[[ON:.*]] = loop.cmp eq %[[ODD]], %{{.*}}
// CHECK:         %[[INSIDE:.*]] = loop.binary and %[[SPAN]], %[[ON]]
// CHECK:         %[[SRC_ROW:.*]] = loop.binary floordiv %[[ALONG]], %{{.*}}
// CHECK:         %[[KEPT:.*]] = loop.read %{{.*}}[%[[ROW]], %[[COL]]] mask %[[MASK]]
// CHECK:         %[[READ_MASK:.*]] = loop.binary and %[[MASK]], %[[INSIDE]]
// CHECK:         %[[WRITTEN:.*]] = loop.read %{{.*}}[%[[SRC_ROW]], %[[COL]]] mask %[[READ_MASK]]
// CHECK:         %[[V:.*]] = loop.select %[[INSIDE]], %[[WRITTEN]], %[[KEPT]]
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
// CHECK:         %[[ZERO:.*]] = loop.constant 0.000000e+00 : f32
// CHECK:         %[[ONE:.*]] = loop.constant 1.000000e+00 : f32
// CHECK:         %[[X:.*]] = loop.read %{{.*}}[%[[ROW:.*]], %[[R:.*]]] mask %[[M:.*]] :
// CHECK:         %[[LABEL:.*]] = loop.read %{{.*}}[%[[ROW]]] :
// CHECK:         %[[IS:.*]] = loop.cmp eq %[[LABEL]], %[[R]]
// CHECK:         %[[CHOSEN:.*]] = loop.binary and %[[IS]], %[[M]]
// CHECK:         %[[PICK:.*]] = loop.select %[[CHOSEN]], %[[X]], %[[ZERO]]
// CHECK:         loop.select %[[CHOSEN]], %[[ONE]], %[[ZERO]]
// CHECK:         %[[MAXES:.*]], %[[SUMS:.*]], %[[PICKS:.*]], %[[COUNTS:.*]] = scf.for
// CHECK:         %[[MAX:.*]] = loop.reduce max %[[MAXES]] 0
// CHECK:         %[[LANE_SUMS:.*]] = loop.reduce sum
// CHECK:         %[[SUM:.*]] = loop.select %{{.*}}, %{{.*}}, %[[LANE_SUMS]]
// CHECK:         %[[PICKED:.*]] = loop.reduce sum %[[PICKS]] 0
// CHECK:         %[[COUNT:.*]] = loop.reduce sum %[[COUNTS]] 0
// CHECK:         %[[SHIFTED:.*]] = loop.binary sub %[[PICKED]], %[[MAX]]
// CHECK:         %[[LOG:.*]] = loop.unary log %[[SUM]]
// CHECK:         %[[LOGP:.*]] = loop.binary sub %[[SHIFTED]], %[[LOG]]
// CHECK:         %[[NONE:.*]] = loop.cmp eq %[[COUNT]], %[[ZERO]]
// CHECK:         %[[RESULT:.*]] = loop.select %[[NONE]], %[[ZERO]], %[[LOGP]]
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
// CHECK:         %[[PID:.*]] = loop.program_id 0
// CHECK:         %[[R:.*]] = loop.range "BLOCK_R"
// CHECK:         %[[M:.*]] = loop.cmp lt %[[R]]
// CHECK:         %[[FIRST:.*]] = loop.binary mul %[[PID]], %[[SIXTEEN:.*]] :
// CHECK:         %[[NEXT:.*]] = loop.binary add %[[FIRST]], %[[SIXTEEN]]
// CHECK:         %[[END:.*]] = loop.binary min %[[NEXT]], %[[N:.*]] :
// CHECK:         %[[G:.*]] = loop.read %{{.*}}[%[[R]]] mask %[[M]]
// CHECK:         scf.for %[[ROW:.*]] = %[[FIRST]] to %[[END]] step %{{.*}}
// CHECK:           loop.read %{{.*}}[%[[ROW]], %[[R]]] mask %[[M]]
// CHECK-NOT:       loop.read %{{.*}}[%[[R]]]
// CHECK:           loop.binary mul %{{.*}}, %[[G]]
// CHECK:           loop.write %{{.*}} to 0[%[[ROW]], %[[R]]] mask %[[M]]
