// The collective dialect's ops on tensors (graph to loop levels) and on
// buffers (memory and triton levels) print and parse back; a gather
// multiplies its dim by the group size, a scatter divides it.

// RUN: irc-opt %s | filecheck %s
// RUN: irc-opt %s | irc-opt | filecheck %s

// CHECK-LABEL: func.func @every_op
func.func @every_op(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  // CHECK: collective.all_reduce %x {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  %a = collective.all_reduce %x {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  // CHECK: collective.all_gather {{.*}} axes = ["data", "model"], dim = 0 : i64, tiled} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[4*N, 4], f32>
  %g = collective.all_gather %a {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data", "model"], dim = 0 : i64, tiled} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[4*N, 4], f32>
  // CHECK: collective.reduce_scatter {{.*}} : !graph.tensor<[4*N, 4], f32> -> !graph.tensor<[2*N, 4], f32>
  %s = collective.reduce_scatter %g {mesh = #collective.mesh<data = 2, model = 2>, axes = ["model"], reduction = "sum", dim = 0 : i64, tiled} : !graph.tensor<[4*N, 4], f32> -> !graph.tensor<[2*N, 4], f32>
  // CHECK: collective.all_to_all {{.*}} : !graph.tensor<[2*N, 4], f32> -> !graph.tensor<[N, 8], f32>
  %t = collective.all_to_all %s {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data"], split_dim = 0 : i64, concat_dim = 1 : i64} : !graph.tensor<[2*N, 4], f32> -> !graph.tensor<[N, 8], f32>
  // CHECK: collective.ppermute {{.*}} pairs = array<i64: 0, 1, 1, 0>
  %p = collective.ppermute %x {mesh = #collective.mesh<data = 2, model = 2>, axes = ["model"], pairs = array<i64: 0, 1, 1, 0>} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  // CHECK: collective.broadcast {{.*}} root = 1 : i64
  %b = collective.broadcast %p {mesh = #collective.mesh<data = 2, model = 2>, axes = ["model"], root = 1 : i64} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  // CHECK: collective.axis_index {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data", "model"]} : !graph.tensor<[], i32>
  %i = collective.axis_index {mesh = #collective.mesh<data = 2, model = 2>, axes = ["data", "model"]} : !graph.tensor<[], i32>
  func.return %b : !graph.tensor<[N, 4], f32>
}

// CHECK-LABEL: func.func @on_buffers
func.func @on_buffers(%x: !memory.buffer<[N], [1], f32>, %y: !memory.buffer<[2*N], [1], f32>, %i: !memory.buffer<[], [], i32>) {
  // CHECK: collective.all_gather %x into %y {{.*}} : !memory.buffer<[N], [1], f32> into !memory.buffer<[2*N], [1], f32>
  collective.all_gather %x into %y {mesh = #collective.mesh<data = 2>, axes = ["data"], dim = 0 : i64, tiled} : !memory.buffer<[N], [1], f32> into !memory.buffer<[2*N], [1], f32>
  // CHECK: collective.axis_index {{.*}} into %i : !memory.buffer<[], [], i32>
  collective.axis_index {mesh = #collective.mesh<data = 2>, axes = ["data"]} into %i : !memory.buffer<[], [], i32>
  func.return
}
