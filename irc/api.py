"""irc's public Python API: ``trace``, ``compile`` and ``jit``."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc import artifact, logs, pytree, viz
from irc import cache as compile_cache
from irc.analysis.launches import Launches
from irc.capture import Captured, TensorSpec, capture
from irc.capture.trace import facts_declared_with
from irc.compilation import Compilation, StoredLevels
from irc.driver import Driver
from irc.errors import IrcError, TracingError
from irc.lowering.pipeline import DEFAULT_PIPELINE, Pipeline
from irc.runtime import nans
from irc.runtime.arrays import is_torch_tensor
from irc.runtime.calls import BACKENDS, Caller, is_nan, same_static

__all__ = [
    "BACKENDS",
    "DEFAULT_PIPELINE",
    "MIXED_PRECISION_TYPES",
    "Compiled",
    "Jitted",
    "compile",
    "jit",
    "load",
    "low_float_name",
    "trace",
    "with_mixed_precision",
]


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
    a Triton backend), so that the reference backend never depends on them;
    with ``IRC_DUMP_DIR`` set they run at construction, so that the dump
    holds every level (a failure still raises only where it did). The
    module is kept at every level it passes through. A pipeline that stops
    above triton is finished with the default lowering, so the result
    always runs on every backend (``irc.driver``).

    With ``debug_nans`` (None: ``IRC_DEBUG_NANS``), a call whose outputs
    hold a NaN or an infinity raises ``NonFiniteError`` (``irc.runtime.nans``).

    With the on-disk compile cache on (``irc.cache``: ``IRC_CACHE_DIR``,
    ``IRC_CACHE=0``), a compilation of the same captured IR with the same
    pipeline, made earlier in this process or another, is restored instead
    of run: every level's IR and the emitted module are read from its entry
    (``restored`` is then true), and a new one writes its entry when its
    module is first emitted.
    """

    def __init__(
        self,
        captured: Captured,
        pipeline: str | Sequence[ModulePass] | Pipeline,
        debug_nans: bool | None = None,
    ):
        session = logs.Session(captured)
        parsed = Pipeline.parse(pipeline)
        entry = compile_cache.entry_for(captured.module, captured.function_name, parsed)
        stored = entry.load() if entry else None
        if stored is not None:
            driver = Driver.restore(captured, parsed, stored, [session])
        else:
            listeners = [session] if entry is None else [session, entry]
            driver = Driver.start(captured, parsed, listeners)
        self._attach(driver, debug_nans)
        if session.dumps:
            self._lower_now()

    def _lower_now(self) -> None:
        """Lower and emit at once, so that ``IRC_DUMP_DIR`` holds every level
        and the emitted module when ``irc.compile`` returns, not only after
        the first call. A failure is kept, not raised: the driver raises it
        again where a lower level is first needed, as without the dump, and
        the dump holds the levels reached."""
        with contextlib.suppress(Exception):
            self._driver.emitted()

    @classmethod
    def from_stored(cls, captured: Captured, stored: StoredLevels) -> Compiled:
        """A compilation restored from its stored levels and emitted module
        (a saved artefact, ``irc.load``), running no pass."""
        compiled = cls.__new__(cls)
        session = logs.Session(captured)
        compiled._attach(Driver.restore(captured, None, stored, [session]), None)
        return compiled

    def _attach(self, driver: Driver, debug_nans: bool | None) -> None:
        self._driver = driver
        record = driver.compilation
        self._caller = Caller(
            record.captured,
            record.input_names,
            graph=lambda: self.module,
            source=lambda: self.triton_source,
        )
        #: The caller's bound calls, per backend, read here by ``__call__``
        #: (one attribute read less per call); with ``debug_nans``, checked.
        self._calls: Any = self._caller.bound
        if nans.enabled(debug_nans):
            self._calls = nans.CheckedCalls(
                self._caller, lambda level: self._record_at(level).module(level)
            )

    @property
    def captured(self) -> Captured:
        return self._driver.compilation.captured

    @property
    def compilation(self) -> Compilation:
        """This compilation's record (``irc.compilation``), lowered: what
        the artefact, the pictures and the compile cache read."""
        return self._driver.lowered()

    @property
    def restored(self) -> bool:
        """Whether this compilation was restored (from the compile cache or
        a saved artefact) rather than lowered in this process."""
        return self._driver.compilation.restored

    @property
    def module(self) -> ModuleOp:
        """The graph-level module (after the graph passes of the pipeline)."""
        return self._driver.compilation.module("graph")

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels whose IR ``ir`` returns, highest first."""
        return self.compilation.levels

    def ir(self, level: str = "graph", *, locations: bool = False) -> str:
        """The IR text at ``level`` (graph, fusion, loop, memory, triton);
        with ``locations``, each op's ``loc(file:line:col)`` of the Python
        line that made it."""
        return self._record_at(level).ir(level, locations=locations)

    def module_at(self, level: str = "graph") -> ModuleOp:
        """A copy of the module at ``level``, as ``ir(level)`` prints it."""
        return self._record_at(level).module(level).clone()

    def _record_at(self, level: str) -> Compilation:
        """The record, lowered unless ``level`` is the graph level."""
        if level == "graph":
            return self._driver.compilation
        return self._driver.lowered()

    def save(self, path: str | Path) -> Path:
        """Write this compilation as a self-contained artefact directory
        (``irc.artifact``): the emitted module, the IR of every level, a
        manifest and a loader that runs it with only torch and Triton
        installed; ``irc.load(path)`` restores it."""
        return artifact.save(self._driver.emitted(), path)

    def show(
        self, path: str | Path | None = None, *, browser: bool = False
    ) -> Path | None:
        """The picture and the IR of every level (``irc.viz.show``): inline
        in Jupyter (returning None); elsewhere an HTML file written to
        ``path`` (a temporary file by default), its path printed and
        returned, and opened in a web browser if ``browser``."""
        return viz.show(self.compilation, path, browser=browser)

    def _repr_html_(self) -> str:
        """Jupyter's rich view: the picture, the kernels and each level's IR."""
        return viz.to_html(self.compilation)

    @property
    def triton_source(self) -> str:
        """The emitted Python module: ``@triton.jit`` kernels and a launcher."""
        source = self._driver.emitted().source
        assert source is not None
        return source

    @property
    def num_kernels(self) -> int:
        """The kernel launches per call; an ``IrcError`` when their number
        depends on the call's sizes or data (host loops and branches: read
        ``launches``)."""
        return self.compilation.num_kernels

    @property
    def launches(self) -> Launches:
        """The kernel launches per call as an expression over the symbols
        and the counts only the data decides (a host while loop's
        iterations), with what each of those counts."""
        return self.compilation.launches

    @property
    def launch_sites(self) -> int:
        """The launches the host function holds: those of straight-line
        code, of one host loop iteration, of both sides of a branch."""
        return self.compilation.launches.sites

    def launch_configurations(
        self, backend: str = "auto"
    ) -> dict[str, dict[tuple[int, ...], tuple[int, ...]]]:
        """What each kernel was launched with so far on ``backend``
        (``"triton"`` or ``"interpret"``; ``"auto"`` as a call picks it), per
        bucket of its sizes: the sizes of the tiles its launch chooses, then
        its warps and stages (docs/lowering.md, "Launch configurations")."""
        from irc.runtime import triton_backend

        return triton_backend.launch_configurations(self._loaded(backend))

    def share_launch_configurations(self, backend: str = "auto") -> None:
        """Make every rank of this ``torch.distributed`` job launch the
        kernels as rank 0 decided so far (a collective: every rank calls
        it), so that ranks whose tuning directories differ choose alike."""
        from irc.runtime import triton_backend

        triton_backend.share_launch_configurations(self._loaded(backend))

    def _loaded(self, backend: str) -> Any:
        """The emitted module as ``backend`` (a Triton one) runs it."""
        from irc.runtime import triton_backend
        from irc.runtime.calls import auto_backend

        chosen = auto_backend() if backend == "auto" else backend
        if chosen not in ("triton", "interpret"):
            raise IrcError(
                f"launch configurations are those of the Triton backends "
                f"('triton', 'interpret'), not of {backend!r}"
            )
        return triton_backend.load_source(
            self.triton_source, interpret=chosen == "interpret"
        )

    def __call__(self, *args: Any, backend: str = "auto", **kwargs: Any) -> Any:
        """Run on arrays (NumPy arrays give NumPy results, torch tensors
        torch ones). ``backend`` is ``"triton"`` (a GPU), ``"interpret"``
        (Triton's interpreter), ``"reference"`` (NumPy) or ``"auto"``, the
        first of them available when this object is first called."""
        call = self._calls.get(backend)
        if call is None:
            call = self._caller.bind(backend)
        return call(args, kwargs)


def load(path: str | Path) -> Compiled:
    """The compilation saved at ``path`` (``Compiled.save``), restored."""
    return Compiled.from_stored(*artifact.read(path))


def compile(
    function: Callable[..., Any],
    *args: Any,
    facts: Iterable[str] = (),
    pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
    matmul_precision: str | None = None,
    mixed_precision: str | None = None,
    debug_nans: bool | None = None,
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

    ``debug_nans=True`` (None: the environment variable ``IRC_DEBUG_NANS``)
    checks every call's outputs: a NaN or an infinity raises
    ``irc.NonFiniteError`` naming the op that first made one from finite
    operands, found by replaying the call on the graph level
    (docs/debugging.md, "NaN and Inf hunting").
    """
    parsed = with_mixed_precision(Pipeline.parse(pipeline), mixed_precision)
    parsed = _with_matmul_precision(parsed, matmul_precision)
    return Compiled(capture(function, args, kwargs, facts), parsed, debug_nans)


def _with_matmul_precision(pipeline: Pipeline, precision: str | None) -> Pipeline:
    """``pipeline`` with ``precision`` as every ``tile`` pass's
    ``matmul-precision`` (unchanged for None)."""
    from irc.dialects.kernel_kind import MatmulPrecision
    from irc.lowering.fusion_to_loop import TilePass

    if precision is None:
        return pipeline
    if precision not in set(MatmulPrecision):
        raise IrcError(
            f"matmul_precision={precision!r} is not one of "
            f'{", ".join(repr(str(p)) for p in MatmulPrecision)}; pass "ieee" '
            'for IEEE float32 matmuls (the default) or "tf32" for TF32 tensor cores'
        )
    if not any(isinstance(p, TilePass) for p in pipeline.passes):
        raise IrcError(
            f"matmul_precision={precision!r} sets the tile pass's matmul-precision "
            "option, but the pipeline has no tile pass; add "
            f"tile{{matmul-precision={precision}}} to the pipeline instead"
        )
    return pipeline.with_options(TilePass, matmul_precision=precision)


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


def with_mixed_precision(pipeline: Pipeline, mixed_precision: str | None) -> Pipeline:
    """``pipeline`` with ``auto-mixed-precision`` (and a ``canonicalize``
    that folds its casts of constants) after its graph passes; the same
    pipeline for ``mixed_precision=None``."""
    low = low_float_name(mixed_precision)
    if low is None:
        return pipeline
    from xdsl.transforms.canonicalize import CanonicalizePass

    from irc.passes.auto_mixed_precision import AutoMixedPrecisionPass

    return pipeline.with_graph_passes(
        AutoMixedPrecisionPass(dtype=low), CanonicalizePass()
    )


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
        debug_nans: bool | None = None,
    ):
        functools.update_wrapper(self, function)
        self.function = function
        self.dims = dict(dims or {})
        self.facts = tuple(facts)
        self.pipeline = pipeline
        self.matmul_precision = matmul_precision
        self.mixed_precision = low_float_name(mixed_precision)
        self.debug_nans = debug_nans
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
                        debug_nans=self.debug_nans,
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

    @property
    def launches(self) -> Launches:
        """The launches per call of the most recent compilation, as an
        expression (``Compiled.launches``)."""
        return self.latest.launches

    @property
    def launch_sites(self) -> int:
        """The launches the most recent compilation's host function holds."""
        return self.latest.launch_sites


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
                if not same_static(value, leaf[1]):
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
    if is_nan(leaf):  # every NaN is one key, as ``same_static`` says
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
    debug_nans: bool | None = None,
) -> Any:
    """Decorator: ``@irc.jit`` or ``@irc.jit(dims={"x": ("N", None)})``;
    ``matmul_precision``, ``mixed_precision`` and ``debug_nans`` as
    ``irc.compile`` takes them."""
    options = (matmul_precision, mixed_precision, debug_nans)
    if function is None:
        return lambda f: Jitted(f, dims, facts, pipeline, *options)
    return Jitted(function, dims, facts, pipeline, *options)
