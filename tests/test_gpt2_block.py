"""A GPT-2 transformer block written in plain NumPy (as in picoGPT), captured
with the sequence length symbolic and run on the reference backend."""

import numpy as np
import pytest
from programs import N_EMBD, N_HEAD, compile_block, transformer_block, weights

import irc


@pytest.fixture(scope="module")
def compiled_block():
    return compile_block()


def test_block_ir_keeps_the_sequence_length_symbolic(compiled_block):
    text = compiled_block.ir("graph")
    assert "!graph.tensor<[seq, 16], f32>" in text
    assert "[seq, seq]" in text  # the causal mask
    # The heads' scores, batched over a leading head axis by horizontal-fusion.
    assert f"[{N_HEAD}, seq, seq]" in text
    assert "graph.matmul" in text and "graph.concat" not in text


@pytest.mark.parametrize("seq", [1, 3, 8])
def test_block_matches_numpy(compiled_block, seq):
    rng = np.random.default_rng(seq)
    params = weights(rng)
    x = rng.standard_normal((seq, N_EMBD)).astype(np.float32)
    expected = transformer_block(x, **params, n_head=N_HEAD)
    result = compiled_block(x, **params, n_head=N_HEAD, backend="reference")
    assert result.dtype == expected.dtype
    assert result.shape == (seq, N_EMBD)
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


def test_block_refuses_another_head_count(compiled_block):
    params = weights(np.random.default_rng(0))
    x = np.zeros((2, N_EMBD), np.float32)
    with pytest.raises(irc.BindingError, match="static argument"):
        compiled_block(x, **params, n_head=4, backend="reference")
