// graph.cond, graph.while and graph.for in custom syntax: printed, re-parsed
// and printed again, directly and through the generic form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @cond(
// CHECK-NEXT:    %r = graph.cond %p (%a) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
// CHECK-NEXT:    ^bb0(%x: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %y = graph.add %x, %x : !graph.tensor<[N], f32>
// CHECK-NEXT:      graph.yield %y : !graph.tensor<[N], f32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N], f32>):
// CHECK-NEXT:      graph.yield %x_1 : !graph.tensor<[N], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
// GENERIC: "graph.cond"(%p, %a) ({
func.func @cond(%p: !graph.tensor<[], i1>, %a: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
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

// A cond without operands or results.
// CHECK-LABEL: func.func @cond_empty(
// CHECK-NEXT:    graph.cond %p () : !graph.tensor<[], i1>, () -> () {
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
func.func @cond_empty(%p: !graph.tensor<[], i1>) {
  graph.cond %p () : !graph.tensor<[], i1>, () -> () {
    graph.yield
  } else {
    graph.yield
  }
  func.return
}

// CHECK-LABEL: func.func @countdown(
// CHECK-NEXT:    %r, %r_1 = graph.while (%a, %c) : (!graph.tensor<[N], f32>, !graph.tensor<[], i64>) cond {
// CHECK-NEXT:    ^bb0(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[], i64>):
// CHECK-NEXT:      %z = graph.constant 0 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:      %p = graph.cmp gt, %i, %z : !graph.tensor<[], i64>
// CHECK-NEXT:      graph.yield %p : !graph.tensor<[], i1>
// CHECK-NEXT:    } body {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N], f32>, %i_1: !graph.tensor<[], i64>):
// CHECK-NEXT:      %o = graph.constant 1 : i64 -> !graph.tensor<[], i64>
// CHECK-NEXT:      %j = graph.sub %i_1, %o : !graph.tensor<[], i64>
// CHECK-NEXT:      graph.yield %x_1, %j : !graph.tensor<[N], f32>, !graph.tensor<[], i64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
// GENERIC: "graph.while"(%a, %c) ({
func.func @countdown(%a: !graph.tensor<[N], f32>, %c: !graph.tensor<[], i64>) -> !graph.tensor<[N], f32> {
  %r:2 = graph.while (%a, %c) : (!graph.tensor<[N], f32>, !graph.tensor<[], i64>) cond {
  ^bb0(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[], i64>):
    %z = graph.constant 0 -> !graph.tensor<[], i64>
    %p = graph.cmp gt, %i, %z : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[], i64>):
    %o = graph.constant 1 -> !graph.tensor<[], i64>
    %j = graph.sub %i, %o : !graph.tensor<[], i64>
    graph.yield %x, %j : !graph.tensor<[N], f32>, !graph.tensor<[], i64>
  }
  func.return %r#0 : !graph.tensor<[N], f32>
}

// A reverse scan over a symbolic length (carries and xs), and a loop of
// N - 1 iterations without xs or ys.
// CHECK-LABEL: func.func @scan(
// CHECK-NEXT:    %r, %r_1 = graph.for N reverse carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N, D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
// CHECK-NEXT:      %t = graph.add %s, %x : !graph.tensor<[D], f32>
// CHECK-NEXT:      graph.yield %t, %t : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %q = graph.for N - 1 carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>) {
// CHECK-NEXT:    ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
// CHECK-NEXT:      graph.yield %s : !graph.tensor<[D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r_1, %q
// GENERIC: "graph.for"(%c, %xs) <{length = #sym.expr<N>, reverse, operandSegmentSizes = array<i32: 1, 1>}> ({
func.func @scan(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[D], f32>) {
  %r:2 = graph.for N reverse carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %t = graph.add %s, %x : !graph.tensor<[D], f32>
    graph.yield %t, %t : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
  }
  %q = graph.for N - 1 carries (%c) : (!graph.tensor<[D], f32>) xs () : () -> (!graph.tensor<[D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>):
    graph.yield %s : !graph.tensor<[D], f32>
  }
  func.return %r#1, %q : !graph.tensor<[N, D], f32>, !graph.tensor<[D], f32>
}
