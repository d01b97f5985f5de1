"""End to end: every suite program compiled by ``irc.compile``'s default
pipeline runs on Triton's interpreter (the emitted kernels and launcher,
serially on the CPU) and returns what the NumPy function returns, at several
bindings of its symbols, with the number of kernel launches the fusion
promises.

Beyond the numbers: one compilation serves every binding (no new capture,
lowering or emission for a new size), arrays come back as the kind they went
in (NumPy or torch), ``backend="auto"`` runs without a GPU, a broken guard
is a ``BindingError`` naming its symbol, and researchers' own pass lists
(the default minus the clean-ups, one that stops after ``fuse``) still
compile to programs that run.

Shapes are small: the interpreter runs the grid one program at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any
from unittest import mock

import numpy as np
import pytest
from suite_programs import SIZES, SUITE, SuiteProgram

import irc
import irc.api
import irc.backend.triton
import irc.driver
from irc.errors import BindingError
from irc.passes.registry import get_all_passes
from irc.runtime import triton_backend

torch = pytest.importorskip("torch")

#: Kernel launches per call. The row programs, GELU(x @ W + b), the
#: elementwise chain and the head split are one kernel each and the two-layer
#: MLP two; for the rest the launches are the kernels ``fuse`` forms.
KERNELS: dict[str, int] = {
    **{name: program.kernels for name, program in SUITE.items()},
    "softmax": 1,
    "log_softmax": 1,
    "logsumexp": 1,
    "layer_norm": 1,
    "rms_norm": 1,
    "l2_normalize": 1,
    "gelu_linear": 1,
    "elementwise_broadcast": 1,
    "head_split": 1,
    "mlp": 2,
}

#: (rtol, atol) against NumPy's float32 results. The relative part covers
#: the different order of float32 sums: tiled reductions add 1024 lanes at a
#: time and then across lanes, matmuls accumulate K in blocks, where NumPy
#: adds pairwise or calls BLAS (observed: at most 5e-6 away from zero). The
#: absolute part is for results near zero, where a relative bound means
#: nothing: x - mean(x) in the layer norm, and the near-cancelling dot
#: products of the matmul programs, whose terms are O(1), so that rounding
#: one term is ~1e-7 absolute however small the sum (observed: up to 8e-7
#: absolute, 2e-2 relative). tanh, erf and float pow are computed in float64
#: by the emitted kernels (not approximated), so they need nothing beyond
#: float32 rounding.
TOLERANCE: dict[str, tuple[float, float]] = {
    "default": (1e-5, 1e-6),
    **dict.fromkeys(
        [
            "layer_norm",
            "gelu_linear",
            "mlp",
            "swiglu",
            "causal_attention",
            "gpt2_block",
        ],
        (1e-5, 5e-6),
    ),
}


@pytest.fixture(scope="module")
def compiled() -> Callable[[str], irc.Compiled]:
    """Each suite program compiled once for the whole module."""
    cache: dict[str, irc.Compiled] = {}

    def get(name: str) -> irc.Compiled:
        if name not in cache:
            cache[name] = SUITE[name].compile()
        return cache[name]

    return get


def leaves(value: Any) -> list[Any]:
    """The arrays of a result (a single array or a tuple of them)."""
    return list(value) if isinstance(value, tuple | list) else [value]


def inputs(program: SuiteProgram, sizes: Mapping[str, int], seed: int = 0) -> Any:
    return program.inputs(np.random.default_rng(seed), **sizes)


def assert_matches(name: str, got: Any, expected: Any, context: str) -> None:
    rtol, atol = TOLERANCE.get(name, TOLERANCE["default"])
    got_leaves, expected_leaves = leaves(got), leaves(expected)
    assert len(got_leaves) == len(expected_leaves), context
    for index, (g, e) in enumerate(zip(got_leaves, expected_leaves)):
        e = np.asarray(e)
        where = f"{context}, output {index}"
        assert isinstance(g, np.ndarray), f"{where}: got {type(g).__name__}"
        assert g.dtype == e.dtype, f"{where}: dtype {g.dtype} != {e.dtype}"
        np.testing.assert_allclose(
            g, e, rtol=rtol, atol=atol, strict=True, err_msg=where
        )


def run_sizes(name: str, compiled_fn: irc.Compiled, **call_options: Any) -> None:
    """Run ``compiled_fn`` at every binding of ``name`` and compare."""
    program = SUITE[name]
    for sizes in SIZES[name]:
        call = inputs(program, sizes)
        expected = program.function(*call.args, **call.kwargs)
        got = compiled_fn(*call.args, **call.kwargs, **call_options)
        assert_matches(name, got, expected, f"{name} at {sizes}")


def test_every_program_has_bindings() -> None:
    assert set(SIZES) == set(SUITE)


@pytest.mark.parametrize("name", sorted(SUITE))
def test_suite_program_matches_numpy(name: str, compiled) -> None:
    run_sizes(name, compiled(name), backend="interpret")


@pytest.mark.parametrize("name", sorted(SUITE))
def test_kernel_launches(name: str, compiled) -> None:
    c = compiled(name)
    assert c.num_kernels == KERNELS[name]
    # Launches equal the kernels fusion formed: no kernel is split or dropped
    # on the way down.
    assert c.num_kernels == SUITE[name].kernels


@pytest.fixture
def counters() -> Iterator[dict[str, mock.MagicMock]]:
    """Spies on capture, the passes of the pipeline and the emitter.

    ``irc.compile`` calls the ``capture`` it imported into ``irc.api``, so
    the spy sits there; the driver runs passes through its ``apply_passes``
    and imports ``emit_module`` from its module on use, so those are
    patched in place."""
    with (
        mock.patch.object(irc.api, "capture", wraps=irc.api.capture) as capture,
        mock.patch.object(
            irc.driver, "apply_passes", wraps=irc.driver.apply_passes
        ) as apply,
        mock.patch.object(
            irc.backend.triton, "emit_module", wraps=irc.backend.triton.emit_module
        ) as emit,
    ):
        yield {"capture": capture, "apply": apply, "emit": emit}


def test_one_compilation_serves_every_binding(counters) -> None:
    program = SUITE["layer_norm"]
    c = program.compile()
    assert counters["capture"].call_count == 1
    source = c.triton_source
    calls = {key: spy.call_count for key, spy in counters.items()}
    assert calls["emit"] == 1
    assert calls["apply"] > 0  # the spy sees the passes run
    for sizes in [
        {"N": 1, "D": 1},
        {"N": 5, "D": 3},
        {"N": 2, "D": 1100},
        {"N": 1, "D": 1},
    ]:
        call = inputs(program, sizes)
        assert_matches(
            "layer_norm",
            c(*call.args, backend="interpret"),
            program.function(*call.args),
            f"layer_norm at {sizes}",
        )
        assert c.triton_source is source
    assert {key: spy.call_count for key, spy in counters.items()} == calls


def test_jit_compiles_once_for_new_symbol_values(counters) -> None:
    function = irc.jit(SUITE["softmax"].function, dims={"x": ("N", "D")})
    rng = np.random.default_rng(1)
    for shape in [(1, 1), (3, 7), (4, 5)]:
        x = rng.standard_normal(shape).astype(np.float32)
        assert_matches(
            "softmax",
            function(x, backend="interpret"),
            SUITE["softmax"].function(x),
            str(shape),
        )
    assert len(function.cache) == 1
    assert counters["capture"].call_count == 1
    assert counters["emit"].call_count == 1


def test_torch_in_torch_out(compiled) -> None:
    for name, sizes in [("softmax", {"N": 3, "D": 7}), ("adam_step", {"N": 7})]:
        program = SUITE[name]
        call = inputs(program, sizes)
        tensors = [torch.from_numpy(a) for a in call.args]
        got = compiled(name)(*tensors, backend="interpret")
        for leaf in leaves(got):
            assert isinstance(leaf, torch.Tensor), type(leaf)
            assert leaf.device.type == "cpu"
        assert_matches(
            name,
            [leaf.numpy() for leaf in leaves(got)],
            program.function(*call.args),
            f"{name} from torch",
        )


def test_numpy_in_numpy_out_rank_zero(compiled) -> None:
    """cross_entropy returns a scalar: a 0-d float32 array, as NumPy does."""
    call = inputs(SUITE["cross_entropy"], {"N": 4, "V": 10})
    got = compiled("cross_entropy")(*call.args, backend="interpret")
    assert isinstance(got, np.ndarray)
    assert got.shape == ()
    assert got.dtype == np.float32


def test_auto_backend_without_gpu() -> None:
    program = SUITE["rms_norm"]
    call = inputs(program, {"N": 3, "D": 7})
    fresh = program.compile()
    launcher = triton_backend.Launcher
    with mock.patch.object(triton_backend, "Launcher", wraps=launcher) as bound:
        got = fresh(*call.args, backend="auto")
        again = fresh(*call.args, backend="auto")
    for result in (got, again):
        assert_matches("rms_norm", result, program.function(*call.args), "auto")
    if triton_backend.gpu_device() is None:
        # Resolved to the interpreter once, on the first call.
        assert bound.call_count == 1
        assert bound.call_args.kwargs["interpret"] is True


def test_guard_violation_names_the_symbol(compiled) -> None:
    c = compiled("embedding")
    call = inputs(SUITE["embedding"], {"N": 33})
    with pytest.raises(BindingError, match=r"N <= 32.*\bN = 33\b"):
        c(*call.args, backend="interpret")
    # The launcher checks the guard too, for standalone use of the source.
    module = triton_backend.load_source(c.triton_source, interpret=True)
    launcher = getattr(module, module.ENTRY)
    with pytest.raises(ValueError, match=r"\bN\b.*33|33.*\bN\b"):
        launcher(*(torch.from_numpy(a) for a in call.args))


def passes(*names: str) -> list[Any]:
    available = get_all_passes()
    return [available[name]()() for name in names]


LOWERING = ("fuse", "tile", "bufferize", "lower-memory-to-triton")


@pytest.mark.parametrize(
    "pipeline",
    [
        pytest.param(lambda: passes(*LOWERING), id="default-minus-cleanups"),
        pytest.param(lambda: passes("canonicalize", "cse", "fuse"), id="stops-at-fuse"),
        pytest.param(lambda: passes("cse"), id="graph-only"),
    ],
)
@pytest.mark.parametrize("name", ["layer_norm", "mlp", "adam_step"])
def test_custom_pipeline(name: str, pipeline: Callable[[], list[Any]]) -> None:
    c = SUITE[name].compile(pipeline=pipeline())
    assert c.levels == ("graph", "fusion", "loop", "memory", "triton")
    assert c.num_kernels == KERNELS[name]
    run_sizes(name, c, backend="interpret")


def test_results_never_alias_the_arguments() -> None:
    """A returned argument and a value returned twice come back as fresh
    arrays, as from the reference backend."""
    compiled = irc.compile(
        lambda x: (x, x * 2, x * 2), irc.TensorSpec(("N",), "float32")
    )
    x = np.arange(3, dtype=np.float32)
    same, double, again = compiled(x, backend="interpret")
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(double, again)
    assert not np.shares_memory(same, x)
    assert not np.shares_memory(double, again)


def _log_softmax_without_keepdims(x):
    shifted = x - x.max(axis=1)[:, None]
    return shifted - np.log(np.exp(shifted).sum(axis=1))[:, None]


def _logsumexp_without_keepdims(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[:, None]).sum(-1))


@pytest.mark.parametrize(
    "function", [_log_softmax_without_keepdims, _logsumexp_without_keepdims]
)
def test_row_reductions_reshaped_back_fuse(function) -> None:
    """``m[:, None]`` (a reshape between the per-row shapes) fuses as
    ``keepdims=True`` does: one kernel."""
    compiled = irc.compile(function, irc.TensorSpec(("N", "D"), "float32"))
    assert compiled.num_kernels == 1
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 7), (2, 1100)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(
            compiled(x, backend="interpret"), function(x), rtol=1e-5, atol=1e-6
        )


def _row_statistics(x):
    return x.mean(1), (x * x).mean(1), x.max(1), x.argmax(1)


def test_sibling_reductions_share_one_kernel() -> None:
    """Four reductions of the same rows, none reading another: one kernel,
    persistent or looped (D = 5000 is past the persistent limit)."""
    compiled = irc.compile(_row_statistics, irc.TensorSpec(("N", "D"), "float32"))
    assert compiled.num_kernels == 1
    rng = np.random.default_rng(0)
    for shape in [(1, 1), (3, 7), (2, 5000)]:
        x = rng.standard_normal(shape).astype(np.float32)
        got = compiled(x, backend="interpret")
        for value, expected in zip(got, _row_statistics(x), strict=True):
            np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)
