// lower-memory-to-triton: each memory.kernel becomes a triton.kernel of the
// same name (buffers -> pointers, then one i64 argument per symbol; loads and
// stores at pointer + offset; every loop op -> the triton op mirroring it;
// scf.for retyped), and the host function keeps its memory ops. The second
// RUN prints the result as Triton source (irc-opt -t triton).

// RUN: irc-opt %s -p lower-memory-to-triton | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton | irc-opt --print-op-generic | irc-opt | filecheck %s
// RUN: irc-opt %s -p lower-memory-to-triton -t triton | filecheck %s --check-prefix=PY
// RUN: not irc-opt %s -t triton 2>&1 | filecheck %s --check-prefix=UNLOWERED

// CHECK-LABEL: triton.kernel @rowsum_k0 reduction (%x: !triton.ptr<f32>, %out: !triton.ptr<f32>, %D: i64, %N: i64) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "x.sum(axis=1) at model.py:20" {
// CHECK-NEXT:    %row = tile.program_id 0 : i64
// CHECK-NEXT:    %d = tile.size D : i64
// CHECK-NEXT:    %zero = tile.constant 0 : i64
// CHECK-NEXT:    %step = tile.constant 32 : i64
// CHECK-NEXT:    %r = tile.range "BLOCK" : !triton.tensor<[32], i64>
// CHECK-NEXT:    %fz = tile.constant 0.000000e+00 : f32
// CHECK-NEXT:    %init = tile.splat %fz : f32 -> !triton.tensor<[32], f32>
// CHECK-NEXT:    %base = tile.binary mul %row, %d : (i64, i64) -> i64
// CHECK-NEXT:    %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!triton.tensor<[32], f32>) : i64 {
// CHECK-NEXT:      %col = tile.binary add %r, %k : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %m = tile.cmp lt %col, %d : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i1>
// CHECK-NEXT:      %off = tile.binary add %col, %base : (!triton.tensor<[32], i64>, i64) -> !triton.tensor<[32], i64>
// CHECK-NEXT:      %v = triton.load %x[%off] mask %m : !triton.ptr<f32>[!triton.tensor<[32], i64>] mask !triton.tensor<[32], i1> -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %e = tile.unary exp %v : !triton.tensor<[32], f32>
// CHECK-NEXT:      %z = tile.select %m, %e, %fz : (!triton.tensor<[32], i1>, !triton.tensor<[32], f32>, f32) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      %n = tile.binary add %a, %z : (!triton.tensor<[32], f32>, !triton.tensor<[32], f32>) -> !triton.tensor<[32], f32>
// CHECK-NEXT:      scf.yield %n : !triton.tensor<[32], f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = tile.reduce sum %acc 0 : !triton.tensor<[32], f32> -> f32
// CHECK-NEXT:    %i = tile.reduce argmax %acc 0 : !triton.tensor<[32], f32> -> i64
// CHECK-NEXT:    %c = tile.cast %i : i64 -> f32
// CHECK-NEXT:    %t = tile.binary add %s, %c : (f32, f32) -> f32
// CHECK-NEXT:    triton.store %t, %out[%row] : f32, !triton.ptr<f32>[i64]
// CHECK-NEXT:  }
memory.kernel @rowsum_k0 reduction (%x: !memory.buffer<[N, D], [D, 1], f32>, %out: !memory.buffer<[N], [1], f32>) inputs 1 grid [N] tiles {BLOCK = 32} symbols [D, N] reason "x.sum(axis=1) at model.py:20" {
  %row = tile.program_id 0 : i64
  %d = tile.size D : i64
  %zero = tile.constant 0 : i64
  %step = tile.constant 32 : i64
  %r = tile.range "BLOCK" : !loop.tile<[32], i64>
  %fz = tile.constant 0.000000e+00 : f32
  %init = tile.splat %fz : f32 -> !loop.tile<[32], f32>
  %base = tile.binary mul %row, %d : (i64, i64) -> i64
  %acc = scf.for %k = %zero to %d step %step iter_args(%a = %init) -> (!loop.tile<[32], f32>) : i64 {
    %col = tile.binary add %r, %k : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i64>
    %m = tile.cmp lt %col, %d : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i1>
    %off = tile.binary add %col, %base : (!loop.tile<[32], i64>, i64) -> !loop.tile<[32], i64>
    %v = memory.load %x[%off] mask %m : !memory.buffer<[N, D], [D, 1], f32>[!loop.tile<[32], i64>] mask !loop.tile<[32], i1> -> !loop.tile<[32], f32>
    %e = tile.unary exp %v : !loop.tile<[32], f32>
    %z = tile.select %m, %e, %fz : (!loop.tile<[32], i1>, !loop.tile<[32], f32>, f32) -> !loop.tile<[32], f32>
    %n = tile.binary add %a, %z : (!loop.tile<[32], f32>, !loop.tile<[32], f32>) -> !loop.tile<[32], f32>
    scf.yield %n : !loop.tile<[32], f32>
  }
  %s = tile.reduce sum %acc 0 : !loop.tile<[32], f32> -> f32
  %i = tile.reduce argmax %acc 0 : !loop.tile<[32], f32> -> i64
  %c = tile.cast %i : i64 -> f32
  %t = tile.binary add %s, %c : (f32, f32) -> f32
  memory.store %t, %out[%row] : f32, !memory.buffer<[N], [1], f32>[i64]
}

// CHECK-LABEL: triton.kernel @dot_k0 matmul (%a: !triton.ptr<f16>, %b: !triton.ptr<f16>, %o: !triton.ptr<f32>) inputs 2 grid [1] tiles {BM = 16, BK = 16} symbols [] reason "" {
// CHECK:         %rm = tile.range "BM" : !triton.tensor<[16, 1], i32>
// CHECK-NEXT:    %rk = tile.range "BK" : !triton.tensor<[1, 16], i32>
// CHECK:         %lhs = triton.load %a[%off] : !triton.ptr<f16>[!triton.tensor<[16, 16], i32>] -> !triton.tensor<[16, 16], f16>
// CHECK:         %dot = tile.dot %lhs, %lhs, %acc : (!triton.tensor<[16, 16], f16>, !triton.tensor<[16, 16], f16>, !triton.tensor<[16, 16], f32>) -> !triton.tensor<[16, 16], f32>
// CHECK-NEXT:    %h = tile.cast %dot : !triton.tensor<[16, 16], f32> -> !triton.tensor<[16, 16], f16>
// CHECK-NEXT:    %w = tile.cast %h : !triton.tensor<[16, 16], f16> -> !triton.tensor<[16, 16], f32>
// CHECK-NEXT:    triton.store %w, %o[%off] : !triton.tensor<[16, 16], f32>, !triton.ptr<f32>[!triton.tensor<[16, 16], i32>]
memory.kernel @dot_k0 matmul (%a: !memory.buffer<[16, 16], [16, 1], f16>, %b: !memory.buffer<[16, 16], [16, 1], f16>, %o: !memory.buffer<[16, 16], [16, 1], f32>) inputs 2 grid [1] tiles {BM = 16, BK = 16} symbols [] reason "" {
  %rm = tile.range "BM" : !loop.tile<[16, 1], i32>
  %rk = tile.range "BK" : !loop.tile<[1, 16], i32>
  %c16 = tile.constant 16 : i32
  %rows = tile.binary mul %rm, %c16 : (!loop.tile<[16, 1], i32>, i32) -> !loop.tile<[16, 1], i32>
  %off = tile.binary add %rows, %rk : (!loop.tile<[16, 1], i32>, !loop.tile<[1, 16], i32>) -> !loop.tile<[16, 16], i32>
  %lhs = memory.load %a[%off] : !memory.buffer<[16, 16], [16, 1], f16>[!loop.tile<[16, 16], i32>] -> !loop.tile<[16, 16], f16>
  %zero = tile.constant 0.000000e+00 : f32
  %acc = tile.splat %zero : f32 -> !loop.tile<[16, 16], f32>
  %dot = tile.dot %lhs, %lhs, %acc : (!loop.tile<[16, 16], f16>, !loop.tile<[16, 16], f16>, !loop.tile<[16, 16], f32>) -> !loop.tile<[16, 16], f32>
  %h = tile.cast %dot : !loop.tile<[16, 16], f32> -> !loop.tile<[16, 16], f16>
  %w = tile.cast %h : !loop.tile<[16, 16], f16> -> !loop.tile<[16, 16], f32>
  memory.store %w, %o[%off] : !loop.tile<[16, 16], f32>, !memory.buffer<[16, 16], [16, 1], f32>[!loop.tile<[16, 16], i32>]
}

// The host function is unchanged: its launches now run triton kernels.
// CHECK-LABEL: func.func @host(%x: !memory.buffer<[N, D], [D, 1], f32>, %a: !memory.buffer<[16, 16], [16, 1], f16>) -> (!memory.buffer<[N], [1], f32>, !memory.buffer<[16, 16], [16, 1], f32>) {
// CHECK-NEXT:    sym.guard N <= 4096, "rows \22fit\22"
// CHECK-NEXT:    %t = memory.alloc : !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @rowsum_k0(%x, %t) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
// CHECK-NEXT:    %y = memory.reuse %t : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N], [1], f32>
// CHECK-NEXT:    memory.launch @rowsum_k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
// CHECK-NEXT:    %b = memory.constant dense<1.000000e+00> : tensor<16x16xf16> -> !memory.buffer<[16, 16], [16, 1], f16>
// CHECK-NEXT:    %o = memory.alloc : !memory.buffer<[16, 16], [16, 1], f32>
// CHECK-NEXT:    memory.launch @dot_k0(%a, %b, %o) : (!memory.buffer<[16, 16], [16, 1], f16>, !memory.buffer<[16, 16], [16, 1], f16>, !memory.buffer<[16, 16], [16, 1], f32>)
// CHECK-NEXT:    memory.dealloc %b : !memory.buffer<[16, 16], [16, 1], f16>
// CHECK-NEXT:    func.return %y, %o : !memory.buffer<[N], [1], f32>, !memory.buffer<[16, 16], [16, 1], f32>
func.func @host(%x: !memory.buffer<[N, D], [D, 1], f32>, %a: !memory.buffer<[16, 16], [16, 1], f16>) -> (!memory.buffer<[N], [1], f32>, !memory.buffer<[16, 16], [16, 1], f32>) {
  sym.guard N <= 4096, "rows \"fit\""
  %t = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %t) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  %y = memory.reuse %t : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  %b = memory.constant dense<1.0> : tensor<16x16xf16> -> !memory.buffer<[16, 16], [16, 1], f16>
  %o = memory.alloc : !memory.buffer<[16, 16], [16, 1], f32>
  memory.launch @dot_k0(%a, %b, %o) : (!memory.buffer<[16, 16], [16, 1], f16>, !memory.buffer<[16, 16], [16, 1], f16>, !memory.buffer<[16, 16], [16, 1], f32>)
  memory.dealloc %b : !memory.buffer<[16, 16], [16, 1], f16>
  func.return %y, %o : !memory.buffer<[N], [1], f32>, !memory.buffer<[16, 16], [16, 1], f32>
}

// Intermediates (allocated, not returned) live in one workspace per call, each
// at an offset aligned to 256 bytes; a reuse takes its source's offset.
func.func @pipeline(%x: !memory.buffer<[N, D], [D, 1], f32>) -> !memory.buffer<[N], [1], f32> {
  %t = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %t) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  %s = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %s) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  memory.dealloc %s : !memory.buffer<[N], [1], f32>
  %r = memory.reuse %t : !memory.buffer<[N], [1], f32> -> !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %r) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  %y = memory.alloc : !memory.buffer<[N], [1], f32>
  memory.launch @rowsum_k0(%x, %y) : (!memory.buffer<[N, D], [D, 1], f32>, !memory.buffer<[N], [1], f32>)
  func.return %y : !memory.buffer<[N], [1], f32>
}

// PY:      import torch
// PY-NEXT: import triton
// PY-NEXT: import triton.language as tl
// PY:      # kernel @rowsum_k0 (reduction), grid ['N']
// PY-NEXT: # x.sum(axis=1) at model.py:20
// PY-NEXT: @triton.jit
// PY-NEXT: def kernel_rowsum_k0(p_x: '*fp32', p_out: '*fp32', s_D, s_N, c_BLOCK: tl.constexpr = 32):
// PY-NEXT:     v_row = tl.program_id(0).to(tl.int64)
// PY-NEXT:     v_d = tl.cast(s_D, tl.int64)
// PY-NEXT:     v_zero = tl.full([], 0, tl.int64)
// PY-NEXT:     v_step = tl.full([], 32, tl.int64)
// PY-NEXT:     v_r = tl.arange(0, c_BLOCK).to(tl.int64)
// PY-NEXT:     v_fz = tl.full([], 0.0, tl.float32)
// PY-NEXT:     v_init = tl.broadcast_to(v_fz, [32])
// PY-NEXT:     v_base = (v_row * v_d)
// PY-NEXT:     v_a = v_init
// PY-NEXT:     for v_k in range(v_zero, v_d, v_step):
// PY-NEXT:         v_col = (v_r + v_k)
// PY-NEXT:         v_m = (v_col < v_d)
// PY-NEXT:         v_off = (v_col + v_base)
// PY-NEXT:         v_v = tl.load(p_x + v_off, mask=v_m, other=0)
// PY-NEXT:         v_e = tl.exp(v_v)
// PY-NEXT:         v_z = tl.where(v_m, v_e, v_fz)
// PY-NEXT:         v_n = (v_a + v_z)
// PY-NEXT:         v_a = v_n
// PY-NEXT:     v_acc = v_a
// PY-NEXT:     v_s = tl.sum(v_acc, axis=0).to(tl.float32)
// PY-NEXT:     v_i = _irc_argmax(v_acc, tl.arange(0, 32), 0, 32).to(tl.int64)
// PY-NEXT:     v_c = v_i.to(tl.float32)
// PY-NEXT:     v_t = (v_s + v_c)
// PY-NEXT:     tl.store(p_out + v_row, v_t)
// PY:      def kernel_dot_k0(p_a: '*fp16', p_b: '*fp16', p_o: '*fp32', c_BM: tl.constexpr = 16, c_BK: tl.constexpr = 16):
// PY-NEXT:     v_rm = tl.arange(0, c_BM)[:, None]
// PY-NEXT:     v_rk = tl.arange(0, c_BK)[None, :]
// PY:          v_dot = tl.dot(v_lhs, v_lhs, v_acc)
// PY-NEXT:     v_h = v_dot.to(tl.float16)
// PY-NEXT:     v_w = v_h.to(tl.float32)
// PY:      # host function @host
// PY-NEXT: def admit_host(tensors):
// PY:          _irc_count(tensors, 2, 'x, a')
// PY-NEXT:     device = _irc_device(tensors)
// PY-NEXT:     t_x = _irc_tensor(tensors, 0, 'x', 2, '[N, D]', torch.float32, device)
// PY-NEXT:     t_a = _irc_tensor(tensors, 1, 'a', 2, '[16, 16]', torch.float16, device)
// PY-NEXT:     s_N = _irc_symbol(t_x, 'x', 0, 'N')
// PY-NEXT:     s_D = _irc_symbol(t_x, 'x', 1, 'D')
// PY-NEXT:     _irc_static_dim(t_a, 'a', 0, 16)
// PY-NEXT:     _irc_static_dim(t_a, 'a', 1, 16)
// PY-NEXT:     if not (s_N <= 4096):
// PY-NEXT:         _irc_guard_failed('N <= 4096', _irc_values(('N', s_N, '')), ': rows "fit"')
// PY-NEXT:     return _irc_contiguous(tensors)
// PY:      def launch_host(*tensors):
// PY:          try:
// PY-NEXT:         (t_x, t_a) = tensors
// PY-NEXT:         (s_N, s_D) = t_x.shape
// PY-NEXT:         device = t_x.device
// PY-NEXT:         refused = not (t_x.dtype is _IRC_FLOAT32 and t_a.dtype is _IRC_FLOAT16 and s_N >= 1 and s_D >= 1 and t_a.shape == (16, 16) and t_a.device == device and (s_N <= 4096) and t_x.is_contiguous() and t_a.is_contiguous())
// PY-NEXT:     except (TypeError, ValueError, AttributeError, ArithmeticError, RuntimeError):
// PY-NEXT:         refused = True
// PY-NEXT:     if refused:
// PY-NEXT:         return launch_host(*admit_host(tensors))
// PY-NEXT:     if not _IRC_INTERPRETED and device != _irc_launch_device():
// PY-NEXT:         with _IrcOnDevice(device):
// PY-NEXT:             return launch_host(*tensors)
// PY-NEXT:     grid_0 = (s_N, 1, 1)
// PY-NEXT:     grid_1 = (1, 1, 1)
// PY-NEXT:     if not (grid_0[0] <= 2147483647):
// PY-NEXT:         _irc_check_grid('rowsum_k0', grid_0, (2147483647, 65535, 65535))
// PY-NEXT:     b_D = _irc_bucket(s_D)
// PY-NEXT:     b_N = _irc_bucket(s_N)
// PY-NEXT:     v_t = _irc_allocate("buffer 't'", (s_N,), (1,), _IRC_FLOAT32, device)
// PY-NEXT:     config_rowsum_k0 = _IRC_CHOSEN.get(('kernel_rowsum_k0', b_D, b_N))
// PY-NEXT:     if config_rowsum_k0 is None:
// PY-NEXT:         _IRC_TUNER.launch(('kernel_rowsum_k0', b_D, b_N), kernel_rowsum_k0, (t_x, v_t, s_D, s_N), grid_0)
// PY-NEXT:     else:
// PY-NEXT:         kernel_rowsum_k0.run(t_x, v_t, s_D, s_N, grid=grid_0, warmup=False, num_warps=config_rowsum_k0[0], num_stages=config_rowsum_k0[1], enable_fp_fusion=False)
// PY-NEXT:     v_y = v_t.as_strided((s_N,), (1,))
// PY-NEXT:     config_rowsum_k0_2 = _IRC_CHOSEN.get(('kernel_rowsum_k0', b_D, b_N))
// PY-NEXT:     if config_rowsum_k0_2 is None:
// PY-NEXT:         _IRC_TUNER.launch(('kernel_rowsum_k0', b_D, b_N), kernel_rowsum_k0, (t_x, v_y, s_D, s_N), grid_0)
// PY-NEXT:     else:
// PY-NEXT:         kernel_rowsum_k0.run(t_x, v_y, s_D, s_N, grid=grid_0, warmup=False, num_warps=config_rowsum_k0_2[0], num_stages=config_rowsum_k0_2[1], enable_fp_fusion=False)
// PY-NEXT:     v_b = _IRC_CONSTANTS[0].to(device, copy=True)
// PY-NEXT:     v_o = _irc_allocate("buffer 'o'", (16, 16), (16, 1), _IRC_FLOAT32, device)
// PY-NEXT:     config_dot_k0 = _IRC_CHOSEN.get(('kernel_dot_k0',))
// PY-NEXT:     if config_dot_k0 is None:
// PY-NEXT:         _IRC_TUNER.launch(('kernel_dot_k0',), kernel_dot_k0, (t_a, v_b, v_o), grid_1)
// PY-NEXT:     else:
// PY-NEXT:         kernel_dot_k0.run(t_a, v_b, v_o, grid=grid_1, warmup=False, num_warps=config_dot_k0[0], num_stages=config_dot_k0[1], enable_fp_fusion=False)
// PY-NEXT:     del v_b
// PY-NEXT:     return (v_y, v_o)
// PY:      def launch_pipeline(*tensors):
// PY:              return launch_pipeline(*admit_pipeline(tensors))
// PY-NEXT:     if not _IRC_INTERPRETED and device != _irc_launch_device():
// PY-NEXT:         with _IrcOnDevice(device):
// PY-NEXT:             return launch_pipeline(*tensors)
// PY-NEXT:     grid_0 = (s_N, 1, 1)
// PY-NEXT:     if not (grid_0[0] <= 2147483647):
// PY-NEXT:         _irc_check_grid('rowsum_k0', grid_0, (2147483647, 65535, 65535))
// PY-NEXT:     b_D = _irc_bucket(s_D)
// PY-NEXT:     b_N = _irc_bucket(s_N)
// PY-NEXT:     o_1 = (256 * (((4 * s_N) + 255) // 256))
// PY-NEXT:     workspace = _irc_allocate('the workspace of the intermediate buffers', (o_1 + (256 * (((4 * s_N) + 255) // 256)),), (1,), _IRC_UINT8, device)
// PY-NEXT:     address = workspace.data_ptr()
// PY-NEXT:     v_t = _irc_view(workspace, 0, torch.float32, (s_N,), (1,)) if _IRC_INTERPRETED else address
// PY:          v_s = _irc_view(workspace, o_1, torch.float32, (s_N,), (1,)) if _IRC_INTERPRETED else address + o_1
// PY:          del v_s
// PY-NEXT:     v_r = _irc_view(workspace, 0, torch.float32, (s_N,), (1,)) if _IRC_INTERPRETED else address
// PY:          v_y = _irc_allocate("buffer 'y'", (s_N,), (1,), _IRC_FLOAT32, device)
// PY:      _IRC_CONSTANTS = (
// PY-NEXT:     _irc_constant(b'\x00<\x00<
// PY:      _IRC_TUNING = {
// PY-NEXT:     'kernel_rowsum_k0': ('{{[0-9a-f]+}}', (), 4, 3, False, ()),
// PY-NEXT:     'kernel_dot_k0': ('{{[0-9a-f]+}}', (), 4, 3, True, ()),
// PY-NEXT: }
// PY:      _IRC_TUNER = _IrcTuner(_IRC_TUNING)
// PY-NEXT: _IRC_CHOSEN = _IRC_TUNER.chosen
// PY:      KERNELS = {
// PY-NEXT:     'kernel_rowsum_k0': (kernel_rowsum_k0, {'p_x': '*fp32', 'p_out': '*fp32', 's_D': 'i64', 's_N': 'i64'}, {'c_BLOCK': 32}),
// PY-NEXT:     'kernel_dot_k0': (kernel_dot_k0, {'p_a': '*fp16', 'p_b': '*fp16', 'p_o': '*fp32'}, {'c_BM': 16, 'c_BK': 16}),
// PY-NEXT: }
// PY:      ENTRY = 'launch_host'

// UNLOWERED: lower-memory-to-triton.mlir:{{[0-9]+}}:1: error: cannot emit Triton source: memory.kernel @rowsum_k0 is still at the memory level; run lower-memory-to-triton first
