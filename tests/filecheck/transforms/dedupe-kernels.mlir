// RUN: irc-opt %s -p dedupe-kernels | filecheck %s
// RUN: irc-opt %s -p dedupe-kernels | irc-opt -p dedupe-kernels | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton,dedupe-kernels | filecheck %s --check-prefix=TRITON

// dedupe-kernels: @k1 computes what @k0 does (another name, reason and SSA
// names, the same body, grid, tiles and symbols): its launch becomes one of
// @k0, which says so in its reason, and @k1 goes. @k2 (tanh) and @k3 (exp in
// blocks of 512) compute something else and stay. On triton kernels alike.

// CHECK:      memory.kernel @k0 pointwise
// CHECK-SAME:   reason "exp of x; launched also in place of k1 (the same computation)"
// CHECK-NOT:  memory.kernel @k1
// CHECK:      memory.kernel @k2 pointwise
// CHECK:      memory.kernel @k3 pointwise
// CHECK:      func.func @main
// CHECK:        memory.launch @k0(%x, %0)
// CHECK:        memory.launch @k0(%y, %1)
// CHECK:        memory.launch @k2(%x, %2)
// CHECK:        memory.launch @k3(%x, %3)

// TRITON:     triton.kernel @k0 pointwise
// TRITON-NOT: triton.kernel @k1
// TRITON:     triton.kernel @k2 pointwise
// TRITON:     triton.kernel @k3 pointwise
// TRITON:       memory.launch @k0(%x, %0)
// TRITON:       memory.launch @k0(%y, %1)

builtin.module {
  memory.kernel @k0 pointwise (%0: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [(4*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N] reason "exp of x" {
    %1 = tile.constant 1024 : i64
    %2 = tile.size 4*N : i64
    %3 = tile.program_id 0 : i64
    %4 = tile.binary mul %3, %1 : (i64, i64) -> i64
    %5 = tile.range "BLOCK" : !loop.tile<[1024], i64>
    %6 = tile.binary add %4, %5 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
    %7 = tile.cmp lt %6, %2 : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
    %8 = memory.load %0[%6] mask %7 : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
    %9 = tile.unary exp %8 : !loop.tile<[1024], f32>
    memory.store %9, %out[%6] mask %7 : !loop.tile<[1024], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
  }
  memory.kernel @k1 pointwise (%in: !memory.buffer<[N, 4], [4, 1], f32>, %result: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [(4*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N] reason "exp of y" {
    %block = tile.constant 1024 : i64
    %size = tile.size 4*N : i64
    %pid = tile.program_id 0 : i64
    %start = tile.binary mul %pid, %block : (i64, i64) -> i64
    %lanes = tile.range "BLOCK" : !loop.tile<[1024], i64>
    %offsets = tile.binary add %start, %lanes : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
    %mask = tile.cmp lt %offsets, %size : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
    %value = memory.load %in[%offsets] mask %mask : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
    %exp = tile.unary exp %value : !loop.tile<[1024], f32>
    memory.store %exp, %result[%offsets] mask %mask : !loop.tile<[1024], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
  }
  memory.kernel @k2 pointwise (%0: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [(4*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N] reason "tanh of x" {
    %1 = tile.constant 1024 : i64
    %2 = tile.size 4*N : i64
    %3 = tile.program_id 0 : i64
    %4 = tile.binary mul %3, %1 : (i64, i64) -> i64
    %5 = tile.range "BLOCK" : !loop.tile<[1024], i64>
    %6 = tile.binary add %4, %5 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
    %7 = tile.cmp lt %6, %2 : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
    %8 = memory.load %0[%6] mask %7 : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
    %9 = tile.unary tanh %8 : !loop.tile<[1024], f32>
    memory.store %9, %out[%6] mask %7 : !loop.tile<[1024], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
  }
  memory.kernel @k3 pointwise (%0: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [(4*N + 511) floordiv 512] tiles {BLOCK = 512} symbols [N] reason "exp of x in blocks of 512" {
    %1 = tile.constant 512 : i64
    %2 = tile.size 4*N : i64
    %3 = tile.program_id 0 : i64
    %4 = tile.binary mul %3, %1 : (i64, i64) -> i64
    %5 = tile.range "BLOCK" : !loop.tile<[512], i64>
    %6 = tile.binary add %4, %5 : (i64, !loop.tile<[512], i64>) -> !loop.tile<[512], i64>
    %7 = tile.cmp lt %6, %2 : (!loop.tile<[512], i64>, i64) -> !loop.tile<[512], i1>
    %8 = memory.load %0[%6] mask %7 : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[512], i64>] mask !loop.tile<[512], i1> -> !loop.tile<[512], f32>
    %9 = tile.unary exp %8 : !loop.tile<[512], f32>
    memory.store %9, %out[%6] mask %7 : !loop.tile<[512], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[512], i64>] mask !loop.tile<[512], i1>
  }
  func.func @main(%x: !memory.buffer<[N, 4], [4, 1], f32>, %y: !memory.buffer<[N, 4], [4, 1], f32>) -> (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>) {
    %0 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%x, %0) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %1 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%y, %1) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %2 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k2(%x, %2) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %3 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k3(%x, %3) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    func.return %0, %1, %2, %3 : !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>
  }
}
