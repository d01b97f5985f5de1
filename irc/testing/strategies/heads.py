"""The :func:`head_programs` strategy: one generated body run on H heads.

Each program is a :func:`~irc.testing.strategies.generator.programs` body
computed H times, once per side-by-side window of its first argument (whose
dim along one axis grows H-fold, or which gains a leading axis of H, read
as ``x[h]``), as a Python loop over heads traces it; its
other arguments are shared by the heads. Each result of the body is either
the heads' results concatenated along one axis (``np.hstack`` of heads) or
returned head by head. This is what ``horizontal-fusion`` batches; bodies
holding ops it has no rule for exercise its refusals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue

from irc.dialects import graph as g
from irc.dtypes import DType
from irc.testing.strategies.generator import ACTIONS, DTYPES, programs
from irc.testing.strategies.program import _Draw


def head_programs(
    *,
    heads: tuple[int, int] = (2, 4),
    max_ops: int = 6,
    dtypes: Iterable[DType | str] = DTYPES,
    actions: Iterable[str] = ACTIONS,
    smooth: bool = False,
) -> st.SearchStrategy[ModuleOp]:
    """Verified modules whose ``@main`` runs one generated body (of up to
    ``max_ops`` steps of ``actions``) on ``heads[0]`` to ``heads[1]``
    windows of its first argument, joining or returning the heads'
    results."""
    bodies = programs(max_ops=max_ops, dtypes=dtypes, actions=actions, smooth=smooth)

    @st.composite
    def draw_program(draw: _Draw) -> ModuleOp:
        body = draw(bodies)
        count = draw(st.integers(*heads))
        (main,) = (op for op in body.ops if isinstance(op, func.FuncOp))
        axes = _widening_axes(main.body.block)
        axis = draw(st.sampled_from(axes)) if axes and draw(st.booleans()) else None
        joins = draw(st.lists(st.booleans(), min_size=1, max_size=3))
        return _on_heads(main, count, axis, joins)

    return draw_program()


def _widening_axes(block: Block) -> list[int]:
    """The axes of the first argument that can grow H-fold: those of static
    extent, and those whose symbol another argument dim still carries alone
    (the launcher reads symbols off the argument shapes)."""
    first = g.tensor_type(block.args[0])
    axes = []
    for axis, dim in enumerate(first.dims):
        others = [d for i, d in enumerate(first.dims) if i != axis]
        others += [d for a in block.args[1:] for d in g.tensor_type(a).dims]
        if dim.constant is not None or (dim.symbol_name and dim in others):
            axes.append(axis)
    return axes


def _on_heads(
    main: func.FuncOp, heads: int, axis: int | None, joins: Sequence[bool]
) -> ModuleOp:
    """``main``'s body on ``heads`` windows along ``axis`` of its first
    argument (``None``: on the heads of a new leading axis, ``x[h]``);
    result i joined along its first axis when ``joins[i % len]`` (and it
    has one)."""
    old = main.body.block
    first = g.tensor_type(old.args[0])
    dims = list(first.dims)
    if axis is None:
        wide = [heads, *dims]
    else:
        wide = [*dims[:axis], dims[axis] * heads, *dims[axis + 1 :]]
    block = Block(arg_types=[first.with_shape(wide), *(a.type for a in old.args[1:])])
    for new, arg in zip(block.args, old.args):
        new.name_hint = arg.name_hint
    per_head: list[list[SSAValue]] = []
    terminator = old.last_op
    assert isinstance(terminator, func.ReturnOp)
    for head in range(heads):
        window = _window(block, head, axis, dims)
        mapping: dict[SSAValue, SSAValue] = {old.args[0]: window}
        mapping |= dict(zip(old.args[1:], block.args[1:]))
        for op in old.ops:
            if op is not terminator:
                block.add_op(op.clone(mapping))
        per_head.append([mapping.get(v, v) for v in terminator.operands])
    results: list[SSAValue] = []
    for index, copies in enumerate(zip(*per_head)):
        if joins[index % len(joins)] and g.tensor_type(copies[0]).rank:
            join = g.ConcatOp(copies, 0)
            block.add_op(join)
            results.append(join.result)
        else:
            results.extend(copies)
    block.add_op(func.ReturnOp(*results))
    function_type = ([a.type for a in block.args], [r.type for r in results])
    module = ModuleOp([func.FuncOp("main", function_type, Region(block))])
    module.verify()
    return module


def _window(block: Block, head: int, axis: int | None, dims: list[Any]) -> SSAValue:
    """Head ``head``'s window of the block's first argument."""
    wide = block.args[0]
    if axis is None:
        ones = [1] * (len(dims) + 1)
        window = g.SliceOp(wide, [head, *([0] * len(dims))], [1, *dims], ones)
        row = g.ReshapeOp(window, dims)
        block.add_ops([window, row])
        return row.result
    offsets = [0] * len(dims)
    offsets[axis] = dims[axis] * head
    window = g.SliceOp(wide, offsets, dims, [1] * len(dims))
    block.add_op(window)
    return window.result
