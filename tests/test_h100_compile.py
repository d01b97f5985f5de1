"""Every kernel the suite emits gets through Triton's real compiler for an
H100 (sm_90) on a machine without a GPU: ``triton.compile`` lowers it to
TTIR, TTGIR, LLIR and PTX and assembles a cubin with the bundled ptxas.

The interpreter (``test_end_to_end.py``) runs the kernels' semantics on
NumPy and tolerates what the compiler refuses (non-constexpr shapes, block
sizes that are not powers of two, mismatched types in ``tl.where`` or in
loop-carried values, ``tl.dot`` operands below the minimum size); this test
is what catches those before a GPU ever sees the source.

Triton fixes when it is imported whether a process interprets or compiles
kernels (``irc.runtime.triton_backend.TritonModeError``), and the rest of
the tests interpret, so the compilation runs in a subprocess: this file run
as a script compiles every suite program's kernels and writes a JSON report,
which the tests below read. Triton caches compiled kernels on disk
(``TRITON_CACHE_DIR``), so a second run mostly reads the cache; a cold run
of the whole suite takes about 10 s on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest
from suite_programs import SUITE

#: An H100: CUDA, compute capability 9.0, warps of 32 threads.
TARGET = ("cuda", 90, 32)
ELF_MAGIC = b"\x7fELF"


def compile_suite(names: list[str]) -> dict[str, Any]:
    """Compile each program's kernels for the H100 (in this process, which
    must not have interpreted anything); a report per program."""
    from triton.backends.compiler import GPUTarget

    from irc.runtime import triton_backend

    target = GPUTarget(*TARGET)
    report: dict[str, Any] = {}
    for name in names:
        try:
            c = SUITE[name].compile()
            module = triton_backend.load_source(c.triton_source, interpret=False)
            compiled = triton_backend.compile_for_target(module, target)
        except Exception:
            report[name] = {"error": traceback.format_exc()}
            continue
        kernels = {}
        for kernel, binary in compiled.items():
            ptx = binary.asm.get("ptx", "")
            cubin = binary.asm.get("cubin", b"")
            kernels[kernel] = {
                "sm_90": ".target sm_90" in ptx,
                "entry": f".entry {kernel}" in ptx,
                "cubin_bytes": len(cubin) if cubin[:4] == ELF_MAGIC else 0,
            }
        report[name] = {
            "launches": c.num_kernels,
            "declared": sorted(module.KERNELS),
            "kernels": kernels,
        }
    return report


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The report of one subprocess that compiles the whole suite."""
    out = tmp_path_factory.mktemp("h100") / "report.json"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    root = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(root), env.get("PYTHONPATH", "")) if p
    )
    completed = subprocess.run(
        [sys.executable, __file__, str(out), *SUITE],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("name", sorted(SUITE))
def test_kernels_compile_for_h100(name: str, report: dict[str, Any]) -> None:
    result = report[name]
    assert "error" not in result, result.get("error")
    # One jit function per kernel launched, and every one compiled.
    assert len(result["declared"]) == result["launches"]
    assert sorted(result["kernels"]) == result["declared"]
    for kernel, binary in result["kernels"].items():
        assert binary["sm_90"], f"{name}/{kernel}: no sm_90 PTX"
        assert binary["entry"], f"{name}/{kernel}: the PTX has no entry {kernel}"
        assert binary["cubin_bytes"] > 0, f"{name}/{kernel}: no cubin"


if __name__ == "__main__":
    # python tests/test_h100_compile.py REPORT.json [PROGRAM...]
    out_path, *programs = sys.argv[1:]
    Path(out_path).write_text(json.dumps(compile_suite(programs or list(SUITE))))
