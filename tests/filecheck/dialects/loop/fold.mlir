// The loop dialect's folders (xDSL's HasFolderInterface), run by canonicalize:
// the integer identities that hold for every value, which the tile pass also
// applies to every op it builds. tile.binary folds on integers other than i1,
// tile.cast to its own type folds to its input, tile.constant is ConstantLike.
// Folds to an operand keep the result's type (constants are scalars); a fold
// to 0 of a tile result is left (the dialect materialises scalar constants).

// RUN: irc-opt %s --split-input-file -p canonicalize | filecheck %s

// A second run changes nothing (the output is a fixed point).
// RUN: irc-opt %s --split-input-file -p canonicalize > %t.mlir
// RUN: irc-opt %t.mlir --split-input-file -p canonicalize | diff %t.mlir -

// x + 0, 0 + x, x * 1, 1 * x and x floordiv 1 are x, on tiles and scalars.
// CHECK-LABEL: func.func @identities(%i: !loop.tile<[1, 64], i64>, %s: i32) -> (!loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, i32) {
// CHECK-NEXT:    func.return %i, %i, %i, %i, %i, %s : !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, i32
// CHECK-NEXT:  }
func.func @identities(%i: !loop.tile<[1, 64], i64>, %s: i32) -> (!loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, i32) {
  %zero = tile.constant 0 : i64
  %one = tile.constant 1 : i64
  %one32 = tile.constant 1 : i32
  %0 = tile.binary add %i, %zero : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %1 = tile.binary add %zero, %i : (i64, !loop.tile<[1, 64], i64>) -> !loop.tile<[1, 64], i64>
  %2 = tile.binary mul %i, %one : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %3 = tile.binary mul %one, %i : (i64, !loop.tile<[1, 64], i64>) -> !loop.tile<[1, 64], i64>
  %4 = tile.binary floordiv %i, %one : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %5 = tile.binary floordiv %s, %one32 : (i32, i32) -> i32
  func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, i32
}

// -----

// x * 0, 0 * x and x rem 1 are 0: a new scalar constant for a scalar result.
// CHECK-LABEL: func.func @zeros(%s: i64) -> (i64, i64, i64) {
// CHECK-NEXT:    %0 = tile.constant 0 : i64
// CHECK-NEXT:    %1 = tile.constant 0 : i64
// CHECK-NEXT:    %2 = tile.constant 0 : i64
// CHECK-NEXT:    func.return %0, %1, %2 : i64, i64, i64
// CHECK-NEXT:  }
func.func @zeros(%s: i64) -> (i64, i64, i64) {
  %zero = tile.constant 0 : i64
  %one = tile.constant 1 : i64
  %0 = tile.binary mul %s, %zero : (i64, i64) -> i64
  %1 = tile.binary mul %zero, %s : (i64, i64) -> i64
  %2 = tile.binary rem %s, %one : (i64, i64) -> i64
  func.return %0, %1, %2 : i64, i64, i64
}

// -----

// Two constants added, subtracted or multiplied, wrapping at the type's width.
// CHECK-LABEL: func.func @constants() -> (i64, i64, i64, i32) {
// CHECK-NEXT:    %0 = tile.constant 10 : i64
// CHECK-NEXT:    %1 = tile.constant -4 : i64
// CHECK-NEXT:    %2 = tile.constant 21 : i64
// CHECK-NEXT:    %3 = tile.constant -2147483648 : i32
// CHECK-NEXT:    func.return %0, %1, %2, %3 : i64, i64, i64, i32
// CHECK-NEXT:  }
func.func @constants() -> (i64, i64, i64, i32) {
  %three = tile.constant 3 : i64
  %seven = tile.constant 7 : i64
  %max = tile.constant 2147483647 : i32
  %one = tile.constant 1 : i32
  %0 = tile.binary add %three, %seven : (i64, i64) -> i64
  %1 = tile.binary sub %three, %seven : (i64, i64) -> i64
  %2 = tile.binary mul %three, %seven : (i64, i64) -> i64
  %3 = tile.binary add %max, %one : (i32, i32) -> i32
  func.return %0, %1, %2, %3 : i64, i64, i64, i32
}

// -----

// A cast to the input's own type is the input; other casts stay.
// CHECK-LABEL: func.func @casts(%x: !loop.tile<[128], f32>) -> (!loop.tile<[128], f32>, !loop.tile<[128], i32>) {
// CHECK-NEXT:    %0 = tile.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i32>
// CHECK-NEXT:    func.return %x, %0 : !loop.tile<[128], f32>, !loop.tile<[128], i32>
// CHECK-NEXT:  }
func.func @casts(%x: !loop.tile<[128], f32>) -> (!loop.tile<[128], f32>, !loop.tile<[128], i32>) {
  %0 = tile.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], f32>
  %1 = tile.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i32>
  func.return %0, %1 : !loop.tile<[128], f32>, !loop.tile<[128], i32>
}

// -----

// What does not fold: a tile times 0 (its value would be a scalar), floats
// (x + 0.0 is not x for x = -0.0), i1, and the kinds without a constant fold
// (floordiv, rem, sub of two constants; x - 0 is not among the identities).
// CHECK-LABEL: func.func @kept(%i: !loop.tile<[64], i64>, %f: f32, %b: i1) -> (!loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>) {
// CHECK-NEXT:    %zero = tile.constant 0 : i64
// CHECK-NEXT:    %fzero = tile.constant 0.000000e+00 : f32
// CHECK-NEXT:    %true = tile.constant true
// CHECK-NEXT:    %six = tile.constant 6 : i64
// CHECK-NEXT:    %four = tile.constant 4 : i64
// CHECK-NEXT:    %0 = tile.binary mul %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
// CHECK-NEXT:    %1 = tile.binary add %f, %fzero : (f32, f32) -> f32
// CHECK-NEXT:    %2 = tile.binary and %b, %true : (i1, i1) -> i1
// CHECK-NEXT:    %3 = tile.binary floordiv %six, %four : (i64, i64) -> i64
// CHECK-NEXT:    %4 = tile.binary rem %six, %four : (i64, i64) -> i64
// CHECK-NEXT:    %5 = tile.binary sub %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
// CHECK-NEXT:    func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>
// CHECK-NEXT:  }
func.func @kept(%i: !loop.tile<[64], i64>, %f: f32, %b: i1) -> (!loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>) {
  %zero = tile.constant 0 : i64
  %fzero = tile.constant 0.000000e+00 : f32
  %true = tile.constant true
  %six = tile.constant 6 : i64
  %four = tile.constant 4 : i64
  %0 = tile.binary mul %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
  %1 = tile.binary add %f, %fzero : (f32, f32) -> f32
  %2 = tile.binary and %b, %true : (i1, i1) -> i1
  %3 = tile.binary floordiv %six, %four : (i64, i64) -> i64
  %4 = tile.binary rem %six, %four : (i64, i64) -> i64
  %5 = tile.binary sub %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
  func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>
}
