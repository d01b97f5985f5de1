"""``irc.onnx.export``: irc's graph level written as an ONNX model.

Each graph op becomes one ONNX node or a few (as a primitive's declaration
says, ``OnnxForm.export``, and a function per other op in ``EXPORTERS``); a tensor's
symbolic dims are ``dim_param``s. Where an op needs a shape or an offset
that depends on symbols, the exporter computes it in the model from the
inputs' shapes (``Shape`` of the input that has the symbol, then the
expression's arithmetic), so one model serves every size, as the compiled
program does. ``sym.guard`` ops are facts the launcher checks; ONNX has no
place for them, so they are left out.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from irc.dialects import graph, sym
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError
from irc.onnx import require_onnx
from irc.shapes import SymExpr

#: The opset the exported models import (axes of reductions as inputs).
OPSET = 18

_INT64_MIN = -(2**63)

#: The graph ops (by name, with the kind where only some kinds lack one) that
#: ONNX has no operator or exact composition for, and why: ``export`` refuses
#: them with that reason; ``no_onnx_equivalent`` says which an op is.
NO_ONNX_EQUIVALENT: dict[str, str] = {
    "graph.scan prod": (
        "ONNX has no cumulative product (CumSum is its only scan), and a "
        "composition by logarithms is neither exact nor defined for zeros "
        "and negative values"
    ),
}

_COMPARISONS = {
    "eq": "Equal",
    "lt": "Less",
    "le": "LessOrEqual",
    "gt": "Greater",
    "ge": "GreaterOrEqual",
}

_REDUCTIONS = {
    "sum": "ReduceSum",
    "prod": "ReduceProd",
    "max": "ReduceMax",
    "min": "ReduceMin",
}


class _Builder:
    """The nodes and initializers of the model being written, and the ONNX
    name of each SSA value."""

    def __init__(self, onnx: Any, function: FuncOp):
        self.onnx = onnx
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: dict[SSAValue, str] = {}
        self._count = 0
        #: For each symbol, an input that has it as a dim, and the axis.
        self.symbol_sources: dict[str, tuple[str, int]] = {}
        self._symbol_values: dict[str, str] = {}

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def node(self, op_type: str, inputs: Sequence[str], **attributes: Any) -> str:
        output = self.fresh(op_type.lower())
        self.nodes.append(
            self.onnx.helper.make_node(op_type, list(inputs), [output], **attributes)
        )
        return output

    def constant(self, array: np.ndarray, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def kind(self, value: SSAValue) -> str:
        """``"f"``, ``"i"`` or ``"b"``: the element kind of ``value``."""
        return _kind(value)

    def numpy_dtype(self, value: SSAValue) -> np.dtype:
        return _numpy_dtype(graph.tensor_type(value))

    def in_float32(
        self, value: SSAValue, operand: str, compute: Callable[[str], str]
    ) -> str:
        """``compute`` of ``operand``, in float32 for 16-bit floats (which
        onnxruntime's kernels often lack), rounded once, as NumPy computes
        them (and as irc's scans of them accumulate)."""
        numpy_type = self.numpy_dtype(value)
        if _kind(value) != "f" or numpy_type.itemsize >= 4:
            return compute(operand)
        wide = self.node("Cast", [operand], to=self.onnx.TensorProto.FLOAT)
        narrow = self.onnx.helper.np_dtype_to_tensor_dtype(numpy_type)
        return self.node("Cast", [compute(wide)], to=narrow)

    def float_constant(self, value: SSAValue, number: float) -> str:
        """A 0-d constant of ``value``'s float type, at least float32 (the
        type ``in_float32`` computes in)."""
        numpy_type = self.numpy_dtype(value)
        element = numpy_type if numpy_type.itemsize >= 4 else np.dtype(np.float32)
        return self.constant(np.array(number, element), "float")

    def ints(self, values: Sequence[int]) -> str:
        return self.constant(np.array(values, np.int64), "ints")

    def scalar(self, expr: SymExpr) -> str:
        """A 0-d int64 tensor holding ``expr``'s value at run time."""
        if expr.is_constant:
            return self.constant(np.array(int(expr), np.int64), "int")
        return self._emit(ast.parse(expr.to_python(), mode="eval").body)

    def shape(self, dims: Sequence[SymExpr]) -> str:
        """A 1-d int64 tensor holding ``dims`` at run time."""
        if all(d.is_constant for d in dims):
            return self.ints([int(d) for d in dims])
        parts = [self.node("Unsqueeze", [self.scalar(d), self.ints([0])]) for d in dims]
        return self.node("Concat", parts, axis=0)

    def _symbol(self, name: str) -> str:
        if name not in self._symbol_values:
            source, axis = self.symbol_sources[name]
            size = self.node("Shape", [source], start=axis, end=axis + 1)
            self._symbol_values[name] = self.node("Squeeze", [size, self.ints([0])])
        return self._symbol_values[name]

    def _emit(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return self.constant(np.array(int(node.value), np.int64), "int")
        if isinstance(node, ast.Name):
            return self._symbol(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.node("Neg", [self._emit(node.operand)])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            op_type = {"max": "Max", "min": "Min"}[node.func.id]
            return self.node(op_type, [self._emit(a) for a in node.args])
        assert isinstance(node, ast.BinOp), ast.dump(node)
        lhs, rhs = self._emit(node.left), self._emit(node.right)
        if isinstance(node.op, ast.FloorDiv):
            # Python's floor division: ONNX's Div truncates, Mod(fmod=0) floors.
            remainder = self.node("Mod", [lhs, rhs])
            return self.node("Div", [self.node("Sub", [lhs, remainder]), rhs])
        op_type = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mul", ast.Mod: "Mod"}
        return self.node(op_type[type(node.op)], [lhs, rhs])


def export(c_or_module: Any, path: str | os.PathLike[str] | None = None) -> Any:
    """Write the graph level of ``c_or_module`` (an ``irc.Compiled``, a
    ``Captured`` or a graph-level ``ModuleOp``) as an ONNX model to ``path``
    (when given); returns the ``onnx.ModelProto``, checked by
    ``onnx.checker``. The inputs are the function's tensor arguments in
    order, the outputs its results, flattened."""
    onnx = require_onnx()
    function = _function(_module(c_or_module))
    builder = _Builder(onnx, function)
    inputs = _inputs(builder, function)
    for op in function.body.block.ops:
        _export_op(builder, op)
    returned = function.body.block.last_op
    assert isinstance(returned, ReturnOp), "verified: a function ends in func.return"
    outputs = []
    for index, value in enumerate(returned.arguments):
        name = f"output_{index}"
        builder.nodes.append(
            onnx.helper.make_node("Identity", [builder.names[value]], [name])
        )
        outputs.append(_value_info(onnx, name, value))
    model_graph = onnx.helper.make_graph(
        builder.nodes, function.sym_name.data, inputs, outputs, builder.initializers
    )
    model = onnx.helper.make_model(
        model_graph,
        opset_imports=[onnx.helper.make_opsetid("", OPSET)],
        producer_name="irc",
    )
    model.ir_version = min(model.ir_version, 10)  # what onnxruntime reads
    onnx.checker.check_model(model, full_check=True)
    if path is not None:
        onnx.save(model, os.fspath(path))
    return model


def _module(c_or_module: Any) -> ModuleOp:
    if isinstance(c_or_module, ModuleOp):
        return c_or_module
    module = getattr(c_or_module, "module", None)
    if isinstance(module, ModuleOp):
        return module
    raise IrcError(
        f"irc.onnx.export takes an irc.Compiled, a Captured or a graph-level "
        f"ModuleOp, got {type(c_or_module).__name__}"
    )


def _function(module: ModuleOp) -> FuncOp:
    functions = [op for op in module.ops if isinstance(op, FuncOp)]
    if len(functions) != 1:
        raise IrcError(
            f"irc.onnx.export writes a module of one function; this one has "
            f"{len(functions)}"
        )
    return functions[0]


def _inputs(builder: _Builder, function: FuncOp) -> list[Any]:
    inputs = []
    for index, argument in enumerate(function.body.block.args):
        name = argument.name_hint or f"input_{index}"
        builder.names[argument] = name
        inputs.append(_value_info(builder.onnx, name, argument))
        for axis, dim in enumerate(graph.tensor_type(argument).dims):
            symbol = dim.symbol_name
            if symbol is not None:
                builder.symbol_sources.setdefault(symbol, (name, axis))
    return inputs


def _value_info(onnx: Any, name: str, value: SSAValue) -> Any:
    value_type = graph.tensor_type(value)
    dims = [int(d) if d.is_constant else str(d) for d in value_type.dims]
    element = onnx.helper.np_dtype_to_tensor_dtype(_numpy_dtype(value_type))
    return onnx.helper.make_tensor_value_info(name, element, dims)


def _numpy_dtype(value_type: graph.TensorType) -> np.dtype:
    return irc_dtype(value_type.element_type).numpy


def _kind(value: SSAValue) -> str:
    return irc_dtype(graph.tensor_type(value).element_type).kind.replace("u", "i")


# ----- one exporter per op ---------------------------------------------------

Exporter = Callable[[_Builder, Any, list[str]], str]
EXPORTERS: dict[type[Operation], Exporter] = {}


def exports(*op_types: type[Operation]) -> Callable[[Exporter], Exporter]:
    def register(exporter: Exporter) -> Exporter:
        for op_type in op_types:
            EXPORTERS[op_type] = exporter
        return exporter

    return register


def _export_op(builder: _Builder, op: Operation) -> None:
    if isinstance(op, ReturnOp | sym.GuardOp):
        return
    operands = [builder.names[v] for v in op.operands]
    if graph.is_elementwise_op(op):
        builder.names[op.results[0]] = _export_primitive(builder, op, operands)
        return
    refused = no_onnx_equivalent(op)
    if refused is not None:
        raise IrcError(
            f"irc.onnx.export cannot write {refused} (at {op.location}): "
            f"{NO_ONNX_EQUIVALENT[refused]}"
        )
    exporter = EXPORTERS.get(type(op))
    if exporter is None:
        raise IrcError(f"irc.onnx.export cannot write {op.name} ops (at {op.location})")
    builder.names[op.results[0]] = exporter(builder, op, operands)


def _export_primitive(
    builder: _Builder, op: graph.UnaryOp | graph.BinaryOp, operands: list[str]
) -> str:
    """A primitive's op as its declaration exports it (``OnnxForm.export``)."""
    export = op.KIND.onnx.export
    if export is None:
        raise IrcError(
            f"irc.onnx.export cannot write {op.name} (at {op.location}): the "
            f"primitive {op.KIND.name} declares no ONNX form"
        )
    if isinstance(export, str):
        return builder.node(export, operands)
    return export(builder, op, operands)


def no_onnx_equivalent(op: Operation) -> str | None:
    """The key of ``NO_ONNX_EQUIVALENT`` that ``op`` falls under, if any."""
    if isinstance(op, graph.ScanOp):
        key = f"{op.name} {op.kind.data.value}"
        return key if key in NO_ONNX_EQUIVALENT else None
    return op.name if op.name in NO_ONNX_EQUIVALENT else None


@exports(graph.CompareOp)
def _compare(builder: _Builder, op: graph.CompareOp, operands: list[str]) -> str:
    predicate = op.predicate.data.value
    if _kind(op.lhs) == "b" and predicate not in ("eq", "ne"):
        operands = [_bool_as_int(builder, o) for o in operands]  # ONNX orders no bools
    if predicate == "ne":
        return builder.node("Not", [builder.node("Equal", operands)])
    return builder.node(_COMPARISONS[predicate], operands)


def _bool_as_int(builder: _Builder, value: str) -> str:
    return builder.node("Cast", [value], to=builder.onnx.TensorProto.INT32)


@exports(graph.SelectOp)
def _select(builder: _Builder, op: graph.SelectOp, operands: list[str]) -> str:
    if _kind(op.true_value) != "b":
        return builder.node("Where", operands)
    # Bool choices as logic: onnxruntime has no Where on bools.
    condition, on_true, on_false = operands
    chosen = builder.node("And", [condition, on_true])
    otherwise = builder.node("And", [builder.node("Not", [condition]), on_false])
    return builder.node("Or", [chosen, otherwise])


@exports(graph.CastOp)
def _cast(builder: _Builder, op: graph.CastOp, operands: list[str]) -> str:
    target = _numpy_dtype(graph.tensor_type(op.result))
    return builder.node(
        "Cast", operands, to=builder.onnx.helper.np_dtype_to_tensor_dtype(target)
    )


@exports(graph.ConstantOp)
def _constant(builder: _Builder, op: graph.ConstantOp, operands: list[str]) -> str:
    result = graph.tensor_type(op.result)
    literal = op.literal()
    if not op.is_splat:
        return builder.constant(literal)
    if result.static_shape is not None:
        return builder.constant(np.broadcast_to(literal, result.static_shape).copy())
    return builder.node(
        "Expand", [builder.constant(literal), builder.shape(result.dims)]
    )


@exports(graph.IotaOp)
def _iota(builder: _Builder, op: graph.IotaOp, operands: list[str]) -> str:
    result = graph.tensor_type(op.result)
    axis = op.axis.value.data
    zero = builder.constant(np.array(0, np.int64), "int")
    one = builder.constant(np.array(1, np.int64), "int")
    indices = builder.node("Range", [zero, builder.scalar(result.dims[axis]), one])
    trailing = [1] * (result.rank - axis - 1)
    if trailing:
        indices = builder.node("Reshape", [indices, builder.ints([-1, *trailing])])
    expanded = builder.node("Expand", [indices, builder.shape(result.dims)])
    target = builder.onnx.helper.np_dtype_to_tensor_dtype(_numpy_dtype(result))
    return builder.node("Cast", [expanded], to=target)


@exports(graph.DimOp)
def _dim(builder: _Builder, op: graph.DimOp, operands: list[str]) -> str:
    target = _numpy_dtype(graph.tensor_type(op.result))
    value = builder.scalar(op.value.data)
    to = builder.onnx.helper.np_dtype_to_tensor_dtype(target)
    return builder.node("Cast", [value], to=to)


@exports(graph.BroadcastOp)
def _broadcast(builder: _Builder, op: graph.BroadcastOp, operands: list[str]) -> str:
    dims = graph.tensor_type(op.result).dims
    return builder.node("Expand", [operands[0], builder.shape(dims)])


@exports(graph.ReshapeOp)
def _reshape(builder: _Builder, op: graph.ReshapeOp, operands: list[str]) -> str:
    dims = graph.tensor_type(op.result).dims
    # allowzero: a 0 in the target is a size, not "copy the input's dim".
    return builder.node("Reshape", [operands[0], builder.shape(dims)], allowzero=1)


@exports(graph.ReduceOp)
def _reduce(builder: _Builder, op: graph.ReduceOp, operands: list[str]) -> str:
    kind = op.kind.data.value
    if kind not in _REDUCTIONS:
        raise IrcError(f"irc.onnx.export cannot write a {kind} reduction")
    source, result = graph.tensor_type(op.input), graph.tensor_type(op.result)
    axes = list(op.axes.get_values())
    keepdims = int(result.rank == source.rank and bool(axes))
    if not axes:
        return builder.node("Identity", operands)
    if _kind(op.input) != "b":
        return builder.node(
            _REDUCTIONS[kind], [operands[0], builder.ints(axes)], keepdims=keepdims
        )
    # ONNX reduces no bools: as 0/1 integers, whose sum, product, max or min
    # is nonzero exactly when the bool reduction is true.
    numbers = _bool_as_int(builder, operands[0])
    reduced = builder.node(
        _REDUCTIONS[kind], [numbers, builder.ints(axes)], keepdims=keepdims
    )
    return builder.node("Cast", [reduced], to=builder.onnx.TensorProto.BOOL)


@exports(graph.ArgMaxOp)
def _argmax(builder: _Builder, op: graph.ArgMaxOp, operands: list[str]) -> str:
    source, result = graph.tensor_type(op.input), graph.tensor_type(op.result)
    keepdims = int(result.rank == source.rank)
    data = _bool_as_int(builder, operands[0]) if _kind(op.input) == "b" else operands[0]
    return builder.node("ArgMax", [data], axis=op.axis.value.data, keepdims=keepdims)


@exports(graph.TransposeOp)
def _transpose(builder: _Builder, op: graph.TransposeOp, operands: list[str]) -> str:
    if not op.perm:  # a rank-0 transpose: ONNX cannot type an empty perm
        return builder.node("Identity", operands)
    return builder.node("Transpose", operands, perm=list(op.perm))


@exports(graph.SliceOp)
def _slice(builder: _Builder, op: graph.SliceOp, operands: list[str]) -> str:
    # Walking backwards past index 0 ends before the front, which ONNX spells
    # INT64_MIN (a negative end counts from the back). Where the facts in
    # scope cannot tell whether a backward end passes the front, the axis is
    # reversed first (a static Slice) and sliced forwards.
    facts = sym.facts_in_scope(op)
    source = operands[0]
    extents = graph.tensor_type(op.input).dims
    sizes = graph.tensor_type(op.result).dims
    starts, ends, steps, reversed_axes = [], [], [], []
    for axis, (offset, size, stride) in enumerate(
        zip(op.offset_list, sizes, op.stride_list)
    ):
        start, end, step = offset, _end(facts, offset, size, stride), stride
        if stride < 0 and facts.prove_lt(end, 0):
            end = SymExpr.const(_INT64_MIN)
        elif stride < 0 and not facts.prove_le(0, end):
            reversed_axes.append(axis)
            start, step = extents[axis] - 1 - offset, -stride
            end = _end(facts, start, size, step)
        starts.append(start)
        ends.append(end)
        steps.append(step)
    if reversed_axes:
        count = len(reversed_axes)
        source = builder.node(
            "Slice",
            [
                source,
                builder.ints([-1] * count),
                builder.ints([_INT64_MIN] * count),
                builder.ints(reversed_axes),
                builder.ints([-1] * count),
            ],
        )
    axes = builder.ints(list(range(len(sizes))))
    return builder.node(
        "Slice",
        [source, builder.shape(starts), builder.shape(ends), axes, builder.ints(steps)],
    )


def _end(facts: Any, offset: SymExpr, size: SymExpr, stride: int) -> SymExpr:
    """Just past the last index read, so that the bound stays within the
    axis (an importer need not clamp it), unless the slice may be empty."""
    if not facts.prove_le(1, size):
        return offset + size * stride
    return offset + (size - 1) * stride + (1 if stride > 0 else -1)


@exports(graph.ConcatOp)
def _concat(builder: _Builder, op: graph.ConcatOp, operands: list[str]) -> str:
    return builder.node("Concat", operands, axis=op.axis.value.data)


@exports(graph.MatmulOp)
def _matmul(builder: _Builder, op: graph.MatmulOp, operands: list[str]) -> str:
    return builder.node("MatMul", operands)


@exports(graph.TakeOp)
def _take(builder: _Builder, op: graph.TakeOp, operands: list[str]) -> str:
    return builder.node("Gather", operands, axis=op.axis.value.data)


# ----- scans, scatters and window writes -------------------------------------


@exports(graph.ScanOp)
def _scan(builder: _Builder, op: graph.ScanOp, operands: list[str]) -> str:
    # Only sums reach here (NO_ONNX_EQUIVALENT refuses the others).
    axis = builder.constant(np.array(op.axis_index, np.int64), "axis")
    return builder.in_float32(
        op.input, operands[0], lambda x: builder.node("CumSum", [x, axis])
    )


@exports(graph.ScatterAddOp)
def _scatter_add(builder: _Builder, op: graph.ScatterAddOp, operands: list[str]) -> str:
    # ScatterElements(reduction="add") into zeros of the result's shape (duplicate
    # indices accumulate, as np.add.at), with
    # the indices laid along the axis and expanded to the updates' shape.
    indices_type = graph.tensor_type(op.indices)
    if indices_type.rank != 1:
        raise IrcError(
            f"irc.onnx.export cannot write graph.scatter_add with indices of "
            f"rank {indices_type.rank} (at {op.location}): it writes 1-d "
            f"indices, as ScatterElements along the axis"
        )
    updates, indices = operands
    axis = op.axis.value.data
    result = graph.tensor_type(op.result)
    indices = builder.node("Cast", [indices], to=builder.onnx.TensorProto.INT64)
    trailing = [1] * (result.rank - axis - 1)
    if trailing:
        indices = builder.node("Reshape", [indices, builder.ints([-1, *trailing])])
    updates_dims = graph.tensor_type(op.updates).dims
    indices = builder.node("Expand", [indices, builder.shape(updates_dims)])
    # An expanded 0-d zero, not ConstantOfShape, which opset 18 has on no
    # bfloat16.
    zero = builder.constant(np.zeros((), _numpy_dtype(result)), "zero")
    zeros = builder.node("Expand", [zero, builder.shape(result.dims)])
    return builder.node(
        "ScatterElements", [zeros, indices, updates], axis=axis, reduction="add"
    )


@exports(graph.InsertSliceOp)
def _insert_slice(
    builder: _Builder, op: graph.InsertSliceOp, operands: list[str]
) -> str:
    # ScatterND of the source into the destination at the window's indices:
    # along axis i, offset + k * stride for k in [0, size), broadcast to the
    # source's shape and stacked on a last axis. A window's indices are
    # distinct, so every element of the source lands once.
    source, dest = operands
    sizes = graph.tensor_type(op.source).dims
    rank = len(sizes)
    if rank == 0:
        return builder.node("Identity", [source])
    if any(size.is_constant and int(size) == 0 for size in sizes):
        # An empty window writes nothing (and onnxruntime's shape inference
        # mistypes an Expand of a 1 to a static 0).
        return builder.node("Identity", [dest])
    shape = builder.shape(sizes)
    columns = []
    for axis, (offset, size, stride) in enumerate(
        zip(op.offset_list, sizes, op.stride_list)
    ):
        start = builder.scalar(offset)
        limit = builder.scalar(offset + size * stride)
        step = builder.constant(np.array(stride, np.int64), "int")
        column = builder.node("Range", [start, limit, step])
        trailing = [1] * (rank - axis - 1)
        if trailing:
            column = builder.node("Reshape", [column, builder.ints([-1, *trailing])])
        column = builder.node("Expand", [column, shape])
        columns.append(builder.node("Unsqueeze", [column, builder.ints([-1])]))
    indices = columns[0] if rank == 1 else builder.node("Concat", columns, axis=-1)
    return builder.node("ScatterND", [dest, indices, source])
