"""Hugging Face models exported to ONNX by torch, imported and compiled by
irc: the ONNX nodes each export has against the kernels irc launches.

The language models of ``irc.testing.models`` (GPT-2, Llama, Qwen2, BERT,
T5's encoder; GPT-2 and BERT also with ``attn_implementation="eager"``),
each a module of token ids and an attention mask
(``irc.testing.models.with_mask``), and its ViT and Whisper encoder (of an
image or a spectrogram), exported with dynamic batch and sequence axes (the
batch only for ViT and Whisper, whose configs fix the rest) by the
TorchScript exporter and by the dynamo one
(``irc.testing.models.export_onnx``), imported by ``irc.onnx.load`` and
compiled once with the default pipeline. Per export: its ONNX nodes, the
``Where(IsNaN(softmax))`` guards among them (torch's SDPA with a mask), the
kernels of one call (``num_kernels``) and how many of them are attention
kernels. ``tests/test_onnx_models.py`` checks the same exports' values
against onnxruntime.

    python benchmarks/onnx_models.py                  # the table in docs/onnx.md
    python benchmarks/onnx_models.py --only gpt2 bert-eager-attention
"""

from __future__ import annotations

import argparse
import re
import warnings

import torch

import irc.onnx
from irc.testing import models

LANGUAGE_MODELS = [
    "gpt2",
    "gpt2-eager-attention",
    "llama",
    "qwen2",
    "bert",
    "bert-eager-attention",
    "t5_encoder",
]
ENCODERS = ["vit", "whisper_encoder"]
AXES = {0: "batch", 1: "seq"}


class LastHiddenState(torch.nn.Module):
    """An encoder of one input (an image, a spectrogram) to its last
    hidden state."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x).last_hidden_state


def exportable(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], dict]:
    """Model ``name``, an example input and its dynamic axes."""
    if name in ENCODERS:
        module = LastHiddenState(models.build(name))
        return module, (models.example(name, 2, 5),), {"x": {0: "batch"}}
    base, eager, _ = name.partition("-eager-attention")
    module = models.with_mask(base, "eager" if eager else None)
    example = (models.tokens(2, 5), torch.ones(2, 5, dtype=torch.long))
    return module, example, {"ids": AXES, "mask": AXES}


def measure(name: str, dynamo: bool) -> str:
    """One row of the table: the export's nodes and irc's kernels."""
    import onnx

    module, example, dynamic = exportable(name)
    exporter = "dynamo" if dynamo else "TorchScript"
    try:
        exported = models.export_onnx(module, example, dynamic, dynamo)
    except Exception as err:  # torch's exporter, not irc
        return f"| {name} | {exporter} | export fails: {type(err).__name__} | | | |"
    nodes = onnx.load_from_string(exported).graph.node
    guards = sum(node.op_type == "IsNaN" for node in nodes)
    compiled = irc.onnx.load(exported).compile()
    attention = len(re.findall(r"fusion\.kernel @\w+ attention", compiled.ir("fusion")))
    return (
        f"| {name} | {exporter} | {len(nodes)} | {guards} | "
        f"{compiled.num_kernels} | {attention} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=LANGUAGE_MODELS + ENCODERS)
    options = parser.parse_args()
    print("| model | exporter | ONNX nodes | IsNaN guards | kernels | attention |")
    print("|---|---|---:|---:|---:|---:|")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in options.only:
            for dynamo in (False, True):
                print(measure(name, dynamo), flush=True)


if __name__ == "__main__":
    main()
