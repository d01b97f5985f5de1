// The loop dialect's verifiers and type syntax, and those of the tile
// dialect it computes with (irc/dialects/tile.py), reject bad IR with a
// message that says what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

// The tile type.

// expected-error@+1 {{a loop.tile has rank >= 1; a scalar is a builtin type}}
func.func @rank_zero(%x: !loop.tile<[], f32>) {
  func.return
}

// -----

// expected-error@+1 {{loop.tile dims must be powers of two (or 1), not 48}}
func.func @dim_not_power_of_two(%x: !loop.tile<[64, 48], f32>) {
  func.return
}

// -----

// expected-error@+1 {{loop.tile dims must be powers of two (or 1), not 0}}
func.func @dim_zero(%x: !loop.tile<[0], f32>) {
  func.return
}

// -----

// expected-error@+1 {{loop.tile dims must be powers of two (or 1), not -4}}
func.func @dim_negative(%x: !loop.tile<[-4], f32>) {
  func.return
}

// -----

// expected-error@+1 {{'[' expected}}
func.func @dims_unbracketed(%x: !loop.tile<64, f32>) {
  func.return
}

// -----

// expected-error@+1 {{Expected integer literal}}
func.func @dim_symbolic(%x: !loop.tile<[N], f32>) {
  func.return
}

// -----

// expected-error@+1 {{Expected ','}}
func.func @no_element_type(%x: !loop.tile<[64]>) {
  func.return
}

// -----

// expected-error@+1 {{'>' expected}}
func.func @extra_parameter(%x: !loop.tile<[64], f32, f32>) {
  func.return
}

// -----

// Kernels.

func.func @kind(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{unknown kernel kind 'scan'; expected one of pointwise, reduction, matmul, attention}}
  %y = loop.kernel @k scan (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    loop.write %v to 0[%p] : f32[i64]
  }
  func.return
}

// -----

// A loop in a kernel carries each value at one type: a tile may not become
// a scalar from one iteration to the next.
func.func @while_changes_type() {
  // expected-error@+1 {{scf.while carries ['!loop.tile<[16], i32>'] but the values the body yields are ['i32']}}
  loop.kernel @k pointwise () grid [1] tiles {BLOCK = 16} symbols [] reason "" : () -> () {
  ^bb0:
    %lanes = tile.range "BLOCK" : !loop.tile<[16], i32>
    %two = tile.constant 2 : i32
    %r = scf.while (%c = %lanes) : (!loop.tile<[16], i32>) -> !loop.tile<[16], i32> {
      %t = tile.constant 1 : i1
      scf.condition(%t) %c : !loop.tile<[16], i32>
    } do {
    ^bb1(%d: !loop.tile<[16], i32>):
      scf.yield %two : i32
    }
  }
  func.return
}

// -----

func.func @no_grid() {
  // expected-error@+1 {{a loop.kernel grid has 1 to 3 axes}}
  loop.kernel @k pointwise () grid [] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @four_axes() {
  // expected-error@+1 {{a loop.kernel grid has 1 to 3 axes}}
  loop.kernel @k pointwise () grid [N, 1, 1, 1] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @tile_size() {
  // expected-error@+1 {{tile BLOCK = 48 is not a power of two}}
  loop.kernel @k pointwise () grid [N] tiles {BLOCK = 48} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @tile_size_zero() {
  // expected-error@+1 {{tile BLOCK = 0 is not a power of two}}
  loop.kernel @k pointwise () grid [N] tiles {BLOCK = 0} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @tile_size_negative() {
  // expected-error@+1 {{Expected integer literal}}
  loop.kernel @k pointwise () grid [N] tiles {BLOCK = -4} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @input_types(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{loop.kernel has 1 inputs but 2 input types}}
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f32>):
  }
  func.return
}

// -----

func.func @block_arguments(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{loop.kernel block arguments must match its inputs}}
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f64>):
  }
  func.return
}

// -----

func.func @no_block_arguments(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{loop.kernel block arguments must match its inputs}}
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
    %p = tile.program_id 0 : i64
  }
  func.return
}

// -----

func.func @empty_body() {
  // expected-error@+1 {{Region 'body' at position 0 expected a single block, but got 0 blocks}}
  loop.kernel @k pointwise () grid [N] tiles {} symbols [] reason "" : () -> () {
  }
  func.return
}

// -----

func.func @no_kind() {
  // expected-error@+1 {{identifier expected}}
  loop.kernel @k () grid [N] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @grid_syntax() {
  // expected-error@+1 {{expected a shape expression (integer, symbol or '(')}}
  loop.kernel @k pointwise () grid [N +] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
  }
  func.return
}

// -----

func.func @input_not_tensor(%x: f32) {
  // expected-error@+1 {{f32 should be of base attribute graph.tensor}}
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (f32) -> () {
  ^bb0(%t: f32):
  }
  func.return
}

// -----

func.func @output_not_tensor() {
  // expected-error@+1 {{f32 should be of base attribute graph.tensor}}
  %y = loop.kernel @k pointwise () grid [N] tiles {} symbols [] reason "" : () -> (f32) {
  ^bb0:
  }
  func.return
}

// -----

func.func @unwritten(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{loop.kernel never writes outputs [1]}}
  %y, %z = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    loop.write %v to 0[%p] : f32[i64]
  }
  func.return
}

// -----

func.func @size_symbols() {
  // expected-error@+1 {{tile.size uses ['D', 'M'], not among the kernel's symbols}}
  loop.kernel @k pointwise () grid [N] tiles {} symbols [N] reason "" : () -> () {
  ^bb0:
    %s = tile.size D * N + M : i64
  }
  func.return
}

// -----

func.func @range_tile() {
  // expected-error@+1 {{tile.range names unknown tile 'C'}}
  loop.kernel @k pointwise () grid [N] tiles {B = 64} symbols [] reason "" : () -> () {
  ^bb0:
    %r = tile.range "C" : !loop.tile<[64], i64>
  }
  func.return
}

// -----

func.func @block_size_tile() {
  // expected-error@+1 {{tile.block_size names unknown tile 'C'}}
  loop.kernel @k pointwise () grid [N] tiles {B = 64} symbols [] reason "" : () -> () {
  ^bb0:
    %b = tile.block_size "C" : i64
  }
  func.return
}

// -----

func.func @range_span() {
  // expected-error@+1 {{tile.range 'B' must span 64 lanes}}
  loop.kernel @k pointwise () grid [N] tiles {B = 64} symbols [] reason "" : () -> () {
  ^bb0:
    %r = tile.range "B" : !loop.tile<[1, 32], i64>
  }
  func.return
}

// -----

// Indices and sizes.

func.func @program_id_axis() {
  loop.kernel @k pointwise () grid [1] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
    // expected-error@+1 {{tile.program_id axis must be 0, 1 or 2}}
    %p = tile.program_id 3 : i64
  }
  func.return
}

// -----

func.func @program_id_negative_axis() {
  loop.kernel @k pointwise () grid [1] tiles {} symbols [] reason "" : () -> () {
  ^bb0:
    // expected-error@+1 {{tile.program_id axis must be 0, 1 or 2}}
    %p = tile.program_id -1 : i64
  }
  func.return
}

// -----

func.func @program_id_type() {
  // expected-error@+1 {{f32 should be of base attribute integer_type}}
  %p = tile.program_id 0 : f32
  func.return
}

// -----

func.func @size_type() {
  // expected-error@+1 {{f32 should be of base attribute integer_type}}
  %s = tile.size N : f32
  func.return
}

// -----

"func.func"() <{sym_name = "size_generic_type", function_type = () -> ()}> ({
  // expected-error@+1 {{f32 should be of base attribute integer_type}}
  %s = "tile.size"() <{expr = #sym.expr<N>}> : () -> f32
  "func.return"() : () -> ()
}) : () -> ()

// -----

func.func @size_syntax() {
  // expected-error@+1 {{expected a shape expression (integer, symbol or '(')}}
  %s = tile.size N + : i64
  func.return
}

// -----

func.func @range_dims() {
  loop.kernel @k pointwise () grid [1] tiles {B = 64} symbols [] reason "" : () -> () {
  ^bb0:
    // expected-error@+1 {{tile.range spans one dim of its tile}}
    %r = tile.range "B" : !loop.tile<[64, 64], i64>
  }
  func.return
}

// -----

func.func @range_type() {
  loop.kernel @k pointwise () grid [1] tiles {B = 64} symbols [] reason "" : () -> () {
  ^bb0:
    // expected-error@+1 {{tile.range yields integers}}
    %r = tile.range "B" : !loop.tile<[64], f32>
  }
  func.return
}

// -----

func.func @range_scalar() {
  // expected-error@+1 {{i64 should be of attribute subclassing `TileShapedType`}}
  %r = tile.range "B" : i64
  func.return
}

// -----

// Tile compute.

func.func @constant_value() {
  // expected-error@+1 {{tile.constant takes a typed integer or float}}
  %c = tile.constant "one"
  func.return
}

// -----

"func.func"() <{sym_name = "constant_type", function_type = () -> ()}> ({
  // expected-error@+1 {{tile.constant result type must be the value's type}}
  %c = "tile.constant"() <{value = 1.000000e+00 : f32}> : () -> f64
  "func.return"() : () -> ()
}) : () -> ()

// -----

func.func @splat_tile(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.splat takes a scalar}}
  %s = tile.splat %x : !loop.tile<[4], f32> -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @splat_type(%x: f32) {
  // expected-error@+1 {{tile.splat keeps the element type}}
  %s = tile.splat %x : f32 -> !loop.tile<[4], f64>
  func.return
}

// -----

func.func @splat_to_scalar(%x: f32) {
  // expected-error@+1 {{f32 should be of attribute subclassing `TileShapedType`}}
  %s = tile.splat %x : f32 -> f32
  func.return
}

// -----

func.func @unary_kind(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{unknown elementwise kind 'exp2'}}
  %y = tile.unary exp2 %x : !loop.tile<[4], f32>
  func.return
}

// -----

func.func @unary_arity(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.unary: add is not a function of one operand; expected one of ['abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'exp', 'expm1', 'floor', 'log', 'log10', 'log1p', 'log2', 'neg', 'not', 'rint', 'rsqrt', 'sigmoid', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'trunc']}}
  %y = tile.unary add %x : !loop.tile<[4], f32>
  func.return
}

// -----

"func.func"() <{sym_name = "unary_type", function_type = (f32) -> ()}> ({
^bb0(%x: f32):
  // expected-error@+1 {{attribute f32 expected from variable 'T', but got f64}}
  %y = "tile.unary"(%x) <{kind = "exp"}> : (f32) -> f64
  "func.return"() : () -> ()
}) : () -> ()

// -----

func.func @binary_kind(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{unknown elementwise kind 'plus'}}
  %y = tile.binary plus %x, %x : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @binary_arity(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.binary: exp is not a function of two operands; expected one of ['add', 'and', 'atan2', 'div', 'floordiv', 'max', 'min', 'mul', 'or', 'pow', 'rem', 'sub', 'xor']}}
  %y = tile.binary exp %x, %x : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @binary_types(%x: !loop.tile<[4], f32>, %s: f64) {
  // expected-error@+1 {{tile.binary operands must have the result's element type}}
  %y = tile.binary add %x, %s : (!loop.tile<[4], f32>, f64) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @binary_broadcast(%x: !loop.tile<[4], f32>, %z: !loop.tile<[8], f32>) {
  // expected-error@+1 {{tile.binary: tile shapes [4], [8] do not broadcast}}
  %y = tile.binary add %x, %z : (!loop.tile<[4], f32>, !loop.tile<[8], f32>) -> !loop.tile<[8], f32>
  func.return
}

// -----

func.func @binary_shape(%x: !loop.tile<[4, 1], f32>, %z: !loop.tile<[1, 8], f32>) {
  // expected-error@+1 {{tile.binary: result shape [4, 1] must be the broadcast shape [4, 8]}}
  %y = tile.binary add %x, %z : (!loop.tile<[4, 1], f32>, !loop.tile<[1, 8], f32>) -> !loop.tile<[4, 1], f32>
  func.return
}

// -----

func.func @binary_scalar_result(%x: !loop.tile<[4], f32>, %s: f32) {
  // expected-error@+1 {{tile.binary: result shape [] must be the broadcast shape [4]}}
  %y = tile.binary mul %x, %s : (!loop.tile<[4], f32>, f32) -> f32
  func.return
}

// -----

func.func @cmp_kind(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{Expected `eq`, `ne`, `lt`, `le`, `gt`, or `ge`.}}
  %y = tile.cmp lte %x, %x : (!loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], i1>
  func.return
}

// -----

func.func @cmp_types(%x: !loop.tile<[4], i64>, %s: i32) {
  // expected-error@+1 {{tile.cmp operands must share an element type}}
  %y = tile.cmp lt %x, %s : (!loop.tile<[4], i64>, i32) -> !loop.tile<[4], i1>
  func.return
}

// -----

func.func @cmp_result(%x: !loop.tile<[4], i64>) {
  // expected-error@+1 {{tile.cmp yields i1}}
  %y = tile.cmp lt %x, %x : (!loop.tile<[4], i64>, !loop.tile<[4], i64>) -> !loop.tile<[4], i64>
  func.return
}

// -----

func.func @cmp_broadcast(%x: !loop.tile<[4], i64>, %z: !loop.tile<[2, 8], i64>) {
  // expected-error@+1 {{tile.cmp: tile shapes [4], [2, 8] do not broadcast}}
  %y = tile.cmp lt %x, %z : (!loop.tile<[4], i64>, !loop.tile<[2, 8], i64>) -> !loop.tile<[2, 8], i1>
  func.return
}

// -----

func.func @cmp_shape(%x: !loop.tile<[4], i64>, %s: i64) {
  // expected-error@+1 {{tile.cmp: result shape [1, 4] must be the broadcast shape [4]}}
  %y = tile.cmp lt %x, %s : (!loop.tile<[4], i64>, i64) -> !loop.tile<[1, 4], i1>
  func.return
}

// -----

func.func @select_condition(%c: !loop.tile<[4], i32>, %x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.select condition must be i1}}
  %y = tile.select %c, %x, %x : (!loop.tile<[4], i32>, !loop.tile<[4], f32>, !loop.tile<[4], f32>) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @select_branches(%c: !loop.tile<[4], i1>, %x: !loop.tile<[4], f32>, %s: f16) {
  // expected-error@+1 {{tile.select branches must have the result's element type}}
  %y = tile.select %c, %x, %s : (!loop.tile<[4], i1>, !loop.tile<[4], f32>, f16) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @select_broadcast(%c: !loop.tile<[8], i1>, %x: !loop.tile<[4], f32>, %s: f32) {
  // expected-error@+1 {{tile.select: tile shapes [8], [4], [] do not broadcast}}
  %y = tile.select %c, %x, %s : (!loop.tile<[8], i1>, !loop.tile<[4], f32>, f32) -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @select_shape(%c: !loop.tile<[4, 1], i1>, %x: !loop.tile<[1, 4], f32>, %s: f32) {
  // expected-error@+1 {{tile.select: result shape [1, 4] must be the broadcast shape [4, 4]}}
  %y = tile.select %c, %x, %s : (!loop.tile<[4, 1], i1>, !loop.tile<[1, 4], f32>, f32) -> !loop.tile<[1, 4], f32>
  func.return
}

// -----

func.func @cast_shape(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.cast keeps the tile shape}}
  %y = tile.cast %x : !loop.tile<[4], f32> -> !loop.tile<[4, 1], i64>
  func.return
}

// -----

func.func @cast_to_scalar(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.cast keeps the tile shape}}
  %y = tile.cast %x : !loop.tile<[4], f32> -> f32
  func.return
}

// -----

func.func @reduce_kind(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, or `argmax`.}}
  %y = tile.reduce mean %x 0 : !loop.tile<[4], f32> -> f32
  func.return
}

// -----

func.func @reduce_axis(%x: !loop.tile<[4, 8], f32>) {
  // expected-error@+1 {{tile.reduce axis 2 out of range}}
  %y = tile.reduce sum %x 2 : !loop.tile<[4, 8], f32> -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @reduce_negative_axis(%x: !loop.tile<[4, 8], f32>) {
  // expected-error@+1 {{tile.reduce axis -1 out of range}}
  %y = tile.reduce sum %x -1 : !loop.tile<[4, 8], f32> -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @reduce_shape(%x: !loop.tile<[4, 8], f32>) {
  // expected-error@+1 {{tile.reduce result must drop the reduced dim}}
  %y = tile.reduce sum %x 0 : !loop.tile<[4, 8], f32> -> !loop.tile<[4], f32>
  func.return
}

// -----

func.func @reduce_type(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.reduce keeps the element type}}
  %y = tile.reduce max %x 0 : !loop.tile<[4], f32> -> f64
  func.return
}

// -----

func.func @argmax_type(%x: !loop.tile<[4], f32>) {
  // expected-error@+1 {{tile.reduce argmax yields integers}}
  %y = tile.reduce argmax %x 0 : !loop.tile<[4], f32> -> f32
  func.return
}

// -----

func.func @reduce_scalar(%x: f32) {
  // expected-error@+1 {{f32 should be of attribute subclassing `TileShapedType`}}
  %y = tile.reduce sum %x 0 : f32 -> f32
  func.return
}

// -----

func.func @dot_rank(%a: !loop.tile<[2, 4, 8], f32>, %b: !loop.tile<[8, 16], f32>, %c: !loop.tile<[4, 16], f32>) {
  // expected-error@+1 {{tile.dot takes 2-D tiles}}
  %y = tile.dot %a, %b, %c : (!loop.tile<[2, 4, 8], f32>, !loop.tile<[8, 16], f32>, !loop.tile<[4, 16], f32>) -> !loop.tile<[4, 16], f32>
  func.return
}

// -----

func.func @dot_inner(%a: !loop.tile<[4, 8], f32>, %b: !loop.tile<[16, 16], f32>, %c: !loop.tile<[4, 16], f32>) {
  // expected-error@+1 {{tile.dot shapes must be [M, K] x [K, N] -> [M, N]}}
  %y = tile.dot %a, %b, %c : (!loop.tile<[4, 8], f32>, !loop.tile<[16, 16], f32>, !loop.tile<[4, 16], f32>) -> !loop.tile<[4, 16], f32>
  func.return
}

// -----

func.func @dot_accumulator(%a: !loop.tile<[4, 8], f32>, %b: !loop.tile<[8, 16], f32>, %c: !loop.tile<[16, 4], f32>) {
  // expected-error@+1 {{tile.dot shapes must be [M, K] x [K, N] -> [M, N]}}
  %y = tile.dot %a, %b, %c : (!loop.tile<[4, 8], f32>, !loop.tile<[8, 16], f32>, !loop.tile<[16, 4], f32>) -> !loop.tile<[16, 4], f32>
  func.return
}

// -----

func.func @dot_operand_types(%a: !loop.tile<[4, 8], f16>, %b: !loop.tile<[8, 16], bf16>, %c: !loop.tile<[4, 16], f32>) {
  // expected-error@+1 {{tile.dot operands must share an element type}}
  %y = tile.dot %a, %b, %c : (!loop.tile<[4, 8], f16>, !loop.tile<[8, 16], bf16>, !loop.tile<[4, 16], f32>) -> !loop.tile<[4, 16], f32>
  func.return
}

// -----

func.func @dot_result(%a: !loop.tile<[4, 8], f16>, %b: !loop.tile<[8, 16], f16>, %c: !loop.tile<[4, 16], f32>) {
  // expected-error@+1 {{tile.dot result has the accumulator's type}}
  %y = tile.dot %a, %b, %c : (!loop.tile<[4, 8], f16>, !loop.tile<[8, 16], f16>, !loop.tile<[4, 16], f32>) -> !loop.tile<[4, 16], f16>
  func.return
}

// -----

func.func @dot_scalar(%x: f32, %c: !loop.tile<[4, 4], f32>) {
  // expected-error@+1 {{f32 should be of attribute subclassing `TileShapedType`}}
  %y = tile.dot %x, %x, %c : (f32, f32, !loop.tile<[4, 4], f32>) -> !loop.tile<[4, 4], f32>
  func.return
}

// -----

// Tensor access.

func.func @read_rank(%x: !graph.tensor<[N, D], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N, D], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N, D], f32>):
    %p = tile.program_id 0 : i64
    // expected-error@+1 {{loop.read of a rank-2 tensor takes 2 indices}}
    %v = loop.read %t[%p] : !graph.tensor<[N, D], f32>[i64] -> f32
  }
  func.return
}

// -----

func.func @read_index_type(%x: !graph.tensor<[N], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %i = tile.constant 1.000000e+00 : f32
    // expected-error@+1 {{loop.read indices must be integers}}
    %v = loop.read %t[%i] : !graph.tensor<[N], f32>[f32] -> f32
  }
  func.return
}

// -----

func.func @read_mask_type(%x: !graph.tensor<[N], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {B = 4} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    // expected-error@+1 {{loop.read mask must be i1}}
    %v = loop.read %t[%r] mask %r : !graph.tensor<[N], f32>[!loop.tile<[4], i64>] mask !loop.tile<[4], i64> -> !loop.tile<[4], f32>
  }
  func.return
}

// -----

func.func @read_element_type(%x: !graph.tensor<[N], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {B = 4} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    // expected-error@+1 {{loop.read yields the tensor's element type}}
    %v = loop.read %t[%r] : !graph.tensor<[N], f32>[!loop.tile<[4], i64>] -> !loop.tile<[4], f16>
  }
  func.return
}

// -----

func.func @read_broadcast(%x: !graph.tensor<[N, D], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {B = 4, C = 8} symbols [] reason "" : (!graph.tensor<[N, D], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N, D], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    %c = tile.range "C" : !loop.tile<[8], i64>
    // expected-error@+1 {{loop.read: tile shapes [4], [8] do not broadcast}}
    %v = loop.read %t[%r, %c] : !graph.tensor<[N, D], f32>[!loop.tile<[4], i64>, !loop.tile<[8], i64>] -> !loop.tile<[8], f32>
  }
  func.return
}

// -----

func.func @read_mask_broadcast(%x: !graph.tensor<[N], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {B = 4, C = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    %c = tile.range "C" : !loop.tile<[8], i64>
    %m = tile.cmp lt %c, %c : (!loop.tile<[8], i64>, !loop.tile<[8], i64>) -> !loop.tile<[8], i1>
    // expected-error@+1 {{loop.read: tile shapes [4], [8] do not broadcast}}
    %v = loop.read %t[%r] mask %m : !graph.tensor<[N], f32>[!loop.tile<[4], i64>] mask !loop.tile<[8], i1> -> !loop.tile<[4], f32>
  }
  func.return
}

// -----

func.func @read_shape(%x: !graph.tensor<[N, D], f32>) {
  loop.kernel @k pointwise (%x) grid [N] tiles {B = 4, C = 8} symbols [] reason "" : (!graph.tensor<[N, D], f32>) -> () {
  ^bb0(%t: !graph.tensor<[N, D], f32>):
    %r = tile.range "B" : !loop.tile<[4, 1], i64>
    %c = tile.range "C" : !loop.tile<[1, 8], i64>
    // expected-error@+1 {{loop.read: result shape [1, 8] must be the broadcast shape [4, 8]}}
    %v = loop.read %t[%r, %c] : !graph.tensor<[N, D], f32>[!loop.tile<[4, 1], i64>, !loop.tile<[1, 8], i64>] -> !loop.tile<[1, 8], f32>
  }
  func.return
}

// -----

func.func @read_not_tensor(%x: !loop.tile<[4], f32>, %i: i64) {
  // expected-error@+1 {{!loop.tile<[4], f32> should be of base attribute graph.tensor}}
  %v = loop.read %x[%i] : !loop.tile<[4], f32>[i64] -> f32
  func.return
}

// -----

func.func @write_outside(%v: f32, %i: i64) {
  // expected-error@+1 {{loop.write must be inside a loop.kernel}}
  loop.write %v to 0[%i] : f32[i64]
  func.return
}

// -----

func.func @write_output(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    loop.write %v to 0[%p] : f32[i64]
    // expected-error@+1 {{loop.write to output 1, which does not exist}}
    loop.write %v to 1[%p] : f32[i64]
  }
  func.return
}

// -----

func.func @write_negative_output(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    loop.write %v to 0[%p] : f32[i64]
    // expected-error@+1 {{loop.write to output -1, which does not exist}}
    loop.write %v to -1[%p] : f32[i64]
  }
  func.return
}

// -----

func.func @write_rank(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N, D], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    // expected-error@+1 {{loop.write to a rank-2 output takes 2 indices}}
    loop.write %v to 0[%p] : f32[i64]
  }
  func.return
}

// -----

func.func @write_index_type(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    // expected-error@+1 {{loop.write indices must be integers}}
    loop.write %v to 0[%v] : f32[f32]
  }
  func.return
}

// -----

func.func @write_element_type(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], i32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    // expected-error@+1 {{loop.write value must have the output's element type}}
    loop.write %v to 0[%p] : f32[i64]
  }
  func.return
}

// -----

func.func @write_mask_type(%x: !graph.tensor<[N], f32>) {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %p = tile.program_id 0 : i64
    %v = loop.read %t[%p] : !graph.tensor<[N], f32>[i64] -> f32
    // expected-error@+1 {{loop.write mask must be i1}}
    loop.write %v to 0[%p] mask %p : f32[i64] mask i64
  }
  func.return
}

// -----

// Tile sizes are integers (the generic form can spell anything).

func.func @float_tile() {
  // expected-error@+1 {{tile B = 4.000000e+00 : f32 is not an integer: tiles are sizes}}
  "loop.kernel"() <{sym_name = "k", kind = "pointwise", grid = [#sym.expr<1>], tiles = {B = 4.0 : f32}, symbols = [], reason = ""}> ({
  ^bb0:
  }) : () -> ()
  func.return
}

// -----

func.func @bool_tile() {
  // expected-error@+1 {{tile B = true is not an integer: tiles are sizes}}
  "loop.kernel"() <{sym_name = "k", kind = "pointwise", grid = [#sym.expr<1>], tiles = {B = true}, symbols = [], reason = ""}> ({
  ^bb0:
  }) : () -> ()
  func.return
}

// -----

// Ops that read a kernel's launch sit inside a kernel.

func.func @read_outside(%t: !graph.tensor<[N], f32>, %i: i64) -> f32 {
  // expected-error@+1 {{loop.read reads a kernel's launch; it must be inside a kernel}}
  %v = loop.read %t[%i] : !graph.tensor<[N], f32>[i64] -> f32
  func.return %v : f32
}

// -----

func.func @range_outside() {
  // expected-error@+1 {{tile.range reads a kernel's launch; it must be inside a kernel}}
  %r = tile.range "B" : !loop.tile<[4], i64>
  func.return
}

// -----

func.func @size_outside() {
  // expected-error@+1 {{tile.size reads a kernel's launch; it must be inside a kernel}}
  %n = tile.size N : i64
  func.return
}

// -----

func.func @program_id_outside() {
  // expected-error@+1 {{tile.program_id reads a kernel's launch; it must be inside a kernel}}
  %p = tile.program_id 0 : i64
  func.return
}

// -----

// A write's value, indices and mask broadcast together.

func.func @write_broadcast(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %y = loop.kernel @k pointwise (%x) grid [N] tiles {B = 4, C = 8} symbols [] reason "" : (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
  ^bb0(%t: !graph.tensor<[N], f32>):
    %r = tile.range "B" : !loop.tile<[4], i64>
    %c = tile.range "C" : !loop.tile<[8], i64>
    %v = loop.read %t[%c] : !graph.tensor<[N], f32>[!loop.tile<[8], i64>] -> !loop.tile<[8], f32>
    // expected-error@+1 {{loop.write: tile shapes [8], [4] do not broadcast}}
    loop.write %v to 0[%r] : !loop.tile<[8], f32>[!loop.tile<[4], i64>]
  }
  func.return %y : !graph.tensor<[N], f32>
}
