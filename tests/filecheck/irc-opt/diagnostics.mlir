// irc-opt reports errors as located diagnostics on stderr and exits with
// status 1 (`not` inverts it for lit), never with a Python traceback.

// RUN: not irc-opt %s -p cse,frobnicate 2>&1 | filecheck %s --check-prefix=PASS
// PASS-NOT:  Traceback
// PASS:      pass-pipeline:1:5: error: unknown pass 'frobnicate'; known passes: annotate-sharding, auto-mixed-precision, autodiff, bufferize, canonicalize, combine-launches, cse, dce, dedupe-kernels, fuse, horizontal-fusion, lower-memory-to-triton, lower-to-triton, partition, propagate-sharding, tile, unroll-while
// PASS-NEXT: cse,frobnicate
// PASS-NEXT: {{^    \^{10}$}}
// PASS-NOT:  Traceback

// RUN: not irc-opt %s -p 'canonicalize{max-iterations=3}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION-NOT: Traceback
// OPTION:     pass-pipeline:1:1: error: invalid options for pass 'canonicalize': Provided arguments ["max_iterations"] not found
// OPTION-NOT: Traceback

// RUN: not irc-opt %s -p 'unroll-while{factor=0}' 2>&1 | filecheck %s --check-prefix=FACTOR
// FACTOR-NOT: Traceback
// FACTOR:     pass-pipeline:1:1: error: invalid options for pass 'unroll-while': unroll-while option factor=0 must be a positive integer
// FACTOR-NOT: Traceback

// RUN: not irc-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// VERIFY-NOT:  Traceback
// VERIFY:      diagnostics.mlir:[[# @LINE + 5]]:8: error: 'graph.reshape' op cannot reshape [N] (N elements) to [M] (M elements)
// VERIFY-NEXT: {{^  %0 = graph.reshape %x : .*$}}
// VERIFY-NEXT: {{^       \^{13}$}}
// VERIFY-NOT:  Traceback
func.func @f(%x: !graph.tensor<[N], f32>) {
  %0 = graph.reshape %x : !graph.tensor<[N], f32> -> !graph.tensor<[M], f32>
  func.return
}
