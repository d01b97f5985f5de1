// The memory dialect's verifiers and type syntax reject bad IR with a message
// that says what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

// The buffer type.

// expected-error@+1 {{memory.buffer has 2 dims but 1 strides; give one stride per dim}}
func.func @stride_count(%x: !memory.buffer<[N, D], [1], f32>) {
  func.return
}

// -----

// expected-error@+1 {{unsupported element type i8 in memory.buffer; supported: i1, i32, i64, f16, bf16, f32, f64}}
func.func @element_type(%x: !memory.buffer<[N], [1], i8>) {
  func.return
}

// -----

// expected-error@+1 {{stride -1 of memory.buffer is negative}}
func.func @negative_stride(%x: !memory.buffer<[N], [-1], f32>) {
  func.return
}

// -----

// expected-error@+1 {{'[' expected}}
func.func @missing_strides(%x: !memory.buffer<[N], f32>) {
  func.return
}

// -----

// Kernels.

// expected-error@+1 {{unknown kernel kind 'scan'; expected one of pointwise, reduction, matmul, attention}}
memory.kernel @k scan (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
}

// -----

// expected-error@+1 {{memory.kernel declares 2 inputs but has only 1 arguments}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 2 grid [N] tiles {} symbols [] reason "" {
}

// -----

// expected-error@+1 {{memory.kernel argument 1 has type i64; kernel arguments are !memory.buffer values}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>, %n: i64) inputs 1 grid [N] tiles {} symbols [] reason "" {
}

// -----

// expected-error@+1 {{a memory.kernel grid has 1 to 3 axes}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [1, 1, 1, 1] tiles {} symbols [] reason "" {
}

// -----

// expected-error@+1 {{tile B = 48 is not a power of two}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 48} symbols [] reason "" {
}

// -----

// expected-error@+1 {{tile.size uses ['D'], not among the kernel's symbols}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %d = tile.size D : i64
}

// -----

// expected-error@+1 {{tile.range names unknown tile 'C'}}
memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 64} symbols [] reason "" {
  %r = tile.range "C" : !loop.tile<[64], i64>
}

// -----

func.func @nested() {
  // expected-error@+1 {{'memory.kernel' expects parent op 'builtin.module'}}
  memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
  }
  func.return
}

// -----

// Loads and stores.

func.func @load_outside(%x: !memory.buffer<[N], [1], f32>, %i: i64) {
  // expected-error@+1 {{memory.load must be inside a memory.kernel}}
  %v = memory.load %x[%i] : !memory.buffer<[N], [1], f32>[i64] -> f32
  func.return
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
  %i = tile.constant 1.0 : f32
  // expected-error@+1 {{memory.load offset must be an integer (i32 or i64) scalar or tile, not f32}}
  %v = memory.load %x[%i] : !memory.buffer<[N], [1], f32>[f32] -> f32
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 4} symbols [] reason "" {
  %r = tile.range "B" : !loop.tile<[4], i64>
  // expected-error@+1 {{memory.load mask must be i1, not i64}}
  %v = memory.load %x[%r] mask %r : !memory.buffer<[N], [1], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i64> -> !loop.tile<[4], f32>
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 4} symbols [] reason "" {
  %r = tile.range "B" : !loop.tile<[4], i64>
  // expected-error@+1 {{memory.load yields !loop.tile<[4], f32> (the buffer's elements at the broadcast shape of offset and mask), not !loop.tile<[4], f64>}}
  %v = memory.load %x[%r] : !memory.buffer<[N], [1], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f64>
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {B = 4, C = 8} symbols [] reason "" {
  %r = tile.range "B" : !loop.tile<[4], i64>
  %c = tile.range "C" : !loop.tile<[8], i64>
  %m = tile.cmp lt %c, %c : (!loop.tile<[8], i64>, !loop.tile<[8], i64>) -> !loop.tile<[8], i1>
  // expected-error@+1 {{memory.load: tile shapes [4], [8] do not broadcast}}
  %v = memory.load %x[%r] mask %m : !memory.buffer<[N], [1], f32>[!loop.tile<[4], i64>] mask !loop.tile<[8], i1> -> !loop.tile<[4], f32>
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], i32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
  %i = tile.program_id 0 : i64
  %v = memory.load %x[%i] : !memory.buffer<[N], [1], f32>[i64] -> f32
  // expected-error@+1 {{memory.store of f32 values into a buffer of i32}}
  memory.store %v, %out[%i] : f32, !memory.buffer<[N], [1], i32>[i64]
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
  %i = tile.program_id 0 : i64
  %v = memory.load %x[%i] : !memory.buffer<[N], [1], f32>[i64] -> f32
  // expected-error@+1 {{memory.store to argument 0 of @k, one of its 1 inputs; kernels write only their output arguments}}
  memory.store %v, %x[%i] : f32, !memory.buffer<[N], [1], f32>[i64]
}

// -----

// Host ops.

func.func @reuse_type(%x: !memory.buffer<[N], [1], f32>) {
  %t = memory.alloc : !memory.buffer<[N], [1], f32>
  // expected-error@+1 {{memory.reuse keeps the element type: a buffer of f32 cannot become one of i32}}
  %u = memory.reuse %t : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N], [1], i32>
  func.return
}

// -----

func.func @reuse_size(%x: !memory.buffer<[N], [1], f32>) {
  %t = memory.alloc : !memory.buffer<[N], [1], f32>
  // expected-error@+1 {{memory.reuse needs provably equal element counts: the source has N, the result 2*N (a sym.guard stating their equality would prove it)}}
  %u = memory.reuse %t : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N, 2], [2, 1], f32>
  func.return
}

// -----

func.func @constant_shape() {
  // expected-error@+1 {{dense literal of shape [2] does not match the buffer shape [3]}}
  %c = memory.constant dense<[1.0, 2.0]> : tensor<2xf32> -> !memory.buffer<[3], [1], f32>
  func.return
}

// -----

func.func @constant_type() {
  // expected-error@+1 {{constant of type f32 cannot fill a buffer of f64}}
  %c = memory.constant dense<[1.0, 2.0]> : tensor<2xf32> -> !memory.buffer<[2], [1], f64>
  func.return
}

// -----

func.func @constant_layout() {
  // expected-error@+1 {{memory.constant makes row-major buffers}}
  %c = memory.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32> -> !memory.buffer<[1, 2], [1, 1], f32>
  func.return
}

// -----

// A launch names a kernel of its module.

func.func @launch_missing(%x: !memory.buffer<[N], [1], f32>) {
  // expected-error@+1 {{memory.launch @nowhere launches nothing: the module has no kernel @nowhere}}
  memory.launch @nowhere(%x) : (!memory.buffer<[N], [1], f32>)
  func.return
}

// -----

func.func @launch_function(%x: !memory.buffer<[N], [1], f32>) {
  // expected-error@+1 {{memory.launch @launch_function names a func.func, not a memory.kernel or triton.kernel}}
  memory.launch @launch_function(%x) : (!memory.buffer<[N], [1], f32>)
  func.return
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
}
func.func @launch_count(%x: !memory.buffer<[N], [1], f32>) {
  // expected-error@+1 {{memory.launch @k passes 1 buffers, but the kernel takes 2 (1 inputs, 1 outputs)}}
  memory.launch @k(%x) : (!memory.buffer<[N], [1], f32>)
  func.return
}

// -----

memory.kernel @k pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [] reason "" {
}
func.func @launch_type(%x: !memory.buffer<[N], [1], f32>, %y: !memory.buffer<[M], [1], f32>) {
  // expected-error@+1 {{argument 1 of memory.launch @k has type !memory.buffer<[M], [1], f32>, but the kernel expects !memory.buffer<[N], [1], f32>}}
  memory.launch @k(%x, %y) : (!memory.buffer<[N], [1], f32>, !memory.buffer<[M], [1], f32>)
  func.return
}

// -----

func.func @guard_syntax() {
  // expected-error@+1 {{expected a comparison: ==, <, <=, > or >=}}
  sym.guard N, "no"
  func.return
}
