"""Memory traffic of irc's kernels: bytes each kernel loads and stores, over the ideal.

Without a GPU, traffic is how kernel quality is measured: a memory-bound
kernel's time is its bytes over the bandwidth. For every program of
``benchmarks/gpu.py`` (the suite's programs at its realistic bindings) this
runs the emitted launcher under Triton's interpreter with every
``tl.load`` and ``tl.store`` counted: the lanes whose mask is true, times
the element size. That is the traffic a kernel *requests* (each lane's
access counted, as the GPU issues them; a value two lanes load is counted
twice, a cache hit too). The ideal is each input read once and each output
written once (for the embedding, the rows gathered rather than the whole
tables, as ``gpu.py`` counts them).

The interpreter runs a grid serially, too slowly for realistic sizes, so
along each grid axis larger than ``--full-limit`` programs only some
program ids run: the first 32, the last 32 (where masks cut blocks) and
``--samples`` evenly spaced windows of 32 consecutive ids between them,
each standing for its share of the interior. The estimate is exact when a
kernel's traffic is the same or affine in the program id across the
interior, or periodic with a period dividing 32 (a program id split into a
row block and a power-of-two number of column blocks), as it is at the
table's bindings; otherwise it is within a window's share of one period
(``tests/test_traffic.py`` checks it against ``--full``, which runs every
program).

A second figure is the traffic a kernel moves from DRAM when the GPU's L2
cache (50 MB on an H100) serves its re-reads: the *distinct* bytes each
launch loads plus the distinct bytes it stores (``MB DRAM``). A tiled
kernel requests the same tile many times (a matmul's operand tiles once per
output tile; attention's keys and values once per block of queries), and
the requested bytes count each request; a tensor that fits the L2 comes
from DRAM once per launch. It is counted from the addresses of the lanes
each load and store touches: per program, the distinct addresses (with the
element size); per launch, the union over its programs. Where a grid is
sampled, each distinct address counts for the smallest weight of the
programs run that touched it: an address only one interior program (or one
window of them) touched stands for its share of the interior, as the
requested bytes do, while one the first programs touched too (a weight, a
bias, the keys every query block reads) counts once. That is exact for
full grids and for kernels whose programs read either their own tiles or
data the first programs read too; a broadcast operand's part that only
interior programs read counts for their weight (within 1% on
``tests/test_traffic.py``'s cases). It assumes a launch's distinct
footprint fits the L2 (``*`` marks a row where it does not: then re-reads
may come from DRAM again and the figure is a lower bound).

Then, in a second process (Triton fixes at import whether it interprets),
every kernel is compiled for an H100 (sm_90) through Triton's real launch
path under ``irc.testing.fake_driver`` at the same binding, with the
launch's specialisation (aligned pointers, sizes divisible by 16), and its
PTX is read: vector loads (``ld.global.v2``/``.v4``), scalar loads,
asynchronous copies to shared memory (``cp.async``: how Triton loads
matmul tiles, which are neither), and 64-bit integer divisions and
remainders (``div``/``rem`` ``.s64``/``.u64``), each counted as
instructions in the kernel's PTX (a thread runs each once per element it
holds, or once per row for a row index).

    python benchmarks/traffic.py                     # the table, ~7 min on 2 cores
    python benchmarks/traffic.py --only rotary adam_step
    python benchmarks/traffic.py --json traffic.json --no-ptx
    python benchmarks/traffic.py --full --only softmax   # every program id
    python benchmarks/traffic.py --only causal_attention --variants --no-ptx
    python benchmarks/traffic.py --convolutions --only resnet_basic_block vit_patch_embedding
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The counting run interprets; the PTX run (a subprocess) must not.
if "--ptx-report" not in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("IRC_CACHE", "0")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import gpu  # noqa: E402  (benchmarks/gpu.py: programs, bindings, inputs)
import numpy as np  # noqa: E402

import irc  # noqa: E402
from irc import nn  # noqa: E402

#: 64-bit integer divisions and remainders in PTX.
DIVISION_64 = re.compile(r"\b(?:div|rem)\.[su]64\b")
#: 32-bit ones (cheaper, still tens of instructions each).
DIVISION_32 = re.compile(r"\b(?:div|rem)\.[su]32\b")
#: Asynchronous copies global -> shared (how matmul tiles are loaded).
ASYNC_COPY = re.compile(r"\bcp\.async\.(?:ca|cg)\.shared\.global\b")
#: The H100's L2 cache: a launch whose distinct bytes fit it reads each
#: byte from DRAM once, however often its programs request it.
L2_BYTES = 50 * 2**20


# --------------------------------------------------------------------------
# Counting loads and stores under Triton's interpreter
# --------------------------------------------------------------------------


@dataclass
class KernelTraffic:
    """What the launches of one kernel moved, in bytes (estimated where
    ``programs_run < programs``)."""

    loaded: float = 0.0
    stored: float = 0.0
    launches: int = 0
    programs: int = 0
    programs_run: int = 0
    #: Distinct bytes loaded and stored, summed over launches (each launch's
    #: union over its programs), and the largest launch's footprint.
    distinct_loaded: float = 0.0
    distinct_stored: float = 0.0
    footprint: float = 0.0


@dataclass
class Touched:
    """The addresses (with their element sizes) the lanes of loads or of
    stores touched: per program, then per launch, with each address's
    weight (how many programs its program run stands for)."""

    program: list[tuple[np.ndarray, int]] = field(default_factory=list)
    launch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=list
    )

    def add(self, addresses: np.ndarray, itemsize: int) -> None:
        self.program.append((addresses, itemsize))

    def end_program(self, weight: float) -> None:
        """The program's distinct addresses join the launch's."""
        if self.program:
            addresses, sizes = _distinct(
                np.concatenate([a for a, _ in self.program]),
                np.concatenate([np.full(a.size, n) for a, n in self.program]),
            )
            self.launch.append((addresses, sizes, np.full(addresses.size, weight)))
        self.program = []

    def end_launch(self) -> float:
        """The launch's distinct bytes, each address at the smallest weight
        of the programs that touched it."""
        if not self.launch:
            return 0.0
        addresses, sizes, weights = (
            np.concatenate([part[k] for part in self.launch]) for k in range(3)
        )
        self.launch = []
        order = np.lexsort((weights, addresses))  # by address, lightest first
        addresses, sizes, weights = addresses[order], sizes[order], weights[order]
        first = np.ones(addresses.size, bool)
        first[1:] = addresses[1:] != addresses[:-1]
        return float((sizes[first] * weights[first]).sum())


def _distinct(
    addresses: np.ndarray, sizes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    addresses, index = np.unique(addresses, return_index=True)
    return addresses, sizes[index]


@dataclass
class TrafficCounter:
    """Bytes per kernel; ``weight`` is how many programs the running one
    stands for."""

    kernels: dict[str, KernelTraffic] = field(
        default_factory=lambda: defaultdict(KernelTraffic)
    )
    kernel: str = ""
    weight: float = 1.0
    loads: Touched = field(default_factory=Touched)
    stores: Touched = field(default_factory=Touched)

    def count(self, loaded: bool, pointers: Any, mask: Any) -> None:
        from triton.runtime.interpreter import _get_np_dtype

        itemsize = np.dtype(_get_np_dtype(pointers.get_element_ty())).itemsize
        lanes = np.broadcast_to(mask.data, np.shape(pointers.data))
        traffic = self.kernels[self.kernel]
        requested = self.weight * int(lanes.sum()) * itemsize
        touched = np.asarray(pointers.data)[lanes].astype(np.uint64)
        if loaded:
            traffic.loaded += requested
            self.loads.add(touched, itemsize)
        else:
            traffic.stored += requested
            self.stores.add(touched, itemsize)

    def end_program(self) -> None:
        self.loads.end_program(self.weight)
        self.stores.end_program(self.weight)

    def end_launch(self) -> None:
        traffic = self.kernels[self.kernel]
        loaded, stored = self.loads.end_launch(), self.stores.end_launch()
        traffic.distinct_loaded += loaded
        traffic.distinct_stored += stored
        traffic.footprint = max(traffic.footprint, loaded + stored)


def sampled_axis(
    size: int, samples: int, full_limit: int, window: int = 32
) -> list[tuple[int, float]]:
    """The program ids run along a grid axis of ``size``, with the number of
    programs each stands for: all of them up to ``full_limit``; otherwise
    the first and the last ``window`` ids (weight 1: masks cut the last
    blocks) and ``samples`` evenly spaced windows of ``window`` consecutive
    ids in the interior, each standing for an equal share of it (the
    midpoint rule). Exact for traffic that is affine in the program id
    across the interior, or periodic with a period dividing ``window`` (a
    program id split into a row block and one of 1, 2, 4... column
    blocks); otherwise within a window's share of one period."""
    interior = size - 2 * window
    if size <= full_limit or interior <= samples * window:
        return [(i, 1.0) for i in range(size)]
    weight = interior / (samples * window)
    starts = [
        window + int((j + 0.5) * interior / samples) - window // 2
        for j in range(samples)
    ]
    return [
        *((i, 1.0) for i in range(window)),
        *((start + k, weight) for start in starts for k in range(window)),
        *((i, 1.0) for i in range(size - window, size)),
    ]


@contextmanager
def counting(
    counter: TrafficCounter, samples: int, full_limit: int, window: int
) -> Iterator[None]:
    """Count every load and store of interpreted kernels into ``counter``,
    running only the sampled program ids of each grid (Triton 3.9's
    ``GridExecutor.__call__``, with the grid loop sampled)."""
    import inspect
    import itertools

    from triton.runtime import interpreter as ti

    builder = ti.InterpreterBuilder
    masked_load, masked_store = builder.create_masked_load, builder.create_masked_store
    run_grid = ti.GridExecutor.__call__

    def load(
        self: Any, ptrs: Any, mask: Any, other: Any, cache_policy: Any, is_volatile: Any
    ) -> Any:
        counter.count(True, ptrs, mask)
        return masked_load(self, ptrs, mask, other, cache_policy, is_volatile)

    def store(self: Any, ptrs: Any, value: Any, mask: Any, cache_policy: Any) -> Any:
        counter.count(False, ptrs, mask)
        return masked_store(self, ptrs, value, mask, cache_policy)

    def sampled_run(self: Any, *args_dev: Any, **kwargs: Any) -> None:
        spec = inspect.getfullargspec(self.fn)
        names = {*spec.args, *spec.kwonlyargs}
        kwargs = {k: v for k, v in kwargs.items() if k in names}
        args_hst, kwargs_hst = self._init_args_hst(args_dev, kwargs)
        patch_scope = ti._patch_lang(self.fn)
        try:
            args = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
            args = {
                name: arg if name in self.constexprs else ti._implicit_cvt(arg)
                for name, arg in args.items()
            }
            grid = self.grid(args) if callable(self.grid) else self.grid
            grid = tuple(grid) + (1,) * (3 - len(grid))
            ti.interpreter_builder.set_grid_dim(*grid)
            counter.kernel = self.fn.__name__
            traffic = counter.kernels[counter.kernel]
            traffic.launches += 1
            traffic.programs += int(np.prod(grid))
            axes = [sampled_axis(n, samples, full_limit, window) for n in grid]
            for (x, wx), (y, wy), (z, wz) in itertools.product(*axes):
                counter.weight = wx * wy * wz
                traffic.programs_run += 1
                ti.interpreter_builder.set_grid_idx(x, y, z)
                self.fn(**args)
                counter.end_program()
            counter.end_launch()
        finally:
            patch_scope.restore()
        self._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)

    builder.create_masked_load, builder.create_masked_store = load, store
    ti.GridExecutor.__call__ = sampled_run
    try:
        yield
    finally:
        builder.create_masked_load, builder.create_masked_store = (
            masked_load,
            masked_store,
        )
        ti.GridExecutor.__call__ = run_grid


# --------------------------------------------------------------------------
# Attention variants (``--variants``): plain NumPy forms that fuse into one
# attention kernel as causal_attention does
# --------------------------------------------------------------------------


def _softmax(x: Any) -> Any:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention_no_mask(q: Any, k: Any, v: Any) -> Any:
    return _softmax(q @ k.T * q.shape[-1] ** -0.5) @ v


def attention_bias(q: Any, k: Any, v: Any, bias: Any) -> Any:
    return _softmax(q @ k.T * 0.125 + bias) @ v


def attention_by_hand(q: Any, k: Any, v: Any) -> Any:
    s = q @ k.T * 0.125
    mask = (1 - np.tri(q.shape[0], dtype=q.dtype)) * -1e10
    e = np.exp(s + mask - (s + mask).max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def attention_heads(q: Any, k: Any, v: Any) -> Any:
    s = q @ k.transpose(0, 2, 1) * q.shape[-1] ** -0.5
    s = np.where(np.tri(q.shape[1]) == 0, -1e9, s)
    return _softmax(s) @ v


ATTENTION_HEADS = 12


def attention_variants() -> list[gpu.Program]:
    """The variants at S = 2048, d = 64 (12 heads of S = 1024 batched)."""
    d = gpu.HEAD_DIM
    qkv = gpu.suite.Call((gpu.spec("S", d),) * 3)

    def three(s: Any, r: Any) -> gpu.suite.Call:
        return gpu.suite.Call(tuple(r(s["S"], d) for _ in range(3)))

    def with_bias(s: Any, r: Any) -> gpu.suite.Call:
        return gpu.suite.Call((*three(s, r).args, r(s["S"], s["S"])))

    def heads(s: Any, r: Any) -> gpu.suite.Call:
        return gpu.suite.Call(tuple(r(ATTENTION_HEADS, s["S"], d) for _ in range(3)))

    def variant(name: str, function: Any, specs: Any, make: Any, sizes: Any) -> Any:
        return gpu.Program(
            name,
            specs,
            [sizes],
            {"S": 6},
            make,
            gpu.MATMUL_TOLERANCE,
            function=function,
        )

    return [
        variant("attention_no_mask", attention_no_mask, qkv, three, {"S": 2048}),
        variant(
            "attention_bias",
            attention_bias,
            gpu.suite.Call((*qkv.args, gpu.spec("S", "S"))),
            with_bias,
            {"S": 2048},
        ),
        variant("attention_by_hand", attention_by_hand, qkv, three, {"S": 2048}),
        variant(
            "attention_heads",
            attention_heads,
            gpu.suite.Call((gpu.spec(ATTENTION_HEADS, "S", d),) * 3),
            heads,
            {"S": 1024},
        ),
    ]


# --------------------------------------------------------------------------
# Convolutions (``--convolutions``): a ResNet basic block and a ViT's patch
# embedding, written with irc.nn
# --------------------------------------------------------------------------

RESNET_CHANNELS = 64
VIT_PATCH, VIT_WIDTH, VIT_IMAGE = 16, 768, 224


def resnet_basic_block(
    x: Any, w1: Any, scale1: Any, shift1: Any, w2: Any, scale2: Any, shift2: Any
) -> Any:
    """Two 3x3 convolutions, each with BatchNorm's inference affine (one
    scale and shift per channel, ``[C, 1, 1]``), ReLUs and the residual."""
    h = np.maximum(nn.conv(x, w1, padding=1) * scale1 + shift1, 0)
    return np.maximum(nn.conv(h, w2, padding=1) * scale2 + shift2 + x, 0)


def vit_patch_embedding(image: Any, w: Any, b: Any) -> Any:
    """Hugging Face's ``ViTPatchEmbeddings``: the patches' projection, then
    a row per patch (``flatten(2).transpose(1, 2)``)."""
    y = nn.conv(image, w, b, strides=VIT_PATCH)
    return y.reshape(y.shape[0], y.shape[1], -1).transpose(0, 2, 1)


def convolution_programs() -> list[gpu.Program]:
    """The basic block of ResNet-18's first stage at 56x56 (symbolic batch
    and image sizes) and ViT-Base's patch embedding."""
    c, p, d = RESNET_CHANNELS, VIT_PATCH, VIT_WIDTH
    vector = gpu.spec(c, 1, 1)
    layer = (gpu.spec(c, c, 3, 3), vector, vector)
    block_specs = gpu.suite.Call((gpu.spec("N", c, "H", "W"), *layer, *layer))

    def block_call(s: Any, r: Any) -> gpu.suite.Call:
        x = r(s["N"], c, s["H"], s["W"])
        layer = (r(c, c, 3, 3, scale=(9 * c) ** -0.5), r(c, 1, 1), r(c, 1, 1))
        return gpu.suite.Call((x, *layer, *layer))

    def block_ideal(s: Any) -> int:
        # x read by the first convolution and by the residual, the
        # activation between the convolutions written once and read once
        # (a 3x3 convolution reads a halo of it: no schedule of whole
        # convolutions keeps it on chip), the output written once.
        activation = s["N"] * c * s["H"] * s["W"]
        return 4 * (5 * activation + 2 * (9 * c * c + 2 * c))

    def patches_call(s: Any, r: Any) -> gpu.suite.Call:
        image = r(s["N"], 3, VIT_IMAGE, VIT_IMAGE)
        return gpu.suite.Call((image, r(d, 3, p, p, scale=(3 * p * p) ** -0.5), r(d)))

    return [
        gpu.Program(
            "resnet_basic_block",
            block_specs,
            [{"N": 2, "H": 56, "W": 56}],
            {"N": 1, "H": 5, "W": 6},
            block_call,
            gpu.MATMUL_TOLERANCE,
            bytes_moved=block_ideal,
            function=resnet_basic_block,
        ),
        gpu.Program(
            "vit_patch_embedding",
            gpu.suite.Call(
                (
                    gpu.spec("N", 3, VIT_IMAGE, VIT_IMAGE),
                    gpu.spec(d, 3, p, p),
                    gpu.spec(d),
                )
            ),
            [{"N": 4}],
            {"N": 1},
            patches_call,
            gpu.MATMUL_TOLERANCE,
            function=vit_patch_embedding,
        ),
    ]


# --------------------------------------------------------------------------
# One program
# --------------------------------------------------------------------------


def compile_program(program: gpu.Program) -> irc.Compiled:
    return irc.compile(program.function, *program.specs.args, **program.specs.kwargs)


def torch_call(program: gpu.Program, sizes: dict[str, int]) -> gpu.suite.Call:
    """The call's arguments as torch CPU tensors (random, as gpu.py's)."""
    return program.make(sizes, gpu.Factory(None)).to_torch()


def ideal_bytes(
    program: gpu.Program, sizes: dict[str, int], tensors: list[Any], outputs: Any
) -> int:
    """Each input read once and each output written once (gpu.py's count)."""
    if program.bytes_moved is not None:
        return program.bytes_moved(sizes)
    return gpu.nbytes(tensors) + gpu.nbytes(outputs)


def measure_traffic(
    program: gpu.Program,
    sizes: dict[str, int],
    samples: int = 4,
    full_limit: int = 16,
    window: int = 32,
) -> dict[str, Any]:
    """Bytes per kernel of one call of ``program`` at ``sizes``, and the ideal."""
    from irc.runtime import triton_backend

    compiled = compile_program(program)
    module = triton_backend.load_source(compiled.triton_source, interpret=True)
    launcher = getattr(module, module.ENTRY)
    call = torch_call(program, sizes)
    tensors = gpu.tensor_leaves(compiled, call)
    counter = TrafficCounter()
    start = time.perf_counter()
    with counting(counter, samples, full_limit, window):
        outputs = launcher(*tensors)
    ideal = ideal_bytes(program, sizes, tensors, outputs)
    kernels = {
        name: {
            "loaded": traffic.loaded,
            "stored": traffic.stored,
            "launches": traffic.launches,
            "programs": traffic.programs,
            "programs_run": traffic.programs_run,
            "distinct_loaded": traffic.distinct_loaded,
            "distinct_stored": traffic.distinct_stored,
            "fits_l2": traffic.footprint <= L2_BYTES,
        }
        for name, traffic in counter.kernels.items()
    }
    total = sum(k["loaded"] + k["stored"] for k in kernels.values())
    dram = sum(k["distinct_loaded"] + k["distinct_stored"] for k in kernels.values())
    return {
        "program": program.name,
        "sizes": dict(sizes),
        "kernels": kernels,
        "ideal": ideal,
        "bytes": total,
        "ratio": total / ideal,
        "dram": dram,
        "dram_ratio": dram / ideal,
        "fits_l2": all(k["fits_l2"] for k in kernels.values()),
        "seconds": time.perf_counter() - start,
    }


# --------------------------------------------------------------------------
# PTX facts (a subprocess that compiles for sm_90 under the fake driver)
# --------------------------------------------------------------------------


def ptx_facts(ptx: str) -> dict[str, int]:
    from fake_gpu_suite import SCALAR_LOAD, VECTOR_LOAD

    return {
        "vector_loads": len(VECTOR_LOAD.findall(ptx)),
        "scalar_loads": len(SCALAR_LOAD.findall(ptx)),
        "async_copies": len(ASYNC_COPY.findall(ptx)),
        "div64": len(DIVISION_64.findall(ptx)),
        "div32": len(DIVISION_32.findall(ptx)),
    }


def ptx_report(names: Sequence[str]) -> dict[str, Any]:
    """Per program, per kernel launched at the first binding: the facts of
    the PTX Triton compiled for that launch's specialisation."""
    from irc.runtime import triton_backend
    from irc.testing.fake_driver import compiled_kernels, fake_cuda

    report: dict[str, Any] = {}
    selected = {p.name: p for p in [*gpu.programs(), *convolution_programs()]}
    with fake_cuda() as device:
        for name in names:
            program = selected[name]
            compiled = compile_program(program)
            module = triton_backend.load_source(compiled.triton_source, interpret=False)
            call = torch_call(program, program.sizes[0])
            start = len(device.launches)
            compiled(*call.args, **call.kwargs, backend="triton")
            binaries = {
                digest: binary
                for function, _, _ in module.KERNELS.values()
                for digest, binary in compiled_kernels(function).items()
            }
            report[name] = {
                launch.kernel: ptx_facts(binaries[launch.metadata.hash].asm["ptx"])
                for launch in device.launches[start:]
            }
    return report


def run_ptx_report(names: Sequence[str]) -> dict[str, Any]:
    from fake_gpu_suite import run_compiling

    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"irc-traffic-{os.getpid()}.json"
    done = run_compiling([__file__, "--ptx-report", str(out), *names], timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"the sm_90 compile failed:\n{done.stderr[-4000:]}")
    report = json.loads(out.read_text())
    out.unlink()
    return report


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def megabytes(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def table(rows: Sequence[dict[str, Any]], ptx: dict[str, Any] | None) -> str:
    header = (
        "| program | sizes | kernels | MB loaded | MB stored | MB ideal | "
        "bytes / ideal | MB DRAM | DRAM / ideal |"
    )
    rule = "|---|---|---:|---:|---:|---:|---:|---:|---:|"
    if ptx is not None:
        header += " vector loads | scalar loads | cp.async | 64-bit div/rem |"
        rule += "---:|---:|---:|---:|"
    lines = [header, rule]
    for row in rows:
        kernels = row["kernels"]
        cells = [
            row["program"],
            " ".join(f"{k}={v}" for k, v in row["sizes"].items()),
            str(len(kernels)),
            megabytes(sum(k["loaded"] for k in kernels.values())),
            megabytes(sum(k["stored"] for k in kernels.values())),
            megabytes(row["ideal"]),
            f"{row['ratio']:.2f}",
            megabytes(row["dram"]) + ("" if row["fits_l2"] else "*"),
            f"{row['dram_ratio']:.2f}",
        ]
        if ptx is not None:
            keys = ("vector_loads", "scalar_loads", "async_copies", "div64")
            if row["program"] in ptx:  # not the variants: not compiled
                facts = ptx[row["program"]].values()
                cells += [str(sum(f[key] for f in facts)) for key in keys]
            else:
                cells += ["-"] * len(keys)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def per_kernel(rows: Sequence[dict[str, Any]], ptx: dict[str, Any] | None) -> str:
    lines = []
    for row in rows:
        for kernel, k in row["kernels"].items():
            facts = (ptx or {}).get(row["program"], {}).get(kernel)
            text = (
                f"  {row['program']:22} {kernel:12} loaded {megabytes(k['loaded']):>10} MB"
                f"  stored {megabytes(k['stored']):>9} MB  programs {k['programs_run']}"
                f"/{k['programs']}"
            )
            if facts:
                text += "  " + " ".join(f"{key}={v}" for key, v in facts.items())
            lines.append(text)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), help="programs (default all)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--no-ptx", action="store_true", help="skip the sm_90 compile")
    parser.add_argument(
        "--full", action="store_true", help="run every program id (slow)"
    )
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--full-limit", type=int, default=16)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--first-binding", action="store_true")
    parser.add_argument(
        "--variants", action="store_true", help="add the attention variants"
    )
    parser.add_argument(
        "--convolutions", action="store_true", help="add the convolution programs"
    )
    parser.add_argument("--ptx-report", type=Path, help=argparse.SUPPRESS)
    options, names = parser.parse_known_args(argv)
    if options.ptx_report:
        options.ptx_report.write_text(json.dumps(ptx_report(names)))
        return
    variants = attention_variants() if options.variants else []
    convolutions = convolution_programs() if options.convolutions else []
    extra = [*variants, *convolutions]
    available = {p.name: p for p in [*gpu.programs(), *extra]}
    unknown = set(options.only) - set(available)
    if unknown:
        sys.exit(
            f"unknown programs: {sorted(unknown)}; choose from {sorted(available)}"
        )
    selected = [
        p for n, p in available.items() if not options.only or n in options.only
    ]
    full_limit = sys.maxsize if options.full else options.full_limit
    rows = []
    for program in selected:
        sizes = program.sizes[:1] if options.first_binding else program.sizes
        for binding in sizes:
            row = measure_traffic(
                program, binding, options.samples, full_limit, options.window
            )
            print(
                f"{row['program']:22} {row['ratio']:6.2f} x ideal requested, "
                f"{row['dram_ratio']:6.2f} x from DRAM ({row['seconds']:.1f} s)",
                flush=True,
            )
            rows.append(row)
    suite_names = [p.name for p in selected if p not in variants]
    ptx = None if options.no_ptx else run_ptx_report(suite_names)
    print("\n" + table(rows, ptx))
    print(per_kernel(rows, ptx))
    if options.json:
        options.json.write_text(json.dumps({"rows": rows, "ptx": ptx}, indent=2) + "\n")


if __name__ == "__main__":
    main()
