// bufferize on collectives: each becomes its buffer form between the
// launches, writing a buffer allocated as a kernel output's is; its input
// stays alive (not reused) until its result is first read, where the
// launcher waits for it.

// RUN: irc-opt %s -p fuse,tile,bufferize | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK: memory.launch @k0(%x, %[[E:.*]]) :
// CHECK: %[[OUT:.*]] = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
// CHECK-NEXT: collective.all_reduce %[[E]] into %[[OUT]] {{.*}} : !memory.buffer<[N, 4], [4, 1], f32> into !memory.buffer<[N, 4], [4, 1], f32>
// The product's buffer is fresh: the all-reduce's input is still in flight.
// CHECK-NEXT: %[[M:.*]] = memory.alloc
// CHECK-NEXT: memory.launch @k1(%[[OUT]], %x, %[[M]])
// CHECK-NEXT: memory.dealloc %[[OUT]]
// CHECK-NEXT: memory.dealloc %[[E]]
func.func @f(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  %e = graph.exp %x : !graph.tensor<[N, 4], f32>
  %s = collective.all_reduce %e {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  %m = graph.mul %s, %x : !graph.tensor<[N, 4], f32>
  func.return %m : !graph.tensor<[N, 4], f32>
}
