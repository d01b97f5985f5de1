"""The Triton emitter: a triton-level module as the source of a Python module.

``emit_module(module)`` prints what the runtime (``irc.runtime.triton_backend``)
loads and runs:

- ``import torch``, ``import triton``, ``import triton.language as tl`` and
  a fixed prelude of ``@triton.jit`` helpers (below) that give the ops
  NumPy's semantics where Triton's differ;
- one ``@triton.jit`` function per ``triton.kernel``, headed by comments
  holding the kernel's ``reason`` (which names the Python source lines of
  its ops); each op is one statement, so the kernel reads like the IR;
- one launcher per host function, ``def launch_<name>(*tensors)``: it
  unpacks the tensors and their shapes and tests the whole call in one
  plain-Python expression (count, rank, dtype, device; every symbol bound
  from the shapes and at least 1, a dim named twice equal, an expression
  dim equal to its value, the guards), allocates the outputs with
  ``torch.empty_strided`` on the inputs' device and every intermediate in
  one workspace (a pointer into it for compiled kernels, a view for the
  interpreter; ``memory.reuse`` takes its source's place, ``memory.dealloc``
  is a ``del``), copies the dense constants there, launches each kernel over
  its grid (nothing for an empty grid; a grid beyond CUDA's limits is
  refused) and returns a tuple of tensors. When the test fails it calls
  ``refuse_<name>(tensors)``, which checks one thing at a time and raises
  the module's ``LaunchError`` (a ``ValueError``) naming the argument, axis,
  symbol and values, or the guard, its symbols' values and the compiler's
  reason for it;
- ``KERNELS`` (the ``@triton.jit`` function's name -> the function, its
  ``ASTSource`` signature and constexprs: enough for ``triton.compile``)
  and ``ENTRY``, the name of the first host function's launcher.

Hostile IR cannot inject code. Every name that reaches the source is
sanitised to ``[A-Za-z_][A-Za-z0-9_]*`` behind a prefix that says what it
is (``p_`` pointer, ``s_`` symbol, ``c_`` constexpr, ``v`` value, ``t_``
tensor argument, ``kernel_``, ``launch_``), deduplicated where sanitising
makes two names equal; text (reasons, locations, argument names in
messages) reaches the source only as comment lines reduced to printable
ASCII or as ``repr``-quoted literals of such text; symbolic expressions are
parsed back with ``ast`` and rebuilt from a whitelist of node kinds; numbers
are printed from their values; dense constants travel as ``bytes`` literals.

Symbols are scalar kernel arguments under their own names, and every
``triton.size`` casts them to its own type first: Triton passes an integer
argument as i32 when it fits (and as a constexpr when it is 1), so an i64
offset is computed in 64 bits whatever value a symbol has. Masks are the
IR's: every load and store the IR masks is masked, and only those.

Only functions that both the Triton interpreter and the compiler run are
used: ``tanh``, ``erf`` and float ``pow`` are computed in float64 from
``tl.exp``/``tl.erf``/``tl.log2`` (no libdevice calls), f32 division and
square roots are the correctly rounded ``tl.div_rn``/``tl.sqrt_rn`` (the
defaults are approximate on GPUs), and 16-bit floats compute in float32
and round once, as NumPy does (which also steers clear of the interpreter's
bfloat16 bugs, see "Elementwise and reduction spellings").
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue

from irc.dialects import memory, sym
from irc.dialects import triton as tt
from irc.dialects.memory import BufferType
from irc.dialects.tiles import shape_text
from irc.dtypes import ALL_DTYPES, BOOL, DType, dtype
from irc.errors import IrcError
from irc.shapes import SymExpr


class EmitError(IrcError):
    """A triton-level module that cannot be printed as Python: an op with no
    Triton spelling, a symbol no argument binds, a launch of no
    ``triton.kernel``."""


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------

#: Triton's name of each dtype: its own, but ``tl.int1`` for bool.
_TL_TYPES = {d.name: "tl.int1" if d is BOOL else f"tl.{d.name}" for d in ALL_DTYPES}
_SIGNATURE_TYPES = {
    "bool": "i1",
    "int32": "i32",
    "int64": "i64",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
}
#: Signed integer types of each float's bit width, to spell special values.
_BITS_TYPES = {16: "tl.int16", 32: "tl.int32", 64: "tl.int64"}


def _dtype(element: Attribute) -> DType:
    try:
        return dtype(element)
    except IrcError as err:
        raise EmitError(f"element type {element} has no Triton counterpart") from err


def _dtype_name(element: Attribute) -> str:
    return _dtype(element).name


def tl_type(element: Attribute) -> str:
    """``tl.float32`` for ``f32``, ..."""
    return _TL_TYPES[_dtype_name(element)]


def signature_type(type_: Attribute) -> str:
    """The ``ASTSource`` signature of a kernel argument: ``*fp32``, ``i64``."""
    if isinstance(type_, tt.PointerType):
        return "*" + _SIGNATURE_TYPES[_dtype_name(type_.element_type)]
    return _SIGNATURE_TYPES[_dtype_name(type_)]


def _kind(element: Attribute) -> str:
    """``"f"``, ``"i"`` or ``"b"``: what family of Triton code applies."""
    return _dtype(element).kind


def _is_half(element: Attribute) -> bool:
    return _kind(element) == "f" and dtype(element).bits == 16


# --------------------------------------------------------------------------
# Sanitisation
# --------------------------------------------------------------------------

_UNSAFE_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_UNSAFE_TEXT = re.compile(r"[^\x20-\x7e]")
_MAX_NAME = 48
_MAX_LINE = 160
_MAX_LINES = 40


def identifier(prefix: str, text: str) -> str:
    """``prefix`` followed by ``text`` reduced to identifier characters:
    always a valid Python identifier, never a keyword (the prefixes start
    with a letter and none is a keyword prefix of anything)."""
    return prefix + _UNSAFE_IDENTIFIER.sub("_", text)[:_MAX_NAME]


def safe_text(text: str) -> str:
    """``text`` on one line of printable ASCII, shortened: what IR text may
    become inside a comment or a string literal."""
    flat = _UNSAFE_TEXT.sub("?", text.replace("\n", " | "))
    return flat if len(flat) <= _MAX_LINE else flat[: _MAX_LINE - 3] + "..."


def text_literal(text: str) -> str:
    """A Python string literal holding ``safe_text(text)``."""
    return repr(safe_text(text))


def comment_lines(text: str) -> list[str]:
    """``# ...`` lines holding ``text``, one per line of it, each reduced to
    printable ASCII so that nothing in it ends the comment."""
    lines = text.splitlines() or [""]
    if len(lines) > _MAX_LINES:
        lines = [
            *lines[: _MAX_LINES - 1],
            f"... ({len(lines) - _MAX_LINES + 1} more lines)",
        ]
    return [f"# {safe_text(line)}".rstrip() for line in lines]


@dataclass
class Namer:
    """Fresh, unique identifiers within one Python scope."""

    taken: set[str] = field(default_factory=set)

    def fresh(self, prefix: str, text: str = "") -> str:
        base = identifier(prefix, text)
        name, count = base, 1
        while name in self.taken:
            count += 1
            name = f"{base}_{count}"
        self.taken.add(name)
        return name


#: Names of the emitted module's scope that no generated name may take.
_MODULE_NAMES = frozenset({"torch", "triton", "tl", "KERNELS", "ENTRY", "LaunchError"})


# --------------------------------------------------------------------------
# Symbolic expressions
# --------------------------------------------------------------------------

_ARITHMETIC = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}


@dataclass(frozen=True)
class ExprRenderer:
    """Prints a ``SymExpr`` as Python over given variable names.

    The expression's own Python text (``SymExpr.to_python``) is parsed with
    ``ast`` and rebuilt from a whitelist of node kinds (integers, the
    symbols, ``+ - * // %``, unary minus, ``max``/``min``), so nothing but
    arithmetic on the named variables can come out. On the host, Python's
    own ``//``, ``%``, ``max`` and ``min`` are exactly ``SymExpr.evaluate``;
    in a kernel (``in_kernel``), each symbol is first cast to ``index_type``
    (``tl.cast(s_N, tl.int64)``), and floor division and modulo go through
    prelude helpers with Python's semantics (Triton's round toward zero).
    """

    names: Mapping[str, str]
    in_kernel: bool = False
    index_type: str = "tl.int64"

    def render(self, expr: SymExpr) -> str:
        tree = ast.parse(expr.to_python(), mode="eval")
        return self._node(tree.body)

    def _node(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return str(node.value)
        if isinstance(node, ast.Name) and node.id in self.names:
            name = self.names[node.id]
            return f"tl.cast({name}, {self.index_type})" if self.in_kernel else name
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return f"(-{self._node(node.operand)})"
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("max", "min")
            and node.args
            and not node.keywords
        ):
            return self._minmax(node.func.id, node.args)
        raise EmitError(f"unexpected {type(node).__name__} in a symbolic expression")

    def _binary(self, node: ast.BinOp) -> str:
        operator = _ARITHMETIC.get(type(node.op))
        if operator is not None:
            return f"({self._node(node.left)} {operator} {self._node(node.right)})"
        if not isinstance(node.op, ast.FloorDiv | ast.Mod):
            raise EmitError(
                f"unexpected operator {type(node.op).__name__} in a symbolic expression"
            )
        if not self.in_kernel:
            symbol = "//" if isinstance(node.op, ast.FloorDiv) else "%"
            return f"({self._node(node.left)} {symbol} {self._node(node.right)})"
        helper = (
            "_irc_floordiv_i" if isinstance(node.op, ast.FloorDiv) else "_irc_rem_i"
        )
        return f"{helper}({self._operand(node.left)}, {self._operand(node.right)})"

    def _operand(self, node: ast.expr) -> str:
        """A helper's argument: a constant subexpression as a typed scalar
        (the helpers compute on tensors, not Python ints)."""
        text = self._node(node)
        if any(isinstance(n, ast.Name) for n in ast.walk(node)):
            return text
        return f"tl.full([], {text}, {self.index_type})"

    def _minmax(self, kind: str, args: list[ast.expr]) -> str:
        if not self.in_kernel:
            return f"{kind}({', '.join(self._node(a) for a in args)})"
        function = "tl.maximum" if kind == "max" else "tl.minimum"
        result = self._operand(args[0])
        for arg in args[1:]:
            result = f"{function}({result}, {self._operand(arg)})"
        return result


# --------------------------------------------------------------------------
# The prelude: helpers giving Triton NumPy's semantics
# --------------------------------------------------------------------------

HEADER = """\
# Generated by irc (irc.lowering.emit_triton) from a triton-level module.
# Kernels first, then one launcher per host function; KERNELS and ENTRY at
# the end. Do not edit: regenerate.

import torch
import triton
import triton.language as tl
"""

PRELUDE = '''\
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
    """tanh from tl.exp in float64 (no libdevice): odd Taylor terms near 0,
    1 - 2 / (exp(2|x|) + 1) elsewhere; rounded once to x's type."""
    y = x.to(tl.float64)
    ay = tl.abs(y)
    big = 1.0 - 2.0 / (tl.exp(2.0 * ay) + 1.0)
    big = tl.where(y < 0, -big, big)
    return tl.where(ay < 1e-4, y * (1.0 - y * y / 3.0), big).to(x.dtype)


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
def _irc_mul(a, b):
    return a * b


def _irc_tensor(tensors, index, name, rank, dims, dtype, device):
    """Argument `index`, checked: a tensor of this rank and dtype on the
    device of the others."""
    tensor = tensors[index]
    if not isinstance(tensor, torch.Tensor):
        raise LaunchError(f"argument {name!r} must be a torch tensor, got {type(tensor).__name__}")
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


#: Whether this module's kernels are interpreted: Triton decides it when a
#: kernel is defined, from this same setting.
_IRC_INTERPRETED = triton.knobs.runtime.interpret


class _IrcPointer:
    """An intermediate in a launcher's workspace as a compiled kernel reads
    it: an address and a dtype (all Triton's binder and launcher ask of a
    tensor argument), cheaper to make per call than a tensor view."""

    __slots__ = ("address", "dtype")

    def __init__(self, address, dtype):
        self.address = address
        self.dtype = dtype

    def data_ptr(self):
        return self.address


def _irc_slice(workspace, offset, dtype, shape, strides):
    """The intermediate at byte `offset` of the workspace: a pointer for
    compiled kernels, a tensor view for the interpreter (which reads
    tensors)."""
    if _IRC_INTERPRETED:
        return workspace[offset:].view(dtype).as_strided(shape, strides)
    return _IrcPointer(workspace.data_ptr() + offset, dtype)


def _irc_constant(data, dtype, shape):
    if not data:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
'''


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


def _index_suffix(shape: Sequence[int], axis: int) -> str:
    """``[:, None]``: puts a 1-D range along ``axis`` of a rank-n block."""
    if len(shape) == 1:
        return ""
    return (
        "[" + ", ".join(":" if i == axis else "None" for i in range(len(shape))) + "]"
    )


def _float_bits(value: float, element: Attribute) -> int:
    """The bits of ``value`` in ``element``'s float format, as a signed int."""
    numpy_type = dtype(element).numpy
    raw = np.asarray(value, dtype=np.float64).astype(numpy_type).tobytes()
    return int.from_bytes(raw, "little", signed=True)


def constant_text(attr: IntegerAttr | FloatAttr, element: Attribute) -> str:
    """A typed scalar constant (``tl.full([], 1.5, tl.float32)``); specials
    (inf, NaN) and bfloat16 values (which the interpreter would truncate)
    by their bits, so the value is exact."""
    type_name = tl_type(element)
    if isinstance(attr, IntegerAttr):
        value = int(attr.value.data)
        if _kind(element) == "b":
            value = int(value != 0)
        return f"tl.full([], {value}, {type_name})"
    value = float(attr.value.data)
    if math.isfinite(value) and dtype(element).name != "bfloat16":
        return f"tl.full([], {value!r}, {type_name})"
    bits_type = _BITS_TYPES[dtype(element).bits]
    bits = _float_bits(value, element)
    return f"tl.full([], {bits}, {bits_type}).to({type_name}, bitcast=True)"


def _location_text(op: Operation) -> str | None:
    """``file:line`` of ``op``'s source location, if it has one."""
    location = op.location
    if isinstance(location, FileLineColLoc):
        return f"{location.filename.data}:{location.line.data}"
    return None


def _location_comment(op: Operation) -> str:
    """A trailing comment naming ``op``'s source line, or nothing."""
    location = _location_text(op)
    return f"  # {safe_text(location)}" if location else ""


_FACT_OPERATORS = frozenset({"==", "<", "<=", ">", ">="})
_COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BITWISE = {"and": "&", "or": "|", "xor": "^"}
_BOOL_BINARY = {"add": "|", "mul": "&", "max": "|", "min": "&", **_BITWISE}
_ARITHMETIC_KINDS = {"add": "+", "sub": "-", "mul": "*"}


@dataclass
class KernelEmitter:
    """Prints one ``triton.kernel`` as a ``@triton.jit`` function."""

    kernel: tt.KernelOp
    python_name: str
    namer: Namer = field(default_factory=Namer)
    values: dict[SSAValue, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    symbols: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, str] = field(default_factory=dict)
    signature: dict[str, str] = field(default_factory=dict)

    def emit(self) -> list[str]:
        params = self._parameters()
        self._block(self.kernel.body.block, 1)
        if not self.lines:
            self._emit(1, "pass")
        header = [
            *comment_lines(
                f"kernel @{self.kernel.kernel_name} ({self.kernel.kind.data}), "
                f"grid {[str(g) for g in self.kernel.grid_exprs]}"
            ),
            *comment_lines(self.kernel.reason.data),
            "@triton.jit",
            f"def {self.python_name}({', '.join(params)}):",
        ]
        return [*header, *self.lines]

    def constexpr_values(self) -> dict[str, int]:
        """Constexpr parameter name -> tile size."""
        sizes = self.kernel.tile_sizes
        return {self.constexprs[name]: sizes[name] for name in sizes}

    # Parameters ----------------------------------------------------------

    def _parameters(self) -> list[str]:
        self.namer.taken |= _MODULE_NAMES
        params: list[str] = []
        for index, arg in enumerate(self.kernel.pointer_args):
            name = self.namer.fresh("p_", arg.name_hint or f"arg{index}")
            self.values[arg] = name
            self.signature[name] = signature_type(arg.type)
            params.append(name)
        for symbol, arg in zip(
            self.kernel.symbol_names, self.kernel.symbol_args, strict=True
        ):
            name = self.namer.fresh("s_", symbol)
            self.values[arg] = self.symbols[symbol] = name
            self.signature[name] = signature_type(arg.type)
            params.append(name)
        for tile in self.kernel.tile_sizes:
            name = self.namer.fresh("c_", tile)
            self.constexprs[tile] = name
            params.append(f"{name}: tl.constexpr")
        return params

    # Statements ----------------------------------------------------------

    def _block(self, block: Block, depth: int) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                self._for(op, depth)
            elif isinstance(op, scf.YieldOp):
                continue  # assigned by the enclosing loop
            elif isinstance(op, tt.StoreOp):
                self._emit(depth, self._store(op) + _location_comment(op))
            else:
                self._assign(op, depth)

    def _emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def _assign(self, op: Operation, depth: int) -> None:
        expression = self._expression(op)
        (result,) = op.results
        name = self._name(result)
        self._emit(depth, f"{name} = {expression}{_location_comment(op)}")

    def _name(self, value: SSAValue) -> str:
        name = self.namer.fresh(
            "v_" if value.name_hint else "v", value.name_hint or str(len(self.values))
        )
        self.values[value] = name
        return name

    def _for(self, op: scf.ForOp, depth: int) -> None:
        body = op.body.block
        induction, *carried = body.args
        carried_names = [self._name(arg) for arg in carried]
        for name, init in zip(carried_names, op.iter_args, strict=True):
            self._emit(depth, f"{name} = {self.values[init]}")
        bounds = ", ".join(self.values[v] for v in (op.lb, op.ub, op.step))
        self._emit(
            depth,
            f"for {self._name(induction)} in range({bounds}):{_location_comment(op)}",
        )
        start = len(self.lines)
        self._block(body, depth + 1)
        yielded = body.last_op
        assert isinstance(yielded, scf.YieldOp), "scf.for bodies end in scf.yield"
        if carried_names:
            targets = ", ".join(carried_names)
            sources = ", ".join(self.values[v] for v in yielded.operands)
            self._emit(depth + 1, f"{targets} = {sources}")
        elif len(self.lines) == start:
            self._emit(depth + 1, "pass")
        for result, name in zip(op.results, carried_names, strict=True):
            self._emit(depth, f"{self._name(result)} = {name}")

    # Expressions ---------------------------------------------------------

    def _expression(self, op: Operation) -> str:
        emitter = _EXPRESSIONS.get(type(op))
        if emitter is None:
            raise EmitError(
                f"{op.name} in triton.kernel @{self.kernel.kernel_name} has no Triton "
                "spelling; lower memory-level kernels with lower-memory-to-triton first"
            )
        return emitter(self, op)

    def v(self, value: SSAValue) -> str:
        return self.values[value]

    def program_id(self, op: tt.ProgramIdOp) -> str:
        text = f"tl.program_id({op.axis.value.data})"
        return (
            text
            if op.result.type == IntegerType(32)
            else f"{text}.to({tl_type(op.result.type)})"
        )

    def size(self, op: tt.SizeOp) -> str:
        index_type = tl_type(op.result.type)
        expr = op.expr.data
        if expr.is_constant:
            return f"tl.full([], {int(expr)}, {index_type})"
        renderer = ExprRenderer(self.symbols, in_kernel=True, index_type=index_type)
        return renderer.render(expr)

    def arange(self, op: tt.ArangeOp) -> str:
        shape = tt.shape_of(op.result.type)
        text = f"tl.arange(0, {self.constexprs[op.block.data]})"
        text += _index_suffix(shape, op.axis)
        element = tt.element_of(op.result.type)
        return text if element == IntegerType(32) else f"{text}.to({tl_type(element)})"

    def constant(self, op: tt.ConstantOp) -> str:
        return constant_text(op.value, op.result.type)

    def full(self, op: tt.FullOp) -> str:
        return (
            f"tl.broadcast_to({self.v(op.input)}, {list(tt.shape_of(op.result.type))})"
        )

    def unary(self, op: tt.UnaryOp) -> str:
        element = tt.element_of(op.result.type)
        return unary_text(op.kind.data, self.v(op.input), element)

    def binary(self, op: tt.BinaryOp) -> str:
        element = tt.element_of(op.result.type)
        return binary_text(op.kind.data, self.v(op.lhs), self.v(op.rhs), element)

    def compare(self, op: tt.CompareOp) -> str:
        element = tt.element_of(op.lhs.type)
        return compare_text(op.kind.data, self.v(op.lhs), self.v(op.rhs), element)

    def where(self, op: tt.WhereOp) -> str:
        return f"tl.where({self.v(op.condition)}, {self.v(op.on_true)}, {self.v(op.on_false)})"

    def cast(self, op: tt.CastOp) -> str:
        return cast_text(
            self.v(op.input),
            tt.element_of(op.input.type),
            tt.element_of(op.result.type),
        )

    def reduce(self, op: tt.ReduceOp) -> str:
        return reduce_text(
            op.kind.data,
            self.v(op.input),
            tt.shape_of(op.input.type),
            tt.element_of(op.input.type),
            op.axis.value.data,
            tt.element_of(op.result.type),
        )

    def dot(self, op: tt.DotOp) -> str:
        return dot_text(
            self.v(op.lhs),
            self.v(op.rhs),
            self.v(op.acc),
            tt.element_of(op.lhs.type),
            tt.element_of(op.acc.type),
        )

    def load(self, op: tt.LoadOp) -> str:
        shape = tt.shape_of(op.result.type)
        offset = self._broadcast_to(op.offset, shape)
        address = f"{self.v(op.pointer)} + {offset}"
        if op.mask is None:
            return f"tl.load({address})"
        return f"tl.load({address}, mask={self._broadcast_to(op.mask, shape)}, other=0)"

    def _store(self, op: tt.StoreOp) -> str:
        operands = [op.value, op.offset, *([] if op.mask is None else [op.mask])]
        shape = tt.broadcast_tile_shapes(*(tt.shape_of(v.type) for v in operands))
        value = self._broadcast_to(op.value, shape)
        address = f"{self.v(op.pointer)} + {self._broadcast_to(op.offset, shape)}"
        if op.mask is None:
            return f"tl.store({address}, {value})"
        return (
            f"tl.store({address}, {value}, mask={self._broadcast_to(op.mask, shape)})"
        )

    def _broadcast_to(self, value: SSAValue, shape: Sequence[int]) -> str:
        """Explicit broadcasting where Triton would not do it itself (a load's
        mask or a store's value wider than its pointer block)."""
        if tt.shape_of(value.type) == tuple(shape):
            return self.v(value)
        return f"tl.broadcast_to({self.v(value)}, {list(shape)})"


_EXPRESSIONS: dict[type[Operation], Callable[[KernelEmitter, Operation], str]] = {
    tt.ProgramIdOp: KernelEmitter.program_id,
    tt.SizeOp: KernelEmitter.size,
    tt.ArangeOp: KernelEmitter.arange,
    tt.ConstantOp: KernelEmitter.constant,
    tt.FullOp: KernelEmitter.full,
    tt.UnaryOp: KernelEmitter.unary,
    tt.BinaryOp: KernelEmitter.binary,
    tt.CompareOp: KernelEmitter.compare,
    tt.WhereOp: KernelEmitter.where,
    tt.CastOp: KernelEmitter.cast,
    tt.ReduceOp: KernelEmitter.reduce,
    tt.DotOp: KernelEmitter.dot,
    tt.LoadOp: KernelEmitter.load,
}  # type: ignore[dict-item]


# --------------------------------------------------------------------------
# Elementwise and reduction spellings
# --------------------------------------------------------------------------
#
# 16-bit floats compute in float32 and round once to their type, which is
# what NumPy (and ml_dtypes for bfloat16) does. It is also what keeps the
# interpreter right: Triton 3.9's interpreter holds bfloat16 blocks as
# their uint16 bits, so it negates, compares and multiplies the bits, and
# it truncates float32 -> bfloat16 instead of rounding to nearest even;
# ``_irc_to_bf16`` rounds with integer arithmetic that both the interpreter
# and the GPU run the same way.


def wide(x: str, element: Attribute) -> str:
    """``x`` as float32 if it is a 16-bit float."""
    return f"{x}.to(tl.float32)" if _is_half(element) else x


def narrow(x: str, element: Attribute) -> str:
    """A float32 ``x`` rounded (to nearest even) to a 16-bit ``element``."""
    if dtype(element).name == "bfloat16":
        return f"_irc_to_bf16({x})"
    if dtype(element).name == "float16":
        return f"{x}.to(tl.float16)"
    return x


def _in_f32(element: Attribute, text: Callable[[str], str], *operands: str) -> str:
    """``text`` applied to the operands, in float32 for 16-bit floats."""
    return narrow(text(*(wide(x, element) for x in operands)), element)


def _float_unary(kind: str, is_f64: bool) -> Callable[[str], str] | None:
    precise: dict[str, Callable[[str], str]] = {
        "neg": lambda x: f"(-{x})",
        "abs": lambda x: f"tl.abs({x})",
        "exp": lambda x: f"tl.exp({x})",
        "log": lambda x: f"tl.log({x})",
        "sin": lambda x: f"tl.sin({x})",
        "cos": lambda x: f"tl.cos({x})",
        "floor": lambda x: f"tl.floor({x})",
        "tanh": lambda x: f"_irc_tanh({x})",
        "erf": lambda x: f"tl.erf({x}.to(tl.float64)).to({x}.dtype)",
    }
    if is_f64:
        precise |= {
            "sqrt": lambda x: f"tl.sqrt({x})",
            "rsqrt": lambda x: f"(1.0 / tl.sqrt({x}))",
            "sigmoid": lambda x: f"(1.0 / (1.0 + tl.exp(-{x})))",
        }
    else:
        precise |= {
            "sqrt": lambda x: f"tl.sqrt_rn({x})",
            "rsqrt": lambda x: f"tl.div_rn(1.0, tl.sqrt_rn({x}))",
            "sigmoid": lambda x: f"tl.div_rn(1.0, 1.0 + tl.exp(-{x}))",
        }
    return precise.get(kind)


def unary_text(kind: str, x: str, element: Attribute) -> str:
    """``loop.unary`` semantics in Triton, for an operand named ``x``."""
    family = _kind(element)
    if family == "f":
        spelling = _float_unary(kind, dtype(element).bits == 64)
        if spelling is not None:
            return _in_f32(element, spelling, x)
    elif kind == "not":
        return f"(~{x})"
    elif kind == "abs" and family == "b":
        return x
    elif family == "i" and kind in ("neg", "abs"):
        return f"(-{x})" if kind == "neg" else f"tl.abs({x})"
    raise EmitError(f"unary {kind!r} on {element} has no Triton spelling")


def binary_text(kind: str, a: str, b: str, element: Attribute) -> str:
    """``loop.binary`` semantics in Triton, for operands ``a`` and ``b``."""
    family = _kind(element)
    if family == "b" and kind in _BOOL_BINARY:
        return f"({a} {_BOOL_BINARY[kind]} {b})"
    if family == "i":
        return _int_binary(kind, a, b, element)
    if family == "f":
        return _float_binary(kind, a, b, element)
    raise EmitError(f"binary {kind!r} on {element} has no Triton spelling")


def _int_binary(kind: str, a: str, b: str, element: Attribute) -> str:
    spellings = {
        "floordiv": f"_irc_floordiv_i({a}, {b})",
        "rem": f"_irc_rem_i({a}, {b})",
        "pow": f"_irc_pow_i({a}, {b}, {dtype(element).bits - 1})",
        "max": f"tl.maximum({a}, {b})",
        "min": f"tl.minimum({a}, {b})",
        **{k: f"({a} {op} {b})" for k, op in {**_ARITHMETIC_KINDS, **_BITWISE}.items()},
    }
    if kind not in spellings:
        raise EmitError(f"binary {kind!r} on {element} has no Triton spelling")
    return spellings[kind]


def _float_binary(kind: str, a: str, b: str, element: Attribute) -> str:
    if kind in ("max", "min"):
        # NumPy's maximum: the first operand when it is NaN or wins, else
        # the second (which decides the sign of a zero result); float16's
        # loop keeps the first on ties.
        order = (">" if kind == "max" else "<") + (
            "=" if dtype(element).name == "float16" else ""
        )
        wa, wb = wide(a, element), wide(b, element)
        return f"tl.where(({wa} {order} {wb}) | ({wa} != {wa}), {a}, {b})"
    if kind in _ARITHMETIC_KINDS:
        operator = _ARITHMETIC_KINDS[kind]
        return _in_f32(element, lambda x, y: f"({x} {operator} {y})", a, b)
    helpers = {
        "div": "_irc_div",
        "floordiv": "_irc_floordiv_f",
        "rem": "_irc_rem_f",
        "pow": "_irc_pow_f",
    }
    if kind not in helpers:
        raise EmitError(f"binary {kind!r} on {element} has no Triton spelling")
    return _in_f32(element, lambda x, y: f"{helpers[kind]}({x}, {y})", a, b)


def compare_text(kind: str, a: str, b: str, element: Attribute) -> str:
    """``loop.cmp`` (NaN compares false, ``ne`` true)."""
    return f"({wide(a, element)} {_COMPARISONS[kind]} {wide(b, element)})"


def cast_text(x: str, source: Attribute, target: Attribute) -> str:
    """NumPy's ``astype``: to bool is ``!= 0``, float to int truncates, and
    16-bit floats convert through float32 (bfloat16 rounded by
    ``_irc_to_bf16``)."""
    if source == target:
        return x
    value = wide(x, source)
    if _kind(target) == "b":
        return f"({value} != 0)"
    if dtype(target).name == "bfloat16":
        if dtype(source).name not in ("float32", "float16"):
            value = f"{value}.to(tl.float32)"
        return narrow(value, target)
    return f"{value}.to({tl_type(target)})"


def reduce_text(
    kind: str,
    x: str,
    shape: Sequence[int],
    element: Attribute,
    axis: int,
    result: Attribute,
) -> str:
    """``loop.reduce`` semantics in Triton (16-bit floats reduced in float32
    and rounded once; the result cast to its type, as Triton widens small
    types)."""
    family = _kind(element)
    x_wide = wide(x, element)
    if kind == "argmax":
        index = f"tl.arange(0, {shape[axis]}){_index_suffix(shape, axis)}"
        found = f"_irc_argmax({x_wide}, {index}, {axis}, {shape[axis]})"
        return f"{found}.to({tl_type(result)})"
    if family == "b":
        any_ = f"(tl.max({x}.to(tl.int32), axis={axis}) > 0)"
        all_ = f"(tl.min({x}.to(tl.int32), axis={axis}) > 0)"
        return {"sum": any_, "max": any_, "prod": all_, "min": all_}[kind]
    if kind == "sum":
        text = f"tl.sum({x_wide}, axis={axis})"
    elif kind == "prod":
        text = f"tl.reduce({x_wide}, {axis}, _irc_mul)"
    elif family == "f":
        text = f"_irc_{kind}_f({x_wide}, {axis})"
    else:
        text = f"tl.{kind}({x}, axis={axis})"
    if _is_half(element):
        return narrow(text, element)
    return f"{text}.to({tl_type(result)})"


def dot_text(
    a: str, b: str, acc: str, element: Attribute, accumulator: Attribute
) -> str:
    """``acc + a @ b`` in the accumulator's type: ``tl.dot`` in IEEE fp32
    (never TF32) for floats it takes, a broadcast product summed over K
    (which both the interpreter and the compiler run) otherwise."""
    names = dtype(element).name, dtype(accumulator).name
    if _kind(element) == "f" and accumulator == element and dtype(element).bits >= 32:
        return f'tl.dot({a}, {b}, {acc}, input_precision="ieee")'
    if names == ("float16", "float32"):
        return f"tl.dot({a}, {b}, {acc})"
    if names == ("bfloat16", "float32"):
        # Products of bf16 values are exact in f32, so this is the same sum;
        # the interpreter cannot multiply bf16 blocks.
        return f'tl.dot({wide(a, element)}, {wide(b, element)}, {acc}, input_precision="ieee")'
    compute = "tl.float32" if _is_half(accumulator) else tl_type(accumulator)
    product = f"{a}[:, :, None].to({compute}) * {b}[None, :, :].to({compute})"
    total = f"({wide(acc, accumulator)} + tl.sum({product}, axis=1))"
    return narrow(total, accumulator) if _is_half(accumulator) else total


# --------------------------------------------------------------------------
# Launchers
# --------------------------------------------------------------------------

#: PyTorch's name of each dtype.
_TORCH_TYPES = {d.name: f"torch.{d.name}" for d in ALL_DTYPES}


def torch_type(element: Attribute) -> str:
    return _TORCH_TYPES[_dtype_name(element)]


def _tuple_text(items: Iterable[str]) -> str:
    """A Python tuple display: ``()``, ``(a,)``, ``(a, b)``."""
    listed = list(items)
    return f"({listed[0]},)" if len(listed) == 1 else f"({', '.join(listed)})"


@dataclass
class _Kernel:
    """What a launcher needs to know of an emitted kernel."""

    op: tt.KernelOp
    python_name: str
    constexprs: dict[str, int]


@dataclass
class _Constants:
    """The module's dense constants, as ``bytes`` literals."""

    entries: list[str] = field(default_factory=list)

    def add(self, op: memory.ConstantOp) -> int:
        array = np.array(op.literal(), order="C")  # rank 0 stays rank 0
        element = memory.buffer_type(op.result).element_type
        shape = tuple(int(d) for d in array.shape)
        self.entries.append(
            f"_irc_constant({array.tobytes()!r}, {torch_type(element)}, {shape!r})"
        )
        return len(self.entries) - 1


#: The alignment of each intermediate in a launcher's workspace, in bytes:
#: what ``cudaMalloc`` gives, so Triton specialises the pointers as aligned
#: (16 bytes is what its vectorised loads need).
WORKSPACE_ALIGNMENT = 256


def _aligned(size: SymExpr) -> SymExpr:
    """``size`` rounded up to a multiple of ``WORKSPACE_ALIGNMENT``."""
    step = WORKSPACE_ALIGNMENT
    return (size + (step - 1)) // step * step


#: CUDA's largest grid: 2**31 - 1 programs along axis 0, 65,535 along 1 and 2.
MAX_GRID = (2**31 - 1, 65535, 65535)


@dataclass(frozen=True)
class _Dim:
    """One dim of one argument, as the launcher binds or checks it."""

    argument: int
    name: str
    axis: int
    expr: SymExpr

    @property
    def is_expression(self) -> bool:
        """Neither static nor a symbol alone (``2*N``): checked once every
        symbol is bound."""
        return bool(self.expr.symbols) and self.expr.symbol_name is None


@dataclass
class LauncherEmitter:
    """Prints one host function as its launcher and the launcher's refusal.

    The launcher binds and checks a call in one expression of plain Python
    (shape unpacking, ``is`` on dtypes, integer comparisons), the per-call
    cost a GPU launch path can afford. When that expression is false it
    calls the refusal function, which checks the same things one at a time
    and raises the ``LaunchError`` naming the argument, axis, symbol, values
    or guard; both are printed from the same dims and guards."""

    function: func.FuncOp
    python_name: str
    refusal_name: str
    kernels: Mapping[str, _Kernel]
    constants: _Constants
    namer: Namer = field(default_factory=Namer)
    values: dict[SSAValue, str] = field(default_factory=dict)
    symbols: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    #: Intermediates in the workspace: buffer -> its offset's Python text.
    slots: dict[SSAValue, str] = field(default_factory=dict)
    #: Symbols the launcher's fast path has bound so far.
    _bound: set[str] = field(default_factory=set)

    def emit(self) -> list[str]:
        self.namer.taken |= _MODULE_NAMES | {
            "tensors",
            "device",
            "grid",
            "refused",
            "workspace",
        }
        dims = self._dims()
        refusal = self._refusal(dims)
        self._emit(f"def {self.python_name}(*tensors):")
        self._emit(
            '    """Checks, binds, allocates and launches (see the comment above)."""'
        )
        self._bind(dims)
        self._plan_workspace()
        for op in self.function.body.block.ops:
            self._host_op(op)
        return [
            *comment_lines(f"host function @{self.function.sym_name.data}"),
            *refusal,
            "",
            "",
            *self.lines,
        ]

    def _emit(self, text: str) -> None:
        self.lines.append(text)

    def _host(self, expr: SymExpr) -> str:
        missing = sorted(expr.symbols - self.symbols.keys())
        if missing:
            raise EmitError(
                f"@{self.function.sym_name.data} uses symbol {missing[0]}, which is not "
                "the whole of any argument's dim, so its value cannot be read off the "
                "shapes"
            )
        return ExprRenderer(self.symbols).render(expr)

    # Arguments -----------------------------------------------------------

    @property
    def _arguments(self) -> Sequence[BlockArgument]:
        return self.function.body.block.args

    def _argument_names(self) -> list[str]:
        """The names messages give the arguments (from the IR's name hints)."""
        return [
            safe_text(a.name_hint or f"arg{i}") for i, a in enumerate(self._arguments)
        ]

    def _dims(self) -> list[_Dim]:
        """Every argument's dims, naming a Python variable for each tensor and
        each symbol (bound by the first dim that is the symbol alone)."""
        dims: list[_Dim] = []
        for index, (arg, name) in enumerate(
            zip(self._arguments, self._argument_names(), strict=True)
        ):
            self.values[arg] = self.namer.fresh("t_", arg.name_hint or f"arg{index}")
            for axis, dim in enumerate(self._argument_buffer(arg, index).dims):
                symbol = dim.symbol_name
                if symbol is not None and symbol not in self.symbols:
                    self.symbols[symbol] = self.namer.fresh("s_", symbol)
                dims.append(_Dim(index, name, axis, dim))
        return dims

    def _argument_buffer(self, arg: SSAValue, index: int) -> BufferType:
        buffer = arg.type
        if not isinstance(buffer, BufferType) or not buffer.is_row_major:
            raise EmitError(
                f"argument {index} of @{self.function.sym_name.data} has type "
                f"{buffer}; launchers take row-major !memory.buffer arguments"
            )
        return buffer

    # The launcher's fast path ----------------------------------------------

    def _bind(self, dims: Sequence[_Dim]) -> None:
        """Unpack the tensors and their shapes into variables (a wrong count
        or rank fails the unpacking), then test everything at once: dtypes,
        each symbol at least 1 (before any dim that may divide by it), the
        other dims, devices, guards."""
        args = self._arguments
        tensors = [self.values[a] for a in args]
        shapes: list[list[str]] = [[] for _ in args]
        symbol_tests: list[str] = []
        dim_tests: list[str] = []
        for dim in dims:
            variable = self._binding_variable(dim)
            if variable is not None:
                symbol_tests.append(f"{variable} >= 1")
            else:
                variable = self.namer.fresh("d_", f"{dim.argument}_{dim.axis}")
                dim_tests.append(f"{variable} == {self._host(dim.expr)}")
            shapes[dim.argument].append(variable)
        tests = [
            f"{tensor}.dtype is {torch_type(self._argument_buffer(arg, i).element_type)}"
            for i, (arg, tensor) in enumerate(zip(args, tensors, strict=True))
        ]
        tests += symbol_tests + dim_tests
        tests += [f"{tensor}.device == device" for tensor in tensors[1:]]
        tests += [self._guard_condition(op) for op in self._guards()]
        self._emit("    try:")
        self._emit(f"        {_tuple_text(tensors)} = tensors")
        for tensor, shape in zip(tensors, shapes, strict=True):
            if shape:
                self._emit(f"        {_tuple_text(shape)} = {tensor}.shape")
            else:
                tests.append(f"{tensor}.dim() == 0")
        device = f"{tensors[0]}.device" if tensors else "_irc_device(tensors)"
        self._emit(f"        device = {device}")
        self._emit(f"        refused = not ({' and '.join(tests) or 'True'})")
        self._emit(
            "    except (TypeError, ValueError, AttributeError, ArithmeticError):"
        )
        self._emit("        refused = True")
        self._emit("    if refused:")
        self._emit(f"        {self.refusal_name}(tensors)")
        for tensor in tensors:
            self._emit(f"    {tensor} = {tensor}.contiguous()")

    def _binding_variable(self, dim: _Dim) -> str | None:
        """The symbol's variable if ``dim`` is the first dim that is that
        symbol alone (it binds the symbol), else None (it is tested)."""
        symbol = dim.expr.symbol_name
        if symbol is None or symbol in self._bound:
            return None
        self._bound.add(symbol)
        return self.symbols[symbol]

    def _guards(self) -> list[sym.GuardOp]:
        guards = [
            op for op in self.function.body.block.ops if isinstance(op, sym.GuardOp)
        ]
        for op in guards:
            if op.fact.fact.op not in _FACT_OPERATORS:
                raise EmitError(f"sym.guard compares with {op.fact.fact.op!r}")
        return guards

    def _guard_condition(self, op: sym.GuardOp) -> str:
        fact = op.fact.fact
        return f"({self._host(fact.lhs)} {fact.op} {self._host(fact.rhs)})"

    # The refusal: the same checks, one at a time -------------------------

    def _refusal(self, dims: Sequence[_Dim]) -> list[str]:
        """``def refuse_<name>(tensors)``: raises the ``LaunchError`` that
        says why the launcher's fast test failed."""
        args = self._arguments
        names = self._argument_names()
        lines = [
            f"def {self.refusal_name}(tensors):",
            f'    """Why {self.python_name} refuses a call: raises its LaunchError."""',
            f"    _irc_count(tensors, {len(args)}, {', '.join(names)!r})",
            "    device = _irc_device(tensors)",
        ]
        for index, (arg, name) in enumerate(zip(args, names, strict=True)):
            buffer = self._argument_buffer(arg, index)
            lines.append(
                f"    {self.values[arg]} = _irc_tensor(tensors, {index}, {name!r}, "
                f"{buffer.rank}, {text_literal(shape_text(buffer.dims))}, "
                f"{torch_type(buffer.element_type)}, device)"
            )
        sources: dict[str, _Dim] = {}
        # Static dims and symbols first: an expression needs its symbols bound.
        lines += [self._check_dim(d, sources) for d in dims if not d.is_expression]
        lines += [self._check_expression(d, sources) for d in dims if d.is_expression]
        for op in self._guards():
            lines += self._check_guard(op)
        lines.append(
            "    raise LaunchError('internal error: the launcher refused a call that "
            "passes every check; please report it')"
        )
        return lines

    def _check_dim(self, dim: _Dim, sources: dict[str, _Dim]) -> str:
        """A static dim's check, a symbol's binding or its cross-check."""
        tensor = self.values[self._arguments[dim.argument]]
        where = f"{tensor}, {dim.name!r}, {dim.axis}"
        if dim.expr.is_constant:
            return f"    _irc_static_dim({where}, {int(dim.expr)})"
        symbol = dim.expr.symbol_name
        assert symbol is not None
        variable = self.symbols[symbol]
        if symbol in sources:
            first = sources[symbol]
            source = f"argument {first.name!r} axis {first.axis}"
            return f"    _irc_same_symbol({where}, {symbol!r}, {variable}, {source!r})"
        sources[symbol] = dim
        return f"    {variable} = _irc_symbol({where}, {symbol!r})"

    def _check_expression(self, dim: _Dim, sources: Mapping[str, _Dim]) -> str:
        tensor = self.values[self._arguments[dim.argument]]
        return (
            f"    _irc_expr_dim({tensor}, {dim.name!r}, {dim.axis}, "
            f"{text_literal(str(dim.expr))}, {self._host(dim.expr)}, "
            f"{self._values(dim.expr.symbols, sources)})"
        )

    def _check_guard(self, op: sym.GuardOp) -> list[str]:
        fact = op.fact.fact
        values = self._values(fact.lhs.symbols | fact.rhs.symbols)
        reason = f": {op.reason.data}" if op.reason is not None else ""
        location = _location_text(op)
        reason += f" (at {location})" if location else ""
        return [
            f"    if not {self._guard_condition(op)}:",
            f"        _irc_guard_failed({text_literal(str(fact))}, {values}, "
            f"{text_literal(reason)})",
        ]

    def _values(
        self, symbols: Iterable[str], sources: Mapping[str, _Dim] | None = None
    ) -> str:
        """A call formatting the symbols' values at run time, with where each
        was read when ``sources`` are given: ``N = 4 (from argument 'x' axis 0)``."""
        triples = []
        for symbol in sorted(symbols):
            source = ""
            if sources is not None:
                first = sources[symbol]
                source = f" (from argument {first.name!r} axis {first.axis})"
            triples.append(
                f"({symbol!r}, {self.symbols[symbol]}, {text_literal(source)})"
            )
        return f"_irc_values({', '.join(triples)})"

    # The workspace -------------------------------------------------------

    def _plan_workspace(self) -> None:
        """One allocation per call for every intermediate (an allocated
        buffer that is not returned, and the buffers that reuse its
        storage), each at an offset aligned to ``WORKSPACE_ALIGNMENT``
        bytes: one ``torch.empty`` instead of one per intermediate, which on
        a GPU is most of a launcher's own time. The workspace is the sum of
        the intermediates' sizes; storage the memory level shares
        (``memory.reuse``) is counted once."""
        ops = list(self.function.body.block.ops)
        returned = {
            self._storage(v)
            for op in ops
            if isinstance(op, func.ReturnOp)
            for v in op.arguments
        }
        size_text: str | None = None  # the workspace's size so far, as Python
        for op in ops:
            if isinstance(op, memory.ReuseOp) and op.source in self.slots:
                self.slots[op.result] = self.slots[op.source]
                continue
            if not isinstance(op, memory.AllocOp) or op.result in returned:
                continue
            buffer = memory.buffer_type(op.result)
            if not buffer.is_row_major:
                continue  # allocated on its own, with its strides
            offset = "0"
            if size_text is not None:
                offset = self.namer.fresh("o_", str(len(self.slots)))
                self._emit(f"    {offset} = {size_text}")
            self.slots[op.result] = offset
            itemsize = dtype(buffer.element_type).numpy.itemsize
            size = self._host(_aligned(buffer.numel * itemsize))
            size_text = size if offset == "0" else f"{offset} + {size}"
        if size_text is not None:
            self._emit(
                f"    workspace = torch.empty({size_text}, dtype=torch.uint8, "
                "device=device)"
            )

    def _storage(self, value: SSAValue) -> SSAValue:
        """The buffer whose storage ``value`` is (through ``memory.reuse``)."""
        while isinstance(value.owner, memory.ReuseOp):
            value = value.owner.source
        return value

    # Host ops ------------------------------------------------------------

    def _host_op(self, op: Operation) -> None:
        if isinstance(op, sym.GuardOp):
            return  # checked up front
        if isinstance(op, memory.AllocOp | memory.ReuseOp) and op.result in self.slots:
            buffer = memory.buffer_type(op.result)
            shape, strides = self._layout(buffer)
            element = torch_type(buffer.element_type)
            self._assign(
                op.result,
                f"_irc_slice(workspace, {self.slots[op.result]}, {element}, {shape}, "
                f"{strides})",
            )
        elif isinstance(op, memory.AllocOp):
            self._assign(op.result, self._allocation(memory.buffer_type(op.result)))
        elif isinstance(op, memory.ReuseOp):
            buffer = memory.buffer_type(op.result)
            shape, strides = self._layout(buffer)
            self._assign(
                op.result, f"{self.values[op.source]}.as_strided({shape}, {strides})"
            )
        elif isinstance(op, memory.DeallocOp):
            self._emit(f"    del {self.values[op.buffer]}")
        elif isinstance(op, memory.ConstantOp):
            index = self.constants.add(op)
            self._assign(op.result, f"_IRC_CONSTANTS[{index}].to(device, copy=True)")
        elif isinstance(op, memory.LaunchOp):
            self._launch(op)
        elif isinstance(op, func.ReturnOp):
            self._emit(f"    return {_tuple_text(self._results(op.arguments))}")
        else:
            raise EmitError(
                f"{op.name} in host function @{self.function.sym_name.data} has no "
                "launcher spelling; host functions hold memory ops and launches"
            )

    def _results(self, values: Sequence[SSAValue]) -> list[str]:
        """The returned values: results never alias the caller's arguments
        nor one another, as the reference backend's do not."""
        names: list[str] = []
        for value in values:
            name = self.values[value]
            aliased = isinstance(value, BlockArgument) or name in names
            names.append(f"{name}.clone()" if aliased else name)
        return names

    def _assign(self, value: SSAValue, expression: str) -> None:
        name = self.namer.fresh(
            "v_" if value.name_hint else "v", value.name_hint or str(len(self.values))
        )
        self.values[value] = name
        self._emit(f"    {name} = {expression}")

    def _layout(self, buffer: BufferType) -> tuple[str, str]:
        """The shape and strides of ``buffer`` as Python tuples."""
        shape = _tuple_text(self._host(d) for d in buffer.dims)
        return shape, _tuple_text(self._host(s) for s in buffer.strides)

    def _allocation(self, buffer: BufferType) -> str:
        shape, strides = self._layout(buffer)
        element = torch_type(buffer.element_type)
        return (
            f"torch.empty_strided({shape}, {strides}, dtype={element}, device=device)"
        )

    def _launch(self, op: memory.LaunchOp) -> None:
        kernel = self.kernels.get(op.kernel_name)
        if kernel is None:
            raise EmitError(
                f"memory.launch @{op.kernel_name} in @{self.function.sym_name.data} "
                "launches no triton.kernel of the module"
            )
        grid = [*kernel.op.grid_exprs, *[SymExpr.const(1)] * 3][:3]
        args = [self.values[a] for a in op.args]
        args += [self._host(SymExpr.symbol(s)) for s in kernel.op.symbol_names]
        args += [f"{name}={value}" for name, value in kernel.constexprs.items()]
        args.append("enable_fp_fusion=False")
        launch = f"{kernel.python_name}[grid]({', '.join(args)})"
        checks = self._grid_checks(op.kernel_name, grid)
        if checks is None:
            self._emit(
                f"    # @{safe_text(op.kernel_name)}: its grid is empty, nothing to launch"
            )
            return
        self._emit(f"    grid = ({', '.join(self._host(g) for g in grid)})")
        if not checks:
            self._emit(f"    {launch}")
            return
        self._emit(f"    if {' and '.join(checks)}:")
        self._emit(f"        {launch}")
        self._emit("    else:")
        self._emit(f"        _irc_check_grid({op.kernel_name!r}, grid, {MAX_GRID!r})")

    def _grid_checks(self, kernel: str, grid: Sequence[SymExpr]) -> list[str] | None:
        """The run-time tests that ``grid`` is within CUDA's limits and not
        empty (``0 < grid[i] <= limit``) for its symbolic axes, or None for a
        grid that is empty whatever the sizes; an axis beyond the limits
        whatever the sizes is an ``EmitError``."""
        checks: list[str] = []
        for axis, (extent, limit) in enumerate(zip(grid, MAX_GRID, strict=True)):
            if not extent.is_constant:
                checks.append(f"0 < grid[{axis}] <= {limit}")
            elif int(extent) > limit:
                raise EmitError(
                    f"@{kernel}'s grid has {int(extent)} programs along axis {axis}, "
                    f"more than CUDA's limit of {limit}"
                )
            elif int(extent) <= 0:
                return None
        return checks


# --------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------


def emit_module(module: ModuleOp) -> str:
    """The Python source of ``module`` (a verified triton-level module)."""
    namer = Namer(set(_MODULE_NAMES))
    sections: list[list[str]] = [[HEADER.rstrip("\n")], [PRELUDE.rstrip("\n")]]
    kernels: dict[str, _Kernel] = {}
    table: list[str] = []
    for op in module.ops:
        if isinstance(op, tt.KernelOp):
            python_name = namer.fresh("kernel_", op.kernel_name)
            emitter = KernelEmitter(op, python_name)
            sections.append(emitter.emit())
            constexprs = emitter.constexpr_values()
            kernels[op.kernel_name] = _Kernel(op, python_name, constexprs)
            table.append(
                f"    {python_name!r}: ({python_name}, {emitter.signature!r}, {constexprs!r}),"
            )
        elif isinstance(op, memory.KernelOp):
            raise EmitError(
                f"memory.kernel @{op.kernel_name} is still at the memory level; run "
                "lower-memory-to-triton first"
            )
    constants = _Constants()
    launchers: list[str] = []
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            python_name = namer.fresh("launch_", op.sym_name.data)
            refusal_name = namer.fresh("refuse_", op.sym_name.data)
            emitter = LauncherEmitter(op, python_name, refusal_name, kernels, constants)
            sections.append(emitter.emit())
            launchers.append(python_name)
    sections.append(
        ["_IRC_CONSTANTS = (", *(f"    {c}," for c in constants.entries), ")"]
    )
    sections.append(["KERNELS = {", *table, "}"])
    sections.append([f"ENTRY = {launchers[0]!r}" if launchers else "ENTRY = None"])
    code = "\n\n\n".join("\n".join(section) for section in sections[2:])
    sections[1] = [_used_prelude(code)]
    return "\n\n\n".join("\n".join(section) for section in sections) + "\n"


def _used_prelude(code: str) -> str:
    """The prelude's definitions that ``code`` uses, directly or through
    one another, in prelude order: a module carries no unused helper."""
    blocks = PRELUDE.rstrip("\n").split("\n\n\n")
    defined = [
        [name for pair in _DEFINITION.findall(block) for name in pair if name]
        for block in blocks
    ]
    used: set[int] = set()
    pending = [code]
    while pending:
        text = pending.pop()
        for index, names in enumerate(defined):
            if index not in used and any(re.search(rf"\b{n}\b", text) for n in names):
                used.add(index)
                pending.append(blocks[index])
    return "\n\n\n".join(block for index, block in enumerate(blocks) if index in used)


#: A top-level definition in the prelude: a class, a function or a constant.
_DEFINITION = re.compile(r"^(?:class |def )(\w+)|^(\w+) =", re.MULTILINE)
