"""Hugging Face ``transformers`` models from small configs, random weights:
code nobody here wrote, as a user of the torch backend meets it.

``build(name, head=False)`` makes one (seeded, dropout off, nothing
downloaded); ``MODELS`` names them; ``example(name, batch, sequence)`` is
an input, passed as the keyword ``input_name(name)``: token ids for the
language models, images for ViT, log-mel features for Whisper's encoder
(whose sizes but the batch the config fixes).
The tests (``tests/test_torch_backend.py``) and the benchmark
(``benchmarks/torch_backend.py``) use the same ones. ``with_mask`` makes a
language model a module of token ids and an attention mask, and
``export_onnx`` exports a module by either of torch's ONNX exporters with
dynamic axes (``tests/test_onnx_models.py``, ``benchmarks/onnx_models.py``).
Needs ``torch`` and ``transformers`` (the test extra; the dynamo exporter
also ``onnxscript``).
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Mapping
from typing import Any

#: (batch, sequence) sizes the tests run each model at, with one compilation.
SIZES = ((2, 8), (3, 5))
VOCABULARY = 32
#: ViT's image side and Whisper's mel bins and frames (its encoder takes
#: exactly twice its positions).
IMAGE_SIZE, MEL_BINS, FRAMES = 32, 8, 32

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


def vit(head: bool) -> Any:
    """ViT's encoder: a patch embedding (a convolution with stride = kernel)
    and a transformer (no head of its own: ``loss`` squares its output)."""
    import transformers as t

    config = t.ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        image_size=IMAGE_SIZE,
        patch_size=8,
    )
    return t.ViTModel(config, add_pooling_layer=False)


def whisper_encoder(head: bool) -> Any:
    """Whisper's encoder: two 1-d convolutions with GELU, then a
    transformer (``loss`` squares its output)."""
    import transformers as t
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = t.WhisperConfig(
        d_model=32,
        encoder_layers=2,
        encoder_attention_heads=2,
        encoder_ffn_dim=64,
        num_mel_bins=MEL_BINS,
        max_source_positions=FRAMES // 2,
    )
    return WhisperEncoder(config)


MODELS: dict[str, Callable[[bool], Any]] = {
    "gpt2": gpt2,
    "llama": llama,
    "qwen2": qwen2,
    "bert": bert,
    "t5_encoder": t5_encoder,
    "vit": vit,
    "whisper_encoder": whisper_encoder,
}

#: The keyword each model takes its input by, where it is not token ids.
_INPUT_NAMES = {"vit": "pixel_values", "whisper_encoder": "input_features"}


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


def input_name(name: str) -> str:
    """The keyword model ``name`` takes its input by."""
    return _INPUT_NAMES.get(name, "input_ids")


def example(name: str, batch: int, sequence: int) -> Any:
    """An input of model ``name``: ``batch`` sequences of ``sequence``
    tokens, or ``batch`` images or spectrograms of the config's size."""
    import torch

    if name == "vit":
        return torch.randn(batch, 3, IMAGE_SIZE, IMAGE_SIZE)
    if name == "whisper_encoder":
        return torch.randn(batch, MEL_BINS, FRAMES)
    return tokens(batch, sequence)


#: The models without a loss of their own: ``loss`` squares their output.
_ENCODERS = {"t5": "input_ids", "vit": "pixel_values", "whisper": "input_features"}


def loss(model: Any, x: Any) -> Any:
    """The model's training loss on input ``x``: its own language-model
    loss, or the mean square of an encoder's output (T5, ViT, Whisper)."""
    keyword = _ENCODERS.get(model.config.model_type)
    if keyword is not None:
        return model(**{keyword: x}).last_hidden_state.pow(2).mean()
    return model(input_ids=x, labels=x).loss


def with_mask(name: str, attention: str | None = None) -> Any:
    """Language model ``name`` as a module of ``(ids, mask)`` returning its
    last hidden state, with transformers' ``attn_implementation``
    ``attention`` (``"eager"``, ...; its default, SDPA, if None)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model.eval()

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=ids, attention_mask=mask).last_hidden_state

    model = build(name)
    if attention is not None:
        model.set_attn_implementation(attention)
    return LastHiddenState(model)


def export_onnx(
    module: Any,
    example: tuple[Any, ...],
    dynamic: Mapping[str, Mapping[int, str]],
    dynamo: bool,
) -> bytes:
    """``torch.onnx.export`` of ``module`` at ``example``, its inputs named
    and their ``dynamic`` axes (``{input: {axis: name}}``) symbolic, by the
    dynamo exporter or the TorchScript one (at opset 17)."""
    import torch

    names = list(dynamic)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dynamo:
            shapes = {
                name: {axis: torch.export.Dim(dim) for axis, dim in axes.items()}
                or None
                for name, axes in dynamic.items()
            }
            torch.onnx.export(
                module, example, buffer, dynamo=True, input_names=names,
                dynamic_shapes=shapes, verbose=False,
            )  # fmt: skip
        else:
            torch.onnx.export(
                module, example, buffer, dynamo=False, input_names=names,
                dynamic_axes={n: a for n, a in dynamic.items() if a}, opset_version=17,
            )  # fmt: skip
    return buffer.getvalue()
