"""Triton's interpreter runs irc's kernels whatever imported Triton first.

A script that exports a model with torch first has Triton imported to
compile (``TRITON_INTERPRET`` unset), which makes Triton's standard library
(``tl.sum``, ``tl.max``, ...) compiled functions. On a CPU-only machine the
compiled model must still run on the interpreter, without the user setting
anything. Each check runs in a fresh Python process, as such a script does
(this test process imported Triton to interpret long ago).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")

EXPORT_THEN_INTERPRET = """
import io
import numpy as np
import torch
import triton.language as tl

from triton.runtime.jit import JITFunction

assert isinstance(tl.sum, JITFunction), "triton was imported to interpret"

class Model(torch.nn.Module):
    def forward(self, x):
        y = torch.softmax(x @ x.transpose(0, 1), dim=-1)
        return torch.cumsum(y, dim=1).amax(dim=0) + y.argmax(dim=1)

model = Model()
buffer = io.BytesIO()
torch.onnx.export(
    model, (torch.zeros(3, 4),), buffer, dynamo=False,
    input_names=["x"], dynamic_axes={"x": {0: "n"}},
)

import irc
import irc.onnx

f = irc.onnx.load(buffer.getvalue())
compiled = f.compile()
x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
expected = model(torch.from_numpy(x)).numpy()
np.testing.assert_allclose(compiled(x, backend="interpret"), expected, rtol=1e-5, atol=1e-5)
np.testing.assert_allclose(compiled(x, backend="reference"), expected, rtol=1e-5, atol=1e-5)
assert isinstance(tl.sum, JITFunction), "the standard library was left swapped"
print("ok")
"""


def run_fresh(script: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_interpreting_after_torch_imported_triton_to_compile() -> None:
    result = run_fresh(EXPORT_THEN_INTERPRET)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def test_compiling_after_triton_was_imported_to_interpret_says_why_not() -> None:
    script = """
    import os
    os.environ["TRITON_INTERPRET"] = "1"
    import triton.language
    from irc.runtime.triton_backend import TritonModeError, import_triton
    try:
        import_triton(interpret=False)
    except TritonModeError as error:
        print(error)
    """
    result = run_fresh(script)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cannot compile Triton kernels" in result.stdout
    assert "unset TRITON_INTERPRET" in result.stdout
