// The softmax of the README's quickstart as graph IR (what
// `irc.compile(softmax, irc.TensorSpec(("N", "D"), "float32")).ir("graph")`
// prints), for irc-opt:
//
//   irc-opt examples/softmax.mlir -p canonicalize,cse
//   irc-opt examples/softmax.mlir -p lower-to-triton -t triton
builtin.module {
  func.func @softmax(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
    %0 = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %1 = graph.broadcast %0 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %2 = graph.sub %x, %1 : !graph.tensor<[N, D], f32>
    %3 = graph.exp %2 : !graph.tensor<[N, D], f32>
    %4 = graph.reduce sum %3 [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
    %5 = graph.broadcast %4 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
    %6 = graph.div %3, %5 : !graph.tensor<[N, D], f32>
    func.return %6 : !graph.tensor<[N, D], f32>
  }
}
