// lower-memory-to-triton refuses a kernel that holds an op with no triton
// counterpart, naming the op and the kernel, before it rewrites anything:
// nothing is printed, not even the kernels it could lower.

// RUN: not irc-opt %s --split-input-file -p lower-memory-to-triton 2>&1 | filecheck %s

// An arith op: a memory.kernel computes with tile ops.
// CHECK-NOT: triton.kernel
// CHECK: lower-memory-to-triton-invalid.mlir:15:1: error: 'memory.kernel' op: pass 'lower-memory-to-triton' failed: lower-memory-to-triton: arith.constant in memory.kernel @arith has no triton counterpart; a memory.kernel holds tile ops, memory.load/store, scf.for, scf.while and scf.if
memory.kernel @fine pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %row = tile.program_id 0 : i64
  %v = memory.load %x[%row] : !memory.buffer<[N], [1], f32>[i64] -> f32
  memory.store %v, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}
memory.kernel @arith pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %row = tile.program_id 0 : i64
  %one = arith.constant 1 : i64
  %v = memory.load %x[%row] : !memory.buffer<[N], [1], f32>[i64] -> f32
  memory.store %v, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}

// -----

// Nested ops are checked too: scf.if stays, an arith op inside it has no
// triton counterpart.
// CHECK: lower-memory-to-triton-invalid.mlir:28:1: error: 'memory.kernel' op: pass 'lower-memory-to-triton' failed: lower-memory-to-triton: arith.addi in memory.kernel @branch has no triton counterpart
// CHECK-NOT: triton.kernel
memory.kernel @branch pointwise (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {} symbols [N] reason "" {
  %row = tile.program_id 0 : i64
  %n = tile.size N : i64
  %v = memory.load %x[%row] : !memory.buffer<[N], [1], f32>[i64] -> f32
  %inside = tile.cmp lt %row, %n : (i64, i64) -> i1
  scf.if %inside {
    %next = arith.addi %row, %row : i64
    memory.store %v, %out[%next] : f32, !memory.buffer<[N], [1], f32>[i64]
  }
}
