"""Primitives: each elementwise function declared once, read by every level.

A primitive's declaration (:class:`Primitive`) holds its arity, domain,
NumPy semantics, gradient, mixed-precision policy, algebraic identities,
Triton spelling, ONNX and ATen names and test domain; the graph op classes,
the interpreters, canonicalize, autodiff, auto-mixed-precision, the Triton
emitter, ONNX import and export, capture and irc.testing's generators all
read it. Adding one is ``declare(Primitive(...))`` and its tests; see
docs/primitives.md.
"""

from irc.primitives import builtin
from irc.primitives.declaration import (
    DuplicatePrimitive,
    Identity,
    Of,
    OnnxForm,
    OperandDomain,
    Precision,
    Primitive,
    Splat,
    TestDomain,
    TritonSpelling,
    UnknownPrimitive,
    Var,
    declare,
    on_declare,
    primitive,
    primitives,
)

__all__ = [
    "DuplicatePrimitive",
    "Identity",
    "Of",
    "OnnxForm",
    "OperandDomain",
    "Precision",
    "Primitive",
    "Splat",
    "TestDomain",
    "TritonSpelling",
    "UnknownPrimitive",
    "Var",
    "builtin",
    "declare",
    "on_declare",
    "primitive",
    "primitives",
]
