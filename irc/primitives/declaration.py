"""What a primitive declaration holds, and the registry every level reads.

A :class:`Primitive` is one elementwise function (``exp``, ``add``...)
declared once with everything irc knows of it; see docs/primitives.md for
the fields, the identity language and how to add one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

import numpy as np

from irc.errors import IrcError

#: ``(element type, *operand texts) -> text``: a Triton expression.
Spelling = Callable[..., str]
#: ``(emit, op, cotangent) -> cotangent of one operand`` (None: zero). ``emit``
#: is autodiff's graph builder, ``op`` the forward graph op.
OperandGradient = Callable[[Any, Any, Any], Any]
#: ``(builder, op, operand names) -> name``: the ONNX node(s) computing ``op``
#: (``builder`` is irc.onnx's graph builder).
OnnxExport = Callable[[Any, Any, list[str]], str]
#: The range of a result from its operands' ranges and element kind.
Range = tuple[float, float]
RangeRule = Callable[..., Range]


class DuplicatePrimitive(IrcError):
    """A primitive is declared under a name already taken."""


class UnknownPrimitive(IrcError):
    """No primitive is declared under a name."""


class Precision(Enum):
    """Where an op computes under ``auto-mixed-precision`` (see
    irc.passes.auto_mixed_precision): ``FOLLOW`` its operands' type, or
    ``FULL`` float32 where rounding would hurt (exponentials, logarithms,
    divisions, decisions)."""

    LOW = "low"
    FOLLOW = "follow"
    FULL = "full"
    KEEP = "keep"


@dataclass(frozen=True)
class TritonSpelling:
    """How a primitive is written in Triton, by element kind (``floats``:
    float16, bfloat16 and float32, and float64 unless ``float64`` differs).
    A missing entry means the primitive has no meaning there."""

    floats: Spelling | None = None
    float64: Spelling | None = None
    integers: Spelling | None = None
    bools: Spelling | None = None


@dataclass(frozen=True)
class OnnxForm:
    """A primitive in ONNX: the op types that import as it (applied with
    NumPy's promotion) and how it exports (one op type of the same name and
    operands, or a builder function for a decomposition)."""

    imports: tuple[str, ...] = ()
    export: str | OnnxExport | None = None


class OperandDomain(Enum):
    """Where the generated test programs (irc.testing) keep a primitive's
    operands, so that results stay finite and well conditioned."""

    ANY = "any"
    #: At least 0.01 (``log``, ``rsqrt``).
    POSITIVE = "positive"
    #: Above -0.99 (``log1p``).
    ABOVE_MINUS_ONE = "above-minus-one"
    #: Within [-0.9, 0.9] (``asin``: ill-conditioned near +-1).
    UNIT = "unit"
    #: Not negative (``sqrt``).
    NON_NEGATIVE = "non-negative"
    #: Squashed where ``exp`` of the upper end passes the magnitude limit.
    EXPONENT = "exponent"
    #: Squashed where ``exp`` of either end passes the magnitude limit.
    TWO_SIDED_EXPONENT = "two-sided-exponent"
    #: A divisor bounded away from 0, of either sign (the second operand).
    DIVISOR = "divisor"
    #: A base and exponent kept finite (``pow``).
    POWER = "power"


@dataclass(frozen=True)
class TestDomain:
    """How irc.testing generates and bounds a primitive's uses."""

    #: ``range(*operand ranges, element kind) -> result range``; None where
    #: the operand domain's fix computes it (``POWER``).
    range: RangeRule | None
    operands: OperandDomain = OperandDomain.ANY
    #: Continuous (programs for gradient and tolerance checks avoid jumps).
    smooth: bool = True
    #: Jumps where a float operand crosses a threshold (``floordiv``):
    #: smooth programs give it no float operands.
    steps: bool = False
    #: A bound on ``|f(x, y)|`` for ``|x| <= a``, ``|y| <= b`` (binary).
    growth: Callable[[float, float], float] | None = None


# --------------------------------------------------------------------------
# Identities: rewrites as data, read by canonicalize
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Var:
    """A pattern variable: the same name matches the same value."""

    name: str


@dataclass(frozen=True)
class Splat:
    """A constant with every element equal to ``value`` (``-0.0`` matches a
    negative zero only, on floats); ``bind`` names the matched constant for
    the right-hand side. As a result, a new constant of the result's type."""

    value: float
    bind: str | None = None


@dataclass(frozen=True)
class Of:
    """A value computed by ``primitive`` from ``operands``; ``bind`` names
    the value itself for the right-hand side."""

    primitive: str
    operands: tuple[Term, ...]
    bind: str | None = None


Term = Var | Splat | Of


@dataclass(frozen=True)
class Identity:
    """``root(*operands) -> result`` on the element kinds in ``kinds``: the
    root is the declaring primitive. Each identity must keep the reference
    interpreter's results bit for bit (signed zeros, NaN, wrap-around)."""

    operands: tuple[Term, ...]
    result: Term
    kinds: str = "bif"


X, Y = Var("x"), Var("y")


def involution(name: str) -> Identity:
    """``f(f(x)) = x``."""
    return Identity((Of(name, (X,)),), X)


def idempotent(name: str) -> Identity:
    """``f(f(x)) = f(x)``."""
    return Identity((Of(name, (X,), bind="y"),), Y)


def right_identity(value: float, kinds: str = "bif") -> Identity:
    """``x op e = x``."""
    return Identity((X, Splat(value)), X, kinds)


def right_absorbing(value: float, kinds: str = "bi") -> Identity:
    """``x op z = z`` (the constant operand itself)."""
    return Identity((X, Splat(value, bind="z")), Var("z"), kinds)


def same_operands(result: Term, kinds: str = "bif") -> Identity:
    """``x op x = result`` (``X`` or a ``Splat``)."""
    return Identity((X, X), result, kinds)


# --------------------------------------------------------------------------
# The declaration
# --------------------------------------------------------------------------


class Tracer(Protocol):
    """How traced code applies a primitive (set by irc.capture)."""

    def __call__(self, primitive: Primitive, *operands: Any) -> Any: ...


@dataclass(frozen=True, eq=False)
class Primitive:
    """One elementwise function, declared once; every level reads it.

    ``numpy`` is the reference semantics: it takes arrays of one dtype and
    returns an array of that dtype; overflow, division by zero and invalid
    values give NumPy's IEEE (or wrapped integer) results, which are data,
    not errors. A primitive equals its name, as the enums of kinds do
    (``op.kind.data == "add"``); the registry holds one per name.
    """

    #: The op's name: ``graph.<name>``, and the kind of the tile-level ops.
    name: str
    arity: int
    #: The element kinds it is defined on (``"b"``, ``"i"``, ``"f"``).
    domain: frozenset[str]
    numpy: Callable[..., np.ndarray]
    #: One line for the graph op's documentation.
    summary: str
    triton: TritonSpelling
    test: TestDomain
    #: One rule per operand (None: not differentiable); None: no gradient.
    gradient: tuple[OperandGradient | None, ...] | None = None
    precision: Precision = Precision.FOLLOW
    identities: tuple[Identity, ...] = ()
    #: ``f(x, y) == f(y, x)`` exactly (canonicalize puts constants right).
    commutative: bool = False
    onnx: OnnxForm = field(default_factory=OnnxForm)
    #: The ATen ops that are this primitive (the torch importer's names).
    aten: tuple[str, ...] = ()
    #: Reached by a Python operator (``-x``, ``x + y``): of Python scalars
    #: the result is a (weak) Python scalar too.
    python_operator: bool = False
    #: A float function that NumPy 2 computes on ints and bools as the
    #: identity, keeping their dtype (``np.floor`` of int64 is int64).
    integral_identity: bool = False
    #: The primitive NumPy computes instead on bools (``add`` is ``or``).
    on_bools: str | None = None
    #: The graph op's name when it differs from the kind's (``graph.maximum``
    #: for ``max``, which also names reductions).
    graph_name: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise IrcError(f"primitive name {self.name!r} is not an identifier")
        if self.arity not in (1, 2):
            raise IrcError(f"primitive {self.name}: arity {self.arity} is not 1 or 2")
        if not self.domain or not self.domain <= frozenset("bif"):
            raise IrcError(
                f"primitive {self.name}: domain {sorted(self.domain)} must be a "
                "non-empty set of 'b', 'i', 'f'"
            )
        if self.gradient is not None and len(self.gradient) != self.arity:
            raise IrcError(
                f"primitive {self.name}: {len(self.gradient)} gradient rules for "
                f"{self.arity} operands"
            )

    @property
    def value(self) -> str:
        """The name, as the kind enums' ``value`` (comparisons, reductions)
        spells theirs: ``op.kind.data.value`` reads alike for every kind."""
        return self.name

    @property
    def op_name(self) -> str:
        """The graph op's name: ``graph.exp``."""
        return f"graph.{self.graph_name or self.name}"

    @property
    def float_only(self) -> bool:
        """Defined on floats alone: NumPy computes it in floating point for
        integer and bool operands (capture promotes them first)."""
        return self.domain == frozenset("f")

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Primitive):
            return self is other
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __lt__(self, other: Primitive) -> bool:
        return self.name < other.name

    def __call__(self, *operands: Any) -> Any:
        """Applied to traced values inside a captured function (with NumPy's
        promotion and broadcasting), or to NumPy arrays of one dtype (its
        reference semantics)."""
        if _tracer is not None:
            return _tracer(self, *operands)
        return self.numpy(*operands)


_registry: dict[str, Primitive] = {}
_listeners: list[Callable[[Primitive], None]] = []
_tracer: Tracer | None = None


def declare(primitive: Primitive) -> Primitive:
    """Add ``primitive`` to irc: its graph op, its kind at the tile levels and
    every table below exist from here on."""
    if primitive.name in _registry:
        raise DuplicatePrimitive(f"a primitive named {primitive.name!r} exists")
    _registry[primitive.name] = primitive
    for listener in _listeners:
        listener(primitive)
    return primitive


def on_declare(listener: Callable[[Primitive], None]) -> None:
    """Call ``listener`` with every primitive declared, now and later (how a
    dialect generates its op classes)."""
    _listeners.append(listener)
    for primitive in tuple(_registry.values()):
        listener(primitive)


def set_tracer(tracer: Tracer) -> None:
    """How ``Primitive.__call__`` builds graph IR on traced values."""
    global _tracer
    _tracer = tracer


def primitive(name: str) -> Primitive:
    """The primitive declared as ``name``."""
    try:
        return _registry[name]
    except KeyError:
        known = ", ".join(sorted(_registry))
        raise UnknownPrimitive(
            f"unknown elementwise kind '{name}'; expected one of {known}"
        ) from None


def as_primitive(kind: Primitive | str) -> Primitive:
    """``kind`` itself, or the primitive declared under that name."""
    return kind if isinstance(kind, Primitive) else primitive(kind)


def primitives(arity: int | None = None) -> Iterator[Primitive]:
    """Every declared primitive (of ``arity``), in declaration order."""
    return (p for p in tuple(_registry.values()) if arity in (None, p.arity))
