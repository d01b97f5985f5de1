// --check-bounds proves that every load and store of loop, memory and
// triton kernels stays inside its buffer, on the input and after every
// pass: an input in bounds runs through the pipeline as without the flag.

// RUN: irc-opt %s --check-bounds -p lower-memory-to-triton | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton | filecheck %s
// RUN: irc-opt %s --check-bounds | filecheck %s --check-prefix=INPUT

// CHECK:      triton.kernel @k0 pointwise (%0: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64)
// CHECK:        triton.load %0[%off] mask %in
// CHECK:        triton.store %e, %out[%off] mask %in
// CHECK:      memory.launch @k0(%x, %y)

// INPUT: memory.kernel @k0 pointwise

memory.kernel @k0 pointwise (%0: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N, D], [D, 1], f32>) inputs 1 grid [(D*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [D, N] reason "exp" {
  %block = tile.constant 1024 : i64
  %size = tile.size D*N : i64
  %pid = tile.program_id 0 : i64
  %start = tile.binary mul %pid, %block : (i64, i64) -> i64
  %lanes = tile.range "BLOCK" : !loop.tile<[1024], i64>
  %off = tile.binary add %start, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
  %in = tile.cmp lt %off, %size : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
  %v = memory.load %0[%off] mask %in : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
  %e = tile.unary exp %v : !loop.tile<[1024], f32>
  memory.store %e, %out[%off] mask %in : !loop.tile<[1024], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
}
func.func @f(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}
