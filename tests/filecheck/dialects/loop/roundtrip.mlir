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
// CHECK-NEXT:      %zero = loop.constant 0 : i64
// CHECK-NEXT:      %ninf = loop.constant 0xff800000 : f32
// CHECK-NEXT:      %d = loop.size D : i64
// CHECK-NEXT:      %step = loop.constant 1024 : i64
// CHECK-NEXT:      %row = loop.program_id 0 : i64
// CHECK-NEXT:      %init = loop.splat %ninf : f32 -> !loop.tile<[1024], f32>
// CHECK-NEXT:      %max = scf.for %k = %zero to %d step %step iter_args(%acc = %init) -> (!loop.tile<[1024], f32>) : i64 {
// CHECK-NEXT:        %r = loop.range "BLOCK_R" : !loop.tile<[1024], i64>
// CHECK-NEXT:        %col = loop.binary add %k, %r : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// CHECK-NEXT:        %m = loop.cmp lt %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// CHECK-NEXT:        %v = loop.read %in[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %vm = loop.select %m, %v, %ninf : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %next = loop.binary max %acc, %vm : (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        scf.yield %next : !loop.tile<[1024], f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %rmax = loop.reduce max %max 0 : !loop.tile<[1024], f32> -> f32
// CHECK-NEXT:      scf.for %k2 = %zero to %d step %step : i64 {
// CHECK-NEXT:        %r2 = loop.range "BLOCK_R" : !loop.tile<[1024], i64>
// CHECK-NEXT:        %col2 = loop.binary add %k2, %r2 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// CHECK-NEXT:        %m2 = loop.cmp lt %col2, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// CHECK-NEXT:        %v2 = loop.read %in[%row, %col2] mask %m2 : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %s = loop.binary sub %v2, %rmax : (!loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// CHECK-NEXT:        %e = loop.unary exp %s : !loop.tile<[1024], f32>
// CHECK-NEXT:        loop.write %e to 0[%row, %col2] mask %m2 : !loop.tile<[1024], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N, D], f32>
// CHECK-NEXT:  }
func.func @rows(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %y = loop.kernel @rows reduction (%x) grid [N] tiles {BLOCK_R = 1024} symbols [D] reason "looped row reduction" attributes {note = "kept"} : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%in: !graph.tensor<[N, D], f32>):
    %zero = loop.constant 0 : i64
    %ninf = loop.constant 0xFF800000 : f32
    %d = loop.size D : i64
    %step = loop.constant 1024 : i64
    %row = loop.program_id 0 : i64
    %init = loop.splat %ninf : f32 -> !loop.tile<[1024], f32>
    %max = scf.for %k = %zero to %d step %step iter_args(%acc = %init) -> (!loop.tile<[1024], f32>) : i64 {
      %r = loop.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col = loop.binary add %k, %r : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %m = loop.cmp lt %col, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      %v = loop.read %in[%row, %col] mask %m : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      %vm = loop.select %m, %v, %ninf : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
      %next = loop.binary max %acc, %vm : (!loop.tile<[1024], f32>, !loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
      scf.yield %next : !loop.tile<[1024], f32>
    }
    %rmax = loop.reduce max %max 0 : !loop.tile<[1024], f32> -> f32
    scf.for %k2 = %zero to %d step %step : i64 {
      %r2 = loop.range "BLOCK_R" : !loop.tile<[1024], i64>
      %col2 = loop.binary add %k2, %r2 : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
      %m2 = loop.cmp lt %col2, %d : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
      %v2 = loop.read %in[%row, %col2] mask %m2 : !graph.tensor<[N, D], f32>[i64, !loop.tile<[1024], i64>] mask !loop.tile<[1024], i1> -> !loop.tile<[1024], f32>
      %s = loop.binary sub %v2, %rmax : (!loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
      %e = loop.unary exp %s : !loop.tile<[1024], f32>
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
// CHECK-NEXT:      %row = loop.program_id 0 : i32
// CHECK-NEXT:      %pid = loop.program_id 1 : i32
// CHECK-NEXT:      %n = loop.size N : i32
// CHECK-NEXT:      %n16 = loop.size B + 16*N : i32
// CHECK-NEXT:      %c16 = loop.constant 16 : i32
// CHECK-NEXT:      %base = loop.binary mul %pid, %c16 : (i32, i32) -> i32
// CHECK-NEXT:      %rows = loop.range "ROWS" : !loop.tile<[1, 1], i32>
// CHECK-NEXT:      %lanes = loop.range "COLS" : !loop.tile<[1, 16], i32>
// CHECK-NEXT:      %cols = loop.binary add %base, %lanes : (i32, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], i32>
// CHECK-NEXT:      %r2 = loop.binary add %row, %rows : (i32, !loop.tile<[1, 1], i32>) -> !loop.tile<[1, 1], i32>
// CHECK-NEXT:      %in = loop.cmp lt %cols, %n : (!loop.tile<[1, 16], i32>, i32) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %va = loop.read %ta[%r2, %cols] mask %in : !graph.tensor<[B, N], f32>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1> -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %vb = loop.read %tb[%cols] : !graph.tensor<[N], f32>[!loop.tile<[1, 16], i32>] -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %vs = loop.read %ts[] : !graph.tensor<[], i32>[] -> i32
// CHECK-NEXT:      %fs = loop.cast %vs : i32 -> f32
// CHECK-NEXT:      %sum = loop.binary add %va, %vb : (!loop.tile<[1, 16], f32>, !loop.tile<[1, 16], f32>) -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %scaled = loop.binary mul %sum, %fs : (!loop.tile<[1, 16], f32>, f32) -> !loop.tile<[1, 16], f32>
// CHECK-NEXT:      %ints = loop.cast %scaled : !loop.tile<[1, 16], f32> -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:      loop.write %ints to 0[%r2, %cols] mask %in : !loop.tile<[1, 16], i64>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %total = loop.reduce sum %scaled 1 : !loop.tile<[1, 16], f32> -> !loop.tile<[1], f32>
// CHECK-NEXT:      %first = loop.reduce sum %total 0 : !loop.tile<[1], f32> -> f32
// CHECK-NEXT:      loop.write %first to 1[] : f32[]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o0, %o1 : !graph.tensor<[B, N], i64>, !graph.tensor<[], f32>
// CHECK-NEXT:  }
func.func @pointwise(%a: !graph.tensor<[B, N], f32>, %b: !graph.tensor<[N], f32>, %s: !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
  %o0, %o1 = loop.kernel @pointwise pointwise (%a, %b, %s) grid [B, N ceildiv 16] tiles {ROWS = 1, COLS = 16} symbols [N, B] reason "" : (!graph.tensor<[B, N], f32>, !graph.tensor<[N], f32>, !graph.tensor<[], i32>) -> (!graph.tensor<[B, N], i64>, !graph.tensor<[], f32>) {
  ^bb0(%ta: !graph.tensor<[B, N], f32>, %tb: !graph.tensor<[N], f32>, %ts: !graph.tensor<[], i32>):
    %row = loop.program_id 0 : i32
    %pid = loop.program_id 1 : i32
    %n = loop.size N : i32
    %n16 = loop.size 16 * N + B : i32
    %c16 = loop.constant 16 : i32
    %base = loop.binary mul %pid, %c16 : (i32, i32) -> i32
    %rows = loop.range "ROWS" : !loop.tile<[1, 1], i32>
    %lanes = loop.range "COLS" : !loop.tile<[1, 16], i32>
    %cols = loop.binary add %base, %lanes : (i32, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], i32>
    %r2 = loop.binary add %row, %rows : (i32, !loop.tile<[1, 1], i32>) -> !loop.tile<[1, 1], i32>
    %in = loop.cmp lt %cols, %n : (!loop.tile<[1, 16], i32>, i32) -> !loop.tile<[1, 16], i1>
    %va = loop.read %ta[%r2, %cols] mask %in : !graph.tensor<[B, N], f32>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1> -> !loop.tile<[1, 16], f32>
    %vb = loop.read %tb[%cols] : !graph.tensor<[N], f32>[!loop.tile<[1, 16], i32>] -> !loop.tile<[1, 16], f32>
    %vs = loop.read %ts[] : !graph.tensor<[], i32>[] -> i32
    %fs = loop.cast %vs : i32 -> f32
    %sum = loop.binary add %va, %vb : (!loop.tile<[1, 16], f32>, !loop.tile<[1, 16], f32>) -> !loop.tile<[1, 16], f32>
    %scaled = loop.binary mul %sum, %fs : (!loop.tile<[1, 16], f32>, f32) -> !loop.tile<[1, 16], f32>
    %ints = loop.cast %scaled : !loop.tile<[1, 16], f32> -> !loop.tile<[1, 16], i64>
    loop.write %ints to 0[%r2, %cols] mask %in : !loop.tile<[1, 16], i64>[!loop.tile<[1, 1], i32>, !loop.tile<[1, 16], i32>] mask !loop.tile<[1, 16], i1>
    %total = loop.reduce sum %scaled 1 : !loop.tile<[1, 16], f32> -> !loop.tile<[1], f32>
    %first = loop.reduce sum %total 0 : !loop.tile<[1], f32> -> f32
    loop.write %first to 1[] : f32[]
  }
  func.return %o0, %o1 : !graph.tensor<[B, N], i64>, !graph.tensor<[], f32>
}

// A matmul kernel: a 3-axis grid, ranges along either dim of a 2-D tile, a K
// loop of loop.dot on f16 operands into an f32 accumulator, reductions of a
// 2-D tile along axis 1 (argmax into i32).
// CHECK-LABEL: func.func @matmul(%x: !graph.tensor<[M, K], f16>, %w: !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
// CHECK-NEXT:    %y, %best = loop.kernel @matmul matmul (%x, %w) grid [(M + 63) floordiv 64, (N + 15) floordiv 16, 1] tiles {BLOCK_M = 64, BLOCK_N = 16, BLOCK_K = 16} symbols [K, M, N] reason "a K loop of loop.dot" : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
// CHECK-NEXT:    ^bb0(%lhs: !graph.tensor<[M, K], f16>, %rhs: !graph.tensor<[K, N], f16>):
// CHECK-NEXT:      %pm = loop.program_id 0 : i64
// CHECK-NEXT:      %pn = loop.program_id 1 : i64
// CHECK-NEXT:      %pz = loop.program_id 2 : i64
// CHECK-NEXT:      %m = loop.size M : i64
// CHECK-NEXT:      %n = loop.size N : i64
// CHECK-NEXT:      %k = loop.size K : i64
// CHECK-NEXT:      %c0 = loop.constant 0 : i64
// CHECK-NEXT:      %c16 = loop.constant 16 : i64
// CHECK-NEXT:      %c64 = loop.constant 64 : i64
// CHECK-NEXT:      %f0 = loop.constant 0.000000e+00 : f32
// CHECK-NEXT:      %h0 = loop.constant 0.000000e+00 : f16
// CHECK-NEXT:      %rm = loop.range "BLOCK_M" : !loop.tile<[64, 1], i64>
// CHECK-NEXT:      %rn = loop.range "BLOCK_N" : !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %rkc = loop.range "BLOCK_K" : !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %rkr = loop.range "BLOCK_K" : !loop.tile<[16, 1], i64>
// CHECK-NEXT:      %bm = loop.binary mul %pm, %c64 : (i64, i64) -> i64
// CHECK-NEXT:      %bn = loop.binary mul %pn, %c16 : (i64, i64) -> i64
// CHECK-NEXT:      %rows = loop.binary add %bm, %rm : (i64, !loop.tile<[64, 1], i64>) -> !loop.tile<[64, 1], i64>
// CHECK-NEXT:      %cols = loop.binary add %bn, %rn : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:      %mrow = loop.cmp lt %rows, %m : (!loop.tile<[64, 1], i64>, i64) -> !loop.tile<[64, 1], i1>
// CHECK-NEXT:      %mcol = loop.cmp lt %cols, %n : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:      %mout = loop.binary and %mrow, %mcol : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
// CHECK-NEXT:      %zero = loop.splat %f0 : f32 -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:      %acc = scf.for %kk = %c0 to %k step %c16 iter_args(%sum = %zero) -> (!loop.tile<[64, 16], f32>) : i64 {
// CHECK-NEXT:        %ka = loop.binary add %kk, %rkc : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
// CHECK-NEXT:        %kb = loop.binary add %kk, %rkr : (i64, !loop.tile<[16, 1], i64>) -> !loop.tile<[16, 1], i64>
// CHECK-NEXT:        %mka = loop.cmp lt %ka, %k : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
// CHECK-NEXT:        %mkb = loop.cmp lt %kb, %k : (!loop.tile<[16, 1], i64>, i64) -> !loop.tile<[16, 1], i1>
// CHECK-NEXT:        %ma = loop.binary and %mrow, %mka : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
// CHECK-NEXT:        %mb = loop.binary and %mkb, %mcol : (!loop.tile<[16, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[16, 16], i1>
// CHECK-NEXT:        %a = loop.read %lhs[%rows, %ka] mask %ma : !graph.tensor<[M, K], f16>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1> -> !loop.tile<[64, 16], f16>
// CHECK-NEXT:        %b = loop.read %rhs[%kb, %cols] mask %mb : !graph.tensor<[K, N], f16>[!loop.tile<[16, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[16, 16], i1> -> !loop.tile<[16, 16], f16>
// CHECK-NEXT:        %b0 = loop.select %mb, %b, %h0 : (!loop.tile<[16, 16], i1>, !loop.tile<[16, 16], f16>, f16) -> !loop.tile<[16, 16], f16>
// CHECK-NEXT:        %next = loop.dot %a, %b0, %sum : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:        scf.yield %next : !loop.tile<[64, 16], f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %relu = loop.binary max %acc, %f0 : (!loop.tile<[64, 16], f32>, f32) -> !loop.tile<[64, 16], f32>
// CHECK-NEXT:      loop.write %relu to 0[%rows, %cols] mask %mout : !loop.tile<[64, 16], f32>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1>
// CHECK-NEXT:      %arg = loop.reduce argmax %relu 1 : !loop.tile<[64, 16], f32> -> !loop.tile<[64], i32>
// CHECK-NEXT:      %rows1 = loop.reduce max %rows 1 : !loop.tile<[64, 1], i64> -> !loop.tile<[64], i64>
// CHECK-NEXT:      loop.write %arg to 1[%rows1] : !loop.tile<[64], i32>[!loop.tile<[64], i64>]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %best : !graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>
// CHECK-NEXT:  }
func.func @matmul(%x: !graph.tensor<[M, K], f16>, %w: !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
  %y, %best = loop.kernel @matmul matmul (%x, %w) grid [M ceildiv 64, N ceildiv 16, 1] tiles {BLOCK_M = 64, BLOCK_N = 16, BLOCK_K = 16} symbols [M, N, K] reason "a K loop of loop.dot" : (!graph.tensor<[M, K], f16>, !graph.tensor<[K, N], f16>) -> (!graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>) {
  ^bb0(%lhs: !graph.tensor<[M, K], f16>, %rhs: !graph.tensor<[K, N], f16>):
    %pm = loop.program_id 0 : i64
    %pn = loop.program_id 1 : i64
    %pz = loop.program_id 2 : i64
    %m = loop.size M : i64
    %n = loop.size N : i64
    %k = loop.size K : i64
    %c0 = loop.constant 0 : i64
    %c16 = loop.constant 16 : i64
    %c64 = loop.constant 64 : i64
    %f0 = loop.constant 0.000000e+00 : f32
    %h0 = loop.constant 0.000000e+00 : f16
    %rm = loop.range "BLOCK_M" : !loop.tile<[64, 1], i64>
    %rn = loop.range "BLOCK_N" : !loop.tile<[1, 16], i64>
    %rkc = loop.range "BLOCK_K" : !loop.tile<[1, 16], i64>
    %rkr = loop.range "BLOCK_K" : !loop.tile<[16, 1], i64>
    %bm = loop.binary mul %pm, %c64 : (i64, i64) -> i64
    %bn = loop.binary mul %pn, %c16 : (i64, i64) -> i64
    %rows = loop.binary add %bm, %rm : (i64, !loop.tile<[64, 1], i64>) -> !loop.tile<[64, 1], i64>
    %cols = loop.binary add %bn, %rn : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
    %mrow = loop.cmp lt %rows, %m : (!loop.tile<[64, 1], i64>, i64) -> !loop.tile<[64, 1], i1>
    %mcol = loop.cmp lt %cols, %n : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
    %mout = loop.binary and %mrow, %mcol : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
    %zero = loop.splat %f0 : f32 -> !loop.tile<[64, 16], f32>
    %acc = scf.for %kk = %c0 to %k step %c16 iter_args(%sum = %zero) -> (!loop.tile<[64, 16], f32>) : i64 {
      %ka = loop.binary add %kk, %rkc : (i64, !loop.tile<[1, 16], i64>) -> !loop.tile<[1, 16], i64>
      %kb = loop.binary add %kk, %rkr : (i64, !loop.tile<[16, 1], i64>) -> !loop.tile<[16, 1], i64>
      %mka = loop.cmp lt %ka, %k : (!loop.tile<[1, 16], i64>, i64) -> !loop.tile<[1, 16], i1>
      %mkb = loop.cmp lt %kb, %k : (!loop.tile<[16, 1], i64>, i64) -> !loop.tile<[16, 1], i1>
      %ma = loop.binary and %mrow, %mka : (!loop.tile<[64, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[64, 16], i1>
      %mb = loop.binary and %mkb, %mcol : (!loop.tile<[16, 1], i1>, !loop.tile<[1, 16], i1>) -> !loop.tile<[16, 16], i1>
      %a = loop.read %lhs[%rows, %ka] mask %ma : !graph.tensor<[M, K], f16>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1> -> !loop.tile<[64, 16], f16>
      %b = loop.read %rhs[%kb, %cols] mask %mb : !graph.tensor<[K, N], f16>[!loop.tile<[16, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[16, 16], i1> -> !loop.tile<[16, 16], f16>
      %b0 = loop.select %mb, %b, %h0 : (!loop.tile<[16, 16], i1>, !loop.tile<[16, 16], f16>, f16) -> !loop.tile<[16, 16], f16>
      %next = loop.dot %a, %b0, %sum : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
      scf.yield %next : !loop.tile<[64, 16], f32>
    }
    %relu = loop.binary max %acc, %f0 : (!loop.tile<[64, 16], f32>, f32) -> !loop.tile<[64, 16], f32>
    loop.write %relu to 0[%rows, %cols] mask %mout : !loop.tile<[64, 16], f32>[!loop.tile<[64, 1], i64>, !loop.tile<[1, 16], i64>] mask !loop.tile<[64, 16], i1>
    %arg = loop.reduce argmax %relu 1 : !loop.tile<[64, 16], f32> -> !loop.tile<[64], i32>
    %rows1 = loop.reduce max %rows 1 : !loop.tile<[64, 1], i64> -> !loop.tile<[64], i64>
    loop.write %arg to 1[%rows1] : !loop.tile<[64], i32>[!loop.tile<[64], i64>]
  }
  func.return %y, %best : !graph.tensor<[M, N], f32>, !graph.tensor<[M], i32>
}

// A kernel with no inputs: its region has no entry block arguments.
// CHECK-LABEL: func.func @iota() -> !graph.tensor<[N], i64> {
// CHECK-NEXT:    %y = loop.kernel @iota pointwise () grid [(N + 255) floordiv 256] tiles {BLOCK = 256} symbols [N] reason "no inputs" : () -> (!graph.tensor<[N], i64>) {
// CHECK-NEXT:      %p = loop.program_id 0 : i64
// CHECK-NEXT:      %c = loop.constant 256 : i64
// CHECK-NEXT:      %n = loop.size N : i64
// CHECK-NEXT:      %base = loop.binary mul %p, %c : (i64, i64) -> i64
// CHECK-NEXT:      %r = loop.range "BLOCK" : !loop.tile<[256], i64>
// CHECK-NEXT:      %i = loop.binary add %base, %r : (i64, !loop.tile<[256], i64>) -> !loop.tile<[256], i64>
// CHECK-NEXT:      %m = loop.cmp lt %i, %n : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i1>
// CHECK-NEXT:      loop.write %i to 0[%i] mask %m : !loop.tile<[256], i64>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N], i64>
// CHECK-NEXT:  }
func.func @iota() -> !graph.tensor<[N], i64> {
  %y = loop.kernel @iota pointwise () grid [N ceildiv 256] tiles {BLOCK = 256} symbols [N] reason "no inputs" : () -> (!graph.tensor<[N], i64>) {
    %p = loop.program_id 0 : i64
    %c = loop.constant 256 : i64
    %n = loop.size N : i64
    %base = loop.binary mul %p, %c : (i64, i64) -> i64
    %r = loop.range "BLOCK" : !loop.tile<[256], i64>
    %i = loop.binary add %base, %r : (i64, !loop.tile<[256], i64>) -> !loop.tile<[256], i64>
    %m = loop.cmp lt %i, %n : (!loop.tile<[256], i64>, i64) -> !loop.tile<[256], i1>
    loop.write %i to 0[%i] mask %m : !loop.tile<[256], i64>[!loop.tile<[256], i64>] mask !loop.tile<[256], i1>
  }
  func.return %y : !graph.tensor<[N], i64>
}

// Every kind of loop.unary, loop.binary, loop.cmp and loop.reduce; constants
// of each element type (i1 ones print as true/false).
// CHECK-LABEL: func.func @kinds(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
// CHECK-NEXT:    %y = loop.kernel @kinds pointwise (%x) grid [(N + 7) floordiv 8] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
// CHECK-NEXT:    ^bb0(%t: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %f = loop.constant 1.500000e+00 : f32
// CHECK-NEXT:      %h = loop.constant -2.500000e-01 : f16
// CHECK-NEXT:      %g = loop.constant 3.000000e+00 : bf16
// CHECK-NEXT:      %dd = loop.constant 1.000000e-03 : f64
// CHECK-NEXT:      %i = loop.constant -7 : i32
// CHECK-NEXT:      %l = loop.constant 42 : i64
// CHECK-NEXT:      %t1 = loop.constant true
// CHECK-NEXT:      %f1 = loop.constant false
// CHECK-NEXT:      %r = loop.range "B" : !loop.tile<[8], i64>
// CHECK-NEXT:      %v = loop.read %t[%r] : !graph.tensor<[N], f32>[!loop.tile<[8], i64>] -> !loop.tile<[8], f32>
// CHECK-NEXT:      %u0 = loop.unary neg %v : !loop.tile<[8], f32>
// CHECK-NEXT:      %u1 = loop.unary abs %u0 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u2 = loop.unary exp %u1 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u3 = loop.unary log %u2 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u4 = loop.unary sqrt %u3 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u5 = loop.unary rsqrt %u4 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u6 = loop.unary tanh %u5 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u7 = loop.unary sigmoid %u6 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u8 = loop.unary erf %u7 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u9 = loop.unary sin %u8 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u10 = loop.unary cos %u9 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u11 = loop.unary floor %u10 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u12 = loop.unary not %t1 : i1
// CHECK-NEXT:      %u13 = loop.unary log1p %u11 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u14 = loop.unary atan %u13 : !loop.tile<[8], f32>
// CHECK-NEXT:      %u15 = loop.binary atan2 %u14, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b0 = loop.binary add %u11, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b1 = loop.binary sub %b0, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b2 = loop.binary mul %f, %b1 : (f32, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b3 = loop.binary div %b2, %b2 : (!loop.tile<[8], f32>, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b4 = loop.binary floordiv %b3, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b5 = loop.binary rem %b4, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b6 = loop.binary pow %b5, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b7 = loop.binary max %b6, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b8 = loop.binary min %b7, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      %b9 = loop.binary and %t1, %f1 : (i1, i1) -> i1
// CHECK-NEXT:      %b10 = loop.binary or %i, %i : (i32, i32) -> i32
// CHECK-NEXT:      %b11 = loop.binary xor %l, %r : (i64, !loop.tile<[8], i64>) -> !loop.tile<[8], i64>
// CHECK-NEXT:      %c0 = loop.cmp eq %b8, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], i1>
// CHECK-NEXT:      %c1 = loop.cmp ne %h, %h : (f16, f16) -> i1
// CHECK-NEXT:      %c2 = loop.cmp lt %g, %g : (bf16, bf16) -> i1
// CHECK-NEXT:      %c3 = loop.cmp le %dd, %dd : (f64, f64) -> i1
// CHECK-NEXT:      %c4 = loop.cmp gt %i, %i : (i32, i32) -> i1
// CHECK-NEXT:      %c5 = loop.cmp ge %r, %l : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i1>
// CHECK-NEXT:      %s0 = loop.reduce sum %b8 0 : !loop.tile<[8], f32> -> f32
// CHECK-NEXT:      %s1 = loop.reduce prod %b8 0 : !loop.tile<[8], f32> -> f32
// CHECK-NEXT:      %s2 = loop.reduce max %b11 0 : !loop.tile<[8], i64> -> i64
// CHECK-NEXT:      %s3 = loop.reduce min %c0 0 : !loop.tile<[8], i1> -> i1
// CHECK-NEXT:      %s4 = loop.reduce argmax %b8 0 : !loop.tile<[8], f32> -> i64
// CHECK-NEXT:      %sel = loop.select %c1, %b8, %s0 : (i1, !loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
// CHECK-NEXT:      loop.write %sel to 0[%r] : !loop.tile<[8], f32>[!loop.tile<[8], i64>]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N], f32>
// CHECK-NEXT:  }
func.func @kinds(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = loop.kernel @kinds pointwise (%x) grid [N ceildiv 8] tiles {B = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %f = loop.constant 1.500000e+00 : f32
    %h = loop.constant -2.500000e-01 : f16
    %g = loop.constant 3.000000e+00 : bf16
    %dd = loop.constant 1.000000e-03 : f64
    %i = loop.constant -7 : i32
    %l = loop.constant 42 : i64
    %t1 = loop.constant true
    %f1 = loop.constant false
    %r = loop.range "B" : !loop.tile<[8], i64>
    %v = loop.read %t[%r] : !graph.tensor<[N], f32>[!loop.tile<[8], i64>] -> !loop.tile<[8], f32>
    %u0 = loop.unary neg %v : !loop.tile<[8], f32>
    %u1 = loop.unary abs %u0 : !loop.tile<[8], f32>
    %u2 = loop.unary exp %u1 : !loop.tile<[8], f32>
    %u3 = loop.unary log %u2 : !loop.tile<[8], f32>
    %u4 = loop.unary sqrt %u3 : !loop.tile<[8], f32>
    %u5 = loop.unary rsqrt %u4 : !loop.tile<[8], f32>
    %u6 = loop.unary tanh %u5 : !loop.tile<[8], f32>
    %u7 = loop.unary sigmoid %u6 : !loop.tile<[8], f32>
    %u8 = loop.unary erf %u7 : !loop.tile<[8], f32>
    %u9 = loop.unary sin %u8 : !loop.tile<[8], f32>
    %u10 = loop.unary cos %u9 : !loop.tile<[8], f32>
    %u11 = loop.unary floor %u10 : !loop.tile<[8], f32>
    %u12 = loop.unary not %t1 : i1
    %u13 = loop.unary log1p %u11 : !loop.tile<[8], f32>
    %u14 = loop.unary atan %u13 : !loop.tile<[8], f32>
    %u15 = loop.binary atan2 %u14, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b0 = loop.binary add %u11, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b1 = loop.binary sub %b0, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b2 = loop.binary mul %f, %b1 : (f32, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
    %b3 = loop.binary div %b2, %b2 : (!loop.tile<[8], f32>, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
    %b4 = loop.binary floordiv %b3, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b5 = loop.binary rem %b4, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b6 = loop.binary pow %b5, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b7 = loop.binary max %b6, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b8 = loop.binary min %b7, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    %b9 = loop.binary and %t1, %f1 : (i1, i1) -> i1
    %b10 = loop.binary or %i, %i : (i32, i32) -> i32
    %b11 = loop.binary xor %l, %r : (i64, !loop.tile<[8], i64>) -> !loop.tile<[8], i64>
    %c0 = loop.cmp eq %b8, %f : (!loop.tile<[8], f32>, f32) -> !loop.tile<[8], i1>
    %c1 = loop.cmp ne %h, %h : (f16, f16) -> i1
    %c2 = loop.cmp lt %g, %g : (bf16, bf16) -> i1
    %c3 = loop.cmp le %dd, %dd : (f64, f64) -> i1
    %c4 = loop.cmp gt %i, %i : (i32, i32) -> i1
    %c5 = loop.cmp ge %r, %l : (!loop.tile<[8], i64>, i64) -> !loop.tile<[8], i1>
    %s0 = loop.reduce sum %b8 0 : !loop.tile<[8], f32> -> f32
    %s1 = loop.reduce prod %b8 0 : !loop.tile<[8], f32> -> f32
    %s2 = loop.reduce max %b11 0 : !loop.tile<[8], i64> -> i64
    %s3 = loop.reduce min %c0 0 : !loop.tile<[8], i1> -> i1
    %s4 = loop.reduce argmax %b8 0 : !loop.tile<[8], f32> -> i64
    %sel = loop.select %c1, %b8, %s0 : (i1, !loop.tile<[8], f32>, f32) -> !loop.tile<[8], f32>
    loop.write %sel to 0[%r] : !loop.tile<[8], f32>[!loop.tile<[8], i64>]
  }
  func.return %y : !graph.tensor<[N], f32>
}

// GENERIC: "loop.kernel"(%x) <{sym_name = "rows", kind = "reduction", grid = [#sym.expr<N>], tiles = {BLOCK_R = 1024 : i64}, symbols = ["D"], reason = "looped row reduction"}> ({
// GENERIC-NEXT: ^bb0(%in: !graph.tensor<[N, D], f32>):
// GENERIC-NEXT: %zero = "loop.constant"() <{value = 0 : i64}> : () -> i64
// GENERIC-NEXT: %ninf = "loop.constant"() <{value = 0xff800000 : f32}> : () -> f32
// GENERIC-NEXT: %d = "loop.size"() <{expr = #sym.expr<D>}> : () -> i64
// GENERIC-NEXT: %step = "loop.constant"() <{value = 1024 : i64}> : () -> i64
// GENERIC-NEXT: %row = "loop.program_id"() <{axis = 0 : i64}> : () -> i64
// GENERIC-NEXT: %init = "loop.splat"(%ninf) : (f32) -> !loop.tile<[1024], f32>
// GENERIC: %r = "loop.range"() <{block = "BLOCK_R"}> : () -> !loop.tile<[1024], i64>
// GENERIC-NEXT: %col = "loop.binary"(%k, %r) <{kind = #elementwise<kind add>}> : (i64, !loop.tile<[1024], i64>) -> !loop.tile<[1024], i64>
// GENERIC-NEXT: %m = "loop.cmp"(%col, %d) <{kind = #elementwise<predicate lt>}> : (!loop.tile<[1024], i64>, i64) -> !loop.tile<[1024], i1>
// GENERIC-NEXT: %v = "loop.read"(%in, %row, %col, %m) <{operandSegmentSizes = array<i32: 1, 2, 1>}> : (!graph.tensor<[N, D], f32>, i64, !loop.tile<[1024], i64>, !loop.tile<[1024], i1>) -> !loop.tile<[1024], f32>
// GENERIC-NEXT: %vm = "loop.select"(%m, %v, %ninf) : (!loop.tile<[1024], i1>, !loop.tile<[1024], f32>, f32) -> !loop.tile<[1024], f32>
// GENERIC: %rmax = "loop.reduce"(%max) <{kind = #elementwise<reduction max>, axis = 0 : i64}> : (!loop.tile<[1024], f32>) -> f32
// GENERIC: %e = "loop.unary"(%s) <{kind = #elementwise<kind exp>}> : (!loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// GENERIC-NEXT: "loop.write"(%e, %row, %col2, %m2) <{output = 0 : i64, operandSegmentSizes = array<i32: 1, 2, 1>}> : (!loop.tile<[1024], f32>, i64, !loop.tile<[1024], i64>, !loop.tile<[1024], i1>) -> ()
// GENERIC: }) {note = "kept"} : (!graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32>
// GENERIC: %o0, %o1 = "loop.kernel"(%a, %b, %s) <{sym_name = "pointwise", kind = "pointwise", grid = [#sym.expr<B>, #sym.expr<(N + 15) floordiv 16>], tiles = {ROWS = 1 : i64, COLS = 16 : i64}, symbols = ["B", "N"], reason = ""}> ({
// GENERIC: %n16 = "loop.size"() <{expr = #sym.expr<B + 16*N>}> : () -> i32
// GENERIC: %vb = "loop.read"(%tb, %cols) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!graph.tensor<[N], f32>, !loop.tile<[1, 16], i32>) -> !loop.tile<[1, 16], f32>
// GENERIC-NEXT: %vs = "loop.read"(%ts) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (!graph.tensor<[], i32>) -> i32
// GENERIC-NEXT: %fs = "loop.cast"(%vs) : (i32) -> f32
// GENERIC: "loop.write"(%first) <{output = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}> : (f32) -> ()
// GENERIC: %y, %best = "loop.kernel"(%x, %w) <{sym_name = "matmul", kind = "matmul", grid = [#sym.expr<(M + 63) floordiv 64>, #sym.expr<(N + 15) floordiv 16>, #sym.expr<1>], tiles = {BLOCK_M = 64 : i64, BLOCK_N = 16 : i64, BLOCK_K = 16 : i64}, symbols = ["K", "M", "N"], reason = "a K loop of loop.dot"}> ({
// GENERIC: %next = "loop.dot"(%a, %b0, %sum) : (!loop.tile<[64, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[64, 16], f32>) -> !loop.tile<[64, 16], f32>
// GENERIC: %arg = "loop.reduce"(%relu) <{kind = #elementwise<reduction argmax>, axis = 1 : i64}> : (!loop.tile<[64, 16], f32>) -> !loop.tile<[64], i32>
// GENERIC: "loop.write"(%arg, %rows1) <{output = 1 : i64, operandSegmentSizes = array<i32: 1, 1, 0>}> : (!loop.tile<[64], i32>, !loop.tile<[64], i64>) -> ()
// GENERIC: %y = "loop.kernel"() <{sym_name = "iota", kind = "pointwise", grid = [#sym.expr<(N + 255) floordiv 256>], tiles = {BLOCK = 256 : i64}, symbols = ["N"], reason = "no inputs"}> ({
// GENERIC-NEXT: %p = "loop.program_id"() <{axis = 0 : i64}> : () -> i64
// GENERIC: }) : () -> !graph.tensor<[N], i64>
// GENERIC: %t1 = "loop.constant"() <{value = true}> : () -> i1
// GENERIC: %u12 = "loop.unary"(%t1) <{kind = #elementwise<kind not>}> : (i1) -> i1
