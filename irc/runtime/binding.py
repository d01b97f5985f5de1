"""Binding symbolic dims to the sizes of concrete arguments.

Every backend starts a call the same way: check the arguments' dtypes and
ranks against the function's ``!graph.tensor`` signature, read each
symbol's value off the shapes, check that every other dim agrees with those
values, then check the guards. The reference interpreters do it here, from
the IR; the emitted Triton launchers do it in their own Python, printed by
``irc.backend.triton`` with the same messages (the tests compare the
two backends' verdicts on random calls). Each message names the argument,
the axis, the symbol and both values, since that is what a user needs to
fix the call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from irc.dialects.graph import TensorType
from irc.dialects.sym import GuardOp
from irc.dtypes import dtype
from irc.errors import BindingError, IrcTypeError
from irc.shapes import SymExpr
from irc.source_locations import source_location


class ArrayLike(Protocol):
    """What binding reads from an argument: NumPy arrays and torch tensors
    both qualify."""

    @property
    def shape(self) -> Sequence[int]: ...

    @property
    def dtype(self) -> object: ...


@dataclass(frozen=True)
class _Source:
    """Where a symbol got its value, to name it when another dim disagrees."""

    argument: str
    axis: int

    def __str__(self) -> str:
        return f"argument '{self.argument}' axis {self.axis}"


def bind_symbols(
    arg_types: Sequence[TensorType],
    shapes: Sequence[tuple[int, ...]],
    arg_names: Sequence[str],
) -> dict[str, int]:
    """The value of every symbol in ``arg_types``, read off ``shapes``.

    A dim that is a plain symbol binds it; a static dim must match exactly; a
    dim that is an expression (``N * 2``) is checked once every plain symbol
    is bound, so argument order does not matter. Raises ``BindingError`` on a
    wrong argument count, a wrong rank, a size that disagrees, or a symbol
    that appears only inside expressions (it cannot be read off a shape).
    """
    _check_count(len(arg_types), len(shapes), arg_names)
    binding: dict[str, int] = {}
    sources: dict[str, _Source] = {}
    for arg_type, shape, name in zip(arg_types, shapes, arg_names, strict=True):
        _check_rank(arg_type, shape, name)
        for axis, (dim, size) in enumerate(zip(arg_type.dims, shape, strict=True)):
            _bind_dim(dim, size, _Source(name, axis), binding, sources)
    for arg_type, shape, name in zip(arg_types, shapes, arg_names, strict=True):
        for axis, (dim, size) in enumerate(zip(arg_type.dims, shape, strict=True)):
            if dim.symbols:
                _check_expression(dim, size, _Source(name, axis), binding, sources)
    return binding


def _check_count(expected: int, got: int, arg_names: Sequence[str]) -> None:
    if expected != got:
        names = ", ".join(arg_names)
        raise BindingError(
            f"the function takes {expected} argument(s) ({names}) but was "
            f"called with {got}"
        )


def _check_rank(arg_type: TensorType, shape: tuple[int, ...], name: str) -> None:
    if len(shape) != arg_type.rank:
        raise BindingError(
            f"argument '{name}' has rank {len(shape)} (shape {tuple(shape)}) but "
            f"the function expects rank {arg_type.rank}: {_dims_text(arg_type)}"
        )


def _dims_text(arg_type: TensorType) -> str:
    return "[" + ", ".join(str(d) for d in arg_type.dims) + "]"


def _bind_dim(
    dim: SymExpr,
    size: int,
    source: _Source,
    binding: dict[str, int],
    sources: dict[str, _Source],
) -> None:
    """First pass: check a static dim, or bind (and cross-check) a symbol."""
    if dim.is_constant:
        if int(dim) != size:
            raise BindingError(
                f"{source}: expected size {int(dim)}, got {size}; this dim is "
                "static in the compiled signature"
            )
        return
    symbol = dim.symbol_name
    if symbol is None:
        return
    if size < 1:
        raise BindingError(
            f"{source}: symbol {symbol} would be {size}; symbolic dims are sizes of "
            "at least 1 (compile with a static dim for empty arrays)"
        )
    if symbol not in binding:
        binding[symbol], sources[symbol] = size, source
    elif binding[symbol] != size:
        raise BindingError(
            f"{source}: symbol {symbol} is {size} here but {binding[symbol]} "
            f"from {sources[symbol]}; dims named {symbol} must have equal sizes"
        )


def _check_expression(
    dim: SymExpr,
    size: int,
    source: _Source,
    binding: Mapping[str, int],
    sources: Mapping[str, _Source],
) -> None:
    """Second pass: a dim like ``N * 2`` must equal its value under the binding."""
    unbound = sorted(dim.symbols - binding.keys())
    if unbound:
        raise BindingError(
            f"{source}: dim {dim} uses symbol {unbound[0]}, which is not the "
            "whole of any argument's dim, so its value cannot be read off the "
            f"shapes; give one argument a dim that is {unbound[0]} alone"
        )
    expected = dim.evaluate(binding)
    if expected != size:
        values = ", ".join(
            f"{s} = {binding[s]} (from {sources[s]})" for s in sorted(dim.symbols)
        )
        raise BindingError(
            f"{source}: dim {dim} is {expected} with {values}, but the array "
            f"has size {size}"
        )


def check_dtypes(
    arg_types: Sequence[TensorType],
    dtypes: Sequence[object],
    arg_names: Sequence[str],
) -> None:
    """Each argument's dtype (NumPy, torch, or irc) must be exactly the
    element type of its ``!graph.tensor``: irc compiles one kernel per dtype
    signature and never converts silently."""
    _check_count(len(arg_types), len(dtypes), arg_names)
    for arg_type, got, name in zip(arg_types, dtypes, arg_names, strict=True):
        expected = dtype(arg_type.element_type)
        try:
            actual = dtype(got)
        except IrcTypeError as err:
            raise BindingError(
                f"argument '{name}': {err}; convert it to the dtype {expected} the "
                "function was compiled for"
            ) from err
        if actual != expected:
            raise BindingError(
                f"argument '{name}' has dtype {actual} but the function expects "
                f"{expected}; convert it to {expected} first"
            )


def argument_names(func: FuncOp) -> list[str]:
    """The names errors use for ``func``'s arguments: the block arguments'
    name hints from the IR text, else ``arg0``, ``arg1``, ..."""
    count = len(func.function_type.inputs)
    block = func.body.blocks.first
    hints = [arg.name_hint for arg in block.args] if block is not None else []
    if len(hints) != count:
        hints = [None] * count
    return [hint or f"arg{index}" for index, hint in enumerate(hints)]


def argument_types(func: FuncOp) -> list[TensorType]:
    """``func``'s argument types, which must all be ``!graph.tensor``."""
    types: list[TensorType] = []
    for arg_type, name in zip(
        func.function_type.inputs, argument_names(func), strict=True
    ):
        if not isinstance(arg_type, TensorType):
            raise BindingError(
                f"argument '{name}' of @{func.sym_name.data} has type {arg_type}; "
                "only !graph.tensor arguments can be bound to arrays"
            )
        types.append(arg_type)
    return types


def bind_arguments(func: FuncOp, arrays: Sequence[ArrayLike]) -> dict[str, int]:
    """Check ``arrays`` against ``func``'s signature (count, dtypes, ranks,
    sizes) and return the symbol binding they imply."""
    names = argument_names(func)
    types = argument_types(func)
    check_dtypes(types, [a.dtype for a in arrays], names)
    return bind_symbols(types, [tuple(a.shape) for a in arrays], names)


def check_guards(guards: Iterable[GuardOp], binding: Mapping[str, int]) -> None:
    """Raise ``BindingError`` for the first guard whose fact is false under
    ``binding``, naming the fact, the symbols' values, the reason the
    compiler recorded, and where the guard is."""
    for guard in guards:
        fact = guard.fact
        symbols = sorted(fact.lhs.data.symbols | fact.rhs.data.symbols)
        unbound = [s for s in symbols if s not in binding]
        if unbound:
            raise BindingError(
                f"guard `{fact}` ({op_location(guard)}) uses symbol {unbound[0]}, "
                "which no argument's shape binds"
            )
        if not fact.holds(dict(binding)):
            values = ", ".join(f"{s} = {binding[s]}" for s in symbols)
            reason = f": {guard.reason.data}" if guard.reason is not None else ""
            raise BindingError(
                f"guard `{fact}` does not hold with {values}{reason} "
                f"({op_location(guard)}); call with shapes that satisfy it"
            )


def op_location(op: Operation) -> str:
    """Where ``op`` is, for error messages: its op name, the function that
    holds it, and its source location when the IR text gave one."""
    func = op.parent_op()
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    where = f"{op.name} in @{func.sym_name.data}" if func is not None else op.name
    if (location := source_location(op)) is not None:
        where += f" at {location}"
    return where
