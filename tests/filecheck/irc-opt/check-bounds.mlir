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
  %block = loop.constant 1024 : i64
  %size = loop.size D*N : i64
  %pid = loop.program_id 0 : i64
  %start = loop.binary mul %pid, %block : (i64, i64) -> i64
  %lanes = loop.range "BLOCK" : !loop.tile<[1024], i64>
  %off = loop.binary add %start, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
  %in = loop.cmp lt %off, %size : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
  %v = memory.load %0[%off] mask %in : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
  %e = loop.unary exp %v : !loop.tile<[1024], f32>
  memory.store %e, %out[%off] mask %in : !loop.tile<[1024], f32>, !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
}
func.func @f(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N, D], [D, 1], f32> {
  %y = memory.alloc : !memory.buffer<[N, D], [D, 1], f32>
  memory.launch @k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N, D], [D, 1], f32>)
  func.return %y : !memory.buffer<[N, D], [D, 1], f32>
}
