"""``torch.compile(model, backend="irc")``: ATen graphs converted, compiled
once for every size, in inference and training, against eager PyTorch.

The models are Hugging Face ``transformers`` models built from small
configs with random weights (nothing is downloaded): code nobody here
wrote, as a user meets it.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import irc.torch as irc_torch  # noqa: E402
from irc.errors import IrcError  # noqa: E402
from irc.testing.models import (  # noqa: E402
    MODELS,
    SIZES,
    build,
    example,
    input_name,
    loss,
)
from irc.torch.importer import source_name  # noqa: E402


def _fresh() -> None:
    torch._dynamo.reset()
    irc_torch.counters.clear()
    irc_torch.fallback_ops.clear()


def _compiled(model: Any, runtime: str = "reference", **options: Any) -> Any:
    _fresh()
    return torch.compile(
        model, backend="irc", dynamic=True, options={"runtime": runtime, **options}
    )


# ----- small models ------------------------------------------------------------


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(8, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.second = torch.nn.Linear(16, 4)

    def forward(self, x: Any) -> Any:
        hidden = self.norm(torch.nn.functional.gelu(self.first(x)))
        return torch.log_softmax(self.second(hidden), -1)


def _mlp() -> Mlp:
    torch.manual_seed(0)
    return Mlp()


def test_the_entry_point_names_the_backend() -> None:
    from importlib.metadata import entry_points

    (entry,) = [
        e for e in entry_points(group="torch_dynamo_backends") if e.name == "irc"
    ]
    assert entry.load() is irc_torch.backend


@pytest.mark.parametrize("runtime", ["reference", "interpret"])
def test_an_mlp_matches_eager_at_two_sizes_with_one_compilation(runtime: str) -> None:
    model = _mlp()
    compiled = _compiled(model, runtime)
    with torch.no_grad():
        for rows in (3, 7):
            x = torch.randn(rows, 8)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert irc_torch.counters["compilations"] == 1


def _train_step(model: Any, optimizer: Any, x: Any, target: Any) -> Any:
    loss = torch.nn.functional.nll_loss(model(x), target)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss


@pytest.mark.parametrize("runtime", ["reference", "interpret"])
def test_an_mlp_trains_as_eager_does(runtime: str) -> None:
    model = _mlp()
    reference = copy.deepcopy(model)
    compiled = _compiled(model, runtime)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for rows in (3, 7):
        x, target = torch.randn(rows, 8), torch.randint(0, 4, (rows,))
        loss = _train_step(compiled, optimizer, x, target)
        expected = _train_step(reference, reference_optimizer, x, target)
        torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    for weight, expected in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(weight, expected, rtol=1e-5, atol=1e-6)
    # the forward and the backward, each compiled once for both sizes
    assert irc_torch.counters["compilations"] == 2


def test_index_tensors_on_leading_dims_read_and_write_as_eager() -> None:
    """``x[rows, cols]`` reads and ``index_put`` writes (accumulating
    repeated positions) through index tensors on the leading dims, negative
    ones wrapping."""

    def model(x: Any, rows: Any, cols: Any, values: Any) -> Any:
        read = x[rows, cols]
        written = torch.index_put(x, (rows, cols), values, accumulate=True)
        return read, written

    compiled = _compiled(model)
    for n in (4, 6):
        x = torch.randn(n, 5, 3)
        rows = torch.tensor([0, -1, 2, 0])
        cols = torch.tensor([1, 4, -2, 1])  # (0, 1) twice: its values add up
        values = torch.randn(4, 3)
        for got, expected in zip(
            compiled(x, rows, cols, values), model(x, rows, cols, values)
        ):
            torch.testing.assert_close(got, expected)
    assert not irc_torch.fallback_ops


def test_an_unsupported_op_falls_back_to_eager_and_is_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def model(x: Any) -> Any:
        values, _ = torch.sort(torch.exp(x), dim=-1)  # irc has no sort
        return torch.tanh(values) * 2

    monkeypatch.setenv("IRC_LOGS", "torch")
    x = torch.randn(4, 6)
    with caplog.at_level(logging.INFO, logger="irc.torch"):
        result = _compiled(model)(x)
    torch.testing.assert_close(result, model(x))
    assert irc_torch.fallback_ops["aten.sort.default"] == 1
    assert any("aten.sort.default" in r.getMessage() for r in caplog.records)


def test_a_form_irc_does_not_take_falls_back_by_itself() -> None:
    """Dropout in training converts only at p = 0 (irc is deterministic):
    the node runs eagerly, the ops around it in irc."""

    def model(x: Any) -> Any:
        dropped = torch.nn.functional.dropout(torch.exp(x), p=0.5, training=True)
        return torch.tanh(dropped) + torch.sin(x)

    _fresh()
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0))
    result = torch.compile(model, backend="irc", options={"runtime": "reference"})(x)
    # An absolute tolerance: tanh(2 exp(x)) + sin(x) is near 0 for some x,
    # where float32 roundings of irc's and torch's differ by more than a
    # relative 1e-5 (which depended on the global seed).
    kept = torch.isclose(
        result, torch.tanh(torch.exp(x) * 2) + torch.sin(x), rtol=1e-5, atol=1e-6
    )
    dropped = torch.isclose(result, torch.sin(x), rtol=1e-5, atol=1e-6)
    assert bool((kept | dropped).all())
    assert 0 < kept.float().mean() < 1
    assert irc_torch.fallback_ops["aten.native_dropout.default"] == 1


def test_fallback_false_refuses_an_unsupported_op() -> None:
    def model(x: Any) -> Any:
        return torch.sort(x, dim=-1)[0] + 1

    with pytest.raises(Exception, match=r"aten\.sort\.default.*fallback=False"):
        _compiled(model, fallback=False)(torch.randn(4, 6))


def test_an_unknown_option_is_a_clear_error() -> None:
    with pytest.raises(Exception, match="unknown irc backend option.*runtme"):
        _compiled(_mlp(), runtme="interpret")(torch.randn(2, 8))


def test_coverage_lists_the_ops_without_compiling() -> None:
    def model(x: Any) -> Any:
        return torch.sort(torch.exp(x), dim=-1)[0]

    _fresh()
    report = irc_torch.coverage(model, torch.randn(4, 6))
    assert report.unsupported == {"aten.sort.default": 1}
    assert "aten.exp.default" in report.covered
    assert irc_torch.counters["compilations"] == 0
    assert "not covered: aten.sort.default (1x)" in str(report)


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("L['x'].size()[0]", "x_dim0"),
        ("L['args'][0].size()[1]", "v_0_dim1"),
        ("L['input_ids'].stride()[0]", "input_ids_stride0"),
        ("L['logits_to_keep']", "logits_to_keep"),
        ("L['self']._modules['h']._modules['0'].size()[2]", "h_0_dim2"),
    ],
)
def test_symbols_are_named_after_their_sources(source: str, name: str) -> None:
    assert source_name(source) == name


def test_symbols_of_a_dynamic_graph_are_readable_in_the_ir(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IRC_LOGS", "graph")
    with caplog.at_level(logging.INFO, logger="irc.graph"), torch.no_grad():
        _compiled(_mlp())(torch.randn(3, 8))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "!graph.tensor<[x_dim0, 8], f32>" in text


def test_a_runtime_error_names_the_runtimes() -> None:
    with pytest.raises(IrcError, match="runtime='gpu'.*auto, triton, interpret"):
        irc_torch.compiler.Options.parse({"runtime": "gpu"})


# ----- Hugging Face models ---------------------------------------------------------


# Each model on irc's reference interpreter (the graph-level meaning) and on
# the emitted Triton kernels under Triton's interpreter (the code a GPU runs).
RUNTIMES = ("reference", "interpret")


@pytest.mark.slow  # five models compiled, about 10 s each on a 2-core machine
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_model_matches_eager_in_inference_with_one_compilation(
    name: str, runtime: str
) -> None:
    _matches_eager_in_inference(name, runtime)


def _matches_eager_in_inference(name: str, runtime: str) -> None:
    model = build(name).eval()
    compiled = _compiled(model, runtime)
    with torch.no_grad():
        for batch, sequence in SIZES:
            x = {input_name(name): example(name, batch, sequence)}
            got = compiled(**x).last_hidden_state
            expected = model(**x).last_hidden_state
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    assert irc_torch.counters["compilations"] == 1
    assert not irc_torch.fallback_ops


@pytest.mark.slow  # a forward and a backward per model, two steps each
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_model_trains_as_eager_does(name: str, runtime: str) -> None:
    model = build(name, head=True).train()
    reference = copy.deepcopy(model)
    compiled = _compiled(model, runtime)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for batch, sequence in SIZES:
        x = example(name, batch, sequence)
        got, expected = loss(compiled, x), loss(reference, x)
        got.backward()
        expected.backward()
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
        for weight, want in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(weight.grad, want.grad, rtol=1e-4, atol=1e-5)
        optimizer.step()
        reference_optimizer.step()
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
    for weight, want in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(weight, want, rtol=1e-4, atol=1e-5)
    assert not irc_torch.fallback_ops  # the backward's scatters included
    if runtime == "interpret":
        return  # compilations do not depend on the runtime: checked once below
    # no graph compiled again for a third size
    compilations = irc_torch.counters["compilations"]
    loss(compiled, example(name, 4, 6))
    assert irc_torch.counters["compilations"] == compilations


def test_batch_norm_updates_its_running_statistics_as_eager_does() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU()
    )
    reference = copy.deepcopy(model)
    compiled = _compiled(model)
    for rows in (5, 9):
        x = torch.randn(rows, 4)
        torch.testing.assert_close(compiled(x), reference(x))
    norm, expected = model[1], reference[1]
    torch.testing.assert_close(norm.running_mean, expected.running_mean)
    torch.testing.assert_close(norm.running_var, expected.running_var)
    assert int(norm.num_batches_tracked) == 2
    model.eval()
    reference.eval()
    with torch.no_grad():
        x = torch.randn(3, 4)
        torch.testing.assert_close(compiled(x), reference(x))
    assert not irc_torch.fallback_ops


# ----- CUDA tensors: Triton's real launch path ---------------------------------------


def _on_the_launch_path(name: str) -> dict[str, Any]:
    """``tests/fake_gpu_torch.py``'s report: ``name`` trained a step at two
    batch sizes with ``runtime="triton"``, each kernel compiled for an H100
    and launched through the fake CUDA driver, in a process that compiles."""
    from fake_gpu_suite import run_compiling
    from fake_gpu_torch import __file__ as script

    completed = run_compiling([script, name], timeout=900)
    assert completed.returncode == 0, completed.stderr[-4000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _check_launches(report: dict[str, Any]) -> None:
    assert report["fallback_ops"] == 0
    assert report["compilations"] == 2  # a forward and a backward, both sizes
    for step in report["steps"]:
        assert step["launches"] == report["kernels"]  # every kernel, each step
        assert step["result"] == step["eager"]  # shape, strides and dtype
        assert step["gradients"]


def test_an_mlp_trains_on_the_gpu_launch_path() -> None:
    _check_launches(_on_the_launch_path("mlp"))


@pytest.mark.slow  # Llama's forward and backward kernels compiled for an H100
def test_llama_trains_on_the_gpu_launch_path() -> None:
    _check_launches(_on_the_launch_path("llama"))
