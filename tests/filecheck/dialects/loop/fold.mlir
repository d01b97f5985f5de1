// The loop dialect's folders (xDSL's HasFolderInterface), run by canonicalize:
// the integer identities that hold for every value, which the tile pass also
// applies to every op it builds. loop.binary folds on integers other than i1,
// loop.cast to its own type folds to its input, loop.constant is ConstantLike.
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
  %zero = loop.constant 0 : i64
  %one = loop.constant 1 : i64
  %one32 = loop.constant 1 : i32
  %0 = loop.binary add %i, %zero : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %1 = loop.binary add %zero, %i : (i64, !loop.tile<[1, 64], i64>) -> !loop.tile<[1, 64], i64>
  %2 = loop.binary mul %i, %one : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %3 = loop.binary mul %one, %i : (i64, !loop.tile<[1, 64], i64>) -> !loop.tile<[1, 64], i64>
  %4 = loop.binary floordiv %i, %one : (!loop.tile<[1, 64], i64>, i64) -> !loop.tile<[1, 64], i64>
  %5 = loop.binary floordiv %s, %one32 : (i32, i32) -> i32
  func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, !loop.tile<[1, 64], i64>, i32
}

// -----

// x * 0, 0 * x and x rem 1 are 0: a new scalar constant for a scalar result.
// CHECK-LABEL: func.func @zeros(%s: i64) -> (i64, i64, i64) {
// CHECK-NEXT:    %0 = loop.constant 0 : i64
// CHECK-NEXT:    %1 = loop.constant 0 : i64
// CHECK-NEXT:    %2 = loop.constant 0 : i64
// CHECK-NEXT:    func.return %0, %1, %2 : i64, i64, i64
// CHECK-NEXT:  }
func.func @zeros(%s: i64) -> (i64, i64, i64) {
  %zero = loop.constant 0 : i64
  %one = loop.constant 1 : i64
  %0 = loop.binary mul %s, %zero : (i64, i64) -> i64
  %1 = loop.binary mul %zero, %s : (i64, i64) -> i64
  %2 = loop.binary rem %s, %one : (i64, i64) -> i64
  func.return %0, %1, %2 : i64, i64, i64
}

// -----

// Two constants added, subtracted or multiplied, wrapping at the type's width.
// CHECK-LABEL: func.func @constants() -> (i64, i64, i64, i32) {
// CHECK-NEXT:    %0 = loop.constant 10 : i64
// CHECK-NEXT:    %1 = loop.constant -4 : i64
// CHECK-NEXT:    %2 = loop.constant 21 : i64
// CHECK-NEXT:    %3 = loop.constant -2147483648 : i32
// CHECK-NEXT:    func.return %0, %1, %2, %3 : i64, i64, i64, i32
// CHECK-NEXT:  }
func.func @constants() -> (i64, i64, i64, i32) {
  %three = loop.constant 3 : i64
  %seven = loop.constant 7 : i64
  %max = loop.constant 2147483647 : i32
  %one = loop.constant 1 : i32
  %0 = loop.binary add %three, %seven : (i64, i64) -> i64
  %1 = loop.binary sub %three, %seven : (i64, i64) -> i64
  %2 = loop.binary mul %three, %seven : (i64, i64) -> i64
  %3 = loop.binary add %max, %one : (i32, i32) -> i32
  func.return %0, %1, %2, %3 : i64, i64, i64, i32
}

// -----

// A cast to the input's own type is the input; other casts stay.
// CHECK-LABEL: func.func @casts(%x: !loop.tile<[128], f32>) -> (!loop.tile<[128], f32>, !loop.tile<[128], i32>) {
// CHECK-NEXT:    %0 = loop.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i32>
// CHECK-NEXT:    func.return %x, %0 : !loop.tile<[128], f32>, !loop.tile<[128], i32>
// CHECK-NEXT:  }
func.func @casts(%x: !loop.tile<[128], f32>) -> (!loop.tile<[128], f32>, !loop.tile<[128], i32>) {
  %0 = loop.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], f32>
  %1 = loop.cast %x : !loop.tile<[128], f32> -> !loop.tile<[128], i32>
  func.return %0, %1 : !loop.tile<[128], f32>, !loop.tile<[128], i32>
}

// -----

// What does not fold: a tile times 0 (its value would be a scalar), floats
// (x + 0.0 is not x for x = -0.0), i1, and the kinds without a constant fold
// (floordiv, rem, sub of two constants; x - 0 is not among the identities).
// CHECK-LABEL: func.func @kept(%i: !loop.tile<[64], i64>, %f: f32, %b: i1) -> (!loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>) {
// CHECK-NEXT:    %zero = loop.constant 0 : i64
// CHECK-NEXT:    %fzero = loop.constant 0.000000e+00 : f32
// CHECK-NEXT:    %true = loop.constant true
// CHECK-NEXT:    %six = loop.constant 6 : i64
// CHECK-NEXT:    %four = loop.constant 4 : i64
// CHECK-NEXT:    %0 = loop.binary mul %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
// CHECK-NEXT:    %1 = loop.binary add %f, %fzero : (f32, f32) -> f32
// CHECK-NEXT:    %2 = loop.binary and %b, %true : (i1, i1) -> i1
// CHECK-NEXT:    %3 = loop.binary floordiv %six, %four : (i64, i64) -> i64
// CHECK-NEXT:    %4 = loop.binary rem %six, %four : (i64, i64) -> i64
// CHECK-NEXT:    %5 = loop.binary sub %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
// CHECK-NEXT:    func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>
// CHECK-NEXT:  }
func.func @kept(%i: !loop.tile<[64], i64>, %f: f32, %b: i1) -> (!loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>) {
  %zero = loop.constant 0 : i64
  %fzero = loop.constant 0.000000e+00 : f32
  %true = loop.constant true
  %six = loop.constant 6 : i64
  %four = loop.constant 4 : i64
  %0 = loop.binary mul %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
  %1 = loop.binary add %f, %fzero : (f32, f32) -> f32
  %2 = loop.binary and %b, %true : (i1, i1) -> i1
  %3 = loop.binary floordiv %six, %four : (i64, i64) -> i64
  %4 = loop.binary rem %six, %four : (i64, i64) -> i64
  %5 = loop.binary sub %i, %zero : (!loop.tile<[64], i64>, i64) -> !loop.tile<[64], i64>
  func.return %0, %1, %2, %3, %4, %5 : !loop.tile<[64], i64>, f32, i1, i64, i64, !loop.tile<[64], i64>
}
