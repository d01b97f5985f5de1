"""benchmarks/gpu.py's CPU checks: what a GPU run would compare must agree
before a device is lent (its time is short, and a script that fails there
measures nothing).

The torch translations of the suite's programs compute what the NumPy
programs do; the torch losses' values and gradients are irc's
``value_and_grad`` of the NumPy losses; and a model's training step runs
through the same code as on the GPU, irc's first loss equal to eager's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import gpu

pytestmark = pytest.mark.slow


def test_the_suite_s_torch_translations_agree_with_numpy() -> None:
    assert gpu.check_translations() == 0


def test_the_losses_torch_gradients_agree_with_irc_s() -> None:
    assert gpu.check_training_translations() == 0


def test_a_model_s_training_step_runs_through_irc_as_on_the_gpu(
    tmp_path: Path,
) -> None:
    (row,) = gpu.run_model("llama", use_compile=False, device="cpu")
    assert "irc_error" not in row and "eager_error" not in row, row
    assert row["matches_torch"], row
    assert row["kernels"] > 0 and row["irc_ms"] > 0 and row["eager_ms"] > 0
    # The report a GPU run writes after each row.
    out = tmp_path / "results.json"
    info = {"gpu": "none", "torch": "-", "triton": "-"}
    table = gpu.report([{**row, "section": "models"}], ["models"], info, out)
    assert "| llama | batch=8 seq=16 |" in table, table
    assert out.with_suffix(".md").read_text() == table
    (written,) = json.loads(out.read_text())["rows"]
    assert written["speedup_eager"] == row["eager_ms"] / row["irc_ms"]


def test_a_planted_wrong_translation_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check can fail: a translation with its sign flipped is counted."""
    translations = gpu.torch_translations()
    softmax = translations["softmax"]
    monkeypatch.setattr(
        gpu,
        "torch_translations",
        lambda: {**translations, "softmax": lambda x: -softmax(x)},
    )
    assert gpu.check_translations() == 1


def test_tune_times_a_program_after_measuring_its_launch_configurations() -> None:
    """``--tune``'s step, on the interpreter: the measurement decides (one
    call per candidate and run), then the tuned calls are timed; the row
    says what each kernel chose."""
    import numpy as np

    import irc

    compiled = irc.compile(gpu.suite.softmax, irc.TensorSpec(("N", "D"), "float32"))
    x = np.random.default_rng(0).standard_normal((2, 200)).astype(np.float32)
    row: dict = {}
    gpu.time_tuned(row, compiled, lambda: compiled(x, backend="interpret"), "interpret")
    ((kernel, chosen),) = row["launch_configurations"].items()
    (config,) = chosen.values()
    assert kernel.startswith("kernel_") and len(config) == 3
    assert row["tuning_calls"] > 1 and row["irc_tuned_ms"] > 0
