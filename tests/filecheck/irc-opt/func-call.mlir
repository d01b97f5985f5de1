// Calls between functions run on the reference interpreter, but the
// lowering takes one function at a time: fuse refuses a call, at the call.

// RUN: not irc-opt %s -p lower-to-triton 2>&1 | filecheck %s
// CHECK-NOT:  Traceback
// CHECK:      func-call.mlir:[[# @LINE + 4]]:8: error: 'func.call' op: pass 'fuse' failed: fuse: func.call @helper in @main is not supported: irc lowers each function on its own; inline the callee (a Python function called while tracing is inlined)
// CHECK-NEXT: {{^  %h = func.call @helper}}

func.func @main(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %h = func.call @helper(%x) : (!graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return %h : !graph.tensor<[N], f32>
}
func.func private @helper(%a: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %m = graph.exp %a : !graph.tensor<[N], f32>
  func.return %m : !graph.tensor<[N], f32>
}
