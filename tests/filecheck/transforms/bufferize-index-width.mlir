// bufferize computes a kernel's offsets (`row * D + col`) in its indices'
// type only where the guards prove the buffer small enough for it, by the
// tiler's own rule (at most 2**30 - 1 elements for i32); otherwise in i64,
// the narrow indices cast up first, so that no product of sizes wraps
// around past 2**31. An index used as it is (a 1-D access) keeps its type.

// RUN: irc-opt %s --split-input-file -p bufferize | filecheck %s
// RUN: irc-opt %s --split-input-file -p bufferize,lower-memory-to-triton | filecheck %s --check-prefix=TRITON
// RUN: irc-opt %s --split-input-file -p bufferize | irc-opt --split-input-file -p bufferize | filecheck %s

// No guard: N*D is unbounded, the offsets are i64.

// CHECK-LABEL: memory.kernel @k0 pointwise
// CHECK-NEXT:    %[[D64:.*]] = tile.size D : i64
// CHECK:         %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
// CHECK:         %[[ROW:.*]] = tile.cast %row : i32 -> i64
// CHECK-NEXT:    %[[ROWSTART:.*]] = tile.binary mul %[[ROW]], %[[D64]] : (i64, i64) -> i64
// CHECK-NEXT:    %[[COL:.*]] = tile.cast %col : !loop.tile<[128], i32> -> !loop.tile<[128], i64>
// CHECK-NEXT:    %off = tile.binary add %[[ROWSTART]], %[[COL]] : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
// CHECK-NEXT:    %v = memory.load %a[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i64>]
// CHECK:         memory.store %e, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i64>]

// TRITON-LABEL: triton.kernel @k0 pointwise
// TRITON:         tile.cast %row : i32 -> i64
// TRITON:         triton.load %a[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[128], i64>]
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %y = loop.kernel @k0 pointwise (%x) grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "hand-written" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %row = tile.program_id 0 : i32
    %cb = tile.program_id 1 : i32
    %c128 = tile.constant 128 : i32
    %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
    %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
    %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
    %d = tile.size D : i32
    %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
    %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    %e = tile.unary exp %v : !loop.tile<[128], f32>
    loop.write %e to 0[%row, %col] mask %m : !loop.tile<[128], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1>
  }
  func.return %y : !graph.tensor<[N, D], f32>
}

// -----

// A guard that keeps N*D within the rule: the offsets stay i32, no cast.

// CHECK-LABEL: memory.kernel @k0 pointwise
// CHECK-NEXT:    %[[D32:.*]] = tile.size D : i32
// CHECK-NOT:     tile.cast
// CHECK:         %[[ROWSTART:.*]] = tile.binary mul %row, %[[D32]] : (i32, i32) -> i32
// CHECK-NEXT:    %off = tile.binary add %[[ROWSTART]], %col : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
// CHECK-NEXT:    %v = memory.load %a[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i32>]
// CHECK:       func.func @rows
// CHECK-NEXT:    sym.guard D*N <= 1073741823, "offsets fit i32"

// TRITON-LABEL: triton.kernel @k0 pointwise
// TRITON-NOT:     tile.cast
// TRITON:         triton.load %a[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[128], i32>]
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  sym.guard N*D <= 1073741823, "offsets fit i32"
  %y = loop.kernel @k0 pointwise (%x) grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "hand-written" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %row = tile.program_id 0 : i32
    %cb = tile.program_id 1 : i32
    %c128 = tile.constant 128 : i32
    %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
    %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
    %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
    %d = tile.size D : i32
    %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
    %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    %e = tile.unary exp %v : !loop.tile<[128], f32>
    loop.write %e to 0[%row, %col] mask %m : !loop.tile<[128], f32>[i32, !loop.tile<[128], i32>] mask !loop.tile<[128], i1>
  }
  func.return %y : !graph.tensor<[N, D], f32>
}

// -----

// A 1-D write at the program id adds no arithmetic: %row is the offset, in
// i32, while the 2-D read beside it is widened.

// CHECK-LABEL: memory.kernel @k0 pointwise
// CHECK:         memory.load %a[%off] : !memory.buffer<[M, D], [D, 1], f32>[i64] -> f32
// CHECK-NEXT:    memory.store %v, %out[%row] : f32, !memory.buffer<[M], [1], f32>[i32]
func.func @first_column(%x: !graph.tensor<[M, D], f32>) -> !graph.tensor<[M], f32> {
  %y = loop.kernel @k0 pointwise (%x) grid [M] tiles {} symbols [] reason "" : (!graph.tensor<[M, D], f32>) -> (!graph.tensor<[M], f32>) {
  ^bb0(%a: !graph.tensor<[M, D], f32>):
    %row = tile.program_id 0 : i32
    %zero = tile.constant 0 : i32
    %v = loop.read %a[%row, %zero] : !graph.tensor<[M, D], f32>[i32, i32] -> f32
    loop.write %v to 0[%row] : f32[i32]
  }
  func.return %y : !graph.tensor<[M], f32>
}
