// The graph dialect's verifiers and type syntax reject bad IR with a message
// that says what is wrong. Each chunk holds one error.

// RUN: irc-opt %s --split-input-file --verify-diagnostics

// Types and shape expressions.

// expected-error@+1 {{unsupported element type i8 in graph.tensor; supported: i1, i32, i64, f16, bf16, f32, f64}}
func.func @element_type(%x: !graph.tensor<[N], i8>) {
  func.return
}

// -----

// expected-error@+1 {{negative}}
func.func @negative_dim(%x: !graph.tensor<[-1], f32>) {
  func.return
}

// -----

// expected-error@+1 {{expected a shape expression (integer, symbol or '(')}}
func.func @dangling_operator(%x: !graph.tensor<[N +], f32>) {
  func.return
}

// -----

// expected-error@+1 {{expected a shape expression (integer, symbol or '(')}}
func.func @float_dim(%x: !graph.tensor<[1.5], f32>) {
  func.return
}

// -----

// expected-error@+1 {{invalid shape expression: division by zero}}
func.func @division_by_zero(%x: !graph.tensor<[N floordiv 0], f32>) {
  func.return
}

// -----

// expected-error@+1 {{']' expected}}
func.func @missing_comma(%x: !graph.tensor<[N D], f32>) {
  func.return
}

// -----

// expected-error@+1 {{invalid shape expression: exponent 100000 is too large (at most 64)}}
func.func @huge_exponent(%x: !graph.tensor<[N ** 100000], f32>) {
  func.return
}

// -----

// expected-error@+1 {{invalid shape expression: exponent 2000 is too large (at most 1024)}}
func.func @huge_constant_exponent(%x: !graph.tensor<[2 ** 2000], f32>) {
  func.return
}

// -----
// Elementwise ops.

func.func @add_shape_mismatch(%x: !graph.tensor<[N], f32>, %y: !graph.tensor<[M], f32>) {
  // expected-error@+1 {{expected from variable 'T', but got !graph.tensor<[M], f32>}}
  %0 = "graph.add"(%x, %y) : (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @unary_float_op_on_ints(%x: !graph.tensor<[N], i32>) {
  // expected-error@+1 {{graph.exp is not defined on integer tensors, only on floating-point ones; cast them first}}
  %0 = graph.exp %x : !graph.tensor<[N], i32>
  func.return
}

// -----

func.func @div_on_ints(%x: !graph.tensor<[N], i64>) {
  // expected-error@+1 {{graph.div is not defined on integer tensors, only on floating-point ones; cast them first}}
  %0 = graph.div %x, %x : !graph.tensor<[N], i64>
  func.return
}

// -----

func.func @add_on_bools(%x: !graph.tensor<[N], i1>) {
  // expected-error@+1 {{graph.add is not defined on bool tensors, only on integer and floating-point ones; cast them first}}
  %0 = graph.add %x, %x : !graph.tensor<[N], i1>
  func.return
}

// -----

func.func @and_on_floats(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.and is not defined on floating-point tensors, only on bool and integer ones; cast them first}}
  %0 = graph.and %x, %x : !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @not_on_floats(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.not is not defined on floating-point tensors, only on bool and integer ones; cast them first}}
  %0 = graph.not %x : !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @sum_of_bools(%x: !graph.tensor<[N], i1>) {
  // expected-error@+1 {{sum is not defined on bool tensors; cast them first}}
  %0 = graph.reduce sum %x [0] : !graph.tensor<[N], i1> -> !graph.tensor<[], i1>
  func.return
}

// -----

func.func @compare_result_not_bool(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{result type must be !graph.tensor<[N], i1>}}
  %0 = "graph.cmp"(%x, %x) <{predicate = #elementwise<predicate lt>}> : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @compare_of_scalars(%x: i32) {
  // expected-error@+1 {{graph.cmp compares !graph.tensor values, not i32}}
  %0 = graph.cmp lt, %x, %x : i32
  func.return
}

// -----

func.func @unknown_predicate(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Expected `eq`, `ne`, `lt`, `le`, `gt`, or `ge`.}}
  %0 = graph.cmp less, %x, %x : !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @select_condition_not_bool(%c: !graph.tensor<[N], f32>, %x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{select condition must be a bool (i1) tensor}}
  %0 = graph.select %c, %x, %x : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @select_shape_mismatch(%c: !graph.tensor<[M], i1>, %x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{select condition shape [M] differs from the value shape [N]}}
  %0 = graph.select %c, %x, %x : !graph.tensor<[M], i1>, !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @cast_changes_shape(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{cast must not change the shape}}
  %0 = graph.cast %x : !graph.tensor<[N], f32> -> !graph.tensor<[M], i32>
  func.return
}

// -----
// Constants, iota, dim.

func.func @constant_type_mismatch() {
  // expected-error@+1 {{constant of type f64 cannot produce a tensor of f32}}
  %0 = graph.constant 1.0 : f64 -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @dense_shape_mismatch() {
  // expected-error@+1 {{dense literal of shape [3] does not match result shape [2]}}
  %0 = graph.constant dense<[1, 2, 3]> : tensor<3xi64> -> !graph.tensor<[2], i64>
  func.return
}

// -----

func.func @iota_axis_out_of_range() {
  // expected-error@+1 {{iota axis 1 is out of range for rank 1}}
  %0 = graph.iota [1] : !graph.tensor<[N], i64>
  func.return
}

// -----

func.func @iota_axis_i32() {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.iota"() <{axis = 0 : i32}> : () -> !graph.tensor<[N], i64>
  func.return
}

// -----

func.func @iota_axis_beyond_i64() {
  // expected-error@+1 {{9223372036854775808 does not fit in i64}}
  %0 = graph.iota [9223372036854775808] : !graph.tensor<[N], i64>
  func.return
}

// -----

func.func @iota_of_bools() {
  // expected-error@+1 {{iota cannot produce bool indices}}
  %0 = graph.iota [0] : !graph.tensor<[N], i1>
  func.return
}

// -----

func.func @dim_not_rank_0() {
  // expected-error@+1 {{graph.dim produces a rank-0 number tensor}}
  %0 = graph.dim N : !graph.tensor<[N], i64>
  func.return
}

// -----
// Shape ops.

func.func @bad_broadcast(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{cannot broadcast [N] to [4, M]: dim 0 is N, neither 1 nor M}}
  %0 = graph.broadcast %x : !graph.tensor<[N], f32> -> !graph.tensor<[4, M], f32>
  func.return
}

// -----

func.func @broadcast_to_lower_rank(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{cannot broadcast rank 1 to rank 0}}
  %0 = graph.broadcast %x : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  func.return
}

// -----

func.func @broadcast_changes_element_type(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{broadcast must not change the element type}}
  %0 = graph.broadcast %x : !graph.tensor<[N], f32> -> !graph.tensor<[N], f64>
  func.return
}

// -----

func.func @reshape_element_count(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{cannot reshape [N, 4] (4*N elements) to [N, 5] (5*N elements)}}
  %0 = graph.reshape %x : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 5], f32>
  func.return
}

// -----

func.func @reshape_needs_divisibility(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{cannot reshape [N] (N elements) to [N floordiv 4, 4]}}
  %0 = graph.reshape %x : !graph.tensor<[N], f32> -> !graph.tensor<[N floordiv 4, 4], f32>
  func.return
}

// -----

func.func @transpose_not_a_permutation(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{[0, 0] is not a permutation of 2 axes}}
  %0 = graph.transpose %x [0, 0] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, N], f32>
  func.return
}

// -----

func.func @transpose_permutation_i32(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.transpose"(%x) <{permutation = array<i32: 1, 0>}> : (!graph.tensor<[N, 4], f32>) -> !graph.tensor<[4, N], f32>
  func.return
}

// -----

func.func @transpose_wrong_result(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{transpose result must be !graph.tensor<[4, N], f32>, not !graph.tensor<[N, 4], f32>}}
  %0 = graph.transpose %x [1, 0] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  func.return
}

// -----
// Reductions.

func.func @reduce_axis_out_of_range(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{reduction axis 2 is out of range for rank 2}}
  %0 = graph.reduce sum %x [2] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  func.return
}

// -----

func.func @reduce_axes_unsorted(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{reduction axes must be sorted}}
  %0 = graph.reduce sum %x [1, 0] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[], f32>
  func.return
}

// -----

func.func @reduce_axis_repeated(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{[0, 0] repeats an axis}}
  %0 = graph.reduce sum %x [0, 0] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[4], f32>
  func.return
}

// -----

func.func @reduce_wrong_result(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{reducing [N, 4] over [1] gives !graph.tensor<[N], f32>, not !graph.tensor<[4], f32>}}
  %0 = graph.reduce sum %x [1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[4], f32>
  func.return
}

// -----

func.func @reduce_axes_i32(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.reduce"(%x) <{kind = #elementwise<reduction sum>, axes = array<i32: 1>}> : (!graph.tensor<[N, 4], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @reduce_axes_f32(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got f32}}
  %0 = "graph.reduce"(%x) <{kind = #elementwise<reduction sum>, axes = array<f32: 1.0>}> : (!graph.tensor<[N, 4], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @reduce_axis_beyond_i64(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{-9223372036854775809 does not fit in i64}}
  %0 = graph.reduce sum %x [-9223372036854775809] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  func.return
}

// -----

func.func @unknown_reduction(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Expected `sum`, `prod`, `max`, `min`, or `argmax`.}}
  %0 = graph.reduce mean %x [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  func.return
}

// -----

func.func @reduce_argmax(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.reduce computes sum, prod, max, min; argmax is graph.argmax}}
  %0 = graph.reduce argmax %x [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  func.return
}

// -----

func.func @argmax_result_not_i64(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{argmax result must be !graph.tensor<[N], i64>, not !graph.tensor<[N], i32>}}
  %0 = graph.argmax %x [1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N], i32>
  func.return
}

// -----

func.func @argmax_axis_i32(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.argmax"(%x) <{axis = 1 : i32}> : (!graph.tensor<[N, 4], f32>) -> !graph.tensor<[N], i64>
  func.return
}

// -----

func.func @argmax_two_axes(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{graph.argmax takes exactly one axis}}
  %0 = graph.argmax %x [0, 1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[], i64>
  func.return
}

// -----
// Slices, concatenation, gathers.

func.func @slice_out_of_bounds(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{slice of axis 0 reads [1, N], outside [0, N - 1]}}
  %0 = graph.slice %x [1] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @slice_at_the_end(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{slice of axis 0 reads [N, N], outside [0, N - 1]}}
  %0 = graph.slice %x [N] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[1], f32>
  func.return
}

// -----

func.func @slice_zero_stride(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{slice stride of axis 0 is zero}}
  %0 = graph.slice %x [0] [0] : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @insert_slice_out_of_bounds(%x: !graph.tensor<[N], f32>, %v: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{insert_slice into axis 0 writes [1, N], outside [0, N - 1]}}
  %0 = graph.insert_slice %v into %x [1] [1] : !graph.tensor<[N], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @insert_slice_zero_stride(%x: !graph.tensor<[N], f32>, %v: !graph.tensor<[1], f32>) {
  // expected-error@+1 {{insert_slice stride of axis 0 is zero}}
  %0 = graph.insert_slice %v into %x [0] [0] : !graph.tensor<[1], f32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @insert_slice_element_type(%x: !graph.tensor<[N], f32>, %v: !graph.tensor<[1], i32>) {
  // expected-error@+1 {{insert_slice source element type i32 differs from the destination's f32}}
  %0 = graph.insert_slice %v into %x [0] [1] : !graph.tensor<[1], i32> -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @insert_slice_rank(%x: !graph.tensor<[N, 2], f32>, %v: !graph.tensor<[2], f32>) {
  // expected-error@+1 {{insert_slice into a rank-2 tensor needs a rank-2 source and 2 offsets and strides}}
  %0 = graph.insert_slice %v into %x [0, 0] [1, 1] : !graph.tensor<[2], f32> -> !graph.tensor<[N, 2], f32>
  func.return
}

// -----

func.func @slice_strides_i32(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.slice"(%x) <{offsets = [#sym.expr<0>], strides = array<i32: 1>}> : (!graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @slice_rank_mismatch(%x: !graph.tensor<[N, 4], f32>) {
  // expected-error@+1 {{slice of a rank-2 tensor needs 2 offsets, strides and result dims}}
  %0 = graph.slice %x [0] [1] : !graph.tensor<[N, 4], f32> -> !graph.tensor<[N, 4], f32>
  func.return
}

// -----

func.func @concat_mismatch(%a: !graph.tensor<[N, 4], f32>, %b: !graph.tensor<[N, 5], f32>) {
  // expected-error@+1 {{concat operand 1 has dim 1 = 5, expected 4}}
  %0 = graph.concat %a, %b [0] : (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 5], f32>) -> !graph.tensor<[2*N, 4], f32>
  func.return
}

// -----

func.func @concat_wrong_length(%a: !graph.tensor<[N], f32>, %b: !graph.tensor<[M], f32>) {
  // expected-error@+1 {{concat result has 2*N along axis 0, operands add up to M + N}}
  %0 = graph.concat %a, %b [0] : (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> !graph.tensor<[2*N], f32>
  func.return
}

// -----

func.func @concat_axis_out_of_range(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{concat axis 1 is out of range for rank 1}}
  %0 = graph.concat %x [1] : (!graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @concat_axis_i32(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.concat"(%x) <{axis = 0 : i32}> : (!graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @concat_too_few_types(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{graph.concat has 2 inputs but 1 input types}}
  %0 = graph.concat %x, %x [0] : (!graph.tensor<[N], f32>) -> !graph.tensor<[2*N], f32>
  func.return
}

// -----

func.func @take_axis_i32(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[M], i64>) {
  // expected-error@+1 {{Expected attribute i64 but got i32}}
  %0 = "graph.take"(%x, %i) <{axis = 0 : i32}> : (!graph.tensor<[N], f32>, !graph.tensor<[M], i64>) -> !graph.tensor<[M], f32>
  func.return
}

// -----

func.func @take_too_many_types(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[M], i64>) {
  // expected-error@+1 {{Expected 2 operand types, but got 3}}
  %0 = graph.take %x, %i [0] : (!graph.tensor<[N], f32>, !graph.tensor<[M], i64>, !graph.tensor<[M], i64>) -> !graph.tensor<[M], f32>
  func.return
}

// -----

func.func @take_float_indices(%x: !graph.tensor<[N], f32>, %i: !graph.tensor<[M], f32>) {
  // expected-error@+1 {{take indices must be i32 or i64, got f32}}
  %0 = graph.take %x, %i [0] : (!graph.tensor<[N], f32>, !graph.tensor<[M], f32>) -> !graph.tensor<[M], f32>
  func.return
}

// -----

func.func @take_wrong_result(%x: !graph.tensor<[N, 4], f32>, %i: !graph.tensor<[M], i64>) {
  // expected-error@+1 {{take result must be !graph.tensor<[N, M], f32>}}
  %0 = graph.take %x, %i [1] : (!graph.tensor<[N, 4], f32>, !graph.tensor<[M], i64>) -> !graph.tensor<[M, 4], f32>
  func.return
}

// -----
// Matmul.

func.func @matmul_contraction_mismatch(%a: !graph.tensor<[N, K], f32>, %b: !graph.tensor<[J, M], f32>) {
  // expected-error@+1 {{matmul contraction dims differ: K (lhs) vs J (rhs)}}
  %0 = graph.matmul %a, %b : (!graph.tensor<[N, K], f32>, !graph.tensor<[J, M], f32>) -> !graph.tensor<[N, M], f32>
  func.return
}

// -----

func.func @matmul_rank_1(%x: !graph.tensor<[N], f32>) {
  // expected-error@+1 {{matmul operands must have rank >= 2}}
  %0 = graph.matmul %x, %x : (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32>
  func.return
}

// -----

func.func @matmul_batch_dims(%a: !graph.tensor<[B, N, K], f32>, %b: !graph.tensor<[K, M], f32>) {
  // expected-error@+1 {{matmul result shape must be [B, N, M], not [N, M]}}
  %0 = graph.matmul %a, %b : (!graph.tensor<[B, N, K], f32>, !graph.tensor<[K, M], f32>) -> !graph.tensor<[N, M], f32>
  func.return
}

// -----

func.func @matmul_bools(%a: !graph.tensor<[N, N], i1>) {
  // expected-error@+1 {{graph.matmul is not defined on bool tensors, only on integer and floating-point ones; cast them first}}
  %0 = graph.matmul %a, %a : (!graph.tensor<[N, N], i1>, !graph.tensor<[N, N], i1>) -> !graph.tensor<[N, N], i1>
  func.return
}

// -----
// Guards.

func.func @guard_reason_not_a_string() {
  // expected-error@+1 {{should be of base attribute string}}
  "sym.guard"() <{fact = #sym.fact<N mod 16 == 0>, reason = 3}> : () -> ()
  func.return
}

// -----

func.func @guard_without_comparison() {
  // expected-error@+1 {{expected a comparison: ==, <, <=, > or >=}}
  sym.guard N mod 16, "tiles"
  func.return
}

// -----

func.func @contradictory_guards(%x: !graph.tensor<[N], f32>) {
  sym.guard N == 1
  sym.guard N == 2
  // expected-error@+1 {{the guards in scope contradict each other: contradictory facts: N == 2 can never hold}}
  %0 = graph.broadcast %x : !graph.tensor<[N], f32> -> !graph.tensor<[M], f32>
  func.return
}
