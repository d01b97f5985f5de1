"""``torch.compile(model, backend="irc")``: irc as a Dynamo backend.

Dynamo hands the backend an FX graph of torch ops; AOTAutograd
(``aot_autograd``) turns it into ATen graphs, the forward and, when a
parameter needs a gradient, the backward it partitions off, after torch's
core ATen decompositions minus the ops irc fuses better whole (softmax,
log_softmax, layer norm, GELU, embedding: :data:`KEPT_WHOLE`). Each graph
becomes an :class:`~irc.torch.importer.FxFunction` and is compiled by
``irc.compile`` once: its sizes are Dynamo's symbols, so one compilation
serves every size Dynamo's guards admit.

A graph with ops irc does not convert is split into islands of converted
ops, each compiled by irc, and the rest, which torch runs eagerly (as the
``onnxrt`` and TensorRT backends do); ``IRC_LOGS=torch`` lists what fell
back and why.

Options (``torch.compile(..., options={...})``):

- ``runtime``: where the kernels run: ``"auto"`` (the default: the GPU for
  CUDA tensors, Triton's interpreter for CPU ones), ``"triton"``,
  ``"interpret"`` or ``"reference"`` (irc's NumPy interpreter);
- ``pipeline``: the pass pipeline, as ``irc.compile`` takes it;
- ``mixed_precision``: ``"bf16"`` or ``"f16"`` (docs/mixed-precision.md);
- ``fallback``: False to raise on an op irc does not convert instead of
  running it eagerly;
- ``debug_nans``: True to raise ``irc.NonFiniteError`` on a NaN or an
  infinity in an irc graph's outputs, as ``irc.compile`` takes it (None, the
  default: ``IRC_DEBUG_NANS``).
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from irc.api import DEFAULT_PIPELINE
from irc.errors import IrcError
from irc.logs import active_topics, ensure_handler, logger
from irc.torch.aten import UnsupportedAtenOp
from irc.torch.importer import (
    FxFunction,
    describe,
    is_supported,
    pinned_sizes,
    unsupported_ops,
)

#: What irc compiled since the process started (or ``counters.clear()``):
#: ``graphs`` (ATen graphs handed over), ``compilations`` (irc
#: compilations) and the ``kernels`` they launch per call; ``fallback_ops``
#: counts the ops run eagerly, by name.
counters: Counter[str] = Counter()
fallback_ops: Counter[str] = Counter()

RUNTIMES = ("auto", "triton", "interpret", "reference")

#: Serialises the compilations of islands and the counters' updates: Dynamo
#: compiles one frame at a time, but an island compiled for a new value of
#: a pinned integer input (``_island``) compiles when it is called, and
#: threads may call it at once (a ``Counter``'s ``+=`` is not atomic).
_COMPILING = threading.RLock()


@dataclass(frozen=True)
class Options:
    runtime: str = "auto"
    pipeline: Any = DEFAULT_PIPELINE
    mixed_precision: str | None = None
    fallback: bool = True
    debug_nans: bool | None = None

    @classmethod
    def parse(cls, options: Mapping[str, Any] | None) -> Options:
        options = dict(options or {})
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(options) - known)
        if unknown:
            raise IrcError(
                f"unknown irc backend option(s) {', '.join(unknown)}; the options "
                f"are: {', '.join(sorted(known))}"
            )
        parsed = cls(**options)
        if parsed.runtime not in RUNTIMES:
            raise IrcError(
                f"runtime={parsed.runtime!r}: expected one of {', '.join(RUNTIMES)}"
            )
        return parsed


def backend(
    gm: Any,
    example_inputs: Sequence[Any],
    options: Mapping[str, Any] | None = None,
    mode: str | None = None,
) -> Callable[..., Any]:
    """The Dynamo backend: ``torch.compile(model, backend=irc.torch.backend)``
    (or ``backend="irc"``). ``options`` are the module doc's; ``mode``
    (Inductor's autotuning levels) has no meaning for irc and is ignored."""
    from torch._dynamo.backends.common import aot_autograd

    parsed = Options.parse(options)
    compiler = functools.partial(compile_graph, options=parsed)
    return aot_autograd(
        fw_compiler=compiler,
        bw_compiler=compiler,
        decompositions=decompositions(),
    )(gm, example_inputs)


#: The ATen ops the decompositions leave whole: irc recognises their fused
#: forms (a softmax row kernel, layer norm's) or gathers them directly.
KEPT_WHOLE = (
    "_softmax",
    "_log_softmax",
    "native_layer_norm",
    "gelu",
    "embedding",
    "silu",
    # Its decomposition feeds the fused backward a wrong logsumexp (torch
    # 2.13, dynamic shapes: GPT-2's gradients differ from eager's); kept
    # whole, the forward and its backward are converted as attention.
    "_scaled_dot_product_flash_attention_for_cpu",
)


@functools.cache
def decompositions() -> dict[Any, Callable[..., Any]]:
    """torch's core ATen decompositions, less :data:`KEPT_WHOLE`."""
    import torch
    from torch._decomp import core_aten_decompositions

    table = dict(core_aten_decompositions())
    for name in KEPT_WHOLE:
        packet = getattr(torch.ops.aten, name)
        for overload in packet.overloads():
            table.pop(getattr(packet, overload), None)
    return table


def compile_graph(
    gm: Any, example_inputs: Sequence[Any], options: Options = Options()
) -> Callable[..., Any]:
    """AOTAutograd's ``fw_compiler``/``bw_compiler``: an ATen graph as a
    boxed callable, irc's islands compiled and the rest eager."""
    from functorch.compile import make_boxed_func

    with _COMPILING:
        counters["graphs"] += 1
    rejected: frozenset[str] = frozenset()
    if not unsupported_ops(gm):
        try:
            return make_boxed_func(_island(gm, example_inputs, options))
        except UnsupportedAtenOp as error:  # a form of an op irc does not take
            if error.node is None or not options.fallback:
                raise
            rejected = frozenset({error.node})
            _log(f"{error.node} runs eagerly: {error}")
    missing = unsupported_ops(gm, rejected)
    if not options.fallback:
        raise IrcError(
            "irc does not convert "
            + ", ".join(f"{op} ({n}x)" for op, n in missing.items())
            + "; fallback=False forbids running them eagerly"
        )
    for op, count in missing.items():
        fallback_ops[op] += count
    _log(
        "falling back to eager torch for "
        + ", ".join(f"{op} ({n}x)" for op, n in sorted(missing.items()))
        + ": irc does not convert them"
    )
    return make_boxed_func(_partitioned(gm, options, rejected))


def _island(
    gm: Any, example_inputs: Sequence[Any], options: Options, part: str = ""
) -> Callable[..., Any]:
    """One graph irc converts whole, compiled once, or once per value of
    its pinned integer inputs (:func:`~irc.torch.importer.pinned_sizes`)."""
    shape_env = _shape_env()
    pinned = pinned_sizes(example_inputs, shape_env)
    name = f"torch_graph_{counters['graphs']}{'_' + part if part else ''}"
    cache: dict[tuple[int, ...], tuple[FxFunction, Any]] = {}

    def compiled_for(values: tuple[int, ...]) -> tuple[FxFunction, Any]:
        found = cache.get(values)
        if found is not None:
            return found
        with _COMPILING:  # once per value, whichever thread asks first
            return compile_for(values)

    def compile_for(values: tuple[int, ...]) -> tuple[FxFunction, Any]:
        if values not in cache:
            symbols = {example_inputs[i].node.expr: v for i, v in zip(pinned, values)}
            function = FxFunction(gm, example_inputs, shape_env, name, symbols)
            try:
                compiled = function.compile(
                    options.pipeline,
                    mixed_precision=options.mixed_precision,
                    debug_nans=options.debug_nans,
                )
            except UnsupportedAtenOp as error:
                raise UnsupportedAtenOp(str(error), function.failed_node) from None
            if options.runtime != "reference":
                # Emitted here, under the lock, rather than by the first
                # calls, which threads may make at once.
                _ = compiled.triton_source
            counters["compilations"] += 1
            counters["kernels"] += compiled.num_kernels
            _log(f"compiled {name}: {compiled.num_kernels} kernel(s)")
            cache[values] = function, compiled
        return cache[values]

    compiled_for(tuple(int(example_inputs[i].node.hint) for i in pinned))

    def run(*inputs: Any) -> Any:
        function, compiled = compiled_for(tuple(int(inputs[i]) for i in pinned))
        # AOTAutograd differentiates the graph itself (its backward is the
        # next graph): the tensors' autograd history is not irc's to keep.
        tensors = [t.detach() for t in function.tensor_arguments(inputs)]
        outputs = compiled(*tensors, backend=_runtime(options.runtime, tensors))
        if not isinstance(outputs, tuple | list):
            outputs = (outputs,)
        results = function.assemble(inputs, outputs)
        return results if function.returns_tuple else results[0]

    run.__name__ = name
    return run


def _partitioned(
    gm: Any, options: Options, rejected: frozenset[str] = frozenset()
) -> Callable[..., Any]:
    """``gm`` with its converted ops fused into submodules that irc
    compiles; the others stay torch calls."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    class Supported(OperatorSupport):
        def is_node_supported(self, submodules: Any, node: Any) -> bool:
            return (
                node.op == "call_function"
                and is_supported(node)
                and node.name not in rejected
            )

    partitioner = CapabilityBasedPartitioner(
        gm, Supported(), allows_single_node_partition=False
    )
    fused = partitioner.fuse_partitions(partitioner.propose_partitions())
    for node in list(fused.graph.nodes):
        if node.op != "call_module":
            continue
        submodule = getattr(fused, node.target)
        examples = [
            n.meta["val"] for n in submodule.graph.nodes if n.op == "placeholder"
        ]
        try:
            island = _island(submodule, examples, options, node.target)
        except UnsupportedAtenOp as error:  # e.g. a size no input tensor has
            _log(f"{node.target} runs eagerly: {error}")
            continue
        fused.delete_submodule(node.target)
        node.op, node.target = "call_function", island
    fused.recompile()
    return fused


def _runtime(runtime: str, tensors: Sequence[Any]) -> str:
    """Where a call runs: the GPU for CUDA tensors, else Triton's
    interpreter (whatever mode ``torch._dynamo``'s import of triton set:
    ``irc.runtime.triton_backend`` interprets either way)."""
    if runtime != "auto":
        return runtime
    if any(getattr(t, "is_cuda", False) for t in tensors):
        return "triton"
    return "interpret"


def _shape_env() -> Any | None:
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    if context is None or context.fake_mode is None:
        return None
    return context.fake_mode.shape_env


def _log(message: str) -> None:
    if "torch" in active_topics():
        ensure_handler()
        logger("torch").info("%s", message)


def coverage(model: Any, *inputs: Any, dynamic: bool = True) -> Coverage:
    """The ATen ops of ``model(*inputs)`` as irc would receive them, and which
    irc converts, without compiling anything (the model runs once, through
    Dynamo and AOTAutograd, on its inputs)."""
    import torch

    seen: Counter[str] = Counter()
    missing: Counter[str] = Counter()

    def record(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        from functorch.compile import make_boxed_func

        for node in gm.graph.nodes:
            if node.op == "call_function":
                label = describe(node.target)
                seen[label] += 1
                if not is_supported(node):
                    missing[label] += 1
        return make_boxed_func(gm.forward)

    from torch._dynamo.backends.common import aot_autograd

    recorder = aot_autograd(
        fw_compiler=record, bw_compiler=record, decompositions=decompositions()
    )
    torch._dynamo.reset()
    try:
        torch.compile(model, backend=recorder, dynamic=dynamic)(*inputs)
    finally:
        torch._dynamo.reset()
    return Coverage(dict(seen), dict(missing))


@dataclass(frozen=True)
class Coverage:
    """A model's ATen ops (with counts) and those irc does not convert."""

    ops: dict[str, int]
    unsupported: dict[str, int]

    @property
    def covered(self) -> dict[str, int]:
        return {op: n for op, n in self.ops.items() if op not in self.unsupported}

    def __str__(self) -> str:
        lines = [
            f"{len(self.ops)} ATen op(s), {len(self.covered)} covered, "
            f"{len(self.unsupported)} not"
        ]
        lines += [
            f"  not covered: {op} ({n}x)" for op, n in sorted(self.unsupported.items())
        ]
        return "\n".join(lines)
