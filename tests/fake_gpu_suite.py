"""Every suite program called on the ``triton`` backend through Triton's real
JIT launch path, under ``irc.testing.fake_driver`` (no GPU needed).

Each program is called the way a user calls it, ``compiled(*tensors,
backend="triton")``, at every binding of ``SIZES``, twice: the first call
binds, specialises (16-byte aligned pointers, sizes equal to 1, multiples of
16) and compiles every kernel for an H100 with Triton's compiler and ptxas;
the second must find them all in Triton's cache. The fake driver records the
launches instead of running them, so results hold no values, but their
shapes and dtypes are the launcher's.

Triton fixes when it is imported whether a process interprets or compiles
kernels, and the test process interprets, so this file is a script run in a
subprocess (``tests/conftest.py``'s ``fake_gpu_report`` fixture): it writes a
JSON report that ``test_gpu_launch.py`` and ``test_h100_compile.py`` check.
Triton caches binaries on disk (``TRITON_CACHE_DIR``), so a second run
mostly reads them back.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from suite_programs import SIZES, SUITE
from xdsl.dialects.builtin import ModuleOp

import irc
from irc import pytree
from irc.api import DEFAULT_PIPELINE
from irc.backend.triton.kernel import launch_tile_extents
from irc.backend.triton.names import identifier
from irc.dialects import memory
from irc.dialects import triton as tt
from irc.ir import parse_module
from irc.testing.fake_driver import FakeCudaDriver, compiled_kernels, fake_cuda

#: A global load of 2 or 4 elements at once (``ld.global.v4.b32``...).
VECTOR_LOAD = re.compile(r"\bld\.global(?:\.\w+)*\.v[24]\.")
SCALAR_LOAD = re.compile(r"\bld\.global(?![\w.]*\.v[24]\.)[\w.]*\s")
ELF_MAGIC = b"\x7fELF"
#: Tensor-core instructions: Hopper's asynchronous warpgroup MMA, or the
#: warp-level MMA of earlier GPUs (which Triton also emits on sm_90).
WGMMA = re.compile(r"\bwgmma\.mma_async\b")
MMA = re.compile(r"\bmma\.sync\b")


def run_compiling(arguments: list[str], timeout: int) -> subprocess.CompletedProcess:
    """``python *arguments`` in a process that compiles Triton kernels
    (``TRITON_INTERPRET`` unset, which the test process sets), with the
    tests and the repository on its path; its output captured as text."""
    tests = Path(__file__).resolve().parent
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(tests), str(tests.parent), env.get("PYTHONPATH", "")) if p
    )
    return subprocess.run(
        [sys.executable, *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def expected_launches(module: ModuleOp, binding: dict[str, int]) -> list[Any]:
    """[kernel, grid, symbols' values] of each launch, from a triton-level
    module alone: the host function's ``memory.launch`` ops in order, each
    kernel's grid and symbols evaluated under ``binding`` (an empty grid
    launches nothing)."""
    kernels = {op.kernel_name: op for op in module.ops if isinstance(op, tt.KernelOp)}
    launches = []
    for op in module.walk():
        if not isinstance(op, memory.LaunchOp):
            continue
        kernel = kernels[op.kernel_name]
        grid = [g.evaluate(binding) for g in kernel.grid_exprs]
        grid += [1] * (3 - len(grid))
        if min(grid) > 0:
            symbols = [binding[s] for s in kernel.symbol_names]
            launches.append([identifier("kernel_", op.kernel_name), grid, symbols])
    return launches


def _argument(value: Any, typed: str) -> dict[str, Any]:
    """A launch argument as the binder sees it: a pointer is a tensor
    (anything with ``data_ptr()`` and a torch ``dtype``) or the address of a
    launcher's workspace intermediate, an ``int`` that Triton typed ``typed``
    (a pointer type) from the parameter's annotation."""
    if hasattr(value, "data_ptr"):
        return {
            "kind": "pointer",
            "dtype": str(value.dtype).removeprefix("torch."),
            "aligned": value.data_ptr() % 16 == 0,
        }
    if isinstance(value, int) and typed.startswith("*"):
        return {"kind": "address", "typed": typed, "aligned": value % 16 == 0}
    if isinstance(value, bool | int):
        return {"kind": "int", "value": int(value)}
    return {"kind": type(value).__name__, "value": repr(value)}


def _binary_facts(binary: Any) -> dict[str, Any]:
    ptx = binary.asm.get("ptx", "")
    cubin = binary.asm.get("cubin", b"")
    return {
        "sm_90": ".target sm_90" in ptx,
        "entry": f".entry {binary.name}" in ptx,
        "cubin_bytes": len(cubin) if cubin[:4] == ELF_MAGIC else 0,
        "vector_loads": len(VECTOR_LOAD.findall(ptx)),
        "scalar_loads": len(SCALAR_LOAD.findall(ptx)),
        "wgmma": len(WGMMA.findall(ptx)),
        "mma": len(MMA.findall(ptx)),
    }


def h100_launches(compiled: irc.Compiled, arguments: list[Any]) -> list[dict[str, Any]]:
    """Each launch of ``compiled(*arguments, backend="triton")`` under the
    fake driver (torch tensors: their dtypes and sizes choose the binaries):
    its grid and the facts of the H100 binary it launched."""
    from irc.runtime import triton_backend

    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    with fake_cuda() as gpu:
        compiled(*arguments, backend="triton")
    binaries = {
        digest: binary
        for function, _, _ in module.KERNELS.values()
        for digest, binary in compiled_kernels(function).items()
    }
    return [
        {"grid": list(launch.grid), **_binary_facts(binaries[launch.metadata.hash])}
        for launch in gpu.launches
    ]


def _launch_records(gpu: FakeCudaDriver, start: int, binaries: dict[str, Any]) -> list:
    return [
        {
            "kernel": launch.kernel,
            "grid": list(launch.grid),
            "args": {
                name: _argument(v, launch.signature.get(name, ""))
                for name, v in launch.args.items()
            },
            "signature": launch.signature,
            "binary": _binary_facts(binaries[launch.metadata.hash]),
        }
        for launch in gpu.launches[start:]
    ]


def _outputs(value: Any) -> list[dict[str, Any]]:
    leaves, _ = pytree.flatten(value)
    return [
        {"shape": list(np.shape(leaf)), "dtype": str(leaf.dtype).removeprefix("torch.")}
        for leaf in leaves
    ]


def launch_program(gpu: FakeCudaDriver, name: str) -> dict[str, Any]:
    """Two public calls per binding of one program, as recorded."""
    from irc.runtime import triton_backend

    program = SUITE[name]
    compiled = program.compile()
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    triton_module = parse_module(compiled.ir("triton"))
    chosen = {
        identifier("kernel_", op.kernel_name): {
            identifier("c_", tile): str(extent)
            for tile, extent in launch_tile_extents(op).items()
        }
        for op in triton_module.walk()
        if isinstance(op, tt.KernelOp)
    }
    declared = {
        kernel: {
            "signature": signature,
            "constexprs": constexprs,
            # The tiles the launch chooses, with the extent each walks.
            "launch_tiles": chosen.get(kernel, {}),
        }
        for kernel, (_, signature, constexprs) in module.KERNELS.items()
    }
    calls = []
    for sizes in SIZES[name]:
        call = program.inputs(np.random.default_rng(0), **sizes)
        args, kwargs = call.to_torch()
        record: dict[str, Any] = {
            "sizes": sizes,
            "expected": expected_launches(triton_module, sizes),
            "numpy": _outputs(program.function(*call.args, **call.kwargs)),
        }
        for attempt in ("first", "second"):
            launches, loads = len(gpu.launches), len(gpu.loaded)
            result = compiled(*args, backend="triton", **kwargs)
            binaries = {
                digest: binary
                for function, _, _ in module.KERNELS.values()
                for digest, binary in compiled_kernels(function).items()
            }
            record[attempt] = {
                "launches": _launch_records(gpu, launches, binaries),
                "compiled": len(gpu.loaded) - loads,
                "outputs": _outputs(result),
            }
        calls.append(record)
    globals_read = {
        kernel: sorted(n for n, _ in function.used_global_vals)
        for kernel, (function, _, _) in module.KERNELS.items()
    }
    return {
        "kernels": compiled.num_kernels,
        "declared": declared,
        "globals_read": globals_read,
        "calls": calls,
    }


def batched_matmul(a: Any, b: Any) -> Any:
    return a @ b


def scaled_then_batched_matmul(a: Any, b: Any) -> Any:
    """Two kernels: a pointwise one whose grid is within CUDA's limits, then
    the batched matmul."""
    return a * 2, a @ b


def _refused(
    gpu: FakeCudaDriver, launch: Callable[[], Any], error: type[Exception]
) -> dict[str, Any]:
    """``launch()``'s ``error`` message (None if it raised none) and how
    many launches it recorded."""
    launches = len(gpu.launches)
    try:
        launch()
    except error as refused:
        return {"error": str(refused), "launches": len(gpu.launches) - launches}
    return {"error": None, "launches": len(gpu.launches) - launches}


def launch_beyond_grid_limits(gpu: FakeCudaDriver) -> dict[str, dict[str, Any]]:
    """A batched matmul whose batch (grid axis 1) exceeds CUDA's 65,535:
    called (``irc``: the launcher must refuse it before launching; ``first``:
    the same after a kernel whose grid is within the limits, which must not
    be launched either), and its kernel launched directly past that check
    (``raw``: the fake driver must refuse it, as ``cuLaunchKernel`` would)."""
    import torch

    from irc.runtime import triton_backend
    from irc.testing.fake_driver import FakeLaunchError

    spec = irc.TensorSpec(("B", 2, 2), "float32")
    compiled = irc.compile(batched_matmul, spec, spec)
    a = torch.zeros((70000, 2, 2))
    module = triton_backend.load_source(compiled.triton_source, interpret=False)
    ((function, signature, constexprs),) = module.KERNELS.values()
    pointers = [torch.zeros(4) for kind in signature.values() if kind.startswith("*")]
    symbols = [70000 for kind in signature.values() if not kind.startswith("*")]
    # Launched apart (combine-launches would make the two one launch).
    apart = DEFAULT_PIPELINE.replace(
        "combine-launches", "combine-launches{max-pieces=1}"
    )
    two = irc.compile(scaled_then_batched_matmul, spec, spec, pipeline=apart)
    return {
        "irc": _refused(
            gpu, lambda: compiled(a, a, backend="triton"), irc.BindingError
        ),
        "first": {
            "kernels": two.num_kernels,
            **_refused(gpu, lambda: two(a, a, backend="triton"), irc.BindingError),
        },
        "raw": _refused(
            gpu,
            lambda: function[(1, 70000, 1)](*pointers, *symbols, **constexprs),
            FakeLaunchError,
        ),
    }


def every_elementwise_kind(x: Any, y: Any) -> Any:
    """A function of every elementwise kind of irc issue 10 (and the
    functions built of them), each on values in its domain."""
    unit, positive = np.tanh(x), np.abs(x) + 1
    return (
        np.log1p(positive) + np.expm1(unit) + np.log2(positive) + np.log10(positive),
        np.sinh(unit) + np.cosh(unit) + np.arctan(x) + np.arcsin(unit),
        np.arccos(unit) + np.arctan2(x, y),
        np.ceil(x) + np.trunc(x) + np.rint(x) + np.round(x, 2),
        np.isnan(x) | np.isinf(y) | ~np.isfinite(x),
        np.float_power(positive, y),
    )


def launch_every_elementwise_kind(gpu: FakeCudaDriver) -> dict[str, Any]:
    """``every_elementwise_kind`` at each float dtype, called on the triton
    backend: its kernels' source, and their launches with the binaries
    compiled for them."""
    import torch

    from irc.runtime import triton_backend

    report: dict[str, Any] = {}
    for element in ("float16", "bfloat16", "float32", "float64"):
        spec = irc.TensorSpec(("N",), element)
        compiled = irc.compile(every_elementwise_kind, spec, spec)
        module = triton_backend.load_source(compiled.triton_source, interpret=False)
        x = torch.linspace(-3, 3, 48).to(getattr(torch, element))
        launches = len(gpu.launches)
        compiled(x, x.flip(0), backend="triton")
        binaries = {
            digest: binary
            for function, _, _ in module.KERNELS.values()
            for digest, binary in compiled_kernels(function).items()
        }
        report[element] = {
            "source": compiled.triton_source,
            "launches": _launch_records(gpu, launches, binaries),
        }
    return report


def launch_suite(names: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with fake_cuda() as gpu:
        for name in names:
            try:
                report[name] = launch_program(gpu, name)
            except Exception:
                report[name] = {"error": traceback.format_exc()}
        report["beyond_grid_limits"] = launch_beyond_grid_limits(gpu)
        try:
            report["elementwise_kinds"] = launch_every_elementwise_kind(gpu)
        except Exception:
            report["elementwise_kinds"] = {"error": traceback.format_exc()}
    return report


if __name__ == "__main__":
    # python tests/fake_gpu_suite.py REPORT.json [PROGRAM...]
    out_path, *names = sys.argv[1:]
    Path(out_path).write_text(json.dumps(launch_suite(names or sorted(SUITE))))
