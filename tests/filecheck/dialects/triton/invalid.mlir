// The triton dialect's verifiers and type syntax reject bad IR with a message
// that says what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{triton.tensor dims must be powers of two (or 1), not 3}}
func.func @odd_block(%x: !triton.tensor<[3], f32>) {
  func.return
}

// -----

// expected-error@+1 {{a triton.tensor holds at most 1048576 elements, not 2097152}}
func.func @huge_block(%x: !triton.tensor<[2048, 1024], f32>) {
  func.return
}

// -----

// expected-error@+1 {{unsupported element type i8 in triton.ptr}}
func.func @pointer(%x: !triton.ptr<i8>) {
  func.return
}

// -----

// expected-error@+1 {{triton.kernel argument 1 has type i64; the arguments before the symbols are !triton.ptr values}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>, %n: i64, %N: i64) inputs 1 grid [N] tiles {} symbols [N] reason "" {
}

// -----

// expected-error@+1 {{triton.kernel argument of symbol N has type f32; symbols are i32 or i64 scalars}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>, %N: f32) inputs 1 grid [N] tiles {} symbols [N] reason "" {
}

// -----

// expected-error@+1 {{triton.kernel declares 2 inputs but has only 1 pointer arguments}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 2 grid [1] tiles {} symbols [] reason "" {
}

// -----

// expected-error@+1 {{tile.size uses ['M'], not among the kernel's symbols}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>, %N: i64) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %m = tile.size M : i64
}

// -----

// expected-error@+1 {{tile.range 'B' must span 64 lanes}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {B = 64} symbols [] reason "" {
  %r = tile.range "B" : !triton.tensor<[32], i64>
}

// -----

// expected-error@+1 {{triton.store to a pointer that is not one of @k's 1 output arguments}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>, %y: !triton.ptr<f32>) inputs 1 grid [1] tiles {} symbols [] reason "" {
  %zero = tile.constant 0 : i64
  %v = tile.constant 1.0 : f32
  triton.store %v, %x[%zero] : f32, !triton.ptr<f32>[i64]
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {} symbols [] reason "" {
  %zero = tile.constant 0 : i64
  // expected-error@+1 {{triton.load yields f32 (the pointee at the broadcast shape of offset and mask), not i64}}
  %v = triton.load %x[%zero] : !triton.ptr<f32>[i64] -> i64
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {} symbols [] reason "" {
  %a = tile.constant 1.0 : f32
  %b = tile.constant 1 : i64
  // expected-error@+1 {{tile.binary operands must have the result's element type}}
  %c = tile.binary add %a, %b : (f32, i64) -> f32
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {} symbols [] reason "" {
  %a = tile.constant 1.0 : f32
  // expected-error@+1 {{unknown elementwise kind 'cube'}}
  %c = tile.unary cube %a : f32
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {B = 16} symbols [] reason "" {
  %r = tile.range "B" : !triton.tensor<[16, 1], i64>
  %a = tile.cast %r : !triton.tensor<[16, 1], i64> -> !triton.tensor<[16, 1], f32>
  // expected-error@+1 {{tile.dot shapes must be [M, K] x [K, N] -> [M, N]}}
  %d = tile.dot %a, %a, %a : (!triton.tensor<[16, 1], f32>, !triton.tensor<[16, 1], f32>, !triton.tensor<[16, 1], f32>) -> !triton.tensor<[16, 1], f32>
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {B = 16} symbols [] reason "" {
  %r = tile.range "B" : !triton.tensor<[16], i64>
  %a = tile.cast %r : !triton.tensor<[16], i64> -> !triton.tensor<[16], f32>
  // expected-error@+1 {{tile.reduce argmax yields integers}}
  %i = tile.reduce argmax %a 0 : !triton.tensor<[16], f32> -> f32
}

// -----

// Triton indexes with i32 or i64.
// expected-error@+1 {{tile.reduce yields i32 or i64}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {B = 16} symbols [] reason "" {
  %r = tile.range "B" : !triton.tensor<[16], i64>
  %a = tile.cast %r : !triton.tensor<[16], i64> -> !triton.tensor<[16], f32>
  %i = tile.reduce argmax %a 0 : !triton.tensor<[16], f32> -> i16
}

// -----

// A triton kernel computes on triton's blocks.
// expected-error@+1 {{tile.range in a triton.kernel yields !loop.tile<[16], i64>; the tiles of this level are triton.tensor}}
triton.kernel @k pointwise (%x: !triton.ptr<f32>) inputs 1 grid [1] tiles {B = 16} symbols [] reason "" {
  %r = tile.range "B" : !loop.tile<[16], i64>
}

// -----

// A launch of a triton.kernel passes one buffer per pointer argument (the
// symbols' arguments are the launcher's), each holding the pointee type.
triton.kernel @k pointwise (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %N: i64) inputs 1 grid [N] tiles {} symbols [N] reason "" {
}
func.func @launch_count(%x: !memory.buffer<[N], [1], f32>) {
  // expected-error@+1 {{memory.launch @k passes 1 buffers, but the kernel takes 2 (1 inputs, 1 outputs)}}
  memory.launch @k(%x) : (!memory.buffer<[N], [1], f32>)
  func.return
}

// -----

triton.kernel @k pointwise (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %N: i64) inputs 1 grid [N] tiles {} symbols [N] reason "" {
}
func.func @launch_element(%x: !memory.buffer<[N], [1], f32>, %y: !memory.buffer<[N], [1], f16>) {
  // expected-error@+1 {{argument 1 of memory.launch @k holds f16, but the kernel's argument 1 holds f32}}
  memory.launch @k(%x, %y) : (!memory.buffer<[N], [1], f32>, !memory.buffer<[N], [1], f16>)
  func.return
}
