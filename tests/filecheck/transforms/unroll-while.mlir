// unroll-while: a cheap graph.while runs `factor` of its iterations per host
// decision. The body applies the loop's body once, then factor - 1 more
// times, each kept by a select while the condition still holds (`alive`, a
// new carry, true on entry); the condition becomes `alive & cond(c)`. A
// loop with a matmul (costly to run past its exit) or with control flow in
// its body stays as it is. An unrolled loop is marked `unrolled`.

// RUN: irc-opt %s --split-input-file -p "unroll-while{factor=3}" | filecheck %s
// RUN: irc-opt %s --split-input-file -p "unroll-while{factor=3}" | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p "unroll-while{factor=1}" | filecheck %s --check-prefix=ONE
// RUN: irc-opt %s --split-input-file -p "unroll-while{factor=3},fuse" | filecheck %s --check-prefix=FUSED
// RUN: irc-opt %s --split-input-file -p "unroll-while{factor=3},canonicalize,fuse" | filecheck %s --check-prefix=FUSED

// fuse unrolls cheap loops first, but not a loop unrolled already (even
// rebuilt by canonicalize, which keeps the mark): the
// condition's and and the body's one (factor 3), no more.
// FUSED-LABEL:  func.func @halve(
// FUSED-COUNT-2:  = graph.and %
// FUSED-NOT:      = graph.and %
// FUSED-LABEL:  func.func @costly(

// CHECK-LABEL: func.func @halve(
// CHECK:         %[[TRUE:.*]] = graph.constant true -> !graph.tensor<[], i1>
// CHECK:         %[[R:.*]], %{{.*}} = graph.while (%x, %[[TRUE]]) : ({{.*}}) attributes {unrolled = 3 : i64} cond {
// CHECK:         ^bb0(%[[C:.*]]: !graph.tensor<[N], f32>, %[[ALIVE:.*]]: !graph.tensor<[], i1>):
// CHECK:           %[[P:.*]] = graph.cmp ge
// CHECK:           %[[Q:.*]] = graph.and %[[ALIVE]], %[[P]]
// CHECK:           graph.yield %[[Q]]
// CHECK:         } body {
// CHECK:           %[[C1:.*]] = graph.mul
// CHECK:           %[[A1:.*]] = graph.cmp ge
// CHECK:           %[[N2:.*]] = graph.mul %[[C1]]
// CHECK:           %[[K2:.*]] = graph.broadcast %[[A1]]
// CHECK:           %[[C2:.*]] = graph.select %[[K2]], %[[N2]], %[[C1]]
// CHECK:           %[[T2:.*]] = graph.cmp ge
// CHECK:           %[[A2:.*]] = graph.and %[[A1]], %[[T2]]
// CHECK:           %[[N3:.*]] = graph.mul %[[C2]]
// CHECK:           %[[K3:.*]] = graph.broadcast %[[A2]]
// CHECK:           %[[C3:.*]] = graph.select %[[K3]], %[[N3]], %[[C2]]
// CHECK-NEXT:      graph.yield %[[C3]], %[[A2]]
// CHECK:         func.return %[[R]]
// ONE-LABEL:   func.func @halve(
// ONE-NOT:       graph.and
func.func @halve(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %r = graph.while (%x) : (!graph.tensor<[N], f32>) cond {
  ^bb0(%c: !graph.tensor<[N], f32>):
    %sq = graph.mul %c, %c : !graph.tensor<[N], f32>
    %s = graph.reduce sum %sq [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %one = graph.constant 1.0 : f32 -> !graph.tensor<[], f32>
    %p = graph.cmp ge, %s, %one : !graph.tensor<[], f32>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%c: !graph.tensor<[N], f32>):
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
    %n = graph.mul %c, %h : !graph.tensor<[N], f32>
    graph.yield %n : !graph.tensor<[N], f32>
  }
  func.return %r : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @costly(
// CHECK:         graph.while (%x, %w) :
// CHECK-NOT:     graph.select
func.func @costly(%x: !graph.tensor<[4, 4], f32>, %w: !graph.tensor<[4, 4], f32>) -> !graph.tensor<[4, 4], f32> {
  %r:2 = graph.while (%x, %w) : (!graph.tensor<[4, 4], f32>, !graph.tensor<[4, 4], f32>) cond {
  ^bb0(%c: !graph.tensor<[4, 4], f32>, %v: !graph.tensor<[4, 4], f32>):
    %s = graph.reduce sum %c [0, 1] : !graph.tensor<[4, 4], f32> -> !graph.tensor<[], f32>
    %one = graph.constant 1.0 : f32 -> !graph.tensor<[], f32>
    %p = graph.cmp ge, %s, %one : !graph.tensor<[], f32>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%c: !graph.tensor<[4, 4], f32>, %v: !graph.tensor<[4, 4], f32>):
    %n = graph.matmul %c, %v : (!graph.tensor<[4, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[4, 4], f32>
    graph.yield %n, %v : !graph.tensor<[4, 4], f32>, !graph.tensor<[4, 4], f32>
  }
  func.return %r#0 : !graph.tensor<[4, 4], f32>
}

// -----

// A dead carry: canonicalize rebuilds the unrolled loop without it, and the
// loop stays marked, so fuse does not unroll it again.

// CHECK-LABEL: func.func @dead_carry(
// CHECK:         graph.while ({{.*}}) : ({{.*}}) attributes {unrolled = 3 : i64} cond {
// FUSED-LABEL: func.func @dead_carry(
// FUSED:         graph.while ({{.*}}) : ({{.*}}) attributes {unrolled = 3 : i64} cond {
// FUSED-COUNT-2:  = graph.and %
// FUSED-NOT:      = graph.and %
func.func @dead_carry(%n: !graph.tensor<[], i64>) -> !graph.tensor<[], i64> {
  %zero = graph.constant 0 : i64 -> !graph.tensor<[], i64>
  %r:3 = graph.while (%zero, %zero, %n) : (!graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[], i64>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %d: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>):
    %p = graph.cmp lt, %i, %m : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %d: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>):
    %one = graph.constant 1 : i64 -> !graph.tensor<[], i64>
    %i2 = graph.add %i, %one : !graph.tensor<[], i64>
    %d2 = graph.add %d, %one : !graph.tensor<[], i64>
    graph.yield %i2, %d2, %m : !graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[], i64>
  }
  func.return %r#0 : !graph.tensor<[], i64>
}
