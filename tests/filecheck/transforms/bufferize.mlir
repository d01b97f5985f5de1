// RUN: irc-opt %s --split-input-file -p bufferize | filecheck %s
// RUN: irc-opt %s --split-input-file -p bufferize | irc-opt --split-input-file -p bufferize | filecheck %s
// RUN: irc-opt %s --split-input-file -p bufferize --print-op-generic | irc-opt --split-input-file | filecheck %s

// A row kernel: 2-D offsets `row * 128 + col` (no `* 1`), the stride a
// tile.size hoisted to the top of the kernel; the guard moves to the host;
// the returned output gets a fresh allocation.

// CHECK-LABEL: memory.kernel @k0 reduction (%a: !memory.buffer<[N, 128], [128, 1], f32>, %out: !memory.buffer<[N, 128], [128, 1], f32>) inputs 1 grid [N] tiles {BLOCK_R = 128} symbols [N] reason "one row per program" {
// CHECK-NEXT:    %[[STRIDE:.*]] = tile.size 128 : i64
// CHECK-NEXT:    %row = tile.program_id 0 : i64
// CHECK-NEXT:    %r = tile.range "BLOCK_R" : !loop.tile<[128], i64>
// CHECK-NEXT:    %c128 = tile.size 128 : i64
// CHECK-NEXT:    %m = tile.cmp lt %r, %c128
// CHECK-NEXT:    %[[ROW:.*]] = tile.binary mul %row, %[[STRIDE]] : (i64, i64) -> i64
// CHECK-NEXT:    %[[OFF:.*]] = tile.binary add %[[ROW]], %r : (i64, !loop.tile<[128], i64>) -> !loop.tile<[128], i64>
// CHECK-NEXT:    %v = memory.load %a[%[[OFF]]] mask %m : !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
// CHECK-NEXT:    %mx = tile.reduce max %v 0
// CHECK-NEXT:    %d = tile.binary sub %v, %mx
// CHECK-NEXT:    memory.store %d, %out[%[[OFF]]] mask %m : !loop.tile<[128], f32>, !memory.buffer<[N, 128], [128, 1], f32>[!loop.tile<[128], i64>] mask !loop.tile<[128], i1>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @rows(%x: !memory.buffer<[N, 128], [128, 1], f32>) -> !memory.buffer<[N, 128], [128, 1], f32> {
// CHECK-NEXT:    sym.guard N <= 1024, "rows fit"
// CHECK-NEXT:    %y = memory.alloc : !memory.buffer<[N, 128], [128, 1], f32>
// CHECK-NEXT:    memory.launch @k0(%x, %y) : (!memory.buffer<[N, 128], [128, 1], f32>, !memory.buffer<[N, 128], [128, 1], f32>)
// CHECK-NEXT:    func.return %y : !memory.buffer<[N, 128], [128, 1], f32>
// CHECK-NEXT:  }
func.func @rows(%x: !graph.tensor<[N, 128], f32>) -> !graph.tensor<[N, 128], f32> {
  sym.guard N <= 1024, "rows fit"
  %y = loop.kernel @k0 reduction (%x) grid [N] tiles {BLOCK_R = 128} symbols [N] reason "one row per program" : (!graph.tensor<[N, 128], f32>) -> (!graph.tensor<[N, 128], f32>) {
  ^bb0(%a: !graph.tensor<[N, 128], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "BLOCK_R" : !loop.tile<[128], i64>
    %c128 = tile.size 128 : i64
    %m = tile.cmp lt %r, %c128 : (!loop.tile<[128], i64>, i64) -> !loop.tile<[128], i1>
    %v = loop.read %a[%row, %r] mask %m : !graph.tensor<[N, 128], f32>[i64, !loop.tile<[128], i64>] mask !loop.tile<[128], i1> -> !loop.tile<[128], f32>
    %mx = tile.reduce max %v 0 : !loop.tile<[128], f32> -> f32
    %d = tile.binary sub %v, %mx : (!loop.tile<[128], f32>, f32) -> !loop.tile<[128], f32>
    loop.write %d to 0[%row, %r] mask %m : !loop.tile<[128], f32>[i64, !loop.tile<[128], i64>] mask !loop.tile<[128], i1>
  }
  func.return %y : !graph.tensor<[N, 128], f32>
}

// -----

// A chain of four kernels over 1-D tensors (offset = the index: no ops).
// %t0 is dead after k1, so %t2 (same element type and size) reuses its
// storage; %t1 dies after k2 and %t2 after k3 with nobody to take them:
// deallocated right there. The returned %y is allocated fresh.

// CHECK-LABEL: memory.kernel @k0 pointwise (%a: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [(N + 63) floordiv 64]
// CHECK-NOT:     tile.size 1 :
// CHECK:         %v = memory.load %a[%i] mask %m : !memory.buffer<[N], [1], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
// CHECK-NEXT:    %e = tile.unary exp %v
// CHECK-NEXT:    memory.store %e, %out[%i] mask %m
// CHECK:       memory.kernel @k1 pointwise
// CHECK:       memory.kernel @k2 pointwise
// CHECK:       memory.kernel @k3 pointwise
// CHECK-LABEL: func.func @chain(%x: !memory.buffer<[N], [1], f32>) -> !memory.buffer<[N], [1], f32> {
// CHECK-NEXT:    %t0 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @k0(%x, %t0)
// CHECK-NEXT:    %t1 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @k1(%t0, %t1)
// CHECK-NEXT:    %t2 = memory.reuse %t0 : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @k2(%t1, %t2)
// CHECK-NEXT:    memory.dealloc %t1 : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    %y = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @k3(%t2, %y) : (!memory.buffer<[N], [1], f32>, !memory.buffer<[N], [1], f32>)
// CHECK-NEXT:    memory.dealloc %t2 : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    func.return %y : !memory.buffer<[N], [1], f32>
func.func @chain(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %t0 = loop.kernel @k0 pointwise (%x) grid [(N + 63) floordiv 64] tiles {B = 64} symbols [N] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[64], i64>
    %c64 = tile.size 64 : i64
    %base = tile.binary mul %p, %c64 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, !loop.tile<[64], i64>) -> !loop.tile<[64], i64>
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i1>
    %v = loop.read %a[%i] mask %m : !graph.tensor<[N], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %e = tile.unary exp %v : !loop.tile<[64], f32>
    loop.write %e to 0[%i] mask %m : !loop.tile<[64], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1>
  }
  %t1 = loop.kernel @k1 pointwise (%t0) grid [(N + 63) floordiv 64] tiles {B = 64} symbols [N] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[64], i64>
    %c64 = tile.size 64 : i64
    %base = tile.binary mul %p, %c64 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, !loop.tile<[64], i64>) -> !loop.tile<[64], i64>
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i1>
    %v = loop.read %a[%i] mask %m : !graph.tensor<[N], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %e = tile.unary neg %v : !loop.tile<[64], f32>
    loop.write %e to 0[%i] mask %m : !loop.tile<[64], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1>
  }
  %t2 = loop.kernel @k2 pointwise (%t1) grid [(N + 63) floordiv 64] tiles {B = 64} symbols [N] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[64], i64>
    %c64 = tile.size 64 : i64
    %base = tile.binary mul %p, %c64 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, !loop.tile<[64], i64>) -> !loop.tile<[64], i64>
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i1>
    %v = loop.read %a[%i] mask %m : !graph.tensor<[N], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %e = tile.unary abs %v : !loop.tile<[64], f32>
    loop.write %e to 0[%i] mask %m : !loop.tile<[64], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1>
  }
  %y = loop.kernel @k3 pointwise (%t2) grid [(N + 63) floordiv 64] tiles {B = 64} symbols [N] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[64], i64>
    %c64 = tile.size 64 : i64
    %base = tile.binary mul %p, %c64 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, !loop.tile<[64], i64>) -> !loop.tile<[64], i64>
    %n = tile.size N : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i1>
    %v = loop.read %a[%i] mask %m : !graph.tensor<[N], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %e = tile.unary sqrt %v : !loop.tile<[64], f32>
    loop.write %e to 0[%i] mask %m : !loop.tile<[64], f32>[!loop.tile<[64], i64>] mask !loop.tile<[64], i1>
  }
  func.return %y : !graph.tensor<[N], f32>
}

// -----

// Symbolic strides in i32: a kernel that reads column 0 of each row. The
// row stride D is a tile.size in the indices' type (the guard keeps the
// offsets within i32: without it they are i64, see
// bufferize-index-width.mlir), and D joins the kernel's symbols (the loop
// kernel needed none).

// CHECK-LABEL: memory.kernel @k0 pointwise (%a: !memory.buffer<[M, D], [D, 1], f32>, %out: !memory.buffer<[M], [1], f32>) inputs 1 grid [M] tiles {} symbols [D] reason "" {
// CHECK-NEXT:    %[[D:.*]] = tile.size D : i32
// CHECK-NEXT:    %row = tile.program_id 0 : i32
// CHECK-NEXT:    %zero = tile.constant 0 : i32
// CHECK-NEXT:    %[[ROW:.*]] = tile.binary mul %row, %[[D]] : (i32, i32) -> i32
// CHECK-NEXT:    %[[OFF:.*]] = tile.binary add %[[ROW]], %zero : (i32, i32) -> i32
// CHECK-NEXT:    %v = memory.load %a[%[[OFF]]] : !memory.buffer<[M, D], [D, 1], f32>[i32] -> f32
// CHECK-NEXT:    memory.store %v, %out[%row] : f32, !memory.buffer<[M], [1], f32>[i32]
// CHECK-NEXT:  }
func.func @first_column(%x: !graph.tensor<[M, D], f32>) -> !graph.tensor<[M], f32> {
  sym.guard M*D <= 1073741823, "offsets fit i32"
  %y = loop.kernel @k0 pointwise (%x) grid [M] tiles {} symbols [] reason "" : (!graph.tensor<[M, D], f32>) -> (!graph.tensor<[M], f32>) {
  ^bb0(%a: !graph.tensor<[M, D], f32>):
    %row = tile.program_id 0 : i32
    %zero = tile.constant 0 : i32
    %v = loop.read %a[%row, %zero] : !graph.tensor<[M, D], f32>[i32, i32] -> f32
    loop.write %v to 0[%row] : f32[i32]
  }
  func.return %y : !graph.tensor<[M], f32>
}

// -----

// A dense constant becomes a memory.constant the kernel reads. Returning an
// argument, a constant, or one value twice returns those buffers as they are.

// CHECK-LABEL: memory.kernel @k0 pointwise (%a: !memory.buffer<[4], [1], f32>, %b: !memory.buffer<[4], [1], f32>, %out: !memory.buffer<[4], [1], f32>) inputs 2
// CHECK:       func.func @returns(%x: !memory.buffer<[4], [1], f32>) -> (!memory.buffer<[4], [1], f32>, !memory.buffer<[4], [1], f32>, !memory.buffer<[4], [1], f32>, !memory.buffer<[4], [1], f32>) {
// CHECK-NEXT:    %c = memory.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> -> !memory.buffer<[4], [1], f32>
// CHECK-NEXT:    %s = memory.alloc : !memory.buffer<[4], [1], f32>
// CHECK-NEXT:    memory.launch @k0(%x, %c, %s)
// CHECK-NEXT:    func.return %s, %s, %x, %c :
func.func @returns(%x: !graph.tensor<[4], f32>) -> (!graph.tensor<[4], f32>, !graph.tensor<[4], f32>, !graph.tensor<[4], f32>, !graph.tensor<[4], f32>) {
  %c = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> -> !graph.tensor<[4], f32>
  %s = loop.kernel @k0 pointwise (%x, %c) grid [1] tiles {B = 4} symbols [] reason "" : (!graph.tensor<[4], f32>, !graph.tensor<[4], f32>) -> (!graph.tensor<[4], f32>) {
  ^bb0(%a: !graph.tensor<[4], f32>, %b: !graph.tensor<[4], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    %u = loop.read %a[%r] : !graph.tensor<[4], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f32>
    %v = loop.read %b[%r] : !graph.tensor<[4], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f32>
    %w = tile.binary add %u, %v : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
    loop.write %w to 0[%r] : !loop.tile<[4], f32>[!loop.tile<[4], i64>]
  }
  func.return %s, %s, %x, %c : !graph.tensor<[4], f32>, !graph.tensor<[4], f32>, !graph.tensor<[4], f32>, !graph.tensor<[4], f32>
}

// -----

// Reuse needs the guards: %c ([M]) takes the storage of %a ([N, 8]) since
// M == 8*N; %b (i32) is dead too but of another element type, so it is
// deallocated. %a is still read by kB when %b is allocated: no reuse there.

// CHECK-LABEL: memory.kernel @kA pointwise
// CHECK-LABEL: memory.kernel @kC pointwise (%in: !memory.buffer<[N, 8], [8, 1], i32>, %out: !memory.buffer<[M], [1], f32>)
// CHECK:         memory.store %f, %out[%i] : !loop.tile<[8], f32>, !memory.buffer<[M], [1], f32>[!loop.tile<[8], i64>]
// CHECK-LABEL: func.func @facts(
// CHECK-NEXT:    sym.guard M == 8*N, "flattened rows"
// CHECK-NEXT:    %a = memory.alloc : !memory.buffer<[N, 8], [8, 1], f32>
// CHECK-NEXT:    memory.launch @kA(%x, %a)
// CHECK-NEXT:    %b = memory.alloc : !memory.buffer<[N, 8], [8, 1], i32>
// CHECK-NEXT:    memory.launch @kB(%a, %b)
// CHECK-NEXT:    %c = memory.reuse %a : !memory.buffer<[N, 8], [8, 1], f32> -> !memory.buffer<[M], [1], f32>
// CHECK-NEXT:    memory.launch @kC(%b, %c)
// CHECK-NEXT:    memory.dealloc %b : !memory.buffer<[N, 8], [8, 1], i32>
// CHECK-NEXT:    %y = memory.alloc : !memory.buffer<[M], [1], f32>
// CHECK-NEXT:    memory.launch @kD(%c, %z, %y)
// CHECK-NEXT:    memory.dealloc %c : !memory.buffer<[M], [1], f32>
// CHECK-NEXT:    func.return %y
func.func @facts(%x: !graph.tensor<[N, 8], f32>, %z: !graph.tensor<[M], f32>) -> !graph.tensor<[M], f32> {
  sym.guard M == 8*N, "flattened rows"
  %a = loop.kernel @kA pointwise (%x) grid [N] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N, 8], f32>) -> (!graph.tensor<[N, 8], f32>) {
  ^bb0(%in: !graph.tensor<[N, 8], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[8], i64>
    %v = loop.read %in[%row, %r] : !graph.tensor<[N, 8], f32>[i64, !loop.tile<[8], i64>] -> !loop.tile<[8], f32>
    %e = tile.unary exp %v : !loop.tile<[8], f32>
    loop.write %e to 0[%row, %r] : !loop.tile<[8], f32>[i64, !loop.tile<[8], i64>]
  }
  %b = loop.kernel @kB pointwise (%a) grid [N] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N, 8], f32>) -> (!graph.tensor<[N, 8], i32>) {
  ^bb0(%in: !graph.tensor<[N, 8], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[8], i64>
    %v = loop.read %in[%row, %r] : !graph.tensor<[N, 8], f32>[i64, !loop.tile<[8], i64>] -> !loop.tile<[8], f32>
    %k = tile.cast %v : !loop.tile<[8], f32> -> !loop.tile<[8], i32>
    loop.write %k to 0[%row, %r] : !loop.tile<[8], i32>[i64, !loop.tile<[8], i64>]
  }
  %c = loop.kernel @kC pointwise (%b) grid [N] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N, 8], i32>) -> (!graph.tensor<[M], f32>) {
  ^bb0(%in: !graph.tensor<[N, 8], i32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[8], i64>
    %v = loop.read %in[%row, %r] : !graph.tensor<[N, 8], i32>[i64, !loop.tile<[8], i64>] -> !loop.tile<[8], i32>
    %f = tile.cast %v : !loop.tile<[8], i32> -> !loop.tile<[8], f32>
    %c8 = tile.size 8 : i64
    %base = tile.binary mul %row, %c8 : (i64, i64) -> i64
    %i = tile.binary add %base, %r : (i64, !loop.tile<[8], i64>) -> !loop.tile<[8], i64>
    loop.write %f to 0[%i] : !loop.tile<[8], f32>[!loop.tile<[8], i64>]
  }
  %y = loop.kernel @kD pointwise (%c, %z) grid [M] tiles {} symbols [] reason "" : (!graph.tensor<[M], f32>, !graph.tensor<[M], f32>) -> (!graph.tensor<[M], f32>) {
  ^bb0(%in: !graph.tensor<[M], f32>, %in2: !graph.tensor<[M], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %in[%p] : !graph.tensor<[M], f32>[i64] -> f32
    %w = loop.read %in2[%p] : !graph.tensor<[M], f32>[i64] -> f32
    %s = tile.binary add %v, %w : (f32, f32) -> f32
    loop.write %s to 0[%p] : f32[i64]
  }
  func.return %y : !graph.tensor<[M], f32>
}

// -----

// Several functions: kernel names are prefixed with the function's and kept
// unique (an existing symbol @f_k0 forces a suffix). An output nobody reads
// is deallocated right after its launch. A rank-0 read is at offset 0.

// CHECK-LABEL: func.func private @f_k0(!memory.buffer<[], [], f32>) -> !memory.buffer<[], [], f32>
// CHECK-NEXT:  memory.kernel @f_k0_1 pointwise (%a: !memory.buffer<[], [], f32>, %out0: !memory.buffer<[], [], f32>, %out1: !memory.buffer<[], [], f32>) inputs 1
// CHECK-NEXT:    %[[ZERO:.*]] = tile.size 0 : i64
// CHECK-NEXT:    %v = memory.load %a[%[[ZERO]]] : !memory.buffer<[], [], f32>[i64] -> f32
// CHECK-NEXT:    %n = tile.unary neg %v : f32
// CHECK-NEXT:    memory.store %v, %out0[%[[ZERO]]] : f32, !memory.buffer<[], [], f32>[i64]
// CHECK-NEXT:    memory.store %n, %out1[%[[ZERO]]] : f32, !memory.buffer<[], [], f32>[i64]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @f(%x: !memory.buffer<[], [], f32>) -> !memory.buffer<[], [], f32> {
// CHECK-NEXT:    %u = memory.alloc : !memory.buffer<[], [], f32>
// CHECK-NEXT:    %w = memory.alloc : !memory.buffer<[], [], f32>
// CHECK-NEXT:    memory.launch @f_k0_1(%x, %u, %w)
// CHECK-NEXT:    memory.dealloc %w : !memory.buffer<[], [], f32>
// CHECK-NEXT:    func.return %u
// CHECK-NEXT:  }
// CHECK-NEXT:  memory.kernel @g_k0 pointwise
// CHECK:       func.func @g(
// CHECK-NEXT:    %u = memory.alloc
// CHECK-NEXT:    memory.launch @g_k0(%x, %u)
func.func private @f_k0(!graph.tensor<[], f32>) -> !graph.tensor<[], f32>

func.func @f(%x: !graph.tensor<[], f32>) -> !graph.tensor<[], f32> {
  %u, %w = loop.kernel @k0 pointwise (%x) grid [1] tiles {} symbols [] reason "" : (!graph.tensor<[], f32>) -> (!graph.tensor<[], f32>, !graph.tensor<[], f32>) {
  ^bb0(%a: !graph.tensor<[], f32>):
    %v = loop.read %a[] : !graph.tensor<[], f32>[] -> f32
    %n = tile.unary neg %v : f32
    loop.write %v to 0[] : f32[]
    loop.write %n to 1[] : f32[]
  }
  func.return %u : !graph.tensor<[], f32>
}

func.func @g(%x: !graph.tensor<[], f32>) -> !graph.tensor<[], f32> {
  %u = loop.kernel @k0 pointwise (%x) grid [1] tiles {} symbols [] reason "" : (!graph.tensor<[], f32>) -> (!graph.tensor<[], f32>) {
  ^bb0(%a: !graph.tensor<[], f32>):
    %v = loop.read %a[] : !graph.tensor<[], f32>[] -> f32
    loop.write %v to 0[] : f32[]
  }
  func.return %u : !graph.tensor<[], f32>
}

// -----

// A looped reduction: the offset of a read inside scf.for is computed in the
// loop body, the stride once at the top of the kernel.

// CHECK-LABEL: memory.kernel @k0 reduction (%a: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 32} symbols [D]
// CHECK-NEXT:    %[[D:.*]] = tile.size D : i64
// CHECK:         scf.for %k = %lb to %ub step %step
// CHECK-NEXT:      %col = tile.binary add %k, %r
// CHECK-NEXT:      %m = tile.cmp lt %col, %ub
// CHECK-NEXT:      %[[ROW:.*]] = tile.binary mul %row, %[[D]] : (i64, i64) -> i64
// CHECK-NEXT:      %[[OFF:.*]] = tile.binary add %[[ROW]], %col : (i64, !loop.tile<[32], i64>) -> !loop.tile<[32], i64>
// CHECK-NEXT:      %v = memory.load %a[%[[OFF]]] mask %m
// CHECK:         %s = tile.reduce sum %acc 0
// CHECK-NEXT:    memory.store %s, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
func.func @row_sums(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N], f32> {
  %y = loop.kernel @k0 reduction (%x) grid [N] tiles {B = 32} symbols [D] reason "" : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N, D], f32>):
    %row = tile.program_id 0 : i64
    %r = tile.range "B" : !loop.tile<[32], i64>
    %lb = tile.size 0 : i64
    %ub = tile.size D : i64
    %step = tile.size 32 : i64
    %zero = tile.constant 0.0 : f32
    %init = tile.splat %zero : f32 -> !loop.tile<[32], f32>
    %acc = scf.for %k = %lb to %ub step %step iter_args(%part = %init) -> (!loop.tile<[32], f32>) : i64 {
      %col = tile.binary add %k, %r : (i64, !loop.tile<[32], i64>) -> !loop.tile<[32], i64>
      %m = tile.cmp lt %col, %ub : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i1>
      %v = loop.read %a[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[32], i64>] mask !loop.tile<[32], i1> -> !loop.tile<[32], f32>
      %next = tile.binary add %part, %v : (!loop.tile<[32], f32>, !loop.tile<[32], f32>) -> !loop.tile<[32], f32>
      scf.yield %next : !loop.tile<[32], f32>
    }
    %s = tile.reduce sum %acc 0 : !loop.tile<[32], f32> -> f32
    loop.write %s to 0[%row] : f32[i64]
  }
  func.return %y : !graph.tensor<[N], f32>
}

// -----
// A dim of extent 1 adds nothing to the offset (its index is 0 on every
// lane that touches memory), unless its index is what gives the access
// its lane shape.

// CHECK-LABEL: memory.kernel @k0 pointwise (%a: !memory.buffer<[1, N], [N, 1], f32>, %b: !memory.buffer<[1], [1], f32>, %out: !memory.buffer<[N], [1], f32>)
// CHECK-NEXT:    %p = tile.program_id 0 : i64
// CHECK-NEXT:    %z = tile.constant 0 : i64
// CHECK-NEXT:    %v = memory.load %a[%p] : !memory.buffer<[1, N], [N, 1], f32>[i64] -> f32
// CHECK-NEXT:    %zt = tile.splat %z : i64 -> !loop.tile<[4], i64>
// CHECK-NEXT:    %w = memory.load %b[%zt] : !memory.buffer<[1], [1], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f32>
func.func @unit_dims(%x: !graph.tensor<[1, N], f32>, %s: !graph.tensor<[1], f32>) -> !graph.tensor<[N], f32> {
  %y = loop.kernel @k0 pointwise (%x, %s) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[1, N], f32>, !graph.tensor<[1], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[1, N], f32>, %b: !graph.tensor<[1], f32>):
    %p = tile.program_id 0 : i64
    %z = tile.constant 0 : i64
    %v = loop.read %a[%z, %p] : !graph.tensor<[1, N], f32>[i64, i64] -> f32
    %zt = tile.splat %z : i64 -> !loop.tile<[4], i64>
    %w = loop.read %b[%zt] : !graph.tensor<[1], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f32>
    %t = tile.reduce sum %w 0 : !loop.tile<[4], f32> -> f32
    %y = tile.binary add %v, %t : (f32, f32) -> f32
    loop.write %y to 0[%p] : f32[i64]
  }
  func.return %y : !graph.tensor<[N], f32>
}

// -----

// Row-major coordinates of one flat index recombine: a pointwise kernel over
// [A, B, C] reads %x at [i floordiv B*C, (i floordiv C) rem B, i rem C],
// whose offset with strides [B*C, C, 1] is %i itself (consecutive lanes,
// which Triton can vectorise), with no index arithmetic. %y broadcasts
// along B: its coordinates [i floordiv B*C, i rem C] are not a complete
// delinearization of %i, so its offset is computed.

// CHECK-LABEL: memory.kernel @k0 pointwise (%a: !memory.buffer<[A, B, C], [B*C, C, 1], f32>, %b: !memory.buffer<[A, 1, C], [C, C, 1], f32>, %out: !memory.buffer<[A, B, C], [B*C, C, 1], f32>)
// CHECK:         %v = memory.load %a[%i] mask %m
// CHECK:         %[[ROW:.*]] = tile.binary mul %i0, %{{.*}}
// CHECK-NEXT:    %[[OFF:.*]] = tile.binary add %[[ROW]], %i2
// CHECK-NEXT:    %w = memory.load %b[%[[OFF]]] mask %m
// CHECK:         memory.store %s, %out[%i] mask %m
func.func @flat(%x: !graph.tensor<[A, B, C], f32>, %y: !graph.tensor<[A, 1, C], f32>) -> !graph.tensor<[A, B, C], f32> {
  %z = loop.kernel @k0 pointwise (%x, %y) grid [(A*B*C + 63) floordiv 64] tiles {BLOCK = 64} symbols [A, B, C] reason "flat" : (!graph.tensor<[A, B, C], f32>, !graph.tensor<[A, 1, C], f32>) -> (!graph.tensor<[A, B, C], f32>) {
  ^bb0(%a: !graph.tensor<[A, B, C], f32>, %b: !graph.tensor<[A, 1, C], f32>):
    %pid = tile.program_id 0 : i64
    %c64 = tile.constant 64 : i64
    %start = tile.binary mul %pid, %c64 : (i64, i64) -> i64
    %r = tile.range "BLOCK" : !loop.tile<[64], i64>
    %i = tile.binary add %start, %r : (i64, !loop.tile<[64], i64>) -> !loop.tile<[64], i64>
    %n = tile.size A*B*C : i64
    %m = tile.cmp lt %i, %n : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i1>
    %bc = tile.size B*C : i64
    %cs = tile.size C : i64
    %bs = tile.size B : i64
    %i0 = tile.binary floordiv %i, %bc : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
    %q = tile.binary floordiv %i, %cs : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
    %i1 = tile.binary rem %q, %bs : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
    %i2 = tile.binary rem %i, %cs : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
    %zero = tile.constant 0 : i64
    %v = loop.read %a[%i0, %i1, %i2] mask %m : !graph.tensor<[A, B, C], f32>[!loop.tile<[64], i64>, !loop.tile<[64], i64>, !loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %w = loop.read %b[%i0, %zero, %i2] mask %m : !graph.tensor<[A, 1, C], f32>[!loop.tile<[64], i64>, i64, !loop.tile<[64], i64>] mask !loop.tile<[64], i1> -> !loop.tile<[64], f32>
    %s = tile.binary add %v, %w : (!loop.tile<[64], f32>, !loop.tile<[64], f32>) -> !loop.tile<[64], f32>
    loop.write %s to 0[%i0, %i1, %i2] mask %m : !loop.tile<[64], f32>[!loop.tile<[64], i64>, !loop.tile<[64], i64>, !loop.tile<[64], i64>] mask !loop.tile<[64], i1>
  }
  func.return %z : !graph.tensor<[A, B, C], f32>
}
