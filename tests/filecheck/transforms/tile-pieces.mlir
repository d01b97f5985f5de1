// RUN: irc-opt %s -p tile --split-input-file | filecheck %s

// Rotary embedding: the last axis is a concat of two halves, so the kernel
// is tiled by them: each program holds a column c of a half (BLOCK_C = 8)
// and writes both halves, at c and at c + 8. x is read once per half (at
// c and at c + 8), each read used by both halves; no select, no mask on
// the columns.

func.func @rotary(%x: !graph.tensor<[S, 16], f32>, %cos: !graph.tensor<[S, 16], f32>, %sin: !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> {
  %0 = fusion.kernel @k0 pointwise (%x, %cos, %sin) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[S, 16], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "rope" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %c: !graph.tensor<[S, 16], f32>, %s: !graph.tensor<[S, 16], f32>):
    %1 = graph.slice %a [0, 8] [1, 1] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 8], f32>
    %2 = graph.neg %1 : !graph.tensor<[S, 8], f32>
    %3 = graph.slice %a [0, 0] [1, 1] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 8], f32>
    %4 = graph.concat %2, %3 [1] : (!graph.tensor<[S, 8], f32>, !graph.tensor<[S, 8], f32>) -> !graph.tensor<[S, 16], f32>
    %5 = graph.mul %a, %c : !graph.tensor<[S, 16], f32>
    %6 = graph.mul %4, %s : !graph.tensor<[S, 16], f32>
    %7 = graph.add %5, %6 : !graph.tensor<[S, 16], f32>
    fusion.yield %7 : !graph.tensor<[S, 16], f32>
  }
  func.return %0 : !graph.tensor<[S, 16], f32>
}

// CHECK-LABEL: func.func @rotary
// CHECK:       loop.kernel @k0 pointwise (%x, %cos, %sin) grid [(S + 63) floordiv 64] tiles {BLOCK_R = 64, BLOCK_C = 8} symbols [S]
// CHECK-SAME:  reason "rope; pointwise over [S, 16] in blocks of 64 rows by 8 columns in each of 2 pieces of 8 columns"
// CHECK:         %[[EIGHT:.*]] = tile.constant 8 : i64
// CHECK:         %[[ROWS:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[64, 1], i64>)
// CHECK:         %[[LOW:.*]] = tile.range "BLOCK_C" : !loop.tile<[1, 8], i64>
// CHECK:         %[[MASK:.*]] = tile.cmp lt %[[ROWS]], %{{.*}} : (!loop.tile<[64, 1], i64>, i64)
// CHECK-NOT:     tile.select
// CHECK:         %[[X_LOW:.*]] = loop.read %[[XA:[0-9]+]][%[[ROWS]], %[[LOW]]] mask %[[MASK]]
// CHECK:         %[[HIGH:.*]] = tile.binary add %[[LOW]], %[[EIGHT]]
// CHECK:         %[[X_HIGH:.*]] = loop.read %[[XA]][%[[ROWS]], %[[HIGH]]] mask %[[MASK]]
// CHECK:         %[[NEG:.*]] = tile.unary neg %[[X_HIGH]]
// CHECK:         loop.write %{{.*}} to 0[%[[ROWS]], %[[LOW]]] mask %[[MASK]]
// CHECK-NOT:     loop.read %[[XA]]{{\[}}
// CHECK:         tile.binary mul %[[X_HIGH]], %{{.*}}
// CHECK-NOT:     loop.read %[[XA]]{{\[}}
// CHECK:         tile.binary mul %[[X_LOW]], %{{.*}}
// CHECK:         loop.write %{{.*}} to 0[%[[ROWS]], %[[HIGH]]] mask %[[MASK]]

// -----

// Pieces of unequal widths (a roll by 3 of 16 columns) share no window:
// the ordinary form, a select between the operands read under masks.

func.func @roll(%x: !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> {
  %0 = fusion.kernel @k0 pointwise (%x) : (!graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "roll" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>):
    %1 = graph.slice %a [0, 3] [1, 1] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 13], f32>
    %2 = graph.slice %a [0, 0] [1, 1] : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 3], f32>
    %3 = graph.concat %1, %2 [1] : (!graph.tensor<[S, 13], f32>, !graph.tensor<[S, 3], f32>) -> !graph.tensor<[S, 16], f32>
    %4 = graph.mul %a, %3 : !graph.tensor<[S, 16], f32>
    fusion.yield %4 : !graph.tensor<[S, 16], f32>
  }
  func.return %0 : !graph.tensor<[S, 16], f32>
}

// CHECK-LABEL: func.func @roll
// CHECK:       loop.kernel @k0 pointwise (%x) grid [(S + 63) floordiv 64] tiles {BLOCK_R = 64, BLOCK_C = 16}
// CHECK-SAME:  reason "roll; pointwise over [S, 16] in blocks of 64 rows by 16 columns"
// CHECK:         tile.select
// CHECK:         loop.write
// CHECK-NOT:     loop.write

// -----

// GPT-J's pairs in the [S, D] layout (np.stack([-x[..., 1], x[..., 0]],
// -1).reshape(S, D)): the concat of one-column pieces along the last axis
// of [S, 8, 2], reshaped back to [S, 16], is tiled by interleaved pieces:
// each program holds a pair index j and writes the even positions 2j and
// the odd ones 2j + 1; x is read once at each (no division, no select).

func.func @gptj(%x: !graph.tensor<[S, 16], f32>, %cos: !graph.tensor<[S, 16], f32>, %sin: !graph.tensor<[S, 16], f32>) -> !graph.tensor<[S, 16], f32> {
  %0 = fusion.kernel @k0 pointwise (%x, %cos, %sin) : (!graph.tensor<[S, 16], f32>, !graph.tensor<[S, 16], f32>, !graph.tensor<[S, 16], f32>) -> (!graph.tensor<[S, 16], f32>) reason "gpt-j" {
  ^bb0(%a: !graph.tensor<[S, 16], f32>, %c: !graph.tensor<[S, 16], f32>, %s: !graph.tensor<[S, 16], f32>):
    %1 = graph.reshape %a : !graph.tensor<[S, 16], f32> -> !graph.tensor<[S, 8, 2], f32>
    %2 = graph.slice %1 [0, 0, 1] [1, 1, 1] : !graph.tensor<[S, 8, 2], f32> -> !graph.tensor<[S, 8, 1], f32>
    %3 = graph.neg %2 : !graph.tensor<[S, 8, 1], f32>
    %4 = graph.slice %1 [0, 0, 0] [1, 1, 1] : !graph.tensor<[S, 8, 2], f32> -> !graph.tensor<[S, 8, 1], f32>
    %5 = graph.concat %3, %4 [2] : (!graph.tensor<[S, 8, 1], f32>, !graph.tensor<[S, 8, 1], f32>) -> !graph.tensor<[S, 8, 2], f32>
    %6 = graph.reshape %5 : !graph.tensor<[S, 8, 2], f32> -> !graph.tensor<[S, 16], f32>
    %7 = graph.mul %a, %c : !graph.tensor<[S, 16], f32>
    %8 = graph.mul %6, %s : !graph.tensor<[S, 16], f32>
    %9 = graph.add %7, %8 : !graph.tensor<[S, 16], f32>
    fusion.yield %9 : !graph.tensor<[S, 16], f32>
  }
  func.return %0 : !graph.tensor<[S, 16], f32>
}

// CHECK-LABEL: func.func @gptj
// CHECK:       loop.kernel @k0 pointwise (%x, %cos, %sin) grid [(S + 63) floordiv 64] tiles {BLOCK_R = 64, BLOCK_C = 8} symbols [S]
// CHECK-SAME:  reason "gpt-j; pointwise over [S, 16] in blocks of 64 rows by 8 columns in each of 2 interleaved pieces of 8 columns"
// CHECK-DAG:     %[[ONE:.*]] = tile.constant 1 : i64
// CHECK-DAG:     %[[TWO:.*]] = tile.constant 2 : i64
// CHECK:         %[[ROWS:.*]] = tile.binary add %{{.*}}, %{{.*}} : (i64, !loop.tile<[64, 1], i64>)
// CHECK:         %[[J:.*]] = tile.range "BLOCK_C" : !loop.tile<[1, 8], i64>
// CHECK:         %[[MASK:.*]] = tile.cmp lt %[[ROWS]], %{{.*}} : (!loop.tile<[64, 1], i64>, i64)
// CHECK-NOT:     floordiv
// CHECK-NOT:     tile.select
// CHECK:         %[[EVEN:.*]] = tile.binary mul %[[J]], %[[TWO]]
// CHECK:         %[[X_EVEN:.*]] = loop.read %[[XA:[0-9]+]][%[[ROWS]], %[[EVEN]]] mask %[[MASK]]
// CHECK:         %[[ODD:.*]] = tile.binary add %[[EVEN]], %[[ONE]]
// CHECK:         %[[X_ODD:.*]] = loop.read %[[XA]][%[[ROWS]], %[[ODD]]] mask %[[MASK]]
// CHECK:         loop.write %{{.*}} to 0[%[[ROWS]], %[[EVEN]]] mask %[[MASK]]
// CHECK-NOT:     loop.read %[[XA]]{{\[}}
// CHECK:         loop.write %{{.*}} to 0[%[[ROWS]], %[[ODD]]] mask %[[MASK]]
