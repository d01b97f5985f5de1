// Every graph op and type form, in custom syntax: printed, re-parsed and
// printed again, directly and through the generic form. Shape expressions
// print in their canonical form (e.g. `N * 4 + 1` as `4*N + 1`).

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: irc-opt %s --print-debuginfo | irc-opt --print-debuginfo | filecheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @types(
// CHECK-SAME: %b: !graph.tensor<[N], i1>, %i: !graph.tensor<[N], i32>, %l: !graph.tensor<[N], i64>,
// CHECK-SAME: %h: !graph.tensor<[N], f16>, %bh: !graph.tensor<[N], bf16>, %s: !graph.tensor<[N], f32>, %d: !graph.tensor<[N], f64>,
// CHECK-SAME: %scalar: !graph.tensor<[], f32>, %static: !graph.tensor<[2, 3, 4], f32>, %rows: !graph.tensor<[N, D], f32>,
// CHECK-SAME: %affine: !graph.tensor<[4*N + 1, 2*N - 1], f32>, %blocks: !graph.tensor<[(N + 127) floordiv 128, N mod 16], f32>,
// CHECK-SAME: %ceil: !graph.tensor<[(N + 3) floordiv 4], f32>, %minmax: !graph.tensor<[max(M, N), min(M, N)], f32>,
// CHECK-SAME: %poly: !graph.tensor<[D*N, N*N - 1, B*H], f32>, %names: !graph.tensor<[seq_len, _n2], f32>)
func.func @types(%b: !graph.tensor<[N], i1>, %i: !graph.tensor<[N], i32>, %l: !graph.tensor<[N], i64>,
                 %h: !graph.tensor<[N], f16>, %bh: !graph.tensor<[N], bf16>, %s: !graph.tensor<[N], f32>, %d: !graph.tensor<[N], f64>,
                 %scalar: !graph.tensor<[], f32>, %static: !graph.tensor<[2, 3, 4], f32>, %rows: !graph.tensor<[N, D], f32>,
                 %affine: !graph.tensor<[N * 4 + 1, 2*N-1], f32>, %blocks: !graph.tensor<[(N + 127) floordiv 128, N mod 16], f32>,
                 %ceil: !graph.tensor<[N ceildiv 4], f32>, %minmax: !graph.tensor<[max(N, M), min(N, M)], f32>,
                 %poly: !graph.tensor<[N * D, (N + 1) * (N - 1), B*H], f32>, %names: !graph.tensor<[seq_len, _n2], f32>) {
  func.return
}

// CHECK-LABEL: func.func @unary(
func.func @unary(%x: !graph.tensor<[N, D], f32>, %i: !graph.tensor<[N], i64>, %b: !graph.tensor<[N], i1>) {
  // CHECK-NEXT: %0 = graph.neg %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %1 = graph.neg %i : !graph.tensor<[N], i64>
  // CHECK-NEXT: %2 = graph.abs %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %3 = graph.abs %i : !graph.tensor<[N], i64>
  // CHECK-NEXT: %4 = graph.exp %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %5 = graph.log %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %6 = graph.sqrt %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %7 = graph.rsqrt %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %8 = graph.tanh %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %9 = graph.sigmoid %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %10 = graph.erf %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %11 = graph.sin %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %12 = graph.cos %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %13 = graph.floor %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %14 = graph.not %b : !graph.tensor<[N], i1>
  // CHECK-NEXT: %15 = graph.not %i : !graph.tensor<[N], i64>
  // CHECK-NEXT: %16 = graph.ceil %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %17 = graph.trunc %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %18 = graph.rint %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %19 = graph.log1p %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %20 = graph.expm1 %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %21 = graph.log2 %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %22 = graph.log10 %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %23 = graph.sinh %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %24 = graph.cosh %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %25 = graph.atan %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %26 = graph.asin %x : !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %27 = graph.acos %x : !graph.tensor<[N, D], f32>
  %0 = graph.neg %x : !graph.tensor<[N, D], f32>
  %1 = graph.neg %i : !graph.tensor<[N], i64>
  %2 = graph.abs %x : !graph.tensor<[N, D], f32>
  %3 = graph.abs %i : !graph.tensor<[N], i64>
  %4 = graph.exp %x : !graph.tensor<[N, D], f32>
  %5 = graph.log %x : !graph.tensor<[N, D], f32>
  %6 = graph.sqrt %x : !graph.tensor<[N, D], f32>
  %7 = graph.rsqrt %x : !graph.tensor<[N, D], f32>
  %8 = graph.tanh %x : !graph.tensor<[N, D], f32>
  %9 = graph.sigmoid %x : !graph.tensor<[N, D], f32>
  %10 = graph.erf %x : !graph.tensor<[N, D], f32>
  %11 = graph.sin %x : !graph.tensor<[N, D], f32>
  %12 = graph.cos %x : !graph.tensor<[N, D], f32>
  %13 = graph.floor %x : !graph.tensor<[N, D], f32>
  %14 = graph.not %b : !graph.tensor<[N], i1>
  %15 = graph.not %i : !graph.tensor<[N], i64>
  %16 = graph.ceil %x : !graph.tensor<[N, D], f32>
  %17 = graph.trunc %x : !graph.tensor<[N, D], f32>
  %18 = graph.rint %x : !graph.tensor<[N, D], f32>
  %19 = graph.log1p %x : !graph.tensor<[N, D], f32>
  %20 = graph.expm1 %x : !graph.tensor<[N, D], f32>
  %21 = graph.log2 %x : !graph.tensor<[N, D], f32>
  %22 = graph.log10 %x : !graph.tensor<[N, D], f32>
  %23 = graph.sinh %x : !graph.tensor<[N, D], f32>
  %24 = graph.cosh %x : !graph.tensor<[N, D], f32>
  %25 = graph.atan %x : !graph.tensor<[N, D], f32>
  %26 = graph.asin %x : !graph.tensor<[N, D], f32>
  %27 = graph.acos %x : !graph.tensor<[N, D], f32>
  func.return
}

// CHECK-LABEL: func.func @binary(
func.func @binary(%x: !graph.tensor<[N], f16>, %y: !graph.tensor<[N], f16>, %i: !graph.tensor<[], i32>, %b: !graph.tensor<[N], i1>) {
  // CHECK-NEXT: %0 = graph.add %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %1 = graph.sub %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %2 = graph.mul %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %3 = graph.div %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %4 = graph.floordiv %i, %i : !graph.tensor<[], i32>
  // CHECK-NEXT: %5 = graph.rem %i, %i : !graph.tensor<[], i32>
  // CHECK-NEXT: %6 = graph.pow %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %7 = graph.maximum %x, %y : !graph.tensor<[N], f16>
  // CHECK-NEXT: %8 = graph.minimum %i, %i : !graph.tensor<[], i32>
  // CHECK-NEXT: %9 = graph.and %b, %b : !graph.tensor<[N], i1>
  // CHECK-NEXT: %10 = graph.or %i, %i : !graph.tensor<[], i32>
  // CHECK-NEXT: %11 = graph.xor %b, %b : !graph.tensor<[N], i1>
  // CHECK-NEXT: %12 = graph.atan2 %x, %y : !graph.tensor<[N], f16>
  %0 = graph.add %x, %y : !graph.tensor<[N], f16>
  %1 = graph.sub %x, %y : !graph.tensor<[N], f16>
  %2 = graph.mul %x, %y : !graph.tensor<[N], f16>
  %3 = graph.div %x, %y : !graph.tensor<[N], f16>
  %4 = graph.floordiv %i, %i : !graph.tensor<[], i32>
  %5 = graph.rem %i, %i : !graph.tensor<[], i32>
  %6 = graph.pow %x, %y : !graph.tensor<[N], f16>
  %7 = graph.maximum %x, %y : !graph.tensor<[N], f16>
  %8 = graph.minimum %i, %i : !graph.tensor<[], i32>
  %9 = graph.and %b, %b : !graph.tensor<[N], i1>
  %10 = graph.or %i, %i : !graph.tensor<[], i32>
  %11 = graph.xor %b, %b : !graph.tensor<[N], i1>
  %12 = graph.atan2 %x, %y : !graph.tensor<[N], f16>
  func.return
}

// CHECK-LABEL: func.func @compare_select_cast(
func.func @compare_select_cast(%x: !graph.tensor<[N], bf16>, %y: !graph.tensor<[N], bf16>, %i: !graph.tensor<[N], i64>) {
  // CHECK-NEXT: %0 = graph.cmp eq, %x, %y : !graph.tensor<[N], bf16>
  // CHECK-NEXT: %1 = graph.cmp ne, %x, %y : !graph.tensor<[N], bf16>
  // CHECK-NEXT: %2 = graph.cmp lt, %i, %i : !graph.tensor<[N], i64>
  // CHECK-NEXT: %3 = graph.cmp le, %x, %y : !graph.tensor<[N], bf16>
  // CHECK-NEXT: %4 = graph.cmp gt, %x, %y : !graph.tensor<[N], bf16>
  // CHECK-NEXT: %5 = graph.cmp ge, %x, %y : !graph.tensor<[N], bf16>
  // CHECK-NEXT: %6 = graph.select %0, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], bf16>
  // CHECK-NEXT: %7 = graph.cast %x : !graph.tensor<[N], bf16> -> !graph.tensor<[N], f32>
  // CHECK-NEXT: %8 = graph.cast %i : !graph.tensor<[N], i64> -> !graph.tensor<[N], i1>
  %0 = graph.cmp eq, %x, %y : !graph.tensor<[N], bf16>
  %1 = graph.cmp ne, %x, %y : !graph.tensor<[N], bf16>
  %2 = graph.cmp lt, %i, %i : !graph.tensor<[N], i64>
  %3 = graph.cmp le, %x, %y : !graph.tensor<[N], bf16>
  %4 = graph.cmp gt, %x, %y : !graph.tensor<[N], bf16>
  %5 = graph.cmp ge, %x, %y : !graph.tensor<[N], bf16>
  %6 = graph.select %0, %x, %y : !graph.tensor<[N], i1>, !graph.tensor<[N], bf16>
  %7 = graph.cast %x : !graph.tensor<[N], bf16> -> !graph.tensor<[N], f32>
  %8 = graph.cast %i : !graph.tensor<[N], i64> -> !graph.tensor<[N], i1>
  func.return
}

// CHECK-LABEL: func.func @sources() {
func.func @sources() {
  // CHECK-NEXT: %0 = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %1 = graph.constant -2.000000e+00 : f64 -> !graph.tensor<[], f64>
  // CHECK-NEXT: %2 = graph.constant 1.500000e+00 : f16 -> !graph.tensor<[N], f16>
  // CHECK-NEXT: %3 = graph.constant 1.000000e+00 : bf16 -> !graph.tensor<[N], bf16>
  // CHECK-NEXT: %4 = graph.constant 7 : i32 -> !graph.tensor<[N], i32>
  // CHECK-NEXT: %5 = graph.constant -1 : i64 -> !graph.tensor<[], i64>
  // CHECK-NEXT: %6 = graph.constant true -> !graph.tensor<[N], i1>
  // CHECK-NEXT: %7 = graph.constant dense<[1, 2]> : tensor<2xi64> -> !graph.tensor<[2], i64>
  // CHECK-NEXT: %8 = graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> -> !graph.tensor<[2, 2], f32>
  // CHECK-NEXT: %9 = graph.iota [0] : !graph.tensor<[4*N + 1], i64>
  // CHECK-NEXT: %10 = graph.iota [1] : !graph.tensor<[N, D], i32>
  // CHECK-NEXT: %11 = graph.iota [0] : !graph.tensor<[N], f32>
  // CHECK-NEXT: %12 = graph.dim D*N : !graph.tensor<[], f32>
  // CHECK-NEXT: %13 = graph.dim (N + 127) floordiv 128 : !graph.tensor<[], i64>
  // CHECK-NEXT: %14 = graph.dim 2*max(M, N) : !graph.tensor<[], i32>
  %0 = graph.constant 0.5 : f32 -> !graph.tensor<[N, D], f32>
  %1 = graph.constant -2.0 : f64 -> !graph.tensor<[], f64>
  %2 = graph.constant 1.5 : f16 -> !graph.tensor<[N], f16>
  %3 = graph.constant 1.0 : bf16 -> !graph.tensor<[N], bf16>
  %4 = graph.constant 7 : i32 -> !graph.tensor<[N], i32>
  %5 = graph.constant -1 : i64 -> !graph.tensor<[], i64>
  %6 = graph.constant true -> !graph.tensor<[N], i1>
  %7 = graph.constant dense<[1, 2]> : tensor<2xi64> -> !graph.tensor<[2], i64>
  %8 = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> -> !graph.tensor<[2, 2], f32>
  %9 = graph.iota [0] : !graph.tensor<[N * 4 + 1], i64>
  %10 = graph.iota [1] : !graph.tensor<[N, D], i32>
  %11 = graph.iota [0] : !graph.tensor<[N], f32>
  %12 = graph.dim N * D : !graph.tensor<[], f32>
  %13 = graph.dim (N + 127) floordiv 128 : !graph.tensor<[], i64>
  %14 = graph.dim max(N, M) * 2 : !graph.tensor<[], i32>
  func.return
}

// CHECK-LABEL: func.func @shapes(
func.func @shapes(%x: !graph.tensor<[N, D], f32>, %v: !graph.tensor<[D], f32>, %one: !graph.tensor<[1, D], f32>, %s: !graph.tensor<[], f32>) {
  // CHECK-NEXT: %0 = graph.broadcast %v : !graph.tensor<[D], f32> -> !graph.tensor<[B, N, D], f32>
  // CHECK-NEXT: %1 = graph.broadcast %one : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %2 = graph.broadcast %s : !graph.tensor<[], f32> -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %3 = graph.reshape %x : !graph.tensor<[N, D], f32> -> !graph.tensor<[D*N], f32>
  // CHECK-NEXT: %4 = graph.reshape %s : !graph.tensor<[], f32> -> !graph.tensor<[1, 1], f32>
  // CHECK-NEXT: %5 = graph.reshape %one : !graph.tensor<[1, D], f32> -> !graph.tensor<[D], f32>
  // CHECK-NEXT: %6 = graph.transpose %x [1, 0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D, N], f32>
  %0 = graph.broadcast %v : !graph.tensor<[D], f32> -> !graph.tensor<[B, N, D], f32>
  %1 = graph.broadcast %one : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
  %2 = graph.broadcast %s : !graph.tensor<[], f32> -> !graph.tensor<[N, D], f32>
  %3 = graph.reshape %x : !graph.tensor<[N, D], f32> -> !graph.tensor<[N * D], f32>
  %4 = graph.reshape %s : !graph.tensor<[], f32> -> !graph.tensor<[1, 1], f32>
  %5 = graph.reshape %one : !graph.tensor<[1, D], f32> -> !graph.tensor<[D], f32>
  %6 = graph.transpose %x [1, 0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D, N], f32>
  func.return
}

// CHECK-LABEL: func.func @reductions(
func.func @reductions(%x: !graph.tensor<[B, N, D], f32>, %i: !graph.tensor<[N], i32>) {
  // CHECK-NEXT: %0 = graph.reduce sum %x [2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, N], f32>
  // CHECK-NEXT: %1 = graph.reduce prod %x [0, 2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[N], f32>
  // CHECK-NEXT: %2 = graph.reduce max %x [1] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, 1, D], f32>
  // CHECK-NEXT: %3 = graph.reduce min %i [0] : !graph.tensor<[N], i32> -> !graph.tensor<[], i32>
  // CHECK-NEXT: %4 = graph.reduce sum %x [0, 1, 2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[1, 1, 1], f32>
  // CHECK-NEXT: %5 = graph.argmax %x [2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, N], i64>
  // CHECK-NEXT: %6 = graph.argmax %x [0] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[1, N, D], i64>
  %0 = graph.reduce sum %x [2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, N], f32>
  %1 = graph.reduce prod %x [0, 2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[N], f32>
  %2 = graph.reduce max %x [1] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, 1, D], f32>
  %3 = graph.reduce min %i [0] : !graph.tensor<[N], i32> -> !graph.tensor<[], i32>
  %4 = graph.reduce sum %x [0, 1, 2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[1, 1, 1], f32>
  %5 = graph.argmax %x [2] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[B, N], i64>
  %6 = graph.argmax %x [0] : !graph.tensor<[B, N, D], f32> -> !graph.tensor<[1, N, D], i64>
  func.return
}

// CHECK-LABEL: func.func @indexing(
func.func @indexing(%x: !graph.tensor<[N, D], f32>, %y: !graph.tensor<[M, D], f32>, %idx: !graph.tensor<[K], i64>, %idx2: !graph.tensor<[B, K], i32>) {
  // CHECK-NEXT: sym.guard N >= 8
  // CHECK-NEXT: %0 = graph.slice %x [0, 1] [1, 2] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, (D + 1) floordiv 2 - 1], f32>
  // CHECK-NEXT: %1 = graph.slice %x [N - 1, 0] [-1, 1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %2 = graph.slice %x [4, 0] [1, 1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N - 4, D], f32>
  // CHECK-NEXT: %3 = graph.concat %x, %y, %x [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[M, D], f32>, !graph.tensor<[N, D], f32>) -> !graph.tensor<[M + 2*N, D], f32>
  // CHECK-NEXT: %4 = graph.concat %x [1] : (!graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %5 = graph.take %x, %idx [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[K], i64>) -> !graph.tensor<[K, D], f32>
  // CHECK-NEXT: %6 = graph.take %x, %idx2 [1] : (!graph.tensor<[N, D], f32>, !graph.tensor<[B, K], i32>) -> !graph.tensor<[N, B, K], f32>
  sym.guard N >= 8
  %0 = graph.slice %x [0, 1] [1, 2] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, (D - 1) floordiv 2], f32>
  %1 = graph.slice %x [N - 1, 0] [-1, 1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, D], f32>
  %2 = graph.slice %x [4, 0] [1, 1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N - 4, D], f32>
  %3 = graph.concat %x, %y, %x [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[M, D], f32>, !graph.tensor<[N, D], f32>) -> !graph.tensor<[2 * N + M, D], f32>
  %4 = graph.concat %x [1] : (!graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32>
  %5 = graph.take %x, %idx [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[K], i64>) -> !graph.tensor<[K, D], f32>
  %6 = graph.take %x, %idx2 [1] : (!graph.tensor<[N, D], f32>, !graph.tensor<[B, K], i32>) -> !graph.tensor<[N, B, K], f32>
  func.return
}

// CHECK-LABEL: func.func @insert_slice(
func.func @insert_slice(%x: !graph.tensor<[N, D], f32>, %v: !graph.tensor<[L, D], f32>, %r: !graph.tensor<[1, D], f32>) {
  // CHECK-NEXT: %0 = graph.insert_slice %v into %x [S, 0] [1, 1] : !graph.tensor<[L, D], f32> -> !graph.tensor<[N, D], f32>
  // CHECK-NEXT: %1 = graph.insert_slice %r into %x [N - 1, 0] [-1, 1] {tag} : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
  %0 = graph.insert_slice %v into %x [S, 0] [1, 1] : !graph.tensor<[L, D], f32> -> !graph.tensor<[N, D], f32>
  %1 = graph.insert_slice %r into %x [N - 1, 0] [-1, 1] {tag} : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
  func.return
}

// CHECK-LABEL: func.func @matmul(
func.func @matmul(%a: !graph.tensor<[M, K], f16>, %b: !graph.tensor<[K, N], f16>, %ba: !graph.tensor<[B, 1, M, K], f32>, %bb: !graph.tensor<[H, K, N], f32>, %ia: !graph.tensor<[2, 3], i32>, %ib: !graph.tensor<[3, 4], i32>) {
  // CHECK-NEXT: %0 = graph.matmul %a, %b : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> !graph.tensor<[M, N], f16>
  // CHECK-NEXT: %1 = graph.matmul %ba, %bb : (!graph.tensor<[B, 1, M, K], f32>, !graph.tensor<[H, K, N], f32>) -> !graph.tensor<[B, H, M, N], f32>
  // CHECK-NEXT: %2 = graph.matmul %ia, %ib : (!graph.tensor<[2, 3], i32>, !graph.tensor<[3, 4], i32>) -> !graph.tensor<[2, 4], i32>
  %0 = graph.matmul %a, %b : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> !graph.tensor<[M, N], f16>
  %1 = graph.matmul %ba, %bb : (!graph.tensor<[B, 1, M, K], f32>, !graph.tensor<[H, K, N], f32>) -> !graph.tensor<[B, H, M, N], f32>
  %2 = graph.matmul %ia, %ib : (!graph.tensor<[2, 3], i32>, !graph.tensor<[3, 4], i32>) -> !graph.tensor<[2, 4], i32>
  func.return
}

// CHECK-LABEL: func.func @guards(
func.func @guards(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[M], f32>) {
  // CHECK-NEXT: sym.guard N mod 16 == 0, "tiles of 16"
  // CHECK-NEXT: sym.guard N < 1024
  // CHECK-NEXT: sym.guard N <= M
  // CHECK-NEXT: sym.guard N > 0
  // CHECK-NEXT: sym.guard 2*N + 1 >= max(3, M), "room"
  // CHECK-NEXT: sym.guard M == N
  // CHECK-NEXT: %0 = graph.reshape %x : !graph.tensor<[N], f32> -> !graph.tensor<[M], f32>
  sym.guard N mod 16 == 0, "tiles of 16"
  sym.guard N < 1024
  sym.guard N <= M
  sym.guard N > 0
  sym.guard N * 2 + 1 >= max(M, 3), "room"
  sym.guard M == N
  %0 = graph.reshape %x : !graph.tensor<[N], f32> -> !graph.tensor<[M], f32>
  func.return
}

// Discardable attributes print between the operands and the types.

// CHECK-LABEL: func.func @attributes(
func.func @attributes(%x: !graph.tensor<[N, 4], f32>, %i: !graph.tensor<[N], i64>) {
  // CHECK-NEXT: %0 = graph.exp %x {tag = "a"} : !graph.tensor<[N, 4], f32>
  // CHECK-NEXT: %1 = graph.add %x, %x {tag} : !graph.tensor<[N, 4], f32>
  // CHECK-NEXT: %2 = graph.cmp lt, %x, %x {tag} : !graph.tensor<[N, 4], f32>
  // CHECK-NEXT: %3 = graph.reduce sum %x [1] {tag} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N], f32>
  // CHECK-NEXT: %4 = graph.slice %x [0, 0] [1, 1] {tag} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  // CHECK-NEXT: %5 = graph.concat %x, %x [1] {tag} : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 8], f32>
  // CHECK-NEXT: %6 = graph.take %x, %i [0] {tag} : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N], i64>) -> !graph.tensor<[N, 4], f32>
  // CHECK-NEXT: %7 = graph.dim N {tag} : !graph.tensor<[], i64>
  // CHECK-NEXT: sym.guard N > 0, "why" {tag}
  %0 = graph.exp %x {tag = "a"} : !graph.tensor<[N, 4], f32>
  %1 = graph.add %x, %x {tag} : !graph.tensor<[N, 4], f32>
  %2 = graph.cmp lt, %x, %x {tag} : !graph.tensor<[N, 4], f32>
  %3 = graph.reduce sum %x [1] {tag} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N], f32>
  %4 = graph.slice %x [0, 0] [1, 1] {tag} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  %5 = graph.concat %x, %x [1] {tag} : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 8], f32>
  %6 = graph.take %x, %i [0] {tag} : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N], i64>) -> !graph.tensor<[N, 4], f32>
  %7 = graph.dim N {tag} : !graph.tensor<[], i64>
  sym.guard N > 0, "why" {tag}
  func.return
}

// The generic form spells properties with graph's attributes.

// GENERIC: "graph.iota"() <{axis = 0 : i64}> : () -> !graph.tensor<[4*N + 1], i64>
// GENERIC: "graph.dim"() <{value = #sym.expr<D*N>}> : () -> !graph.tensor<[], f32>
// GENERIC: "graph.reduce"(%x) <{kind = #elementwise<reduction prod>, axes = array<i64: 0, 2>}>
// GENERIC: "graph.slice"(%x) <{offsets = [#sym.expr<N - 1>, #sym.expr<0>], strides = array<i64: -1, 1>}>
// GENERIC: "graph.insert_slice"(%v, %x) <{offsets = [#sym.expr<S>, #sym.expr<0>], strides = array<i64: 1, 1>}>
// GENERIC: "sym.guard"() <{fact = #sym.fact<N mod 16 == 0>, reason = "tiles of 16"}> : () -> ()
// GENERIC: "graph.cmp"(%x, %x) <{predicate = #elementwise<predicate lt>}> {tag}

// Source locations survive the round trip with --print-debuginfo.

// LOC-LABEL: func.func @locations(
// LOC-NEXT: %0 = graph.exp %x : !graph.tensor<[N], f32> loc("model.py":3:4)
// LOC-NEXT: %1 = graph.reduce max %0 [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32> loc("model.py":4:11)
// LOC-NEXT: sym.guard N > 0, "non-empty" loc("model.py":1:1)
// LOC-NEXT: func.return loc(unknown)
func.func @locations(%x: !graph.tensor<[N], f32>) {
  %0 = graph.exp %x : !graph.tensor<[N], f32> loc("model.py":3:4)
  %1 = graph.reduce max %0 [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32> loc("model.py":4:11)
  sym.guard N > 0, "non-empty" loc("model.py":1:1)
  func.return
}
