// The verifiers of tile.scan and tile.scan (one base) reject bad IR with
// a message that says what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

func.func @scalar(%x: f32) {
  // expected-error@+1 {{tile.scan scans a tile, not a scalar}}
  %0 = tile.scan sum %x 0 : f32
  func.return
}

// -----

func.func @axis(%x: !loop.tile<[4, 8], f32>) {
  // expected-error@+1 {{tile.scan axis 2 out of range}}
  %0 = tile.scan sum %x 2 : !loop.tile<[4, 8], f32>
  func.return
}

// -----

func.func @kind(%x: !triton.tensor<[8], f32>) {
  // expected-error@+1 {{tile.scan computes running sums and products, not max}}
  %0 = tile.scan max %x 0 : !triton.tensor<[8], f32>
  func.return
}

// -----

func.func @bools(%x: !loop.tile<[8], i1>) {
  // expected-error@+1 {{tile.scan is not defined on i1}}
  %0 = tile.scan sum %x 0 : !loop.tile<[8], i1>
  func.return
}
