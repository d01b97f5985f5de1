// fuse groups graph ops into fusion.kernel ops: producers join the kernel of
// their users, cheap ops are duplicated into each kernel using them, and
// each kernel says why it was formed.

// RUN: irc-opt %s --split-input-file -p fuse | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse | irc-opt --split-input-file | filecheck %s
// RUN: irc-opt %s --split-input-file -p fuse --check-semantics --check-semantics-runs=4 | filecheck %s

// Softmax: max and sum share their rows, so one reduction kernel; the reason
// names the reductions and where they come from. The sum of exp(x - max(x))
// is recorded as an online sum (fusion.idiom), which tile reads.

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %y = fusion.kernel @k0 reduction (%x) : (!graph.tensor<[N, D], f32>) -> (!graph.tensor<[N, D], f32>) reason "row reduction over [1] of [N, D] (graph.reduce max %m at softmax.py:3, graph.reduce sum %s at softmax.py:4); producers: graph.broadcast, graph.sub, graph.exp; consumers: graph.broadcast, graph.div" {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %m = graph.reduce max %x_1 [1] :
// CHECK-NEXT:      %mb = graph.broadcast %m
// CHECK-NEXT:      %d = graph.sub %x_1, %mb
// CHECK-NEXT:      %e = graph.exp %d
// CHECK-NEXT:      %s = graph.reduce sum %e [1] {fusion.idiom = "online_sum"} :
// CHECK-NEXT:      %sb = graph.broadcast %s
// CHECK-NEXT:      %y_1 = graph.div %e, %sb
// CHECK-NEXT:      fusion.yield %y_1 : !graph.tensor<[N, D], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : !graph.tensor<[N, D], f32>
func.func @softmax(%x: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N, D], f32> {
  %m = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32> loc("softmax.py":3:20)
  %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32> loc("softmax.py":3:16)
  %d = graph.sub %x, %mb : !graph.tensor<[N, D], f32> loc("softmax.py":3:16)
  %e = graph.exp %d : !graph.tensor<[N, D], f32> loc("softmax.py":3:9)
  %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32> loc("softmax.py":4:16)
  %sb = graph.broadcast %s : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32> loc("softmax.py":4:12)
  %y = graph.div %e, %sb : !graph.tensor<[N, D], f32> loc("softmax.py":4:12)
  func.return %y : !graph.tensor<[N, D], f32>
}

// -----

// gelu(x @ w + b) with erf: the bias and GELU are the matmul's epilogue; the
// bias broadcast and the constants are duplicated into the kernel.

// CHECK-LABEL: func.func @gelu_linear(
// CHECK-NEXT:    %y = fusion.kernel @k0 matmul (%x, %w, %b) : ({{.*}}) -> (!graph.tensor<[N, 32], f32>) reason "matmul [N, 16] x [16, 32] -> [N, 32] (graph.matmul %p); epilogue: graph.add x2, graph.mul x3, graph.erf; duplicated here: graph.broadcast, graph.constant x3" {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N, 16], f32>, %w_1: !graph.tensor<[16, 32], f32>, %b_1: !graph.tensor<[32], f32>):
// CHECK-NEXT:      %p = graph.matmul %x_1, %w_1
// CHECK-NEXT:      %bb = graph.broadcast %b_1
// CHECK-NEXT:      %h = graph.add %p, %bb
// CHECK:           %y_1 = graph.mul %hc, %t
// CHECK-NEXT:      fusion.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
// CHECK-NOT:     fusion.kernel
func.func @gelu_linear(%x: !graph.tensor<[N, 16], f32>, %w: !graph.tensor<[16, 32], f32>, %b: !graph.tensor<[32], f32>) -> !graph.tensor<[N, 32], f32> {
  %p = graph.matmul %x, %w : (!graph.tensor<[N, 16], f32>, !graph.tensor<[16, 32], f32>) -> !graph.tensor<[N, 32], f32>
  %bb = graph.broadcast %b : !graph.tensor<[32], f32> -> !graph.tensor<[N, 32], f32>
  %h = graph.add %p, %bb : !graph.tensor<[N, 32], f32>
  %c = graph.constant 0.5 : f32 -> !graph.tensor<[N, 32], f32>
  %s = graph.constant 0.7071067811865476 : f32 -> !graph.tensor<[N, 32], f32>
  %one = graph.constant 1.0 : f32 -> !graph.tensor<[N, 32], f32>
  %hs = graph.mul %h, %s : !graph.tensor<[N, 32], f32>
  %erf = graph.erf %hs : !graph.tensor<[N, 32], f32>
  %t = graph.add %erf, %one : !graph.tensor<[N, 32], f32>
  %hc = graph.mul %h, %c : !graph.tensor<[N, 32], f32>
  %y = graph.mul %hc, %t : !graph.tensor<[N, 32], f32>
  func.return %y : !graph.tensor<[N, 32], f32>
}

// -----

// A convolution as implicit GEMM: the weight times the input's columns, a
// product [N, 4, H*W] whose last axis the output splits. The epilogue reads
// it through that reshape (the bias, a residual, the ReLU), and the kernel
// stores its tiles as [N, 4, H, W]: one kernel, not a second one to reshape.

// CHECK-LABEL: func.func @conv_epilogue(
// CHECK-NEXT:    %out = fusion.kernel @k0 matmul (%w, %cols, %b, %r) : ({{.*}}) -> (!graph.tensor<[N, 4, H, W], f32>) reason "matmul [N, 4, 8] x [N, 8, H*W] -> [N, 4, H*W] stored as [N, 4, H, W] (graph.matmul %p); epilogue: graph.reshape, graph.add x2, graph.maximum; duplicated here: graph.broadcast x2, graph.constant" {
// CHECK:           %y = graph.reshape %p
// CHECK:           fusion.yield %out_1 : !graph.tensor<[N, 4, H, W], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %out
// CHECK-NOT:     fusion.kernel
func.func @conv_epilogue(%w: !graph.tensor<[4, 8], f32>, %cols: !graph.tensor<[N, 8, H*W], f32>, %b: !graph.tensor<[4, 1, 1], f32>, %r: !graph.tensor<[N, 4, H, W], f32>) -> !graph.tensor<[N, 4, H, W], f32> {
  %wb = graph.broadcast %w : !graph.tensor<[4, 8], f32> -> !graph.tensor<[N, 4, 8], f32>
  %p = graph.matmul %wb, %cols : (!graph.tensor<[N, 4, 8], f32>, !graph.tensor<[N, 8, H*W], f32>) -> !graph.tensor<[N, 4, H*W], f32>
  %y = graph.reshape %p : !graph.tensor<[N, 4, H*W], f32> -> !graph.tensor<[N, 4, H, W], f32>
  %bb = graph.broadcast %b : !graph.tensor<[4, 1, 1], f32> -> !graph.tensor<[N, 4, H, W], f32>
  %yb = graph.add %y, %bb : !graph.tensor<[N, 4, H, W], f32>
  %s = graph.add %yb, %r : !graph.tensor<[N, 4, H, W], f32>
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N, 4, H, W], f32>
  %out = graph.maximum %s, %zero : !graph.tensor<[N, 4, H, W], f32>
  func.return %out : !graph.tensor<[N, 4, H, W], f32>
}

// -----

// Batched heads joined back: the [2, N, 4] product of every head, a residual
// added in the joined layout, the heads moved behind the rows and joined as
// [N, 8] (the transpose and reshape horizontal-fusion leaves). The epilogue
// follows the transpose and the join of the last two axes: the kernel stores
// each head's tile at its columns of [N, 8], with no copy kernel after it.

// CHECK-LABEL: func.func @heads_joined(
// CHECK-NEXT:    %y = fusion.kernel @k0 matmul (%q, %w, %r) : ({{.*}}) -> (!graph.tensor<[N, 8], f32>) reason "matmul [2, N, 4] x [4, 4] -> [2, N, 4] stored as [N, 8] (graph.matmul %p); epilogue: graph.transpose, graph.reshape, graph.add" {
// CHECK:           fusion.yield %y_1 : !graph.tensor<[N, 8], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
// CHECK-NOT:     fusion.kernel
func.func @heads_joined(%q: !graph.tensor<[2, N, 4], f32>, %w: !graph.tensor<[4, 4], f32>, %r: !graph.tensor<[N, 8], f32>) -> !graph.tensor<[N, 8], f32> {
  %p = graph.matmul %q, %w : (!graph.tensor<[2, N, 4], f32>, !graph.tensor<[4, 4], f32>) -> !graph.tensor<[2, N, 4], f32>
  %t = graph.transpose %p [1, 0, 2] : !graph.tensor<[2, N, 4], f32> -> !graph.tensor<[N, 2, 4], f32>
  %j = graph.reshape %t : !graph.tensor<[N, 2, 4], f32> -> !graph.tensor<[N, 8], f32>
  %y = graph.add %j, %r : !graph.tensor<[N, 8], f32>
  func.return %y : !graph.tensor<[N, 8], f32>
}

// -----

// A producer and its consumer: the rows' mean is read by another kernel
// (%back, a reduction over the other axis, which cannot recompute it), and
// the centred exponentials by two matmuls, so the walk, from the last op
// up, stores both, the mean before the kernel computing it exists. The
// pointwise kernel of the rows reads only that kernel's values and
// arguments: it joins it, which yields the mean and the rows.

// CHECK-LABEL: func.func @consumer_joins_producer(
// CHECK-NEXT:    %mean, %y = fusion.kernel @k0 reduction (%x) : ({{.*}}) -> (!graph.tensor<[N, 1], f32>, !graph.tensor<[N, 8], f32>) reason "row reduction over [1] of [N, 8] (graph.reduce sum %s); consumers: graph.div, graph.sub, graph.exp; {{.*}}graph.exp %y joined with its kernel: it reads only this kernel's values and arguments;
// CHECK:         %a = fusion.kernel @k1 matmul (%y, %w)
// CHECK:         %b = fusion.kernel @k2 matmul (%y, %v)
// CHECK:         %r = fusion.kernel @k3 reduction (%mean, %x)
// CHECK-NOT:     fusion.kernel
func.func @consumer_joins_producer(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[8, 8], f32>, %v: !graph.tensor<[8, 8], f32>) -> (!graph.tensor<[N, 8], f32>, !graph.tensor<[N, 8], f32>, !graph.tensor<[8], f32>) {
  %s = graph.reduce sum %x [1] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[N, 1], f32>
  %eight = graph.constant 8.0 : f32 -> !graph.tensor<[N, 1], f32>
  %mean = graph.div %s, %eight : !graph.tensor<[N, 1], f32>
  %mb = graph.broadcast %mean : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 8], f32>
  %c = graph.sub %x, %mb : !graph.tensor<[N, 8], f32>
  %y = graph.exp %c : !graph.tensor<[N, 8], f32>
  %a = graph.matmul %y, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %b = graph.matmul %y, %v : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %mx = graph.mul %mb, %x : !graph.tensor<[N, 8], f32>
  %back = graph.reduce sum %mx [0] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[1, 8], f32>
  %r = graph.reshape %back : !graph.tensor<[1, 8], f32> -> !graph.tensor<[8], f32>
  func.return %a, %b, %r : !graph.tensor<[N, 8], f32>, !graph.tensor<[N, 8], f32>, !graph.tensor<[8], f32>
}

// -----

// A matmul, and the error of its result against an argument, which the
// loss's sum does not read and the matmuls using it do not recompute (it
// reads two tensors): the error joins the matmul's kernel as a second
// output.

// CHECK-LABEL: func.func @cotangent_joins_matmul(
// CHECK-NEXT:    %m, %e = fusion.kernel @k0 matmul (%x, %w) : ({{.*}}) -> (!graph.tensor<[N, 8], f32>, !graph.tensor<[N, 8], f32>) reason "matmul [N, 8] x [8, 8] -> [N, 8] (graph.matmul %m); epilogue: graph.sub; graph.sub %e joined with its kernel: it reads only this kernel's values and arguments;
// CHECK:         %l = fusion.kernel @k1 reduction (%m)
// CHECK:         %d, %a = fusion.kernel @k2 matmul (%e, %w)
// CHECK:         %b = fusion.kernel @k3 matmul (%x, %d)
// CHECK-NOT:     fusion.kernel
func.func @cotangent_joins_matmul(%x: !graph.tensor<[N, 8], f32>, %w: !graph.tensor<[8, 8], f32>) -> (!graph.tensor<[], f32>, !graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) {
  %m = graph.matmul %x, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %l = graph.reduce sum %m [0, 1] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[], f32>
  %e = graph.sub %m, %x : !graph.tensor<[N, 8], f32>
  %two = graph.constant 2.0 : f32 -> !graph.tensor<[N, 8], f32>
  %d = graph.mul %e, %two : !graph.tensor<[N, 8], f32>
  %a = graph.matmul %d, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %xt = graph.transpose %x [1, 0] : !graph.tensor<[N, 8], f32> -> !graph.tensor<[8, N], f32>
  %b = graph.matmul %xt, %d : (!graph.tensor<[8, N], f32>, !graph.tensor<[N, 8], f32>) -> !graph.tensor<[8, 8], f32>
  func.return %l, %a, %b : !graph.tensor<[], f32>, !graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>
}

// -----

// A ViT's patch embedding: the convolution's [N, 8, P] product plus the bias,
// its patches then made rows (x.flatten(2).transpose(0, 2, 1)). The epilogue
// follows the reshapes of the last axis and the transpose: the kernel stores
// its tiles transposed, as [N, P, 8].

// CHECK-LABEL: func.func @patch_embedding(
// CHECK-NEXT:    %rows = fusion.kernel @k0 matmul (%w, %cols, %b) : ({{.*}}) -> (!graph.tensor<[N, P, 8], f32>) reason "matmul [N, 8, 12] x [N, 12, P] -> [N, 8, P] stored as [N, P, 8] (graph.matmul %p); epilogue: graph.add, graph.transpose; duplicated here: graph.broadcast x2" {
// CHECK:           fusion.yield %rows_1 : !graph.tensor<[N, P, 8], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %rows
// CHECK-NOT:     fusion.kernel
func.func @patch_embedding(%w: !graph.tensor<[8, 12], f32>, %cols: !graph.tensor<[N, 12, P], f32>, %b: !graph.tensor<[8, 1], f32>) -> !graph.tensor<[N, P, 8], f32> {
  %wb = graph.broadcast %w : !graph.tensor<[8, 12], f32> -> !graph.tensor<[N, 8, 12], f32>
  %p = graph.matmul %wb, %cols : (!graph.tensor<[N, 8, 12], f32>, !graph.tensor<[N, 12, P], f32>) -> !graph.tensor<[N, 8, P], f32>
  %bb = graph.broadcast %b : !graph.tensor<[8, 1], f32> -> !graph.tensor<[N, 8, P], f32>
  %y = graph.add %p, %bb : !graph.tensor<[N, 8, P], f32>
  %rows = graph.transpose %y [0, 2, 1] : !graph.tensor<[N, 8, P], f32> -> !graph.tensor<[N, P, 8], f32>
  func.return %rows : !graph.tensor<[N, P, 8], f32>
}

// -----

// A two-layer MLP: one kernel per layer. The activation feeds the second
// matmul's operand, where only layout ops, concats, splats, casts and
// scalings by a constant go.

// CHECK-LABEL: func.func @mlp(
// CHECK-NEXT:    %g = fusion.kernel @k0 matmul (%x, %w1, %b1) : ({{.*}}) -> (!graph.tensor<[N, 32], f32>) reason "matmul [N, 16] x [16, 32] -> [N, 32] (graph.matmul %p1); epilogue: graph.add, graph.tanh; duplicated here: graph.broadcast; graph.tanh %g not fused into k1: it feeds the matmul's operands, where only layout ops, concats, splats, casts and scalings by a constant go" {
// CHECK:           fusion.yield %g_1 : !graph.tensor<[N, 32], f32>
// CHECK:         %y = fusion.kernel @k1 matmul (%g, %w2, %b2) : ({{.*}}) -> (!graph.tensor<[N, 16], f32>) reason "matmul [N, 32] x [32, 16] -> [N, 16] (graph.matmul %p2); epilogue: graph.add; duplicated here: graph.broadcast" {
// CHECK:         func.return %y
func.func @mlp(%x: !graph.tensor<[N, 16], f32>, %w1: !graph.tensor<[16, 32], f32>, %b1: !graph.tensor<[32], f32>, %w2: !graph.tensor<[32, 16], f32>, %b2: !graph.tensor<[16], f32>) -> !graph.tensor<[N, 16], f32> {
  %p1 = graph.matmul %x, %w1 : (!graph.tensor<[N, 16], f32>, !graph.tensor<[16, 32], f32>) -> !graph.tensor<[N, 32], f32>
  %bb1 = graph.broadcast %b1 : !graph.tensor<[32], f32> -> !graph.tensor<[N, 32], f32>
  %h = graph.add %p1, %bb1 : !graph.tensor<[N, 32], f32>
  %g = graph.tanh %h : !graph.tensor<[N, 32], f32>
  %p2 = graph.matmul %g, %w2 : (!graph.tensor<[N, 32], f32>, !graph.tensor<[32, 16], f32>) -> !graph.tensor<[N, 16], f32>
  %bb2 = graph.broadcast %b2 : !graph.tensor<[16], f32> -> !graph.tensor<[N, 16], f32>
  %y = graph.add %p2, %bb2 : !graph.tensor<[N, 16], f32>
  func.return %y : !graph.tensor<[N, 16], f32>
}

// -----

// A returned intermediate joins the kernel as an extra output; outputs come
// in block order, inputs in first-use order.

// CHECK-LABEL: func.func @multi_output(
// CHECK-NEXT:    %m_new, %p_new = fusion.kernel @k0 pointwise (%m, %g, %p) : ({{.*}}) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) reason "pointwise over [N] (graph.sub %p_new); fused: graph.mul, graph.add; duplicated here: graph.constant" {
// CHECK-NEXT:    ^bb0(%m_1: !graph.tensor<[N], f32>, %g_1: !graph.tensor<[N], f32>, %p_1: !graph.tensor<[N], f32>):
// CHECK-NEXT:      %beta = graph.constant
// CHECK-NEXT:      %mb = graph.mul %m_1, %beta
// CHECK-NEXT:      %m_new_1 = graph.add %mb, %g_1
// CHECK-NEXT:      %p_new_1 = graph.sub %p_1, %m_new_1
// CHECK-NEXT:      fusion.yield %m_new_1, %p_new_1 : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %p_new, %m_new
func.func @multi_output(%p: !graph.tensor<[N], f32>, %g: !graph.tensor<[N], f32>, %m: !graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[N], f32>) {
  %beta = graph.constant 0.9 : f32 -> !graph.tensor<[N], f32>
  %mb = graph.mul %m, %beta : !graph.tensor<[N], f32>
  %m_new = graph.add %mb, %g : !graph.tensor<[N], f32>
  %p_new = graph.sub %p, %m_new : !graph.tensor<[N], f32>
  func.return %p_new, %m_new : !graph.tensor<[N], f32>, !graph.tensor<[N], f32>
}

// -----

// The broadcast of an argument is cloned into both kernels that use it
// rather than computed once and written to memory.

// CHECK-LABEL: func.func @cloned_broadcast(
// CHECK-NEXT:    %scaled = fusion.kernel @k0 pointwise (%b, %x) {{.*}} reason "pointwise over [N, D] (graph.mul %scaled); duplicated here: graph.broadcast; graph.mul %scaled not fused into k1: it feeds the matmul's operands, where only layout ops, concats, splats, casts and scalings by a constant go" {
// CHECK-NEXT:    ^bb0(%b_1: !graph.tensor<[D], f32>, %x_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %bb = graph.broadcast %b_1
// CHECK-NEXT:      %scaled_1 = graph.mul %x_1, %bb
// CHECK:         %p = fusion.kernel @k1 matmul (%scaled, %w)
// CHECK:         %shifted = fusion.kernel @k2 pointwise (%b, %x) {{.*}} reason "pointwise over [N, D] (graph.add %shifted); duplicated here: graph.broadcast" {
// CHECK-NEXT:    ^bb0(%b_1: !graph.tensor<[D], f32>, %x_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %bb = graph.broadcast %b_1
// CHECK-NEXT:      %shifted_1 = graph.add %x_1, %bb
// CHECK:         func.return %p, %shifted
func.func @cloned_broadcast(%x: !graph.tensor<[N, D], f32>, %b: !graph.tensor<[D], f32>, %w: !graph.tensor<[D, K], f32>) -> (!graph.tensor<[N, K], f32>, !graph.tensor<[N, D], f32>) {
  %bb = graph.broadcast %b : !graph.tensor<[D], f32> -> !graph.tensor<[N, D], f32>
  %scaled = graph.mul %x, %bb : !graph.tensor<[N, D], f32>
  %p = graph.matmul %scaled, %w : (!graph.tensor<[N, D], f32>, !graph.tensor<[D, K], f32>) -> !graph.tensor<[N, K], f32>
  %shifted = graph.add %x, %bb : !graph.tensor<[N, D], f32>
  func.return %p, %shifted : !graph.tensor<[N, K], f32>, !graph.tensor<[N, D], f32>
}

// -----

// An elementwise op whose users are in two kernels (of different rows) is
// recomputed in each rather than stored by a kernel of its own: each kernel
// reads %x, as the one storing %a would.

// CHECK-LABEL: func.func @users_in_two_kernels(
// CHECK-NEXT:    %rows = fusion.kernel @k0 reduction (%x) {{.*}} reason "row reduction over [1] of [N, D] (graph.reduce sum %rows); recomputed here, not stored: graph.exp (elementwise, its users are in several kernels)" {
// CHECK:         %cols = fusion.kernel @k1 reduction (%x) {{.*}} reason "row reduction over [0] of [N, D] (graph.reduce max %cols); recomputed here, not stored: graph.exp (elementwise, its users are in several kernels)" {
// CHECK:         func.return %rows, %cols
func.func @users_in_two_kernels(%x: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[D], f32>) {
  %a = graph.exp %x : !graph.tensor<[N, D], f32>
  %rows = graph.reduce sum %a [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
  %cols = graph.reduce max %a [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D], f32>
  func.return %rows, %cols : !graph.tensor<[N], f32>, !graph.tensor<[D], f32>
}

// -----

// An elementwise op reading two tensors of its shape is stored, not
// recomputed (that would read both tensors twice): the first kernel using
// it computes it and stores it for the other.

// CHECK-LABEL: func.func @two_reads_are_stored(
// CHECK-NEXT:    %a, %rows = fusion.kernel @k0 reduction (%x, %y) {{.*}} reason "row reduction over [1] of [N, D] (graph.reduce sum %rows); producers: graph.add; graph.add %a stored for k1 (not recomputed: it would read 2 tensors of its shape)" {
// CHECK:         %cols = fusion.kernel @k1 reduction (%a)
// CHECK-NOT:     fusion.kernel
func.func @two_reads_are_stored(%x: !graph.tensor<[N, D], f32>, %y: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N], f32>, !graph.tensor<[D], f32>) {
  %a = graph.add %x, %y : !graph.tensor<[N, D], f32>
  %rows = graph.reduce sum %a [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N], f32>
  %cols = graph.reduce max %a [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D], f32>
  func.return %rows, %cols : !graph.tensor<[N], f32>, !graph.tensor<[D], f32>
}

// -----

// Multi-output row kernel: the max read by a kernel of other rows is
// computed by the first kernel using it, with the sum of exponentials and
// the picked logit, from one read of each row, and stored for the second.

// CHECK-LABEL: func.func @reduction_stored_for_a_later_kernel(
// CHECK-NEXT:    %m, %s, %picked = fusion.kernel @k0 reduction (%x, %pick) {{.*}} reason "row reduction over [1] of [N, D] (graph.reduce max %m, graph.reduce sum %s, graph.reduce sum %picked); {{.*}}graph.reduce max %m stored for k1 (not recomputed: it is a reduction)" {
// CHECK:         %cols = fusion.kernel @k1 reduction (%m, %x) {{.*}} reason "row reduction over [0] of [N, D] (graph.reduce sum %cols); duplicated here: graph.broadcast; recomputed here, not stored: graph.sub (elementwise, its users are in several kernels)" {
// CHECK-NOT:     fusion.kernel
func.func @reduction_stored_for_a_later_kernel(%x: !graph.tensor<[N, D], f32>, %pick: !graph.tensor<[N, D], i1>) -> (!graph.tensor<[N, 1], f32>, !graph.tensor<[N, 1], f32>, !graph.tensor<[D], f32>) {
  %m = graph.reduce max %x [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %mb = graph.broadcast %m : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, D], f32>
  %shifted = graph.sub %x, %mb : !graph.tensor<[N, D], f32>
  %e = graph.exp %shifted : !graph.tensor<[N, D], f32>
  %s = graph.reduce sum %e [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %zero = graph.constant 0.0 : f32 -> !graph.tensor<[N, D], f32>
  %chosen = graph.select %pick, %shifted, %zero : !graph.tensor<[N, D], i1>, !graph.tensor<[N, D], f32>
  %picked = graph.reduce sum %chosen [1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N, 1], f32>
  %cols = graph.reduce sum %shifted [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[D], f32>
  func.return %s, %picked, %cols : !graph.tensor<[N, 1], f32>, !graph.tensor<[N, 1], f32>, !graph.tensor<[D], f32>
}

// -----

// Two reductions over the same columns merge even though the second reads
// a row-shaped value of the first's (which then is not stored); a reshape
// dropping the kept axis of a keepdims result, and a 1/N computed from the
// symbol alone, join too.

// CHECK-LABEL: func.func @columns_reading_a_sibling(
// CHECK-NEXT:    %r1, %r2 = fusion.kernel @k0 reduction (%x, %y) {{.*}} reason "row reduction over [0] of [N, D] (graph.reduce sum %first, graph.reduce sum %second); producers: graph.sub, graph.mul x2; consumers: graph.reshape x2; duplicated here: graph.dim, graph.constant, graph.div, graph.broadcast" {
// CHECK:           fusion.yield %r1_1, %r2_1 :
// CHECK-NOT:     fusion.kernel
func.func @columns_reading_a_sibling(%x: !graph.tensor<[N, D], f32>, %y: !graph.tensor<[N, D], f32>) -> (!graph.tensor<[D], f32>, !graph.tensor<[D], f32>) {
  %n = graph.dim N : !graph.tensor<[], f32>
  %one = graph.constant 1.0 : f32 -> !graph.tensor<[], f32>
  %scale = graph.div %one, %n : !graph.tensor<[], f32>
  %sb = graph.broadcast %scale : !graph.tensor<[], f32> -> !graph.tensor<[N, D], f32>
  %d = graph.sub %x, %y : !graph.tensor<[N, D], f32>
  %a = graph.mul %d, %sb : !graph.tensor<[N, D], f32>
  %first = graph.reduce sum %a [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[1, D], f32>
  %b = graph.mul %a, %x : !graph.tensor<[N, D], f32>
  %second = graph.reduce sum %b [0] : !graph.tensor<[N, D], f32> -> !graph.tensor<[1, D], f32>
  %r1 = graph.reshape %first : !graph.tensor<[1, D], f32> -> !graph.tensor<[D], f32>
  %r2 = graph.reshape %second : !graph.tensor<[1, D], f32> -> !graph.tensor<[D], f32>
  func.return %r1, %r2 : !graph.tensor<[D], f32>, !graph.tensor<[D], f32>
}

// -----

// A layout op whose users are in two kernels is duplicated into both (it
// only changes how its operand is read) instead of writing a copy.

// CHECK-LABEL: func.func @layout_users_in_two_kernels(
// CHECK-NEXT:    %h = fusion.kernel @k0 pointwise (%x) {{.*}} reason "pointwise over [N, 16] (graph.tanh %h); graph.tanh %h not fused: its users are in 2 kernels (k1, k2), not recomputed: a kernel using it refuses it: it feeds the matmul's operands, where only layout ops, concats, splats, casts and scalings by a constant go" {
// CHECK:         %qw = fusion.kernel @k1 matmul (%h, %w) {{.*}} reason "matmul [N, 8] x [8, 8] -> [N, 8] (graph.matmul %qw); duplicated here: graph.slice" {
// CHECK-NEXT:    ^bb0(%h_1: !graph.tensor<[N, 16], f32>, %w_1: !graph.tensor<[8, 8], f32>):
// CHECK-NEXT:      %q = graph.slice %h_1 [0, 8] [1, 1]
// CHECK:         %qv = fusion.kernel @k2 matmul (%h, %v) {{.*}} reason "matmul [N, 8] x [8, 8] -> [N, 8] (graph.matmul %qv); duplicated here: graph.slice" {
// CHECK-NEXT:    ^bb0(%h_1: !graph.tensor<[N, 16], f32>, %v_1: !graph.tensor<[8, 8], f32>):
// CHECK-NEXT:      %q = graph.slice %h_1 [0, 8] [1, 1]
// CHECK-NOT:     fusion.kernel
func.func @layout_users_in_two_kernels(%x: !graph.tensor<[N, 16], f32>, %w: !graph.tensor<[8, 8], f32>, %v: !graph.tensor<[8, 8], f32>) -> (!graph.tensor<[N, 8], f32>, !graph.tensor<[N, 8], f32>) {
  %h = graph.tanh %x : !graph.tensor<[N, 16], f32>
  %q = graph.slice %h [0, 8] [1, 1] : !graph.tensor<[N, 16], f32> -> !graph.tensor<[N, 8], f32>
  %qw = graph.matmul %q, %w : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  %qv = graph.matmul %q, %v : (!graph.tensor<[N, 8], f32>, !graph.tensor<[8, 8], f32>) -> !graph.tensor<[N, 8], f32>
  func.return %qw, %qv : !graph.tensor<[N, 8], f32>, !graph.tensor<[N, 8], f32>
}

// -----

// Guards and dense constants stay in place, outside kernels; a returned
// argument needs no kernel.

// CHECK-LABEL: func.func @outside_kernels(
// CHECK-NEXT:    %table = graph.constant dense<
// CHECK-NEXT:    sym.guard N <= 8, "at most 8 rows"
// CHECK-NEXT:    %y = fusion.kernel @k0 pointwise (%table, %ids, %x) {{.*}} reason "pointwise over [N, 4] (graph.add %y); fused: graph.take" {
// CHECK-NEXT:    ^bb0(%table_1: !graph.tensor<[2, 4], f32>, %ids_1: !graph.tensor<[N], i64>, %x_1: !graph.tensor<[N, 4], f32>):
// CHECK-NEXT:      %rows = graph.take %table_1, %ids_1 [0]
// CHECK-NEXT:      %y_1 = graph.add %rows, %x_1
// CHECK-NEXT:      fusion.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %x
func.func @outside_kernels(%ids: !graph.tensor<[N], i64>, %x: !graph.tensor<[N, 4], f32>) -> (!graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>) {
  %table = graph.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32> -> !graph.tensor<[2, 4], f32>
  %rows = graph.take %table, %ids [0] : (!graph.tensor<[2, 4], f32>, !graph.tensor<[N], i64>) -> !graph.tensor<[N, 4], f32>
  sym.guard N <= 8, "at most 8 rows"
  %y = graph.add %rows, %x : !graph.tensor<[N, 4], f32>
  func.return %y, %x : !graph.tensor<[N, 4], f32>, !graph.tensor<[N, 4], f32>
}

// -----

// A returned layout op of an argument needs a copy kernel; the reshape it
// reads is duplicated into it.

// CHECK-LABEL: func.func @head_split(
// CHECK-NEXT:    %t = fusion.kernel @k0 pointwise (%x) : (!graph.tensor<[N, 768], f32>) -> (!graph.tensor<[12, N, 64], f32>) reason "pointwise over [12, N, 64] (graph.transpose %t); duplicated here: graph.reshape" {
// CHECK-NEXT:    ^bb0(%x_1: !graph.tensor<[N, 768], f32>):
// CHECK-NEXT:      %r = graph.reshape %x_1
// CHECK-NEXT:      %t_1 = graph.transpose %r [1, 0, 2]
// CHECK-NEXT:      fusion.yield %t_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %t
func.func @head_split(%x: !graph.tensor<[N, 768], f32>) -> !graph.tensor<[12, N, 64], f32> {
  %r = graph.reshape %x : !graph.tensor<[N, 768], f32> -> !graph.tensor<[N, 12, 64], f32>
  %t = graph.transpose %r [1, 0, 2] : !graph.tensor<[N, 12, 64], f32> -> !graph.tensor<[12, N, 64], f32>
  func.return %t : !graph.tensor<[12, N, 64], f32>
}

// -----

// Dead ops are dropped, not put in kernels.

// CHECK-LABEL: func.func @dead(
// CHECK-NEXT:    func.return %x
func.func @dead(%x: !graph.tensor<[N], f32>) -> !graph.tensor<[N], f32> {
  %e = graph.exp %x : !graph.tensor<[N], f32>
  %s = graph.reduce sum %e [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
  func.return %x : !graph.tensor<[N], f32>
}

// -----

// Horizontal fusion: a max and an argmax of the same rows, neither reading
// the other, are one kernel that reads the rows once.

func.func @max_and_argmax(%x: !graph.tensor<[N, 100], f32>) -> (!graph.tensor<[N, 100], f32>, !graph.tensor<[N], i64>) {
  %0 = graph.reduce max %x [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N, 1], f32>
  %1 = graph.broadcast %0 : !graph.tensor<[N, 1], f32> -> !graph.tensor<[N, 100], f32>
  %2 = graph.sub %x, %1 : !graph.tensor<[N, 100], f32>
  %3 = graph.argmax %x [1] : !graph.tensor<[N, 100], f32> -> !graph.tensor<[N], i64>
  func.return %2, %3 : !graph.tensor<[N, 100], f32>, !graph.tensor<[N], i64>
}

// CHECK-LABEL: func.func @max_and_argmax
// CHECK:         %{{.*}}, %{{.*}} = fusion.kernel @k0 reduction (%x)
// CHECK-SAME:    reason "row reduction over [1] of [N, 100] (graph.reduce max, graph.argmax); consumers: graph.broadcast, graph.sub"
// CHECK:           graph.reduce max
// CHECK:           graph.argmax
// CHECK-NOT:   fusion.kernel

// -----

// A buffer filled by slices (buf = zeros; buf[0] = a; buf[1:] = b) is
// index maps: one kernel that never materialises the buffer.

// CHECK-LABEL: func.func @filled_buffer(
// CHECK-NEXT:    %r = fusion.kernel @k0 pointwise (%a, %b) : (!graph.tensor<[1, D], f32>, !graph.tensor<[N, D], f32>) -> (!graph.tensor<[N + 1, D], f32>) reason "pointwise over [N + 1, D] (graph.exp %r); fused: graph.insert_slice x2; duplicated here: graph.constant" {
// CHECK-NEXT:    ^bb0(%a_1: !graph.tensor<[1, D], f32>, %b_1: !graph.tensor<[N, D], f32>):
// CHECK-NEXT:      %z = graph.constant
// CHECK-NEXT:      %0 = graph.insert_slice %a_1 into %z [0, 0] [1, 1]
// CHECK-NEXT:      %1 = graph.insert_slice %b_1 into %0 [1, 0] [1, 1]
// CHECK-NEXT:      %r_1 = graph.exp %1
// CHECK-NEXT:      fusion.yield %r_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @filled_buffer(%a: !graph.tensor<[1, D], f32>, %b: !graph.tensor<[N, D], f32>) -> !graph.tensor<[N + 1, D], f32> {
  %z = graph.constant 0.0 : f32 -> !graph.tensor<[N + 1, D], f32>
  %0 = graph.insert_slice %a into %z [0, 0] [1, 1] : !graph.tensor<[1, D], f32> -> !graph.tensor<[N + 1, D], f32>
  %1 = graph.insert_slice %b into %0 [1, 0] [1, 1] : !graph.tensor<[N, D], f32> -> !graph.tensor<[N + 1, D], f32>
  %r = graph.exp %1 : !graph.tensor<[N + 1, D], f32>
  func.return %r : !graph.tensor<[N + 1, D], f32>
}
