// tile: a graph.for whose body is one pointwise kernel that reads the
// carries it changes at each lane's own element only becomes one
// loop.kernel with the loop inside (an scf.for over the trip count, the
// carries in registers, xs read and ys written per iteration); any other
// graph.for keeps its loop on the host, its body's kernels tiled in place.

// RUN: irc-opt %s --split-input-file -p fuse,tile | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse,tile | irc-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @devloop(
// CHECK-NOT:     = graph.for
// CHECK:         %r, %r_1 = loop.kernel @k0 pointwise (%c, %xs) grid [(D*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [D, N, T] reason "{{.*}}device loop: the whole graph.for (T iterations) runs in this kernel
// CHECK:           %[[INIT:.*]] = loop.read %0[
// CHECK:           %[[LAST:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %[[INIT]]) -> (!loop.tile<[1024], f32>) : i64 {
// CHECK:             loop.read %1[%[[I]], %{{.*}}, %{{.*}}]
// CHECK:             loop.write %{{.*}} to 1[%[[I]], %{{.*}}, %{{.*}}]
// CHECK:             scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.write %[[LAST]] to 0[
func.func @devloop(%c: !graph.tensor<[N, D], f32>, %xs: !graph.tensor<[T, N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>) {
  %r:2 = graph.for T carries (%c) : (!graph.tensor<[N, D], f32>) xs (%xs) : (!graph.tensor<[T, N, D], f32>) -> (!graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[N, D], f32>, %x: !graph.tensor<[N, D], f32>):
    %f = graph.cast %i : !graph.tensor<[], i64> -> !graph.tensor<[], f32>
    %fb = graph.broadcast %f : !graph.tensor<[], f32> -> !graph.tensor<[N, D], f32>
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[N, D], f32>
    %t = graph.mul %s, %h : !graph.tensor<[N, D], f32>
    %t2 = graph.add %t, %x : !graph.tensor<[N, D], f32>
    %u = graph.add %t2, %fb : !graph.tensor<[N, D], f32>
    graph.yield %u, %t2 : !graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[N, D], f32>, !graph.tensor<[T, N, D], f32>
}

// -----

// CHECK-LABEL: func.func @host_for(
// CHECK:         %r, %r_1 = graph.for N reverse carries (%c)
// CHECK:           loop.kernel @k0 reduction
// CHECK:           graph.yield
func.func @host_for(%c: !graph.tensor<[D], f32>, %xs: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N], f32>) {
  %r:2 = graph.for N reverse carries (%c) : (!graph.tensor<[D], f32>) xs (%xs) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[N], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[D], f32>, %x: !graph.tensor<[D], f32>):
    %t = graph.reduce sum %x [0] : !graph.tensor<[D], f32> -> !graph.tensor<[], f32>
    %tb = graph.broadcast %t : !graph.tensor<[], f32> -> !graph.tensor<[D], f32>
    %u = graph.add %s, %tb : !graph.tensor<[D], f32>
    graph.yield %u, %t : !graph.tensor<[D], f32>, !graph.tensor<[], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[D], f32>, !graph.tensor<[N], f32>
}

// -----

// A row update, `buf[i] = 0.5 * buf[i] + x[i]` (its capture: the row taken,
// updated, broadcast back and selected where iota == i), with `x` a carry
// yielded unchanged (a closure): the row is read where it is written, so the
// loop runs on the device; `x` is read in place and is not an output.

// CHECK-LABEL: func.func @row_update(
// CHECK-NOT:     = graph.for
// CHECK:         %[[R:.*]] = loop.kernel @k0 pointwise (%buf, %x) {{.*}}device loop: the whole graph.for (N iterations) runs in this kernel, pointwise over [N, D] in blocks of 1024; 1 unchanged carry read in place" : (!graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
// CHECK:           %[[INIT:.*]] = loop.read %0[
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[C:.*]] = %[[INIT]])
// CHECK-NOT:         loop.read %0
// CHECK:             loop.read %1[%[[I]], %{{.*}}]
// CHECK:             tile.select %{{.*}}, %{{.*}}, %[[C]]
// CHECK:         func.return %[[R]]
func.func @row_update(%buf: !graph.tensor<[N, D], f32>, %x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r:2 = graph.for N carries (%buf, %x) : (!graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>) xs () : () -> (!graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %b: !graph.tensor<[N, D], f32>, %xc: !graph.tensor<[N, D], f32>):
    %row = graph.take %b, %i [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[], i64>) -> !graph.tensor<[D], f32>
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[D], f32>
    %half = graph.mul %row, %h : !graph.tensor<[D], f32>
    %xrow = graph.take %xc, %i [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[], i64>) -> !graph.tensor<[D], f32>
    %new = graph.add %half, %xrow : !graph.tensor<[D], f32>
    %unit = graph.reshape %new : !graph.tensor<[D], f32> -> !graph.tensor<[1, D], f32>
    %spread = graph.broadcast %unit : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
    %iota = graph.iota [0] : !graph.tensor<[N, D], i64>
    %ib = graph.broadcast %i : !graph.tensor<[], i64> -> !graph.tensor<[N, D], i64>
    %here = graph.cmp eq, %iota, %ib : !graph.tensor<[N, D], i64>
    %next = graph.select %here, %spread, %b : !graph.tensor<[N, D], i1>, !graph.tensor<[N, D], f32>
    graph.yield %next, %xc : !graph.tensor<[N, D], f32>, !graph.tensor<[N, D], f32>
  }
  func.return %r#0 : !graph.tensor<[N, D], f32>
}

// -----

// The same update from the previous row, `buf[i] = 0.5 * buf[i - 1]`: row i
// reads another lane's element of the carry, so the loop stays on the host.

// CHECK-LABEL: func.func @previous_row_update(
// CHECK:         graph.for N carries
// CHECK:           loop.kernel @k0 pointwise
// CHECK:           graph.yield
func.func @previous_row_update(%buf: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %r = graph.for N carries (%buf) : (!graph.tensor<[N, D], f32>) xs () : () -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %b: !graph.tensor<[N, D], f32>):
    %one = graph.constant 1 : i64 -> !graph.tensor<[], i64>
    %prev = graph.sub %i, %one : !graph.tensor<[], i64>
    %row = graph.take %b, %prev [0] : (!graph.tensor<[N, D], f32>, !graph.tensor<[], i64>) -> !graph.tensor<[D], f32>
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[D], f32>
    %half = graph.mul %row, %h : !graph.tensor<[D], f32>
    %unit = graph.reshape %half : !graph.tensor<[D], f32> -> !graph.tensor<[1, D], f32>
    %spread = graph.broadcast %unit : !graph.tensor<[1, D], f32> -> !graph.tensor<[N, D], f32>
    %iota = graph.iota [0] : !graph.tensor<[N, D], i64>
    %ib = graph.broadcast %i : !graph.tensor<[], i64> -> !graph.tensor<[N, D], i64>
    %here = graph.cmp eq, %iota, %ib : !graph.tensor<[N, D], i64>
    %next = graph.select %here, %spread, %b : !graph.tensor<[N, D], i1>, !graph.tensor<[N, D], f32>
    graph.yield %next : !graph.tensor<[N, D], f32>
  }
  func.return %r : !graph.tensor<[N, D], f32>
}

// -----

// A graph.while whose condition is one kernel (a whole reduction of the
// carry) and whose body is one pointwise kernel, over a static carry that
// fits one program (at most 4096 elements): fuse leaves it as it is (not
// unrolled) and tile makes it one loop.kernel of one program, an scf.while
// inside whose test reduces the lanes (a damped approach to %t); the
// unchanged carry %t is read once, before the loop.

// CHECK-LABEL: func.func @device_while(
// CHECK-NOT:     = graph.while
// CHECK:         %r = loop.kernel @k0 pointwise (%x, %t) grid [1] tiles {BLOCK = 1024} symbols [] reason "graph.while of kernels k0, k1; device loop: the whole graph.while runs in this kernel, one program over [1000] in a block of 1024, the carries in registers, its predicate never read back; 1 unchanged carry read in place"
// CHECK:           %[[INIT:.*]] = loop.read %0[%[[LANES:.*]]] mask %[[MASK:.*]] :
// CHECK:           %[[TARGET:.*]] = loop.read %1[%[[LANES]]] mask %[[MASK]] :
// CHECK:           %[[LAST:.*]] = scf.while (%[[C:.*]] = %[[INIT]]) : (!loop.tile<[1024], f32>) -> !loop.tile<[1024], f32> {
// CHECK:             %[[GAP:.*]] = tile.binary sub %[[C]], %[[TARGET]]
// CHECK:             %[[SUM:.*]] = tile.reduce sum
// CHECK:             %[[TEST:.*]] = tile.cmp gt %[[SUM]],
// CHECK:             scf.condition(%[[TEST]]) %[[C]]
// CHECK:           } do {
// CHECK:           ^{{.*}}(%[[D:.*]]: !loop.tile<[1024], f32>):
// CHECK:             %[[STEP:.*]] = tile.binary sub %[[TARGET]], %[[D]]
// CHECK:             %[[HALF:.*]] = tile.binary mul %[[STEP]],
// CHECK:             %[[NEXT:.*]] = tile.binary add %[[D]], %[[HALF]]
// CHECK:             scf.yield %[[NEXT]]
// CHECK:           }
// CHECK-NEXT:      loop.write %[[LAST]] to 0[%[[LANES]]] mask %[[MASK]]
// CHECK:         func.return %r
func.func @device_while(%x: !graph.tensor<[1000], f32>, %t: !graph.tensor<[1000], f32>) -> !graph.tensor<[1000], f32> {
  %r:2 = graph.while (%x, %t) : (!graph.tensor<[1000], f32>, !graph.tensor<[1000], f32>) cond {
  ^bb0(%c: !graph.tensor<[1000], f32>, %u: !graph.tensor<[1000], f32>):
    %gap = graph.sub %c, %u : !graph.tensor<[1000], f32>
    %sq = graph.mul %gap, %gap : !graph.tensor<[1000], f32>
    %s = graph.reduce sum %sq [0] : !graph.tensor<[1000], f32> -> !graph.tensor<[], f32>
    %tol = graph.constant 1.0e-6 : f32 -> !graph.tensor<[], f32>
    %p = graph.cmp gt, %s, %tol : !graph.tensor<[], f32>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%c: !graph.tensor<[1000], f32>, %u: !graph.tensor<[1000], f32>):
    %d = graph.sub %u, %c : !graph.tensor<[1000], f32>
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[1000], f32>
    %hd = graph.mul %d, %h : !graph.tensor<[1000], f32>
    %n = graph.add %c, %hd : !graph.tensor<[1000], f32>
    graph.yield %n, %u : !graph.tensor<[1000], f32>, !graph.tensor<[1000], f32>
  }
  func.return %r#0 : !graph.tensor<[1000], f32>
}

// -----

// The same loop over a symbolic carry does not fit one program for every
// size: fuse unrolls it (8 iterations per host decision) and its kernels
// are tiled in place, for bufferize to run the loop on the host.

// CHECK-LABEL: func.func @host_while(
// CHECK:         = graph.while
// CHECK-SAME:    unrolled = 8
// CHECK:           loop.kernel @{{.*}} reduction
// CHECK-NOT:     scf.while
func.func @host_while(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
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

// Over N <= 4096 lanes (a guard's fact), with a counter: the counter is a
// whole carry (a scalar in registers) beside the lanewise one, and the
// launch chooses the program's block (the next power of two of N, at most
// 4096).

// CHECK-LABEL: func.func @bounded_while(
// CHECK:         %r, %r_1 = loop.kernel @k1 pointwise (%x, %{{.*}}) grid [1] tiles {BLOCK = 4096} symbols [N] reason "graph.while of kernels k1, k2, k3; device loop: the whole graph.while runs in this kernel, one program over [N] in a block of 4096 (chosen at launch), the carries in registers, its predicate never read back" attributes {launch_tiles = {BLOCK = #sym.expr<N>}}
// CHECK:           %[[X:.*]] = loop.read %0[%{{.*}}] mask %{{.*}} : !graph.tensor<[N], f32>
// CHECK:           %[[I:.*]] = loop.read %1[] : !graph.tensor<[], i64>[] -> i64
// CHECK:           %{{.*}}, %{{.*}} = scf.while (%{{.*}} = %[[X]], %{{.*}} = %[[I]]) : (!loop.tile<[4096], f32>, i64) -> (!loop.tile<[4096], f32>, i64) {
// CHECK:             tile.reduce max
// CHECK:             tile.cmp lt
// CHECK:             tile.binary and
// CHECK:             scf.condition
func.func @bounded_while(%x: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[], i64>) {
  sym.guard N <= 4096
  %zero = graph.constant 0 -> !graph.tensor<[], i64>
  %r:2 = graph.while (%x, %zero) : (!graph.tensor<[N], f32>, !graph.tensor<[], i64>) cond {
  ^bb0(%c: !graph.tensor<[N], f32>, %i: !graph.tensor<[], i64>):
    %m = graph.reduce max %c [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %one = graph.constant 1.0 : f32 -> !graph.tensor<[], f32>
    %big = graph.cmp gt, %m, %one : !graph.tensor<[], f32>
    %cap = graph.constant 100 -> !graph.tensor<[], i64>
    %more = graph.cmp lt, %i, %cap : !graph.tensor<[], i64>
    %p = graph.and %big, %more : !graph.tensor<[], i1>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%c: !graph.tensor<[N], f32>, %i: !graph.tensor<[], i64>):
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
    %n = graph.mul %c, %h : !graph.tensor<[N], f32>
    %o = graph.constant 1 -> !graph.tensor<[], i64>
    %j = graph.add %i, %o : !graph.tensor<[], i64>
    graph.yield %n, %j : !graph.tensor<[N], f32>, !graph.tensor<[], i64>
  }
  func.return %r#0, %r#1 : !graph.tensor<[N], f32>, !graph.tensor<[], i64>
}

// -----

// A graph.cond whose branches are pointwise kernels over its results' shape
// (the then-branch passes %y on) is one pointwise kernel: each program reads
// the predicate (a 0-d input another kernel wrote) and computes the taken
// branch in an scf.if.

// CHECK-LABEL: func.func @device_cond(
// CHECK:         %[[P:.*]] = loop.kernel @k0 reduction (%x)
// CHECK-NOT:     = graph.cond
// CHECK:         %r, %r_1 = loop.kernel @k1 pointwise (%[[P]], %x, %y) grid [(N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N] reason "graph.cond of kernels k1, k2; device cond: each program reads the predicate and computes the taken branch, pointwise over [N] in blocks of 1024"
// CHECK:           %[[TAKEN:.*]] = loop.read %0[] : !graph.tensor<[], i1>[] -> i1
// CHECK:           %{{.*}}, %{{.*}} = scf.if %[[TAKEN]] -> (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>) {
// CHECK:             tile.binary mul
// CHECK:             scf.yield
// CHECK:           } else {
// CHECK:             tile.binary add
// CHECK:             scf.yield
// CHECK:           }
func.func @device_cond(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %s = graph.reduce sum %x [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[], f32>
  %p = graph.cmp gt, %s, %z : !graph.tensor<[], f32>
  %r:2 = graph.cond %p (%x, %y) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  ^bb0(%a: !graph.tensor<[N], f32>, %b: !graph.tensor<[N], f32>):
    %h = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
    %m = graph.mul %a, %h : !graph.tensor<[N], f32>
    graph.yield %m, %b : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  } else {
  ^bb0(%a: !graph.tensor<[N], f32>, %b: !graph.tensor<[N], f32>):
    %o = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
    %m = graph.add %a, %o : !graph.tensor<[N], f32>
    graph.yield %m, %b : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  }
  func.return %r#0, %r#1 : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}
