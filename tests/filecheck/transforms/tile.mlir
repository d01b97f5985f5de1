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

// A symbolic row: the sum of exp(a - max(a)) is online, in the max's loop
// (each lane carries its max and a sum rescaled when the max grows; the
// lanes' sums are brought to the row's max after the loop), then a loop
// writing the rows.

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
// CHECK:       loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D]
// CHECK-SAME:  looped reduction over D lanes per row, 1024 at a time
// CHECK:         %[[D:.*]] = loop.size D : i64
// CHECK:         %[[MAXES:.*]], %[[SUMS:.*]] = scf.for %{{.*}} = %{{.*}} to %[[D]] step %{{.*}} iter_args(%[[OLD:.*]] = %{{.*}}, %[[RUNNING:.*]] = %{{.*}}) -> (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>)
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
// CHECK:         scf.for
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
