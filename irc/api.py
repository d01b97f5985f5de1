"""irc's public Python API: ``trace``, ``compile`` and ``jit``."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from irc import pytree
from irc.capture import Captured, TensorSpec, capture
from irc.errors import BindingError, IrcError
from irc.ir import print_module
from irc.runtime.arrays import is_torch_tensor, to_numpy, to_torch

#: What ``irc.compile`` runs on the captured graph before anything else.
DEFAULT_GRAPH_PIPELINE = "canonicalize,cse"

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
    """A compiled function: its IR at every level, callable on arrays."""

    def __init__(self, captured: Captured, pipeline: str | Sequence[ModulePass]):
        from irc.ir import default_context

        self.captured = captured
        self._levels: dict[str, ModuleOp] = {}
        module = captured.module.clone()
        _run_pipeline(default_context(), module, pipeline)
        self._levels["graph"] = module

    @property
    def module(self) -> ModuleOp:
        """The graph-level module (after the graph pipeline)."""
        return self._levels["graph"]

    def ir(self, level: str = "graph", *, locations: bool = False) -> str:
        """The IR text at ``level``; with ``locations``, each op's
        ``loc(file:line:col)`` of the Python line that made it."""
        if level not in self._levels:
            known = ", ".join(repr(k) for k in self._levels)
            raise IrcError(f"no IR at level {level!r}; available levels: {known}")
        return print_module(self._levels[level], locations=locations)

    def __call__(self, *args: Any, backend: str = "auto", **kwargs: Any) -> Any:
        if backend not in BACKENDS:
            raise IrcError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        if backend in ("triton", "interpret"):
            raise IrcError(
                f"the {backend!r} backend needs the lowering to Triton, which this "
                "version of irc does not have yet; use backend='reference'"
            )
        arrays, to_caller = self._bind_arguments(args, kwargs)
        from irc.interpreters.graph import run_graph

        outputs = run_graph(self.module, arrays, self.captured.function_name)
        return pytree.unflatten(self.captured.out_tree, [to_caller(o) for o in outputs])

    def _bind_arguments(
        self, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> tuple[list[np.ndarray], Callable[[np.ndarray], Any]]:
        """The tensor inputs as NumPy arrays, after checking the call's
        structure and static values against the compiled ones."""
        captured = self.captured
        leaves, in_tree = pytree.flatten((list(args), dict(kwargs)))
        if in_tree != captured.in_tree:
            raise BindingError(
                "the arguments' structure differs from the one compiled: expected "
                f"{captured.in_tree}, got {in_tree}"
            )
        arrays: list[np.ndarray] = []
        any_torch = False
        for index, (leaf, name) in enumerate(zip(leaves, captured.leaf_names)):
            if index in captured.static_leaves:
                _check_static(name, leaf, captured.static_leaves[index])
                continue
            if isinstance(leaf, TensorSpec):
                raise BindingError(f"argument {name!r} is a TensorSpec; pass an array")
            any_torch |= is_torch_tensor(leaf)
            arrays.append(to_numpy(leaf, name))
        return arrays, to_torch if any_torch else (lambda array: array)


def _run_pipeline(
    ctx: Context, module: ModuleOp, pipeline: str | Sequence[ModulePass]
) -> None:
    from irc.passes.registry import get_all_passes

    if isinstance(pipeline, str):
        if not pipeline:
            return
        try:
            passes = PassPipeline.parse_spec(get_all_passes(), pipeline).passes
        except (Exception, ArgSpecParseError) as err:
            raise IrcError(f"invalid pass pipeline {pipeline!r}: {err}") from None
    else:
        passes = tuple(pipeline)
    PassPipeline(tuple(passes)).apply(ctx, module)


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
        return value.dtype == expected.dtype and np.array_equal(value, expected)
    try:
        return bool(value == expected)
    except (TypeError, ValueError):  # an ``==`` that is not a truth value
        return value is expected


def compile(
    function: Callable[..., Any],
    *args: Any,
    facts: Iterable[str] = (),
    pipeline: str | Sequence[ModulePass] = DEFAULT_GRAPH_PIPELINE,
    **kwargs: Any,
) -> Compiled:
    """Capture ``function`` (see ``trace``) and compile it.

    ``pipeline`` is run on the graph module: a pass pipeline as ``irc-opt -p``
    takes it, or a list of ``ModulePass`` instances.
    """
    return Compiled(capture(function, args, kwargs, facts), pipeline)


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
        pipeline: str | Sequence[ModulePass] = DEFAULT_GRAPH_PIPELINE,
    ):
        functools.update_wrapper(self, function)
        self.function = function
        self.dims = dict(dims or {})
        self.facts = tuple(facts)
        self.pipeline = pipeline
        self.cache: dict[Any, Compiled] = {}

    def __call__(self, *args: Any, backend: str = "auto", **kwargs: Any) -> Any:
        bound = self._bind(args, kwargs)
        specs = {
            name: _spec_tree(value, self.dims.get(name), name)
            for name, value in bound.arguments.items()
        }
        spec_call = inspect.BoundArguments(bound.signature, specs)  # type: ignore[arg-type]
        key = _cache_key(spec_call.args, spec_call.kwargs)
        compiled = self.cache.get(key)
        if compiled is None:
            compiled = compile(
                self.function,
                *spec_call.args,
                facts=self.facts,
                pipeline=self.pipeline,
                **spec_call.kwargs,
            )
            self.cache[key] = compiled
        # The compiled function takes the call in the structure it was
        # compiled from: parameters bound by name or position alike.
        return compiled(*bound.args, backend=backend, **bound.kwargs)

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

    def ir(self, level: str = "graph", *, locations: bool = False) -> str:
        """The IR of the most recent compilation."""
        if not self.cache:
            raise IrcError("nothing compiled yet: call the function first")
        return next(reversed(self.cache.values())).ir(level, locations=locations)


def _spec_tree(value: Any, dims: Any, path: str) -> Any:
    """Arrays in ``value`` become TensorSpecs, named by ``dims``."""
    if isinstance(value, dict):
        if dims is not None and not isinstance(dims, Mapping):
            raise IrcError(f"dims for {path!r} must be a dict, as the argument is")
        return {
            k: _spec_tree(v, (dims or {}).get(k), f"{path}.{k}")
            for k, v in value.items()
        }
    if isinstance(value, list | tuple) and not _is_array(value):
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
    pipeline: str | Sequence[ModulePass] = DEFAULT_GRAPH_PIPELINE,
) -> Any:
    """Decorator: ``@irc.jit`` or ``@irc.jit(dims={"x": ("N", None)})``."""
    if function is None:
        return lambda f: Jitted(f, dims, facts, pipeline)
    return Jitted(function, dims, facts, pipeline)
