// The emitted launcher runs control flow in Python: each decision says where
// it runs and reads the device's predicate back once; the carries' buffers
// are allocated before the loop and swap at its end. A launch in host
// control flow tests its grid against CUDA's limits where it runs (the
// grids of launches outside it are tested before any kernel runs). The
// cond's else-branch reduces its operand, so the cond does not fit one
// pointwise kernel and decides on the host.

// RUN: irc-opt %s -p lower-to-triton -t triton | filecheck %s

// CHECK-LABEL: def launch_classic(*tensors):
// CHECK:         v_carry = _irc_allocate("buffer 'carry'", (), (), _IRC_INT64, device)
// CHECK:         v_carry_2.copy_(t_x)
// CHECK:         v_q = _irc_allocate("buffer 'q'", (), (), _IRC_BOOL, device)
// CHECK-NEXT:    ([[CUR:.*]]) = (v_carry, v_carry_2, v_carry_next, v_carry_next_2)
// CHECK-NEXT:    # loop on the host: each iteration's decision reads the predicate a kernel computed (one device->host read per iteration)
// CHECK-NEXT:    while True:
// CHECK-NOT:       _irc_allocate
// CHECK:           # decision on the host: one device->host read of a 0-d buffer a kernel wrote (it waits for the kernels before it)
// CHECK-NEXT:      v_decision = v_p.item()
// CHECK-NEXT:      ([[BODY:.*]]) = ([[CUR]])
// CHECK-NEXT:      if not v_decision:
// CHECK-NEXT:          break
// CHECK-NOT:       _irc_allocate
// CHECK:           # decision on the host: one device->host read
// CHECK-NEXT:      v_decision_2 = v_q.item()
// CHECK-NEXT:      if v_decision_2:
// CHECK-NEXT:          if [[GRID:grid_[0-9]+]][0] <= 2147483647:
// CHECK-NEXT:              config_k4 = _IRC_CHOSEN.get(('kernel_k4',
// CHECK-NEXT:              if config_k4 is None:
// CHECK-NEXT:                  _IRC_TUNER.launch(('kernel_k4', {{.*}}), kernel_k4, ({{.*}}), [[GRID]])
// CHECK-NEXT:              else:
// CHECK-NEXT:                  kernel_k4.run({{.*}}, grid=[[GRID]], warmup=False,
// CHECK-NEXT:          else:
// CHECK-NEXT:              _irc_check_grid('k4', [[GRID]], (2147483647, 65535, 65535))
// CHECK:           else:
// CHECK:               kernel_k5.run({{.*}}, grid=grid_{{[0-9]+}}, warmup=False,
// CHECK-NOT:       _irc_allocate
// CHECK:           ([[CUR]]) = (
// CHECK-NEXT:    ({{.*}}) = ([[BODY]])
// CHECK-NEXT:    v_r = _irc_allocate("buffer 'r'", (s_N,), (1,), _IRC_FLOAT32, device)
// CHECK-NEXT:    v_r.copy_(
// CHECK:         return (v_r,)
func.func @classic(%x: !graph.tensor<[N], f32>, %n: !graph.tensor<[], i64>) -> !graph.tensor<[N], f32> {
  %zero = graph.constant 0 : i64 -> !graph.tensor<[], i64>
  %r:3 = graph.while (%zero, %n, %x) : (!graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>) cond {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %p = graph.cmp lt, %i, %m : !graph.tensor<[], i64>
    graph.yield %p : !graph.tensor<[], i1>
  } body {
  ^bb0(%i: !graph.tensor<[], i64>, %m: !graph.tensor<[], i64>, %v: !graph.tensor<[N], f32>):
    %one = graph.constant 1 : i64 -> !graph.tensor<[], i64>
    %j = graph.add %i, %one : !graph.tensor<[], i64>
    %s = graph.reduce sum %v [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
    %z = graph.constant 0.0 : f32 -> !graph.tensor<[], f32>
    %q = graph.cmp gt, %s, %z : !graph.tensor<[], f32>
    %w = graph.cond %q (%v) : !graph.tensor<[], i1>, (!graph.tensor<[N], f32>) -> (!graph.tensor<[N], f32>) {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %h = graph.constant 0.5 : f32 -> !graph.tensor<[N], f32>
      %b = graph.mul %a, %h : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    } else {
    ^bb0(%a: !graph.tensor<[N], f32>):
      %mx = graph.reduce max %a [0] : !graph.tensor<[N], f32> -> !graph.tensor<[], f32>
      %mb = graph.broadcast %mx : !graph.tensor<[], f32> -> !graph.tensor<[N], f32>
      %b = graph.sub %a, %mb : !graph.tensor<[N], f32>
      graph.yield %b : !graph.tensor<[N], f32>
    }
    graph.yield %j, %m, %w : !graph.tensor<[], i64>, !graph.tensor<[], i64>, !graph.tensor<[N], f32>
  }
  func.return %r#2 : !graph.tensor<[N], f32>
}
