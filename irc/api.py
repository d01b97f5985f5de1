"""irc's public Python API: ``trace``, ``compile`` and ``jit``."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from irc import cache as compile_cache
from irc import logs, pytree
from irc.capture import NO_RESULT, Captured, TensorSpec, capture
from irc.capture.trace import facts_declared_with
from irc.errors import AllocationError, BindingError, IrcError, TracingError
from irc.ir import print_module
from irc.lowering import pipeline as pipeline_module
from irc.runtime.arrays import (
    check_writable,
    is_torch_tensor,
    to_numpy,
    to_torch,
    write_back,
)

#: What ``irc.compile`` runs on the captured graph: clean-ups, then the
#: lowering to triton (``irc.lowering.pipeline``).
DEFAULT_PIPELINE = pipeline_module.DEFAULT_PIPELINE

#: ``"auto"`` picks the first available of the others, in this order.
BACKENDS = ("auto", "triton", "interpret", "reference")


def trace(
    function: Callable[..., Any], *args: Any, facts: Iterable[str] = (), **kwargs: Any
) -> ModuleOp:
    """Capture ``function`` into a graph-level module.

    ``args``/``kwargs`` mirror the function's parameters: ``TensorSpec``
    leaves (also inside nested dicts, lists and tuples) become tensor
    arguments, anything else is a static value baked into the IR. ``facts``
    declares what is known about the symbols (``"N % 16 == 0"``).
    """
    return capture(function, args, kwargs, facts).module


class Compiled:
    """A compiled function: its IR at every level, callable on arrays.

    The graph passes of the pipeline run at construction; the lowering
    passes (from the first one that is not a graph pass) run once, when a
    lower level is first needed (``ir("loop")``, ``num_kernels``, a call on
    a Triton backend), so that the reference backend never depends on them.
    The module is kept at every level it passes through. A pipeline that
    stops above triton is finished with the default lowering, so the result
    always runs on every backend.

    With the on-disk compile cache on (``irc.cache``: ``IRC_CACHE_DIR``,
    ``IRC_CACHE=0``), a compilation of the same captured IR with the same
    pipeline, made earlier in this process or another, is restored instead
    of run: every level's IR and the emitted module are read from its entry
    (``restored`` is then true), and a new one writes its entry when its
    module is first emitted.
    """

    def __init__(self, captured: Captured, pipeline: str | Sequence[ModulePass]):
        self._start(captured)
        passes = _parse_pipeline(pipeline)
        self._cache_entry = compile_cache.entry_for(
            captured.module, captured.function_name, passes
        )
        stored = self._cache_entry.load() if self._cache_entry else None
        if stored is not None:
            self._restore(stored)
            return
        self._working = captured.module.clone()
        lowering = next(
            (
                i
                for i, p in enumerate(passes)
                if p.name in pipeline_module.LOWERING_PASSES
            ),
            len(passes),
        )
        self._pending = list(passes[lowering:])
        self._lowered = False
        self._lowering_failure: Exception | None = None
        self._level = "graph"
        self._levels["graph"] = self._working.clone()
        _apply(self._working, passes[:lowering], self._keep_level, self._logs)
        self._logs.level_reached("graph", self._levels["graph"])

    @classmethod
    def from_stored(
        cls, captured: Captured, stored: compile_cache.StoredLevels
    ) -> Compiled:
        """A compilation restored from its stored levels and emitted module
        (a saved artefact, ``irc.load``), running no pass."""
        compiled = cls.__new__(cls)
        compiled._start(captured)
        compiled._cache_entry = None
        compiled._restore(stored)
        return compiled

    def _start(self, captured: Captured) -> None:
        self.captured = captured
        self._logs = logs.Session(captured.function_name)
        _log_guards(self._logs, captured)
        self._levels: dict[str, ModuleOp] = {}
        #: The levels' text when restored (the compile cache, an artefact).
        self._stored: compile_cache.StoredLevels | None = None
        self._source: str | None = None
        #: What a call runs, per backend (see ``_bind_backend``).
        self._calls: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], Any]] = {}

    def _restore(self, stored: compile_cache.StoredLevels) -> None:
        """Take every level and the emitted module from ``stored``: nothing
        is left to lower (the modules are parsed when first asked for)."""
        self._stored = stored
        self._source = stored.source
        self._pending = []
        self._lowered = True
        self._lowering_failure = None
        for level in stored.texts:
            self._logs.level_text(level, stored.text(level, locations=False))
        self._logs.source_emitted(stored.source)

    def _lower(self) -> None:
        """Run the rest of the pipeline and the default lowering after it,
        once; a lowering that failed fails again the same way."""
        if self._lowering_failure is not None:
            raise self._lowering_failure
        if self._lowered:
            return
        self._lowered = True
        try:
            _apply(self._working, self._pending, self._keep_level, self._logs)
            _apply(
                self._working,
                pipeline_module.passes_after(self._level),
                self._keep_level,
                self._logs,
            )
        except Exception as failure:
            self._lowering_failure = failure
            raise
        finally:  # what was reached, also when a lowering failed
            for level in pipeline_module.LEVEL_NAMES[1:]:
                if level in self._levels:
                    self._logs.level_reached(level, self._levels[level])
            if "fusion" in self._levels:
                _log_kernels(self._logs, self._levels["fusion"])

    def _keep_level(self, module: ModuleOp, applied: ModulePass) -> None:
        """Keep a copy of ``module`` as the IR of its level: the last pass
        that leaves a module at a level gives that level's IR. The level is
        what the module's ops and types show, or what the pass lowers to
        (a function returning its argument shows nothing)."""
        self._level = pipeline_module.lowest_level(
            self._level,
            pipeline_module.module_level(module),
            pipeline_module.LEVEL_AFTER.get(applied.name, "graph"),
        )
        self._levels[self._level] = module.clone()

    @property
    def restored(self) -> bool:
        """Whether this compilation was restored (from the compile cache or
        a saved artefact) rather than lowered in this process."""
        return self._stored is not None

    @property
    def module(self) -> ModuleOp:
        """The graph-level module (after the graph passes of the pipeline)."""
        return self._module("graph")

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels whose IR ``ir`` returns, highest first."""
        self._lower()
        present = self._levels if self._stored is None else self._stored.texts
        return tuple(lv for lv in pipeline_module.LEVEL_NAMES if lv in present)

    def ir(self, level: str = "graph", *, locations: bool = False) -> str:
        """The IR text at ``level`` (graph, fusion, loop, memory, triton);
        with ``locations``, each op's ``loc(file:line:col)`` of the Python
        line that made it."""
        if self._stored is not None and level in self._stored.texts:
            return self._stored.text(level, locations=locations)
        return print_module(self._module(level), locations=locations)

    def module_at(self, level: str = "graph") -> ModuleOp:
        """A copy of the module at ``level``, as ``ir(level)`` prints it."""
        return self._module(level).clone()

    def _module(self, level: str) -> ModuleOp:
        if level != "graph":
            self._lower()
        stored = self._stored
        if level not in self._levels and stored is not None and level in stored.texts:
            self._levels[level] = stored.module(level)
        if level not in self._levels:
            known = ", ".join(repr(k) for k in self.levels)
            raise IrcError(f"no IR at level {level!r}; available levels: {known}")
        return self._levels[level]

    def save(self, path: str | Path) -> Path:
        """Write this compilation as a self-contained artefact directory
        (``irc.artifact``): the emitted module, the IR of every level, a
        manifest and a loader that runs it with only torch and Triton
        installed; ``irc.load(path)`` restores it."""
        from irc import artifact

        return artifact.save(self, path)

    def show(self) -> None:
        """The picture and the IR of every level (``irc.viz``): inline in
        Jupyter, else in a web browser."""
        from irc import viz

        viz.show(self)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the picture, the kernels and each level's IR."""
        from irc import viz

        return viz.to_html(self)

    @property
    def triton_source(self) -> str:
        """The emitted Python module: ``@triton.jit`` kernels and a launcher."""
        if self._source is None:
            from irc.backend.triton import emit_module

            self._lower()
            self._source = emit_module(self._levels["triton"])
            self._logs.source_emitted(self._source)
            if self._cache_entry is not None:
                self._cache_entry.store(
                    compile_cache.StoredLevels.of(
                        {lv: self._levels[lv] for lv in self.levels},
                        self._source,
                        self.num_kernels,
                    )
                )
        return self._source

    @property
    def num_kernels(self) -> int:
        """The number of kernel launches per call."""
        from irc.dialects.memory import LaunchOp

        if self._stored is not None:
            return self._stored.num_kernels
        self._lower()
        return sum(isinstance(op, LaunchOp) for op in self._levels["triton"].walk())

    def __call__(self, *args: Any, backend: str = "auto", **kwargs: Any) -> Any:
        """Run on arrays (NumPy arrays give NumPy results, torch tensors
        torch ones). ``backend`` is ``"triton"`` (a GPU), ``"interpret"``
        (Triton's interpreter), ``"reference"`` (NumPy) or ``"auto"``, the
        first of them available when this object is first called."""
        call = self._calls.get(backend)
        if call is None:
            call = self._calls[backend] = self._bind_backend(backend)
        return call(args, kwargs)

    def _bind_backend(
        self, backend: str
    ) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
        """What a call on ``backend`` runs, prepared once: the loaded emitted
        module and its device for a Triton backend."""
        if backend not in BACKENDS:
            raise IrcError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        if backend == "auto":
            resolved = _auto_backend()
            call = self._calls.get(resolved) or self._bind_backend(resolved)
            self._calls[resolved] = call
            return call
        if backend == "reference":
            return self._call_reference
        missing = [
            m for m in ("torch", "triton") if importlib.util.find_spec(m) is None
        ]
        if missing:
            raise IrcError(
                f"backend {backend!r} runs the emitted Triton module, which needs "
                f"{' and '.join(missing)}: pip install torch==2.13.0 triton (torch "
                "first, for its CPU build), or call with backend='reference'"
            )
        from irc.runtime import triton_backend

        interpret = backend == "interpret"
        module = triton_backend.load_source(self.triton_source, interpret=interpret)
        launcher = triton_backend.Launcher(
            module, self._input_names, interpret=interpret
        )
        return self._triton_call(launcher)

    def _call_reference(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from irc.interpreters.graph import run_graph

        leaves = self._flatten(args, kwargs)
        arrays = [to_numpy(leaf, name) for leaf, name in zip(leaves, self._input_names)]
        outputs = run_graph(self.module, arrays, self.captured.function_name)
        if any(is_torch_tensor(leaf) for leaf in leaves):
            outputs = [to_torch(o) for o in outputs]
        return self._results(outputs, leaves)

    def _triton_call(
        self, launcher: Any
    ) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
        """A call through ``launcher``, which checks and binds the call
        itself, with messages that name the argument, axis, symbol and
        values; only flattening and converting the results are left here.

        A call of torch tensors the launcher can take as they are takes the
        fast path: one generated function (``pytree.call_dispatcher``)
        flattens and tests it, runs the launcher on its tensors and rebuilds
        the results. Any other call, and one the launcher refuses, takes the
        general path, which converts what it can and raises the precise
        error."""
        general = self._general_triton_call(launcher)
        if not self._input_names:
            return general
        captured = self.captured
        static = captured.static_leaves
        names = {f"_s{i}": value for i, value in static.items()}
        names |= {"_same_static": _same_static}
        names |= {t.__name__: t for t in _PLAIN_STATIC_TYPES}
        names |= {
            "_launch": launcher.launch_given,
            "_Refused": launcher.launch_error,
            "_AllocationFailed": launcher.allocation_failed,
            "_AllocationError": AllocationError,
            "_results": self._results,
        }
        return pytree.call_dispatcher(
            captured.in_tree,
            then=lambda tensors: self._launch_lines(tensors, names),
            otherwise=general,
            refuse_leaf=self._fast_leaf_refusal(launcher),
            keep=self._tensor_leaves,
            names=names,
            any_key_order=True,
        )

    def _general_triton_call(
        self, launcher: Any
    ) -> Callable[[tuple[Any, ...], dict[str, Any]], Any]:
        """Any call through ``launcher``: the structure checked (and dicts
        reordered), NumPy arrays converted, tensors moved to the device."""
        flatten, results = self._flatten, self._results

        def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            leaves = flatten(args, kwargs)
            outputs, torch_in = launcher(leaves)
            if not torch_in:
                outputs = [to_numpy(o, "result") for o in outputs]
            return results(outputs, leaves)

        return call

    def _fast_leaf_refusal(self, launcher: Any) -> pytree.LeafRefusal:
        """What sends a call off the fast path, leaf by leaf: a tensor leaf
        that is no torch tensor without ``requires_grad`` (or, for the
        first, is not on the launcher's kind of device: the launcher checks
        that the others are on its device, and dense), a static leaf that is
        not the compiled one."""
        static = self.captured.static_leaves
        first = next(i for i in range(len(self.captured.leaf_names)) if i not in static)

        def refuse(index: int, leaf: str) -> str:
            if index in static:
                if type(static[index]) in _PLAIN_STATIC_TYPES:
                    kind = type(static[index]).__name__
                    return f"type({leaf}) is not {kind} or {leaf} != _s{index}"
                return f"not _same_static({leaf}, _s{index})"
            refused = f"{leaf}.requires_grad"
            if index == first:
                refused += f" or not {leaf}.{launcher.device_flag}"
            return refused

        return refuse

    def _launch_lines(self, tensors: Sequence[str], names: dict[str, Any]) -> list[str]:
        """The fast path's lines after flattening: the launcher on the
        tensors (a refusal takes the general path, which reports it), then
        the results rebuilt in one expression (or by ``_results`` when the
        function writes into inputs or returns nothing)."""
        listed = ", ".join(tensors)
        lines = [
            "    try:",
            f"        outputs = _launch({listed})",
            "    except _Refused:",
            "        return _otherwise(args, kwargs)",
            "    except _AllocationFailed as error:",
            "        raise _AllocationError(str(error)) from error",
        ]
        captured = self.captured
        if captured.written_inputs or captured.out_tree == NO_RESULT:
            return [*lines, f"    return _results(outputs, [{listed}])"]
        results = pytree.unflatten_text(captured.out_tree, names, "outputs")
        return [*lines, f"    return {results}"]

    def _results(self, outputs: Sequence[Any], inputs: Sequence[Any]) -> Any:
        """The outputs in the structure the function returned them, once the
        final values of the inputs it writes into are copied into the
        caller's arrays (the last outputs, one per written input)."""
        written = self.captured.written_inputs
        if written:
            names = [self._input_names[position] for position in written]
            for name, position in zip(names, written):
                check_writable(inputs[position], name)
            count = len(outputs) - len(written)
            for name, position, value in zip(names, written, outputs[count:]):
                write_back(name, inputs[position], value)
            outputs = outputs[:count]
        out_tree = self.captured.out_tree
        if out_tree == NO_RESULT:
            return None
        return (
            outputs[0]
            if out_tree is pytree.LEAF
            else pytree.unflatten(out_tree, outputs)
        )

    @functools.cached_property
    def _input_names(self) -> list[str]:
        captured = self.captured
        return [
            name
            for index, name in enumerate(captured.leaf_names)
            if index not in captured.static_leaves
        ]

    @functools.cached_property
    def _flattener(self) -> pytree.CallFlattener:
        return pytree.call_flattener(self.captured.in_tree)

    @functools.cached_property
    def _tensor_leaves(self) -> list[int] | None:
        """The leaf indices of the tensor inputs; None when every leaf is one."""
        captured = self.captured
        if not captured.static_leaves:
            return None
        count = len(captured.leaf_names)
        return [i for i in range(count) if i not in captured.static_leaves]

    def _flatten_reordered(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> list[Any]:
        """The leaves of a call whose dicts (keyword arguments included) list
        their keys in another order than the compiled call did; any other
        difference is a ``BindingError`` saying in words where it is."""
        in_tree = self.captured.in_tree
        reordered = pytree.reorder_like((list(args), dict(kwargs)), in_tree)
        if reordered is not None:
            leaves, _ = pytree.flatten(reordered)
            return leaves
        _, given = pytree.flatten((list(args), dict(kwargs)))
        where = pytree.describe_mismatch(in_tree, given, self.captured.parameters)
        raise BindingError(
            f"the arguments do not have the structure {self.captured.function_name}() "
            f"was compiled for: {where}"
        )

    def _flatten(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The tensor inputs, as given (NumPy arrays or torch tensors), after
        checking the call's structure and static values against the
        compiled ones."""
        captured = self.captured
        leaves = self._flattener(args, kwargs)
        if leaves is None:
            leaves = self._flatten_reordered(args, kwargs)
        _refuse_autograd(leaves, captured.leaf_names)
        if self._tensor_leaves is None:
            return leaves
        for index, expected in captured.static_leaves.items():
            _check_static(captured.leaf_names[index], leaves[index], expected)
        return [leaves[i] for i in self._tensor_leaves]


def _refuse_autograd(leaves: Sequence[Any], names: Sequence[str]) -> None:
    """irc runs outside torch.autograd: a result computed from a tensor that
    requires grad would silently have none, so such a tensor is refused."""
    for leaf, name in zip(leaves, names):
        if getattr(leaf, "requires_grad", False) is True and is_torch_tensor(leaf):
            raise BindingError(
                f"argument {name!r} is a torch tensor with requires_grad=True, but "
                "irc does not record its operations for torch.autograd, so the "
                "result would have no gradient: take gradients with irc.grad, "
                f"irc.value_and_grad or irc.vjp, or pass {name}.detach()"
            )


def _auto_backend() -> str:
    """The first available backend: a GPU, else Triton's interpreter (torch
    and triton installed), else the NumPy reference."""
    if (
        importlib.util.find_spec("torch") is None
        or importlib.util.find_spec("triton") is None
    ):
        return "reference"
    from irc.runtime import triton_backend

    return "interpret" if triton_backend.gpu_device() is None else "triton"


def _parse_pipeline(pipeline: str | Sequence[ModulePass]) -> list[ModulePass]:
    """A pipeline as ``irc-opt -p`` takes it, or pass instances, as passes."""
    from irc.passes.registry import get_all_passes

    if not isinstance(pipeline, str):
        return list(pipeline)
    if not pipeline:
        return []
    try:
        return list(PassPipeline.parse_spec(get_all_passes(), pipeline).passes)
    except (Exception, ArgSpecParseError) as err:
        raise IrcError(f"invalid pass pipeline {pipeline!r}: {err}") from None


def _apply(
    module: ModuleOp,
    passes: Iterable[ModulePass],
    after_each: Callable[[ModuleOp, ModulePass], None],
    session: logs.Session,
) -> None:
    from irc.ir import default_context

    ctx = default_context()
    for each in passes:
        start = time.perf_counter()
        each.apply(ctx, module)
        session.pass_ran(each.name, time.perf_counter() - start)
        after_each(module, each)


def _log_guards(session: logs.Session, captured: Captured) -> None:
    """The declared facts and the guards capture left for the runtime."""
    if not session.wants("guards"):
        return
    from irc.dialects.sym import GuardOp

    facts = ", ".join(str(fact) for fact in captured.facts) or "none"
    lines = [f"{captured.function_name}: facts declared: {facts}"]
    for op in captured.module.walk():
        if isinstance(op, GuardOp):
            reason = f" ({op.reason.data})" if op.reason else ""
            lines.append(f"  guard {op.fact}{reason}, checked at every call")
    if len(lines) == 1:
        lines.append("  no guards: every shape fact was proven at compile time")
    session.log("guards", "\n".join(lines))


def _log_kernels(session: logs.Session, fusion_module: ModuleOp) -> None:
    """Each kernel ``fuse`` formed: its name, kind and reason."""
    if not session.wants("kernels"):
        return
    from irc.dialects.fusion import KernelOp

    kernels = [op for op in fusion_module.walk() if isinstance(op, KernelOp)]
    lines = [f"{len(kernels)} kernel(s)"]
    lines += [
        f"  @{op.sym_name.data} {op.kind.data}: {op.reason.data}" for op in kernels
    ]
    session.log("kernels", "\n".join(lines))


#: Static values that ``_same_static`` compares by type and ``==`` alone (no
#: NaN, no arrays): the fast path tests them inline.
_PLAIN_STATIC_TYPES = (int, bool, str, bytes, type(None))


def _check_static(name: str, value: Any, expected: Any) -> None:
    if not _same_static(value, expected):
        raise BindingError(
            f"static argument {name!r} was {expected!r} when compiled but is "
            f"{value!r} now; compile again (or use irc.jit, which recompiles)"
        )


def _same_static(value: Any, expected: Any) -> bool:
    """Whether a static argument equals the one compiled in (arrays by value,
    dtype and shape; other values by type and ``==``)."""
    if type(value) is not type(expected):
        return False
    if isinstance(value, np.ndarray):
        if value.dtype != expected.dtype:
            return False
        try:  # NaN where NaN was compiled in is the same static value
            return np.array_equal(value, expected, equal_nan=True)
        except TypeError:  # a dtype without NaN (objects, strings)
            return np.array_equal(value, expected)
    if _is_nan(value) and _is_nan(expected):
        return True
    try:
        return bool(value == expected)
    except (TypeError, ValueError):  # an ``==`` that is not a truth value
        return value is expected


def _is_nan(value: Any) -> bool:
    """Whether ``value`` is a float (or complex) NaN scalar: a static
    argument that was NaN when compiled accepts NaN, though ``nan != nan``."""
    if not isinstance(value, float | complex | np.floating | np.complexfloating):
        return False
    return bool(np.isnan(value))


def compile(
    function: Callable[..., Any],
    *args: Any,
    facts: Iterable[str] = (),
    pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
    matmul_precision: str | None = None,
    mixed_precision: str | None = None,
    **kwargs: Any,
) -> Compiled:
    """Capture ``function`` (see ``trace``) and compile it.

    ``pipeline`` is run on the graph module: a pass pipeline as ``irc-opt -p``
    takes it, or a list of ``ModulePass`` instances. ``mixed_precision``
    (``"bf16"`` or ``"f16"``) runs ``auto-mixed-precision`` after the
    pipeline's graph passes: float32 matmuls and their epilogues compute in
    that type, reductions and exp/log in float32, results in the caller's
    dtypes (docs/mixed-precision.md).

    ``matmul_precision`` sets how float32 matmuls multiply, as
    ``torch.set_float32_matmul_precision`` does: ``"ieee"`` (IEEE fp32, the
    default, torch's ``"highest"``) or ``"tf32"`` (TF32 on tensor cores,
    about 3 decimal digits per product, torch's ``"high"``). It is the
    pipeline's ``tile{matmul-precision=...}`` option; None keeps the
    pipeline's. 16-bit matmuls always run on tensor cores.
    """
    passes = with_mixed_precision(_parse_pipeline(pipeline), mixed_precision)
    passes = _with_matmul_precision(passes, matmul_precision)
    return Compiled(capture(function, args, kwargs, facts), passes)


def _with_matmul_precision(
    passes: list[ModulePass], precision: str | None
) -> list[ModulePass]:
    """``passes`` with ``precision`` as every ``tile`` pass's
    ``matmul-precision`` (unchanged for None)."""
    from irc.dialects.kernel_kind import MatmulPrecision
    from irc.lowering.fusion_to_loop import TilePass

    if precision is None:
        return passes
    if precision not in set(MatmulPrecision):
        raise IrcError(
            f"matmul_precision={precision!r} is not one of "
            f'{", ".join(repr(str(p)) for p in MatmulPrecision)}; pass "ieee" '
            'for IEEE float32 matmuls (the default) or "tf32" for TF32 tensor cores'
        )
    if not any(isinstance(p, TilePass) for p in passes):
        raise IrcError(
            f"matmul_precision={precision!r} sets the tile pass's matmul-precision "
            "option, but the pipeline has no tile pass; add "
            f"tile{{matmul-precision={precision}}} to the pipeline instead"
        )
    return [
        replace(p, matmul_precision=precision) if isinstance(p, TilePass) else p
        for p in passes
    ]


#: ``mixed_precision=`` values, by the low type's name in the IR.
MIXED_PRECISION_TYPES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "f16": "f16",
    "float16": "f16",
}


def low_float_name(mixed_precision: str | None) -> str | None:
    """The IR's name of the low type ``mixed_precision=`` asks for (None for
    none); an ``IrcError`` for a value that names no 16-bit float."""
    if mixed_precision is None:
        return None
    low = MIXED_PRECISION_TYPES.get(str(mixed_precision))
    if low is None:
        raise IrcError(
            f"mixed_precision={mixed_precision!r} is not a 16-bit float type: use "
            "'bf16' or 'f16' (or None for float32 throughout)"
        )
    return low


def with_mixed_precision(
    passes: Sequence[ModulePass], mixed_precision: str | None
) -> list[ModulePass]:
    """``passes`` with ``auto-mixed-precision`` (and a ``canonicalize`` that
    folds its casts of constants) before the first lowering pass; the same
    passes for ``mixed_precision=None``."""
    low = low_float_name(mixed_precision)
    if low is None:
        return list(passes)
    from xdsl.transforms.canonicalize import CanonicalizePass

    from irc.passes.auto_mixed_precision import AutoMixedPrecisionPass

    lowering = next(
        (i for i, p in enumerate(passes) if p.name in pipeline_module.LOWERING_PASSES),
        len(passes),
    )
    return [
        *passes[:lowering],
        AutoMixedPrecisionPass(dtype=low),
        CanonicalizePass(),
        *passes[lowering:],
    ]


class Jitted:
    """``@irc.jit``: compiles on first call from the actual arguments and
    caches by everything static about them.

    ``dims`` names the symbolic dims per parameter, mirroring its structure:
    ``dims={"x": ("N", None)}`` makes axis 0 of ``x`` the symbol ``N`` and
    axis 1 static. Every dim not named is static: a call with a new size
    there compiles again; a new size of a symbolic dim does not.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        dims: Mapping[str, Any] | None = None,
        facts: Iterable[str] = (),
        pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
        matmul_precision: str | None = None,
        mixed_precision: str | None = None,
    ):
        functools.update_wrapper(self, function)
        self.function = function
        self.dims = dict(dims or {})
        self.facts = tuple(facts)
        self.pipeline = pipeline
        self.matmul_precision = matmul_precision
        self.mixed_precision = low_float_name(mixed_precision)
        self.cache: dict[Any, Compiled] = {}
        #: Per call structure (argument count, keyword names), the plans of
        #: recent compilations, most recent first.
        self._plans: dict[tuple[int, tuple[str, ...]], list[_CallPlan]] = {}

    def __call__(self, *args: Any, backend: str = "auto", **kwargs: Any) -> Any:
        for plan in self._plans.get((len(args), tuple(kwargs)), ()):
            if plan.accepts(args, kwargs):
                return plan.compiled(*args, backend=backend, **kwargs)
        return self._call_new(args, kwargs, backend)

    def _call_new(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], backend: str
    ) -> Any:
        """A call that no plan accepts: bind it to the parameters, look the
        compiled function up by its specs (compiling it the first time),
        and make a plan for calls like it."""
        bound = self._bind(args, kwargs)
        specs = {
            name: _spec_tree(value, self.dims.get(name), name)
            for name, value in bound.arguments.items()
        }
        spec_call = inspect.BoundArguments(bound.signature, specs)  # type: ignore[arg-type]
        key = _cache_key(spec_call.args, spec_call.kwargs)
        compiled = self.cache.get(key)
        _log_cache(self.function, spec_call, hit=compiled is not None)
        if compiled is None:
            try:
                with facts_declared_with("irc.jit(facts="):
                    compiled = compile(
                        self.function,
                        *spec_call.args,
                        facts=self.facts,
                        pipeline=self.pipeline,
                        matmul_precision=self.matmul_precision,
                        mixed_precision=self.mixed_precision,
                        **spec_call.kwargs,
                    )
            except IrcError:
                raise
            except Exception as err:
                self._explain_failure(bound.arguments, err)
                raise
            self.cache[key] = compiled
        if len(bound.args) == len(args) and bound.kwargs.keys() == kwargs.keys():
            # The call is in the structure it binds to (no keyword argument
            # filled a positional parameter): later calls like it can skip
            # the binding.
            plans = self._plans.setdefault((len(args), tuple(kwargs)), [])
            plans.insert(0, _CallPlan.of(args, kwargs, spec_call, compiled))
            del plans[_PLANS_PER_STRUCTURE:]
        # The compiled function takes the call in the structure it was
        # compiled from: parameters bound by name or position alike.
        return compiled(*bound.args, backend=backend, **bound.kwargs)

    def _explain_failure(self, arguments: Mapping[str, Any], err: Exception) -> None:
        """When the traced function raised a Python error and an argument
        that is no array is one a user most likely meant as an array
        (``None``, or a list or tuple of plain numbers, which ``irc.jit``
        traces as static values), raise a ``TracingError`` naming it and
        saying how to pass an array; else return (the error stands)."""
        suspects = [
            (name, value)
            for name, value in arguments.items()
            if value is None or _is_number_sequence(value)
        ]
        if not suspects:
            return
        described = ", ".join(
            f"{name!r} is {'None' if value is None else type(value).__name__ + ' of numbers'}"
            for name, value in suspects
        )
        raise TracingError(
            f"{self.function.__name__}() raised {type(err).__name__}: {err}; while "
            f"tracing it, {described}, which irc.jit takes as a static value, not "
            "an array: pass NumPy arrays or torch tensors (np.asarray(...)) for "
            "array arguments"
        ) from err

    def _bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        try:
            bound = inspect.signature(self.function).bind(*args, **kwargs)
        except TypeError as err:
            raise IrcError(
                f"the arguments do not fit {self.function.__name__}(): {err}"
            ) from None
        unknown = set(self.dims) - set(inspect.signature(self.function).parameters)
        if unknown:
            raise IrcError(f"dims names unknown parameters: {sorted(unknown)}")
        return bound

    @property
    def latest(self) -> Compiled:
        """The most recent compilation (``Compiled``: its IR, source, kernels)."""
        if not self.cache:
            raise IrcError(
                f"nothing compiled yet: call {self.function.__name__}() first"
            )
        return next(reversed(self.cache.values()))

    def ir(self, level: str = "graph", *, locations: bool = False) -> str:
        """The IR of the most recent compilation."""
        return self.latest.ir(level, locations=locations)

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels of the most recent compilation."""
        return self.latest.levels

    @property
    def triton_source(self) -> str:
        """The emitted module of the most recent compilation."""
        return self.latest.triton_source

    @property
    def num_kernels(self) -> int:
        """The kernel launches per call of the most recent compilation."""
        return self.latest.num_kernels


def _log_cache(
    function: Callable[..., Any], spec_call: inspect.BoundArguments, *, hit: bool
) -> None:
    """A call no plan accepted: compiled anew, or an earlier compilation
    reused (calls that a plan accepts are not logged: they stay fast)."""
    if "cache" not in logs.active_topics():
        return
    logs.ensure_handler()
    specs = ", ".join(f"{name}={value}" for name, value in spec_call.arguments.items())
    verdict = "reusing the compilation for" if hit else "compiling for"
    logs.logger("cache").info("%s: %s %s", function.__name__, verdict, specs)


#: How many plans ``Jitted`` keeps per call structure.
_PLANS_PER_STRUCTURE = 8


@dataclass(frozen=True)
class _CallPlan:
    """What makes a call to a ``Jitted`` function land on one compiled
    function without binding it to the parameters again: the same argument
    structure, each array of the same kind (NumPy or torch), dtype, rank and
    size on every static axis, and equal static values. A call that fits
    goes straight to ``compiled``, which checks the rest."""

    compiled: Compiled
    flatten: pytree.CallFlattener
    #: Per leaf: ``(array type, dtype, rank, ((axis, size), ...))`` for an
    #: array, ``(None, value)`` for a static value.
    leaves: tuple[tuple[Any, ...], ...]

    @staticmethod
    def of(
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        spec_call: inspect.BoundArguments,
        compiled: Compiled,
    ) -> _CallPlan:
        """The plan of a call that bound to ``spec_call`` in its own
        structure (``_spec_tree`` mirrors the containers ``flatten`` walks,
        so the two have the same leaves)."""
        values, treedef = pytree.flatten((list(args), dict(kwargs)))
        specs, _ = pytree.flatten((list(spec_call.args), dict(spec_call.kwargs)))
        leaves: list[tuple[Any, ...]] = []
        for value, spec in zip(values, specs, strict=True):
            if isinstance(spec, TensorSpec):
                static = tuple(
                    (axis, dim)
                    for axis, dim in enumerate(spec.shape)
                    if isinstance(dim, int)
                )
                leaves.append((type(value), value.dtype, len(spec.shape), static))
            else:
                leaves.append((None, value))
        return _CallPlan(compiled, pytree.call_flattener(treedef), tuple(leaves))

    def accepts(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        values = self.flatten(args, kwargs)
        if values is None:
            return False
        for value, leaf in zip(values, self.leaves):
            kind = leaf[0]
            if kind is None:
                if not _same_static(value, leaf[1]):
                    return False
                continue
            _, dtype, rank, static = leaf
            if type(value) is not kind or value.dtype != dtype:
                return False
            shape = value.shape
            if len(shape) != rank or any(shape[a] != size for a, size in static):
                return False
        return True


def _spec_tree(value: Any, dims: Any, path: str) -> Any:
    """Arrays in ``value`` become TensorSpecs, named by ``dims``."""
    if isinstance(value, dict):
        if dims is not None and not isinstance(dims, Mapping):
            raise IrcError(f"dims for {path!r} must be a dict, as the argument is")
        return {
            k: _spec_tree(v, (dims or {}).get(k), f"{path}.{k}")
            for k, v in value.items()
        }
    if pytree.is_sequence(value) and not _is_array(value):
        if dims is not None and (
            not isinstance(dims, list | tuple) or len(dims) != len(value)
        ):
            raise IrcError(
                f"dims for {path!r} must be a list of {len(value)} entries, as the "
                "argument is"
            )
        parts = [
            _spec_tree(v, dims[i] if dims else None, f"{path}.{i}")
            for i, v in enumerate(value)
        ]
        return parts if isinstance(value, list) else tuple(parts)
    if not _is_array(value):
        return value
    shape = tuple(value.shape)
    names = tuple(dims) if dims is not None else (None,) * len(shape)
    if len(names) != len(shape):
        raise IrcError(
            f"dims for {path!r} name {len(names)} axes, but it has rank {len(shape)}"
        )
    spec_shape = [
        name if name is not None else size for name, size in zip(names, shape)
    ]
    return TensorSpec(spec_shape, str(value.dtype))


def _is_number_sequence(value: Any) -> bool:
    """A (nested) list or tuple of plain Python numbers: array data that
    was not made an array."""
    if not isinstance(value, list | tuple) or not value:
        return False
    return all(
        _is_number_sequence(v) or isinstance(v, int | float | complex) for v in value
    )


def _is_array(value: Any) -> bool:
    return isinstance(value, np.ndarray) or is_torch_tensor(value)


def _cache_key(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    leaves, treedef = pytree.flatten((list(args), dict(kwargs)))
    return treedef, tuple(_hashable(leaf) for leaf in leaves)


def _hashable(leaf: Any) -> Any:
    """A cache key for one static leaf: arrays by content, unhashable values
    by identity (a new object compiles again)."""
    if isinstance(leaf, np.ndarray):
        return ("array", leaf.dtype.str, leaf.shape, leaf.tobytes())
    if _is_nan(leaf):  # every NaN is one key, as ``_same_static`` says
        return (type(leaf), "nan")
    try:
        hash(leaf)
    except TypeError:
        return ("object", id(leaf))
    return (type(leaf), leaf)


def jit(
    function: Callable[..., Any] | None = None,
    *,
    dims: Mapping[str, Any] | None = None,
    facts: Iterable[str] = (),
    pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
    matmul_precision: str | None = None,
    mixed_precision: str | None = None,
) -> Any:
    """Decorator: ``@irc.jit`` or ``@irc.jit(dims={"x": ("N", None)})``;
    ``matmul_precision`` and ``mixed_precision`` as ``irc.compile`` takes
    them."""
    if function is None:
        return lambda f: Jitted(
            f, dims, facts, pipeline, matmul_precision, mixed_precision
        )
    return Jitted(function, dims, facts, pipeline, matmul_precision, mixed_precision)
