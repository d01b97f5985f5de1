// Every loop op and the !loop.tile type, in custom syntax: printed, re-parsed
// and printed again, directly and through the generic form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The tile type: any rank from 1, dims powers of two or 1.
// CHECK-LABEL: func.func @types(%a: !loop.tile<[64, 1], f32>, %b: !loop.tile<[1], i1>, %c: !loop.tile<[2, 4, 8], bf16>, %d: !loop.tile<[1024], i32>, %e: !loop.tile<[1, 1], f16>) {
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
func.func @types(%a: !loop.tile<[64, 1], f32>, %b: !loop.tile<[1], i1>, %c: !loop.tile<[2, 4, 8], bf16>, %d: !loop.tile<[1024], i32>, %e: !loop.tile<[1, 1], f16>) {
  func.return
}

// A reduction kernel: two looped passes over a row (scf.for with and without
// iter_args), masked reads and writes, a hexadecimal float constant (printed
// in lower case) and extra attributes.
// CHECK-LABEL: func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
// CHECK-NEXT:    %y = loop.kernel @rows reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D] reason "looped row reduction" attributes {note = "kept"} : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
// CHECK-NEXT:    ^bb0(%in: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %zero = tile.constant 0 : i64
// CHECK-NEXT:      %ninf = tile.constant 0xff800000 : f32
// CHECK-NEXT:      %d = tile.size D : i64
// CHECK-NEXT:      %step = tile.constant 1024 : i64
// CHECK-NEXT:      %row = tile.program_id 0 : i64
// CHECK-NEXT:      %init = tile.splat %ninf : f32 -> !loop.tile<[1024], f32>
// CHECK-NEXT:      %max = scf.for %k = %zero to %d step %step iter_args(%acc = %init) -> (!loop.tile<[1024], f32>) : i64 {
// CHECK-NEXT:        %r = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
// CHECK-NEXT:        %col = tile.binary add %k, %r : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// CHECK-NEXT:        %m = tile.cmp lt %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// CHECK-NEXT:        %v = loop.read %in[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %vm = tile.select %m, %v, %ninf : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %next = tile.binary max %acc, %vm : (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        scf.yield %next : !loop.tile<[1024], f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %rmax = tile.reduce max %max 0 : !loop.tile<[1024], f32> -> f32
// CHECK-NEXT:      scf.for %k2 = %zero to %d step %step : i64 {
// CHECK-NEXT:        %r2 = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
// CHECK-NEXT:        %col2 = tile.binary add %k2, %r2 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// CHECK-NEXT:        %m2 = tile.cmp lt %col2, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// CHECK-NEXT:        %v2 = loop.read %in[%row, %col2] mask %m2 : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %s = tile.binary sub %v2, %rmax : (!loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %e = tile.unary exp %s : !loop.tile<[1024], f32>
// CHECK-NEXT:        loop.write %e to 0[%row, %col2] mask %m2 : !loop.tile<[1024], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N, D], f32>
// CHECK-NEXT:  }
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %y = loop.kernel @rows reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D] reason "looped row reduction" attributes {note = "kept"} : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%in: !graph.tensor<[N, D], f32>):
    %zero = tile.constant 0 : i64
    %ninf = tile.constant 0xFF800000 : f32
    %d = tile.size D : i64
    %step = tile.constant 1024 : i64
    %row = tile.program_id 0 : i64
    %init = tile.splat %ninf : f32 -> !loop.tile<[1024], f32>
    %max = scf.for %k = %zero to %d step %step iter_args(%acc = %init) -> (!loop.tile<[1024], f32>) : i64 {
      %r = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col = tile.binary add %k, %r : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %m = tile.cmp lt %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      %v = loop.read %in[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      %vm = tile.select %m, %v, %ninf : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
      %next = tile.binary max %acc, %vm : (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
      scf.yield %next : !loop.tile<[1024], f32>
    }
    %rmax = tile.reduce max %max 0 : !loop.tile<[1024], f32> -> f32
    scf.for %k2 = %zero to %d step %step : i64 {
      %r2 = tile.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col2 = tile.binary add %k2, %r2 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %m2 = tile.cmp lt %col2, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      %v2 = loop.read %in[%row, %col2] mask %m2 : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      %s = tile.binary sub %v2, %rmax : (!loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
      %e = tile.unary exp %s : !loop.tile<[1024], f32>
      loop.write %e to 0[%row, %col2] mask %m2 : !loop.tile<[1024], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
    }
  }
  func.return %y : !graph.tensor<[N, D], f32>
}

// A pointwise kernel with several inputs and outputs: a 2-axis grid whose
// ceildiv prints as floordiv, symbols printed sorted, i32 indices, 2-D tiles
// that broadcast, a rank-0 tensor read and written with no indices, casts,
// unmasked reads, and a size expression printed in canonical form.
// CHECK-LABEL: func.func @pointwise(%a: !graph.tensor<[B, N], f32>, %b: !graph.tensor<[N], f32>, %s: !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
// CHECK-NEXT:    %o0, %o1 = loop.kernel @pointwise pointwise (%a, %b, %s) grid [B, (N + 15) floordiv 16] tiles {ROWS = 1, COLS = 16} symbols [B, N] reason "" : (!graph.tensor<[B, N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
// CHECK-NEXT:    ^bb0(%ta: !graph.tensor<[B, N], f32>, %tb: !graph.tensor<[N], f32>, %ts: !graph.tensor<[], i32>):
// CHECK-NEXT:      %row = tile.program_id 0 : i32
// CHECK-NEXT:      %pid = tile.program_id 1 : i32
// CHECK-NEXT:      %n = tile.size N : i32
// CHECK-NEXT:      %n16 = tile.size B + 16*N : i32
// CHECK-NEXT:      %c16 = tile.constant 16 : i32
// CHECK-NEXT:      %base = tile.binary mul %pid, %c16 : (i32, i32) -> i32
// CHECK-NEXT:      %rows = tile.range "ROWS" : !loop.tile<[1, 1], i32>
// CHECK-NEXT:      %lanes = tile.range "COLS" : !loop.tile<[1, 16], i32>
// CHECK-NEXT:      %cols = tile.binary add %base, %lanes : (i32, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], i32>
// CHECK-NEXT:      %r2 = tile.binary add %row, %rows : (i32, !loop.tile<[1, 1], i32>) -> !loop.tile<[1, 1], i32>
// CHECK-NEXT:      %in = tile.cmp lt %cols, %n : (!loop.tile<[1, 16], i32>, i32) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %va = loop.read %ta[%r2, %cols] mask %in : !graph.tensor<[B, N], f32>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1> -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %vb = loop.read %tb[%cols] : !graph.tensor<[N], f32>[!loop.tile<[1, 16], i32>] -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %vs = loop.read %ts[] : !graph.tensor<[], i32>[] -> i32
// CHECK-NEXT:      %fs = tile.cast %vs : i32 -> f32
// CHECK-NEXT:      %sum = tile.binary add %va, %vb : (!loop.tile<[1, 16], f32>, !loop.tile<[1, 16], f32>) -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %scaled = tile.binary mul %sum, %fs : (!loop.tile<[1, 16], f32>, f32) -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %ints = tile.cast %scaled : !loop.tile<[1, 16], f32> -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:      loop.write %ints to 0[%r2, %cols] mask %in : !loop.tile<[1, 16], i64>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %total = tile.reduce sum %scaled 1 : !loop.tile<[1, 16], f32> -> !loop.tile<[1], f32>
// CHECK-NEXT:      %first = tile.reduce sum %total 0 : !loop.tile<[1], f32> -> f32
// CHECK-NEXT:      loop.write %first to 1[] : f32[]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o0, %o1 : !graph.tensor<[B, N], i64>, !graph.tensor<[], f32>
// CHECK-NEXT:  }
func.func @pointwise(%a: !graph.tensor<[B, N], f32>, %b: !graph.tensor<[N], f32>, %s: !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
  %o0, %o1 = loop.kernel @pointwise pointwise (%a, %b, %s) grid [B, N ceildiv 16] tiles {ROWS = 1, COLS = 16} symbols [N, B] reason "" : (!graph.tensor<[B, N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
  ^bb0(%ta: !graph.tensor<[B, N], f32>, %tb: !graph.tensor<[N], f32>, %ts: !graph.tensor<[], i32>):
    %row = tile.program_id 0 : i32
    %pid = tile.program_id 1 : i32
    %n = tile.size N : i32
    %n16 = tile.size 16 * N + B : i32
    %c16 = tile.constant 16 : i32
    %base = tile.binary mul %pid, %c16 : (i32, i32) -> i32
    %rows = tile.range "ROWS" : !loop.tile<[1, 1], i32>
    %lanes = tile.range "COLS" : !loop.tile<[1, 16], i32>
    %cols = tile.binary add %base, %lanes : (i32, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], i32>
    %r2 = tile.binary add %row, %rows : (i32, !loop.tile<[1, 1], i32>) -> !loop.tile<[1, 1], i32>
    %in = tile.cmp lt %cols, %n : (!loop.tile<[1, 16], i32>, i32) -> !loop.tile<[1, 16], i1>
    %va = loop.read %ta[%r2, %cols] mask %in : !graph.tensor<[B, N], f32>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1> -> !loop.tile<[1, 16], f32>
    %vb = loop.read %tb[%cols] : !graph.tensor<[N], f32>[!loop.tile<[1, 16], i32>] -> !loop.tile<[1, 16], f32>
    %vs = loop.read %ts[] : !graph.tensor<[], i32>[] -> i32
    %fs = tile.cast %vs : i32 -> f32
    %sum = tile.binary add %va, %vb : (!loop.tile<[1, 16], f32>, !loop.tile<[1, 16], f32>) -> !loop.tile<[1, 16], f32>
    %scaled = tile.binary mul %sum, %fs : (!loop.tile<[1, 16], f32>, f32) -> !loop.tile<[1, 16], f32>
    %ints = tile.cast %scaled : !loop.tile<[1, 16], f32> -> !loop.tile<[1, 16], i64>
    loop.write %ints to 0[%r2, %cols] mask %in : !loop.tile<[1, 16], i64>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1>
    %total = tile.reduce sum %scaled 1 : !loop.tile<[1, 16], f32> -> !loop.tile<[1], f32>
    %first = tile.reduce sum %total 0 : !loop.tile<[1], f32> -> f32
    loop.write %first to 1[] : f32[]
  }
  func.return %o0, %o1 : !graph.tensor<[B, N], i64>, !graph.tensor<[], f32>
}

// A matmul kernel: a 3-axis grid, ranges along either dim of a 2-D tile, a K
// loop of tile.dot on f16 operands into an f32 accumulator, reductions of a
// 2-D tile along axis 1 (argmax into i32).
// CHECK-LABEL: func.func @matmul(%x: !graph.tensor<[M, K], f16>, %w: !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
// CHECK-NEXT:    %y, %best = loop.kernel @matmul matmul (%x, %w) grid [(M + 63) floordiv 64, (N + 15) floordiv 16, 1] tiles {BLOCK_M = 64, BLOCK_N = 16, BLOCK_K = 16} symbols [K, M, N] reason "a K loop of tile.dot" : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
// CHECK-NEXT:    ^bb0(%lhs: !graph.tensor<[M, K], f16>, %rhs: !graph.tensor<[K, N], f16>):
// CHECK-NEXT:      %pm = tile.program_id 0 : i64
// CHECK-NEXT:      %pn = tile.program_id 1 : i64
// CHECK-NEXT:      %pz = tile.program_id 2 : i64
// CHECK-NEXT:      %m = tile.size M : i64
// CHECK-NEXT:      %n = tile.size N : i64
// CHECK-NEXT:      %k = tile.size K : i64
// CHECK-NEXT:      %c0 = tile.constant 0 : i64
// CHECK-NEXT:      %c16 = tile.constant 16 : i64
// CHECK-NEXT:      %c64 = tile.constant 64 : i64
// CHECK-NEXT:      %f0 = tile.constant 0.000000e+00 : f32
// CHECK-NEXT:      %h0 = tile.constant 0.000000e+00 : f16
// CHECK-NEXT:      %rm = tile.range "BLOCK_M" : !loop.tile<[64, 1], i64>
// CHECK-NEXT:      %rn = tile.range "BLOCK_N" : !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %rkc = tile.range "BLOCK_K" : !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %rkr = tile.range "BLOCK_K" : !loop.tile<[16, 1], i64>
// CHECK-NEXT:      %bm = tile.binary mul %pm, %c64 : (i64, i64) -> i64
// CHECK-NEXT:      %bn = tile.binary mul %pn, %c16 : (i64, i64) -> i64
// CHECK-NEXT:      %rows = tile.binary add %bm, %rm : (i64, !loop.tile<[64, 1], i64>) -> !loop.tile<[64, 1], i64>
// CHECK-NEXT:      %cols = tile.binary add %bn, %rn : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %mrow = tile.cmp lt %rows, %m : (!loop.tile<[64, 1], i64>, i64) -> !loop.tile<[64, 1], i1>
// CHECK-NEXT:      %mcol = tile.cmp lt %cols, %n : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %mout = tile.binary and %mrow, %mcol : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
// CHECK-NEXT:      %zero = tile.splat %f0 : f32 -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:      %acc = scf.for %kk = %c0 to %k step %c16 iter_args(%sum = %zero) -> (!loop.tile<[64, 16], f32>) : i64 {
// CHECK-NEXT:        %ka = tile.binary add %kk, %rkc : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:        %kb = tile.binary add %kk, %rkr : (i64, !loop.tile<[16, 1], i64>) -> !loop.tile<[16, 1], i64>
// CHECK-NEXT:        %mka = tile.cmp lt %ka, %k : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:        %mkb = tile.cmp lt %kb, %k : (!loop.tile<[16, 1], i64>, i64) -> !loop.tile<[16, 1], i1>
// CHECK-NEXT:        %ma = tile.binary and %mrow, %mka : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
// CHECK-NEXT:        %mb = tile.binary and %mkb, %mcol : (!loop.tile<[16, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[16, 16], i1>
// CHECK-NEXT:        %a = loop.read %lhs[%rows, %ka] mask %ma : !graph.tensor<[M, K], f16>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1> -> !loop.tile<[64, 16], f16>
// CHECK-NEXT:        %b = loop.read %rhs[%kb, %cols] mask %mb : !graph.tensor<[K, N], f16>[!loop.tile<[16, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[16, 16], i1> -> !loop.tile<[16, 16], f16>
// CHECK-NEXT:        %b0 = tile.select %mb, %b, %h0 : (!loop.tile<[16, 16], i1>, !loop.tile<[16, 16], f16>, f16) -> !loop.tile<[16, 16], f16>
// CHECK-NEXT:        %next = tile.dot %a, %b0, %sum : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:        scf.yield %next : !loop.tile<[64, 16], f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %relu = tile.binary max %acc, %f0 : (!loop.tile<[64, 16], f32>, f32) -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:      loop.write %relu to 0[%rows, %cols] mask %mout : !loop.tile<[64, 16], f32>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1>
// CHECK-NEXT:      %arg = tile.reduce argmax %relu 1 : !loop.tile<[64, 16], f32> -> !loop.tile<[64], i32>
// CHECK-NEXT:      %rows1 = tile.reduce max %rows 1 : !loop.tile<[64, 1], i64> -> !loop.tile<[64], i64>
// CHECK-NEXT:      loop.write %arg to 1[%rows1] : !loop.tile<[64], i32>[!loop.tile<[64], i64>]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %best : !graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>
// CHECK-NEXT:  }
func.func @matmul(%x: !graph.tensor<[M, K], f16>, %w: !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
  %y, %best = loop.kernel @matmul matmul (%x, %w) grid [M ceildiv 64, N ceildiv 16, 1] tiles {BLOCK_M = 64, BLOCK_N = 16, BLOCK_K = 16} symbols [M, N, K] reason "a K loop of tile.dot" : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
  ^bb0(%lhs: !graph.tensor<[M, K], f16>, %rhs: !graph.tensor<[K, N], f16>):
    %pm = tile.program_id 0 : i64
    %pn = tile.program_id 1 : i64
    %pz = tile.program_id 2 : i64
    %m = tile.size M : i64
    %n = tile.size N : i64
    %k = tile.size K : i64
    %c0 = tile.constant 0 : i64
    %c16 = tile.constant 16 : i64
    %c64 = tile.constant 64 : i64
    %f0 = tile.constant 0.000000e+00 : f32
    %h0 = tile.constant 0.000000e+00 : f16
    %rm = tile.range "BLOCK_M" : !loop.tile<[64, 1], i64>
    %rn = tile.range "BLOCK_N" : !loop.tile<[1, 16], i64>
    %rkc = tile.range "BLOCK_K" : !loop.tile<[1, 16], i64>
    %rkr = tile.range "BLOCK_K" : !loop.tile<[16, 1], i64>
    %bm = tile.binary mul %pm, %c64 : (i64, i64) -> i64
    %bn = tile.binary mul %pn, %c16 : (i64, i64) -> i64
    %rows = tile.binary add %bm, %rm : (i64, !loop.tile<[64, 1], i64>) -> !loop.tile<[64, 1], i64>
    %cols = tile.binary add %bn, %rn : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
    %mrow = tile.cmp lt %rows, %m : (!loop.tile<[64, 1], i64>, i64) -> !loop.tile<[64, 1], i1>
    %mcol = tile.cmp lt %cols, %n : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
    %mout = tile.binary and %mrow, %mcol : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
    %zero = tile.splat %f0 : f32 -> !loop.tile<[64, 16], f32>
    %acc = scf.for %kk = %c0 to %k step %c16 iter_args(%sum = %zero) -> (!loop.tile<[64, 16], f32>) : i64 {
      %ka = tile.binary add %kk, %rkc : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
      %kb = tile.binary add %kk, %rkr : (i64, !loop.tile<[16, 1], i64>) -> !loop.tile<[16, 1], i64>
      %mka = tile.cmp lt %ka, %k : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
      %mkb = tile.cmp lt %kb, %k : (!loop.tile<[16, 1], i64>, i64) -> !loop.tile<[16, 1], i1>
      %ma = tile.binary and %mrow, %mka : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
      %mb = tile.binary and %mkb, %mcol : (!loop.tile<[16, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[16, 16], i1>
      %a = loop.read %lhs[%rows, %ka] mask %ma : !graph.tensor<[M, K], f16>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1> -> !loop.tile<[64, 16], f16>
      %b = loop.read %rhs[%kb, %cols] mask %mb : !graph.tensor<[K, N], f16>[!loop.tile<[16, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[16, 16], i1> -> !loop.tile<[16, 16], f16>
      %b0 = tile.select %mb, %b, %h0 : (!loop.tile<[16, 16], i1>, !loop.tile<[16, 16], f16>, f16) -> !loop.tile<[16, 16], f16>
      %next = tile.dot %a, %b0, %sum : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
      scf.yield %next : !loop.tile<[64, 16], f32>
    }
    %relu = tile.binary max %acc, %f0 : (!loop.tile<[64, 16], f32>, f32) -> !loop.tile<[64, 16], f32>
    loop.write %relu to 0[%rows, %cols] mask %mout : !loop.tile<[64, 16], f32>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1>
    %arg = tile.reduce argmax %relu 1 : !loop.tile<[64, 16], f32> -> !loop.tile<[64], i32>
    %rows1 = tile.reduce max %rows 1 : !loop.tile<[64, 1], i64> -> !loop.tile<[64], i64>
    loop.write %arg to 1[%rows1] : !loop.tile<[64], i32>[!loop.tile<[64], i64>]
  }
  func.return %y, %best : !graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>
}

// A kernel with no inputs: its region has no entry block arguments.
// CHECK-LABEL: func.func @iota() -> !graph.tensor<[N], i64> {
// CHECK-NEXT:    %y = loop.kernel @iota pointwise () grid [(N + 255) floordiv 256] tiles {BLOCK = 256} symbols [N] reason "no inputs" : () -> (!graph.tensor<[N], i64>) {
// CHECK-NEXT:      %p = tile.program_id 0 : i64
// CHECK-NEXT:      %c = tile.constant 256 : i64
// CHECK-NEXT:      %n = tile.size N : i64
// CHECK-NEXT:      %base = tile.binary mul %p, %c : (i64, i64) -> i64
// CHECK-NEXT:      %r = tile.range "BLOCK" : !loop.tile<[256], i64>
// CHECK-NEXT:      %i = tile.binary add %base, %r : (i64, !loop.tile<[256], i64>) -> !loop.tile<[256], i64>
// CHECK-NEXT:      %m = tile.cmp lt %i, %n : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i1>
// CHECK-NEXT:      loop.write %i to 0[%i] mask %m : !loop.tile<[256], i64>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N], i64>
// CHECK-NEXT:  }
func.func @iota() -> !graph.tensor<[N], i64> {
  %y = loop.kernel @iota pointwise () grid [N ceildiv 256] tiles {BLOCK = 256} symbols [N] reason "no inputs" : () -> (!graph.tensor<[N], i64>) {
    %p = tile.program_id 0 : i64
    %c = tile.constant 256 : i64
    %n = tile.size N : i64
    %base = tile.binary mul %p, %c : (i64, i64) -> i64
    %r = tile.range "BLOCK" : !loop.tile<[256], i64>
    %i = tile.binary add %base, %r : (i64, !loop.tile<[256], i64>) -> !loop.tile<[256], i64>
    %m = tile.cmp lt %i, %n : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i1>
    loop.write %i to 0[%i] mask %m : !loop.tile<[256], i64>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1>
  }
  func.return %y : !graph.tensor<[N], i64>
}

// Every kind of tile.unary, tile.binary, tile.cmp and tile.reduce; constants
// of each element type (i1 ones print as true/false).
// CHECK-LABEL: func.func @kinds(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
// CHECK-NEXT:    %y = loop.kernel @kinds pointwise (%x) grid [(N + 7) floordiv 8] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
// CHECK-NEXT:    ^bb0(%t: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %f = tile.constant 1.500000e+00 : f32
// CHECK-NEXT:      %h = tile.constant -2.500000e-01 : f16
// CHECK-NEXT:      %g = tile.constant 3.000000e+00 : bf16
// CHECK-NEXT:      %dd = tile.constant 1.000000e-03 : f64
// CHECK-NEXT:      %i = tile.constant -7 : i32
// CHECK-NEXT:      %l = tile.constant 42 : i64
// CHECK-NEXT:      %t1 = tile.constant true
// CHECK-NEXT:      %f1 = tile.constant false
// CHECK-NEXT:      %r = tile.range "B" : !loop.tile<[8], i64>
// CHECK-NEXT:      %v = loop.read %t[%r] : !graph.tensor<[N], f32>[!loop.tile<[8], i64>] -> !loop.tile<[8], f32>
// CHECK-NEXT:      %u0 = tile.unary neg %v : !loop.tile<[8], f32>
// CHECK-NEXT:      %u1 = tile.unary abs %u0 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u2 = tile.unary exp %u1 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u3 = tile.unary log %u2 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u4 = tile.unary sqrt %u3 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u5 = tile.unary rsqrt %u4 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u6 = tile.unary tanh %u5 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u7 = tile.unary sigmoid %u6 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u8 = tile.unary erf %u7 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u9 = tile.unary sin %u8 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u10 = tile.unary cos %u9 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u11 = tile.unary floor %u10 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u12 = tile.unary not %t1 : i1
// CHECK-NEXT:      %u13 = tile.unary log1p %u11 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u14 = tile.unary atan %u13 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u15 = tile.binary atan2 %u14, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b0 = tile.binary add %u11, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b1 = tile.binary sub %b0, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b2 = tile.binary mul %f, %b1 : (f32, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b3 = tile.binary div %b2, %b2 : (!loop.tile<[8], f32>, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b4 = tile.binary floordiv %b3, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b5 = tile.binary rem %b4, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b6 = tile.binary pow %b5, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b7 = tile.binary max %b6, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b8 = tile.binary min %b7, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b9 = tile.binary and %t1, %f1 : (i1, i1) -> i1
// CHECK-NEXT:      %b10 = tile.binary or %i, %i : (i32, i32) -> i32
// CHECK-NEXT:      %b11 = tile.binary xor %l, %r : (i64, !loop.tile<[8], i64>) -> !loop.tile<[8], i64>
// CHECK-NEXT:      %c0 = tile.cmp eq %b8, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], i1>
// CHECK-NEXT:      %c1 = tile.cmp ne %h, %h : (f16, f16) -> i1
// CHECK-NEXT:      %c2 = tile.cmp lt %g, %g : (bf16, bf16) -> i1
// CHECK-NEXT:      %c3 = tile.cmp le %dd, %dd : (f64, f64) -> i1
// CHECK-NEXT:      %c4 = tile.cmp gt %i, %i : (i32, i32) -> i1
// CHECK-NEXT:      %c5 = tile.cmp ge %r, %l : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i1>
// CHECK-NEXT:      %s0 = tile.reduce sum %b8 0 : !loop.tile<[8], f32> -> f32
// CHECK-NEXT:      %s1 = tile.reduce prod %b8 0 : !loop.tile<[8], f32> -> f32
// CHECK-NEXT:      %s2 = tile.reduce max %b11 0 : !loop.tile<[8], i64> -> i64
// CHECK-NEXT:      %s3 = tile.reduce min %c0 0 : !loop.tile<[8], i1> -> i1
// CHECK-NEXT:      %s4 = tile.reduce argmax %b8 0 : !loop.tile<[8], f32> -> i64
// CHECK-NEXT:      %sel = tile.select %c1, %b8, %s0 : (i1, !loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      loop.write %sel to 0[%r] : !loop.tile<[8], f32>[!loop.tile<[8], i64>]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N], f32>
// CHECK-NEXT:  }
func.func @kinds(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = loop.kernel @kinds pointwise (%x) grid [N ceildiv 8] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %f = tile.constant 1.500000e+00 : f32
    %h = tile.constant -2.500000e-01 : f16
    %g = tile.constant 3.000000e+00 : bf16
    %dd = tile.constant 1.000000e-03 : f64
    %i = tile.constant -7 : i32
    %l = tile.constant 42 : i64
    %t1 = tile.constant true
    %f1 = tile.constant false
    %r = tile.range "B" : !loop.tile<[8], i64>
    %v = loop.read %t[%r] : !graph.tensor<[N], f32>[!loop.tile<[8], i64>] -> !loop.tile<[8], f32>
    %u0 = tile.unary neg %v : !loop.tile<[8], f32>
    %u1 = tile.unary abs %u0 : !loop.tile<[8], f32>
    %u2 = tile.unary exp %u1 : !loop.tile<[8], f32>
    %u3 = tile.unary log %u2 : !loop.tile<[8], f32>
    %u4 = tile.unary sqrt %u3 : !loop.tile<[8], f32>
    %u5 = tile.unary rsqrt %u4 : !loop.tile<[8], f32>
    %u6 = tile.unary tanh %u5 : !loop.tile<[8], f32>
    %u7 = tile.unary sigmoid %u6 : !loop.tile<[8], f32>
    %u8 = tile.unary erf %u7 : !loop.tile<[8], f32>
    %u9 = tile.unary sin %u8 : !loop.tile<[8], f32>
    %u10 = tile.unary cos %u9 : !loop.tile<[8], f32>
    %u11 = tile.unary floor %u10 : !loop.tile<[8], f32>
    %u12 = tile.unary not %t1 : i1
    %u13 = tile.unary log1p %u11 : !loop.tile<[8], f32>
    %u14 = tile.unary atan %u13 : !loop.tile<[8], f32>
    %u15 = tile.binary atan2 %u14, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b0 = tile.binary add %u11, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b1 = tile.binary sub %b0, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b2 = tile.binary mul %f, %b1 : (f32, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
    %b3 = tile.binary div %b2, %b2 : (!loop.tile<[8], f32>, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
    %b4 = tile.binary floordiv %b3, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b5 = tile.binary rem %b4, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b6 = tile.binary pow %b5, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b7 = tile.binary max %b6, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b8 = tile.binary min %b7, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b9 = tile.binary and %t1, %f1 : (i1, i1) -> i1
    %b10 = tile.binary or %i, %i : (i32, i32) -> i32
    %b11 = tile.binary xor %l, %r : (i64, !loop.tile<[8], i64>) -> !loop.tile<[8], i64>
    %c0 = tile.cmp eq %b8, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], i1>
    %c1 = tile.cmp ne %h, %h : (f16, f16) -> i1
    %c2 = tile.cmp lt %g, %g : (bf16, bf16) -> i1
    %c3 = tile.cmp le %dd, %dd : (f64, f64) -> i1
    %c4 = tile.cmp gt %i, %i : (i32, i32) -> i1
    %c5 = tile.cmp ge %r, %l : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i1>
    %s0 = tile.reduce sum %b8 0 : !loop.tile<[8], f32> -> f32
    %s1 = tile.reduce prod %b8 0 : !loop.tile<[8], f32> -> f32
    %s2 = tile.reduce max %b11 0 : !loop.tile<[8], i64> -> i64
    %s3 = tile.reduce min %c0 0 : !loop.tile<[8], i1> -> i1
    %s4 = tile.reduce argmax %b8 0 : !loop.tile<[8], f32> -> i64
    %sel = tile.select %c1, %b8, %s0 : (i1, !loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    loop.write %sel to 0[%r] : !loop.tile<[8], f32>[!loop.tile<[8], i64>]
  }
  func.return %y : !graph.tensor<[N], f32>
}

// GENERIC: "loop.kernel"(%x) <{sym_name = "rows", kind = "reduction", grid = [#sym.expr<N>], tiles = {BLOCK_R = 1024 : i64}, symbols = ["D"], reason = "looped row reduction"}> ({
// GENERIC-NEXT: ^bb0(%in: !graph.tensor<[N, D], f32>):
// GENERIC-NEXT: %zero = "tile.constant"() <{value = 0 : i64}> : () -> i64
// GENERIC-NEXT: %ninf = "tile.constant"() <{value = 0xff800000 : f32}> : () -> f32
// GENERIC-NEXT: %d = "tile.size"() <{expr = #sym.expr<D>}> : () -> i64
// GENERIC-NEXT: %step = "tile.constant"() <{value = 1024 : i64}> : () -> i64
// GENERIC-NEXT: %row = "tile.program_id"() <{axis = 0 : i64}> : () -> i64
// GENERIC-NEXT: %init = "tile.splat"(%ninf) : (f32) -> !loop.tile<[1024], f32>
// GENERIC: %r = "tile.range"() <{block = "BLOCK_R"}> : () -> !loop.tile<[1024], i64>
// GENERIC-NEXT: %col = "tile.binary"(%k, %r) <{kind = #elementwise<kind add>}> : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// GENERIC-NEXT: %m = "tile.cmp"(%col, %d) <{kind = #elementwise<predicate lt>}> : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// GENERIC-NEXT: %v = "loop.read"(%in, %row, %col, %m) <{operandSegmentSizes = array<i32: 1, 2, 1>}> : (!graph.tensor<[N, D], f32>, i64, !loop.tile<[1024], i64>, !loop.tile<[1024], i1>) -> !loop.tile<[1024], f32>
// GENERIC-NEXT: %vm = "tile.select"(%m, %v, %ninf) : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// GENERIC: %rmax = "tile.reduce"(%max) <{kind = #elementwise<reduction max>, axis = 0 : i64}> : (!loop.tile<[1024], f32>) -> f32
// GENERIC: %e = "tile.unary"(%s) <{kind = #elementwise<kind exp>}> : (!loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// GENERIC-NEXT: "loop.write"(%e, %row, %col2, %m2) <{output = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 1>}> : (!loop.tile<[1024], f32>, i64, !loop.tile<[1024], i64>, !loop.tile<[1024], i1>) -> ()
// GENERIC: }) {note = "kept"} : (!graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32>
// GENERIC: %o0, %o1 = "loop.kernel"(%a, %b, %s) <{sym_name = "pointwise", kind = "pointwise", grid = [#sym.expr<B>, #sym.expr<(N + 15) floordiv 16>], tiles = {ROWS = 1 : i64, COLS = 16 : i64}, symbols = ["B", "N"], reason = ""}> ({
// GENERIC: %n16 = "tile.size"() <{expr = #sym.expr<B + 16*N>}> : () -> i32
// GENERIC: %vb = "loop.read"(%tb, %cols) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!graph.tensor<[N], f32>, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], f32>
// GENERIC-NEXT: %vs = "loop.read"(%ts) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (!graph.tensor<[], i32>) -> i32
// GENERIC-NEXT: %fs = "tile.cast"(%vs) : (i32) -> f32
// GENERIC: "loop.write"(%first) <{output = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (f32) -> ()
// GENERIC: %y, %best = "loop.kernel"(%x, %w) <{sym_name = "matmul", kind = "matmul", grid = [#sym.expr<(M + 63) floordiv 64>, #sym.expr<(N + 15) floordiv 16>, #sym.expr<1>], tiles = {BLOCK_M = 64 : i64, BLOCK_N = 16 : i64, BLOCK_K = 16 : i64}, symbols = ["K", "M", "N"], reason = "a K loop of tile.dot"}> ({
// GENERIC: %next = "tile.dot"(%a, %b0, %sum) : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
// GENERIC: %arg = "tile.reduce"(%relu) <{kind = #elementwise<reduction argmax>, axis = 1 : i64}> : (!loop.tile<[64, 16], f32>) -> !loop.tile<[64], i32>
// GENERIC: "loop.write"(%arg, %rows1) <{output = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}> : (!loop.tile<[64], i32>, !loop.tile<[64], i64>) -> ()
// GENERIC: %y = "loop.kernel"() <{sym_name = "iota", kind = "pointwise", grid = [#sym.expr<(N + 255) floordiv 256>], tiles = {BLOCK = 256 : i64}, symbols = ["N"], reason = "no inputs"}> ({
// GENERIC-NEXT: %p = "tile.program_id"() <{axis = 0 : i64}> : () -> i64
// GENERIC: }) : () -> !graph.tensor<[N], i64>
// GENERIC: %t1 = "tile.constant"() <{value = true}> : () -> i1
// GENERIC: %u12 = "tile.unary"(%t1) <{kind = #elementwise<kind not>}> : (i1) -> i1
