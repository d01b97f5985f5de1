"""Compile time of irc, stage by stage, and beside TorchInductor's.

Measured on the CPU (no GPU needed):

1. every program of the test suite (``tests/suite_programs.py``), with the
   time of each stage of ``irc.compile``'s default pipeline: capture, the
   graph clean-ups (canonicalize, cse), fuse, tile, bufferize,
   lower-memory-to-triton (with combine-launches) and the emission of the
   Python/Triton source;
2. synthetic programs of 10 to 2,000 graph ops (chains of elementwise ops
   with residual connections, a layer norm every few steps and now and then
   a reduction over the other axis, which starts a new kernel), with the
   time of each stage against the number of ops, the throughput (ops/s) and
   a least-squares line ``time = a + b * ops`` with its R^2, so that one can
   judge whether each stage is linear in the size of the program;
3. with ``--inductor``, TorchInductor's compile of the same suite programs
   beside irc's (``gpu.py``'s torch translations at the suite's small
   sizes, the symbolic dims marked dynamic, each in a fresh process with
   Inductor's caches off after a warm-up compile, as ``autodiff.py`` times
   its losses), and ``irc.compile``'s, end to end to the emitted source
   (the stages plus the driver's own work), over Inductor's.

Each stage is timed by running the passes one at a time, as ``irc.compile``
does (``irc/api.py``), on the module that capture produced; the figure
reported is the minimum over ``--repeat`` runs (the least disturbed one).

Every suite program's stages are compared with ``BASELINE``, the same
measurement recorded at an earlier commit: a stage more than ``SLOWER``
times its recorded time (and 1 ms past it) is named in the table's last
column and in a closing ``SLOWER THAN THE BASELINE`` list, and the script
exits with status 1. ``--write-baseline`` records the current figures.

    python benchmarks/compile_time.py                 # prints the tables
    python benchmarks/compile_time.py --json out.json # and writes the data
    python benchmarks/compile_time.py --no-scaling --inductor
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.passes import ModulePass, PassPipeline

import irc
from irc import pytree
from irc.capture import capture
from irc.ir import default_context
from irc.lowering import pipeline as pipeline_module
from irc.passes.registry import get_all_passes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from suite_programs import SUITE

#: The stages, in pipeline order; "graph" in the tables is canonicalize + cse.
STAGES = (
    "capture",
    "canonicalize",
    "cse",
    "horizontal-fusion",
    "fuse",
    "tile",
    "bufferize",
    "dedupe-kernels",
    "lower-memory-to-triton",
    "combine-launches",
    "emit",
)
#: The columns of the tables: stages, with the graph clean-ups summed,
#: horizontal-fusion counted with fuse, the memory level's dedupe-kernels
#: with bufferize and the triton level's combine-launches with
#: lower-memory-to-triton.
COLUMNS = (
    "capture",
    "graph",
    "fuse",
    "tile",
    "bufferize",
    "lower-memory-to-triton",
    "emit",
    "total",
)
#: Target sizes (graph ops) of the synthetic programs.
GRAPH_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000)
#: The suite's stage times at a recorded commit (``--write-baseline``).
BASELINE = Path(__file__).resolve().parent / "compile_time_baseline.json"
#: How many times its baseline a stage may take before the table flags it:
#: well above the run-to-run noise of a best-of-3 on a shared machine.
SLOWER = 1.5
#: Differences below this are noise whatever the ratio (a 0.3 ms stage).
SLOWER_FLOOR_S = 1e-3


def default_passes() -> list[ModulePass]:
    """The passes of ``irc.compile``'s default pipeline, fresh instances."""
    spec = PassPipeline.parse_spec(get_all_passes(), pipeline_module.DEFAULT_PIPELINE)
    return list(spec.passes)


def time_stages(
    function: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[dict[str, float], int, int]:
    """Seconds per stage for one compilation of ``function``, the number of
    graph ops capture produced and the number of kernel launches."""
    from irc.backend.triton import emit_module
    from irc.dialects.memory import LaunchOp

    ctx = default_context()
    times: dict[str, float] = {}
    start = time.perf_counter()
    captured = capture(function, args, kwargs)
    times["capture"] = time.perf_counter() - start
    module = captured.module
    ops = count_graph_ops(module)
    for each in default_passes():
        start = time.perf_counter()
        each.apply(ctx, module)
        # A pass the pipeline runs twice (canonicalize) counts both runs.
        times[each.name] = times.get(each.name, 0.0) + time.perf_counter() - start
    start = time.perf_counter()
    emit_module(module)
    times["emit"] = time.perf_counter() - start
    if set(times) != set(STAGES):  # the default pipeline changed under this script
        raise SystemExit(
            f"stages timed {sorted(times)}, STAGES {sorted(STAGES)}: update STAGES"
        )
    kernels = sum(isinstance(op, LaunchOp) for op in module.walk())
    return times, ops, kernels


#: A program to time: the function and the arguments ``capture`` takes.
Job = tuple[Callable[..., Any], Sequence[Any], dict[str, Any]]


def best_of(
    repeat: int, jobs: Sequence[Job], keep_gc: bool = False
) -> list[tuple[dict[str, float], int, int]]:
    """For each job, the minimum of each stage's time over ``repeat``
    compilations, its graph ops and its kernels.

    The rounds go over all the jobs in turn (not ``repeat`` times one job,
    then the next), so that a burst of load from another process on the
    machine spoils one round of several jobs rather than every round of
    one. The cyclic garbage collector is off while a job runs unless
    ``keep_gc``, as in ``timeit``: a full collection costs time in
    proportion to the whole heap and lands in whichever stage happens to
    allocate when it is due (the same stage every round: allocation counts
    are deterministic), which shows as 2-3x spikes in single stages that say
    nothing about the stage."""
    best: list[dict[str, float]] = [{} for _ in jobs]
    counts = [(0, 0)] * len(jobs)
    for _ in range(repeat):
        for index, (function, args, kwargs) in enumerate(jobs):
            gc.collect()
            if not keep_gc:
                gc.disable()
            try:
                times, ops, kernels = time_stages(function, args, kwargs)
            finally:
                gc.enable()
            counts[index] = (ops, kernels)
            for stage, seconds in times.items():
                best[index][stage] = min(best[index].get(stage, float("inf")), seconds)
    return [(times, *count) for times, count in zip(best, counts)]


def columns(times: dict[str, float]) -> dict[str, float]:
    """A row of a table: the stages, graph clean-ups summed, and the total."""
    row = {
        stage: times[stage]
        for stage in STAGES
        if stage
        not in (
            "canonicalize",
            "cse",
            "horizontal-fusion",
            "dedupe-kernels",
            "combine-launches",
        )
    }
    row["graph"] = times["canonicalize"] + times["cse"]
    row["fuse"] += times["horizontal-fusion"]
    row["bufferize"] += times["dedupe-kernels"]
    row["lower-memory-to-triton"] += times["combine-launches"]
    row["total"] = sum(times[stage] for stage in STAGES)
    return row


def count_graph_ops(module: Any) -> int:
    return sum(op.dialect_name() == "graph" for op in module.walk())


# --------------------------------------------------------------------------
# Synthetic programs of a given size
# --------------------------------------------------------------------------

WIDTH = 64


def synthetic(steps: int) -> Callable[..., Any]:
    """A program of ``steps`` blocks on x [N, 64]: three of every four are
    ``x = tanh(0.5 * x + b) + x`` (a residual elementwise block), the fourth
    a residual layer norm (two row reductions); every sixteenth block
    subtracts the mean over the rows (axis 0), which a row kernel cannot
    hold, so the program has several kernels as a real model does."""

    def program(x, g, b):
        for i in range(steps):
            if i % 16 == 15:
                x = x - np.mean(x, axis=0, keepdims=True)
            elif i % 4 == 3:
                mean = np.mean(x, axis=-1, keepdims=True)
                variance = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
                x = x + (x - mean) / np.sqrt(variance + 1e-5) * g + b
            else:
                x = np.tanh(x * 0.5 + b) + x
        return x

    program.__name__ = f"synthetic_{steps}"
    return program


def synthetic_args() -> tuple[irc.TensorSpec, ...]:
    return (
        irc.TensorSpec(("N", WIDTH), "float32"),
        irc.TensorSpec((WIDTH,), "float32"),
        irc.TensorSpec((WIDTH,), "float32"),
    )


def steps_for(target_ops: int) -> int:
    """How many blocks give about ``target_ops`` graph ops."""
    probe = 64
    per_step = count_graph_ops(capture(synthetic(probe), synthetic_args(), {}).module)
    return max(1, round(target_ops * probe / per_step))


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> dict[str, float]:
    """Least squares ``y = intercept + slope * x`` and its R^2, and the
    exponent k of ``y ~ x**k`` fitted on the points of 100 ops and more
    (log-log; 1 is linear, 2 quadratic), where fixed costs no longer
    dominate."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(np.sum((y - (intercept + slope * x)) ** 2))
    total = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - residual / total if total > 0 else 1.0
    large = x >= 100
    exponent = (
        float(np.polyfit(np.log(x[large]), np.log(y[large]), 1)[0])
        if large.sum() >= 2
        else float("nan")
    )
    return {
        "slope_s_per_op": float(slope),
        "intercept_s": float(intercept),
        "r2": r2,
        "exponent": exponent,
    }


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------


def print_table(
    title: str, header: Sequence[str], rows: Sequence[Sequence[str]]
) -> None:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    print(f"\n{title}")
    line = "  ".join(
        h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))
    )
    print(line)
    print("-" * len(line))
    for row in rows:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths))
            )
        )


def short(stage: str) -> str:
    return {"lower-memory-to-triton": "to-triton"}.get(stage, stage)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def machine() -> dict[str, Any]:
    import triton
    import xdsl

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "xdsl": str(getattr(xdsl, "__version__", "?")),
        "triton": str(triton.__version__),
        "numpy": str(np.__version__),
    }


def run_suite(
    repeat: int,
    only: Sequence[str],
    keep_gc: bool,
    baseline: dict[str, dict[str, float]],
    inductor: dict[str, float] | None,
) -> dict[str, Any]:
    """Times the suite programs, prints their table (with Inductor's
    compile beside irc's when measured, and the stages slower than the
    baseline) and returns the figures."""
    names = [name for name in SUITE if not only or name in only]
    jobs: list[Job] = []
    for name in names:
        call = SUITE[name].specs()
        jobs.append((SUITE[name].function, call.args, dict(call.kwargs)))
    results: dict[str, Any] = {}
    for name, (times, ops, kernels) in zip(names, best_of(repeat, jobs, keep_gc)):
        results[name] = {
            "ops": ops,
            "kernels": kernels,
            "stages_s": times,
            **columns(times),
            "slower": slower_stages(times, baseline.get(name, {})),
        }
        if inductor is not None:
            results[name]["irc_compile_s"] = end_to_end_seconds(name, repeat)
            results[name]["inductor_s"] = inductor[name]
    extra = ["irc.compile", "Inductor (s)", "irc / Inductor"] if inductor else []
    rows = []
    for name, r in results.items():
        row = [name, str(r["ops"]), str(r["kernels"]), *(ms(r[c]) for c in COLUMNS)]
        if inductor is not None:
            seconds = r["irc_compile_s"]
            row += [
                ms(seconds),
                f"{r['inductor_s']:.2f}",
                f"{seconds / r['inductor_s']:.3f}",
            ]
        rows.append([*row, slower_text(r["slower"])])
    print_table(
        "Compile time per stage, suite programs (ms, best of "
        f"{repeat}; graph = canonicalize + cse)",
        ["program", "ops", "kernels", *(short(c) for c in COLUMNS), *extra, "slower"],
        rows,
    )
    return results


# --------------------------------------------------------------------------
# The baseline: a stage that got slower fails the run
# --------------------------------------------------------------------------


def slower_stages(
    times: dict[str, float], recorded: dict[str, float]
) -> dict[str, float]:
    """The stages of ``times`` more than ``SLOWER`` times (and
    ``SLOWER_FLOOR_S`` past) their ``recorded`` time, with the factor."""
    return {
        stage: seconds / recorded[stage]
        for stage, seconds in times.items()
        if stage in recorded
        and seconds > SLOWER * recorded[stage]
        and seconds - recorded[stage] > SLOWER_FLOOR_S
    }


def slower_text(slower: dict[str, float]) -> str:
    return ", ".join(f"{stage} {factor:.1f}x" for stage, factor in slower.items())


def read_baseline(path: Path) -> dict[str, dict[str, float]]:
    if not path.exists():
        return {}
    return json.loads(path.read_text())["stages_s"]


def write_baseline(path: Path, suite: dict[str, Any], info: dict[str, Any]) -> None:
    recorded = {
        "machine": info,
        "stages_s": {name: r["stages_s"] for name, r in suite.items()},
    }
    path.write_text(json.dumps(recorded, indent=2) + "\n")
    print(f"\nrecorded the baseline in {path}")


# --------------------------------------------------------------------------
# TorchInductor side by side (--inductor)
# --------------------------------------------------------------------------


def end_to_end_seconds(name: str, repeat: int) -> float:
    """The fastest of ``repeat`` ``irc.compile`` calls of suite program
    ``name`` to its emitted source, as a user meets it: the driver's own
    work (copies of each level's IR, logs) and the garbage collector as
    irc leaves it, the compile cache off."""
    program, call = SUITE[name], SUITE[name].specs()
    best = float("inf")
    for _ in range(repeat):
        begin = time.perf_counter()
        source = irc.compile(program.function, *call.args, **call.kwargs).triton_source
        assert source  # lowered and emitted
        best = min(best, time.perf_counter() - begin)
    return best


def inductor_child(name: str) -> float:
    """In this (fresh) process: the seconds from ``torch.compile`` of suite
    program ``name``'s torch translation to its first result, at the
    suite's small sizes with the symbolic dims marked dynamic."""
    import torch
    from autodiff import warm_up_inductor
    from gpu import Factory, programs, torch_translations

    program = next(p for p in programs(small=True) if p.name == name)
    call = program.make(program.small, Factory("cpu"))
    spec_leaves = pytree.flatten((list(program.specs.args), program.specs.kwargs))
    leaves = pytree.flatten((list(call.args), call.kwargs))
    for spec, leaf in zip(spec_leaves[0], leaves[0], strict=True):
        for axis, dim in enumerate(getattr(spec, "shape", ())):
            if isinstance(dim, str):
                torch._dynamo.mark_dynamic(leaf, axis)
    function = torch_translations()[name]
    warm_up_inductor()
    begin = time.perf_counter()
    torch.compile(function)(*call.args, **call.kwargs)
    return time.perf_counter() - begin


def measure_inductor(names: Sequence[str], timeout: float) -> dict[str, float]:
    """Each program's ``inductor_child`` in a fresh process, with a fresh
    Inductor cache directory and the FX graph and AOTAutograd caches off,
    after a warm-up compile of an unrelated function (Inductor's imports,
    compile workers and toolchain checks paid, as irc's imports are before
    its timings)."""
    from autodiff import INDUCTOR_ENV

    def child(name: str) -> float:
        with tempfile.TemporaryDirectory(prefix="inductor-") as cache:
            env = {**os.environ, **INDUCTOR_ENV, "TORCHINDUCTOR_CACHE_DIR": cache}
            done = subprocess.run(
                [sys.executable, __file__, "--inductor-child", name],
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=True,
            )
        return float(done.stdout.splitlines()[-1])

    return {name: child(name) for name in names}


def run_scaling(repeat: int, sizes: Sequence[int], keep_gc: bool) -> dict[str, Any]:
    jobs: list[Job] = [(synthetic(steps_for(n)), synthetic_args(), {}) for n in sizes]
    points = [
        {
            "target_ops": target,
            "ops": ops,
            "kernels": kernels,
            "stages_s": times,
            **columns(times),
        }
        for target, (times, ops, kernels) in zip(sizes, best_of(repeat, jobs, keep_gc))
    ]
    ops = [p["ops"] for p in points]
    fits = {c: linear_fit(ops, [p[c] for p in points]) for c in COLUMNS}
    for fit in fits.values():
        slope = fit["slope_s_per_op"]
        fit["ops_per_s"] = 1.0 / slope if slope > 0 else float("inf")
    rows = [
        [str(p["ops"]), str(p["kernels"]), *(ms(p[c]) for c in COLUMNS)] for p in points
    ]
    print_table(
        f"Compile time against graph size (ms, best of {repeat})",
        ["ops", "kernels", *(short(c) for c in COLUMNS)],
        rows,
    )
    throughput = [
        [str(p["ops"]), *(f"{p['ops'] / p[c]:,.0f}" for c in COLUMNS)] for p in points
    ]
    print_table(
        "Throughput (graph ops per second of each stage)",
        ["ops", *(short(c) for c in COLUMNS)],
        throughput,
    )
    print_table(
        "Linear fit time = a + b * ops",
        ["", *(short(c) for c in COLUMNS)],
        [
            ["b (us/op)", *(f"{fits[c]['slope_s_per_op'] * 1e6:.1f}" for c in COLUMNS)],
            ["a (ms)", *(f"{fits[c]['intercept_s'] * 1e3:.1f}" for c in COLUMNS)],
            ["ops/s (1/b)", *(f"{fits[c]['ops_per_s']:,.0f}" for c in COLUMNS)],
            ["R^2", *(f"{fits[c]['r2']:.4f}" for c in COLUMNS)],
            ["k, t ~ ops^k", *(f"{fits[c]['exponent']:.2f}" for c in COLUMNS)],
        ],
    )
    return {"points": points, "fit": fits}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per measurement (best kept)"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=GRAPH_SIZES, help="graph sizes (ops)"
    )
    parser.add_argument(
        "--only", nargs="*", default=(), help="suite programs to time (default all)"
    )
    parser.add_argument(
        "--no-scaling", action="store_true", help="skip the graph-size sweep"
    )
    parser.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on while timing"
    )
    parser.add_argument(
        "--inductor",
        action="store_true",
        help="also time TorchInductor's compile of each suite program",
    )
    parser.add_argument("--inductor-timeout", type=float, default=600.0)
    parser.add_argument(
        "--baseline", type=Path, default=BASELINE, help="the recorded stage times"
    )
    parser.add_argument(
        "--write-baseline",
        action="store_true",
        help="record this run's suite figures as the baseline",
    )
    parser.add_argument("--inductor-child", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.inductor_child:
        print(inductor_child(options.inductor_child))
        return

    os.environ["IRC_CACHE"] = "0"  # irc.compile compiles (--inductor)
    # One compilation first, so that imports and xDSL's lazy set-up are not
    # charged to the first program.
    time_stages(SUITE["softmax"].function, SUITE["softmax"].specs().args, {})
    info = machine()
    print(
        f"machine: {info['cpus']} CPUs, {info['processor']}, Python {info['python']}, "
        f"xDSL {info['xdsl']}, Triton {info['triton']}"
    )
    print(f"garbage collector {'on' if options.gc else 'off'} while timing")
    results: dict[str, Any] = {
        "machine": info,
        "repeat": options.repeat,
        "gc": options.gc,
    }
    names = [name for name in SUITE if not options.only or name in options.only]
    inductor = (
        measure_inductor(names, options.inductor_timeout) if options.inductor else None
    )
    baseline = {} if options.write_baseline else read_baseline(options.baseline)
    suite = run_suite(options.repeat, names, options.gc, baseline, inductor)
    results["suite"] = suite
    if not options.no_scaling:
        results["scaling"] = run_scaling(options.repeat, options.sizes, options.gc)
    if options.json:
        options.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nwrote {options.json}")
    if options.write_baseline:
        write_baseline(options.baseline, suite, info)
        return
    slower = {name: r["slower"] for name, r in suite.items() if r["slower"]}
    if slower:
        print(f"\nSLOWER THAN THE BASELINE ({options.baseline.name}, x{SLOWER}):")
        for name, stages in slower.items():
            print(f"  {name}: {slower_text(stages)}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
