// --check-bounds evaluates narrow (i32) index arithmetic as the GPU does,
// wrapping around: an access whose index went through a wrap on a lane
// where it is active is an error naming the op that wrapped, its operands,
// and the exact and wrapped values. Symbols bound to large values (here a
// buffer of 65537 x 65537 elements, past 2**32) are checked symbolically.

// RUN: not irc-opt %s --split-input-file --check-bounds -o %t 2>&1 | filecheck %s
// RUN: irc-opt %s --split-input-file --check-bounds --verify-diagnostics -o %t
// RUN: irc-opt %s --split-input-file --check-bounds -p bufferize,lower-memory-to-triton --verify-diagnostics -o %t

// CHECK-NOT: Traceback

// What bufferize made of a hand-written i32 row kernel before issue 33:
// `row * D` in i32 wraps on a large buffer.
// CHECK:      check-bounds-wrap.mlir:[[# @LINE + 15]]:8: error: memory.load reads %a: !memory.buffer<[N, D], [D, 1], f32> at an offset that wraps around: with D = 65537, N = 65537, program id [65533, 0], lane [0] reads offset -131075, outside [0, 4295098369), through %rowstart = tile.binary mul of 65533 and 65537, which is 4294836221 but wraps around to -131075 in i32 (--check-bounds)
// CHECK:      note: also memory.store writes %out: !memory.buffer<[N, D], [D, 1], f32> at an offset that wraps around: with D = 65537, N = 65537
memory.kernel @k0 pointwise (%a: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N, D], [D, 1], f32>) inputs 1 grid [N, (D + 127) floordiv 128] tiles {BLOCK = 128} symbols [D] reason "hand-written" {
  %0 = tile.size D : i32
  %row = tile.program_id 0 : i32
  %cb = tile.program_id 1 : i32
  %c128 = tile.constant 128 : i32
  %start = tile.binary mul %cb, %c128 : (i32, i32) -> i32
  %lanes = tile.range "BLOCK" : !loop.tile<[128], i32>
  %col = tile.binary add %start, %lanes : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
  %d = tile.size D : i32
  %m = tile.cmp lt %col, %d : (!loop.tile<[128], i32>, i32) -> !loop.tile<[128], i1>
  %rowstart = tile.binary mul %row, %0 : (i32, i32) -> i32
  %off = tile.binary add %rowstart, %col : (i32, !loop.tile<[128], i32>) -> !loop.tile<[128], i32>
  // expected-error@+1 {{memory.load reads %a: !memory.buffer<[N, D], [D, 1], f32> at an offset that wraps around}}
  %v = memory.load %a[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
  %e = tile.unary exp %v : !loop.tile<[128], f32>
  memory.store %e, %out[%off] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[128], i32>] mask !loop.tile<[128], i1>
}
func.func @rows(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  sym.guard N == 65537, "large"
  sym.guard D == 65537, "large"
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}

// -----

// The same kernel at the loop level: bufferize now makes its offsets i64,
// proven in bounds for the same buffer after each pass of the third RUN
// (the old i32 offsets were an error after bufferize).
// CHECK-NOT:  error
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  sym.guard N == 65537, "large"
  sym.guard D == 65537, "large"
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
