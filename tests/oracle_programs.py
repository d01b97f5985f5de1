"""Programs for the JAX oracle (tests/test_jax_oracle.py), written once.

A generated program is Python source over two names: ``xp``, the array
namespace (``numpy`` for irc, whose capture takes NumPy's functions, and
``jax.numpy`` for JAX), and ``cf``, the control-flow and differentiation
adapter (``IRC_FLOW``: ``irc.cond``, ``irc.grad``, ...; ``JAX_FLOW``:
``jax.lax.cond``, ``jax.grad``, ...). The same text runs on both sides, so a
disagreement is a disagreement of the implementations, and the text is the
report: a failing example prints the program as it was run.

``oracle_programs(...)`` is a Hypothesis strategy. A program has a body
(``def body(xp, cf, a0, a1, ...)``) built step by step from the captured
NumPy surface (elementwise ops including ``tan``, ``logaddexp``,
``logaddexp2``, ``hypot``, ``fmod``, ``cbrt`` and ``sinc``, reductions
(``median`` along static axes), ``matmul``, reshape, transpose, slicing,
``concatenate``, ``where``, softmax and logsumexp, ``cumsum`` and
``cumprod``, reads at a traced index) and every control-flow op
(``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, nested; a
``fori_loop`` of row updates, ``buf[i] = f(buf[i])``, written through
``cf.set_row``: irc's ``buf[i] = v``, JAX's ``buf.at[i].set(v)``),
and a *mode* that wraps it: its values, ``grad`` and
``value_and_grad`` over several arguments or a dict of them, ``vjp``,
``jvp``, ``jacfwd``, ``jacrev``, ``hessian`` and a gradient of a gradient.

Arguments have dims among the symbols ``N``, ``M``, ``K`` and small static
ones; a program is compiled once and called at two bindings of its
symbols (``BINDINGS``). Every value carries a bound on its magnitude, and
ops are built to stay inside their domains and away from overflow (a value
past ``LIMIT`` is squashed by ``v / sqrt(1 + v*v)``), so that every value and
derivative is finite. Each value also records, per axis, whether its
elements may repeat along it (a broadcast, a constant, a concatenation):
``max``/``min`` reductions only run along axes without repeats, since irc
gives a tied maximum's cotangent to the first element (as ``np.argmax``
picks it) and JAX splits it, by design (docs/autodiff.md).

Families left out because irc and JAX disagree are listed in
``EXCLUDED``; each has a strict xfail test in tests/test_jax_oracle.py.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

from hypothesis import strategies as st

SYMBOLS = ("N", "M", "K")
#: The bindings a program is called at (two of them, drawn). Every symbol is
#: at least 2, so that ``x[1:]`` of a symbolic dim is never empty.
BINDINGS: tuple[dict[str, int], ...] = (
    {"N": 2, "M": 3, "K": 4},
    {"N": 5, "M": 2, "K": 3},
    {"N": 3, "M": 4, "K": 2},
    {"N": 4, "M": 2, "K": 5},
)
STATIC_DIMS = ("2", "3")
#: Magnitude past which a value is squashed before the next op.
LIMIT = 6.0
#: A loop carry's magnitude at every iteration. The carry enters squashed
#: to it, and the body's ``0.5 * c + h`` with ``|h| <= 1.5`` keeps it there,
#: provided ``h`` is bounded for every ``|c| <= CARRY_BOUND``, not for the
#: first carry's smaller bound (the fifth hour found ``0.5 * c + c ** 2``
#: growing past float32 from a carry of magnitude 1).
CARRY_BOUND = 3.0

MODES = (
    "value",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "grad_of_grad",
)
#: Modes built on irc's reverse mode twice or on a Jacobian loop: costlier.
SECOND_ORDER = ("jacfwd", "hessian", "grad_of_grad")

#: What the generator leaves out because irc and JAX disagree on it, and
#: how. Each has a strict xfail test at the end of tests/test_jax_oracle.py;
#: a family named here (a key of ``FAMILIES``) is not drawn.
EXCLUDED: dict[str, str] = {
    # Not a family: no generated power has a zero base (``(x*x + 1) ** y``).
    "pow at a zero base": "irc's d(x**y)/dx is 0 where y == 0, JAX's is NaN",
    # Kept out by ``Value.repeats``: max/min reductions only along axes
    # without repeated elements.
    "tied max/min reductions": "irc gives the first maximum the cotangent, "
    "JAX splits it (by design, docs/autodiff.md)",
    # Not generated: np.clip.
    "clip at its bounds": "irc's derivative is 1 at a bound (torch's clamp), "
    "JAX's 0.5 (by design, docs/autodiff.md)",
}


# Dims -------------------------------------------------------------------------


def dim_values(dim: str) -> tuple[int, ...]:
    """A dim's size under each of ``BINDINGS``: its identity here (two dims
    built the same way have the same sizes and the same text)."""
    return tuple(eval(dim, {}, dict(binding)) for binding in BINDINGS)


def simplify(dim: str) -> str:
    """A dim without symbols as its size (``2 - 1`` is ``1``)."""
    if any(symbol in dim for symbol in SYMBOLS):
        return dim
    return str(eval(dim, {}, {}))


def dim_min(dim: str) -> int:
    return min(dim_values(dim))


def dim_max(dim: str) -> int:
    return max(dim_values(dim))


def is_plain(dim: str) -> bool:
    """A symbol or a static size (what irc's forward mode wants of an
    output: no expression such as ``N*M``)."""
    return dim in SYMBOLS or dim.isdigit()


def shape_at(shape: Sequence[str], binding: dict[str, int]) -> tuple[int, ...]:
    return tuple(eval(dim, {}, dict(binding)) for dim in shape)


# Values -----------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A name in the program, its shape (dims as Python expressions over the
    symbols), a bound on its elements' magnitude, and per axis whether its
    elements may repeat along that axis."""

    name: str
    shape: tuple[str, ...]
    bound: float
    repeats: tuple[bool, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)


def _same_dim(a: str, b: str) -> bool:
    return a == b


def _suffix_of(small: Value, big: Value) -> bool:
    """Whether ``small`` broadcasts against ``big`` as NumPy's trailing-dims
    rule takes it, with equal dims (no unit dims: irc refuses to broadcast
    ``N`` against ``M`` unless they are declared equal)."""
    if small.rank > big.rank:
        return False
    offset = big.rank - small.rank
    return all(_same_dim(d, big.shape[offset + i]) for i, d in enumerate(small.shape))


def _broadcast_repeats(a: Value, b: Value) -> tuple[bool, ...]:
    big, small = (a, b) if a.rank >= b.rank else (b, a)
    offset = big.rank - small.rank
    return tuple(
        rep and (small.repeats[i - offset] if i >= offset else True)
        for i, rep in enumerate(big.repeats)
    )


# Programs ---------------------------------------------------------------------


@dataclass(frozen=True)
class Argument:
    name: str
    shape: tuple[str, ...]


@dataclass(frozen=True)
class OracleProgram:
    """A generated program: its source (``def program(xp, cf, ...)``), the
    arguments it takes (with their shapes) and how it was made."""

    source: str
    mode: str
    arguments: tuple[Argument, ...]
    #: Whether the arguments are passed as one dict (a pytree) named ``params``.
    pytree: bool = False
    families: frozenset[str] = field(default_factory=frozenset)
    #: The bound on its elements' magnitude that the generator claims for
    #: each value and loop or branch parameter it names (``v3``, ``c0``).
    bounds: dict[str, float] = field(default_factory=dict, hash=False)

    def __repr__(self) -> str:  # what Hypothesis prints for a failing example
        return f"OracleProgram(mode={self.mode!r}):\n{self.source}"

    def function(self, xp: Any, cf: Any) -> Callable[..., Any]:
        """The program over ``xp`` and ``cf``, taking its arguments."""
        namespace: dict[str, Any] = {}
        exec(compile(self.source, "<oracle program>", "exec"), namespace)
        return functools.partial(namespace["program"], xp, cf)

    def call_arguments(self, arrays: Sequence[Any]) -> tuple[Any, ...]:
        """The call's arguments from one array per ``arguments`` entry:
        the dict of the pytree ones first when ``pytree``."""
        if not self.pytree:
            return tuple(arrays)
        params = {a.name: x for a, x in zip(self.arguments, arrays) if _is_param(a)}
        rest = [x for a, x in zip(self.arguments, arrays) if not _is_param(a)]
        return (params, *rest)


def _is_param(argument: Argument) -> bool:
    return argument.name.startswith("a")


# The adapters -----------------------------------------------------------------


def _set_row_in_place(buf: Any, i: Any, row: Any) -> Any:
    """irc's write at a traced index (``buf[i] = row`` on a loop's carry,
    which capture makes a new value)."""
    buf[i] = row
    return buf


def irc_flow() -> SimpleNamespace:
    import irc

    return SimpleNamespace(
        set_row=_set_row_in_place,
        cond=irc.cond,
        switch=irc.switch,
        while_loop=irc.while_loop,
        fori_loop=irc.fori_loop,
        scan=irc.scan,
        grad=irc.grad,
        value_and_grad=irc.value_and_grad,
        vjp=irc.vjp,
        jvp=irc.jvp,
        jacfwd=irc.jacfwd,
        jacrev=irc.jacrev,
        hessian=irc.hessian,
    )


def python_flow() -> SimpleNamespace:
    """The control-flow ops as plain Python (lax's semantics written out),
    so that each iteration's values can be looked at; no transforms."""

    def cond(predicate: Any, true_fun: Callable, false_fun: Callable, *operands: Any):
        return (true_fun if predicate else false_fun)(*operands)

    def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)

    def while_loop(cond_fun: Callable, body_fun: Callable, state: Any) -> Any:
        while cond_fun(state):
            state = body_fun(state)
        return state

    def fori_loop(lower: int, upper: int, body_fun: Callable, carry: Any) -> Any:
        for i in range(int(lower), int(upper)):
            carry = body_fun(i, carry)
        return carry

    def set_row(buf: Any, i: Any, row: Any) -> Any:
        buf = buf.copy()  # NumPy writes in place; the loop's value is new
        buf[i] = row
        return buf

    def scan(
        f: Callable,
        carry: Any,
        xs: Any,
        length: int | None = None,
        reverse: bool = False,
    ) -> tuple[Any, Any]:
        import numpy as np

        n = len(xs) if xs is not None else int(length or 0)
        ys: list[Any] = [None] * n
        for k in reversed(range(n)) if reverse else range(n):
            carry, ys[k] = f(carry, None if xs is None else xs[k])
        return carry, np.stack(ys)

    return SimpleNamespace(
        set_row=set_row,
        cond=cond,
        switch=switch,
        while_loop=while_loop,
        fori_loop=fori_loop,
        scan=scan,
    )


def jax_flow() -> SimpleNamespace:
    import jax

    return SimpleNamespace(
        set_row=lambda buf, i, row: buf.at[i].set(row),
        cond=jax.lax.cond,
        switch=jax.lax.switch,
        while_loop=jax.lax.while_loop,
        fori_loop=jax.lax.fori_loop,
        scan=jax.lax.scan,
        grad=jax.grad,
        value_and_grad=jax.value_and_grad,
        vjp=jax.vjp,
        jvp=jax.jvp,
        jacfwd=jax.jacfwd,
        jacrev=jax.jacrev,
        hessian=jax.hessian,
    )


# The writer -------------------------------------------------------------------


Draw = Callable[[st.SearchStrategy[Any]], Any]


class _Scope:
    """One function body being written: its lines and the values it can
    read (its parameters, and those of the enclosing bodies: closures)."""

    def __init__(self, writer: _Writer, values: list[Value], indent: int, depth: int):
        self.writer = writer
        self.values = values
        self.lines: list[str] = []
        self.indent = indent
        self.depth = depth

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def temporary(self, expression: str) -> str:
        """A name for ``expression`` that later steps do not pick."""
        name = self.writer.fresh("v")
        self.emit(f"{name} = {expression}")
        return name

    def assign(
        self,
        expression: str,
        shape: Sequence[str],
        bound: float,
        repeats: Sequence[bool],
    ) -> Value:
        name = self.writer.fresh("v")
        self.emit(f"{name} = {expression}")
        value = Value(name, tuple(map(simplify, shape)), float(bound), tuple(repeats))
        self.values.append(self.writer.claim(value))
        return value


class _Writer:
    """Draws a program's steps and writes its source."""

    def __init__(self, draw: Draw, mode: str, families: Sequence[str], max_steps: int):
        self.draw = draw
        self.mode = mode
        self.families = tuple(families)
        self.max_steps = max_steps
        self.counters: dict[str, int] = {}
        self.arguments: list[Argument] = []
        self.used: set[str] = set()
        self.bounds: dict[str, float] = {}

    # names and choices

    def fresh(self, prefix: str) -> str:
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{n}"

    def claim(self, value: Value) -> Value:
        """``value``, its bound recorded for ``OracleProgram.bounds``."""
        self.bounds[value.name] = value.bound
        return value

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.draw(st.integers(0, len(options) - 1))]

    def coin(self, p: float = 0.5) -> bool:
        return self.draw(st.integers(0, 99)) < round(100 * p)

    @property
    def differentiated(self) -> bool:
        return self.mode != "value"

    # arguments

    def like(self, scope: _Scope, shape: Sequence[str]) -> Value:
        """A new argument of ``shape``; where a dim of it is an expression
        (arguments have plain dims), an earlier value of that shape
        through ``sin``."""
        if all(is_plain(d) for d in shape):
            return self.new_argument(scope, shape)
        model = self.pick(scope, lambda v: v.shape == tuple(shape))
        if model is None:  # a scalar broadcasts against anything
            return self.new_argument(scope, ())
        return scope.assign(f"xp.sin({model.name})", model.shape, 1.0, model.repeats)

    def new_argument(self, scope: _Scope, shape: Sequence[str] | None = None) -> Value:
        if shape is None:
            rank = self.draw(st.integers(1, 2))
            shape = tuple(self.choice(SYMBOLS + STATIC_DIMS) for _ in range(rank))
        name = f"a{len(self.arguments)}"
        self.arguments.append(Argument(name, tuple(shape)))
        value = Value(name, tuple(shape), 2.0, (False,) * len(shape))
        # Every scope can read an argument: it is a parameter of ``body``.
        scope.values.append(value)
        root = scope
        while root is not None:
            if value not in root.values:
                root.values.append(value)
            root = getattr(root, "parent", None)
        return value

    def pick(
        self, scope: _Scope, accept: Callable[[Value], bool] = lambda v: True
    ) -> Value | None:
        candidates = [v for v in scope.values if accept(v)][::-1]
        if not candidates:
            return None
        # The most recent value half of the time: chains grow deeper than
        # they grow wide, and fewer values are left unused.
        if self.coin(0.5):
            return candidates[0]
        return self.choice(candidates)

    def squash(self, scope: _Scope, value: Value, limit: float = LIMIT) -> Value:
        if value.bound <= limit:
            return value
        x = value.name
        return scope.assign(
            f"{x} / xp.sqrt(1.0 + {x} * {x})", value.shape, 1.0, value.repeats
        )

    # steps

    def steps(
        self, scope: _Scope, count: int, *, keep_shape: Value | None = None
    ) -> Value:
        """``count`` steps in ``scope``; with ``keep_shape``, steps that
        keep its shape only (a branch or a loop body), starting from it."""
        current = keep_shape
        for _ in range(count):
            if keep_shape is not None:
                assert current is not None
                current = self.shape_preserving_step(scope, current)
            else:
                current = self.step(scope)
        assert current is not None
        return current

    def step(self, scope: _Scope) -> Value:
        family = self.choice(self.families)
        self.used.add(family)
        return getattr(self, f"_{family}")(scope)

    def shape_preserving_step(self, scope: _Scope, value: Value) -> Value:
        options = [
            f
            for f in ("unary", "binary", "normalise", "cumulative")
            if f in self.families
        ]
        if scope.depth < 2:
            options += [
                f
                for f in ("cond", "switch", "fori_loop", "row_update", "scan")
                if f in self.families
            ]
        family = self.choice(options)
        self.used.add(family)
        return getattr(self, f"_{family}")(scope, value)

    def operand(self, scope: _Scope) -> Value:
        """An earlier value, or a new argument (always when there is none)."""
        if not scope.values or self.coin(0.15):
            return self.new_argument(scope)
        value = self.pick(scope)
        assert value is not None
        return value

    # elementwise

    def _unary(self, scope: _Scope, value: Value | None = None) -> Value:
        v = value or self.operand(scope)
        x, b = v.name, v.bound
        ops: list[tuple[str, float]] = [
            (f"xp.sin({x})", 1.0),
            (f"xp.cos({x})", 1.0),
            (f"xp.tanh({x})", 1.0),
            (f"-{x}", b),
            (f"xp.arctan({x})", math.pi / 2),
            (f"xp.log({x} * {x} + 1.0)", math.log(b * b + 1)),
            (f"xp.sqrt({x} * {x} + 0.5)", math.sqrt(b * b + 0.5)),
            (f"1.0 / (1.0 + xp.exp(-{x}))", 1.0),
            (f"{x} ** 2", b * b),
            (f"xp.abs({x})", b),
            (f"xp.log1p({x} * {x})", math.log1p(b * b)),
            (f"xp.arcsin(0.9 * xp.tanh({x}))", math.asin(0.9)),
            (f"xp.sinc({x})", 1.0),
            # Away from 0, where cbrt's slope is infinite; negative here.
            (f"xp.cbrt({x} - {b + 0.5!r})", (2 * b + 0.5) ** (1 / 3)),
        ]
        if b <= 1.2:
            ops.append((f"xp.tan({x})", math.tan(b)))
        else:
            ops.append((f"xp.tan(xp.tanh({x}))", math.tan(1.0)))
        if b <= 3.0:
            ops += [
                (f"xp.exp({x})", math.exp(b)),
                (f"xp.expm1({x})", math.expm1(b)),
                (f"xp.sinh({x})", math.sinh(b)),
                (f"xp.cosh({x})", math.cosh(b)),
                (f"{x} ** 3", b**3),
            ]
        expression, bound = self.choice(ops)
        return scope.assign(expression, v.shape, bound, v.repeats)

    def _binary(self, scope: _Scope, value: Value | None = None) -> Value:
        a = value or self.operand(scope)
        if value is not None:
            # In a shape-keeping body the other operand broadcasts into a.
            b = self.pick(scope, lambda v: _suffix_of(v, a) and v.name != a.name)
            if b is None or self.coin(0.3):
                b = self.like(
                    scope, a.shape[a.rank - self.draw(st.integers(0, a.rank)) :]
                )
        else:
            b = self.pick(
                scope,
                lambda v: (_suffix_of(v, a) or _suffix_of(a, v)) and v.name != a.name,
            )
            if b is None or self.coin(0.3):
                b = self.like(scope, a.shape[self.draw(st.integers(0, a.rank)) :])
        if self.coin(0.5):
            a, b = b, a
        big = a if a.rank >= b.rank else b
        repeats = _broadcast_repeats(a, b)
        x, y = a.name, b.name
        ops: list[tuple[str, float]] = [
            (f"{x} + {y}", a.bound + b.bound),
            (f"{x} - {y}", a.bound + b.bound),
            (f"{x} * {y}", a.bound * b.bound),
            (f"{x} / ({y} * {y} + 1.0)", a.bound),
            (f"xp.maximum({x}, {y})", max(a.bound, b.bound)),
            (f"xp.minimum({x}, {y})", max(a.bound, b.bound)),
            (f"xp.arctan2({x}, {y})", math.pi),
            (
                f"({x} * {x} + 1.0) ** (0.5 * xp.tanh({y}))",
                math.sqrt(a.bound * a.bound + 1),
            ),
            (f"0.5 * {x} - {y} / 3.0", a.bound / 2 + b.bound / 3),
            (f"xp.logaddexp({x}, {y})", max(a.bound, b.bound) + math.log(2)),
            (f"xp.logaddexp2({x}, {y})", max(a.bound, b.bound) + 1.0),
            (f"xp.hypot({x}, {y})", a.bound + b.bound),
            (f"xp.fmod({x}, {y} * {y} + 0.5)", a.bound),
            (
                f"xp.where({x} > {y}, {x}, 0.5 * {y})",
                max(a.bound, b.bound),
            ),
        ]
        expression, bound = self.choice(ops)
        result = scope.assign(expression, big.shape, bound, repeats)
        return self.squash(scope, result) if value is not None else result

    # reductions and composites

    def _reduce(self, scope: _Scope) -> Value:
        v = self.operand(scope)
        kind = self.choice(("sum", "mean", "max", "min", "prod", "var", "median"))
        axes_options = _axes_options(v)
        axes = self.choice(axes_options)
        if kind == "median":
            sortable = [a for a in axes_options if _sortable(v, a)]
            if not sortable:
                # A new argument of static dims, which irc can sort along.
                rank = self.draw(st.integers(1, 2))
                shape = tuple(self.choice(STATIC_DIMS) for _ in range(rank))
                v = self.new_argument(scope, shape)
                sortable = _axes_options(v)
            axes = self.choice(sortable)
        reduced = tuple(range(v.rank)) if axes is None else axes
        if kind in ("max", "min") and any(v.repeats[k] for k in reduced):
            kind = "sum"  # a tied max's gradient differs by design
        if kind == "prod":
            v = self.squash(scope, v, 1.0)
        keepdims = axes is not None and self.coin(0.3)
        size = math.prod(dim_max(v.shape[k]) for k in reduced)
        bound = {
            "sum": v.bound * size,
            "mean": v.bound,
            "max": v.bound,
            "min": v.bound,
            "prod": 1.0,
            "var": v.bound * v.bound,
            "median": v.bound,
        }[kind]
        axis_text = (
            "" if axes is None else f"axis={axes[0] if len(axes) == 1 else axes}"
        )
        if keepdims:
            axis_text += ", keepdims=True"
        spelled = (
            (
                f"xp.{kind}({v.name}, {axis_text})"
                if axis_text
                else f"xp.{kind}({v.name})"
            )
            if self.coin(0.5) or kind in ("var", "median")
            else f"{v.name}.{kind}({axis_text})"
        )
        shape = tuple(
            ("1" if keepdims else None) if k in reduced else d
            for k, d in enumerate(v.shape)
        )
        repeats = tuple(
            (True if keepdims else None) if k in reduced else r
            for k, r in enumerate(v.repeats)
        )
        return scope.assign(
            spelled,
            [d for d in shape if d is not None],
            bound,
            [r for r in repeats if r is not None],
        )

    def _normalise(self, scope: _Scope, value: Value | None = None) -> Value:
        """softmax, log-softmax, logsumexp (kept), or centring, along an axis."""
        v = value or self.operand(scope)
        if v.rank == 0:
            return self._unary(scope, v)
        v = self.squash(scope, v, 3.0)
        axis = self.draw(st.integers(0, v.rank - 1)) - v.rank
        x = v.name
        size = dim_max(v.shape[axis])
        kind = self.choice(("softmax", "logsumexp", "centre", "log_softmax"))
        if kind == "softmax":
            e = scope.assign(
                f"xp.exp({x} - xp.max({x}, axis={axis}, keepdims=True))",
                v.shape,
                1.0,
                v.repeats,
            )
            return scope.assign(
                f"{e.name} / xp.sum({e.name}, axis={axis}, keepdims=True)",
                v.shape,
                1.0,
                v.repeats,
            )
        if kind == "log_softmax":
            m = scope.temporary(f"{x}.max(axis={axis}, keepdims=True)")
            return scope.assign(
                f"{x} - {m} - xp.log(xp.exp({x} - {m}).sum(axis={axis}, keepdims=True))",
                v.shape,
                2 * v.bound + math.log(size),
                v.repeats,
            )
        if kind == "logsumexp":
            m = scope.temporary(f"{x}.max(axis={axis}, keepdims=True)")
            out = scope.temporary(
                f"{m} + xp.log(xp.sum(xp.exp({x} - {m}), axis={axis}, keepdims=True))"
            )
            # keepdims left the axis as 1: broadcast back against x
            return scope.assign(
                f"{out} - {x}", v.shape, 2 * v.bound + math.log(size), v.repeats
            )
        return scope.assign(
            f"{x} - xp.mean({x}, axis={axis}, keepdims=True)",
            v.shape,
            2 * v.bound,
            v.repeats,
        )

    def _cumulative(self, scope: _Scope, value: Value | None = None) -> Value:
        v = value or self.operand(scope)
        if v.rank == 0:
            return self._unary(scope, v)
        axis = self.draw(st.integers(0, v.rank - 1))
        if self.coin(0.5):
            v = self.squash(scope, v, 1.0)
            result = scope.assign(
                f"xp.cumprod({v.name}, axis={axis})", v.shape, 1.0, v.repeats
            )
        else:
            result = scope.assign(
                f"xp.cumsum({v.name}, axis={axis})",
                v.shape,
                v.bound * dim_max(v.shape[axis]),
                v.repeats,
            )
        return self.squash(scope, result) if value is not None else result

    def _matmul(self, scope: _Scope) -> Value:
        a = self.pick(scope, lambda v: v.rank in (1, 2) and is_plain(v.shape[-1]))
        if a is None or self.coin(0.2):
            a = self.new_argument(scope, (self.choice(SYMBOLS), self.choice(SYMBOLS)))
        contracted = a.shape[-1]
        transposed = self.coin(0.3)
        if transposed:
            b = self.pick(scope, lambda v: v.rank == 2 and v.shape[1] == contracted)
        else:
            b = self.pick(
                scope, lambda v: v.rank in (1, 2) and v.shape[0] == contracted
            )
        if b is None or self.coin(0.3):
            other = self.choice(SYMBOLS + STATIC_DIMS)
            b = self.new_argument(
                scope, (other, contracted) if transposed else (contracted, other)
            )
        b_shape = b.shape[::-1] if transposed else b.shape
        b_repeats = b.repeats[::-1] if transposed else b.repeats
        b_text = f"{b.name}.T" if transposed else b.name
        shape = a.shape[:-1] + b_shape[1:]
        repeats = a.repeats[:-1] + b_repeats[1:]
        bound = a.bound * b.bound * dim_max(contracted)
        spelled = self.choice(
            (
                f"{a.name} @ {b_text}",
                f"xp.matmul({a.name}, {b_text})",
                f"xp.dot({a.name}, {b_text})",
            )
        )
        return scope.assign(spelled, shape, bound, repeats)

    def _outer(self, scope: _Scope) -> Value:
        a = self.pick(scope, lambda v: v.rank == 1) or self.new_argument(
            scope, (self.choice(SYMBOLS),)
        )
        b = self.pick(scope, lambda v: v.rank == 1) or self.new_argument(
            scope, (self.choice(SYMBOLS),)
        )
        return scope.assign(
            f"{a.name}[:, None] * {b.name}[None, :]",
            a.shape + b.shape,
            a.bound * b.bound,
            a.repeats + b.repeats,
        )

    # layout

    def _layout(self, scope: _Scope) -> Value:
        v = self.operand(scope)
        if v.rank == 0:
            return self._unary(scope, v)
        x = v.name
        options = ["reverse"]
        if v.rank >= 2:
            options += ["transpose", "flatten"]
        if v.rank == 3:
            options += ["merge_last"]
        if v.rank >= 1:
            options += ["slice", "stride"]
        kind = self.choice(options)
        if kind == "transpose":
            if v.rank == 2 or self.coin(0.5):
                return scope.assign(f"{x}.T", v.shape[::-1], v.bound, v.repeats[::-1])
            perm = self.choice(list(itertools.permutations(range(v.rank)))[1:])
            return scope.assign(
                f"xp.transpose({x}, {perm})",
                [v.shape[p] for p in perm],
                v.bound,
                [v.repeats[p] for p in perm],
            )
        if kind == "flatten":
            dim = "*".join(f"({d})" if not is_plain(d) else d for d in v.shape)
            return scope.assign(f"{x}.reshape(-1)", (dim,), v.bound, (any(v.repeats),))
        if kind == "merge_last":
            d = f"{_paren(v.shape[1])}*{_paren(v.shape[2])}"
            return scope.assign(
                f"{x}.reshape({x}.shape[0], -1)",
                (v.shape[0], d),
                v.bound,
                (v.repeats[0], v.repeats[1] or v.repeats[2]),
            )
        axis = self.draw(st.integers(0, v.rank - 1))
        dim = v.shape[axis]
        prefix = ":, " * axis
        if kind == "reverse" or dim_min(dim) < 2:
            if v.rank == 0:
                return self._unary(scope, v)
            return scope.assign(f"{x}[{prefix}::-1]", v.shape, v.bound, v.repeats)
        if kind == "slice":
            text, new = self.choice(
                (("1:", f"{_paren(dim)} - 1"), (":-1", f"{_paren(dim)} - 1"))
            )
        else:
            text, new = self.choice(
                (
                    ("::2", f"({_paren(dim)} + 1) // 2"),
                    ("1::2", f"{_paren(dim)} // 2"),
                    ("::-2", f"({_paren(dim)} + 1) // 2"),
                )
            )
        shape = (*v.shape[:axis], new, *v.shape[axis + 1 :])
        return scope.assign(f"{x}[{prefix}{text}]", shape, v.bound, v.repeats)

    def _concat(self, scope: _Scope) -> Value:
        a = self.pick(scope, lambda v: v.rank >= 1) or self.new_argument(scope)
        axis = self.draw(st.integers(0, a.rank - 1))

        def fits(v: Value) -> bool:
            return (
                v.rank == a.rank
                and v.name != a.name
                and all(
                    _same_dim(d, e)
                    for k, (d, e) in enumerate(zip(v.shape, a.shape))
                    if k != axis
                )
            )

        b = self.pick(scope, fits)
        if b is None or self.coin(0.3):
            shape = list(a.shape)
            shape[axis] = self.choice(SYMBOLS + STATIC_DIMS)
            if all(is_plain(d) for d in shape):
                b = self.new_argument(scope, tuple(shape))
            else:
                b = self.like(scope, a.shape)
        new = f"{_paren(a.shape[axis])} + {_paren(b.shape[axis])}"
        shape = (*a.shape[:axis], new, *a.shape[axis + 1 :])
        repeats = tuple(
            True if k == axis else (r and s)
            for k, (r, s) in enumerate(zip(a.repeats, b.repeats))
        )
        spelled = self.choice(
            (
                f"xp.concatenate([{a.name}, {b.name}], axis={axis})",
                f"xp.concatenate(({b.name}, {a.name}), axis={axis - a.rank})",
            )
        )
        return scope.assign(spelled, shape, max(a.bound, b.bound), repeats)

    def _take(self, scope: _Scope) -> Value:
        """A read at a traced index (``x[xp.argmax(w)]``), as a gather."""
        v = self.pick(scope, lambda v: v.rank >= 1) or self.new_argument(scope)
        w = self.pick(scope, lambda u: u.rank == 1 and u.shape[0] == v.shape[0])
        if w is None:
            w = self.like(scope, (v.shape[0],)) if is_plain(v.shape[0]) else None
        if w is None:
            w = scope.assign(
                f"xp.sin({v.name}.reshape({v.name}.shape[0], -1).sum(axis=1))"
                if v.rank > 1
                else f"xp.sin({v.name})",
                (v.shape[0],),
                1.0,
                (False,),
            )
        return scope.assign(
            f"{v.name}[xp.argmax({w.name})]", v.shape[1:], v.bound, v.repeats[1:]
        )

    # control flow

    def _nested(self, scope: _Scope, params: Sequence[tuple[str, Value]]) -> _Scope:
        inner = _Scope(self, list(scope.values), scope.indent + 1, scope.depth + 1)
        inner.parent = scope  # type: ignore[attr-defined]
        for name, template in params:
            inner.values.append(
                self.claim(
                    Value(name, template.shape, template.bound, template.repeats)
                )
            )
        return inner

    def _loop_body(self, scope: _Scope, carry: Value) -> _Scope:
        """A loop body's scope, whose carry parameter has the bound that
        holds at every iteration (``CARRY_BOUND``)."""
        invariant = replace(carry, bound=max(carry.bound, CARRY_BOUND))
        return self._nested(scope, [(self.fresh("c"), invariant)])

    def _contracting_update(self, inner: _Scope, c: Value, carry: Value) -> Value:
        """A loop body's next carry, ``0.5 * c + h`` with ``h`` a squashed
        step or two of the body from ``c``: bounded whatever the trip
        count."""
        h = self.steps(inner, self.draw(st.integers(1, 2)), keep_shape=c)
        h = self.squash(inner, h, 1.5)
        return inner.assign(
            f"0.5 * {c.name} + {h.name}",
            carry.shape,
            0.5 * c.bound + 1.5,
            carry.repeats,
        )

    def _def(
        self, scope: _Scope, name: str, params: str, inner: _Scope, result: str
    ) -> None:
        scope.emit(f"def {name}({params}):")
        scope.lines.extend(inner.lines)
        scope.emit(f"    return {result}")

    def _branch(self, scope: _Scope, x: Value, label: str) -> tuple[str, Value]:
        name = self.fresh(label)
        u = self.fresh("u")
        inner = self._nested(scope, [(u, x)])
        start = inner.values[-1]
        out = self.steps(inner, self.draw(st.integers(0, 2)), keep_shape=start)
        out = self.squash(inner, out)
        self._def(scope, name, u, inner, out.name)
        return name, out

    def row_shape(self, carry: Value) -> tuple[str, ...]:
        """The shape of a new argument's rows that a loop body combines
        with ``carry``: its last dim (when plain) or a scalar."""
        if carry.rank and is_plain(carry.shape[-1]) and self.coin(0.6):
            return carry.shape[-1:]
        return ()

    def _cond(self, scope: _Scope, value: Value | None = None) -> Value:
        x = value or self.operand(scope)
        p = self.operand(scope)
        # Thresholds no value takes by construction: a centred row sums to
        # 0 and a normalised one to 1 up to rounding, and irc's rounding is
        # not JAX's, so a branch on ``sum() > 0.0`` of a centred row went
        # either way (found by the fourth hour of the oracle).
        predicate = self.choice(
            (
                f"{p.name}.sum() > 0.3",
                f"xp.mean({p.name}) < 0.25",
                f"{p.name}.max() > 0.5",
            )
        )
        if "max()" in predicate and any(p.repeats):
            predicate = f"{p.name}.sum() > 0.3"
        true_name, t = self._branch(scope, x, "yes")
        false_name, f = self._branch(scope, x, "no")
        return scope.assign(
            f"cf.cond({predicate}, {true_name}, {false_name}, {x.name})",
            x.shape,
            max(t.bound, f.bound),
            tuple(r or s for r, s in zip(t.repeats, f.repeats)),
        )

    def _switch(self, scope: _Scope, value: Value | None = None) -> Value:
        x = value or self.operand(scope)
        p = self.operand(scope)
        count = self.draw(st.integers(2, 3))
        branches = [self._branch(scope, x, "case") for _ in range(count)]
        index = self.choice((f"xp.argmax({p.name})", f"xp.argmin({p.name})"))
        return scope.assign(
            f"cf.switch({index}, [{', '.join(n for n, _ in branches)}], {x.name})",
            x.shape,
            max(o.bound for _, o in branches),
            tuple(any(rs) for rs in zip(*(o.repeats for _, o in branches)))
            if x.rank
            else (),
        )

    def _fori_loop(self, scope: _Scope, value: Value | None = None) -> Value:
        carry = self.squash(scope, value or self.operand(scope), CARRY_BOUND)
        xs = self.pick(
            scope,
            lambda v: v.rank >= 1 and _suffix_of(Value("", v.shape[1:], 0, ()), carry),
        )
        if xs is None or self.coin(0.3):
            xs = self.new_argument(
                scope, (self.choice(SYMBOLS + STATIC_DIMS), *self.row_shape(carry))
            )
        bounds = [("0", f"{xs.name}.shape[0]"), ("1", f"{xs.name}.shape[0]")]
        if is_plain(xs.shape[0]):  # at least 2 rows at every binding
            bounds.append(("0", "2"))  # (a derived dim such as N - 1 may be 1)
        lower, upper = self.choice(bounds)
        i = self.fresh("i")
        row = Value(f"{xs.name}[{i}]", xs.shape[1:], xs.bound, xs.repeats[1:])
        inner2 = self._loop_body(scope, carry)
        inner2.values.append(row)
        c = inner2.values[-2]
        new = self._contracting_update(inner2, c, carry)
        name = self.fresh("step")
        self._def(scope, name, f"{i}, {c.name}", inner2, new.name)
        return scope.assign(
            f"cf.fori_loop({lower}, {upper}, {name}, {carry.name})",
            carry.shape,
            max(carry.bound, CARRY_BOUND),
            carry.repeats,
        )

    def _row_update(self, scope: _Scope, value: Value | None = None) -> Value:
        """A ``fori_loop`` over the rows of a carry, writing row ``i`` from
        itself: ``buf[i] = 0.5 * buf[i] + h(buf[i])`` (``cf.set_row``: irc's
        ``buf[i] = v``, JAX's ``buf.at[i].set(v)``), ``h`` a squashed step
        or two of the row (a device loop where they are elementwise)."""
        carry = value or self.pick(scope, lambda v: v.rank >= 1)
        if carry is None or carry.rank == 0:
            return self._fori_loop(scope, value)
        carry = self.squash(scope, carry, CARRY_BOUND)
        i = self.fresh("i")
        inner = self._loop_body(scope, carry)
        c = inner.values[-1]
        row = inner.assign(f"{c.name}[{i}]", c.shape[1:], c.bound, c.repeats[1:])
        h = self.steps(inner, self.draw(st.integers(1, 2)), keep_shape=row)
        h = self.squash(inner, h, 1.5)
        new_row = inner.assign(
            f"0.5 * {row.name} + {h.name}",
            row.shape,
            0.5 * row.bound + 1.5,
            row.repeats,
        )
        # A written row may equal another: no max/min reduction across rows.
        written = inner.assign(
            f"cf.set_row({c.name}, {i}, {new_row.name})",
            c.shape,
            max(c.bound, new_row.bound),
            (True,) * c.rank,
        )
        name = self.fresh("step")
        self._def(scope, name, f"{i}, {c.name}", inner, written.name)
        lower = self.choice(("0", "1"))
        return scope.assign(
            f"cf.fori_loop({lower}, {carry.name}.shape[0], {name}, {carry.name})",
            carry.shape,
            max(carry.bound, CARRY_BOUND),
            (True,) * carry.rank,
        )

    def _scan(self, scope: _Scope, value: Value | None = None) -> Value:
        carry = self.squash(scope, value or self.operand(scope), CARRY_BOUND)
        with_xs = self.coin(0.8)
        inner = self._loop_body(scope, carry)
        c = inner.values[-1]
        if with_xs:
            xs = self.pick(
                scope,
                lambda v: (
                    v.rank >= 1 and _suffix_of(Value("", v.shape[1:], 0, ()), carry)
                ),
            )
            if xs is None or self.coin(0.3):
                xs = self.new_argument(
                    scope, (self.choice(SYMBOLS + STATIC_DIMS), *self.row_shape(carry))
                )
                inner.values.append(xs)
            x_name = self.fresh("x")
            inner.values.append(
                self.claim(Value(x_name, xs.shape[1:], xs.bound, xs.repeats[1:]))
            )
            length = xs.shape[0]
        else:
            x_name = "_"
            length = self.choice(("2", "3"))
        new = self._contracting_update(inner, c, carry)
        y = self.squash(inner, self.steps(inner, 1, keep_shape=new))
        name = self.fresh("cell")
        scope.emit(f"def {name}({c.name}, {x_name}):")
        scope.lines.extend(inner.lines)
        scope.emit(f"    return {new.name}, {y.name}")
        reverse = ", reverse=True" if self.coin(0.3) else ""
        source = f"{xs.name}" if with_xs else f"None, length={length}"
        last, ys = self.fresh("v"), self.fresh("v")
        scope.emit(f"{last}, {ys} = cf.scan({name}, {carry.name}, {source}{reverse})")
        last_value = Value(
            last, carry.shape, max(carry.bound, CARRY_BOUND), carry.repeats
        )
        ys_value = Value(ys, (length, *y.shape), y.bound, (False, *y.repeats))
        scope.values += [self.claim(last_value), self.claim(ys_value)]
        return self.choice((last_value, ys_value)) if value is None else last_value

    def _while_loop(self, scope: _Scope) -> Value:
        """Two forms. In value programs, a loop over a float carry with a
        data-dependent exit (at most 4 iterations). In differentiated ones,
        a data-dependent trip count whose float carry the input does not
        reach (both irc and JAX refuse a derivative through a float carry),
        scaling a value."""
        p = self.operand(scope)
        if not self.differentiated:
            carry = self.squash(scope, self.operand(scope), CARRY_BOUND)
            inner = self._loop_body(scope, carry)
            c = inner.values[-1]
            new = self._contracting_update(inner, c, carry)
            name = self.fresh("body")
            k = self.fresh("k")
            scope.emit(f"def {name}(state):")
            scope.emit(f"    {k}, {c.name} = state")
            scope.lines.extend(inner.lines)
            scope.emit(f"    return {k} + 1, {new.name}")
            _, result = self.fresh("v"), self.fresh("v")
            scope.emit(
                # Not two sums that may both be 0 up to rounding (centred
                # rows): see ``_cond``.
                f"_, {result} = cf.while_loop(lambda s: (s[0] < 4) & (s[1].sum() < {p.name}.sum() + 0.3), "
                f"{name}, (xp.int32(0), {carry.name}))"
            )
            value = Value(
                result, carry.shape, max(carry.bound, CARRY_BOUND), carry.repeats
            )
            scope.values.append(self.claim(value))
            return value
        count = self.fresh("v")
        scale = self.fresh("v")
        scope.emit(
            f"{count}, {scale} = cf.while_loop(lambda s: (s[0] < 5) & (s[1] < xp.abs({p.name}).sum()), "
            f"lambda s: (s[0] + 1, s[1] * 1.5 + 0.5), (xp.int32(0), xp.zeros_like({p.name}.sum())))"
        )
        value = Value(scale, (), 8.0, ())
        scope.values.append(self.claim(value))
        x = self.operand(scope)
        return scope.assign(f"{x.name} * {scale} / 8.0", x.shape, x.bound, x.repeats)


def _after(scope: _Scope, value: Value) -> list[str]:
    """The lines of ``scope`` after the one that defines ``value``."""
    for k, line in enumerate(scope.lines):
        if re.match(rf"\s*(\w+, )?{value.name}\b.* = ", line) or re.match(
            rf"\s*{value.name} = ", line
        ):
            return scope.lines[k + 1 :]
    return []


def _axes_options(value: Value) -> list[tuple[int, ...] | None]:
    """The ``axis=`` a reduction of ``value`` may take: each axis, all of
    them as a tuple (rank 2 and more), None."""
    options: list[tuple[int, ...] | None] = [(k,) for k in range(value.rank)]
    if value.rank >= 2:
        options.append(tuple(range(value.rank)))
    return [*options, None]


def _sortable(value: Value, axes: tuple[int, ...] | None) -> bool:
    """Whether a median of ``value`` over ``axes`` is drawn: irc sorts
    static extents only, and a tied median's gradient depends on which of
    the ties each sort puts in the middle (so no repeats along them)."""
    reduced = range(value.rank) if axes is None else axes
    return all(value.shape[k].isdigit() and not value.repeats[k] for k in reduced)


def _paren(dim: str) -> str:
    return dim if is_plain(dim) else f"({dim})"


FAMILIES = (
    "unary",
    "binary",
    "reduce",
    "normalise",
    "cumulative",
    "matmul",
    "outer",
    "layout",
    "concat",
    "take",
    "cond",
    "switch",
    "while_loop",
    "fori_loop",
    "row_update",
    "scan",
)
CONTROL_FLOW = ("cond", "switch", "while_loop", "fori_loop", "row_update", "scan")


def _plain_output(scope: _Scope, value: Value) -> Value:
    """``value`` with every dim that is not a symbol or a static size summed
    away (forward mode and cotangent arguments want plain dims)."""
    axes = tuple(k for k, d in enumerate(value.shape) if not is_plain(d))
    if not axes:
        return value
    return scope.assign(
        f"xp.sum({value.name}, axis={axes if len(axes) > 1 else axes[0]})",
        [d for k, d in enumerate(value.shape) if k not in axes],
        value.bound * math.prod(dim_max(value.shape[k]) for k in axes),
        [r for k, r in enumerate(value.repeats) if k not in axes],
    )


@st.composite
def oracle_programs(
    draw: Draw,
    mode: str | Sequence[str] = MODES,
    *,
    families: Sequence[str] = FAMILIES,
    max_steps: int = 6,
) -> OracleProgram:
    """A program (see the module's docstring) in ``mode`` (drawn when a
    sequence) built from ``families``, minus ``EXCLUDED``."""
    if not isinstance(mode, str):
        mode = draw(st.sampled_from(tuple(mode)))
    families = [f for f in families if f not in EXCLUDED]
    writer = _Writer(draw, mode, families, max_steps)
    scope = _Scope(writer, [], 1, 0)
    scope.parent = None  # type: ignore[attr-defined]
    writer.new_argument(scope)
    count = draw(st.integers(1, max_steps))
    last = writer.steps(scope, count)
    # The last value, and up to two values nothing read (so that no step
    # goes unchecked): the most recent ones.
    unread = [
        v
        for k, v in enumerate(scope.values)
        if v.name.startswith("v")
        and v is not last
        and not any(re.search(rf"\b{v.name}\b", line) for line in _after(scope, v))
    ]
    outputs = [last, *unread[::-1][:2]]
    outputs = [_plain_output(scope, writer.squash(scope, v, 50.0)) for v in outputs]
    arguments = tuple(writer.arguments)
    names = [a.name for a in arguments]
    body = ["def body(xp, cf, " + ", ".join(names) + "):", *scope.lines]
    body.append(f"    return ({', '.join(v.name for v in outputs)},)")
    cts = [Argument(f"ct{k}", v.shape) for k, v in enumerate(outputs)]
    source, extra, pytree = _wrap(draw, writer, mode, names, cts)
    return OracleProgram(
        source="\n".join(body) + "\n\n" + source,
        mode=mode,
        arguments=arguments + tuple(extra),
        pytree=pytree,
        families=frozenset(writer.used),
        bounds=writer.bounds,
    )


def _wrap(
    draw: Draw, writer: _Writer, mode: str, names: list[str], cts: list[Argument]
) -> tuple[str, list[Argument], bool]:
    """``def program(xp, cf, ...)``: the body in ``mode``; the extra
    arguments it takes (cotangents, tangents) and whether the body's
    arguments come as one dict."""
    args = ", ".join(names)
    ct_names = [c.name for c in cts]
    loss_terms = " + ".join(
        f"({o} * {c}).sum()"
        for o, c in zip([f"out[{k}]" for k in range(len(cts))], ct_names)
    )
    wrt = sorted(
        set(draw(st.lists(st.integers(0, len(names) - 1), min_size=1, max_size=3)))
    )
    if len(wrt) > 1:
        argnums = f"({', '.join(map(str, wrt))})"
    else:
        argnums = f"({wrt[0]},)" if draw(st.booleans()) else str(wrt[0])
    lines: list[str] = []
    extra: list[Argument] = []
    pytree = False
    if mode == "value":
        lines = [f"def program(xp, cf, {args}):", f"    return body(xp, cf, {args})"]
    elif mode in ("grad", "value_and_grad"):
        pytree = mode == "value_and_grad" and draw(st.booleans())
        extra = list(cts)
        if pytree:
            unpack = ", ".join(f'params["{n}"]' for n in names)
            lines = [
                f"def program(xp, cf, params, {', '.join(ct_names)}):",
                f"    def loss(params, {', '.join(ct_names)}):",
                f"        out = body(xp, cf, {unpack})",
                f"        return {loss_terms}",
                f"    return cf.value_and_grad(loss)(params, {', '.join(ct_names)})",
            ]
        else:
            lines = [
                f"def program(xp, cf, {args}, {', '.join(ct_names)}):",
                f"    def loss({args}, {', '.join(ct_names)}):",
                f"        out = body(xp, cf, {args})",
                f"        return {loss_terms}",
                f"    return cf.{mode}(loss, argnums={argnums})({args}, {', '.join(ct_names)})",
            ]
    elif mode == "vjp":
        extra = list(cts)
        lines = [
            f"def program(xp, cf, {args}, {', '.join(ct_names)}):",
            f"    out, pullback = cf.vjp(lambda {args}: body(xp, cf, {args}), {args})",
            f"    return out, pullback(({', '.join(ct_names)},))",
        ]
    elif mode == "jvp":
        extra = [
            Argument(f"t{k}", writer.arguments[k].shape) for k in range(len(names))
        ]
        t_names = [t.name for t in extra]
        lines = [
            f"def program(xp, cf, {args}, {', '.join(t_names)}):",
            f"    return cf.jvp(lambda {args}: body(xp, cf, {args}), ({args},), ({', '.join(t_names)},))",
        ]
    elif mode in ("jacrev", "jacfwd"):
        lines = [
            f"def program(xp, cf, {args}):",
            f"    return cf.{mode}(lambda {args}: body(xp, cf, {args}), argnums={argnums})({args})",
        ]
    elif mode == "hessian":
        extra = list(cts)
        k = wrt[0]
        lines = [
            f"def program(xp, cf, {args}, {', '.join(ct_names)}):",
            f"    def loss({args}, {', '.join(ct_names)}):",
            f"        out = body(xp, cf, {args})",
            f"        return {loss_terms}",
            f"    return cf.hessian(loss, argnums={k})({args}, {', '.join(ct_names)})",
        ]
    elif mode == "grad_of_grad":
        k = wrt[0]
        j = wrt[-1]
        extra = [*cts, Argument("w", writer.arguments[k].shape)]
        lines = [
            f"def program(xp, cf, {args}, {', '.join(ct_names)}, w):",
            f"    def loss({args}, {', '.join(ct_names)}):",
            f"        out = body(xp, cf, {args})",
            f"        return {loss_terms}",
            f"    def directional({args}, {', '.join(ct_names)}, w):",
            f"        return (cf.grad(loss, argnums={k})({args}, {', '.join(ct_names)}) * w).sum()",
            f"    return cf.grad(directional, argnums={j})({args}, {', '.join(ct_names)}, w)",
        ]
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return "\n".join(lines) + "\n", extra, pytree
