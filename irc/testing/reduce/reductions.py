"""The ways the reducer makes a module smaller, each over a list of sites.

A :class:`Reduction` names its *sites* in a module (an op to erase, a
function result to drop, ...) and applies itself to any subset of them, so
that the reducer can try chunks of sites at once, ddmin-style, as
``llvm-reduce``'s delta passes do. A site is the index of an op in the
module's pre-order walk (with an operand or argument number where the
reduction needs one): the reducer lists sites on the current module and
applies a chunk of them to a clone, whose walk visits the same ops in the
same order.

A reduction only rewrites; whether the result is still valid IR is the
verifier's call, made by the reducer on every candidate, so a reduction may
leave a module invalid (a kernel that now reads a value from outside, a
call to a function whose signature changed) and the candidate is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsolatedFromAbove, IsTerminator

#: An op by its index in the module's walk, with a number where the
#: reduction needs one (an operand or argument position), else 0.
Site = tuple[int, int]


@dataclass(frozen=True)
class Reduction:
    """One kind of step: its name (for logs), where it applies in a module,
    and how it rewrites a chosen subset of those sites in place."""

    name: str
    sites: Callable[[ModuleOp], list[Site]]
    apply: Callable[[ModuleOp, Sequence[Site]], None]


def count_ops(module: ModuleOp) -> int:
    """The size the reducer minimises: the ops inside functions (returns
    and the ops of nested regions included), not the module and functions."""
    return sum(not isinstance(op, ModuleOp | func.FuncOp) for op in module.walk())


def _ops(module: ModuleOp) -> list[Operation]:
    return list(module.walk())


def _is_body_op(op: Operation) -> bool:
    """An op a reduction may remove: not the module, a function or a
    terminator (which the block's structure needs)."""
    return not (isinstance(op, ModuleOp | func.FuncOp) or op.has_trait(IsTerminator))


def _unused(op: Operation) -> bool:
    return all(not result.uses for result in op.results)


def _chosen(module: ModuleOp, sites: Sequence[Site]) -> list[tuple[Operation, int]]:
    """The sites' ops with their numbers, last in walk order first, so that
    users go before their producers and nested ops before their parents."""
    ops = _ops(module)
    return [(ops[index], number) for index, number in sorted(sites, reverse=True)]


# Erase ops whose results are unused -----------------------------------------


def _unused_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, 0)
        for index, op in enumerate(_ops(module))
        if _is_body_op(op) and _unused(op)
    ]


def _erase_unused(module: ModuleOp, sites: Sequence[Site]) -> None:
    for op, _ in _chosen(module, sites):
        if _unused(op):  # a chosen user may have kept it alive
            Rewriter.erase_op(op)


ERASE_UNUSED = Reduction("erase-unused", _unused_sites, _erase_unused)
"""Erase ops nothing reads (a dead region op with its whole body)."""


# Replace an op by its operands ------------------------------------------------


def _passthrough_operands(op: Operation) -> list[SSAValue] | None:
    """For each result, the first operand of its type: the values that can
    stand for the results (``exp(x)`` becomes ``x``, a loop its initial
    values); None when a result has none."""
    stand_ins = [
        next((v for v in op.operands if v.type == result.type), None)
        for result in op.results
    ]
    if not stand_ins or None in stand_ins:
        return None
    return [v for v in stand_ins if v is not None]


def _operand_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, 0)
        for index, op in enumerate(_ops(module))
        if _is_body_op(op) and not _unused(op) and _passthrough_operands(op)
    ]


def _bypass(module: ModuleOp, sites: Sequence[Site]) -> None:
    for op, _ in _chosen(module, sites):
        operands = _passthrough_operands(op)
        if operands is not None:
            for result, operand in zip(op.results, operands, strict=True):
                result.replace_all_uses_with(operand)
            Rewriter.erase_op(op)


BYPASS = Reduction("replace-by-operand", _operand_sites, _bypass)
"""Replace an op's results by its operands of the same types: the op goes
and its operands' producers stay connected."""


# Replace an op's results by function arguments ------------------------------


def _isolating_parent(op: Operation) -> Operation | None:
    """The nearest enclosing op whose regions see nothing from outside
    (a function, a kernel)."""
    parent = op.parent_op()
    while parent is not None and not parent.has_trait(IsolatedFromAbove):
        parent = parent.parent_op()
    return parent


def _stand_in(value: SSAValue, op: Operation) -> SSAValue | None:
    """A value to take ``value``'s place, defined above ``op``: a new
    argument of the enclosing function, or, inside a kernel (which sees
    nothing from the function), the first argument of the kernel's body of
    the same type."""
    parent = _isolating_parent(op)
    if isinstance(parent, func.FuncOp) and not parent.is_declaration:
        body = parent.body.block
        argument = body.insert_arg(value.type, len(body.args))
        argument.name_hint = value.name_hint
        parent.update_function_type()
        return argument
    if parent is None or not parent.regions or not parent.regions[0].blocks:
        return None
    entry = parent.regions[0].blocks[0]
    return next((a for a in entry.args if a.type == value.type), None)


def _argument_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, 0)
        for index, op in enumerate(_ops(module))
        if _is_body_op(op) and not _unused(op)
    ]


def _cut(module: ModuleOp, sites: Sequence[Site]) -> None:
    for op, _ in _chosen(module, sites):
        for result in op.results:
            if result.uses and (stand_in := _stand_in(result, op)) is not None:
                result.replace_all_uses_with(stand_in)
        if _unused(op):
            Rewriter.erase_op(op)


CUT = Reduction("replace-by-argument", _argument_sites, _cut)
"""Replace an op's results by new function arguments and erase it, which
cuts its producers off (they become unused and go next)."""


# Drop function results --------------------------------------------------------


def _functions(module: ModuleOp) -> list[tuple[int, func.FuncOp]]:
    return [
        (index, op)
        for index, op in enumerate(_ops(module))
        if isinstance(op, func.FuncOp) and not op.is_declaration
    ]


def _result_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, number)
        for index, function in _functions(module)
        if (returned := function.get_return_op()) is not None
        for number in range(len(returned.operands))
    ]


def _drop_results(module: ModuleOp, sites: Sequence[Site]) -> None:
    ops = _ops(module)
    for index in sorted({index for index, _ in sites}):
        function = ops[index]
        assert isinstance(function, func.FuncOp), "a site of _result_sites"
        returned = function.get_return_op()
        assert returned is not None, "a site of _result_sites"
        dropped = {number for site, number in sites if site == index}
        returned.operands = [
            v for number, v in enumerate(returned.operands) if number not in dropped
        ]
        function.update_function_type()


DROP_RESULTS = Reduction("drop-results", _result_sites, _drop_results)
"""Drop function results: the ops computing them may then go."""


# Remove unused function arguments ---------------------------------------------


def _argument_number_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, argument.index)
        for index, function in _functions(module)
        for argument in function.args
        if not argument.uses
    ]


def _remove_arguments(module: ModuleOp, sites: Sequence[Site]) -> None:
    for function, number in _chosen(module, sites):
        assert isinstance(function, func.FuncOp), "a site of _argument_number_sites"
        function.body.block.erase_arg(function.args[number])
        function.update_function_type()


REMOVE_ARGUMENTS = Reduction(
    "remove-arguments", _argument_number_sites, _remove_arguments
)
"""Remove function arguments nothing reads."""


# Inline region ops ----------------------------------------------------------


def _inlinable_body(op: Operation) -> Block | None:
    """The body of a region op that can be replaced by its body: one region
    of one block whose arguments are the op's operands and whose
    terminator's operands are its results, type for type
    (``fusion.kernel``, ``loop.kernel``)."""
    if not _is_body_op(op) or len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    body = op.regions[0].blocks[0]
    terminator = body.last_op
    if terminator is None or not terminator.has_trait(IsTerminator):
        return None
    if [a.type for a in body.args] != list(op.operand_types) or list(
        terminator.operand_types
    ) != list(op.result_types):
        return None
    return body


def _region_sites(module: ModuleOp) -> list[Site]:
    return [
        (index, 0)
        for index, op in enumerate(_ops(module))
        if _inlinable_body(op) is not None
    ]


def _inline(module: ModuleOp, sites: Sequence[Site]) -> None:
    # First in walk order first: an outer op's body moves out whole, and
    # the inner ops it holds stay the same objects.
    ops = _ops(module)
    for index, _ in sorted(sites):
        op = ops[index]
        body = _inlinable_body(op)
        if body is None:
            continue
        terminator = body.last_op
        assert terminator is not None, "checked by _inlinable_body"
        for result, value in zip(op.results, terminator.operands, strict=True):
            result.replace_all_uses_with(value)
        Rewriter.erase_op(terminator)
        Rewriter.inline_block(body, InsertPoint.before(op), op.operands)
        Rewriter.erase_op(op)


INLINE = Reduction("inline-region-ops", _region_sites, _inline)
"""Replace a region op (a kernel) by the ops of its body."""


#: Every reduction, in the order a round of the reducer tries them: the
#: cheap, large cuts first.
REDUCTIONS: tuple[Reduction, ...] = (
    ERASE_UNUSED,
    DROP_RESULTS,
    INLINE,
    CUT,
    BYPASS,
    REMOVE_ARGUMENTS,
)
