// RUN: irc-opt %s -p lower-memory-to-triton,combine-launches | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton,combine-launches | irc-opt | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton,combine-launches -t triton | filecheck %s --check-prefix=PY
// RUN: irc-opt %s -p "lower-memory-to-triton,combine-launches{max-pieces=1}" | filecheck %s --check-prefix=OFF

// combine-launches: launches that are independent (neither writes a buffer
// the other reads or writes) and adjacent, or can be made adjacent, become
// one launch of a kernel that combines them, each a triton.piece of its
// flat grid, where the last of them was.
//
// In @main, @k0 (a 1-D grid of blocks) and @k1 (a 2-D grid, one program
// per element) both only read %x: one launch of @combo_k0_k1, which takes
// %x once, over 4*N + (4*N + 1023) floordiv 1024 programs; the piece of @k1
// starts where @k0's ends and keeps its grid [N, 4].
// @k0 on %0 reads what that launch wrote: a new group, which ends at the
// dealloc of %0 (@k0 on %0 cannot move past it). @k1 on %x starts the next
// group; @k2 chooses its BLOCK at launch (launch_tiles) and is launched
// alone, but it is independent of @k1 on %x, which moves down past it to
// join @k0 and @k1 on %y. @k0 and @k1 are still launched alone (@k1 in
// @printed), and stay.
// In @printed, a debug.print between two independent launches ends the
// group: no launch moves across it. In @again, the group of @main's first
// launch, with the same buffers in the same places: the same combined
// kernel.

// CHECK:       triton.kernel @combo_k0_k1 pointwise (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %out_1: !triton.ptr<f32>, %N: i64) inputs 1 grid [4*N + (4*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N]
// CHECK-SAME:    reason "combines @k0, @k1 into one launch: independent
// CHECK-SAME:    attributes {num_warps = 4 : i64, num_stages = 3 : i64}
// CHECK-NEXT:    triton.piece "k0" offset 0 grid [(4*N + 1023) floordiv 1024] reason "exp of x" {
// CHECK:           tile.program_id 0 : i64
// CHECK:         triton.piece "k1" offset (4*N + 1023) floordiv 1024 grid [N, 4] reason "negate, one element per program" {
// CHECK-NEXT:      tile.program_id 0 : i64
// CHECK-NEXT:      tile.program_id 1 : i64
// CHECK:       triton.kernel @k0 pointwise
// CHECK:       triton.kernel @combo_k1_k0_k1 pointwise ({{.*}}) inputs 2 grid [8*N + (4*N + 1023) floordiv 1024]
// CHECK:         triton.piece "k1" offset 0 grid [N, 4]
// CHECK:         triton.piece "k0" offset 4*N grid [(4*N + 1023) floordiv 1024]
// CHECK:         triton.piece "k1" offset 4*N + (4*N + 1023) floordiv 1024 grid [N, 4]
// CHECK:       triton.kernel @k1 pointwise
// CHECK:       triton.kernel @k2 pointwise
// CHECK:       func.func @main
// CHECK:         memory.launch @combo_k0_k1(%x, %0, %1)
// CHECK:         memory.launch @k0(%0, %2)
// CHECK-NEXT:    memory.dealloc %0
// CHECK-NEXT:    %3 = memory.alloc
// CHECK-NEXT:    %4 = memory.alloc
// CHECK-NEXT:    memory.launch @k2(%x, %4)
// CHECK-NEXT:    %5 = memory.alloc
// CHECK-NEXT:    %6 = memory.alloc
// CHECK-NEXT:    memory.launch @combo_k1_k0_k1(%x, %y, %3, %5, %6)
// CHECK-NEXT:    func.return
// CHECK:       func.func @printed
// CHECK:         memory.launch @k0(%x, %0)
// CHECK-NEXT:    debug.print
// CHECK:         memory.launch @k1(%x, %1)
// CHECK:       func.func @again
// CHECK:         memory.launch @combo_k0_k1(%x, %0, %1)

// The flat program id picks the piece; a piece's program ids are the index
// past its offset split over its grid, axis 0 fastest.

// PY:      def kernel_combo_k0_k1(
// PY:          pid = tl.program_id(0).to(tl.int64)
// PY-NEXT:     if pid < _irc_floordiv_i(((4 * tl.cast(s_N, tl.int64)) + 1023), tl.full([], 1024, tl.int64)):
// PY-NEXT:         # piece @k0, grid ['(4*N + 1023) floordiv 1024']: exp of x
// PY-NEXT:         pid_0 = pid
// PY:          else:
// PY-NEXT:         # piece @k1, grid ['N', '4']: negate, one element per program
// PY-NEXT:         pid_local = pid - _irc_floordiv_i(((4 * tl.cast(s_N, tl.int64)) + 1023), tl.full([], 1024, tl.int64))
// PY-NEXT:         pid_0_2 = pid_local % tl.cast(s_N, tl.int64)
// PY-NEXT:         pid_1 = pid_local // tl.cast(s_N, tl.int64)
// PY:      kernel_combo_k0_k1.run(

// OFF-NOT: combo
// OFF:     memory.launch @k0(%x, %0)
// OFF:     memory.launch @k1(%x, %1)

builtin.module {
  memory.kernel @k0 pointwise (%0: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [(4*N + 1023) floordiv 1024] tiles {BLOCK = 1024} symbols [N] reason "exp of x" {
    %1 = tile.constant 1024 : i64
    %2 = tile.size 4*N : i64
    %3 = tile.program_id 0 : i64
    %4 = tile.binary mul %3, %1 : (i64, i64) -> i64
    %5 = tile.range "BLOCK" : !loop.tile<[1024], i64>
    %6 = tile.binary add %4, %5 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
    %7 = tile.cmp lt %6, %2 : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
    %8 = memory.load %0[%6] mask %7 : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
    %9 = tile.unary exp %8 : !loop.tile<[1024], f32>
    memory.store %9, %out[%6] mask %7 : !loop.tile<[1024], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
  }
  memory.kernel @k1 pointwise (%in: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [N, 4] tiles {} symbols [] reason "negate, one element per program" {
    %i = tile.program_id 0 : i64
    %j = tile.program_id 1 : i64
    %four = tile.constant 4 : i64
    %row = tile.binary mul %i, %four : (i64, i64) -> i64
    %offset = tile.binary add %row, %j : (i64, i64) -> i64
    %value = memory.load %in[%offset] : !memory.buffer<[N, 4], [4, 1], f32>[i64] -> f32
    %negated = tile.unary neg %value : f32
    memory.store %negated, %out[%offset] : f32, !memory.buffer<[N, 4], [4, 1], f32>[i64]
  }
  memory.kernel @k2 pointwise (%0: !memory.buffer<[N, 4], [4, 1], f32>, %out: !memory.buffer<[N, 4], [4, 1], f32>) inputs 1 grid [1] tiles {BLOCK = 1024} symbols [N] reason "exp of x, one block of the launch's size" attributes {launch_tiles = {BLOCK = #sym.expr<4*N>}} {
    %1 = tile.constant 0 : i64
    %2 = tile.size 4*N : i64
    %3 = tile.block_size "BLOCK" : i64
    scf.for %start = %1 to %2 step %3 : i64 {
      %5 = tile.range "BLOCK" : !loop.tile<[1024], i64>
      %6 = tile.binary add %start, %5 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %7 = tile.cmp lt %6, %2 : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      %8 = memory.load %0[%6] mask %7 : !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      %9 = tile.unary exp %8 : !loop.tile<[1024], f32>
      memory.store %9, %out[%6] mask %7 : !loop.tile<[1024], f32>, !memory.buffer<[N, 4], [4, 1], f32>[!loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
    }
  }
  func.func @main(%x: !memory.buffer<[N, 4], [4, 1], f32>, %y: !memory.buffer<[N, 4], [4, 1], f32>) -> (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>) {
    %0 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%x, %0) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %1 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%x, %1) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %2 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%0, %2) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    memory.dealloc %0 : !memory.buffer<[N, 4], [4, 1], f32>
    %3 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%x, %3) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %4 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k2(%x, %4) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %5 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%y, %5) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %6 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%y, %6) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    func.return %1, %2, %3, %4, %5, %6 : !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>
  }
  func.func @printed(%x: !memory.buffer<[N, 4], [4, 1], f32>) -> (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>) {
    %0 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%x, %0) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    debug.print "{}"(%0) : !memory.buffer<[N, 4], [4, 1], f32>
    %1 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%x, %1) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    func.return %0, %1 : !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>
  }
  func.func @again(%x: !memory.buffer<[N, 4], [4, 1], f32>) -> (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>) {
    %0 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k0(%x, %0) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    %1 = memory.alloc : !memory.buffer<[N, 4], [4, 1], f32>
    memory.launch @k1(%x, %1) : (!memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>)
    func.return %0, %1 : !memory.buffer<[N, 4], [4, 1], f32>, !memory.buffer<[N, 4], [4, 1], f32>
  }
}
