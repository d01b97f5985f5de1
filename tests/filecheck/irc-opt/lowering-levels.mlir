// Each lowering pass takes one level: given a module at a level above it,
// irc-opt says, at the pass in -p, which passes to run first instead of
// exiting 0 with the module unchanged (below it, a lowering has nothing
// left to do).

// RUN: not irc-opt %s -p bufferize 2>&1 | filecheck %s --check-prefix=EARLY
// EARLY-NOT: Traceback
// EARLY:     pass-pipeline:1:1: error: pass 'bufferize' lowers loop-level IR, but the module is at the graph level: run 'fuse,tile' before it (or 'lower-to-triton' for all of it)

// RUN: not irc-opt %s -p fuse,lower-memory-to-triton 2>&1 | filecheck %s --check-prefix=LATER
// LATER:     pass-pipeline:1:6: error: pass 'lower-memory-to-triton' lowers memory-level IR, but the module is at the fusion level: run 'tile,bufferize' before it (or 'lower-to-triton' for all of it)
// LATER-NEXT: fuse,lower-memory-to-triton
// LATER-NEXT:      ^^^^^^^^^^^^^^^^^^^^^^

// lower-to-triton runs as the passes it stands for, so --print-ir-after-all
// shows each of them.
// RUN: irc-opt %s -p canonicalize,lower-to-triton --print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=DUMPS
// DUMPS:      IR Dump After canonicalize
// DUMPS:      IR Dump After fuse
// DUMPS-NEXT: builtin.module {
// DUMPS:        fusion.kernel @k0 pointwise
// DUMPS:      IR Dump After tile
// DUMPS:        loop.kernel @k0 pointwise
// DUMPS:      IR Dump After bufferize
// DUMPS:      IR Dump After cse
// DUMPS:      IR Dump After lower-memory-to-triton
// DUMPS:        triton.kernel @k0 pointwise
// DUMPS:      IR Dump After combine-launches
// DUMPS-NOT:  IR Dump After

// Only the targets that mean something for irc are offered.
// RUN: not irc-opt %s -t wgsl 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: error: argument -t/--target: invalid choice: 'wgsl' (choose from mlir, triton, dot)

func.func @f(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = graph.exp %x : !graph.tensor<[N], f32>
  func.return %y : !graph.tensor<[N], f32>
}
