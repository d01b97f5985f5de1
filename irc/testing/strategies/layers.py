"""The :func:`layer_programs` strategy: one generated body as a stack of
layers.

Each program is a :func:`~irc.testing.strategies.generator.programs` body
computed L times, as a Python loop over layers traces it: each layer has
arguments of its own (its weights), and, stacked, takes the previous
layer's first result as its first argument where the types agree (the
hidden state); every layer's results are returned. The layers compute the
same thing on different tensors, so their kernels are equal up to their
operands: what ``dedupe-kernels`` merges.
"""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region, SSAValue

from irc.dtypes import DType
from irc.testing.strategies.generator import ACTIONS, DTYPES, programs
from irc.testing.strategies.program import _Draw


def layer_programs(
    *,
    layers: tuple[int, int] = (2, 3),
    max_ops: int = 6,
    dtypes: Iterable[DType | str] = DTYPES,
    actions: Iterable[str] = ACTIONS,
) -> st.SearchStrategy[ModuleOp]:
    """Verified modules whose ``@main`` runs one generated body (of up to
    ``max_ops`` steps of ``actions``) as ``layers[0]`` to ``layers[1]``
    layers, stacked or side by side."""
    bodies = programs(max_ops=max_ops, dtypes=dtypes, actions=actions)

    @st.composite
    def draw_program(draw: _Draw) -> ModuleOp:
        body = draw(bodies)
        (main,) = (op for op in body.ops if isinstance(op, func.FuncOp))
        return _as_layers(main, draw(st.integers(*layers)), stacked=draw(st.booleans()))

    return draw_program()


def _as_layers(main: func.FuncOp, count: int, *, stacked: bool) -> ModuleOp:
    """``main``'s body as ``count`` layers, each on arguments of its own;
    ``stacked``: a layer's first argument is the previous layer's first
    result, where their types agree."""
    old = main.body.block
    terminator = old.last_op
    assert isinstance(terminator, func.ReturnOp)
    chains = (
        stacked
        and len(old.args) > 0
        and len(terminator.operands) > 0
        and terminator.operands[0].type == old.args[0].type
    )
    block = Block()
    results: list[SSAValue] = []
    hidden: SSAValue | None = None
    for _ in range(count):
        mapping: dict[SSAValue, SSAValue] = {}
        for index, arg in enumerate(old.args):
            if chains and index == 0 and hidden is not None:
                mapping[arg] = hidden
                continue
            new = block.insert_arg(arg.type, len(block.args))
            new.name_hint = arg.name_hint
            mapping[arg] = new
        for op in old.ops:
            if op is not terminator:
                block.add_op(op.clone(mapping))
        outputs = [mapping.get(v, v) for v in terminator.operands]
        hidden = outputs[0] if outputs else None
        results.extend(outputs)
    block.add_op(func.ReturnOp(*results))
    function_type = ([a.type for a in block.args], [r.type for r in results])
    module = ModuleOp([func.FuncOp("main", function_type, Region(block))])
    module.verify()
    return module
