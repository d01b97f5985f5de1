"""The launcher printer: one host function as ``launch_<name>`` and its
admission ``admit_<name>``.

A host function at the triton level is a schedule of memory ops
(``memory.alloc``, ``memory.reuse``, ``memory.dealloc``, ``memory.constant``,
``sym.guard``, ``memory.launch``) ending in ``func.return``.
``LauncherEmitter`` prints ``def launch_<name>(*tensors)``: it unpacks the
tensors and their shapes and tests the whole call in one plain-Python
expression (count, rank, dtype, device; every symbol bound from the shapes
and at least 1, a dim named twice equal, an expression dim equal to its
value, the guards; each tensor contiguous), makes the inputs' device Triton's
current one when it is not (``_IrcOnDevice``: one comparison of devices per
call, skipped by the interpreter), allocates the outputs on the
inputs' device (with ``_irc_allocate``: ``torch.empty_strided``, whose
failure names the buffer) and every intermediate in one workspace (its
address, an ``int``, for compiled kernels, a view for the interpreter;
``memory.reuse`` takes its source's place, ``memory.dealloc`` is a ``del``),
copies the dense constants there, computes each distinct grid once and tests
it against CUDA's limits before any kernel runs, launches each kernel with
``kernel.run`` over its grid (nothing for an empty grid) and returns a tuple
of tensors. Host control flow (``scf.if``, ``scf.while``, ``scf.for`` over
buffers, from ``irc.lowering.host_control_flow``) becomes Python ``if``,
``while True: ... break`` and ``for ... in range(...)``, each commented with
where its decision runs: a ``memory.read_scalar`` is ``.item()``, the one
device->host read of a decision; the buffers such ops touch are tensors of
their own, outside the workspace. When the test fails the launcher runs
again on ``admit_<name>(tensors)``, which checks one thing at a time and
raises the module's ``LaunchError`` (a ``ValueError``) naming the argument,
axis, symbol and values, or the guard, its symbols' values and the
compiler's reason for it, or, when the only fault is a strided view the
kernels cannot index, returns the tensors made contiguous (copies, each
sized first, refused with the module's ``AllocationFailed`` when it cannot
fit, and logged by logger ``irc.launch``). The
checks and messages are the prelude's ``_irc_*`` host helpers, called by
name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from irc.backend.triton.errors import EmitError
from irc.backend.triton.expressions import ExprRenderer
from irc.backend.triton.kernel import launch_tile_extents
from irc.backend.triton.names import (
    MODULE_NAMES,
    Namer,
    comment_lines,
    safe_text,
    text_literal,
)
from irc.backend.triton.typenames import host_torch_type, torch_type
from irc.dialects import collective, debug, memory, sym
from irc.dialects import triton as tt
from irc.dialects.kernel_kind import (
    ATTENTION,
    MATMUL,
    MIN_LAUNCH_TILE,
    NUM_STAGES_ATTRIBUTE,
    NUM_WARPS_ATTRIBUTE,
    kernel_kind,
)
from irc.dialects.memory import BufferType
from irc.dialects.sym import shape_text
from irc.dtypes import dtype
from irc.shapes import Facts, SymExpr
from irc.source_locations import source_location

_FACT_OPERATORS = frozenset({"==", "<", "<=", ">", ">="})


def _tuple_text(items: Iterable[str]) -> str:
    """A Python tuple display: ``()``, ``(a,)``, ``(a, b)``."""
    listed = list(items)
    return f"({listed[0]},)" if len(listed) == 1 else f"({', '.join(listed)})"


@dataclass
class EmittedKernel:
    """What a launcher needs to know of an emitted kernel."""

    op: tt.KernelOp
    python_name: str
    constexprs: dict[str, int]
    #: A digest of the kernel's code (its comments aside: they name source
    #: lines) and its ``tuning_fields``, naming it in the tuning directory.
    digest: str = ""

    def constexpr_of(self, tile: str) -> str:
        """The name of the constexpr that holds ``tile``'s size."""
        names = dict(zip(self.op.tile_sizes, self.constexprs, strict=True))
        return names[tile]


#: What Triton's CUDA backend launches with when a launch passes no such
#: option (``triton.backends.nvidia.compiler.CUDAOptions``): a kernel
#: without the attribute is launched with these, unless a measurement chose
#: others.
TRITON_CUDA_DEFAULTS = {NUM_WARPS_ATTRIBUTE: 4, NUM_STAGES_ATTRIBUTE: 3}

#: The kinds whose stages a measurement tries: those whose loop of loads
#: Triton pipelines (a matmul's or attention's K loop).
_PIPELINED_KINDS = frozenset({MATMUL, ATTENTION})


def _launch_option(kernel: tt.KernelOp, name: str) -> int | None:
    """The kernel's launch attribute ``name`` (``irc.dialects.kernel_kind``),
    if it has it."""
    value = kernel.attributes.get(name)
    if value is None:
        return None
    if not isinstance(value, IntegerAttr) or value.value.data < 1:
        raise EmitError(
            f"triton.kernel @{kernel.kernel_name} has {name} = {value}; it must "
            "be a positive integer"
        )
    return value.value.data


#: The options of every launch besides its configuration: no FMA
#: contraction (NumPy rounds each operation). The prelude's
#: ``_IrcTuner.launch`` passes the same.
LAUNCH_OPTIONS = ("enable_fp_fusion=False",)


def _launch_symbols(kernel: EmittedKernel) -> set[str]:
    """Every symbol a launch's configuration depends on: the kernel's own,
    its grid's and its chosen tiles' extents'."""
    symbols = set(kernel.op.symbol_names)
    for extent in (*kernel.op.grid_exprs, *launch_tile_extents(kernel.op).values()):
        symbols |= set(extent.symbols)
    return symbols


def _tuning_symbols(kernel: EmittedKernel) -> list[str]:
    """The symbols whose buckets follow a launch's chosen tiles' extents in
    its key, in order of name: ``_launch_symbols`` but an extent that is a
    symbol alone (its bucket comes first, where the cost model reads it)."""
    extents = launch_tile_extents(kernel.op).values()
    alone = {e.symbol_name for e in extents if e.symbol_name}
    return sorted(_launch_symbols(kernel) - alone)


def tuning_fields(kernel: EmittedKernel) -> tuple[object, ...]:
    """What the prelude's ``_IrcTuner`` knows of the kernel besides its
    digest: the (smallest, largest) sizes of each tile its launch chooses,
    its declared warps (None for a kernel with a chosen tile and no declared
    warps: they follow the tile), its declared stages, whether a
    measurement tries other stages, and the names of the chosen tiles'
    constexprs."""
    op = kernel.op
    sizes = op.tile_sizes
    chosen = launch_tile_extents(op)
    tiles = tuple((min(MIN_LAUNCH_TILE, sizes[tile]), sizes[tile]) for tile in chosen)
    warps = _launch_option(op, NUM_WARPS_ATTRIBUTE)
    if warps is None and not tiles:
        warps = TRITON_CUDA_DEFAULTS[NUM_WARPS_ATTRIBUTE]
    stages = _launch_option(op, NUM_STAGES_ATTRIBUTE)
    if stages is None:
        stages = TRITON_CUDA_DEFAULTS[NUM_STAGES_ATTRIBUTE]
    pipelined = kernel_kind(op.kind.data) in _PIPELINED_KINDS
    constexprs = tuple(kernel.constexpr_of(tile) for tile in chosen)
    return tiles, warps, stages, pipelined, constexprs


def tuning_spec(kernel: EmittedKernel) -> str:
    """The kernel's entry of the emitted ``_IRC_TUNING``: its digest, then
    ``tuning_fields``."""
    return repr((kernel.digest, *tuning_fields(kernel)))


@dataclass
class Constants:
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

#: What the launcher may assume of every symbol: it is a size, at least 1
#: (checked before any grid is computed).
_SIZES = Facts()


def _check_static_limits(kernel: str, grid: Sequence[SymExpr]) -> None:
    """An axis of ``grid`` beyond CUDA's limits whatever the sizes is an
    ``EmitError``."""
    for axis, (extent, limit) in enumerate(zip(grid, MAX_GRID, strict=True)):
        if extent.is_constant and int(extent) > limit:
            raise EmitError(
                f"@{kernel}'s grid has {int(extent)} programs along axis {axis}, "
                f"more than CUDA's limit of {limit}"
            )


def _unproven_limits(grid: Sequence[SymExpr]) -> dict[int, int]:
    """The axes of ``grid`` that the sizes' facts do not prove within CUDA's
    limits, each with its limit: what a launcher must test per call."""
    return {
        axis: limit
        for axis, (extent, limit) in enumerate(zip(grid, MAX_GRID, strict=True))
        if not _SIZES.prove_le(extent, limit)
    }


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


def _device_loop_note(kernel: tt.KernelOp) -> str | None:
    """What a kernel's reason says of the loop it runs inside (a device
    loop: ``irc.lowering.fusion_to_loop.device_loop``), if it does."""
    notes = [n for n in kernel.reason.data.split("; ") if n.startswith("device loop:")]
    return safe_text(notes[0].removeprefix("device loop: ")) if notes else None


@dataclass
class LauncherEmitter:
    """Prints one host function as its launcher and the launcher's admission.

    The launcher binds and checks a call in one expression of plain Python
    (shape unpacking, ``is`` on dtypes, integer comparisons), the per-call
    cost a GPU launch path can afford. When that expression is false it
    runs again on what the admission function gives: it checks the same
    things one at a time and raises the ``LaunchError`` naming the argument,
    axis, symbol, values or guard, or gives the tensors made contiguous when
    that is all they lack; both are printed from the same dims and
    guards."""

    function: func.FuncOp
    python_name: str
    admission_name: str
    kernels: Mapping[str, EmittedKernel]
    constants: Constants
    namer: Namer = field(default_factory=Namer)
    values: dict[SSAValue, str] = field(default_factory=dict)
    symbols: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    #: Intermediates in the workspace: buffer -> its offset's Python text.
    slots: dict[SSAValue, str] = field(default_factory=dict)
    #: Symbols the launcher's fast path has bound so far.
    _bound: set[str] = field(default_factory=set)
    #: How deep in host control flow the lines being emitted are.
    _depth: int = 0
    #: The collectives in flight: the buffer each writes, its handle's name.
    pending: list[tuple[SSAValue, str]] = field(default_factory=list)
    #: Each distinct grid of the launches -> its variable.
    grids: dict[tuple[SymExpr, ...], str] = field(default_factory=dict)
    #: Each symbol's bucket's name (``_plan_buckets``).
    buckets: dict[str, str] = field(default_factory=dict)
    #: The grids tested against CUDA's limits before any launch.
    _checked_grids: set[str] = field(default_factory=set)

    def emit(self) -> list[str]:
        self.namer.taken |= MODULE_NAMES | {
            "tensors",
            "device",
            "refused",
            "workspace",
            "address",
        }
        dims = self._dims()
        admission = self._admission(dims)
        self._emit(f"def {self.python_name}(*tensors):")
        self._emit(
            '    """Checks, binds, allocates and launches (see the comment above)."""'
        )
        self._bind(dims)
        self._plan_grids()
        self._plan_buckets()
        self._plan_workspace()
        for op in self.function.body.block.ops:
            self._host_op(op)
        return [
            *comment_lines(f"host function @{self.function.sym_name.data}"),
            *admission,
            "",
            "",
            *self.lines,
        ]

    def _emit(self, text: str) -> None:
        self.lines.append("    " * self._depth + text)

    def _host(self, expr: SymExpr) -> str:
        self._require_bound(expr.symbols)
        return ExprRenderer(self.symbols).render(expr)

    def _require_bound(self, symbols: Iterable[str]) -> None:
        """An ``EmitError`` for the first of ``symbols`` no argument binds."""
        missing = sorted(set(symbols) - self.symbols.keys())
        if missing:
            raise EmitError(
                f"@{self.function.sym_name.data} uses symbol {missing[0]}, which is not "
                "the whole of any argument's dim, so its value cannot be read off the "
                "shapes"
            )

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
        other dims, devices, guards. A shape without symbols is compared
        whole (``t.shape == (16, 64)``, ``t.shape == ()``: one comparison,
        no variables)."""
        args = self._arguments
        tensors = [self.values[a] for a in args]
        shapes: list[list[str]] = [[] for _ in args]
        static = self._static_shapes()
        symbol_tests: list[str] = []
        dim_tests = [f"{tensors[i]}.shape == {shape}" for i, shape in static.items()]
        for dim in dims:
            if dim.argument in static:
                continue
            variable = self._binding_variable(dim)
            if variable is not None:
                symbol_tests.append(f"{variable} >= 1")
            else:
                variable = self.namer.fresh("d_", f"{dim.argument}_{dim.axis}")
                dim_tests.append(f"{variable} == {self._host(dim.expr)}")
            shapes[dim.argument].append(variable)
        tests = [
            f"{tensor}.dtype is "
            f"{host_torch_type(self._argument_buffer(arg, i).element_type)}"
            for i, (arg, tensor) in enumerate(zip(args, tensors, strict=True))
        ]
        tests += symbol_tests + dim_tests
        tests += [f"{tensor}.device == device" for tensor in tensors[1:]]
        tests += [self._guard_condition(op) for op in self._guards()]
        # False for a strided view the kernels cannot index, and for a sparse
        # tensor (another layout may raise RuntimeError): the admission
        # copies the first and refuses the others.
        tests += [f"{tensor}.is_contiguous()" for tensor in tensors]
        self._emit("    try:")
        self._emit(f"        {_tuple_text(tensors)} = tensors")
        for tensor, shape in zip(tensors, shapes, strict=True):
            if shape:
                self._emit(f"        {_tuple_text(shape)} = {tensor}.shape")
        device = f"{tensors[0]}.device" if tensors else "_irc_device(tensors)"
        self._emit(f"        device = {device}")
        self._emit(f"        refused = not ({' and '.join(tests) or 'True'})")
        self._emit(
            "    except (TypeError, ValueError, AttributeError, ArithmeticError, "
            "RuntimeError):"
        )
        self._emit("        refused = True")
        self._emit("    if refused:")
        self._emit(
            f"        return {self.python_name}(*{self.admission_name}(tensors))"
        )
        if tensors:
            self._device_guard()

    def _device_guard(self) -> None:
        """Launch on the inputs' device whatever device is current: Triton
        launches on its driver's current device, so inputs elsewhere (on
        ``cuda:1`` while ``cuda:0`` is current) make that device current for
        the call (``_IrcOnDevice``) and the launcher runs again there. The
        test is one comparison of devices per call; the interpreter, whose
        tensors are on the CPU, skips it."""
        self._emit("    if not _IRC_INTERPRETED and device != _irc_launch_device():")
        self._emit("        with _IrcOnDevice(device):")
        self._emit(f"            return {self.python_name}(*tensors)")

    def _static_shapes(self) -> dict[int, str]:
        """The shape, as a Python tuple, of each argument whose every dim is
        static (rank 0 included), by the argument's index."""
        shapes = {}
        for index, arg in enumerate(self._arguments):
            buffer = self._argument_buffer(arg, index)
            if all(d.is_constant for d in buffer.dims):
                shapes[index] = _tuple_text(str(int(d)) for d in buffer.dims)
        return shapes

    def _binding_variable(self, dim: _Dim) -> str | None:
        """The symbol's variable if ``dim`` is the first dim that is that
        symbol alone (it binds the symbol), else None (it is tested)."""
        symbol = dim.expr.symbol_name
        if symbol is None or symbol in self._bound:
            return None
        self._bound.add(symbol)
        return self.symbols[symbol]

    def _guards(self) -> list[sym.GuardOp]:
        # Guards in host regions state facts of the symbols too: checked up
        # front with the others.
        guards = [op for op in self.function.walk() if isinstance(op, sym.GuardOp)]
        for op in guards:
            if op.fact.fact.op not in _FACT_OPERATORS:
                raise EmitError(f"sym.guard compares with {op.fact.fact.op!r}")
        return guards

    def _guard_condition(self, op: sym.GuardOp) -> str:
        fact = op.fact.fact
        return f"({self._host(fact.lhs)} {fact.op} {self._host(fact.rhs)})"

    # The admission: the same checks, one at a time ------------------------

    def _admission(self, dims: Sequence[_Dim]) -> list[str]:
        """``def admit_<name>(tensors)``: raises the ``LaunchError`` that
        says why the launcher's fast test failed, or returns the tensors made
        contiguous when the test failed for that alone."""
        args = self._arguments
        names = self._argument_names()
        lines = [
            f"def {self.admission_name}(tensors):",
            f'    """Why {self.python_name} refused a call: raises its LaunchError, or '
            'returns\n    the tensors made contiguous if that is all they lack."""',
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
        lines.append("    return _irc_contiguous(tensors)")
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
        location = source_location(op)
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
        self._require_bound(symbols := sorted(symbols))
        triples = []
        for symbol in symbols:
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
        } | self._host_touched()
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
            what = text_literal("the workspace of the intermediate buffers")
            self._emit(
                f"    workspace = _irc_allocate({what}, ({size_text},), (1,), "
                "_IRC_UINT8, device)"
            )
            self._emit("    address = workspace.data_ptr()")

    def _host_touched(self) -> set[SSAValue]:
        """The buffers host control flow reads, writes, views or carries
        (a decision's predicate, an index, a copy, a row, a loop's carries),
        those debug ops show and those collectives communicate:
        they are tensors of their own, which the host can touch directly,
        where a compiled kernel's workspace slice is only an address."""
        return {
            self._storage(operand)
            for op in self.function.walk()
            if isinstance(
                op,
                (
                    *memory.HOST_TRANSFER_OPS,
                    *debug.DEBUG_OPS,
                    *collective.COLLECTIVE_OPS,
                    scf.WhileOp,
                    scf.ForOp,
                ),
            )
            for operand in op.operands
            if isinstance(operand.type, BufferType)
        }

    def _storage(self, value: SSAValue) -> SSAValue:
        """The buffer whose storage ``value`` is (through ``memory.reuse``)."""
        while isinstance(value.owner, memory.ReuseOp):
            value = value.owner.source
        return value

    # Host ops ------------------------------------------------------------

    def _host_op(self, op: Operation) -> None:
        self._await_used(op)
        if isinstance(op, sym.GuardOp):
            return  # checked up front
        if isinstance(op, memory.AllocOp | memory.ReuseOp) and op.result in self.slots:
            self._assign(op.result, self._slice(op.result))
        elif isinstance(op, memory.AllocOp):
            self._assign(op.result, self._allocation(op.result))
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
        elif isinstance(op, debug.DEBUG_OPS):
            self._debug(op)
        elif isinstance(op, collective.CollectiveOp):
            self._collective(op)
        elif isinstance(op, func.ReturnOp):
            self._await_all(0)
            self._emit(f"    return {_tuple_text(self._results(op.arguments))}")
        elif not self._control_flow_op(op):
            raise EmitError(
                f"{op.name} in host function @{self.function.sym_name.data} has no "
                "launcher spelling; host functions hold memory ops and launches"
            )

    def _debug(self, op: debug.DebugOp) -> None:
        """A debug op as a call of the prelude's ``_irc_debug`` between the
        launches (its strings as ``ascii`` literals: exact, and no IR text
        can end them)."""
        kind, text = op.action
        names = _tuple_text(ascii(name) for name in op.keywords)
        values = _tuple_text(self.values[v] for v in op.values)
        self._emit(
            f"    _irc_debug({kind!a}, {text!a}, {names}, {op.is_backward}, {values})"
        )

    def _collective(self, op: collective.CollectiveOp) -> None:
        """A collective as a call of the prelude's ``_irc_collective``, which
        starts it (``torch.distributed``, asynchronous where torch is); its
        result is waited for where it is first used (``_await_used``). Its
        parameters, mesh and axes are ``ascii`` literals: no IR text can
        end them."""
        kind = op.name.removeprefix("collective.")
        source = op.input_value
        handle = self.namer.fresh("h_", kind)
        self._emit(
            f"    {handle} = _irc_collective({kind!a}, {op.parameters()!a}, "
            f"{op.mesh.shape!a}, {op.mesh.names!a}, {op.axis_names!a}, "
            f"{'None' if source is None else self.values[source]}, "
            f"{self.values[op.produced]})"
        )
        self.pending.append((op.produced, handle))

    def _await_used(self, op: Operation) -> None:
        """Wait for the collectives in flight whose results ``op`` (or an op
        in its regions) reads."""
        if not self.pending:
            return
        used = {operand for inner in op.walk() for operand in inner.operands}
        for value, handle in list(self.pending):
            if self._storage(value) in {self._storage(u) for u in used}:
                self._emit(f"    {handle}.wait()")
                self.pending.remove((value, handle))

    def _await_all(self, since: int) -> None:
        """Wait for the collectives started since ``since`` pending ones
        (at the end of a region, or of the function)."""
        while len(self.pending) > since:
            _, handle = self.pending.pop(since)
            self._emit(f"    {handle}.wait()")

    def _slice(self, value: SSAValue) -> str:
        """The intermediate ``value`` in the workspace: a tensor view for the
        interpreter, else its address, an ``int``, which the kernel's
        parameter annotation types for Triton (no object per intermediate
        and per call)."""
        buffer = memory.buffer_type(value)
        shape, strides = self._layout(buffer)
        element = torch_type(buffer.element_type)
        offset = self.slots[value]
        address = "address" if offset == "0" else f"address + {offset}"
        return (
            f"_irc_view(workspace, {offset}, {element}, {shape}, {strides}) "
            f"if _IRC_INTERPRETED else {address}"
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

    def _allocation(self, value: SSAValue) -> str:
        """``value``'s buffer allocated on its own (an output, or a buffer
        the workspace does not hold)."""
        shape, strides = self._layout(memory.buffer_type(value))
        element = host_torch_type(memory.buffer_type(value).element_type)
        what = f"buffer {value.name_hint!r}" if value.name_hint else "an unnamed buffer"
        return (
            f"_irc_allocate({text_literal(what)}, {shape}, {strides}, {element}, "
            "device)"
        )

    def _launch(self, op: memory.LaunchOp) -> None:
        """``kernel.run(..., grid=grid_0, warmup=False)``: what
        ``kernel[grid](...)`` calls, without the closure it makes per launch,
        configured as ``_launch_configured`` says. A launch whose grid may be
        empty is tested (nothing to launch), and so is one in host control
        flow whose grid was not checked up front."""
        kernel = self._kernel(op)
        device_loop = _device_loop_note(kernel.op)
        if device_loop is not None:
            self._emit(f"    # loop on the device, no host decision: {device_loop}")
        extents = self._grid(kernel)
        grid = self.grids.get(extents)
        if grid is None:
            self._emit(
                f"    # @{safe_text(op.kernel_name)}: its grid is empty, nothing to launch"
            )
            return
        args = [self.values[a] for a in op.args]
        args += [self._host(SymExpr.symbol(s)) for s in kernel.op.symbol_names]
        tests, limited = self._grid_tests(grid, extents)
        if not tests:
            self._launch_configured(kernel, args, grid)
            return
        self._emit(f"    if {' and '.join(tests)}:")
        self._depth += 1
        self._launch_configured(kernel, args, grid)
        self._depth -= 1
        if limited:
            self._emit("    else:")
            self._emit(
                f"        _irc_check_grid({op.kernel_name!r}, {grid}, {MAX_GRID!r})"
            )

    def _plan_buckets(self) -> None:
        """Name the bucket of each symbol a launch's configuration depends
        on, once a call (``_irc_bucket``): what ``_tuning_key`` reads."""
        symbols: set[str] = set()
        for op in self.function.walk():
            if isinstance(op, memory.LaunchOp):
                kernel = self._kernel(op)
                if self._grid(kernel) in self.grids:
                    symbols |= _launch_symbols(kernel)
        for symbol in sorted(symbols):
            name = self.namer.fresh("b_", symbol)
            self.buckets[symbol] = name
            self._emit(
                f"    {name} = _irc_bucket({self._host(SymExpr.symbol(symbol))})"
            )

    def _tuning_key(self, kernel: EmittedKernel) -> str:
        """The tuple a launch's configuration is decided and read per: the
        kernel, the buckets of the extents of the tiles its launch chooses
        (the cost model reads them), then of its other symbols."""
        buckets = [
            self.buckets[e.symbol_name]
            if e.symbol_name
            else f"_irc_bucket({self._host(e)})"
            for e in launch_tile_extents(kernel.op).values()
        ]
        buckets += [self.buckets[s] for s in _tuning_symbols(kernel)]
        return _tuple_text([repr(kernel.python_name), *buckets])

    def _launch_configured(
        self, kernel: EmittedKernel, args: list[str], grid: str
    ) -> None:
        """The launch in the configuration the prelude's ``_IrcTuner``
        decided for its key (``_tuning_key``): the chosen tiles' sizes, then
        warps and stages, read from ``_IRC_CHOSEN``. A key not decided yet
        launches through the tuner, which may time the launch."""
        key = self._tuning_key(kernel)
        config = self.namer.fresh("config_", kernel.op.kernel_name)
        self._emit(f"    {config} = _IRC_CHOSEN.get({key})")
        self._emit(f"    if {config} is None:")
        self._emit(
            f"        _IRC_TUNER.launch({key}, {kernel.python_name}, "
            f"{_tuple_text(args)}, {grid})"
        )
        self._emit("    else:")
        tiles = launch_tile_extents(kernel.op)
        chosen = [
            f"{kernel.constexpr_of(tile)}={config}[{index}]"
            for index, tile in enumerate(tiles)
        ]
        chosen.append(f"num_warps={config}[{len(tiles)}]")
        chosen.append(f"num_stages={config}[{len(tiles) + 1}]")
        run = [*args, f"grid={grid}", "warmup=False", *chosen, *LAUNCH_OPTIONS]
        self._emit(f"        {kernel.python_name}.run({', '.join(run)})")

    def _kernel(self, op: memory.LaunchOp) -> EmittedKernel:
        kernel = self.kernels.get(op.kernel_name)
        if kernel is None:
            raise EmitError(
                f"memory.launch @{op.kernel_name} in @{self.function.sym_name.data} "
                "launches no triton.kernel of the module"
            )
        return kernel

    @staticmethod
    def _grid(kernel: EmittedKernel) -> tuple[SymExpr, ...]:
        """The kernel's grid along CUDA's three axes."""
        return (*kernel.op.grid_exprs, *[SymExpr.const(1)] * 3)[:3]

    def _grid_tests(self, name: str, grid: Sequence[SymExpr]) -> tuple[list[str], bool]:
        """The tests a launch over ``grid`` (named ``name``) needs: each
        symbolic axis not provably at least 1 is ``0 < axis`` (an empty grid
        launches nothing), and, unless the grid was checked up front, each
        not provably within CUDA's limit is ``axis <= limit``; and whether
        there is one of the latter."""
        limits = {} if name in self._checked_grids else _unproven_limits(grid)
        tests: list[str] = []
        for axis, extent in enumerate(grid):
            nonempty = _SIZES.prove_le(1, extent)
            if nonempty and axis not in limits:
                continue
            lower = "" if nonempty else "0 < "
            upper = f" <= {limits[axis]}" if axis in limits else ""
            tests.append(f"{lower}{name}[{axis}]{upper}")
        return tests, bool(limits)

    def _plan_grids(self) -> None:
        """Name each distinct grid of the launches once, computed from the
        bound symbols, and test those of the launches outside host control
        flow against CUDA's limits before any kernel runs: a call beyond
        them raises ``_irc_check_grid``'s ``LaunchError`` with nothing
        launched. A grid that is empty whatever the sizes is not named (its
        launches launch nothing); one beyond the limits whatever the sizes
        is an ``EmitError``."""
        top_level = set(self.function.body.block.ops)
        first_kernel: dict[str, str] = {}
        for op in self.function.walk():
            if not isinstance(op, memory.LaunchOp):
                continue
            kernel = self._kernel(op)
            grid = self._grid(kernel)
            _check_static_limits(op.kernel_name, grid)
            if kernel.op.never_launches:
                continue
            name = self.grids.get(grid)
            if name is None:
                name = self.grids[grid] = self.namer.fresh(
                    "grid_", str(len(self.grids))
                )
                self._emit(f"    {name} = ({', '.join(self._host(g) for g in grid)})")
            if op in top_level:
                first_kernel.setdefault(name, op.kernel_name)
        checks: list[str] = []
        reports: list[str] = []
        for grid, name in self.grids.items():
            if name not in first_kernel:
                continue
            tests = [
                f"{name}[{axis}] <= {limit}"
                for axis, limit in _unproven_limits(grid).items()
            ]
            checks += tests
            if tests:
                reports.append(
                    f"        _irc_check_grid({first_kernel[name]!r}, {name}, "
                    f"{MAX_GRID!r})"
                )
        self._checked_grids = set(first_kernel)
        if checks:
            self._emit(f"    if not ({' and '.join(checks)}):")
            for report in reports:
                self._emit(report)

    # Host control flow -----------------------------------------------------

    def _control_flow_op(self, op: Operation) -> bool:
        """Emit ``op`` if it is host control flow (or one of its transfers);
        whether it was. Each decision says where it runs."""
        if isinstance(op, scf.IfOp):
            self._emit(f"    if {self.values[op.cond]}:")
            self._host_block(op.true_region.block)
            self._emit("    else:")
            self._host_block(op.false_region.block)
        elif isinstance(op, scf.ForOp):
            self._host_for(op)
        elif isinstance(op, scf.WhileOp):
            self._host_while(op)
        elif isinstance(op, memory.ReadScalarOp):
            self._emit(
                "    # decision on the host: one device->host read of a 0-d "
                "buffer a kernel wrote (it waits for the kernels before it)"
            )
            self._assign(op.result, f"{self.values[op.buffer]}.item()")
        elif isinstance(op, memory.WriteScalarOp):
            self._emit(
                "    # the host writes the iteration index for the kernels to "
                "read (one small host->device write)"
            )
            self._emit(f"    {self.values[op.buffer]}.fill_({self.values[op.value]})")
        elif isinstance(op, memory.CopyOp):
            self._emit(f"    {self.values[op.target]}.copy_({self.values[op.source]})")
        elif isinstance(op, memory.RowOp):
            source, index = self.values[op.source], self.values[op.index]
            self._assign(op.result, f"{source}[{index}]")
        elif isinstance(op, memory.SizeOp):
            self._assign(op.result, self._host(op.expr.data))
        elif isinstance(op, arith.SubiOp):
            lhs, rhs = self.values[op.lhs], self.values[op.rhs]
            self._assign(op.result, f"{lhs} - {rhs}")
        else:
            return False
        return True

    def _host_block(self, block: Block) -> None:
        """The ops of a host region's ``block``, one level deeper; its
        terminator is the caller's to spell."""
        self._depth += 1
        ops = list(block.ops)
        if isinstance(ops[-1], scf.YieldOp | scf.ConditionOp):
            ops = ops[:-1]
        in_flight = len(self.pending)
        for op in ops:
            self._host_op(op)
        self._await_all(in_flight)
        if not ops:
            self._emit("    pass")
        self._depth -= 1

    def _carry(self, targets: Sequence[SSAValue], values: Sequence[SSAValue]) -> None:
        """``(targets) = (values)`` at the current depth, naming the targets."""
        if not targets:
            return
        for target in targets:
            if target not in self.values:
                self.values[target] = self.namer.fresh("v", str(len(self.values)))
        self._emit(
            f"    {_tuple_text(self.values[t] for t in targets)} = "
            f"{_tuple_text(self.values[v] for v in values)}"
        )

    def _host_for(self, op: scf.ForOp) -> None:
        """A counted loop on the host: the trip count is computed from the
        bound symbols; the carries' buffers swap each iteration."""
        carried = op.body.block.args[1:]
        self._carry(carried, op.iter_args)
        step = self.namer.fresh("i_", "step")
        self.values[op.body.block.args[0]] = step
        self._emit(
            "    # loop on the host: its trip count comes from the bound symbols; "
            "its carries' buffers were allocated once and swap each iteration"
        )
        self._emit(
            f"    for {step} in range({self.values[op.lb]}, {self.values[op.ub]}, "
            f"{self.values[op.step]}):"
        )
        self._host_block(op.body.block)
        self._depth += 1
        yielded = op.body.block.last_op
        assert isinstance(yielded, scf.YieldOp)
        self._carry(carried, yielded.operands)
        self._depth -= 1
        self._carry(op.results, carried)

    def _host_while(self, op: scf.WhileOp) -> None:
        """A loop whose every decision runs on the host, on a predicate the
        device computed (one device->host read per iteration)."""
        before, after = op.before_region.block, op.after_region.block
        self._carry(before.args, op.arguments)
        self._emit(
            "    # loop on the host: each iteration's decision reads the predicate "
            "a kernel computed (one device->host read per iteration)"
        )
        self._emit("    while True:")
        self._host_block(before)
        condition = before.last_op
        assert isinstance(condition, scf.ConditionOp)
        self._depth += 1
        self._carry(after.args, condition.args)
        self._emit(f"    if not {self.values[condition.condition]}:")
        self._emit("        break")
        self._depth -= 1
        self._host_block(after)
        self._depth += 1
        yielded = after.last_op
        assert isinstance(yielded, scf.YieldOp)
        self._carry(before.args, yielded.operands)
        self._depth -= 1
        self._carry(op.results, after.args)
