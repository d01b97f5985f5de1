// lower-memory-to-triton keeps every op of a kernel in its order, dead ones
// included, with its attributes and its location, the scf.for that the type
// conversion rebuilds too (the emitter writes locations as comments).

// RUN: irc-opt %s -p lower-memory-to-triton --print-debuginfo | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton -t triton | filecheck %s --check-prefix=PY

// CHECK:       triton.kernel @k0 reduction (%x: !triton.ptr<f32> loc(unknown), %out: !triton.ptr<f32> loc(unknown), %N: i64 loc(unknown)) inputs 1 grid [1] tiles {BLOCK = 16} symbols [N] reason "x.sum() at model.py:3" {
// CHECK-NEXT:    %zero = tile.constant 0 : i64 loc("model.py":3:1)
// CHECK-NEXT:    %n = tile.size N : i64 loc("model.py":3:2)
// CHECK-NEXT:    %step = tile.constant 16 : i64 loc(unknown)
// CHECK-NEXT:    %dead = tile.constant 2.000000e+00 : f32 {note = "unused"} loc("model.py":3:3)
// CHECK-NEXT:    %r = tile.range "BLOCK" : !triton.tensor<[16], i64> loc(unknown)
// CHECK-NEXT:    %fz = tile.constant 0.000000e+00 : f32 loc(unknown)
// CHECK-NEXT:    %init = tile.splat %fz : f32 -> !triton.tensor<[16], f32> loc(unknown)
// CHECK-NEXT:    %acc = scf.for %k = %zero to %n step %step iter_args(%a = %init) -> (!triton.tensor<[16], f32>) : i64 {
// CHECK-NEXT:      %col = tile.binary add %r, %k : (!triton.tensor<[16], i64>, i64) -> !triton.tensor<[16], i64> loc(unknown)
// CHECK-NEXT:      %m = tile.cmp lt %col, %n : (!triton.tensor<[16], i64>, i64) -> !triton.tensor<[16], i1> loc(unknown)
// CHECK-NEXT:      %v = triton.load %x[%col] mask %m : !triton.ptr<f32>[!triton.tensor<[16], i64>] mask !triton.tensor<[16], i1> -> !triton.tensor<[16], f32> loc("model.py":3:4)
// CHECK-NEXT:      %s = tile.binary add %a, %v : (!triton.tensor<[16], f32>, !triton.tensor<[16], f32>) -> !triton.tensor<[16], f32> loc(unknown)
// CHECK-NEXT:      scf.yield %s : !triton.tensor<[16], f32> loc(unknown)
// CHECK-NEXT:    } {note = "loop"} loc("model.py":4:5)
// CHECK-NEXT:    %t = tile.reduce sum %acc 0 : !triton.tensor<[16], f32> -> f32 loc(unknown)
// CHECK-NEXT:    triton.store %t, %out[%zero] : f32, !triton.ptr<f32>[i64] loc("model.py":5:6)
// CHECK-NEXT:  } loc("model.py":2:1)
memory.kernel @k0 reduction (%x: !memory.buffer<[N], [1], f32>, %out: !memory.buffer<[1], [1], f32>) inputs 1 grid [1] tiles {BLOCK = 16} symbols [N] reason "x.sum() at model.py:3" {
  %zero = tile.constant 0 : i64 loc("model.py":3:1)
  %n = tile.size N : i64 loc("model.py":3:2)
  %step = tile.constant 16 : i64
  %dead = tile.constant 2.000000e+00 : f32 {note = "unused"} loc("model.py":3:3)
  %r = tile.range "BLOCK" : !loop.tile<[16], i64>
  %fz = tile.constant 0.000000e+00 : f32
  %init = tile.splat %fz : f32 -> !loop.tile<[16], f32>
  %acc = scf.for %k = %zero to %n step %step iter_args(%a = %init) -> (!loop.tile<[16], f32>) : i64 {
    %col = tile.binary add %r, %k : (!loop.tile<[16], i64>, i64) -> !loop.tile<[16], i64>
    %m = tile.cmp lt %col, %n : (!loop.tile<[16], i64>, i64) -> !loop.tile<[16], i1>
    %v = memory.load %x[%col] mask %m : !memory.buffer<[N], [1], f32>[!loop.tile<[16], i64>] mask !loop.tile<[16], i1> -> !loop.tile<[16], f32> loc("model.py":3:4)
    %s = tile.binary add %a, %v : (!loop.tile<[16], f32>, !loop.tile<[16], f32>) -> !loop.tile<[16], f32>
    scf.yield %s : !loop.tile<[16], f32>
  } {note = "loop"} loc("model.py":4:5)
  %t = tile.reduce sum %acc 0 : !loop.tile<[16], f32> -> f32
  memory.store %t, %out[%zero] : f32, !memory.buffer<[1], [1], f32>[i64] loc("model.py":5:6)
} loc("model.py":2:1)

// PY:      def kernel_k0(p_x: '*fp32', p_out: '*fp32', s_N, c_BLOCK: tl.constexpr = 16):
// PY:          v_dead = tl.full([], 2.0, tl.float32)  # model.py:3:3
// PY:          for v_k in range(v_zero, v_n, v_step):  # model.py:4:5
// PY:              v_v = tl.load(p_x + v_col, mask=v_m, other=0)  # model.py:3:4
// PY:          tl.store(p_out + v_zero, v_t)  # model.py:5:6
