"""``autodiff``: reverse-mode differentiation as a graph-level pass.

The pass turns a graph function into its *joint* function: the forward
computation followed by the backward one, in one body of ordinary graph ops
that every later level (fusion, loop, memory, triton) lowers like any other.

``irc-opt -p 'autodiff{wrt=0,1 loss=0}'``; the options (all optional):

- ``wrt``: the indices of the arguments to differentiate with respect to;
  all floating-point arguments by default. Naming an integer or bool
  argument is an error: they have no gradient.
- ``loss``: the index of a rank-0 float result to differentiate (``grad``
  mode, a seed of 1). Without it the pass computes a vector-Jacobian
  product (``vjp`` mode): the joint function takes one more argument per
  floating-point result, that result's cotangent, after the original
  arguments.
- ``function``: the function to differentiate (the module's first public
  function by default); the others are left alone.

The joint function returns the original results, then one gradient per
``wrt`` argument, of that argument's type, in ``wrt``'s order. Guards stay
where they are, so they hold for the backward ops too. Each backward op
takes the source location of the forward op it differentiates.

The rules are one table, ``irc.passes.autodiff.rules.VJP_RULES``; an op
without a rule (and not in ``NO_GRADIENT``) on the path from a
differentiated argument to a differentiated result is an error naming it.
See docs/autodiff.md.
"""

# No ``from __future__ import annotations``: xDSL reads the option fields'
# types at run time to parse ``autodiff{wrt=0,1}``.

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.dtypes import is_float_type
from irc.passes.autodiff.attention import SoftmaxMatmul, softmax_matmul_vjp
from irc.passes.autodiff.control_flow import active_results, control_flow_vjp
from irc.passes.autodiff.emitter import Emitter
from irc.passes.autodiff.rules import (
    NO_GRADIENT,
    VJP_RULES,
    carries_no_gradient,
    vjp_rule,
)
from irc.runtime.binding import op_location

__all__ = [
    "NO_GRADIENT",
    "VJP_RULES",
    "AutodiffPass",
    "carries_no_gradient",
    "differentiate",
    "vjp_rule",
]


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Append the backward computation to a function (see the module's
    docstring for the options)."""

    name = "autodiff"

    #: For ``irc.testing.check_pass``: the joint function appends arguments
    #: (cotangents) and results (gradients) to the original ones.
    appends_to_signature: ClassVar[bool] = True

    wrt: tuple[int, ...] = ()
    loss: int | None = None
    function: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        differentiate(_function(op, self.function), self.wrt or None, self.loss)


def is_differentiable(value: SSAValue) -> bool:
    """Whether ``value`` is a floating-point tensor (integers and bools get
    no gradient)."""
    value_type = value.type
    return isinstance(value_type, g.TensorType) and is_float_type(
        value_type.element_type
    )


def differentiate(
    function: func.FuncOp,
    wrt: Sequence[int] | None = None,
    loss: int | None = None,
    seeded: Sequence[bool] | None = None,
) -> None:
    """Make ``function`` its joint function, in place (see the module's
    docstring); raises ``PassFailedException`` for options that do not fit
    it and for an op without a VJP rule.

    ``seeded`` (vjp mode only) says which results take a cotangent argument:
    the others have a cotangent known to be zero, and are not differentiated
    at all, rather than by multiplying a zero cotangent (JAX's symbolic
    zeros): a region's unused result whose derivative is not finite, such as
    ``arctan2`` at (0, 0), gives no NaN."""
    if len(function.body.blocks) != 1:
        raise PassFailedException(
            f"autodiff: @{function.sym_name.data} must have a body of one block "
            f"to be differentiated, not {len(function.body.blocks)}"
        )
    block = function.body.block
    returned = block.last_op
    if not isinstance(returned, func.ReturnOp):
        raise PassFailedException(
            f"autodiff: @{function.sym_name.data} does not end in func.return"
        )
    arguments = _wrt_arguments(function, wrt)
    forward_ops = [op for op in block.ops if op is not returned]
    emit = Emitter(Builder(InsertPoint.before(returned)))
    emit.location = returned.location
    cotangents = _Cotangents(emit)
    _seed(function, returned, loss, seeded, cotangents, emit)
    active = _active_values(arguments, forward_ops)
    for op in reversed(forward_ops):
        _pull_back(op, active, cotangents, emit)
    emit.location = returned.location
    gradients = [_gradient(argument, cotangents, emit) for argument in arguments]
    new_return = func.ReturnOp(*returned.operands, *gradients)
    new_return.location = returned.location
    block.insert_op_before(new_return, returned)
    block.erase_op(returned)
    function.function_type = FunctionType.from_lists(
        [a.type for a in block.args], [v.type for v in new_return.operands]
    )


def _gradient(
    argument: BlockArgument, cotangents: "_Cotangents", emit: Emitter
) -> SSAValue:
    """The argument's cotangent; zeros when no result depends on it."""
    found = cotangents.get(argument)
    return found if found is not None else emit.zeros(g.tensor_type(argument))


def _function(module: ModuleOp, name: str | None) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for candidate in functions:
        if name is None:
            visibility = candidate.sym_visibility
            if (visibility is None or visibility.data == "public") and (
                candidate.body.blocks
            ):
                return candidate
        elif candidate.sym_name.data == name:
            return candidate
    wanted = f"no function @{name}" if name is not None else "no public function"
    known = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise PassFailedException(
        f"autodiff: the module has {wanted} to differentiate (functions: {known})"
    )


def _wrt_arguments(
    function: func.FuncOp, wrt: Sequence[int] | None
) -> list[BlockArgument]:
    """The arguments to differentiate: those ``wrt`` names, checked, or
    every floating-point one."""
    arguments = list(function.body.block.args)
    if wrt is None:
        return [a for a in arguments if is_differentiable(a)]
    chosen = []
    for index in wrt:
        if not 0 <= index < len(arguments):
            raise PassFailedException(
                f"autodiff: wrt={index} is out of range: @{function.sym_name.data} "
                f"takes {len(arguments)} arguments"
            )
        argument = arguments[index]
        if not is_differentiable(argument):
            raise PassFailedException(
                f"autodiff: argument {index} of @{function.sym_name.data} is "
                f"{argument.type}; only floating-point arguments have gradients "
                "(leave it out of wrt, or cast it to a float type)"
            )
        if argument in chosen:
            raise PassFailedException(f"autodiff: wrt names argument {index} twice")
        chosen.append(argument)
    return chosen


def _seed(
    function: func.FuncOp,
    returned: func.ReturnOp,
    loss: int | None,
    seeded: Sequence[bool] | None,
    cotangents: "_Cotangents",
    emit: Emitter,
) -> None:
    """The cotangents of the results: 1 for the ``loss`` result, or a new
    argument per floating-point result (per ``seeded`` one, when given)."""
    results = list(returned.operands)
    name = function.sym_name.data
    if loss is None:
        block = function.body.block
        flags = seeded if seeded is not None else [True] * len(results)
        for index, (result, flag) in enumerate(zip(results, flags, strict=True)):
            if flag and is_differentiable(result):
                cotangent = block.insert_arg(result.type, len(block.args))
                cotangent.name_hint = f"cotangent{index}"
                cotangents.add(result, cotangent)
        return
    if not 0 <= loss < len(results):
        raise PassFailedException(
            f"autodiff: loss={loss} is out of range: @{name} returns "
            f"{len(results)} results"
        )
    value = results[loss]
    if not is_differentiable(value) or g.tensor_type(value).rank != 0:
        raise PassFailedException(
            f"autodiff: result {loss} of @{name} is {value.type}; the loss must "
            "be a rank-0 float tensor (differentiate a sum, or leave loss unset "
            "for a vector-Jacobian product)"
        )
    cotangents.add(value, emit.splat(1, g.tensor_type(value)))


def _active_values(
    arguments: Sequence[BlockArgument], ops: Sequence[Operation]
) -> set[SSAValue]:
    """The floating-point values that depend on a differentiated argument
    (``active_results``: a while loop's carries are followed one by one)."""
    active: set[SSAValue] = set(arguments)
    for op in ops:
        active.update(active_results(op, active))
    return active


class _Cotangents:
    """The cotangent of each value so far: a value used several times gets
    the sum of its uses' cotangents."""

    def __init__(self, emit: Emitter) -> None:
        self.emit = emit
        self.values: dict[SSAValue, SSAValue] = {}

    def add(self, value: SSAValue, cotangent: SSAValue) -> None:
        known = self.values.get(value)
        self.values[value] = (
            cotangent if known is None else self.emit.add(known, cotangent)
        )

    def get(self, value: SSAValue) -> SSAValue | None:
        return self.values.get(value)


def _pull_back(
    op: Operation, active: set[SSAValue], cotangents: _Cotangents, emit: Emitter
) -> None:
    """Add the cotangents of ``op``'s operands, from its result's, by its
    rule."""
    if not op.results:
        return  # a guard
    if isinstance(op, g.CONTROL_FLOW_OPS):
        _pull_back_regions(op, active, cotangents, emit)
        return
    cotangent = cotangents.get(op.results[0])
    wanted = [o in active and is_differentiable(o) for o in op.operands]
    if cotangent is None or not any(wanted):
        return
    emit.location = op.location
    chain = SoftmaxMatmul.of(op)
    if chain is not None:
        exponent, value = softmax_matmul_vjp(emit, chain, cotangent, wanted)
        for operand, operand_cotangent in ((chain.exponent, exponent), (op.rhs, value)):
            if operand_cotangent is not None:
                cotangents.add(operand, operand_cotangent)
        return
    rule = vjp_rule(type(op))
    if rule is None:
        raise PassFailedException(
            f"autodiff: no VJP rule for {op_location(op)}; declare one (a "
            "primitive's gradient, or irc.passes.autodiff.rules.VJP_RULES), or "
            "keep the op off the path "
            "from the differentiated arguments to the differentiated results"
        )
    for operand, operand_cotangent in zip(
        op.operands, rule(emit, op, cotangent, wanted), strict=True
    ):
        if operand_cotangent is not None:
            cotangents.add(operand, operand_cotangent)


def _pull_back_regions(
    op: Operation, active: set[SSAValue], cotangents: _Cotangents, emit: Emitter
) -> None:
    """``_pull_back`` of a region op: its rule differentiates the results
    that have a cotangent (``irc.passes.autodiff.control_flow``)."""
    results = [cotangents.get(result) for result in op.results]
    flags = [o in active and is_differentiable(o) for o in op.operands]
    if not any(flags) or all(cotangent is None for cotangent in results):
        return
    emit.location = op.location
    operand_cotangents = control_flow_vjp(
        emit,
        op,
        results,
        lambda region, seeded: differentiate(region, seeded=seeded),
        flags,
    )
    for operand, operand_cotangent in zip(op.operands, operand_cotangents, strict=True):
        if operand_cotangent is not None and operand in active:
            cotangents.add(operand, operand_cotangent)
