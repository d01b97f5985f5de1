// bufferize: control flow runs on the host as scf over buffers. Each carry
// has two buffers, allocated once before the loop and swapped each
// iteration (the body yields next, current); the initial carry is copied
// in; a loop-invariant carry is read in place; a predicate computed on the
// device is read back by memory.read_scalar; a trip count is memory.size of
// its symbolic expression; xs and ys are read and written one row at a
// time through memory.row; a returned carry is copied once, after the loop;
// a body's dead temporary gives its buffer to a later one. (The cond's
// then-branch reduces its operand: it does not fit one pointwise kernel, so
// the cond decides on the host; tile-control-flow.mlir has device conds.)

// RUN: irc-opt %s --split-input-file -p fuse,tile,bufferize | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse,tile,bufferize | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse,tile,bufferize --print-op-generic | irc-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @classic(
// CHECK:         %zero = memory.alloc : !memory.buffer<[], [], i64>
// CHECK-NEXT:    memory.launch @k0(%zero)
// CHECK-NEXT:    %carry = memory.alloc : !memory.buffer<[], [], i64>
// CHECK-NEXT:    %carry_next = memory.alloc : !memory.buffer<[], [], i64>
// CHECK-NEXT:    memory.copy %zero, %carry
// CHECK-NEXT:    %carry_1 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    %carry_next_1 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.copy %x, %carry_1
// CHECK-NEXT:    %p = memory.alloc : !memory.buffer<[], [], i1>
// CHECK-NEXT:    %q = memory.alloc : !memory.buffer<[], [], i1>
// CHECK-NEXT:    %r, %r_1, %{{.*}}, %{{.*}} = scf.while (%[[I:.*]] = %carry, %[[X:.*]] = %carry_1, %[[IN:.*]] = %carry_next, %[[XN:.*]] = %carry_next_1)
// CHECK-NEXT:      memory.launch @k1(%[[I]], %n, %p)
// CHECK-NEXT:      %decision = memory.read_scalar %p : !memory.buffer<[], [], i1> -> i1
// CHECK-NEXT:      scf.condition(%decision) %[[I]], %[[X]], %[[IN]], %[[XN]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[I2:.*]]: !memory.buffer<[], [], i64>, %[[X2:.*]]: !memory.buffer<[N], [1], f32>, %[[IN2:.*]]: !memory.buffer<[], [], i64>, %[[XN2:.*]]: !memory.buffer<[N], [1], f32>):
// CHECK-NEXT:      memory.launch @k2(%[[I2]], %[[IN2]])
// CHECK-NEXT:      memory.launch @k3(%[[X2]], %q)
// CHECK-NEXT:      %decision_1 = memory.read_scalar %q
// CHECK-NEXT:      scf.if %decision_1 {
// CHECK-NEXT:        memory.launch @k4(%[[X2]], %[[XN2]])
// CHECK-NEXT:      } else {
// CHECK-NEXT:        memory.launch @k5(%[[X2]], %[[XN2]])
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[IN2]], %[[XN2]], %[[I2]], %[[X2]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %r_2 = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.copy %r_1, %r_2
// CHECK-NEXT:    memory.dealloc %zero
// CHECK-NEXT:    func.return %r_2
func.func @classic(%x: !graph.tensor<[N], f32>, %n: !graph.tensor<[], i64>) -> !graph.tensor<[N], f32> {
  %zero = graph.constant 0 : i64 -> !graph.tensor<[], i64>
  %r:3 = graph.while (%zero, %n, %x) : (!graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %p = graph.cmp lt, %i, %m : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %one = graph.constant 1 : i64 -> !graph.tensor<[], i64>
    %j = graph.add %i, %one : !graph.tensor<[], i64>
    %s = graph.reduce sum %v [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %z = graph.constant 0.0 : f32 -> !graph.tensor<[], f32>
    %q = graph.cmp gt, %s, %z : !graph.tensor<[], f32>
    %w = graph.cond %q (%v) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %mx = graph.reduce max %a [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
      %mb = graph.broadcast %mx : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
      %b = graph.sub %a, %mb : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    } else {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %t = graph.constant 1.0 : f32 -> !graph.tensor<[N], f32>
      %b = graph.add %a, %t : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    }
    graph.yield %j, %m, %w : !graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>
  }
  func.return %r#2 : !graph.tensor<[N], f32>
}

// -----

// CHECK-LABEL: func.func @host_for(
// CHECK:         %r = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    %[[ZERO:.*]] = memory.size 0 : i64
// CHECK-NEXT:    %trips = memory.size N : i64
// CHECK-NEXT:    %[[ONE:.*]] = memory.size 1 : i64
// CHECK-NEXT:    %[[LAST:.*]] = memory.size N - 1 : i64
// CHECK-NEXT:    scf.for %[[K:.*]] = %[[ZERO]] to %trips step %[[ONE]] iter_args(%[[C:.*]] = %carry, %[[CN:.*]] = %carry_next)
// CHECK-NEXT:      %[[I:.*]] = arith.subi %[[LAST]], %[[K]] : i64
// CHECK-NEXT:      %[[X:.*]] = memory.row %xs[%[[I]]] : !memory.buffer<[N, D], [D, 1], f32>[i64] -> !memory.buffer<[D], [1], f32>
// CHECK-NEXT:      %[[Y:.*]] = memory.row %r[%[[I]]] : !memory.buffer<[N], [1], f32>[i64] -> !memory.buffer<[], [], f32>
// CHECK-NEXT:      memory.launch @k0(%[[X]], %[[C]], %[[Y]], %[[CN]])
// CHECK-NEXT:      scf.yield %[[CN]], %[[C]]
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

// The body's buffers are allocated once, before the loop; %a is dead once
// the second matmul has read it, so the third writes into it.
// CHECK-LABEL: func.func @body_storage(
// CHECK:         %a = memory.alloc : !memory.buffer<[B, 8], [8, 1], f32>
// CHECK-NEXT:    %b = memory.alloc : !memory.buffer<[B, 8], [8, 1], f32>
// CHECK-NEXT:    %r, %{{.*}} = scf.for %{{.*}} = %{{.*}} to %trips step %{{.*}} iter_args(%[[C:.*]] = %carry, %[[CN:.*]] = %carry_next)
// CHECK-NEXT:      memory.launch @k0(%[[C]], %w, %a)
// CHECK-NEXT:      memory.launch @k1(%a, %w, %b)
// CHECK-NEXT:      memory.launch @k2(%b, %w, %a)
// CHECK-NEXT:      memory.launch @k3(%a, %w, %[[CN]])
// CHECK-NEXT:      scf.yield %[[CN]], %[[C]]
func.func @body_storage(%h: !graph.tensor<[B, 8], f32>, %w: !graph.tensor<[8, 8], f32>) -> !graph.tensor<[B, 8], f32> {
  %r:2 = graph.for T carries (%h, %w) : (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) xs () : () -> (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) {
  ^bb0(%i: !graph.tensor<[], i64>, %s: !graph.tensor<[B, 8], f32>, %v: !graph.tensor<[8, 8], f32>):
    %a = graph.matmul %s, %v : (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[B, 8], f32>
    %b = graph.matmul %a, %v : (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[B, 8], f32>
    %c = graph.matmul %b, %v : (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[B, 8], f32>
    %d = graph.matmul %c, %v : (!graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[B, 8], f32>
    graph.yield %d, %v : !graph.tensor<[B, 8], f32>, !graph.tensor<[8, 8], f32>
  }
  func.return %r#0 : !graph.tensor<[B, 8], f32>
}
