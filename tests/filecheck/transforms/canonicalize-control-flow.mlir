// canonicalize on graph.cond, graph.while and graph.for: constant
// predicates, dead carries and values, loops of known length, and
// loop-invariant hoisting (an invariant op moves before the loop and enters
// as a pass-through carry: the regions are isolated from above). One
// function per chunk.

// RUN: irc-opt %s --split-input-file -p canonicalize | filecheck %s
// RUN: irc-opt %s --split-input-file -p canonicalize --check-semantics | filecheck %s

// A second run changes nothing (the output is a fixed point).
// RUN: irc-opt %s --split-input-file -p canonicalize > %t.mlir
// RUN: irc-opt %t.mlir --split-input-file -p canonicalize | diff %t.mlir -

// CHECK-LABEL: func.func @cond_true(
// CHECK-NEXT:    %y = graph.add %a, %a : !graph.tensor<[N], f32>
// CHECK-NEXT:    func.return %y
func.func @cond_true(%a: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %p = graph.constant true -> !graph.tensor<[], i1>
  %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %y = graph.add %x, %x : !graph.tensor<[N], f32>
    graph.yield %y : !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  }
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @cond_false(
// CHECK-NEXT:    func.return %a
func.func @cond_false(%a: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %p = graph.constant false -> !graph.tensor<[], i1>
  %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%x: !graph.tensor<[N], f32>):
    %y = graph.add %x, %x : !graph.tensor<[N], f32>
    graph.yield %y : !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>):
    graph.yield %x : !graph.tensor<[N], f32>
  }
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// An unused result and an operand neither branch reads go; the predicate is
// not constant, so the cond stays.
// CHECK-LABEL: func.func @cond_dead_values(
// CHECK-NEXT:    %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
// CHECK-NEXT:    ^bb0(%x: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %y = graph.exp %x : !graph.tensor<[N], f32>
// CHECK-NEXT:      graph.yield %y : !graph.tensor<[N], f32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N], f32>):
// CHECK-NEXT:      graph.yield %x_1 : !graph.tensor<[N], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @cond_dead_values(%p: !graph.tensor<[], i1>, %a: !graph.tensor<[N], f32>, %b: !graph.tensor<[M], f32>) -> !graph.tensor<[N], f32> {
  %r:2 = graph.cond %p (%a, %b) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  ^bb0(%x: !graph.tensor<[N], f32>, %z: !graph.tensor<[M], f32>):
    %y = graph.exp %x : !graph.tensor<[N], f32>
    graph.yield %y, %x : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  } else {
  ^bb0(%x: !graph.tensor<[N], f32>, %z: !graph.tensor<[M], f32>):
    graph.yield %x, %x : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  func.return %r#0 : !graph.tensor<[N], f32>
}

// -----

// The accumulator %x feeds only itself and its result is unused: it goes
// with the ops that computed it, and %y with it. The counter the condition
// reads stays.
// CHECK-LABEL: func.func @while_dead_carries(
// CHECK-NEXT:    %r = graph.while (%n) : (!graph.tensor<[], i64>) cond {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>):
// CHECK-NEXT:      %z = graph.constant 0 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:      %p = graph.cmp gt, %i, %z : !graph.tensor<[], i64>
// CHECK-NEXT:      graph.yield %p : !graph.tensor<[], i1>
// CHECK-NEXT:    } body {
// CHECK-NEXT:    ^bb0(%i_1: !graph.tensor<[], i64>):
// CHECK-NEXT:      %o = graph.constant 1 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:      %j = graph.sub %i_1, %o : !graph.tensor<[], i64>
// CHECK-NEXT:      graph.yield %j : !graph.tensor<[], i64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @while_dead_carries(%a: !graph.tensor<[N], f32>, %n: !graph.tensor<[], i64>) -> !graph.tensor<[], i64> {
  %r:3 = graph.while (%n, %a, %a) : (!graph.tensor<[], i64>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>):
    %z = graph.constant 0 -> !graph.tensor<[], i64>
    %p = graph.cmp gt, %i, %z : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>):
    %o = graph.constant 1 -> !graph.tensor<[], i64>
    %j = graph.sub %i, %o : !graph.tensor<[], i64>
    %x2 = graph.add %x, %y : !graph.tensor<[N], f32>
    graph.yield %j, %x2, %y : !graph.tensor<[], i64>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  func.return %r#0 : !graph.tensor<[], i64>
}

// -----

// A carry whose result is unused stays when it feeds a live one; the result
// of a pass-through carry is its initial value.
// CHECK-LABEL: func.func @for_live_carries(
// CHECK-NEXT:    %r, %r_1, %r_2 = graph.for 4 carries (%c, %d, %w) : (!graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>, %t: !graph.tensor<[], f32>, %v: !graph.tensor<[], f32>):
// CHECK-NEXT:      %s2 = graph.add %s, %t : !graph.tensor<[], f32>
// CHECK-NEXT:      %t2 = graph.mul %t, %v : !graph.tensor<[], f32>
// CHECK-NEXT:      graph.yield %s2, %t2, %v : !graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %w
func.func @for_live_carries(%c: !graph.tensor<[], f32>, %d: !graph.tensor<[], f32>, %w: !graph.tensor<[], f32>) -> (!graph.tensor<[], f32>, !graph.tensor<[], f32>) {
  %r:3 = graph.for 4 carries (%c, %d, %w) : (!graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>) xs () : () -> (!graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], f32>, %t: !graph.tensor<[], f32>, %v: !graph.tensor<[], f32>):
    %s2 = graph.add %s, %t : !graph.tensor<[], f32>
    %t2 = graph.mul %t, %v : !graph.tensor<[], f32>
    graph.yield %s2, %t2, %v : !graph.tensor<[], f32>, !graph.tensor<[], f32>, !graph.tensor<[], f32>
  }
  func.return %r#0, %r#2 : !graph.tensor<[], f32>, !graph.tensor<[], f32>
}

// -----

// Unused ys go.
// CHECK-LABEL: func.func @for_dead_ys(
// CHECK-NEXT:    %r = graph.for N carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
// CHECK-NEXT:      %u = graph.add %s, %x : !graph.tensor<[D], f32>
// CHECK-NEXT:      graph.yield %u : !graph.tensor<[D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @for_dead_ys(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> !graph.tensor<[D], f32> {
  %r:2 = graph.for N carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %u = graph.add %s, %x : !graph.tensor<[D], f32>
    %e = graph.exp %u : !graph.tensor<[D], f32>
    graph.yield %u, %e : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
  }
  func.return %r#0 : !graph.tensor<[D], f32>
}

// -----

// CHECK-LABEL: func.func @for_once(
// CHECK-NEXT:    %x = graph.reshape %xs : !graph.tensor<[1, D], f32> -> !graph.tensor<[D], f32>
// CHECK-NEXT:    %u = graph.add %c, %x : !graph.tensor<[D], f32>
// CHECK-NEXT:    %r = graph.reshape %u : !graph.tensor<[D], f32> -> !graph.tensor<[1, D], f32>
// CHECK-NEXT:    func.return %u, %r
func.func @for_once(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[1, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[1, D], f32>) {
  %r:2 = graph.for 1 carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[1, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[1, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %u = graph.add %s, %x : !graph.tensor<[D], f32>
    graph.yield %u, %u : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[D], f32>, !graph.tensor<[1, D], f32>
}

// -----

// The index of the one iteration is 0, also in reverse.
// CHECK-LABEL: func.func @for_once_index(
// CHECK-NEXT:    %i = graph.constant 0 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:    func.return %i
func.func @for_once_index(%c: !graph.tensor<[], i64>) -> !graph.tensor<[], i64> {
  %r = graph.for 1 reverse carries (%c) : (!graph.tensor<[], i64>) xs () : () -> (!graph.tensor<[], i64>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[], i64>):
    graph.yield %i : !graph.tensor<[], i64>
  }
  func.return %r : !graph.tensor<[], i64>
}

// -----

// CHECK-LABEL: func.func @for_never(
// CHECK-NEXT:    %r = graph.constant 0.000000e+00 : f32 -> !graph.tensor<[0, D], f32>
// CHECK-NEXT:    func.return %c, %r
func.func @for_never(%c: !graph.tensor<[D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[0, D], f32>) {
  %r:2 = graph.for 0 carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>, !graph.tensor<[0, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
    %e = graph.exp %s : !graph.tensor<[D], f32>
    graph.yield %e, %e : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[D], f32>, !graph.tensor<[0, D], f32>
}

// -----

// exp(w) * 2 depends only on the pass-through carry %w (and a constant of
// the body): it moves before the loop and enters as a carry of its own; %w
// is then dead. The multiplication by the carry %s stays.
// CHECK-LABEL: func.func @hoist_invariant(
// CHECK-NEXT:    %e = graph.exp %w : !graph.tensor<[D], f32>
// CHECK-NEXT:    %two = graph.constant 2.000000e+00 : f32 -> !graph.tensor<[D], f32>
// CHECK-NEXT:    %e2 = graph.mul %e, %two : !graph.tensor<[D], f32>
// CHECK-NEXT:    %r, %0 = graph.for N carries (%c, %e2) : (!graph.tensor<[D], f32>, !graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %e2_1: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
// CHECK-NEXT:      %t = graph.mul %s, %e2_1 : !graph.tensor<[D], f32>
// CHECK-NEXT:      %u = graph.add %t, %x : !graph.tensor<[D], f32>
// CHECK-NEXT:      graph.yield %u, %e2_1 : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @hoist_invariant(%c: !graph.tensor<[D], f32>, %w: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> !graph.tensor<[D], f32> {
  %r:3 = graph.for N carries (%c, %w) : (!graph.tensor<[D], f32>, !graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[D], f32>, !graph.tensor<[N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %v: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %two = graph.constant 2.0 : f32 -> !graph.tensor<[D], f32>
    %e = graph.exp %v : !graph.tensor<[D], f32>
    %e2 = graph.mul %e, %two : !graph.tensor<[D], f32>
    %t = graph.mul %s, %e2 : !graph.tensor<[D], f32>
    %u = graph.add %t, %x : !graph.tensor<[D], f32>
    graph.yield %u, %v, %u : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
  }
  func.return %r#0 : !graph.tensor<[D], f32>
}

// -----

// An op of constants only (a scalar broadcast to the carry's shape) stays
// in the loop: hoisted, it would enter as a carry, a buffer a kernel must
// fill, where in the loop it folds to a constant.
// CHECK-LABEL: func.func @constants_stay(
// CHECK-NEXT:    %r = graph.for 4 carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
// CHECK-NEXT:      %{{.*}} = graph.constant 5.000000e-01 : f32 -> !graph.tensor<[D], f32>
// CHECK-NEXT:      %u = graph.mul %s, %{{.*}} : !graph.tensor<[D], f32>
// CHECK-NEXT:      graph.yield %u : !graph.tensor<[D], f32>
// CHECK-NEXT:    }
func.func @constants_stay(%c: !graph.tensor<[D], f32>) -> !graph.tensor<[D], f32> {
  %r = graph.for 4 carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[], f32>
    %hb = graph.broadcast %h : !graph.tensor<[], f32> -> !graph.tensor<[D], f32>
    %u = graph.mul %s, %hb : !graph.tensor<[D], f32>
    graph.yield %u : !graph.tensor<[D], f32>
  }
  func.return %r : !graph.tensor<[D], f32>
}

// -----

// A while loop hoists too, a sum of an invariant value with it (a sum has a
// value over an empty axis); a slice and a max stay in the loop: slices,
// takes and max-reductions can fail at run time, and a hoisted op would run
// even before a loop of no iterations.
// CHECK-LABEL: func.func @hoist_in_while(
// CHECK-NEXT:    %t = graph.tanh %w : !graph.tensor<[N], f32>
// CHECK-NEXT:    %k = graph.reduce sum %t [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
// CHECK-NEXT:    %r, %r_1, %0, %1 = graph.while (%n, %w, %t, %k) : (!graph.tensor<[], i64>, !graph.tensor<[N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], f32>) cond {
// CHECK:         } body {
// CHECK-NEXT:    ^bb0(%i_1: !graph.tensor<[], i64>, %v_1: !graph.tensor<[N], f32>, %t_1: !graph.tensor<[N], f32>, %k_1: !graph.tensor<[], f32>):
// CHECK-NEXT:      %s = graph.slice %v_1
// CHECK-NEXT:      %m = graph.reduce sum %s [0]
// CHECK-NEXT:      %x = graph.reduce max %t_1 [0]
// CHECK-NEXT:      %q = graph.add %m, %k_1
// CHECK-NEXT:      %q2 = graph.add %q, %x
// CHECK:           graph.yield %j2, %v_1, %t_1, %k_1 :
func.func @hoist_in_while(%w: !graph.tensor<[N], f32>, %n: !graph.tensor<[], i64>) -> (!graph.tensor<[], i64>) {
  %r:2 = graph.while (%n, %w) : (!graph.tensor<[], i64>, !graph.tensor<[N], f32>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %z = graph.constant 0 -> !graph.tensor<[], i64>
    %p = graph.cmp gt, %i, %z : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %t = graph.tanh %v : !graph.tensor<[N], f32>
    %s = graph.slice %v [0] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[1], f32>
    %m = graph.reduce sum %s [0] : !graph.tensor<[1], f32> -> !graph.tensor<[], f32>
    %k = graph.reduce sum %t [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %x = graph.reduce max %t [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %q = graph.add %m, %k : !graph.tensor<[], f32>
    %q2 = graph.add %q, %x : !graph.tensor<[], f32>
    %qi = graph.cast %q2 : !graph.tensor<[], f32> -> !graph.tensor<[], i64>
    %o = graph.constant 1 -> !graph.tensor<[], i64>
    %j = graph.sub %i, %o : !graph.tensor<[], i64>
    %qq = graph.mul %qi, %qi : !graph.tensor<[], i64>
    %j2 = graph.sub %j, %qq : !graph.tensor<[], i64>
    graph.yield %j2, %v : !graph.tensor<[], i64>, !graph.tensor<[N], f32>
  }
  func.return %r#0 : !graph.tensor<[], i64>
}
