// RUN: irc-opt %s -p canonicalize | filecheck %s
// RUN: irc-opt %s -p canonicalize | irc-opt -p canonicalize | filecheck %s
// RUN: irc-opt %s -p canonicalize --print-debuginfo | filecheck %s --check-prefix=LOC

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

// CHECK-LABEL: func.func @fold_nan_inf()
// CHECK-NEXT:    %nan = graph.constant 0x{{7|f}}fc00000 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %neg = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[N], f32>
// CHECK-NEXT:    %r = graph.constant false -> !graph.tensor<[N], i1>
// CHECK-NEXT:    func.return %nan, %neg, %r
func.func @fold_nan_inf() -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>) {
  %inf = graph.constant 0x7F800000 : f32 -> !graph.tensor<[N], f32>
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N], f32>
  %nan = graph.mul %inf, %zero : !graph.tensor<[N], f32>
  %neg = graph.div %zero, %inf : !graph.tensor<[N], f32>
  %r = graph.cmp eq, %nan, %nan : !graph.tensor<[N], f32>
  func.return %nan, %neg, %r : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[N], i1>
}

// CHECK-LABEL: func.func @fold_int_wraps()
// CHECK-NEXT:    %r = graph.constant -2147483648 : i32 -> !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %r
func.func @fold_int_wraps() -> !graph.tensor<[], i32> {
  %a = graph.constant 2147483647 : i32 -> !graph.tensor<[], i32>
  %b = graph.constant 1 : i32 -> !graph.tensor<[], i32>
  %r = graph.add %a, %b : !graph.tensor<[], i32>
  func.return %r : !graph.tensor<[], i32>
}

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

// CHECK-LABEL: func.func @fold_dense()
// CHECK-NEXT:    %r = graph.constant dense<[-1.000000e+00, -2.000000e+00, 2.000000e+00]> : tensor<3xf32> -> !graph.tensor<[3], f32>
// CHECK-NEXT:    func.return %r
func.func @fold_dense() -> !graph.tensor<[3], f32> {
  %a = graph.constant dense<[1.0, -0.0, 4.0]> : tensor<3xf32> -> !graph.tensor<[3], f32>
  %b = graph.constant 2.0 : f32 -> !graph.tensor<[3], f32>
  %r = graph.sub %a, %b : !graph.tensor<[3], f32>
  func.return %r : !graph.tensor<[3], f32>
}

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

// CHECK-LABEL: func.func @dense_uniform_is_splat(
// CHECK-NEXT:    func.return %x
func.func @dense_uniform_is_splat(%x: !graph.tensor<[2], f32>) -> !graph.tensor<[2], f32> {
  %one = graph.constant dense<[1.0, 1.0]> : tensor<2xf32> -> !graph.tensor<[2], f32>
  %r = graph.mul %x, %one : !graph.tensor<[2], f32>
  func.return %r : !graph.tensor<[2], f32>
}

// Left to run time: integer division by zero, NaN cast to int, int ** -1.
// The composites (rsqrt here) fold with the reference interpreter's rounding.
// CHECK-LABEL: func.func @no_fold(
// CHECK:         %q = graph.floordiv %seven, %zero
// CHECK-NEXT:    %c = graph.cast %nan
// CHECK-NEXT:    %p = graph.pow %seven, %minus
// CHECK-NEXT:    %s = graph.constant 0.707106769 : f32
func.func @no_fold(%x: !graph.tensor<[], f32>) -> (!graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], f32>) {
  %seven = graph.constant 7 : i32 -> !graph.tensor<[], i32>
  %zero = graph.constant 0 : i32 -> !graph.tensor<[], i32>
  %minus = graph.constant -1 : i32 -> !graph.tensor<[], i32>
  %nan = graph.constant 0x7FC00000 : f32 -> !graph.tensor<[], f32>
  %q = graph.floordiv %seven, %zero : !graph.tensor<[], i32>
  %c = graph.cast %nan : !graph.tensor<[], f32> -> !graph.tensor<[], i32>
  %p = graph.pow %seven, %minus : !graph.tensor<[], i32>
  %two = graph.constant 2.0 : f32 -> !graph.tensor<[], f32>
  %s = graph.rsqrt %two : !graph.tensor<[], f32>
  func.return %q, %c, %p, %s : !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], i32>, !graph.tensor<[], f32>
}

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

// CHECK-LABEL: func.func @sub_neg_zero_stays(
// CHECK-NEXT:    %nz = graph.constant -0.000000e+00 : f32
// CHECK-NEXT:    %r = graph.sub %x, %nz
func.func @sub_neg_zero_stays(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %nz = graph.constant -0.0 : f32 -> !graph.tensor<[N], f32>
  %r = graph.sub %x, %nz : !graph.tensor<[N], f32>
  func.return %r : !graph.tensor<[N], f32>
}

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

// CHECK-LABEL: func.func @shapes_of_splat()
// CHECK-NEXT:    %r = graph.constant 2.500000e+00 : f32 -> !graph.tensor<[M*N - 1], f32>
// CHECK-NEXT:    func.return %r
func.func @shapes_of_splat() -> !graph.tensor<[M * N - 1], f32> {
  %c = graph.constant 2.5 : f32 -> !graph.tensor<[1, M], f32>
  %a = graph.broadcast %c : !graph.tensor<[1, M], f32> -> !graph.tensor<[N, M], f32>
  %b = graph.transpose %a [1, 0] : !graph.tensor<[N, M], f32> -> !graph.tensor<[M, N], f32>
  %d = graph.reshape %b : !graph.tensor<[M, N], f32> -> !graph.tensor<[M * N], f32>
  %r = graph.slice %d [1] [1] : !graph.tensor<[M * N], f32> -> !graph.tensor<[M * N - 1], f32>
  func.return %r : !graph.tensor<[M * N - 1], f32>
}

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

// Sources.

// CHECK-LABEL: func.func @sources()
// CHECK-NEXT:    %a = graph.constant 0 : i64 -> !graph.tensor<[1, N], i64>
// CHECK-NEXT:    %b = graph.constant 4.000000e+00 : f32 -> !graph.tensor<[], f32>
// CHECK-NEXT:    %c = graph.dim N : !graph.tensor<[], i32>
// CHECK-NEXT:    func.return %a, %b, %c :
func.func @sources() -> (!graph.tensor<[1, N], i64>, !graph.tensor<[], f32>, !graph.tensor<[], i32>) {
  %a = graph.iota [0] : !graph.tensor<[1, N], i64>
  %b = graph.dim 4 : !graph.tensor<[], f32>
  %c = graph.dim N : !graph.tensor<[], i32>
  func.return %a, %b, %c : !graph.tensor<[1, N], i64>, !graph.tensor<[], f32>, !graph.tensor<[], i32>
}

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
