// -t dot draws each function as a Graphviz digraph: arguments as ellipses,
// ops as nodes with their kind, values as edges labelled with their
// symbolic shapes, and each kernel fuse formed as a cluster captioned with
// its name and kind (its reason the tooltip).

// RUN: irc-opt %s -p fuse -t dot | filecheck %s
// RUN: irc-opt %s -t dot | filecheck %s --check-prefix=GRAPH

// CHECK:      digraph "softmax" {
// CHECK:        n0 [label="x\n[N, D] f32", shape=ellipse
// CHECK:        subgraph "cluster_k0" {
// CHECK-NEXT:     label="k0 · reduction"; tooltip="row reduction over [1] of [N, D]
// CHECK:          n[[MAX:[0-9]+]] [label="graph.reduce max"
// CHECK:          n[[SUM:[0-9]+]] [label="graph.reduce sum"
// CHECK:        }
// CHECK:        n0 -> n[[MAX]] [label="[N, D] f32"];
// CHECK:        -> n[[SUM]] [label="[N, D] f32"];
// CHECK:      }

// GRAPH:      digraph "softmax" {
// GRAPH-NOT:  cluster
// GRAPH:        [label="graph.reduce max"
// GRAPH:        [label="func.return"

func.func @softmax(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %max = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %b = graph.broadcast %max : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
  %shifted = graph.sub %x, %b : !graph.tensor<[N, D], f32>
  %e = graph.exp %shifted : !graph.tensor<[N, D], f32>
  %sum = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %s = graph.broadcast %sum : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
  %y = graph.div %e, %s : !graph.tensor<[N, D], f32>
  func.return %y : !graph.tensor<[N, D], f32>
}
