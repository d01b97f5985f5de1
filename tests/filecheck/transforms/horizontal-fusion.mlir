// horizontal-fusion: H identical computations on side-by-side windows of
// one tensor (heads) become one computation over a leading head axis.
// Shared values stay shared; a concatenation of the heads' results becomes a
// transpose and a reshape, any other use a slice of the batched value. By
// default only heads holding a matmul are batched (DEFAULT); the CHECK
// lines show every rule, with require-matmul=false.
//
// tests/test_horizontal_fusion.py checks the pass on generated per-head
// programs (check_pass), the suite's GPT-2 block and end to end.

// RUN: irc-opt %s --split-input-file -p 'horizontal-fusion{require-matmul=false}' | filecheck %s
// RUN: irc-opt %s --split-input-file -p 'horizontal-fusion{require-matmul=false}' | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p 'horizontal-fusion{require-matmul=false}' --check-semantics | filecheck %s
// RUN: irc-opt %s --split-input-file -p horizontal-fusion --check-semantics | filecheck %s --check-prefix=DEFAULT

// A second run changes nothing (the output is a fixed point).
// RUN: irc-opt %s --split-input-file -p 'horizontal-fusion{require-matmul=false}' > %t.mlir
// RUN: irc-opt %t.mlir --split-input-file -p 'horizontal-fusion{require-matmul=false}' | diff %t.mlir -

// Two heads over columns: the window is the whole of %x, reshaped and
// transposed to [2, N, 4]; the shared weight stays unbatched (matmul
// broadcasts it); the concatenation becomes a transpose and a reshape.
// DEFAULT-LABEL: func.func @columns(
// DEFAULT:         graph.matmul %1, %w : (!graph.tensor<[2, N, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[2, N, 4], f32>
// CHECK-LABEL: func.func @columns(
// CHECK-NEXT:    %0 = graph.reshape %x : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N, 2, 4], f32>
// CHECK-NEXT:    %1 = graph.transpose %0 [1, 0, 2] : !graph.tensor<[N, 2, 4], f32> -> !graph.tensor<[2, N, 4], f32>
// CHECK-NEXT:    %2 = graph.matmul %1, %w : (!graph.tensor<[2, N, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[2, N, 4], f32>
// CHECK-NEXT:    %3 = graph.tanh %2 : !graph.tensor<[2, N, 4], f32>
// CHECK-NEXT:    %4 = graph.transpose %3 [1, 0, 2] : !graph.tensor<[2, N, 4], f32> -> !graph.tensor<[N, 2, 4], f32>
// CHECK-NEXT:    %r = graph.reshape %4 : !graph.tensor<[N, 2, 4], f32> -> !graph.tensor<[N, 8], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[N, 8], f32>
func.func @columns(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[4, 4], f32>) -> !graph.tensor<[N, 8], f32> {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N, 4], f32>
  %x1 = graph.slice %x [0, 4] [1, 1] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N, 4], f32>
  %m0 = graph.matmul %x0, %w : (!graph.tensor<[N, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[N, 4], f32>
  %t0 = graph.tanh %m0 : !graph.tensor<[N, 4], f32>
  %m1 = graph.matmul %x1, %w : (!graph.tensor<[N, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[N, 4], f32>
  %t1 = graph.tanh %m1 : !graph.tensor<[N, 4], f32>
  %r = graph.concat %t0, %t1 [1] : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 8], f32>
  func.return %r : !graph.tensor<[N, 8], f32>
}

// -----

// Three heads over rows: no transpose (the heads already lead); the
// reduction's axis and the broadcast move past the head axis.
// By default, heads without a matmul are left alone.
// DEFAULT-LABEL: func.func @rows(
// DEFAULT-NEXT:    %x0 = graph.slice %x [0, 0] [1, 1]
// CHECK-LABEL: func.func @rows(
// CHECK-NEXT:    %0 = graph.reshape %x : !graph.tensor<[6, D], f32> -> !graph.tensor<[3, 2, D], f32>
// CHECK-NEXT:    %1 = graph.reduce sum %0 [1] : !graph.tensor<[3, 2, D], f32> -> !graph.tensor<[3, 1, D], f32>
// CHECK-NEXT:    %2 = graph.broadcast %1 : !graph.tensor<[3, 1, D], f32> -> !graph.tensor<[3, 2, D], f32>
// CHECK-NEXT:    %3 = graph.sub %0, %2 : !graph.tensor<[3, 2, D], f32>
// CHECK-NEXT:    %r = graph.reshape %3 : !graph.tensor<[3, 2, D], f32> -> !graph.tensor<[6, D], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[6, D], f32>
func.func @rows(%x: !graph.tensor<[6, D], f32>) -> !graph.tensor<[6, D], f32> {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[6, D], f32> -> !graph.tensor<[2, D], f32>
  %x1 = graph.slice %x [2, 0] [1, 1] : !graph.tensor<[6, D], f32> -> !graph.tensor<[2, D], f32>
  %x2 = graph.slice %x [4, 0] [1, 1] : !graph.tensor<[6, D], f32> -> !graph.tensor<[2, D], f32>
  %s0 = graph.reduce sum %x0 [0] : !graph.tensor<[2, D], f32> -> !graph.tensor<[1, D], f32>
  %b0 = graph.broadcast %s0 : !graph.tensor<[1, D], f32> -> !graph.tensor<[2, D], f32>
  %d0 = graph.sub %x0, %b0 : !graph.tensor<[2, D], f32>
  %s1 = graph.reduce sum %x1 [0] : !graph.tensor<[2, D], f32> -> !graph.tensor<[1, D], f32>
  %b1 = graph.broadcast %s1 : !graph.tensor<[1, D], f32> -> !graph.tensor<[2, D], f32>
  %d1 = graph.sub %x1, %b1 : !graph.tensor<[2, D], f32>
  %s2 = graph.reduce sum %x2 [0] : !graph.tensor<[2, D], f32> -> !graph.tensor<[1, D], f32>
  %b2 = graph.broadcast %s2 : !graph.tensor<[1, D], f32> -> !graph.tensor<[2, D], f32>
  %d2 = graph.sub %x2, %b2 : !graph.tensor<[2, D], f32>
  %r = graph.concat %d0, %d1, %d2 [0] : (!graph.tensor<[2, D], f32>, !graph.tensor<[2, D], f32>, !graph.tensor<[2, D], f32>) -> !graph.tensor<[6, D], f32>
  func.return %r : !graph.tensor<[6, D], f32>
}

// -----

// Attention heads: q and k are windows of one tensor (a run of four slices
// whose halves are the heads), v of another; the shared mask is broadcast
// over the heads; the softmax reduces the last axis of [2, S, S].
// DEFAULT-LABEL: func.func @attention(
// DEFAULT:         graph.matmul %15, %7 : (!graph.tensor<[2, S, S], f32>, !graph.tensor<[2, S, 2], f32>) -> !graph.tensor<[2, S, 2], f32>
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %0 = graph.slice %qk [0, 0] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 4], f32>
// CHECK-NEXT:    %1 = graph.reshape %0 : !graph.tensor<[S, 4], f32> -> !graph.tensor<[S, 2, 2], f32>
// CHECK-NEXT:    %2 = graph.transpose %1 [1, 0, 2] : !graph.tensor<[S, 2, 2], f32> -> !graph.tensor<[2, S, 2], f32>
// CHECK-NEXT:    %3 = graph.slice %qk [0, 4] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 4], f32>
// CHECK-NEXT:    %4 = graph.reshape %3 : !graph.tensor<[S, 4], f32> -> !graph.tensor<[S, 2, 2], f32>
// CHECK-NEXT:    %5 = graph.transpose %4 [1, 0, 2] : !graph.tensor<[S, 2, 2], f32> -> !graph.tensor<[2, S, 2], f32>
// CHECK-NEXT:    %6 = graph.reshape %v : !graph.tensor<[S, 4], f32> -> !graph.tensor<[S, 2, 2], f32>
// CHECK-NEXT:    %7 = graph.transpose %6 [1, 0, 2] : !graph.tensor<[S, 2, 2], f32> -> !graph.tensor<[2, S, 2], f32>
// CHECK-NEXT:    %8 = graph.transpose %5 [0, 2, 1] : !graph.tensor<[2, S, 2], f32> -> !graph.tensor<[2, 2, S], f32>
// CHECK-NEXT:    %9 = graph.matmul %2, %8 : (!graph.tensor<[2, S, 2], f32>, !graph.tensor<[2, 2, S], f32>) -> !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %10 = graph.broadcast %mask : !graph.tensor<[S, S], f32> -> !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %11 = graph.add %9, %10 : !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %12 = graph.exp %11 : !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %13 = graph.reduce sum %12 [2] : !graph.tensor<[2, S, S], f32> -> !graph.tensor<[2, S, 1], f32>
// CHECK-NEXT:    %14 = graph.broadcast %13 : !graph.tensor<[2, S, 1], f32> -> !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %15 = graph.div %12, %14 : !graph.tensor<[2, S, S], f32>
// CHECK-NEXT:    %16 = graph.matmul %15, %7 : (!graph.tensor<[2, S, S], f32>, !graph.tensor<[2, S, 2], f32>) -> !graph.tensor<[2, S, 2], f32>
// CHECK-NEXT:    %17 = graph.transpose %16 [1, 0, 2] : !graph.tensor<[2, S, 2], f32> -> !graph.tensor<[S, 2, 2], f32>
// CHECK-NEXT:    %r = graph.reshape %17 : !graph.tensor<[S, 2, 2], f32> -> !graph.tensor<[S, 4], f32>
// CHECK-NEXT:    func.return %r : !graph.tensor<[S, 4], f32>
func.func @attention(%qk: !graph.tensor<[S, 8], f32>, %v: !graph.tensor<[S, 4], f32>, %mask: !graph.tensor<[S, S], f32>) -> !graph.tensor<[S, 4], f32> {
  %q0 = graph.slice %qk [0, 0] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 2], f32>
  %q1 = graph.slice %qk [0, 2] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 2], f32>
  %k0 = graph.slice %qk [0, 4] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 2], f32>
  %k1 = graph.slice %qk [0, 6] [1, 1] : !graph.tensor<[S, 8], f32> -> !graph.tensor<[S, 2], f32>
  %v0 = graph.slice %v [0, 0] [1, 1] : !graph.tensor<[S, 4], f32> -> !graph.tensor<[S, 2], f32>
  %v1 = graph.slice %v [0, 2] [1, 1] : !graph.tensor<[S, 4], f32> -> !graph.tensor<[S, 2], f32>
  %kt0 = graph.transpose %k0 [1, 0] : !graph.tensor<[S, 2], f32> -> !graph.tensor<[2, S], f32>
  %a0 = graph.matmul %q0, %kt0 : (!graph.tensor<[S, 2], f32>, !graph.tensor<[2, S], f32>) -> !graph.tensor<[S, S], f32>
  %m0 = graph.add %a0, %mask : !graph.tensor<[S, S], f32>
  %e0 = graph.exp %m0 : !graph.tensor<[S, S], f32>
  %z0 = graph.reduce sum %e0 [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %zb0 = graph.broadcast %z0 : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p0 = graph.div %e0, %zb0 : !graph.tensor<[S, S], f32>
  %o0 = graph.matmul %p0, %v0 : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 2], f32>) -> !graph.tensor<[S, 2], f32>
  %kt1 = graph.transpose %k1 [1, 0] : !graph.tensor<[S, 2], f32> -> !graph.tensor<[2, S], f32>
  %a1 = graph.matmul %q1, %kt1 : (!graph.tensor<[S, 2], f32>, !graph.tensor<[2, S], f32>) -> !graph.tensor<[S, S], f32>
  %m1 = graph.add %a1, %mask : !graph.tensor<[S, S], f32>
  %e1 = graph.exp %m1 : !graph.tensor<[S, S], f32>
  %z1 = graph.reduce sum %e1 [1] : !graph.tensor<[S, S], f32> -> !graph.tensor<[S, 1], f32>
  %zb1 = graph.broadcast %z1 : !graph.tensor<[S, 1], f32> -> !graph.tensor<[S, S], f32>
  %p1 = graph.div %e1, %zb1 : !graph.tensor<[S, S], f32>
  %o1 = graph.matmul %p1, %v1 : (!graph.tensor<[S, S], f32>, !graph.tensor<[S, 2], f32>) -> !graph.tensor<[S, 2], f32>
  %r = graph.concat %o0, %o1 [1] : (!graph.tensor<[S, 2], f32>, !graph.tensor<[S, 2], f32>) -> !graph.tensor<[S, 4], f32>
  func.return %r : !graph.tensor<[S, 4], f32>
}

// -----

// Results used one by one (here returned): each is its head's slice of the
// batched value. The windows start at an offset: their union is sliced out.
// DEFAULT-LABEL: func.func @separate_results(
// DEFAULT-NEXT:    %x0 = graph.slice %x [0, 2] [1, 1]
// CHECK-LABEL: func.func @separate_results(
// CHECK-NEXT:    %0 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 6], f32> -> !graph.tensor<[N, 4], f32>
// CHECK-NEXT:    %1 = graph.reshape %0 : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2, 2], f32>
// CHECK-NEXT:    %2 = graph.transpose %1 [1, 0, 2] : !graph.tensor<[N, 2, 2], f32> -> !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %3 = graph.exp %2 : !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %4 = graph.broadcast %y : !graph.tensor<[N, 2], f32> -> !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %5 = graph.mul %3, %4 : !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %6 = graph.slice %5 [0, 0, 0] [1, 1, 1] : !graph.tensor<[2, N, 2], f32> -> !graph.tensor<[1, N, 2], f32>
// CHECK-NEXT:    %r0 = graph.reshape %6 : !graph.tensor<[1, N, 2], f32> -> !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %7 = graph.slice %5 [1, 0, 0] [1, 1, 1] : !graph.tensor<[2, N, 2], f32> -> !graph.tensor<[1, N, 2], f32>
// CHECK-NEXT:    %r1 = graph.reshape %7 : !graph.tensor<[1, N, 2], f32> -> !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    func.return %r0, %r1 : !graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>
func.func @separate_results(%x: !graph.tensor<[N, 6], f32>, %y: !graph.tensor<[N, 2], f32>) -> (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>) {
  %x0 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 6], f32> -> !graph.tensor<[N, 2], f32>
  %x1 = graph.slice %x [0, 4] [1, 1] : !graph.tensor<[N, 6], f32> -> !graph.tensor<[N, 2], f32>
  %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
  %r0 = graph.mul %e0, %y : !graph.tensor<[N, 2], f32>
  %e1 = graph.exp %x1 : !graph.tensor<[N, 2], f32>
  %r1 = graph.mul %e1, %y : !graph.tensor<[N, 2], f32>
  func.return %r0, %r1 : !graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>
}

// -----

// Refused: windows of different widths are no heads.
// CHECK-LABEL: func.func @different_widths(
// CHECK-NEXT:    %x0 = graph.slice %x [0, 0] [1, 1]
// CHECK-NEXT:    %x1 = graph.slice %x [0, 2] [1, 1]
// CHECK-NEXT:    %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %e1 = graph.exp %x1 : !graph.tensor<[N, 3], f32>
// CHECK-NEXT:    %r = graph.concat %e0, %e1 [1]
func.func @different_widths(%x: !graph.tensor<[N, 5], f32>) -> !graph.tensor<[N, 5], f32> {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, 5], f32> -> !graph.tensor<[N, 2], f32>
  %x1 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 5], f32> -> !graph.tensor<[N, 3], f32>
  %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
  %e1 = graph.exp %x1 : !graph.tensor<[N, 3], f32>
  %r = graph.concat %e0, %e1 [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 3], f32>) -> !graph.tensor<[N, 5], f32>
  func.return %r : !graph.tensor<[N, 5], f32>
}

// -----

// Refused: head 1 uses head 0's exp, which would be batched and shared.
// CHECK-LABEL: func.func @overlapping(
// CHECK-NEXT:    %x0 = graph.slice %x [0, 0] [1, 1]
// CHECK-NEXT:    %x1 = graph.slice %x [0, 2] [1, 1]
// CHECK-NEXT:    %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %a0 = graph.add %e0, %e0 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %e1 = graph.exp %x1 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %a1 = graph.add %e1, %e0 : !graph.tensor<[N, 2], f32>
// CHECK-NEXT:    %r = graph.concat %a0, %a1 [1]
func.func @overlapping(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %x1 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
  %a0 = graph.add %e0, %e0 : !graph.tensor<[N, 2], f32>
  %e1 = graph.exp %x1 : !graph.tensor<[N, 2], f32>
  %a1 = graph.add %e1, %e0 : !graph.tensor<[N, 2], f32>
  %r = graph.concat %a0, %a1 [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 4], f32>
  func.return %r : !graph.tensor<[N, 4], f32>
}

// -----

// Interleaved, as in a joint function: a head's later ops (%n1) and ops
// using them (%g1) come before another head's (%n0). The batched ops go
// where each position's earliest op was, and the ops using them follow.
// CHECK-LABEL: func.func @interleaved(
// CHECK-NEXT:    %0 = graph.reshape %x : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2, 2], f32>
// CHECK-NEXT:    %1 = graph.transpose %0 [1, 0, 2]
// CHECK-NEXT:    %2 = graph.exp %1 : !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %3 = graph.transpose %2 [1, 0, 2]
// CHECK-NEXT:    %c = graph.reshape %3 : !graph.tensor<[N, 2, 2], f32> -> !graph.tensor<[N, 4], f32>
// CHECK-NEXT:    %s = graph.reduce sum %c [1]
// CHECK-NEXT:    %b = graph.broadcast %s
// CHECK-NEXT:    %4 = graph.neg %2 : !graph.tensor<[2, N, 2], f32>
// CHECK:         %8 = graph.mul %7, %6 : !graph.tensor<[2, N, 2], f32>
// CHECK-NEXT:    %9 = graph.slice %8 [1, 0, 0] [1, 1, 1]
// CHECK-NEXT:    %g1 = graph.reshape %9
// CHECK-NEXT:    %10 = graph.slice %8 [0, 0, 0] [1, 1, 1]
// CHECK-NEXT:    %g0 = graph.reshape %10
// CHECK-NEXT:    %r = graph.concat %g1, %g0 [1]
// CHECK-NEXT:    func.return %c, %r :
func.func @interleaved(%x: !graph.tensor<[N, 4], f32>) -> (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>) {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %x1 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %e0 = graph.exp %x0 : !graph.tensor<[N, 2], f32>
  %e1 = graph.exp %x1 : !graph.tensor<[N, 2], f32>
  %c = graph.concat %e0, %e1 [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 4], f32>
  %s = graph.reduce sum %c [1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 1], f32>
  %b = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 2], f32>
  %n1 = graph.neg %e1 : !graph.tensor<[N, 2], f32>
  %g1 = graph.mul %b, %n1 : !graph.tensor<[N, 2], f32>
  %n0 = graph.neg %e0 : !graph.tensor<[N, 2], f32>
  %g0 = graph.mul %b, %n0 : !graph.tensor<[N, 2], f32>
  %r = graph.concat %g1, %g0 [1] : (!graph.tensor<[N, 2], f32>, !graph.tensor<[N, 2], f32>) -> !graph.tensor<[N, 4], f32>
  func.return %c, %r : !graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>
}

// -----

// Refused: heads of layout ops only would save no work.
// CHECK-LABEL: func.func @layout_only(
// CHECK-NEXT:    %x0 = graph.slice %x [0, 0] [1, 1]
// CHECK-NEXT:    %x1 = graph.slice %x [0, 2] [1, 1]
// CHECK-NEXT:    %t0 = graph.transpose %x0 [1, 0]
// CHECK-NEXT:    %t1 = graph.transpose %x1 [1, 0]
// CHECK-NEXT:    %r = graph.concat %t0, %t1 [0]
func.func @layout_only(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[4, N], f32> {
  %x0 = graph.slice %x [0, 0] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %x1 = graph.slice %x [0, 2] [1, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 2], f32>
  %t0 = graph.transpose %x0 [1, 0] : !graph.tensor<[N, 2], f32> -> !graph.tensor<[2, N], f32>
  %t1 = graph.transpose %x1 [1, 0] : !graph.tensor<[N, 2], f32> -> !graph.tensor<[2, N], f32>
  %r = graph.concat %t0, %t1 [0] : (!graph.tensor<[2, N], f32>, !graph.tensor<[2, N], f32>) -> !graph.tensor<[4, N], f32>
  func.return %r : !graph.tensor<[4, N], f32>
}
