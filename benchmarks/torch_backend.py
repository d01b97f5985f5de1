"""The torch backend against TorchInductor on the Hugging Face models of
``irc.testing.models``: one training step (forward, backward, SGD) per model.

For each model and backend, in a fresh process (caches off):

- ``compile_s``: the first step's seconds less a later step's, that is
  Dynamo, AOTAutograd and the backend's compilation of the forward and the
  backward;
- ``kernels``: the kernels one step launches: irc's ``num_kernels`` of the
  forward and backward it compiled, Inductor's generated kernels (C++ on a
  CPU, Triton on a GPU);
- ``graph_breaks``: Dynamo's graph breaks;
- ``fallback_ops``: for irc, the ATen ops that ran eagerly;
- ``compilations``: irc's compilations over two steps at different sizes
  (one per graph: the second size reuses them).

irc runs its kernels on its reference interpreter here (``runtime``), so
its step time is not a kernel speed: see ``gpu.py`` for speed on a GPU.

With ``--partition``, per model, the training step AOTAutograd partitions
(a forward and a backward graph, both compiled by irc) against irc's own
``irc.value_and_grad`` of the model's inference graph with respect to its
parameters (one joint program, which irc's fusion sees whole), at the
first of ``SIZES``: the kernels a step launches, and the bytes of the
activations the backward reads (AOTAutograd's saved tensors less its
parameters; irc's counted as ``autodiff.py`` counts them). irc's loss and
gradients are checked against eager's first. A model whose graph breaks
split its loss over several graphs (GPT-2) has no irc-autodiff row.

    python benchmarks/torch_backend.py                 # every model, both backends
    python benchmarks/torch_backend.py --only gpt2 --json out.json
    python benchmarks/torch_backend.py --partition     # AOTAutograd against irc autodiff
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from autodiff import saved_for_backward, tensor_bytes  # benchmarks/autodiff.py

BACKENDS = ("irc", "inductor")


def measure(name: str, backend: str) -> dict[str, Any]:
    """In this (fresh) process: one model's numbers for one backend."""
    import torch

    import irc.torch
    from irc.testing.models import SIZES, build, example, loss

    model = build(name, head=True).train()
    if backend == "irc":
        compiled = torch.compile(
            model, backend="irc", dynamic=True, options={"runtime": "reference"}
        )
    else:
        compiled = torch.compile(model, dynamic=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(batch: int, sequence: int) -> float:
        begin = time.perf_counter()
        loss(compiled, example(name, batch, sequence)).backward()
        optimizer.step()
        optimizer.zero_grad()
        return time.perf_counter() - begin

    first = step(*SIZES[0])
    step(*SIZES[1])
    steady = min(step(*SIZES[0]) for _ in range(3))
    graph_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    if backend == "irc":
        kernels = irc.torch.counters["kernels"]
        extra = {
            "fallback_ops": sum(irc.torch.fallback_ops.values()),
            "compilations": irc.torch.counters["compilations"],
        }
    else:
        from torch._inductor import metrics

        kernels, extra = metrics.generated_kernel_count, {}
    return {
        "model": name,
        "backend": backend,
        "compile_s": round(first - steady, 2),
        "step_s": round(steady, 3),
        "kernels": kernels,
        "graph_breaks": graph_breaks,
        **extra,
    }


def measure_partition(name: str) -> dict[str, Any]:
    """In this (fresh) process: one model's training step as AOTAutograd
    partitions it (a forward and a backward graph, each compiled by irc)
    against irc's own ``value_and_grad`` of the whole loss (one joint
    program), at ``SIZES[0]``: kernels per step and the bytes of the
    activations the backward reads (parameters and inputs not counted)."""
    from irc.testing.models import SIZES, build, example, loss

    model = build(name, head=True).train()
    ids = example(name, *SIZES[0])

    def step(ids: Any) -> Any:
        return loss(model, ids)

    return {
        "model": name,
        "aot_autograd": _aot_partition(step, ids),
        "irc_autodiff": _irc_autodiff(step, ids, model),
    }


def _aot_partition(step: Callable[[Any], Any], ids: Any) -> dict[str, int]:
    """Kernels and saved-activation bytes of ``step``'s forward and
    backward graphs as AOTAutograd partitions them, compiled by irc. A
    saved view of an input (a transposed weight) is no activation: it is not
    counted."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    import irc.torch
    from irc.torch.compiler import Options, compile_graph, decompositions

    options = Options(runtime="reference")
    input_views: set[str] = set()
    saved: list[int] = []

    def forward_compiler(gm: Any, example_inputs: Any) -> Any:
        input_views.update(_views_of_inputs(gm))
        return compile_graph(gm, example_inputs, options)

    def backward_compiler(gm: Any, example_inputs: Any) -> Any:
        for node in gm.graph.nodes:
            if node.op != "placeholder" or node.name in input_views:
                continue
            value = node.meta["val"]
            if not node.name.startswith("tangents") and isinstance(value, torch.Tensor):
                saved.append(_hint(value.numel()) * value.element_size())
        return compile_graph(gm, example_inputs, options)

    partitioned = aot_autograd(
        fw_compiler=forward_compiler,
        bw_compiler=backward_compiler,
        decompositions=decompositions(),
    )
    torch.compile(step, backend=partitioned, dynamic=True)(ids).backward()
    return {"kernels": irc.torch.counters["kernels"], "saved_bytes": sum(saved)}


def _views_of_inputs(gm: Any) -> set[str]:
    """The names of ``gm``'s inputs and of the nodes that are views of them
    (the backward graph's placeholders are named after the forward's nodes
    it saves)."""
    import torch

    views = {"view", "_unsafe_view", "permute", "t", "transpose", "expand", "alias"}
    views |= {"unsqueeze", "squeeze", "slice", "select"}
    names: set[str] = set()
    for node in gm.graph.nodes:
        if node.op == "placeholder" or (
            isinstance(node.target, torch._ops.OpOverload)
            and node.target.overloadpacket.__name__ in views
            and getattr(node.args[0], "name", None) in names
        ):
            names.add(node.name)
    return names


def _irc_autodiff(
    step: Callable[[Any], Any], ids: Any, model: Any
) -> dict[str, Any] | None:
    """Kernels and saved-activation bytes of ``irc.value_and_grad`` of
    ``step``'s inference graph with respect to the parameters, its loss and
    gradients checked against eager's; None where graph breaks split the
    loss over several graphs."""
    import torch
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    import irc
    from irc.api import DEFAULT_PIPELINE
    from irc.torch.compiler import _shape_env, decompositions
    from irc.torch.importer import FxFunction

    graphs: list[tuple[FxFunction, list[Any]]] = []

    def record(gm: Any, real_inputs: Any) -> Any:
        def forward(inference: Any, inputs: Any) -> Any:
            graphs.append((FxFunction(inference, inputs, _shape_env()), real_inputs))
            return make_boxed_func(inference.forward)

        return aot_autograd(fw_compiler=forward, decompositions=decompositions())(
            gm, real_inputs
        )

    with torch.no_grad():
        torch.compile(step, backend=record, dynamic=True)(ids)
    if len(graphs) != 1:
        return None
    ((function, real_inputs),) = graphs
    arguments = function.tensor_arguments(real_inputs)
    argnums = tuple(
        position
        for position, argument in enumerate(arguments)
        if argument.requires_grad
    )

    def step_loss(*arguments: Any) -> Any:
        return function(*arguments)[0]

    step_loss.__signature__ = function.__signature__  # type: ignore[attr-defined]
    specs, facts = function.specs, function.facts
    joint = irc.compile(irc.value_and_grad(step_loss, argnums), *specs, facts=facts)
    value, gradients = joint(*(a.detach() for a in arguments), backend="reference")
    model.zero_grad(set_to_none=True)  # the partitioned step's gradients
    expected = step(ids)
    expected.backward()
    torch.testing.assert_close(torch.as_tensor(value), expected.detach())
    for position, gradient in zip(argnums, gradients):
        torch.testing.assert_close(
            torch.as_tensor(gradient), arguments[position].grad, rtol=1e-4, atol=1e-5
        )
    wrt = ",".join(map(str, argnums))
    pipeline = f"autodiff{{wrt={wrt}}},{DEFAULT_PIPELINE}"
    vjp = irc.compile(step_loss, *specs, facts=facts, pipeline=pipeline)
    sizes = dict(zip(("ids_dim0", "ids_dim1"), ids.shape))
    saved = sum(tensor_bytes(t, sizes) for t in saved_for_backward(vjp))
    return {"kernels": joint.num_kernels, "saved_bytes": saved}


def _hint(size: Any) -> int:
    """A size's value at the sizes traced (a ``SymInt``'s hint)."""
    return int(size.node.hint) if hasattr(size, "node") else int(size)


def run_child(name: str, kind: str) -> dict[str, Any]:
    """``measure(name, kind)`` (``measure_partition(name)`` for the kind
    ``partition``) in a fresh process, the compile caches off."""
    with tempfile.TemporaryDirectory() as cache:
        env = {
            **os.environ,
            "TORCHINDUCTOR_CACHE_DIR": cache,
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
            "IRC_CACHE": "0",
        }
        done = subprocess.run(
            [sys.executable, __file__, "--child", name, kind],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        return {"model": name, "backend": kind, "error": done.stderr[-400:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def backends_table(rows: list[dict[str, Any]]) -> str:
    columns = ("model", "backend", "compile_s", "step_s", "kernels", "graph_breaks")
    lines = [" | ".join((*columns, "fallback_ops", "compilations"))]
    for row in rows:
        if "error" in row:
            lines.append(f"{row['model']} | {row['backend']} | error: {row['error']}")
            continue
        cells = [str(row.get(c, "")) for c in columns]
        cells += [str(row.get("fallback_ops", "-")), str(row.get("compilations", "-"))]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def partition_table(rows: list[dict[str, Any]]) -> str:
    lines = ["model | AOTAutograd kernels | saved KB | irc autodiff kernels | saved KB"]
    for row in rows:
        if "error" in row:
            lines.append(f"{row['model']} | error: {row['error']}")
            continue
        aot, own = row["aot_autograd"], row["irc_autodiff"]
        cells = [row["model"], str(aot["kernels"]), f"{aot['saved_bytes'] / 1e3:.1f}"]
        if own is None:
            cells += ["- (graph breaks)", "-"]
        else:
            cells += [str(own["kernels"]), f"{own['saved_bytes'] / 1e3:.1f}"]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    from irc.testing.models import MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(MODELS))
    parser.add_argument(
        "--partition",
        action="store_true",
        help="AOTAutograd's partition against irc's own autodiff instead",
    )
    parser.add_argument("--json", help="write the rows to this file")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        name, kind = args.child
        row = measure_partition(name) if kind == "partition" else measure(name, kind)
        print(json.dumps(row))
        return
    names = args.only or MODELS
    if args.partition:
        rows = [run_child(name, "partition") for name in names]
        print(partition_table(rows))
    else:
        rows = [run_child(name, kind) for name in names for kind in BACKENDS]
        print(backends_table(rows))
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=1)


if __name__ == "__main__":
    main()
