"""The prelude of every emitted module: helpers that give Triton NumPy's
semantics where Triton's differ, and the launchers' checks and messages.

This is a real module (it imports torch and triton, and its helpers can be
called, or used from ``@triton.jit`` kernels, directly), and it is also the
source text the emitter copies: ``irc.backend.triton.pruning`` reads this
file (without importing it) and copies into an emitted module the top-level
definitions that module uses, directly or through one another, in the order
they have here, each with the comment lines directly above it. Emitted
modules never import irc.

The rules for what may stand here follow from that:

- only ``import`` statements (the emitted header makes the same three), and
  top-level ``def``, ``class`` and assignments to names; every name a
  definition uses is Python's, ``torch``'s, ``triton``'s, ``tl``'s or
  another definition's here;
- a definition's text is the emitted text, byte for byte, so the rest of
  this file is not reformatted (``fmt: off``): reformatting it would change
  every emitted module;
- a comment that belongs to a definition sits directly above it (no blank
  line between); other comments are not copied.

Special float values are built from their bits inside the kernels, never
read from module globals (see ``_irc_nan``); ``_IRC_INTERPRETED`` is read
once, when the module is executed, as Triton decides then whether its
kernels are interpreted.
"""

import torch
import triton
import triton.language as tl

# fmt: off


class LaunchError(ValueError):
    """A call that the compiled signature refuses: a wrong count, rank,
    dtype or device, a dim that disagrees, a guard that does not hold."""


# Special float values are built from their bits inside the kernels, never
# read from module globals: Triton re-checks on every launch that each global
# a kernel read is unchanged, with `!=`, and a NaN global never equals itself.
@triton.jit
def _irc_nan(x):
    """A quiet NaN of x's float type."""
    return tl.full([], 0x7FF8000000000000, tl.int64).to(tl.float64, bitcast=True).to(x.dtype)


@triton.jit
def _irc_inf(x):
    """+inf of x's float type."""
    return tl.full([], 0x7FF0000000000000, tl.int64).to(tl.float64, bitcast=True).to(x.dtype)


@triton.jit
def _irc_div(a, b):
    """Correctly rounded division (Triton's f32 `/` is approximate on GPUs)."""
    if a.dtype == tl.float64:
        return a / b
    else:
        return tl.div_rn(a, b)


@triton.jit
def _irc_to_bf16(x):
    """float32 -> bfloat16 rounding to nearest even, in integer arithmetic
    (the interpreter truncates); NaN stays NaN."""
    bits = x.to(tl.int32, bitcast=True)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    rounded = tl.where(x != x, bits | 0x400000, rounded)
    return (rounded >> 16).to(tl.int16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _irc_floordiv_i(a, b):
    """NumPy's integer floor division: rounds down; x // 0 == 0."""
    zero = b == 0
    d = tl.where(zero, 1, b)
    q = a // d
    r = a % d
    q = tl.where((r != 0) & ((r < 0) != (d < 0)), q - 1, q)
    return tl.where(zero, 0, q)


@triton.jit
def _irc_rem_i(a, b):
    """NumPy's integer remainder: the divisor's sign; x % 0 == 0."""
    zero = b == 0
    d = tl.where(zero, 1, b)
    r = a % d
    r = tl.where((r != 0) & ((r < 0) != (d < 0)), r + d, r)
    return tl.where(zero, 0, r)


@triton.jit
def _irc_floordiv_f(a, b):
    """NumPy's float floor division (npy_floor_divide, from fmod)."""
    mod = a % b
    div = _irc_div(a - mod, b)
    div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
    floor = tl.floor(div)
    floor = tl.where(div - floor > 0.5, floor + 1.0, floor)
    quotient = _irc_div(a, b)
    floor = tl.where(div == 0, quotient * 0.0, floor)
    return tl.where(b == 0, quotient, floor)


@triton.jit
def _irc_rem_f(a, b):
    """NumPy's float remainder (npy_remainder): the divisor's sign."""
    mod = a % b
    mod = tl.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)
    return tl.where(mod == 0, tl.where(b < 0, -0.0, 0.0), mod)


@triton.jit
def _irc_pow_f(a, b):
    """NumPy's float power, computed in float64: exactly by repeated
    squaring for integer exponents below 64, else as exp2(b * log2|a|);
    negative bases with integer exponents take the exponent's parity."""
    x = a.to(tl.float64)
    y = b.to(tl.float64)
    ax = tl.abs(x)
    integral = tl.floor(y) == y
    r = tl.exp2(y * tl.log2(ax))
    odd = integral & (tl.abs(y % 2.0) == 1.0)
    negative = (x < 0) | ((x == 0) & (1.0 / x < 0))
    r = tl.where(negative & odd, -r, r)
    r = tl.where((x < 0) & (tl.floor(y) != y) & (ax != _irc_inf(x)), _irc_nan(x), r)
    small = integral & (tl.abs(y) < 64.0)
    n = tl.where(small, tl.abs(y), 0.0).to(tl.int32)
    p = tl.zeros_like(x) + 1.0
    base = x
    for _ in tl.static_range(6):
        p = tl.where((n & 1) != 0, p * base, p)
        base = base * base
        n = n >> 1
    p = tl.where(y < 0, 1.0 / p, p)
    r = tl.where(small, p, r)
    r = tl.where((y == 0) | (x == 1.0), 1.0, r)
    r = tl.where((x == -1.0) & (tl.abs(y) == _irc_inf(y)), 1.0, r)
    return r.to(a.dtype)


@triton.jit
def _irc_pow_i(a, b, BITS: tl.constexpr):
    """Integer power by repeated squaring, wrapping as NumPy's does (a
    negative exponent, an error at the reference level, gives 0)."""
    result = tl.zeros_like(a) + 1
    base = a
    e = b
    for _ in tl.static_range(BITS):
        result = tl.where((e & 1) != 0, result * base, result)
        base = base * base
        e = e >> 1
    return tl.where(b < 0, 0, result)


@triton.jit
def _irc_tanh(x):
    """tanh from tl.exp (no libdevice), in x's type: float32 (16-bit floats
    come widened) as Cephes' tanhf, an odd polynomial below |x| = 0.625 and
    1 - 2 / (exp(2|x|) + 1) above (a few ulps; float32 keeps a matmul
    epilogue's registers single-width); float64 with odd Taylor terms near 0."""
    if x.dtype == tl.float64:
        ay = tl.abs(x)
        big = 1.0 - 2.0 / (tl.exp(2.0 * ay) + 1.0)
        big = tl.where(x < 0, -big, big)
        return tl.where(ay < 1e-4, x * (1.0 - x * x / 3.0), big)
    y = x.to(tl.float32)
    ay = tl.abs(y)
    big = 1.0 - 2.0 / (tl.exp(2.0 * ay) + 1.0)
    big = tl.where(y < 0, -big, big)
    z = y * y
    p = (((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z + 1.33314422036e-1) * z - 3.33332819422e-1
    small = tl.where(y == 0, y, y + y * (z * p))
    return tl.where(ay < 0.625, small, big).to(x.dtype)


@triton.jit
def _irc_rint(x):
    """NumPy's rint: to the nearest integer, halves to even, exactly (x -
    floor(x) is exact); a zero result keeps x's sign."""
    f = tl.floor(x)
    d = x - f
    odd = f != 2.0 * tl.floor(f * 0.5)
    r = tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)
    return tl.where(r == 0, x * 0.0, r)


@triton.jit
def _irc_trunc(x):
    """Rounding towards zero (ceil keeps the sign of a zero result)."""
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _irc_log1p(x):
    """log(1 + x) in float64 (no libdevice), accurate near 0: log(u) * x /
    (u - 1) for u = 1 + x corrects u's rounding; rounded once to x's type."""
    y = x.to(tl.float64)
    u = 1.0 + y
    r = tl.log(u) * (y / (u - 1.0))
    r = tl.where(u == 1.0, y, r)
    r = tl.where(y == _irc_inf(y), y, r)
    return r.to(x.dtype)


@triton.jit
def _irc_expm1(x):
    """exp(x) - 1 in float64 (no libdevice), accurate near 0: (u - 1) * x /
    log(u) for u = exp(x) (Kahan); rounded once to x's type."""
    y = x.to(tl.float64)
    u = tl.exp(y)
    r = (u - 1.0) * (y / tl.log(u))
    r = tl.where(u == 1.0, y, r)
    r = tl.where(u - 1.0 == -1.0, u - 1.0, r)
    r = tl.where(u == _irc_inf(y), u, r)
    return r.to(x.dtype)


@triton.jit
def _irc_sinh(x):
    """sinh in float64 from expm1 (accurate near 0): (e + e / (e + 1)) / 2
    for e = expm1(|x|); past |x| = 20, exp(|x| / 2) squared and halved, which
    overflows only where sinh does; rounded once to x's type."""
    y = x.to(tl.float64)
    ay = tl.abs(y)
    e = _irc_expm1(ay)
    h = tl.exp(0.5 * ay)
    r = tl.where(ay > 20.0, (0.5 * h) * h, 0.5 * (e + e / (e + 1.0)))
    r = tl.where(y < 0, -r, r)
    return tl.where(y == 0, y, r).to(x.dtype)


@triton.jit
def _irc_cosh(x):
    """cosh in float64: (e + 1 / e) / 2 for e = exp(|x|); past |x| = 20, as
    _irc_sinh; rounded once to x's type."""
    ay = tl.abs(x.to(tl.float64))
    e = tl.exp(ay)
    h = tl.exp(0.5 * ay)
    return tl.where(ay > 20.0, (0.5 * h) * h, 0.5 * (e + 1.0 / e)).to(x.dtype)


# Constants are added to float64 tensors (tl.zeros_like), never passed to
# tl.where as two Python floats, which Triton would make float32.
@triton.jit
def _irc_atan(x):
    """arctan in float64 (no libdevice): Cephes' atan, a rational function on
    [0, 0.66] after reducing |x| by pi/4 (to 2.414) or pi/2 (beyond); rounded
    once to x's type."""
    y = x.to(tl.float64)
    ay = tl.abs(y)
    zero = tl.zeros_like(y)
    big = ay > 2.414213562373095
    mid = (ay > 0.66) & (ay <= 2.414213562373095)
    t = tl.where(big, -1.0 / ay, tl.where(mid, (ay - 1.0) / (ay + 1.0), ay))
    base = tl.where(big, zero + 1.5707963267948966, tl.where(mid, zero + 0.7853981633974483, zero))
    low = tl.where(big, zero + 6.123233995736766e-17, tl.where(mid, zero + 3.061616997868383e-17, zero))
    z = t * t
    p = (((-0.8750608600031904 * z - 16.15753718733365) * z - 75.00855792314705) * z - 122.8866684490136) * z - 64.85021904942025
    q = ((((z + 24.85846490142306) * z + 165.0270098316988) * z + 432.8810604912903) * z + 485.3903996359137) * z + 194.5506571482614
    r = base + ((t * (z * p / q) + t) + low)
    r = tl.where(y < 0, -r, r)
    return tl.where(y == 0, y, r).to(x.dtype)


@triton.jit
def _irc_atan2(a, b):
    """NumPy's arctan2(a, b) in float64: arctan(|a| / |b|) in the quadrant of
    (b, a), with C's values at zeros and infinities; rounded once to a's
    type."""
    y = a.to(tl.float64)
    x = b.to(tl.float64)
    ay = tl.abs(y)
    ax = tl.abs(x)
    zero = tl.zeros_like(y)
    inf = _irc_inf(y)
    t = _irc_atan(ay / ax)
    t = tl.where((ay == 0) & (ax == 0), zero, t)
    t = tl.where((ay == inf) & (ax == inf), zero + 0.7853981633974483, t)
    west = (x < 0) | ((x == 0) & (1.0 / x < 0))
    t = tl.where(west, 3.141592653589793 - t, t)
    south = (y < 0) | ((y == 0) & (1.0 / y < 0))
    r = tl.where(south, -t, t)
    return tl.where((y != y) | (x != x), y + x, r).to(a.dtype)


@triton.jit
def _irc_asin(x):
    """arcsin as arctan2(x, sqrt((1 - x)(1 + x))) (1 - x is exact near 1)."""
    y = x.to(tl.float64)
    return _irc_atan2(y, tl.sqrt((1.0 - y) * (1.0 + y))).to(x.dtype)


@triton.jit
def _irc_acos(x):
    """arccos as arctan2(sqrt((1 - x)(1 + x)), x)."""
    y = x.to(tl.float64)
    return _irc_atan2(tl.sqrt((1.0 - y) * (1.0 + y)), y).to(x.dtype)


@triton.jit
def _irc_max_f(x, AXIS: tl.constexpr):
    """Max over an axis with NumPy's NaN propagation (tl.max skips NaN)."""
    nan = tl.max((x != x).to(tl.int32), axis=AXIS) > 0
    return tl.where(nan, _irc_nan(x), tl.max(x, axis=AXIS))


@triton.jit
def _irc_min_f(x, AXIS: tl.constexpr):
    """Min over an axis with NumPy's NaN propagation (tl.min skips NaN)."""
    nan = tl.max((x != x).to(tl.int32), axis=AXIS) > 0
    return tl.where(nan, _irc_nan(x), tl.min(x, axis=AXIS))


@triton.jit
def _irc_argmax(x, index, AXIS: tl.constexpr, SIZE: tl.constexpr):
    """NumPy's argmax: the first NaN if there is one, else the first lane
    holding the maximum."""
    top = tl.max(x, axis=AXIS, keep_dims=True)
    nan = x != x
    any_nan = tl.max(nan.to(tl.int32), axis=AXIS, keep_dims=True) > 0
    hit = tl.where(any_nan, nan, x == top)
    return tl.min(tl.where(hit, index, SIZE), axis=AXIS)


@triton.jit
def _irc_dot_bf16(a, b, acc):
    """acc + a @ b for bfloat16 tiles on tensor cores, accumulated in
    float32; the interpreter cannot multiply bfloat16 blocks, so there the
    tiles are widened first (products of bfloat16 values are exact in
    float32: the same sum)."""
    if _IRC_INTERPRETED_KERNELS:
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    return tl.dot(a, b, acc)


@triton.jit
def _irc_mul(a, b):
    return a * b


def _irc_tensor(tensors, index, name, rank, dims, dtype, device):
    """Argument `index`, checked: a dense tensor of this rank and dtype on
    the device of the others."""
    tensor = tensors[index]
    if not isinstance(tensor, torch.Tensor):
        raise LaunchError(f"argument {name!r} must be a torch tensor, got {type(tensor).__name__}")
    if tensor.layout is not torch.strided:
        layout = str(tensor.layout).removeprefix("torch.")
        raise LaunchError(f"argument {name!r} is a {layout} tensor but the kernels read dense (strided) tensors; pass it as .to_dense()")
    if tensor.dim() != rank:
        raise LaunchError(f"argument {name!r} has rank {tensor.dim()} (shape {tuple(tensor.shape)}) but the function expects rank {rank}: {dims}")
    if tensor.dtype != dtype:
        got, expected = (str(d).removeprefix("torch.") for d in (tensor.dtype, dtype))
        raise LaunchError(f"argument {name!r} has dtype {got} but the function expects {expected}; convert it to {expected} first")
    if tensor.device != device:
        raise LaunchError(f"argument {name!r} is on {tensor.device} but argument 0 is on {device}; move them to one device")
    return tensor


def _irc_device(tensors):
    """The device of the first tensor; without one, where kernels run."""
    for tensor in tensors:
        if isinstance(tensor, torch.Tensor):
            return tensor.device
    if _IRC_INTERPRETED:
        return torch.device("cpu")
    return triton.runtime.driver.active.get_active_torch_device()


def _irc_contiguous(tensors):
    """The tensors of a call that passes every check, each contiguous: the
    kernels index row-major memory (the launcher passes them addresses, not
    strides), so a strided view (a transpose, a slice, a broadcast) is
    copied, by `_irc_contiguous_copy`."""
    if all(tensor.is_contiguous() for tensor in tensors):
        raise LaunchError("internal error: the launcher refused a call that passes every check; please report it")
    return [tensor if tensor.is_contiguous() else _irc_contiguous_copy(tensor, index) for index, tensor in enumerate(tensors)]


# What irc, when it loads this module, runs before each copy that
# `_irc_contiguous_copy` makes: `before(index, tensor, size)` sizes it against
# the memory available (raising irc's AllocationError) and logs it. None where
# the module runs without irc (a saved artefact): the copy is made as it is.
_IRC_BEFORE_COPY = None


def _irc_contiguous_copy(tensor, index):
    """A row-major copy of argument `index`, after `_IRC_BEFORE_COPY`; a
    failure to allocate it names it, with its shape, dtype and size."""
    shape = tuple(tensor.shape)
    strides, numel = [], 1
    for dim in reversed(shape):
        strides.append(numel)
        numel *= dim
    strides = tuple(reversed(strides))
    if _IRC_BEFORE_COPY is not None:
        _IRC_BEFORE_COPY(index, tensor, numel * tensor.dtype.itemsize)
    what = f"a row-major copy of argument {index} (strides {tuple(tensor.stride())}: the kernels read row-major memory)"
    copy = _irc_allocate(what, shape, strides, tensor.dtype, tensor.device)
    copy.copy_(tensor)
    return copy


# The torch device of each (driver class, device index), made once: CUDA's
# driver builds a new torch.device per call, which costs more than the rest
# of a launcher's device guard.
_IRC_LAUNCH_DEVICES = {}


def _irc_launch_device():
    """The torch device Triton launches kernels on now (its driver's current
    device): a launcher whose inputs are elsewhere launches under
    `_IrcOnDevice`."""
    driver = triton.runtime.driver.active
    key = (type(driver), driver.get_current_device())
    device = _IRC_LAUNCH_DEVICES.get(key)
    if device is None:
        device = _IRC_LAUNCH_DEVICES[key] = driver.get_active_torch_device()
    return device


class _IrcOnDevice:
    """Makes `device` the current device of Triton's driver for a block (the
    device its launches, streams and allocations use), and the previous one
    current again after it, as `torch.cuda.device(device)` does."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        self.context = triton.runtime.driver.active.get_device_interface().device(self.device)
        return self.context.__enter__()

    def __exit__(self, *exception):
        return self.context.__exit__(*exception)


def _irc_count(tensors, expected, names):
    if len(tensors) != expected:
        raise LaunchError(f"the function takes {expected} argument(s) ({names}) but was called with {len(tensors)}")


def _irc_static_dim(tensor, name, axis, expected):
    size = tensor.shape[axis]
    if size != expected:
        raise LaunchError(f"argument {name!r} axis {axis}: expected size {expected}, got {size}; this dim is static in the compiled signature")


def _irc_symbol(tensor, name, axis, symbol):
    size = tensor.shape[axis]
    if size < 1:
        raise LaunchError(f"argument {name!r} axis {axis}: symbol {symbol} would be {size}; symbolic dims are sizes of at least 1 (compile with a static dim for empty arrays)")
    return size


def _irc_same_symbol(tensor, name, axis, symbol, value, source):
    size = tensor.shape[axis]
    if size != value:
        raise LaunchError(f"argument {name!r} axis {axis}: symbol {symbol} is {size} here but {value} from {source}; dims named {symbol} must have equal sizes")


def _irc_expr_dim(tensor, name, axis, text, value, values):
    size = tensor.shape[axis]
    if size != value:
        raise LaunchError(f"argument {name!r} axis {axis}: dim {text} is {value} with {values}, but the array has size {size}")


def _irc_values(*triples):
    return ", ".join(f"{name} = {value}{source}" for name, value, source in triples) or "no symbols"


def _irc_guard_failed(fact, values, reason):
    raise LaunchError(f"guard `{fact}` does not hold with {values}{reason}; call with shapes that satisfy it")


def _irc_check_grid(kernel, grid, limits):
    """A grid the launcher's test refused: empty (nothing to launch) or
    beyond CUDA's limits (an error, before this kernel is launched)."""
    for axis, (size, limit) in enumerate(zip(grid, limits)):
        if size > limit:
            raise LaunchError(f"kernel @{kernel} would launch {size} programs along axis {axis} of its grid {grid}, more than CUDA's limit of {limit} on that axis; call with smaller sizes")


def _irc_launch_tile(extent, smallest, largest):
    """The size a launch gives a tile whose lanes walk `extent`: its next
    power of two, within [smallest, largest] (powers of two: few compiled
    variants)."""
    return min(max(1 << (extent - 1).bit_length(), smallest), largest)


def _irc_launch_warps(lanes):
    """Warps for a row tile of `lanes`: one per 256 lanes, from 1 to 16, so
    that each thread holds at least 4 consecutive lanes (a 128-bit vector
    load of float32) and at most 16 (8192 lanes)."""
    return min(16, max(1, lanes // 256))


def _irc_bucket(size):
    """The bucket of a size, per which launches choose their configuration:
    its next power of two, doubled, plus 1 for a multiple of 16 (size 1 is a
    bucket of its own, 2; 127 is 256, 128 is 257 and 129 is 512)."""
    return (1 << (size - 1).bit_length() + 1) | (size % 16 == 0)


def _irc_tuning_directory():
    """Where measured launch configurations are kept: `tuning` in irc's
    cache directory (`irc.cache.cache_directory`'s rule: $IRC_CACHE_DIR,
    else $XDG_CACHE_HOME/irc, else ~/.cache/irc), or None with IRC_CACHE=0."""
    import os
    if os.environ.get("IRC_CACHE", "").strip() == "0":
        return None
    base = os.environ.get("IRC_CACHE_DIR")
    if base:
        base = os.path.expanduser(base)
    else:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "irc")
    return os.path.join(base, "tuning")


def _irc_remove_orphans(directory, prefix):
    """Remove the temporary files that writers of an entry killed mid-write
    left (`prefix...tmp`, older than ten minutes, as irc.cache.ORPHAN_AGE:
    a write takes milliseconds); one another process removes meanwhile is
    left to it."""
    import os
    import time
    now = time.time()
    for name in os.listdir(directory):
        if name.startswith(prefix) and name.endswith(".tmp"):
            try:
                if now - os.stat(os.path.join(directory, name)).st_mtime > 600:
                    os.remove(os.path.join(directory, name))
            except OSError:
                continue


class _IrcTrial:
    """The measurement of a kernel's candidate configurations at one bucket:
    calls launch them in turn, each timed; the first launch of each (its
    compilation) is not counted; the candidate with the least median time
    over `runs` more launches wins (the cost model's, listed first, on a
    tie). A candidate that failed to launch is out."""

    def __init__(self, candidates, runs):
        self.candidates = candidates
        self.runs = runs
        self.launched = [0] * len(candidates)
        self.seconds = [[] for _ in candidates]
        self.failed = set()

    def next(self):
        running = [i for i in range(len(self.candidates)) if i not in self.failed]
        index = min(running, key=self.launched.__getitem__)
        self.launched[index] += 1
        return index

    def record(self, index, seconds):
        self.seconds[index].append(seconds)

    def medians(self):
        counted = [times[1:] or times for times in self.seconds]
        return [None if i in self.failed else sorted(t)[len(t) // 2] if t else None for i, t in enumerate(counted)]

    def winner(self):
        if any(len(times) <= self.runs for i, times in enumerate(self.seconds) if i not in self.failed):
            return None
        medians = self.medians()
        best = min(m for m in medians if m is not None)
        return self.candidates[medians.index(best)]


class _IrcTuner:
    """Chooses the launch configuration of each kernel per bucket of its
    sizes (`_irc_bucket`): the kernel's launch-chosen tile sizes, then its
    warps and stages. Once per kernel and bucket, from, in order: a
    configuration measured earlier and kept in the tuning directory (by any
    process: `_irc_tuning_directory`), a measurement over the next calls
    (IRC_TUNE=measure, in a process alone: every rank of a distributed run
    uses what is kept, or the cost model, so that all choose alike), the
    cost model. `chosen` maps (kernel, *buckets) to the decided
    configurations: a launch reads it, and launches through `launch` a key
    not there. `specs` gives, per kernel, its digest (of its code and its
    spec), its launch-chosen tiles' (smallest, largest) sizes, its warps
    (None: from its first tile) and stages, whether stages are tried, and
    its chosen tiles' constexprs."""

    RUNS = 3

    def __init__(self, specs):
        import threading
        self.specs = specs
        self.chosen = {}
        self.trials = {}
        self.running = {}
        self.measured = 0
        self.lock = threading.Lock()
        self.thread = threading.get_ident

    def launch(self, key, kernel, args, grid):
        """Launch `kernel` for a key not in `chosen`, configured by `start`,
        timed by `finish` where it is measured. A measured candidate that
        fails to launch is out of the measurement, and the call launches
        the cost model's configuration instead."""
        config = self.start(key)
        try:
            self._run(key, kernel, args, grid, config)
        except Exception:
            if not self._failed(key, config):
                raise
            self._run(key, kernel, args, grid, self.modelled(key))
            return
        self.finish(key)

    def _run(self, key, kernel, args, grid, config):
        tiles = dict(zip(self.specs[key[0]][5], config))
        kernel.run(*args, grid=grid, warmup=False, **tiles, num_warps=config[-2], num_stages=config[-1], enable_fp_fusion=False)

    def start(self, key):
        """The configuration of this launch of a key not in `chosen`."""
        with self.lock:
            config = self.chosen.get(key)
            if config is not None:
                return config
            trial = self.trials.get(key)
            if trial is not None and not self._measuring():
                del self.trials[key]
                trial = None
            if trial is None:
                config = self._kept(key)
                if config is None and not self._measuring():
                    config = self.modelled(key)
                if config is not None:
                    self.chosen[key] = config
                    return config
                trial = self.trials[key] = _IrcTrial(self.candidates(key), self.RUNS)
            index = trial.next()
            clock = self._clock()
            self.running[(key, self.thread())] = (index, clock)
            return trial.candidates[index]

    def finish(self, key):
        """After a launch of `key` that `start` configured: its time, if it
        was measured; the winner decided (and kept) once all are timed."""
        with self.lock:
            begun = self.running.pop((key, self.thread()), None)
        if begun is None:
            return
        index, clock = begun
        seconds = self._elapsed(clock)
        with self.lock:
            trial = self.trials.get(key)
            if trial is None:
                return
            trial.record(index, seconds)
            self.measured += 1
            self._decide(key, trial)

    def _failed(self, key, config):
        """Whether the launch of `config` that just failed was a measured
        candidate other than the cost model's, now out of its trial."""
        with self.lock:
            begun = self.running.pop((key, self.thread()), None)
            trial = self.trials.get(key)
            if begun is None or trial is None or begun[0] == 0:
                return False
            trial.failed.add(begun[0])
            self._decide(key, trial)
            return True

    def _decide(self, key, trial):
        winner = trial.winner()
        if winner is not None:
            del self.trials[key]
            self.chosen[key] = winner
            self._keep(key, winner, trial)

    def share(self):
        """Every rank of the torch.distributed job adopts rank 0's decided
        configurations (a collective: every rank calls it); what rank 0
        has not decided stays as each rank decided it."""
        import torch.distributed as dist
        with self.lock:
            table = [dict(self.chosen) if dist.get_rank() == 0 else None]
        dist.broadcast_object_list(table, src=0)
        with self.lock:
            self.chosen.update(table[0])

    def modelled(self, key):
        """The cost model's configuration: each launch-chosen tile the next
        power of two of the extent its lanes walk (its bucket's), within its
        sizes; warps as the kernel declares them, else one per 256 lanes of
        its first tile; its declared stages."""
        _, tiles, warps, stages = self.specs[key[0]][:4]
        sizes = tuple(_irc_launch_tile(bucket >> 1, smallest, largest) for bucket, (smallest, largest) in zip(key[1:], tiles))
        if warps is None:
            warps = _irc_launch_warps(sizes[0]) if sizes else 4
        return (*sizes, warps, stages)

    def candidates(self, key):
        """What a measurement tries: the cost model's configuration first,
        then each tile, warps and (where tried) stages halved, kept or
        doubled, within their limits."""
        import itertools
        _, tiles, _, _, vary_stages = self.specs[key[0]][:5]
        modelled = self.modelled(key)
        options = [sorted({min(max(size, smallest), largest) for size in (tile // 2, tile, tile * 2)}) for tile, (smallest, largest) in zip(modelled, tiles)]
        warps, stages = modelled[-2:]
        options.append(sorted({min(max(w, 1), 16) for w in (warps // 2, warps, warps * 2)}))
        options.append(sorted({min(max(s, 1), 5) for s in (stages - 1, stages, stages + 1)}) if vary_stages else [stages])
        return [modelled, *(c for c in itertools.product(*options) if c != modelled)]

    def _measuring(self):
        import os
        if os.environ.get("IRC_TUNE", "model").strip() != "measure":
            return False
        if self._on_gpu() and torch.cuda.is_current_stream_capturing():
            return False  # a CUDA graph being captured: no sync, no timing
        import torch.distributed as dist
        return not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1)

    def _on_gpu(self):
        return not _IRC_INTERPRETED and torch.cuda.is_available()

    def _clock(self):
        if self._on_gpu():
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        import time
        return time.perf_counter()

    def _elapsed(self, clock):
        if isinstance(clock, float):
            import time
            return time.perf_counter() - clock
        end = torch.cuda.Event(enable_timing=True)
        end.record()
        end.synchronize()
        return clock.elapsed_time(end) / 1000

    def _device(self):
        if _IRC_INTERPRETED:
            return "triton-interpreter"
        try:
            return torch.cuda.get_device_name()
        except (RuntimeError, AssertionError):
            return "unknown"

    def _entry_path(self, key):
        import hashlib
        import os
        directory = _irc_tuning_directory()
        if directory is None:
            return None, None
        identity = [self._device(), self.specs[key[0]][0], list(key[1:])]
        name = hashlib.sha256(repr(identity).encode()).hexdigest()[:40]
        return os.path.join(directory, name + ".json"), identity

    def _kept(self, key):
        """The configuration kept for this key, if one was (an entry that
        does not read as one is ignored: measured again and overwritten)."""
        import json
        path, identity = self._entry_path(key)
        if path is None:
            return None
        try:
            with open(path) as file:
                entry = json.load(file)
            config = tuple(entry["config"])
            valid = entry["format"] == 1 and [entry["device"], entry["kernel"], entry["buckets"]] == identity
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not valid or config not in self.candidates(key):
            return None
        return config

    def _keep(self, key, config, trial):
        """Keep a measured winner for every later process: written whole to
        a temporary file renamed over its entry."""
        import json
        import os
        import tempfile
        path, identity = self._entry_path(key)
        if path is None:
            return
        device, kernel, buckets = identity
        entry = {"format": 1, "device": device, "kernel": kernel, "buckets": buckets, "config": list(config), "candidates": [list(c) for c in trial.candidates], "median_seconds": trial.medians()}
        temporary = None
        directory, prefix = os.path.dirname(path), "." + os.path.basename(path) + "."
        try:
            os.makedirs(directory, exist_ok=True)
            _irc_remove_orphans(directory, prefix)
            handle, temporary = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
            with os.fdopen(handle, "w") as file:
                json.dump(entry, file)
            os.replace(temporary, path)
        except OSError as error:
            if temporary is not None and os.path.exists(temporary):
                os.remove(temporary)
            import warnings
            warnings.warn(f"irc could not keep the launch configuration it measured for a kernel in {path}: {error}; later processes will measure it again", stacklevel=2)


def _irc_debug_array(value):
    """A tensor as a NumPy array (bfloat16, which NumPy lacks, as float32)."""
    value = value.detach().cpu()
    return (value.float() if value.dtype is torch.bfloat16 else value).numpy()


def _irc_debug(kind, text, names, backward, values):
    """A debug op on the host, between launches: print the values (NumPy
    arrays, read back once the kernels before have run) formatted by `text`,
    flushed; or call the Python callable irc registered under the id `text`
    (it lives in the calling process: irc must be loaded there)."""
    arrays = [_irc_debug_array(value) for value in values]
    positional = [a for a, name in zip(arrays, names) if not name]
    keywords = {name: a for a, name in zip(arrays, names) if name}
    if kind == "print":
        print(("[backward] " if backward else "") + text.format(*positional, **keywords), flush=True)
        return
    import sys
    registry = sys.modules.get("irc.interpreters.debug")
    if registry is None:
        raise LookupError(f"debug.callback {text!r}: its Python callable is registered in irc's process, and irc is not loaded in this one")
    registry.show(kind, text, names, backward, arrays)


class _IrcPending:
    """A collective in flight: `wait()` waits for torch.distributed's work
    (None when it ran synchronously), then finishes the result in place."""

    def __init__(self, work, finish=None):
        self.work, self.finish = work, finish

    def wait(self):
        if self.work is not None:
            self.work.wait()
        if self.finish is not None:
            self.finish()


# Process groups per (mesh, axes), made once and in the same order on every
# rank, as torch.distributed.new_group requires.
_IRC_GROUPS = {}


def _irc_mesh_group(shape, names, axes, rank):
    """The members (global ranks, in group-index order) of `rank`'s group
    over the mesh axes `axes`, and every group over them."""
    positions = [names.index(a) for a in axes]
    def coordinates(r):
        coords = []
        for size in reversed(shape):
            r, c = divmod(r, size)
            coords.append(c)
        return coords[::-1]
    def rank_at(coords):
        r = 0
        for c, size in zip(coords, shape):
            r = r * size + c
        return r
    def members(r):
        base, found = coordinates(r), []
        count = 1
        for p in positions:
            count *= shape[p]
        for index in range(count):
            coords = list(base)
            for p in reversed(positions):
                index, coords[p] = divmod(index, shape[p])
            found.append(rank_at(coords))
        return found
    world = 1
    for size in shape:
        world *= size
    groups = {}
    for r in range(world):
        group = members(r)
        groups.setdefault(min(group), group)
    return members(rank), [groups[first] for first in sorted(groups)]


def _irc_process_group(shape, names, axes):
    """This rank's torch.distributed group over `axes`, its members and its
    index among them (the default group when it spans every rank)."""
    import torch.distributed as dist
    world, rank = dist.get_world_size(), dist.get_rank()
    size = 1
    for extent in shape:
        size *= extent
    if world != size:
        raise LaunchError(f"this program runs on a mesh of {size} ranks ({', '.join(f'{n}={s}' for n, s in zip(names, shape))}) but the torch.distributed job has {world}: start it with torchrun --nproc-per-node {size}")
    key = (shape, names, axes)
    if key not in _IRC_GROUPS:
        members, groups = _irc_mesh_group(shape, names, axes, rank)
        if len(members) == world:
            _IRC_GROUPS[key] = (None, members)
        else:
            made = [dist.new_group(group) for group in groups]
            _IRC_GROUPS[key] = (made[groups.index(members)], members)
    group, members = _IRC_GROUPS[key]
    return group, members, members.index(rank)


def _irc_collective(kind, params, shape, names, axes, source, target):
    """A collective op between launches: torch.distributed's call on the
    mesh's process group, asynchronous where torch's is; the launcher waits
    for the result where it is first used."""
    import torch.distributed as dist
    group, members, index = _irc_process_group(shape, names, axes)
    count = len(members)
    if kind == "axis_index":
        target.fill_(index)
        return _IrcPending(None)
    if kind == "all_reduce":
        target.copy_(source)
        reduction = params["reduction"]
        op = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[reduction]
        work = dist.all_reduce(target, op=op, group=group, async_op=True)
        if reduction != "mean":
            return _IrcPending(work)
        if target.dtype.is_floating_point:
            return _IrcPending(work, lambda: target.div_(count))
        return _IrcPending(work, lambda: target.copy_(torch.div(target, count, rounding_mode="floor")))
    if kind == "all_gather":
        parts = [torch.empty_like(source) for _ in range(count)]
        work = dist.all_gather(parts, source.contiguous(), group=group, async_op=True)
        join = torch.cat if params["tiled"] else torch.stack
        return _IrcPending(work, lambda: target.copy_(join(parts, params["dim"])))
    if kind == "reduce_scatter":
        # An all-reduce of the whole value, of which each member keeps its
        # block: every backend has it (gloo has no reduce-scatter).
        total = source.clone()
        op = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[params["reduction"]]
        work = dist.all_reduce(total, op=op, group=group, async_op=True)
        def finish():
            block = torch.chunk(total, count, params["dim"])[index] if params["tiled"] else total.select(params["dim"], index)
            if params["reduction"] == "mean":
                block = block / count if block.dtype.is_floating_point else torch.div(block, count, rounding_mode="floor")
            target.copy_(block)
        return _IrcPending(work, finish)
    if kind == "all_to_all":
        # Every member's blocks gathered, this member's taken from each: the
        # same on every backend (gloo has no all-to-all).
        parts = [torch.empty_like(source) for _ in range(count)]
        work = dist.all_gather(parts, source.contiguous(), group=group, async_op=True)
        def finish():
            received = [torch.chunk(part, count, params["split_dim"])[index] for part in parts]
            target.copy_(torch.cat(received, params["concat_dim"]))
        return _IrcPending(work, finish)
    if kind == "broadcast":
        target.copy_(source)
        work = dist.broadcast(target, src=members[params["root"]], group=group, async_op=True)
        return _IrcPending(work)
    if kind == "ppermute":
        operations = []
        receives = False
        for src, dst in params["pairs"]:
            if src == index:
                operations.append(dist.P2POp(dist.isend, source.contiguous(), members[dst], group))
            if dst == index:
                operations.append(dist.P2POp(dist.irecv, target, members[src], group))
                receives = True
        if not receives:
            target.zero_()
        works = dist.batch_isend_irecv(operations) if operations else []
        class _All:
            def wait(self):
                for work in works:
                    work.wait()
        return _IrcPending(_All())
    raise LaunchError(f"unknown collective {kind!r}")


#: Whether this module's kernels are interpreted: Triton decides it when a
#: kernel is defined, from this same setting.
_IRC_INTERPRETED = triton.knobs.runtime.interpret


#: The same, as a constexpr that kernels may read (a bool, which Triton's
#: launch-time check of globals compares equal).
_IRC_INTERPRETED_KERNELS = tl.constexpr(triton.knobs.runtime.interpret)


#: torch.bool for a launcher's per-call checks and allocations (a global reads faster).
_IRC_BOOL = torch.bool


#: torch.int32 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_INT32 = torch.int32


#: torch.int64 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_INT64 = torch.int64


#: torch.float16 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_FLOAT16 = torch.float16


#: torch.bfloat16 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_BFLOAT16 = torch.bfloat16


#: torch.float32 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_FLOAT32 = torch.float32


#: torch.float64 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_FLOAT64 = torch.float64


#: torch.uint8 for a launcher's per-call checks and allocations (a global reads faster).
_IRC_UINT8 = torch.uint8


def _irc_view(workspace, offset, dtype, shape, strides):
    """The intermediate at byte `offset` of the workspace as the interpreter
    reads it: a tensor view (compiled kernels get its address, an int)."""
    return workspace[offset:].view(dtype).as_strided(shape, strides)


class AllocationFailed(MemoryError):
    """A buffer of the launcher that could not be allocated; the message
    names it, with its shape, dtype and size."""


def _irc_allocate(what, shape, strides, dtype, device):
    """`torch.empty_strided`, whose failure to allocate names the buffer."""
    try:
        return torch.empty_strided(shape, strides, dtype=dtype, device=device)
    except (MemoryError, RuntimeError) as error:  # torch.OutOfMemoryError is a RuntimeError
        if not isinstance(error, MemoryError) and "memory" not in str(error).lower():
            raise
        size = dtype.itemsize
        for dim in shape:
            size *= dim
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise AllocationFailed(f"could not allocate {what} (shape {tuple(shape)}, {dtype}, {size:,} bytes): {reason}; call with smaller sizes or free memory") from error


def _irc_constant(data, dtype, shape):
    if not data:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
