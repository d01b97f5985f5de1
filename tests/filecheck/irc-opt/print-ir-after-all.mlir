// --print-ir-after-all prints the IR to stderr after every pass of the
// pipeline, each dump headed as in MLIR.

// RUN: irc-opt %s -p cse,canonicalize --print-ir-after-all -o /dev/null 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
// CHECK-NEXT:     %y = graph.exp %x : !graph.tensor<[N], f32>
// CHECK-NEXT:     %sum = graph.add %y, %y : !graph.tensor<[N], f32>
// CHECK-NEXT:     func.return %sum : !graph.tensor<[N], f32>
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      // -----// IR Dump After canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NOT:  IR Dump After

func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = graph.exp %x : !graph.tensor<[N], f32>
  %z = graph.exp %x : !graph.tensor<[N], f32>
  %unused = graph.neg %x : !graph.tensor<[N], f32>
  %sum = graph.add %y, %z : !graph.tensor<[N], f32>
  func.return %sum : !graph.tensor<[N], f32>
}
