"""Hugging Face ``transformers`` models from small configs, random weights:
code nobody here wrote, as a user of the torch backend meets it.

``build(name, head=False)`` makes one (seeded, dropout off, nothing
downloaded); ``MODELS`` names them; ``tokens(batch, sequence)`` is an input.
The tests (``tests/test_torch_backend.py``) and the benchmark
(``benchmarks/torch_backend.py``) use the same ones. Needs ``torch`` and
``transformers`` (the test extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: (batch, sequence) sizes the tests run each model at, with one compilation.
SIZES = ((2, 8), (3, 5))
VOCABULARY = 32

_TOKENS = {"bos_token_id": 0, "eos_token_id": 0}
_DECODER = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,  # grouped-query attention
    "vocab_size": VOCABULARY,
    "max_position_embeddings": 16,
    "pad_token_id": 0,
    **_TOKENS,
}


def gpt2(head: bool) -> Any:
    import transformers as t

    config = t.GPT2Config(
        n_embd=32, n_layer=2, n_head=2, vocab_size=VOCABULARY, n_positions=16, **_TOKENS
    )
    return (t.GPT2LMHeadModel if head else t.GPT2Model)(config)


def llama(head: bool) -> Any:
    import transformers as t

    return (t.LlamaForCausalLM if head else t.LlamaModel)(t.LlamaConfig(**_DECODER))


def qwen2(head: bool) -> Any:
    import transformers as t

    return (t.Qwen2ForCausalLM if head else t.Qwen2Model)(t.Qwen2Config(**_DECODER))


def bert(head: bool) -> Any:
    import transformers as t

    config = t.BertConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        vocab_size=VOCABULARY,
        max_position_embeddings=16,
        pad_token_id=0,
    )
    return (t.BertForMaskedLM if head else t.BertModel)(config)


def t5_encoder(head: bool) -> Any:
    """T5's encoder (it has no head of its own: ``loss`` squares its output)."""
    import transformers as t

    config = t.T5Config(
        d_model=32,
        d_ff=64,
        d_kv=16,
        num_layers=2,
        num_heads=2,
        vocab_size=VOCABULARY,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        dropout_rate=0.0,  # T5's attention reads it, not a Dropout module's p
    )
    return t.T5EncoderModel(config)


MODELS: dict[str, Callable[[bool], Any]] = {
    "gpt2": gpt2,
    "llama": llama,
    "qwen2": qwen2,
    "bert": bert,
    "t5_encoder": t5_encoder,
}


def build(name: str, head: bool = False) -> Any:
    """Model ``name`` (with its language-model head if ``head``), seeded,
    with dropout off so that its runs are deterministic."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    model = MODELS[name](head)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return model


def tokens(batch: int, sequence: int) -> Any:
    """Random token ids (none the padding token 0)."""
    import torch

    return torch.randint(1, VOCABULARY, (batch, sequence))


def loss(model: Any, ids: Any) -> Any:
    """The model's training loss on ``ids``: its own language-model loss,
    or the mean square of T5's encoder output."""
    if model.config.model_type == "t5":
        return model(input_ids=ids).last_hidden_state.pow(2).mean()
    return model(input_ids=ids, labels=ids).loss
