// annotate-sharding, propagate-sharding and partition: a program written for
// whole arrays becomes the program each rank runs on its blocks, with the
// collectives its shardings imply. tests/test_sharding.py checks on
// generated programs that every rank's results equal the global ones.

// RUN: irc-opt %s --split-input-file -p 'annotate-sharding{mesh="model=2" arguments=";,model;model"},propagate-sharding' | filecheck %s --check-prefix=PROPAGATE
// RUN: irc-opt %s --split-input-file -p 'annotate-sharding{mesh="model=2" arguments=";,model;model"},partition' | filecheck %s --check-prefix=MEGATRON
// RUN: irc-opt %s --split-input-file -p 'annotate-sharding{mesh="data=2" arguments="data"},partition' | filecheck %s --check-prefix=DATA

// Megatron's MLP: w1 split by columns, w2 by rows; the second product is a
// partial sum, all-reduced once for the whole result.
// PROPAGATE: graph.matmul %x, %w1 {collective.shardings = [#collective.sharding<[[], ["model"]], []>]}
// PROPAGATE: graph.tanh %h {collective.shardings = [#collective.sharding<[[], ["model"]], []>]}
// PROPAGATE: graph.matmul %t, %w2 {collective.shardings = [#collective.sharding<[[], []], ["model"]>]}

// MEGATRON-LABEL: func.func @mlp(%x: !graph.tensor<[8, 4], f32>, %w1: !graph.tensor<[4, 3], f32>, %w2: !graph.tensor<[3, 4], f32>)
// MEGATRON: %y = graph.matmul %t, %w2 : (!graph.tensor<[8, 3], f32>, !graph.tensor<[3, 4], f32>) -> !graph.tensor<[8, 4], f32>
// MEGATRON-NEXT: %[[R:.*]] = collective.all_reduce %y {mesh = #collective.mesh<model = 2>, axes = ["model"], reduction = "sum"}
// MEGATRON-NEXT: func.return %[[R]]

// Data parallelism: x split by rows; the rows stay split, and the result,
// wanted whole, is gathered.
// DATA-LABEL: func.func @mlp(%x: !graph.tensor<[4, 4], f32>, %w1: !graph.tensor<[4, 6], f32>, %w2: !graph.tensor<[6, 4], f32>)
// DATA: %y = graph.matmul %t, %w2 : (!graph.tensor<[4, 6], f32>, !graph.tensor<[6, 4], f32>) -> !graph.tensor<[4, 4], f32>
// DATA-NEXT: collective.all_gather %y {{.*}} dim = 0 : i64, tiled} : !graph.tensor<[4, 4], f32> -> !graph.tensor<[8, 4], f32>
func.func @mlp(%x: !graph.tensor<[8, 4], f32>, %w1: !graph.tensor<[4, 6], f32>, %w2: !graph.tensor<[6, 4], f32>) -> !graph.tensor<[8, 4], f32> {
  %h = graph.matmul %x, %w1 : (!graph.tensor<[8, 4], f32>, !graph.tensor<[4, 6], f32>) -> !graph.tensor<[8, 6], f32>
  %t = graph.tanh %h : !graph.tensor<[8, 6], f32>
  %y = graph.matmul %t, %w2 : (!graph.tensor<[8, 6], f32>, !graph.tensor<[6, 4], f32>) -> !graph.tensor<[8, 4], f32>
  func.return %y : !graph.tensor<[8, 4], f32>
}
