// --check-bounds stops at an access it cannot prove inside its buffer, with
// a diagnostic at the op naming the buffer and a binding, program id and
// lane that break it (exit status 1); and at a grid beyond CUDA's limits.
// Each chunk is one of the index mutations the checker must catch.

// RUN: not irc-opt %s --split-input-file --check-bounds -o %t 2>&1 | filecheck %s
// RUN: irc-opt %s --split-input-file -o %t
// RUN: irc-opt %s --split-input-file --check-bounds --verify-diagnostics -o %t

// CHECK-NOT: Traceback

// A dropped load mask (memory level): the last block reads past N*D.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 11]]:8: error: memory.load reads out of bounds of argument 0 of @k0: !memory.buffer<[N, D], [D, 1], f32>: with D = 1, N = 1, program id [0], lane [1] reads offset 1, outside [0, 1) (--check-bounds)
// CHECK-NEXT: {{^  %v = memory.load %0\[%off\] : .*$}}
memory.kernel @k0 pointwise (%0: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N, D], [D, 1], f32>) inputs 1 grid [(D*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [D, N] reason "exp" {
  %block = tile.constant 1024 : i64
  %size = tile.size D*N : i64
  %pid = tile.program_id 0 : i64
  %start = tile.binary mul %pid, %block : (i64, i64) -> i64
  %lanes = tile.range "BLOCK" : !loop.tile<[1024], i64>
  %off = tile.binary add %start, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
  %in = tile.cmp lt %off, %size : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
  // expected-error@+1 {{memory.load reads out of bounds of argument 0 of @k0}}
  %v = memory.load %0[%off] : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] -> !loop.tile<[1024], f32>
  %e = tile.unary exp %v : !loop.tile<[1024], f32>
  memory.store %e, %out[%off] mask %in : !loop.tile<[1024], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
}
func.func @f(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}

// -----

// A dropped store mask (triton level): the buffer behind %out is the
// launch's %y.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 13]]:3: error: triton.store writes out of bounds of %out of @k0 (%y, operand 1 of its memory.launch: !memory.buffer<[N, D], [D, 1], f32>): with D = 1, N = 1, program id [0], lane [1] writes offset 1, outside [0, 1) (--check-bounds)
// CHECK-NEXT: {{^  triton.store %e, %out\[%off\] : .*$}}
triton.kernel @k0 pointwise (%0: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [(D*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [D, N] reason "exp" {
  %block = tile.constant 1024 : i64
  %size = tile.size D*N : i64
  %pid = tile.program_id 0 : i64
  %start = tile.binary mul %pid, %block : (i64, i64) -> i64
  %lanes = tile.range "BLOCK" : !triton.tensor<[1024], i64>
  %off = tile.binary add %start, %lanes : (i64, !triton.tensor<[1024], i64>) -> !triton.tensor<[1024], i64>
  %in = tile.cmp lt %off, %size : (!triton.tensor<[1024], i64>, i64) -> !triton.tensor<[1024], i1>
  %v = triton.load %0[%off] mask %in : !triton.ptr<f32>[!triton.tensor<[1024], i64>] mask !triton.tensor<[1024], i1> -> !triton.tensor<[1024], f32>
  %e = tile.unary exp %v : !triton.tensor<[1024], f32>
  // expected-error@+1 {{triton.store writes out of bounds of %out of @k0 (%y, operand 1}}
  triton.store %e, %out[%off] : !triton.tensor<[1024], f32>, !triton.ptr<f32>[!triton.tensor<[1024], i64>]
}
func.func @f(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}

// -----

// A `lt` bound turned into `le` (loop level): the row's last lane reads
// column D.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 13]]:12: error: loop.read reads out of bounds of %x: !graph.tensor<[N, D], f32>: with D = 1, N = 1, program id [0], %j = 0, lane [1] reads index [0, 1], outside the shape [1, 1] (--check-bounds)
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D] reason "rows" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%t: !graph.tensor<[N, D], f32>):
    %zero = tile.constant 0 : i64
    %d = tile.size D : i64
    %step = tile.constant 1024 : i64
    %row = tile.program_id 0 : i64
    scf.for %j = %zero to %d step %step : i64 {
      %lanes = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col = tile.binary add %j, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %in = tile.cmp le %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      // expected-error@+1 {{loop.read reads out of bounds of %x}}
      %v = loop.read %t[%row, %col] mask %in : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      loop.write %v to 0[%row, %col] mask %in : !loop.tile<[1024], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
    }
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// -----

// Swapped index operands (loop level): row and column exchanged.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 13]]:12: error: loop.read reads out of bounds of %x: !graph.tensor<[N, D], f32>: with D = 1, N = 2, program id [1], %j = 0, lane [0] reads index [0, 1], outside the shape [2, 1] (--check-bounds)
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D] reason "rows" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%t: !graph.tensor<[N, D], f32>):
    %zero = tile.constant 0 : i64
    %d = tile.size D : i64
    %step = tile.constant 1024 : i64
    %row = tile.program_id 0 : i64
    scf.for %j = %zero to %d step %step : i64 {
      %lanes = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col = tile.binary add %j, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %in = tile.cmp lt %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      // expected-error@+1 {{loop.read reads out of bounds of %x}}
      %v = loop.read %t[%col, %row] mask %in : !graph.tensor<[N, D], f32>[!loop.tile<[1024], i64>, i64] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      loop.write %v to 0[%row, %col] mask %in : !loop.tile<[1024], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
    }
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// -----

// A grid axis one too large (memory level): program N reads row N.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 6]]:8: error: memory.load reads out of bounds of %x: !memory.buffer<[N], [1], f32>: with N = 1, program id [1], lane [0] reads offset 1, outside [0, 1) (--check-bounds)
memory.kernel @k0 pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N + 1] tiles {BLOCK = 1} symbols [N] reason "one per program" {
  %pid = tile.program_id 0 : i64
  %lane = tile.range "BLOCK" : !loop.tile<[1], i64>
  %off = tile.binary add %pid, %lane : (i64, !loop.tile<[1], i64>) -> !loop.tile<[1], i64>
  // expected-error@+1 {{memory.load reads out of bounds of %x}}
  %v = memory.load %x[%off] : !memory.buffer<[N], [1], f32>[!loop.tile<[1], i64>] -> !loop.tile<[1], f32>
  memory.store %v, %out[%off] : !loop.tile<[1], f32>, !memory.buffer<[N], [1], f32>[!loop.tile<[1], i64>]
}

// -----

// A grid beyond CUDA's limit of 2**31 - 1 programs on axis 0.
// CHECK:      check-bounds-errors.mlir:[[# @LINE + 2]]:1: error: memory.kernel @k0 grid axis 0 has 4294967296 programs, beyond CUDA's limit of 2147483647 on that axis (--check-bounds)
// expected-error@+1 {{grid axis 0 has 4294967296 programs}}
memory.kernel @k0 pointwise (%x: !memory.buffer<[4294967296], [1], f32>) inputs 1 grid [4294967296] tiles {BLOCK = 1} symbols [] reason "too many programs" {
  %pid = tile.program_id 0 : i64
  %v = memory.load %x[%pid] : !memory.buffer<[4294967296], [1], f32>[i64] -> f32
}

// CHECK-NOT: Traceback
