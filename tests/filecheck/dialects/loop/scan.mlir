// tile.scan and tile.scan: printed, re-parsed and printed again, directly
// and through the generic form.

// RUN: irc-opt %s | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @scans(
// CHECK-NEXT:    %0 = tile.scan sum %t 0 : !loop.tile<[1024], f32>
// CHECK-NEXT:    %1 = tile.scan prod %m 1 : !loop.tile<[4, 8], i64>
// CHECK-NEXT:    %2 = tile.scan sum %h 0 : !loop.tile<[16], f16>
// CHECK-NEXT:    %3 = tile.scan sum %b 0 : !triton.tensor<[128], i32>
// CHECK-NEXT:    %4 = tile.scan prod %c 1 : !triton.tensor<[2, 64], f64>
// GENERIC: "tile.scan"(%t) <{kind = #elementwise<reduction sum>, axis = 0 : i64}> : (!loop.tile<[1024], f32>) -> !loop.tile<[1024], f32>
// GENERIC: "tile.scan"(%c) <{kind = #elementwise<reduction prod>, axis = 1 : i64}> : (!triton.tensor<[2, 64], f64>) -> !triton.tensor<[2, 64], f64>
func.func @scans(%t: !loop.tile<[1024], f32>, %m: !loop.tile<[4, 8], i64>, %h: !loop.tile<[16], f16>, %b: !triton.tensor<[128], i32>, %c: !triton.tensor<[2, 64], f64>) {
  %0 = tile.scan sum %t 0 : !loop.tile<[1024], f32>
  %1 = tile.scan prod %m 1 : !loop.tile<[4, 8], i64>
  %2 = tile.scan sum %h 0 : !loop.tile<[16], f16>
  %3 = tile.scan sum %b 0 : !triton.tensor<[128], i32>
  %4 = tile.scan prod %c 1 : !triton.tensor<[2, 64], f64>
  func.return
}
