"""Forward mode and Jacobians, JAX-style: ``irc.jvp``, ``irc.jacfwd``,
``irc.jacrev`` and ``irc.hessian``.

All four are composed from the reverse mode (``irc.grad``, the ``autodiff``
pass), so they are IR transforms like it: captured, they inline their graph
ops into the capture in progress (symbolic dims stay symbolic); called
eagerly, they are compiled with ``irc.jit`` and run.

- **jvp** by the double-VJP trick: ``u -> J^T u`` (the pullback of ``f`` at
  the primals) is linear in ``u``, so its own pullback, at any ``u`` (zeros
  here), applied to the tangents ``t`` is ``(J^T)^T t = J t``. Written as
  two nested ``irc.grad``s of inner products, the autodiff pass builds
  exactly the forward-mode ops (``canonicalize`` folds the zero ``u`` away).
- **jacrev** stacks the rows ``J^T e_i``, one reverse pass per output
  element, and **jacfwd** the columns ``J e_j``, one JVP per input element.
  With symbolic sizes the number of basis vectors is symbolic and irc has no
  vmap, so each is an ``irc.scan`` over ``arange(size)`` whose body builds
  the one-hot ``e`` and differentiates: one ``graph.for`` for every size.
- **hessian** is ``jacfwd(jacrev(f))``, as in JAX.

See docs/autodiff.md, "Forward mode and Jacobians".
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irc import pytree
from irc.autodiff import grad
from irc.capture.control_flow import scan
from irc.capture.layout import as_tensor
from irc.capture.ops import emit
from irc.capture.tensor import Tensor
from irc.capture.trace import active_trace, tracing_error
from irc.dialects import graph
from irc.dialects.sym import product, shape_text
from irc.dtypes import INT64
from irc.shapes import SymExpr

__all__ = ["hessian", "jacfwd", "jacrev", "jvp"]

ArgNums = int | Sequence[int]


# --------------------------------------------------------------------------
# The API
# --------------------------------------------------------------------------


def jvp(
    f: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``(f(*primals), J t)``: the Jacobian-vector product of ``f`` at
    ``primals`` with ``tangents`` (a tuple or list in the structure, shapes
    and dtypes of ``primals``). With ``has_aux`` ``f`` returns
    ``(output, aux)`` and the result is ``(output, tangent, aux)``.

    Every primal is differentiated, so each must be (a pytree of)
    floating-point arrays; every output must be floating-point (return the
    others as ``aux``)."""
    primals, tangents = _jvp_arguments(primals, tangents)
    if active_trace() is None:
        eager = _eager_jvp(f, has_aux)
        return eager(_scalars_as_arrays(primals), _scalars_as_arrays(tangents))
    return _traced_jvp(f, has_aux, primals, tangents)


def jacfwd(
    f: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``f`` with respect to the positional arguments
    ``argnums``, column by column (one JVP per input element): for an output
    of shape ``O`` and an argument of shape ``I``, an array of shape
    ``O + I``. Outputs and arguments may be pytrees: each output leaf gets
    the tree of its argument's Jacobians (a tuple of them when ``argnums`` is
    a tuple). With ``has_aux`` the result is ``(jacobian, aux)``."""
    return _Jacobian(f, argnums, has_aux, forward=True)


def jacrev(
    f: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``jacfwd``'s Jacobian computed row by row (one reverse pass per
    output element): cheaper when the outputs are fewer than the inputs."""
    return _Jacobian(f, argnums, has_aux, forward=False)


def hessian(
    f: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``jacfwd(jacrev(f))``: for a scalar ``f`` of an argument of shape
    ``I``, the array of second derivatives of shape ``I + I``."""
    return jacfwd(jacrev(f, argnums, has_aux), argnums, has_aux)


# --------------------------------------------------------------------------
# jvp
# --------------------------------------------------------------------------


def _jvp_arguments(
    primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The primals and tangents as tuples of one structure (as JAX, irc
    takes them as sequences: ``jvp(f, (x,), (t,))``)."""
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not pytree.is_sequence(value):
            raise tracing_error(
                f"irc.jvp: {name} must be a tuple or list of the arguments, not "
                f"a {type(value).__name__} (write irc.jvp(f, (x,), (t,)))"
            )
    primal_tree = pytree.flatten(tuple(primals))[1]
    tangent_tree = pytree.flatten(tuple(tangents))[1]
    if primal_tree != tangent_tree:
        raise tracing_error(
            f"irc.jvp: the tangents have the structure {tangent_tree}, the "
            f"primals {primal_tree}; they must match"
        )
    return tuple(primals), tuple(tangents)


#: ``jvp``'s eager programs, by function and ``has_aux``, so that calling
#: it again on arrays of the same signature reuses the compiled program.
#: The programs hold the function weakly: a value holding its key strongly
#: would keep every function ever passed alive.
_EAGER_JVPS: weakref.WeakKeyDictionary[Any, dict[bool, Any]] = (
    weakref.WeakKeyDictionary()
)


def _eager_jvp(f: Callable[..., Any], has_aux: bool) -> Callable[..., Any]:
    from irc.api import jit

    try:
        per_aux = _EAGER_JVPS.setdefault(f, {})
        function: Callable[[], Any] = weakref.ref(f)
    except TypeError:  # not weakly referenceable: compile without a cache
        per_aux, function = {}, lambda: f
    if has_aux not in per_aux:

        def traced(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            return _traced_jvp(function(), has_aux, primals, tangents)

        traced.__name__ = f"jvp_{getattr(f, '__name__', 'f')}"
        per_aux[has_aux] = jit(traced)
    return per_aux[has_aux]


def _traced_jvp(
    f: Callable[..., Any],
    has_aux: bool,
    primals: tuple[Any, ...],
    tangents: tuple[Any, ...],
) -> tuple[Any, ...]:
    positions = tuple(range(len(primals)))
    _check_differentiable(primals, positions, "irc.jvp", "primal")
    tangents = _checked_tangents(primals, tangents)
    main = _main_output(f, has_aux)
    output, aux = _split_aux(f(*primals), has_aux)
    out_leaves, out_tree = _float_outputs(output, "irc.jvp", forward=True)
    tangent = _linearized(main, primals, {}, positions, tangents, out_leaves)
    tangent_out = pytree.unflatten(out_tree, tangent)
    return (output, tangent_out, aux) if has_aux else (output, tangent_out)


def _checked_tangents(
    primals: tuple[Any, ...], tangents: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The tangents, each a traced array of its primal's type."""
    primal_leaves, _ = pytree.flatten(primals)
    tangent_leaves, tree = pytree.flatten(tangents)
    checked = []
    for index, (primal, tangent) in enumerate(zip(primal_leaves, tangent_leaves)):
        if not isinstance(tangent, Tensor):
            tangent = _as_array(tangent, f"tangent {index}")
        if tangent.type != primal.type:
            raise tracing_error(
                f"irc.jvp: tangent {index} is {_describe(tangent)}, but its "
                f"primal is {_describe(primal)}: a tangent has its primal's "
                "shape and dtype"
            )
        checked.append(tangent)
    return pytree.unflatten(tree, checked)


def _as_array(value: Any, what: str) -> Tensor:
    if isinstance(value, np.ndarray | np.generic):
        return as_tensor(value)
    raise tracing_error(
        f"irc.jvp: {what} is a {type(value).__name__}; tangents are arrays"
    )


def _linearized(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    positions: tuple[int, ...],
    tangents: tuple[Any, ...],
    out_leaves: list[Tensor],
) -> list[Tensor]:
    """``J t``, one array per (flattened) output of ``f``: the pullback of
    the linear map ``u -> J^T u`` applied to ``t``, at ``u = 0``."""
    count = len(args)
    pullback = grad(_inner_product(f, count), argnums=positions)

    def transposed(*values: Any, **kw: Any) -> Any:
        # <J^T u, t>, whose gradient in u is J t.
        arguments, u, t = values[:count], values[count], values[count + 1]
        return _dot(pullback(*arguments, u, **kw), t)

    zeros = [np.zeros_like(leaf) for leaf in out_leaves]
    return grad(transposed, argnums=count)(*args, zeros, tangents, **kwargs)


def _inner_product(f: Callable[..., Any], count: int) -> Callable[..., Any]:
    """``(*args, u) -> <f(*args), u>``, summed over the output's leaves:
    its gradient in the arguments is the VJP ``J^T u``."""

    def inner(*values: Any, **kwargs: Any) -> Any:
        return _dot(_array_leaves(f(*values[:count], **kwargs)), values[count])

    return inner


def _element(f: Callable[..., Any], count: int, k: int) -> Callable[..., Any]:
    """``(*args, i) -> <f(*args)[k], e_i>``: element ``i`` of output leaf
    ``k``, whose gradient is a row of the Jacobian. The one-hot is built
    inside from the index (not passed in, as ``jvp``'s ``u`` is), so the
    output's dims may be expressions (``2*N``)."""

    def element(*values: Any, **kwargs: Any) -> Any:
        leaf = _array_leaves(f(*values[:count], **kwargs))[k]
        return (leaf * _one_hot(values[count], leaf)).sum()

    return element


def _dot(left: Any, right: Any) -> Any:
    """The sum of the elementwise products of two trees' leaves."""
    pairs = zip(pytree.flatten(left)[0], pytree.flatten(right)[0], strict=True)
    total: Any = None
    for a, b in pairs:
        term = (a * b).sum()
        total = term if total is None else total + term
    return total


# --------------------------------------------------------------------------
# Jacobians
# --------------------------------------------------------------------------


class _Jacobian:
    """``jacfwd(f)`` or ``jacrev(f)``."""

    def __init__(
        self, f: Callable[..., Any], argnums: ArgNums, has_aux: bool, forward: bool
    ) -> None:
        functools.update_wrapper(self, f)
        kind = "jacfwd" if forward else "jacrev"
        self.__name__ = f"{kind}_{getattr(f, '__name__', 'f')}"
        self.kind = kind
        self.f = f
        self.argnums = argnums
        self.has_aux = has_aux
        self.forward = forward
        self._jitted: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if active_trace() is None:
            from irc.api import jit

            if self._jitted is None:
                self._jitted = jit(self)
            positions = _positions(self.argnums, len(args), f"irc.{self.kind}")
            args = tuple(
                _scalars_as_arrays(arg) if index in positions else arg
                for index, arg in enumerate(args)
            )
            return self._jitted(*args, **kwargs)
        positions = _positions(self.argnums, len(args), f"irc.{self.kind}")
        _check_differentiable(args, positions, f"irc.{self.kind}", "argument")
        output, aux = _split_aux(self.f(*args, **kwargs), self.has_aux)
        out_leaves, out_tree = _float_outputs(output, f"irc.{self.kind}", self.forward)
        main = _main_output(self.f, self.has_aux)
        build = _columns if self.forward else _rows
        blocks = build(main, args, kwargs, positions, out_leaves)
        jacobian = _assemble(blocks, args, positions, self.argnums, out_tree)
        return (jacobian, aux) if self.has_aux else jacobian


#: ``blocks[k][p][j]``: the Jacobian of output leaf ``k`` with respect to
#: leaf ``j`` of the ``p``-th differentiated argument, of shape ``O_k + I_j``.
Blocks = list[list[list[Tensor]]]


def _rows(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    positions: tuple[int, ...],
    out_leaves: list[Tensor],
) -> Blocks:
    """Reverse mode: for each output leaf, a scan over its elements ``i``
    whose body is the VJP of the one-hot ``e_i``, stacking rows."""
    count = len(args)
    per_output: list[list[Tensor]] = []
    for k, leaf in enumerate(out_leaves):
        pullback = grad(_element(f, count, k), argnums=positions)

        def row(carry: Any, i: Any, pullback: Any = pullback) -> Any:
            return carry, pytree.flatten(pullback(*args, i, **kwargs))[0]

        _, stacked = scan(row, (), _indices(leaf))
        per_output.append(
            [
                column.reshape(tuple(leaf.shape) + tuple(column.shape[1:]))
                for column in stacked
            ]
        )
    return [_by_position(blocks, args, positions) for blocks in per_output]


def _columns(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    positions: tuple[int, ...],
    out_leaves: list[Tensor],
) -> Blocks:
    """Forward mode: for each differentiated input leaf, a scan over its
    elements ``j`` whose body is the JVP of the one-hot ``e_j``, stacking
    columns (then moved last)."""
    input_leaves = [
        leaf for position in positions for leaf in pytree.flatten(args[position])[0]
    ]
    trees = [pytree.flatten(args[position])[1] for position in positions]
    per_input: list[list[Tensor]] = []
    for j, leaf in enumerate(input_leaves):

        def column(carry: Any, i: Any, j: int = j, leaf: Tensor = leaf) -> Any:
            flat = [np.zeros_like(other) for other in input_leaves]
            flat[j] = _one_hot(i, leaf)
            tangents = _unflatten_all(trees, flat)
            return carry, _linearized(f, args, kwargs, positions, tangents, out_leaves)

        _, stacked = scan(column, (), _indices(leaf))
        per_input.append(
            [
                _move_leading_last(c.reshape(tuple(leaf.shape) + tuple(o.shape)), o)
                for c, o in zip(stacked, out_leaves, strict=True)
            ]
        )
    # per_input[j][k] -> blocks[k][p][j]
    transposed = [
        [per_input[j][k] for j in range(len(input_leaves))]
        for k in range(len(out_leaves))
    ]
    return [_by_position(blocks, args, positions) for blocks in transposed]


def _indices(like: Tensor) -> Tensor:
    """``np.arange(like.size)``: the scan's xs, one per basis vector (built
    directly: NumPy's own ``arange`` is intercepted in user code only)."""
    size = product(like.type.dims)
    return emit(graph.IotaOp(0, graph.TensorType((size,), INT64.ir_type)))


def _one_hot(i: Tensor, like: Tensor) -> Tensor:
    """The basis array ``e_i`` of ``like``'s shape and dtype (``i`` counts
    its elements in row-major order)."""
    flat = (_indices(like) == i).astype(like.dtype)
    return flat.reshape(tuple(like.shape))


def _move_leading_last(stacked: Tensor, out: Tensor) -> Tensor:
    """``I + O`` (one column per input element) to ``O + I``."""
    inputs = stacked.ndim - out.ndim
    axes = tuple(range(inputs, stacked.ndim)) + tuple(range(inputs))
    return np.transpose(stacked, axes)


def _by_position(
    flat: list[Tensor], args: tuple[Any, ...], positions: tuple[int, ...]
) -> list[list[Tensor]]:
    """A flat list over the differentiated arguments' leaves, grouped by
    argument."""
    grouped, start = [], 0
    for position in positions:
        size = len(pytree.flatten(args[position])[0])
        grouped.append(flat[start : start + size])
        start += size
    return grouped


def _unflatten_all(trees: list[pytree.TreeDef], flat: list[Any]) -> tuple[Any, ...]:
    """One tree per differentiated argument, from their leaves in order."""
    result, start = [], 0
    for tree in trees:
        count = _leaf_count(tree)
        result.append(pytree.unflatten(tree, flat[start : start + count]))
        start += count
    return tuple(result)


def _leaf_count(tree: pytree.TreeDef) -> int:
    if tree.kind == "leaf":
        return 1
    return sum(_leaf_count(child) for child in tree.children)


def _assemble(
    blocks: Blocks,
    args: tuple[Any, ...],
    positions: tuple[int, ...],
    argnums: ArgNums,
    out_tree: pytree.TreeDef,
) -> Any:
    """JAX's structure: the output's tree, each leaf replaced by its
    Jacobian in the differentiated argument's tree (a tuple of those when
    ``argnums`` is a tuple)."""
    per_leaf = []
    for by_position in blocks:
        trees = [
            pytree.unflatten(pytree.flatten(args[position])[1], leaves)
            for position, leaves in zip(positions, by_position, strict=True)
        ]
        per_leaf.append(trees[0] if isinstance(argnums, int) else tuple(trees))
    return pytree.unflatten(out_tree, per_leaf)


# --------------------------------------------------------------------------
# Shared checks
# --------------------------------------------------------------------------


def _scalars_as_arrays(tree: Any) -> Any:
    """Eagerly, NumPy and Python float scalars as 0-d arrays: ``irc.jit``
    would bake a scalar into the program as a static value, which has no
    derivative."""

    def as_array(leaf: Any) -> Any:
        scalar = isinstance(leaf, np.floating | float) and not isinstance(leaf, bool)
        return np.asarray(leaf) if scalar else leaf

    return pytree.map_leaves(as_array, tree)


def _positions(argnums: ArgNums, count: int, name: str) -> tuple[int, ...]:
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not positions:
        raise tracing_error(f"{name}: argnums is empty; name an argument")
    for position in positions:
        if not 0 <= position < count:
            raise tracing_error(
                f"{name}: argnums {position} is out of range for a call with "
                f"{count} positional arguments"
            )
    return positions


def _check_differentiable(
    args: tuple[Any, ...], positions: tuple[int, ...], name: str, what: str
) -> None:
    """Each leaf of a differentiated argument is a floating-point array."""
    for position in positions:
        for leaf in pytree.flatten(args[position])[0]:
            if not isinstance(leaf, Tensor):
                raise tracing_error(
                    f"{name}: cannot differentiate with respect to a "
                    f"{type(leaf).__name__} ({what} {position}): only arrays "
                    "have derivatives"
                )
            element = leaf.irc_dtype
            if element.kind != "f":
                raise tracing_error(
                    f"{name}: cannot differentiate with respect to a {element.name} "
                    f"array ({what} {position}): only floating-point arrays have "
                    "derivatives (cast it with .astype(np.float32), or leave it "
                    "out of argnums)"
                )


def _array_leaves(output: Any) -> list[Any]:
    """The output's leaves, NumPy constants made traced arrays (their
    derivatives are zeros)."""
    leaves = pytree.flatten(output)[0]
    return [
        as_tensor(leaf) if isinstance(leaf, np.ndarray | np.generic) else leaf
        for leaf in leaves
    ]


def _float_outputs(
    output: Any, name: str, forward: bool
) -> tuple[list[Tensor], pytree.TreeDef]:
    """The output's leaves, each a floating-point array; in forward mode
    with static or plain symbolic dims (the double-VJP trick differentiates
    with respect to a cotangent of the output's type, and a differentiated
    argument cannot have a dim such as ``2*N`` yet)."""
    leaves, tree = _array_leaves(output), pytree.flatten(output)[1]
    for index, leaf in enumerate(leaves):
        if not isinstance(leaf, Tensor):
            raise tracing_error(
                f"{name}: output {index} is a {type(leaf).__name__}, not an "
                "array; return arrays (or pass has_aux=True and return "
                "(output, aux))"
            )
        element = leaf.irc_dtype
        if element.kind != "f":
            raise tracing_error(
                f"{name}: output {index} is a {element.name} array; only "
                "floating-point outputs have derivatives (return the others "
                "as aux with has_aux=True)"
            )
        if forward and not all(_plain(dim) for dim in leaf.type.dims):
            raise tracing_error(
                f"{name}: output {index} has the shape {shape_text(leaf.type.dims)}; "
                "forward mode needs outputs whose dims are static or plain "
                "symbols (N, not 2*N) for now: use irc.jacrev, or return the "
                "output unflattened"
            )
    return leaves, tree


def _plain(dim: SymExpr) -> bool:
    return dim.symbol_name is not None or dim.constant is not None


def _split_aux(result: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not pytree.is_sequence(result) or len(result) != 2:
        raise tracing_error(
            "with has_aux=True the function must return a pair (output, aux), "
            f"not {pytree.flatten(result)[1]}"
        )
    return result[0], result[1]


def _main_output(f: Callable[..., Any], has_aux: bool) -> Callable[..., Any]:
    """``f`` without its auxiliary output."""
    if not has_aux:
        return f

    @functools.wraps(f)
    def main(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)[0]

    return main


def _describe(value: Tensor) -> str:
    shape = ", ".join(str(dim) for dim in value.shape)
    return f"{value.irc_dtype.name}[{shape}]"
