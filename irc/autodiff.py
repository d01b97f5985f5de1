"""Gradients, JAX-style: ``irc.grad``, ``irc.value_and_grad`` and ``irc.vjp``.

A transformed function is an ordinary traceable function. Captured (by
``irc.compile``, ``irc.jit`` or ``irc.trace``, or called inside a function
being captured), it captures ``f`` on its own, with the same argument types,
runs the ``autodiff`` pass (``irc.passes.autodiff``) on that graph function
and inlines the joint function it makes into the capture in progress: one
module holds the forward and the backward ops, symbolic dims included, and
the rest of the pipeline fuses across both. Called eagerly on arrays, it is
compiled with ``irc.jit`` (every dim static) and run.

Pytrees work as everywhere in irc: the gradient of a dict of parameters is a
dict of the same keys. Only floating-point arrays have gradients: an integer
or bool argument in ``argnums`` is a ``TracingError``, as in JAX; ``vjp``
gives such a primal a zero cotangent (zeros of its shape and dtype, where
JAX gives ``float0`` zeros).

``f`` may write into its array arguments (``x *= 2``, ``x[0] = 1``): it is
differentiated as NumPy runs it, each write a new value that later reads
see, but the transformed function never writes into the caller's arrays
(the gradient is that of the map from the arguments' values to ``f``'s
results, as JAX's functions have no writes to make). See docs/autodiff.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import PassFailedException

from irc import pytree
from irc.capture import TensorSpec, capture
from irc.capture.ops import splat
from irc.capture.tensor import Tensor
from irc.capture.trace import active_trace, current_trace, tracing_error
from irc.capture.views import copy
from irc.dialects import graph as g
from irc.dialects.sym import GuardOp
from irc.dtypes import dtype
from irc.passes.autodiff import differentiate, is_differentiable

__all__ = ["grad", "value_and_grad", "vjp"]

ArgNums = int | Sequence[int]


def grad(
    f: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of ``f``, which returns a rank-0 float array (or, with
    ``has_aux``, a pair of it and auxiliary data), with respect to the
    positional arguments ``argnums`` (an int, or a tuple of them: then a
    tuple of gradients). With ``has_aux`` the result is ``(gradient, aux)``.
    """
    return _Differentiated(f, argnums, has_aux, with_value=False)


def value_and_grad(
    f: Callable[..., Any], argnums: ArgNums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``f``'s value and its gradient (see ``grad``): ``(value, gradient)``,
    where the value is ``(loss, aux)`` with ``has_aux``."""
    return _Differentiated(f, argnums, has_aux, with_value=True)


def vjp(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(f(*primals), pullback)``: ``pullback(cotangents)`` returns the
    vector-Jacobian product, one gradient per primal (a tuple), for
    cotangents in the structure of ``f``'s outputs (those of integer and bool
    outputs are ignored). Eagerly, the pullback runs the forward again in the
    same compiled program; under capture, ``cse`` merges the two forwards."""
    pullback = _Pullback(f)
    forward = _without_writes(f)
    if active_trace() is None:
        from irc.api import jit

        return jit(forward)(*primals), functools.partial(pullback.eager, primals)
    # The pullback captures ``f`` again on the primals: were they written
    # here, it would see their new values.
    return forward(*primals), functools.partial(pullback, primals)


def _without_writes(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` called on copies of its traced array arguments: its writes into
    them (``x *= 2``, ``x[0] = 1``) become new values inside it, which
    autodiff follows as any other, and never the caller's arrays, which a
    captured function would otherwise return as extra results to copy back
    (``irc.capture.views.written_arguments``)."""

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = pytree.flatten((list(args), dict(kwargs)))
        copies = [copy(leaf) if isinstance(leaf, Tensor) else leaf for leaf in leaves]
        copied_args, copied_kwargs = pytree.unflatten(tree, copies)
        result = f(*copied_args, **copied_kwargs)
        if result is None:
            raise tracing_error(
                f"{getattr(f, '__name__', 'f')} returns None: a differentiated "
                "function must return the values to differentiate (its writes "
                "into its arguments never reach the caller's arrays under "
                "irc.grad, irc.value_and_grad and irc.vjp: return the written "
                "array instead)"
            )
        return result

    return call


class _Differentiated:
    """``grad(f)`` or ``value_and_grad(f)``."""

    def __init__(
        self, f: Callable[..., Any], argnums: ArgNums, has_aux: bool, with_value: bool
    ) -> None:
        functools.update_wrapper(self, f)
        kind = "value_and_grad" if with_value else "grad"
        self.__name__ = f"{kind}_{getattr(f, '__name__', 'f')}"
        self.f = f
        self.argnums = argnums
        self.has_aux = has_aux
        self.with_value = with_value
        self._jitted: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if active_trace() is None:
            return self._eager(args, kwargs)
        positions = _positions(self.argnums, len(args), self.__name__)
        joint = _capture_joint(self.f, args, kwargs, positions, self.has_aux, None)
        loss_and_aux = pytree.unflatten(joint.out_tree, joint.outputs)
        gradients = joint.gradients_like(args, positions, self.argnums)
        if self.with_value:
            return loss_and_aux, gradients
        return (gradients, loss_and_aux[1]) if self.has_aux else gradients

    def _eager(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from irc.api import jit

        if self._jitted is None:
            self._jitted = jit(self)
        return self._jitted(*args, **kwargs)


class _Pullback:
    """The traced pullback of ``vjp``: the joint function of ``f`` in
    vector-Jacobian mode, inlined with the given cotangents."""

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        self.__name__ = f"vjp_{getattr(f, '__name__', 'f')}"
        self._jitted: Any = None

    def __call__(self, primals: Sequence[Any], cotangents: Any) -> tuple[Any, ...]:
        positions = tuple(range(len(primals)))
        joint = _capture_joint(self.f, tuple(primals), {}, positions, False, cotangents)
        return joint.gradients_like(tuple(primals), positions, positions)

    def eager(self, primals: Sequence[Any], cotangents: Any) -> tuple[Any, ...]:
        """The pullback on arrays: compiled once per signature, then run."""
        from irc.api import jit

        if self._jitted is None:
            self._jitted = jit(self)
        return self._jitted(primals, cotangents)


def _positions(argnums: ArgNums, count: int, name: str) -> tuple[int, ...]:
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for position in positions:
        if not 0 <= position < count:
            raise tracing_error(
                f"{name}: argnums {position} is out of range for a call with "
                f"{count} positional arguments"
            )
    return positions


class _Joint:
    """The joint function of ``f``, inlined: its forward outputs and the
    gradients of its tensor arguments (by flat leaf index)."""

    def __init__(
        self,
        out_tree: pytree.TreeDef,
        outputs: list[Tensor],
        gradients: dict[int, Tensor],
    ) -> None:
        self.out_tree = out_tree
        self.outputs = outputs
        self.gradients = gradients

    def gradients_like(
        self, args: tuple[Any, ...], positions: tuple[int, ...], argnums: ArgNums
    ) -> Any:
        """The gradients in the structure of the differentiated arguments:
        one tree for an int ``argnums``, a tuple of them otherwise."""
        trees = []
        offsets = _leaf_offsets(args)
        for position in positions:
            leaves, tree = pytree.flatten(args[position])
            first = offsets[position]
            trees.append(
                pytree.unflatten(
                    tree, [self.gradients[first + i] for i in range(len(leaves))]
                )
            )
        return trees[0] if isinstance(argnums, int) else tuple(trees)


def _leaf_offsets(args: tuple[Any, ...]) -> list[int]:
    """The flat index of each positional argument's first leaf."""
    offsets, total = [], 0
    for argument in args:
        offsets.append(total)
        total += len(pytree.flatten(argument)[0])
    return offsets


def _capture_joint(
    f: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    positions: tuple[int, ...],
    has_aux: bool,
    cotangents: Any,
) -> _Joint:
    """Capture ``f`` on the types of ``args``/``kwargs``, make its joint
    function (``grad`` mode, the first output the loss, when ``cotangents``
    is None; else ``vjp`` mode) and inline it into the capture in progress."""
    trace = current_trace()
    leaves, in_tree = pytree.flatten((list(args), dict(kwargs)))
    offsets = _leaf_offsets(args)
    wanted = {
        offsets[p] + i
        for p in positions
        for i in range(len(pytree.flatten(args[p])[0]))
    }
    # vjp gives integer and bool primals zeros (JAX's float0 cotangents);
    # grad refuses them in argnums (in ``_spec``), as JAX does.
    constant = set()
    if cotangents is not None:
        constant = {i for i in wanted if _integral(leaves[i])}
        wanted -= constant
    hint = _VJP_HINT if cotangents is not None else _GRAD_HINT
    specs = [_spec(leaf, index in wanted, hint) for index, leaf in enumerate(leaves)]
    spec_args, spec_kwargs = pytree.unflatten(in_tree, specs)
    known_facts = {str(fact) for fact in trace.facts}
    inner_facts = _facts_about(trace.facts, specs)
    captured = capture(_without_writes(f), spec_args, spec_kwargs, inner_facts)
    function = next(
        op
        for op in captured.module.ops
        if isinstance(op, func.FuncOp) and op.sym_name.data == captured.function_name
    )
    tensor_leaves = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tensor)]
    wrt = [tensor_leaves.index(i) for i in sorted(wanted)]
    loss = None if cotangents is not None else _loss_index(captured.out_tree, has_aux)
    if loss is not None:
        _check_loss(function, f)
    try:
        differentiate(function, wrt, loss)
    except PassFailedException as error:
        raise tracing_error(str(error)) from None
    inputs = [leaves[i].value for i in tensor_leaves]
    if cotangents is not None:
        inputs += _cotangent_values(function, captured.out_tree, cotangents)
    results = _inline(function, inputs, known_facts)
    output_count = len(results) - len(wrt)
    gradients = dict(zip(sorted(wanted), results[output_count:], strict=True))
    for index in constant:
        gradients[index] = _zeros_like(leaves[index])
    return _Joint(captured.out_tree, results[:output_count], gradients)


def _facts_about(facts: Any, specs: Sequence[Any]) -> list[str]:
    """The enclosing capture's facts that name only symbols of ``specs``'
    dims: the inner capture refuses a fact about a symbol none of its
    arguments has (``M >= 2`` where ``f`` takes an ``[N]`` array)."""
    bound = {
        name
        for spec in specs
        if isinstance(spec, TensorSpec)
        for dim in spec.dims
        for name in dim.symbols
    }
    kept = set()
    for fact in facts:
        named = fact.lhs.symbols | fact.rhs.symbols
        if named <= bound:
            kept.add(str(fact))
    return sorted(kept)


def _integral(leaf: Any) -> bool:
    """Whether ``leaf`` is an integer or bool array (traced, or a static one
    or a Python int of a capture): it has no gradient."""
    if isinstance(leaf, Tensor):
        return not is_differentiable(leaf.value)
    if isinstance(leaf, bool | int | np.generic | np.ndarray):
        return np.asarray(leaf).dtype.kind in "biu"
    return False


def _zeros_like(leaf: Any) -> Any:
    """Zeros of ``leaf``'s shape and dtype: the cotangent of a primal the
    results cannot vary with (an integer or bool one)."""
    if isinstance(leaf, Tensor):
        return splat(0, dtype(leaf.type.element_type), leaf.type.dims)
    return np.zeros_like(np.asarray(leaf))


#: How to leave a static value out of the differentiated arguments.
_GRAD_HINT = "pass it as an argument outside argnums"
_VJP_HINT = (
    "pass it as an array (np.asarray), or let the function close over it "
    "(irc.vjp differentiates every primal)"
)


def _spec(leaf: Any, differentiated: bool, hint: str = _GRAD_HINT) -> Any:
    """A traced array as the ``TensorSpec`` of its type; static values as
    they are (a differentiated one is an error: it is no array)."""
    if not isinstance(leaf, Tensor):
        if differentiated:
            raise tracing_error(
                f"cannot differentiate with respect to a {type(leaf).__name__}: "
                f"only arrays have gradients; {hint}"
            )
        return leaf
    tensor = leaf.type
    if differentiated and not is_differentiable(leaf.value):
        raise tracing_error(
            f"cannot differentiate with respect to a {dtype(tensor.element_type).name} "
            "array: only floating-point arrays have gradients (cast it with "
            ".astype(np.float32), or leave it out of argnums)"
        )
    # A derived dim (N*4, N - 1) is spelt as its expression: the inner
    # capture's symbols are the enclosing one's, so its IR inlines as is.
    dims = [dim.constant if dim.is_constant else str(dim) for dim in tensor.dims]
    return TensorSpec(dims, dtype(tensor.element_type))


def _loss_index(out_tree: pytree.TreeDef, has_aux: bool) -> int:
    if has_aux and (
        out_tree.kind not in ("tuple", "list") or len(out_tree.children) != 2
    ):
        raise tracing_error(
            f"with has_aux=True the function must return a pair (loss, aux), "
            f"not {out_tree}"
        )
    loss_tree = out_tree.children[0] if has_aux else out_tree
    if loss_tree is not pytree.LEAF:
        raise tracing_error(
            f"grad needs a function returning one rank-0 float array (the loss), "
            f"not {loss_tree}; with auxiliary outputs use has_aux=True, for "
            "several outputs irc.vjp"
        )
    return 0


def _check_loss(function: func.FuncOp, f: Callable[..., Any]) -> None:
    loss_type = function.function_type.outputs.data[0]
    assert isinstance(loss_type, g.TensorType), "graph functions return tensors"
    if loss_type.rank != 0 or dtype(loss_type.element_type).kind != "f":
        raise tracing_error(
            f"grad of {getattr(f, '__name__', 'f')}: the loss must be a rank-0 "
            f"float array, not {loss_type}; reduce it (.sum(), .mean()) or use "
            "irc.vjp"
        )


def _cotangent_values(
    function: func.FuncOp, out_tree: pytree.TreeDef, cotangents: Any
) -> list[SSAValue]:
    """The cotangents of the float outputs, checked against their types."""
    leaves, tree = pytree.flatten(cotangents)
    if tree != out_tree:
        raise tracing_error(
            f"the cotangents have the structure {tree}; the function's outputs "
            f"have {out_tree}"
        )
    returned = function.body.block.last_op
    assert returned is not None
    values = []
    for index, (leaf, output) in enumerate(zip(leaves, returned.operands)):
        if not is_differentiable(output):
            continue
        if not isinstance(leaf, Tensor) or leaf.type != output.type:
            found = leaf.type if isinstance(leaf, Tensor) else type(leaf).__name__
            raise tracing_error(
                f"cotangent {index} must be a traced array of type {output.type} "
                f"(the output's), not {found}"
            )
        values.append(leaf.value)
    return values


def _inline(
    function: func.FuncOp, inputs: Sequence[SSAValue], known_facts: set[str]
) -> list[Tensor]:
    """Copy ``function``'s body into the capture in progress, its arguments
    being ``inputs``; its guards become the capture's (those it already
    states are skipped); returns its results."""
    trace = current_trace()
    block = function.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, inputs, strict=True))
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    for op in block.ops:
        if op is returned:
            break
        if isinstance(op, GuardOp):
            if str(op.fact) not in known_facts:
                reason = op.reason.data if op.reason is not None else None
                trace.assume(op.fact, reason)
            continue
        trace.builder.insert(op.clone(value_mapper=mapping))
    return [Tensor(mapping.get(v, v)) for v in returned.operands]
