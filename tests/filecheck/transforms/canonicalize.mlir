// canonicalize on the graph dialect: constant folding, the algebraic
// identities that keep every bit (signed zeros, NaN, integer wrap-around),
// and the rewrites of casts, shape ops, reductions and sources. One function
// per chunk: the sections start with cases combining several patterns, then
// one case per pattern (and per rewrite that must not happen).
//
// tests/test_graph_canonicalization.py also runs every case here before and
// after the pass, bit for bit on inputs holding NaN, infinities, signed zeros
// and integer bounds, and checks that the ops the patterns create keep the
// location of the op they replace. Programs that fail at run time are in
// canonicalize-run-time-errors.mlir (--check-semantics cannot run them).

// RUN: irc-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: irc-opt %s --split-input-file -p canonicalize --check-semantics | filecheck %s
// RUN: irc-opt %s --split-input-file -p canonicalize --print-debuginfo | filecheck %s --check-prefix=LOC

// A second run changes nothing (the output is a fixed point).
// RUN: irc-opt %s --split-input-file -p canonicalize > %t.mlir
// RUN: irc-opt %t.mlir --split-input-file -p canonicalize | diff %t.mlir -

// Constant folding: NumPy in the exact element type, splats and dense literals.

// CHECK-LABEL: func.func @fold_f32_rounding()
// CHECK-NEXT:    %r = graph.constant 3.000000e-01 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    func.return %r
func.func @fold_f32_rounding() -> !graph.tensor<[], f32> {
  %a = graph.constant 0.1 : f32 -> !graph.tensor<[], f32>
  %b = graph.constant 0.2 : f32 -> !graph.tensor<[], f32>
  %r = graph.add %a, %b : !graph.tensor<[], f32>
  func.return %r : !graph.tensor<[], f32>
}

// -----

// 1 + 2**-8 rounds to 1 in bfloat16, and x * 1 is x.
// CHECK-LABEL: func.func @fold_bf16(
// CHECK-NEXT:    func.return %x
func.func @fold_bf16(%x: !graph.tensor<[N], bf16>) -> !graph.tensor<[N], bf16> {
  %a = graph.constant 1.0 : bf16 -> !graph.tensor<[N], bf16>
  %b = graph.constant 0.00390625 : bf16 -> !graph.tensor<[N], bf16>
  %s = graph.add %a, %b : !graph.tensor<[N], bf16>
  %r = graph.mul %x, %s : !graph.tensor<[N], bf16>
  func.return %r : !graph.tensor<[N], bf16>
}

// -----

// CHECK-LABEL: func.func @fold_nan_inf(
// CHECK-NEXT:    %nan = graph.constant 0x{{7|f}}fc00000 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %neg = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.constant false -> !graph.tensor<[N], i1>
// CHECK-NEXT:    func.return %nan, %neg, %r
func.func @fold_nan_inf(%binds_n: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>) {
  %inf = graph.constant 0x7F800000 : f32 -> !graph.tensor<[N], f32>
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %nan = graph.mul %inf, %zero : !graph.tensor<[N], f32>
  %neg = graph.div %zero, %inf : !graph.tensor<[N], f32>
  %r = graph.cmp eq, %nan, %nan : !graph.tensor<[N], f32>
  func.return %nan, %neg, %r : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @fold_int_wraps()
// CHECK-NEXT:    %r = graph.constant -2147483648 : i32 -> !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %r
func.func @fold_int_wraps() -> !graph.tensor<[], i32> {
  %a = graph.constant 2147483647 : i32 -> !graph.tensor<[], i32>
  %b = graph.constant 1 : i32 -> !graph.tensor<[], i32>
  %r = graph.add %a, %b : !graph.tensor<[], i32>
  func.return %r : !graph.tensor<[], i32>
}

// -----

// CHECK-LABEL: func.func @fold_select_cast_cmp()
// CHECK-NEXT:    %r = graph.constant -2 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:    func.return %r
func.func @fold_select_cast_cmp() -> !graph.tensor<[], i64> {
  %a = graph.constant 1.5 : f32 -> !graph.tensor<[], f32>
  %b = graph.constant -2.5 : f32 -> !graph.tensor<[], f32>
  %c = graph.cmp lt, %a, %b : !graph.tensor<[], f32>
  %s = graph.select %c, %a, %b : !graph.tensor<[], i1>, !graph.tensor<[], f32>
  %r = graph.cast %s : !graph.tensor<[], f32> -> !graph.tensor<[], i64>
  func.return %r : !graph.tensor<[], i64>
}

// -----

// CHECK-LABEL: func.func @fold_dense()
// CHECK-NEXT:    %r = graph.constant dense<[-1.000000e+00, -2.000000e+00, 2.000000e+00]> : tensor<3xf32> -> !graph.tensor<[3], f32>
// CHECK-NEXT:    func.return %r
func.func @fold_dense() -> !graph.tensor<[3], f32> {
  %a = graph.constant dense<[1.0, -0.0, 4.0]> : tensor<3xf32> -> !graph.tensor<[3], f32>
  %b = graph.constant 2.0 : f32 -> !graph.tensor<[3], f32>
  %r = graph.sub %a, %b : !graph.tensor<[3], f32>
  func.return %r : !graph.tensor<[3], f32>
}

// -----

// CHECK-LABEL: func.func @fold_dense_shapes()
// CHECK-NEXT:    %r = graph.constant dense<{{\[}}[1, 4, 2, 5, 3, 6], [1, 4, 2, 5, 3, 6]]> : tensor<2x6xi32> -> !graph.tensor<[2, 6], i32>
// CHECK-NEXT:    func.return %r
func.func @fold_dense_shapes() -> !graph.tensor<[2, 6], i32> {
  %a = graph.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32> -> !graph.tensor<[2, 3], i32>
  %t = graph.transpose %a [1, 0] : !graph.tensor<[2, 3], i32> -> !graph.tensor<[3, 2], i32>
  %s = graph.reshape %t : !graph.tensor<[3, 2], i32> -> !graph.tensor<[6], i32>
  %r = graph.broadcast %s : !graph.tensor<[6], i32> -> !graph.tensor<[2, 6], i32>
  func.return %r : !graph.tensor<[2, 6], i32>
}

// -----

// CHECK-LABEL: func.func @dense_uniform_is_splat(
// CHECK-NEXT:    func.return %x
func.func @dense_uniform_is_splat(%x: !graph.tensor<[2], f32>) -> !graph.tensor<[2], f32> {
  %one = graph.constant dense<[1.0, 1.0]> : tensor<2xf32> -> !graph.tensor<[2], f32>
  %r = graph.mul %x, %one : !graph.tensor<[2], f32>
  func.return %r : !graph.tensor<[2], f32>
}

// -----

// CHECK-LABEL: func.func @fold_splat_symbolic(
// CHECK-NEXT:    %n = graph.constant -1.73205078 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.mul %x, %n : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @fold_splat_symbolic(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %a = graph.constant 3.0 : f32 -> !graph.tensor<[N], f32>
  %s = graph.sqrt %a : !graph.tensor<[N], f32>
  %n = graph.neg %s : !graph.tensor<[N], f32>
  %r = graph.mul %n, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @fold_int_div_by_zero_stays(
// CHECK-NEXT:    %a = graph.constant 7 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    %b = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    %q = graph.floordiv %a, %b : !graph.tensor<[N], i32>
// CHECK-NEXT:    %r = graph.add %q, %x : !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @fold_int_div_by_zero_stays(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %a = graph.constant 7 : i32 -> !graph.tensor<[N], i32>
  %b = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %q = graph.floordiv %a, %b : !graph.tensor<[N], i32>
  %r = graph.add %q, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @fold_cmp_select_cast(
// CHECK-NEXT:    %i = graph.constant 1 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    %r = graph.add %x, %i : !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @fold_cmp_select_cast(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %a = graph.constant 1.5 : f32 -> !graph.tensor<[N], f32>
  %b = graph.constant 2.5 : f32 -> !graph.tensor<[N], f32>
  %c = graph.cmp lt, %a, %b : !graph.tensor<[N], f32>
  %s = graph.select %c, %a, %b : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  %i = graph.cast %s : !graph.tensor<[N], f32> -> !graph.tensor<[N], i32>
  %r = graph.add %x, %i : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @fold_nan_cast_to_int_stays(
// CHECK-NEXT:    %a = graph.constant 0x7fc00000 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %r = graph.cast %a : !graph.tensor<[], f32> -> !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[], i32>
func.func @fold_nan_cast_to_int_stays() -> !graph.tensor<[], i32> {
  %a = graph.constant 0x7FC00000 : f32 -> !graph.tensor<[], f32>
  %r = graph.cast %a : !graph.tensor<[], f32> -> !graph.tensor<[], i32>
  func.return %r : !graph.tensor<[], i32>
}

// -----

// xDSL reads a hex literal in a dense list as an integer (2143289344.0),
// not as the bits of a NaN, so the third element is a large finite float.
// CHECK-LABEL: func.func @fold_dense_mul(
// CHECK-NEXT:    %r = graph.constant dense<[2.000000e+00, -0.000000e+00, 4.28657869e+09]> : tensor<3xf32> -> !graph.tensor<[3], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[3], f32>
func.func @fold_dense_mul() -> !graph.tensor<[3], f32> {
  %a = graph.constant dense<[1.0, -0.0, 0x7FC00000]> : tensor<3xf32> -> !graph.tensor<[3], f32>
  %b = graph.constant 2.0 : f32 -> !graph.tensor<[3], f32>
  %r = graph.mul %a, %b : !graph.tensor<[3], f32>
  func.return %r : !graph.tensor<[3], f32>
}

// -----

// CHECK-LABEL: func.func @fold_dense_uniform_to_splat(
// CHECK-NEXT:    func.return %x : !graph.tensor<[3], f32>
func.func @fold_dense_uniform_to_splat(%x: !graph.tensor<[3], f32>) -> !graph.tensor<[3], f32> {
  %a = graph.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf32> -> !graph.tensor<[3], f32>
  %r = graph.mul %x, %a : !graph.tensor<[3], f32>
  func.return %r : !graph.tensor<[3], f32>
}

// -----

// Additive identities and signed zeros.

// x + -0.0 and x - 0.0 are x; x + 0.0 is not (-0.0 + 0.0 is +0.0).
// CHECK-LABEL: func.func @add_sub_zero(
// CHECK-NEXT:    %pz = graph.constant 0.000000e+00 : f32
// CHECK-NEXT:    %d = graph.add %x, %pz
// CHECK-NEXT:    func.return %x, %x, %x, %d, %i, %i :
func.func @add_sub_zero(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>) {
  %pz = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %nz = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %iz = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %a = graph.add %x, %nz : !graph.tensor<[N], f32>
  %b = graph.add %nz, %x : !graph.tensor<[N], f32>
  %c = graph.sub %x, %pz : !graph.tensor<[N], f32>
  %d = graph.add %x, %pz : !graph.tensor<[N], f32>
  %e = graph.add %iz, %i : !graph.tensor<[N], i32>
  %f = graph.sub %i, %iz : !graph.tensor<[N], i32>
  func.return %a, %b, %c, %d, %e, %f : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @sub_neg_zero_stays(
// CHECK-NEXT:    %nz = graph.constant -0.000000e+00 : f32
// CHECK-NEXT:    %r = graph.sub %x, %nz
// CHECK-NEXT:    func.return %r
func.func @sub_neg_zero_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %nz = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.sub %x, %nz : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// -0.0 - x is neg(x); 0.0 - x is not (for x = 0.0); 0 - x on integers is.
// CHECK-LABEL: func.func @negate(
// CHECK-NEXT:    %pz = graph.constant 0.000000e+00 : f32
// CHECK-NEXT:    %a = graph.neg %x
// CHECK-NEXT:    %b = graph.sub %pz, %x
// CHECK-NEXT:    %c = graph.neg %i
// CHECK-NEXT:    func.return %a, %b, %c :
func.func @negate(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>) {
  %nz = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %pz = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %iz = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %a = graph.sub %nz, %x : !graph.tensor<[N], f32>
  %b = graph.sub %pz, %x : !graph.tensor<[N], f32>
  %c = graph.sub %iz, %i : !graph.tensor<[N], i32>
  func.return %a, %b, %c : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>
}

// -----

// x - x is 0 on integers only: inf - inf and NaN - NaN are NaN.
// CHECK-LABEL: func.func @sub_self(
// CHECK-NEXT:    %a = graph.sub %x, %x
// CHECK-NEXT:    %b = graph.constant 0 : i32
// CHECK-NEXT:    func.return %a, %b :
func.func @sub_self(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], i32>) {
  %a = graph.sub %x, %x : !graph.tensor<[N], f32>
  %b = graph.sub %i, %i : !graph.tensor<[N], i32>
  func.return %a, %b : !graph.tensor<[N], f32>, !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @add_neg_zero(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @add_neg_zero(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.add %x, %z : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @add_pos_zero_stays(
// CHECK-NEXT:    %z = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.add %x, %z : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @add_pos_zero_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.add %x, %z : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @zero_add_int(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @zero_add_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %z = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %r = graph.add %z, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @sub_zero(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @sub_zero(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.sub %x, %z : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @neg_zero_sub(
// CHECK-NEXT:    %r = graph.neg %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @neg_zero_sub(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.sub %z, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @pos_zero_sub_stays(
// CHECK-NEXT:    %z = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.sub %z, %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @pos_zero_sub_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.sub %z, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @zero_sub_int(
// CHECK-NEXT:    %r = graph.neg %x : !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @zero_sub_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %z = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %r = graph.sub %z, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @sub_self_int(
// CHECK-NEXT:    %r = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @sub_self_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %r = graph.sub %x, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @sub_self_float_stays(
// CHECK-NEXT:    %r = graph.sub %x, %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @sub_self_float_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.sub %x, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// Multiplicative identities.

// CHECK-LABEL: func.func @mul_div(
// CHECK-NEXT:    %d = graph.neg %x
// CHECK-NEXT:    %e = graph.neg %x
// CHECK-NEXT:    func.return %x, %x, %x, %d, %e :
func.func @mul_div(%x: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %one = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %m1 = graph.constant -1.0 : f32 -> !graph.tensor<[N], f32>
  %a = graph.mul %x, %one : !graph.tensor<[N], f32>
  %b = graph.mul %one, %x : !graph.tensor<[N], f32>
  %c = graph.div %x, %one : !graph.tensor<[N], f32>
  %d = graph.mul %m1, %x : !graph.tensor<[N], f32>
  %e = graph.div %x, %m1 : !graph.tensor<[N], f32>
  func.return %a, %b, %c, %d, %e : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// -----

// x * 0 is 0 on integers only: NaN * 0 and inf * 0 are NaN, -1.0 * 0 is -0.0.
// CHECK-LABEL: func.func @mul_zero(
// CHECK-NEXT:    %z = graph.constant 0.000000e+00 : f32
// CHECK-NEXT:    %iz = graph.constant 0 : i32
// CHECK-NEXT:    %a = graph.mul %x, %z
// CHECK-NEXT:    func.return %a, %iz :
func.func @mul_zero(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], i32>) {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %iz = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %a = graph.mul %x, %z : !graph.tensor<[N], f32>
  %b = graph.mul %i, %iz : !graph.tensor<[N], i32>
  func.return %a, %b : !graph.tensor<[N], f32>, !graph.tensor<[N], i32>
}

// -----

// x // 1 is x on integers; on floats NumPy's inf // 1 is NaN.
// CHECK-LABEL: func.func @int_division(
// CHECK-NEXT:    %fone = graph.constant 1.000000e+00 : f32
// CHECK-NEXT:    %b = graph.constant 0 : i32
// CHECK-NEXT:    %c = graph.floordiv %x, %fone
// CHECK-NEXT:    func.return %i, %b, %c :
func.func @int_division(%i: !graph.tensor<[N], i32>, %x: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], f32>) {
  %one = graph.constant 1 : i32 -> !graph.tensor<[N], i32>
  %fone = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %a = graph.floordiv %i, %one : !graph.tensor<[N], i32>
  %b = graph.rem %i, %one : !graph.tensor<[N], i32>
  %c = graph.floordiv %x, %fone : !graph.tensor<[N], f32>
  func.return %a, %b, %c : !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], f32>
}

// -----

// x ** 1 is x, x ** 0 is 1 (NaN ** 0 too); x ** 2 stays.
// CHECK-LABEL: func.func @pow(
// CHECK-NEXT:    %two = graph.constant 2.000000e+00 : f32
// CHECK-NEXT:    %b = graph.constant 1.000000e+00 : f32
// CHECK-NEXT:    %c = graph.pow %x, %two
// CHECK-NEXT:    func.return %x, %b, %c :
func.func @pow(%x: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %one = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %two = graph.constant 2.0 : f32 -> !graph.tensor<[N], f32>
  %a = graph.pow %x, %one : !graph.tensor<[N], f32>
  %b = graph.pow %x, %zero : !graph.tensor<[N], f32>
  %c = graph.pow %x, %two : !graph.tensor<[N], f32>
  func.return %a, %b, %c : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// -----

// A constant stays on the left of maximum: maximum(-0.0, 0.0) differs from maximum(0.0, -0.0).
// CHECK-LABEL: func.func @max_min(
// CHECK-NEXT:    %z = graph.constant 0.000000e+00 : f32
// CHECK-NEXT:    %c = graph.maximum %z, %x
// CHECK-NEXT:    func.return %x, %x, %c :
func.func @max_min(%x: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %a = graph.maximum %x, %x : !graph.tensor<[N], f32>
  %b = graph.minimum %x, %x : !graph.tensor<[N], f32>
  %c = graph.maximum %z, %x : !graph.tensor<[N], f32>
  func.return %a, %b, %c : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @mul_one(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @mul_one(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.mul %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @one_mul(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @one_mul(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.mul %c, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @mul_zero_float_stays(
// CHECK-NEXT:    %c = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.mul %x, %c : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @mul_zero_float_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.mul %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @mul_zero_int(
// CHECK-NEXT:    %c = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %c : !graph.tensor<[N], i32>
func.func @mul_zero_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %r = graph.mul %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @mul_minus_one(
// CHECK-NEXT:    %r = graph.neg %x : !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @mul_minus_one(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
  %r = graph.mul %c, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @div_one(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @div_one(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.div %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @div_minus_one(
// CHECK-NEXT:    %r = graph.neg %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @div_minus_one(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant -1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.div %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @floordiv_one_int(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @floordiv_one_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant 1 : i32 -> !graph.tensor<[N], i32>
  %r = graph.floordiv %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @floordiv_one_float_stays(
// CHECK-NEXT:    %c = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.floordiv %x, %c : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @floordiv_one_float_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.floordiv %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @rem_minus_one_int(
// CHECK-NEXT:    %r = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @rem_minus_one_int(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
  %r = graph.rem %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @pow_one(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @pow_one(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.pow %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @pow_zero(
// CHECK-NEXT:    %r = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @pow_zero(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.pow %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @pow_two_stays(
// CHECK-NEXT:    %c = graph.constant 2.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.pow %x, %c : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @pow_two_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 2.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.pow %x, %c : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @maximum_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @maximum_same(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.maximum %x, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @minimum_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @minimum_same(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.minimum %x, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @maximum_constant_stays_left(
// CHECK-NEXT:    %c = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.maximum %c, %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @maximum_constant_stays_left(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.maximum %c, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// NumPy's power takes sqrt for a stride-0 exponent of 0.5 ((-inf) ** 0.5
// is NaN there, inf elsewhere): folding the broadcast must not change that.
// tests/test_graph_canonicalization.py runs this case on -inf.
// CHECK-LABEL: func.func @pow_of_broadcast_exponent(
// CHECK-NEXT:    %b = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.pow %x, %b : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @pow_of_broadcast_exponent(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 0.5 : f32 -> !graph.tensor<[], f32>
  %b = graph.broadcast %c : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
  %r = graph.pow %x, %b : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// Bitwise and logical identities (-1 is all ones, true on bool).

// CHECK-LABEL: func.func @bitwise(
// CHECK-NEXT:    %z = graph.constant 0 : i32
// CHECK-NEXT:    %e = graph.constant 0 : i32
// CHECK-NEXT:    %g = graph.not %i
// CHECK-NEXT:    func.return %i, %i, %i, %i, %e, %z, %g :
func.func @bitwise(%i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>) {
  %z = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %ones = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
  %a = graph.and %i, %i : !graph.tensor<[N], i32>
  %b = graph.and %ones, %i : !graph.tensor<[N], i32>
  %c = graph.or %i, %z : !graph.tensor<[N], i32>
  %d = graph.xor %i, %z : !graph.tensor<[N], i32>
  %e = graph.xor %i, %i : !graph.tensor<[N], i32>
  %f = graph.and %i, %z : !graph.tensor<[N], i32>
  %g = graph.xor %i, %ones : !graph.tensor<[N], i32>
  func.return %a, %b, %c, %d, %e, %f, %g : !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>, !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @logical(
// CHECK-NEXT:    %x = graph.not %b
// CHECK-NEXT:    func.return %b, %b, %x :
func.func @logical(%b: !graph.tensor<[N], i1>) -> (!graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>) {
  %t = graph.constant true -> !graph.tensor<[N], i1>
  %f = graph.constant false -> !graph.tensor<[N], i1>
  %a = graph.and %b, %t : !graph.tensor<[N], i1>
  %o = graph.or %f, %b : !graph.tensor<[N], i1>
  %x = graph.xor %t, %b : !graph.tensor<[N], i1>
  func.return %a, %o, %x : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @and_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @and_same(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %r = graph.and %x, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @or_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i1>
func.func @or_same(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], i1> {
  %r = graph.or %x, %x : !graph.tensor<[N], i1>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @xor_same(
// CHECK-NEXT:    %r = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @xor_same(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %r = graph.xor %x, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @and_all_ones(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @and_all_ones(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
  %r = graph.and %c, %x : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @and_true(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i1>
func.func @and_true(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], i1> {
  %c = graph.constant true -> !graph.tensor<[N], i1>
  %r = graph.and %x, %c : !graph.tensor<[N], i1>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @and_zero(
// CHECK-NEXT:    %c = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %c : !graph.tensor<[N], i32>
func.func @and_zero(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %r = graph.and %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @or_false(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i1>
func.func @or_false(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], i1> {
  %c = graph.constant false -> !graph.tensor<[N], i1>
  %r = graph.or %x, %c : !graph.tensor<[N], i1>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @or_all_ones(
// CHECK-NEXT:    %c = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %c : !graph.tensor<[N], i32>
func.func @or_all_ones(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant -1 : i32 -> !graph.tensor<[N], i32>
  %r = graph.or %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @xor_zero(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @xor_zero(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %c = graph.constant 0 : i32 -> !graph.tensor<[N], i32>
  %r = graph.xor %x, %c : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @xor_true(
// CHECK-NEXT:    %r = graph.not %x : !graph.tensor<[N], i1>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i1>
func.func @xor_true(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], i1> {
  %c = graph.constant true -> !graph.tensor<[N], i1>
  %r = graph.xor %c, %x : !graph.tensor<[N], i1>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// Unary ops.

// CHECK-LABEL: func.func @unary(
// CHECK-NEXT:    %an = graph.abs %x
// CHECK-NEXT:    %f = graph.floor %x
// CHECK-NEXT:    func.return %x, %b, %an, %f :
func.func @unary(%x: !graph.tensor<[N], f32>, %b: !graph.tensor<[N], i1>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], i1>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %n = graph.neg %x : !graph.tensor<[N], f32>
  %nn = graph.neg %n : !graph.tensor<[N], f32>
  %c = graph.not %b : !graph.tensor<[N], i1>
  %cc = graph.not %c : !graph.tensor<[N], i1>
  %an = graph.abs %n : !graph.tensor<[N], f32>
  %aan = graph.abs %an : !graph.tensor<[N], f32>
  %f = graph.floor %x : !graph.tensor<[N], f32>
  %ff = graph.floor %f : !graph.tensor<[N], f32>
  func.return %nn, %cc, %aan, %ff : !graph.tensor<[N], f32>, !graph.tensor<[N], i1>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @neg_neg(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i32>
func.func @neg_neg(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %n = graph.neg %x : !graph.tensor<[N], i32>
  %r = graph.neg %n : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @not_not(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], i1>
func.func @not_not(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], i1> {
  %n = graph.not %x : !graph.tensor<[N], i1>
  %r = graph.not %n : !graph.tensor<[N], i1>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @abs_abs(
// CHECK-NEXT:    %a = graph.abs %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %a : !graph.tensor<[N], f32>
func.func @abs_abs(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %a = graph.abs %x : !graph.tensor<[N], f32>
  %r = graph.abs %a : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @abs_neg(
// CHECK-NEXT:    %r = graph.abs %x : !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @abs_neg(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %n = graph.neg %x : !graph.tensor<[N], i32>
  %r = graph.abs %n : !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @floor_floor(
// CHECK-NEXT:    %a = graph.floor %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %a : !graph.tensor<[N], f32>
func.func @floor_floor(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %a = graph.floor %x : !graph.tensor<[N], f32>
  %r = graph.floor %a : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// Comparisons and selects.

// A constant moves right with the mirrored predicate; cmp x, x folds on integers only.
// CHECK-LABEL: func.func @cmp(
// CHECK-NEXT:    %c = graph.constant 5.000000e-01 : f32
// CHECK-NEXT:    %a = graph.cmp gt, %x, %c
// CHECK-NEXT:    %b = graph.constant true
// CHECK-NEXT:    %d = graph.constant false
// CHECK-NEXT:    %e = graph.cmp eq, %x, %x
// CHECK-NEXT:    func.return %a, %b, %d, %e :
func.func @cmp(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>) {
  %c = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
  %a = graph.cmp lt, %c, %x : !graph.tensor<[N], f32>
  %b = graph.cmp le, %i, %i : !graph.tensor<[N], i32>
  %d = graph.cmp ne, %i, %i : !graph.tensor<[N], i32>
  %e = graph.cmp eq, %x, %x : !graph.tensor<[N], f32>
  func.return %a, %b, %d, %e : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @select(
// CHECK-NEXT:    %d = graph.select %c, %y, %x
// CHECK-NEXT:    %g = graph.not %c
// CHECK-NEXT:    func.return %x, %x, %d, %c, %g :
func.func @select(%c: !graph.tensor<[N], i1>, %x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>) {
  %t = graph.constant true -> !graph.tensor<[N], i1>
  %f = graph.constant false -> !graph.tensor<[N], i1>
  %a = graph.select %c, %x, %x : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  %b = graph.select %t, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  %n = graph.not %c : !graph.tensor<[N], i1>
  %d = graph.select %n, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  %e = graph.select %c, %t, %f : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
  %g = graph.select %c, %f, %t : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
  func.return %a, %b, %d, %e, %g : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @cmp_constant_moves_right(
// CHECK-NEXT:    %c = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.cmp gt, %x, %c : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i1>
func.func @cmp_constant_moves_right(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], i1> {
  %c = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
  %r = graph.cmp lt, %c, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @cmp_same_int(
// CHECK-NEXT:    %r0 = graph.constant true -> !graph.tensor<[N], i1>
// CHECK-NEXT:    %r1 = graph.constant false -> !graph.tensor<[N], i1>
// CHECK-NEXT:    func.return %r0, %r1 : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
func.func @cmp_same_int(%x: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], i1>, !graph.tensor<[N], i1>) {
  %r0 = graph.cmp le, %x, %x : !graph.tensor<[N], i32>
  %r1 = graph.cmp ne, %x, %x : !graph.tensor<[N], i32>
  func.return %r0, %r1 : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @cmp_same_float_stays(
// CHECK-NEXT:    %r = graph.cmp eq, %x, %x : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i1>
func.func @cmp_same_float_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], i1> {
  %r = graph.cmp eq, %x, %x : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], i1>
}

// -----

// CHECK-LABEL: func.func @select_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @select_same(%c: !graph.tensor<[N], i1>, %x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.select %c, %x, %x : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @select_constant_condition(
// CHECK-NEXT:    func.return %y : !graph.tensor<[N], f32>
func.func @select_constant_condition(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant false -> !graph.tensor<[N], i1>
  %r = graph.select %c, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @select_not_condition(
// CHECK-NEXT:    %r = graph.select %c, %y, %x : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @select_not_condition(%c: !graph.tensor<[N], i1>, %x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %n = graph.not %c : !graph.tensor<[N], i1>
  %r = graph.select %n, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @select_true_false(
// CHECK-NEXT:    %r1 = graph.not %c : !graph.tensor<[N], i1>
// CHECK-NEXT:    func.return %c, %r1 : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
func.func @select_true_false(%c: !graph.tensor<[N], i1>) -> (!graph.tensor<[N], i1>, !graph.tensor<[N], i1>) {
  %t = graph.constant true -> !graph.tensor<[N], i1>
  %f = graph.constant false -> !graph.tensor<[N], i1>
  %r0 = graph.select %c, %t, %f : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
  %r1 = graph.select %c, %f, %t : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
  func.return %r0, %r1 : !graph.tensor<[N], i1>, !graph.tensor<[N], i1>
}

// -----

// Casts: to the same type, and through a cast that keeps every value.

// Through an exact cast (f32 -> f64, i32 -> i64) the detour goes; through
// a rounding or wrapping one (f32 -> f16) it stays.
// CHECK-LABEL: func.func @casts(
// CHECK-NEXT:    %c = graph.cast %i : !graph.tensor<[N], i32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %h = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f16>
// CHECK-NEXT:    %d = graph.cast %h : !graph.tensor<[N], f16> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %x, %x, %c, %d, %i :
func.func @casts(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[N], i32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>) {
  %a = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  %w = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f64>
  %b = graph.cast %w : !graph.tensor<[N], f64> -> !graph.tensor<[N], f32>
  %l = graph.cast %i : !graph.tensor<[N], i32> -> !graph.tensor<[N], i64>
  %c = graph.cast %l : !graph.tensor<[N], i64> -> !graph.tensor<[N], f32>
  %h = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f16>
  %d = graph.cast %h : !graph.tensor<[N], f16> -> !graph.tensor<[N], f32>
  %n = graph.cast %l : !graph.tensor<[N], i64> -> !graph.tensor<[N], i32>
  func.return %a, %b, %c, %d, %n : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @cast_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], f32>
func.func @cast_same(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @cast_widen_then_convert(
// CHECK-NEXT:    %r = graph.cast %x : !graph.tensor<[N], i32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @cast_widen_then_convert(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], f32> {
  %w = graph.cast %x : !graph.tensor<[N], i32> -> !graph.tensor<[N], i64>
  %r = graph.cast %w : !graph.tensor<[N], i64> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @cast_round_trip_exact(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N], bf16>
func.func @cast_round_trip_exact(%x: !graph.tensor<[N], bf16>) -> !graph.tensor<[N], bf16> {
  %w = graph.cast %x : !graph.tensor<[N], bf16> -> !graph.tensor<[N], f32>
  %r = graph.cast %w : !graph.tensor<[N], f32> -> !graph.tensor<[N], bf16>
  func.return %r : !graph.tensor<[N], bf16>
}

// -----

// CHECK-LABEL: func.func @cast_from_bool(
// CHECK-NEXT:    %r = graph.cast %x : !graph.tensor<[N], i1> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @cast_from_bool(%x: !graph.tensor<[N], i1>) -> !graph.tensor<[N], f32> {
  %w = graph.cast %x : !graph.tensor<[N], i1> -> !graph.tensor<[N], i32>
  %r = graph.cast %w : !graph.tensor<[N], i32> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @cast_narrowing_round_trip_stays(
// CHECK-NEXT:    %w = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f16>
// CHECK-NEXT:    %r = graph.cast %w : !graph.tensor<[N], f16> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @cast_narrowing_round_trip_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %w = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f16>
  %r = graph.cast %w : !graph.tensor<[N], f16> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @cast_int32_to_float32_to_int32_stays(
// CHECK-NEXT:    %w = graph.cast %x : !graph.tensor<[N], i32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.cast %w : !graph.tensor<[N], f32> -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @cast_int32_to_float32_to_int32_stays(%x: !graph.tensor<[N], i32>) -> !graph.tensor<[N], i32> {
  %w = graph.cast %x : !graph.tensor<[N], i32> -> !graph.tensor<[N], f32>
  %r = graph.cast %w : !graph.tensor<[N], f32> -> !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// Shape ops.

// CHECK-LABEL: func.func @transpose(
// CHECK-NEXT:    %c = graph.transpose %x [2, 0, 1] : !graph.tensor<[N, M, 2], f32> -> !graph.tensor<[2, N, M], f32>
// CHECK-NEXT:    func.return %x, %x, %c :
func.func @transpose(%x: !graph.tensor<[N, M, 2], f32>) -> (!graph.tensor<[N, M, 2], f32>, !graph.tensor<[N, M, 2], f32>, !graph.tensor<[2, N, M], f32>) {
  %a = graph.transpose %x [0, 1, 2] : !graph.tensor<[N, M, 2], f32> -> !graph.tensor<[N, M, 2], f32>
  %t = graph.transpose %x [1, 2, 0] : !graph.tensor<[N, M, 2], f32> -> !graph.tensor<[M, 2, N], f32>
  %b = graph.transpose %t [2, 0, 1] : !graph.tensor<[M, 2, N], f32> -> !graph.tensor<[N, M, 2], f32>
  %c = graph.transpose %t [1, 2, 0] : !graph.tensor<[M, 2, N], f32> -> !graph.tensor<[2, N, M], f32>
  func.return %a, %b, %c : !graph.tensor<[N, M, 2], f32>, !graph.tensor<[N, M, 2], f32>, !graph.tensor<[2, N, M], f32>
}

// -----

// CHECK-LABEL: func.func @reshape_broadcast(
// CHECK-NEXT:    %b = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
// CHECK-NEXT:    %d = graph.broadcast %y : !graph.tensor<[1, M], f32> -> !graph.tensor<[3, N, M], f32>
// CHECK-NEXT:    func.return %x, %b, %x, %d :
func.func @reshape_broadcast(%x: !graph.tensor<[N, M], f32>, %y: !graph.tensor<[1, M], f32>) -> (!graph.tensor<[N, M], f32>, !graph.tensor<[M, N], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[3, N, M], f32>) {
  %a = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  %f = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N * M], f32>
  %b = graph.reshape %f : !graph.tensor<[N * M], f32> -> !graph.tensor<[M, N], f32>
  %c = graph.broadcast %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  %y2 = graph.broadcast %y : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %d = graph.broadcast %y2 : !graph.tensor<[N, M], f32> -> !graph.tensor<[3, N, M], f32>
  func.return %a, %b, %c, %d : !graph.tensor<[N, M], f32>, !graph.tensor<[M, N], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[3, N, M], f32>
}

// -----

// CHECK-LABEL: func.func @shapes_of_splat(
// CHECK-NEXT:    %r = graph.constant 2.500000e+00 : f32 -> !graph.tensor<[M*N - 1], f32>
// CHECK-NEXT:    func.return %r
func.func @shapes_of_splat(%binds_n_m: !graph.tensor<[N, M], f32>) -> !graph.tensor<[M * N - 1], f32> {
  %c = graph.constant 2.5 : f32 -> !graph.tensor<[1, M], f32>
  %a = graph.broadcast %c : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %b = graph.transpose %a [1, 0] : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %d = graph.reshape %b : !graph.tensor<[M, N], f32> -> !graph.tensor<[M * N], f32>
  %r = graph.slice %d [1] [1] : !graph.tensor<[M * N], f32> -> !graph.tensor<[M * N - 1], f32>
  func.return %r : !graph.tensor<[M * N - 1], f32>
}

// -----

// CHECK-LABEL: func.func @slice_concat(
// CHECK-NEXT:    %b = graph.slice %x [N - 1, 0] [-1, 1]
// CHECK-NEXT:    %d = graph.concat %x, %x [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, 2*M], f32>
// CHECK-NEXT:    func.return %x, %b, %x, %d, %x :
func.func @slice_concat(%x: !graph.tensor<[N, M], f32>, %e: !graph.tensor<[N, 0], f32>) -> (!graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[N, 2 * M], f32>, !graph.tensor<[N, M], f32>) {
  %a = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  %b = graph.slice %x [N - 1, 0] [-1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  %c = graph.concat %x [1] : (!graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32>
  %d = graph.concat %x, %e, %x [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 0], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, 2 * M], f32>
  %f = graph.concat %e, %x [1] : (!graph.tensor<[N, 0], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32>
  func.return %a, %b, %c, %d, %f : !graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>, !graph.tensor<[N, 2 * M], f32>, !graph.tensor<[N, M], f32>
}

// -----

// One element reduces to itself, except in a float sum (NumPy's sum of [-0.0]
// is +0.0); the max or min of a splat is the splat.
// CHECK-LABEL: func.func @reduce(
// CHECK-NEXT:    %b = graph.reshape %x : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %d = graph.reduce sum %x [1]
// CHECK-NEXT:    %s = graph.constant -0.000000e+00 : f32 -> !graph.tensor<[N, M], f32>
// CHECK-NEXT:    %e = graph.constant -0.000000e+00 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %f = graph.reduce sum %s [0, 1]
// CHECK-NEXT:    func.return %i, %b, %x, %d, %e, %f :
func.func @reduce(%x: !graph.tensor<[N, 1], f32>, %i: !graph.tensor<[N, M], i32>) -> (!graph.tensor<[N, M], i32>, !graph.tensor<[N], f32>, !graph.tensor<[N, 1], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>) {
  %a = graph.reduce sum %i [] : !graph.tensor<[N, M], i32> -> !graph.tensor<[N, M], i32>
  %b = graph.reduce max %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
  %c = graph.reduce prod %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 1], f32>
  %d = graph.reduce sum %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
  %s = graph.constant -0.0 : f32 -> !graph.tensor<[N, M], f32>
  %e = graph.reduce min %s [0, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[], f32>
  %f = graph.reduce sum %s [0, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[], f32>
  func.return %a, %b, %c, %d, %e, %f : !graph.tensor<[N, M], i32>, !graph.tensor<[N], f32>, !graph.tensor<[N, 1], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @transpose_identity(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.transpose %x [0, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_identity(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @transpose_transpose_identity(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %a = graph.transpose %x [1, 0] : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %r = graph.transpose %a [1, 0] : !graph.tensor<[M, N], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @transpose_transpose_composed(
// CHECK-NEXT:    %r = graph.transpose %x [2, 0, 1] : !graph.tensor<[N, M, 2], f32> -> !graph.tensor<[2, N, M], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[2, N, M], f32>
func.func @transpose_transpose_composed(%x: !graph.tensor<[N, M, 2], f32>) -> !graph.tensor<[2, N, M], f32> {
  %a = graph.transpose %x [1, 2, 0] : !graph.tensor<[N, M, 2], f32> -> !graph.tensor<[M, 2, N], f32>
  %r = graph.transpose %a [1, 2, 0] : !graph.tensor<[M, 2, N], f32> -> !graph.tensor<[2, N, M], f32>
  func.return %r : !graph.tensor<[2, N, M], f32>
}

// -----

// CHECK-LABEL: func.func @reshape_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @reshape_same(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-NEXT:    %r = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[M, N], f32>
func.func @reshape_reshape(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[M, N], f32> {
  %a = graph.reshape %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N * M], f32>
  %r = graph.reshape %a : !graph.tensor<[N * M], f32> -> !graph.tensor<[M, N], f32>
  func.return %r : !graph.tensor<[M, N], f32>
}

// -----

// CHECK-LABEL: func.func @broadcast_same(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @broadcast_same(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.broadcast %x : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @broadcast_broadcast(
// CHECK-NEXT:    %r = graph.broadcast %x : !graph.tensor<[1, M], f32> -> !graph.tensor<[3, N, M], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[3, N, M], f32>
func.func @broadcast_broadcast(%x: !graph.tensor<[1, M], f32>, %binds_n: !graph.tensor<[N], f32>) -> !graph.tensor<[3, N, M], f32> {
  %a = graph.broadcast %x : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %r = graph.broadcast %a : !graph.tensor<[N, M], f32> -> !graph.tensor<[3, N, M], f32>
  func.return %r : !graph.tensor<[3, N, M], f32>
}

// -----

// N may be past the end of [M]: the slice stays for run time to check.
// CHECK-LABEL: func.func @slice_of_splat_unproven_bounds_stays(
// CHECK-NEXT:    %c = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[M], f32>
// CHECK-NEXT:    %r = graph.slice %c [N] [1] : !graph.tensor<[M], f32> -> !graph.tensor<[1], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[1], f32>
func.func @slice_of_splat_unproven_bounds_stays(%binds_n_m: !graph.tensor<[N, M], f32>) -> !graph.tensor<[1], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[M], f32>
  %r = graph.slice %c [N] [1] : !graph.tensor<[M], f32> -> !graph.tensor<[1], f32>
  func.return %r : !graph.tensor<[1], f32>
}

// -----

// CHECK-LABEL: func.func @full_slice(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @full_slice(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @insert_covering_destination(
// CHECK-NEXT:    func.return %v : !graph.tensor<[N, M], f32>
func.func @insert_covering_destination(%x: !graph.tensor<[N, M], f32>, %v: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.insert_slice %v into %x [0, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @insert_own_slice(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @insert_own_slice(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %s = graph.slice %x [N - 1, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[1, M], f32>
  %r = graph.insert_slice %s into %x [N - 1, 0] [1, 1] : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @slice_of_insert(
// CHECK-NEXT:    func.return %v : !graph.tensor<[1, M], f32>
func.func @slice_of_insert(%x: !graph.tensor<[N, M], f32>, %v: !graph.tensor<[1, M], f32>) -> !graph.tensor<[1, M], f32> {
  %y = graph.insert_slice %v into %x [N - 1, 0] [1, 1] : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %r = graph.slice %y [N - 1, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[1, M], f32>
  func.return %r : !graph.tensor<[1, M], f32>
}

// -----

// CHECK-LABEL: func.func @slice_of_insert_elsewhere_stays(
// CHECK-NEXT:    %y = graph.insert_slice %v into %x [N - 1, 0] [1, 1]
// CHECK-NEXT:    %r = graph.slice %y [0, 0] [1, 1]
func.func @slice_of_insert_elsewhere_stays(%x: !graph.tensor<[N, M], f32>, %v: !graph.tensor<[1, M], f32>) -> !graph.tensor<[1, M], f32> {
  %y = graph.insert_slice %v into %x [N - 1, 0] [1, 1] : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %r = graph.slice %y [0, 0] [1, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[1, M], f32>
  func.return %r : !graph.tensor<[1, M], f32>
}

// -----

// CHECK-LABEL: func.func @partial_slice_stays(
// CHECK-NEXT:    %r = graph.slice %x [N - 1] [-1] : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @partial_slice_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.slice %x [N - 1] [-1] : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @concat_single(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @concat_single(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.concat %x [1] : (!graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @concat_drops_empty(
// CHECK-NEXT:    %r1 = graph.concat %x, %y [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, 2*M], f32>
// CHECK-NEXT:    func.return %x, %r1 : !graph.tensor<[N, M], f32>, !graph.tensor<[N, 2*M], f32>
func.func @concat_drops_empty(%x: !graph.tensor<[N, M], f32>, %e: !graph.tensor<[N, 0], f32>, %y: !graph.tensor<[N, M], f32>) -> (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 2 * M], f32>) {
  %r0 = graph.concat %x, %e [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 0], f32>) -> !graph.tensor<[N, M], f32>
  %r1 = graph.concat %x, %e, %y [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 0], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, 2 * M], f32>
  func.return %r0, %r1 : !graph.tensor<[N, M], f32>, !graph.tensor<[N, 2 * M], f32>
}

// -----

// CHECK-LABEL: func.func @concat_of_concat(
// CHECK-NEXT:    %a = graph.concat %x, %y [1]
// CHECK-NEXT:    %r = graph.concat %y, %x, %y, %x [1]
// CHECK-NEXT:    %b = graph.concat %a, %a [0]
// CHECK-NEXT:    func.return %r, %b :
func.func @concat_of_concat(%x: !graph.tensor<[N, M], f32>, %y: !graph.tensor<[N, 2], f32>) -> (!graph.tensor<[N, 2 * M + 4], f32>, !graph.tensor<[2 * N, M + 2], f32>) {
  %a = graph.concat %x, %y [1] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, M + 2], f32>
  %r = graph.concat %y, %a, %x [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, M + 2], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, 2 * M + 4], f32>
  %b = graph.concat %a, %a [0] : (!graph.tensor<[N, M + 2], f32>, !graph.tensor<[N, M + 2], f32>) -> !graph.tensor<[2 * N, M + 2], f32>
  func.return %r, %b : !graph.tensor<[N, 2 * M + 4], f32>, !graph.tensor<[2 * N, M + 2], f32>
}

// -----

// The cotangents of two side-by-side slices, each padded with zeros, summed.
// CHECK-LABEL: func.func @add_of_padded_windows(
// CHECK-NEXT:    %z3 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N, 3], f32>
// CHECK-NEXT:    %z2 = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %0 = graph.add %a, %z2 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %1 = graph.add %b, %z3 : !graph.tensor<[N, 3], f32>
// CHECK-NEXT:    %r = graph.concat %0, %1 [1]
// CHECK-NEXT:    func.return %r :
func.func @add_of_padded_windows(%a: !graph.tensor<[N, 2], f32>, %b: !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 5], f32> {
  %z3 = graph.constant 0.0 : f32 -> !graph.tensor<[N, 3], f32>
  %z2 = graph.constant 0.0 : f32 -> !graph.tensor<[N, 2], f32>
  %pa = graph.concat %a, %z3 [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 5], f32>
  %pb = graph.concat %z2, %b [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 5], f32>
  %r = graph.add %pa, %pb : !graph.tensor<[N, 5], f32>
  func.return %r : !graph.tensor<[N, 5], f32>
}

// -----

// Any elementwise op; a splat piece is cut where the other side's pieces
// meet.
// CHECK-LABEL: func.func @mul_of_concats_cuts_splats(
// CHECK-NEXT:    %s = graph.constant -2.000000e+00 : f32 -> !graph.tensor<[3, N], f32>
// CHECK-NEXT:    %0 = graph.constant 3.000000e+00 : f32 -> !graph.tensor<[1, N], f32>
// CHECK-NEXT:    %1 = graph.mul %a, %0 : !graph.tensor<[1, N], f32>
// CHECK-NEXT:    %2 = graph.constant 3.000000e+00 : f32 -> !graph.tensor<[2, N], f32>
// CHECK-NEXT:    %3 = graph.mul %b, %2 : !graph.tensor<[2, N], f32>
// CHECK-NEXT:    %4 = graph.mul %c, %s : !graph.tensor<[3, N], f32>
// CHECK-NEXT:    %r = graph.concat %1, %3, %4 [0]
// CHECK-NEXT:    func.return %r :
func.func @mul_of_concats_cuts_splats(%a: !graph.tensor<[1, N], f32>, %b: !graph.tensor<[2, N], f32>, %c: !graph.tensor<[3, N], f32>) -> !graph.tensor<[6, N], f32> {
  %s = graph.constant -2.0 : f32 -> !graph.tensor<[3, N], f32>
  %l = graph.concat %a, %b, %s [0] : (!graph.tensor<[1, N], f32>, !graph.tensor<[2, N], f32>, !graph.tensor<[3, N], f32>) -> !graph.tensor<[6, N], f32>
  %t = graph.constant 3.0 : f32 -> !graph.tensor<[3, N], f32>
  %r0 = graph.concat %t, %c [0] : (!graph.tensor<[3, N], f32>, !graph.tensor<[3, N], f32>) -> !graph.tensor<[6, N], f32>
  %r = graph.mul %l, %r0 : !graph.tensor<[6, N], f32>
  func.return %r : !graph.tensor<[6, N], f32>
}

// -----

// Not when a piece that is no splat would be cut, nor along another axis,
// nor with symbolic widths.
// CHECK-LABEL: func.func @elementwise_of_concats_kept(
// CHECK-NEXT:    %l = graph.concat %a, %b [1]
// CHECK-NEXT:    %r = graph.concat %c, %d [1]
// CHECK-NEXT:    %s = graph.sub %l, %r
// CHECK-NEXT:    %u = graph.concat %e, %e [0]
// CHECK-NEXT:    %v = graph.add %u, %u
// CHECK-NEXT:    func.return %s, %v :
func.func @elementwise_of_concats_kept(%a: !graph.tensor<[N, 2], f32>, %b: !graph.tensor<[N, 3], f32>, %c: !graph.tensor<[N, 1], f32>, %d: !graph.tensor<[N, 4], f32>, %e: !graph.tensor<[N, M], f32>) -> (!graph.tensor<[N, 5], f32>, !graph.tensor<[2 * N, M], f32>) {
  %l = graph.concat %a, %b [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 5], f32>
  %r = graph.concat %c, %d [1] : (!graph.tensor<[N, 1], f32>, !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 5], f32>
  %s = graph.sub %l, %r : !graph.tensor<[N, 5], f32>
  %u = graph.concat %e, %e [0] : (!graph.tensor<[N, M], f32>, !graph.tensor<[N, M], f32>) -> !graph.tensor<[2 * N, M], f32>
  %v = graph.add %u, %u : !graph.tensor<[2 * N, M], f32>
  func.return %s, %v : !graph.tensor<[N, 5], f32>, !graph.tensor<[2 * N, M], f32>
}

// -----

// Adding +0.0 twice is adding it once (x + 0.0 is +0.0 for x = -0.0, so
// the first stays).
// CHECK-LABEL: func.func @add_zero_twice(
// CHECK-NEXT:    %z = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %a = graph.add %x, %z : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %a :
func.func @add_zero_twice(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %a = graph.add %x, %z : !graph.tensor<[N], f32>
  %b = graph.add %z, %a : !graph.tensor<[N], f32>
  func.return %b : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @reduce_no_axes(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], i32>
func.func @reduce_no_axes(%x: !graph.tensor<[N, M], i32>) -> !graph.tensor<[N, M], i32> {
  %r = graph.reduce sum %x [] : !graph.tensor<[N, M], i32> -> !graph.tensor<[N, M], i32>
  func.return %r : !graph.tensor<[N, M], i32>
}

// -----

// CHECK-LABEL: func.func @reduce_float_sum_no_axes_stays(
// CHECK-NEXT:    %r = graph.reduce sum %x [] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N, M], f32>
func.func @reduce_float_sum_no_axes_stays(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %r = graph.reduce sum %x [] : !graph.tensor<[N, M], f32> -> !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @reduce_max_unit_axis(
// CHECK-NEXT:    %r0 = graph.reshape %x : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r0, %x : !graph.tensor<[N], f32>, !graph.tensor<[N, 1], f32>
func.func @reduce_max_unit_axis(%x: !graph.tensor<[N, 1], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N, 1], f32>) {
  %r0 = graph.reduce max %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
  %r1 = graph.reduce prod %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 1], f32>
  func.return %r0, %r1 : !graph.tensor<[N], f32>, !graph.tensor<[N, 1], f32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum_unit_axis_int(
// CHECK-NEXT:    %r = graph.reshape %x : !graph.tensor<[1, N], i32> -> !graph.tensor<[N], i32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], i32>
func.func @reduce_sum_unit_axis_int(%x: !graph.tensor<[1, N], i32>) -> !graph.tensor<[N], i32> {
  %r = graph.reduce sum %x [0] : !graph.tensor<[1, N], i32> -> !graph.tensor<[N], i32>
  func.return %r : !graph.tensor<[N], i32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum_unit_axis_float_stays(
// CHECK-NEXT:    %r = graph.reduce sum %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @reduce_sum_unit_axis_float_stays(%x: !graph.tensor<[N, 1], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.reduce sum %x [1] : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @reduce_max_of_splat(
// CHECK-NEXT:    func.return %x : !graph.tensor<[N, M], f32>
func.func @reduce_max_of_splat(%x: !graph.tensor<[N, M], f32>) -> !graph.tensor<[N, M], f32> {
  %c = graph.constant -0.0 : f32 -> !graph.tensor<[N, M], f32>
  %m = graph.reduce min %c [0, 1] : !graph.tensor<[N, M], f32> -> !graph.tensor<[], f32>
  %b = graph.broadcast %m : !graph.tensor<[], f32> -> !graph.tensor<[N, M], f32>
  %r = graph.add %x, %b : !graph.tensor<[N, M], f32>
  func.return %r : !graph.tensor<[N, M], f32>
}

// -----

// CHECK-LABEL: func.func @reduce_sum_of_splat_stays(
// CHECK-NEXT:    %c = graph.constant 1.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %s = graph.reduce sum %c [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
// CHECK-NEXT:    %b = graph.broadcast %s : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.mul %x, %b : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N], f32>
func.func @reduce_sum_of_splat_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %c = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
  %s = graph.reduce sum %c [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  %b = graph.broadcast %s : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
  %r = graph.mul %x, %b : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// Sources.

// CHECK-LABEL: func.func @sources(
// CHECK-NEXT:    %a = graph.constant 0 : i64 -> !graph.tensor<[1, N], i64>
// CHECK-NEXT:    %b = graph.constant 4.000000e+00 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %c = graph.dim N : !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %a, %b, %c :
func.func @sources(%binds_n: !graph.tensor<[N], f32>) -> (!graph.tensor<[1, N], i64>, !graph.tensor<[], f32>, !graph.tensor<[], i32>) {
  %a = graph.iota [0] : !graph.tensor<[1, N], i64>
  %b = graph.dim 4 : !graph.tensor<[], f32>
  %c = graph.dim N : !graph.tensor<[], i32>
  func.return %a, %b, %c : !graph.tensor<[1, N], i64>, !graph.tensor<[], f32>, !graph.tensor<[], i32>
}

// -----

// CHECK-LABEL: func.func @iota_unit_axis(
// CHECK-NEXT:    func.return %x : !graph.tensor<[1, N], i64>
func.func @iota_unit_axis(%x: !graph.tensor<[1, N], i64>) -> !graph.tensor<[1, N], i64> {
  %i = graph.iota [0] : !graph.tensor<[1, N], i64>
  %r = graph.add %x, %i : !graph.tensor<[1, N], i64>
  func.return %r : !graph.tensor<[1, N], i64>
}

// -----

// CHECK-LABEL: func.func @dim_constant(
// CHECK-NEXT:    %d = graph.constant 4.000000e+00 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %r = graph.div %x, %d : !graph.tensor<[], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[], f32>
func.func @dim_constant(%x: !graph.tensor<[], f32>) -> !graph.tensor<[], f32> {
  %d = graph.dim 4 : !graph.tensor<[], f32>
  %r = graph.div %x, %d : !graph.tensor<[], f32>
  func.return %r : !graph.tensor<[], f32>
}

// -----

// Locations: an op a pattern creates takes the location of the op it replaces.

// LOC-LABEL: func.func @locations(
// LOC-NEXT:    %y = graph.neg %x : !graph.tensor<[N], f32> loc("model.py":3:7)
// LOC-NEXT:    %b = graph.constant 2.000000e+00 : f32 -> !graph.tensor<[N], f32> loc("model.py":5:9)
// LOC-NEXT:    %z = graph.add %y, %b : !graph.tensor<[N], f32> loc("model.py":6:5)
// LOC-NEXT:    func.return %z : !graph.tensor<[N], f32> loc(unknown)
func.func @locations(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %m = graph.constant -1.0 : f32 -> !graph.tensor<[N], f32> loc("model.py":2:5)
  %y = graph.mul %x, %m : !graph.tensor<[N], f32> loc("model.py":3:7)
  %a = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32> loc("model.py":4:5)
  %b = graph.add %a, %a : !graph.tensor<[N], f32> loc("model.py":5:9)
  %z = graph.add %y, %b : !graph.tensor<[N], f32> loc("model.py":6:5)
  func.return %z : !graph.tensor<[N], f32>
}
