"""Names the frontends give a captured function's parameters and symbols:
Python identifiers made from a model's own names (ONNX value names, FX
nodes, Dynamo's sources), unique within the function."""

from __future__ import annotations

import re


def identifier(text: str, fallback: str) -> str:
    """``text`` as an identifier: other characters become ``_``, and a name
    that would start with a digit (or be empty) gets ``fallback_`` first."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text)
    return name if name and not name[0].isdigit() else f"{fallback}_{name}"


def unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... the first not in ``taken``
    (which it joins)."""
    candidate, suffix = name, 1
    while candidate in taken:
        suffix += 1
        candidate = f"{name}_{suffix}"
    taken.add(candidate)
    return candidate
