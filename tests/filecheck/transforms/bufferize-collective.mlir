// bufferize on collectives: each becomes its buffer form between the
// launches, writing a buffer allocated as a kernel output's is; its input
// stays alive (not reused) until its result is first read, where the
// launcher waits for it, or to the end for a result nobody reads (the
// launcher waits for it there).

// RUN: irc-opt %s --split-input-file -p fuse,tile,bufferize | filecheck %s

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

// -----

// Nobody reads %s: the first all-reduce is in flight until the end, so its
// input %e is never given to a later value (the second all-reduce's result
// is fresh). Its output's buffer may be (the launcher waits for the
// collective before a kernel writes that buffer).
// CHECK-LABEL: func.func @unread
// CHECK: memory.launch @k0(%x, %e) :
// CHECK-NEXT: %s = memory.alloc
// CHECK-NEXT: collective.all_reduce %e into %s
// CHECK-NEXT: %a = memory.reuse %s
// CHECK-NEXT: memory.launch @k1(%x, %a)
// CHECK-NEXT: %r = memory.alloc
// CHECK-NEXT: collective.all_reduce %a into %r
// CHECK-NOT: memory.reuse %e
// CHECK: func.return
func.func @unread(%x: !graph.tensor<[N, 4], f32>) -> !graph.tensor<[N, 4], f32> {
  %e = graph.exp %x : !graph.tensor<[N, 4], f32>
  %s = collective.all_reduce %e {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  %a = graph.tanh %x : !graph.tensor<[N, 4], f32>
  %r = collective.all_reduce %a {mesh = #collective.mesh<data = 2>, axes = ["data"], reduction = "sum"} : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  %m = graph.mul %r, %x : !graph.tensor<[N, 4], f32>
  func.return %m : !graph.tensor<[N, 4], f32>
}
