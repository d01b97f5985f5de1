"""``irc.onnx.load``: an ONNX model as a function that irc captures.

The model becomes an ``OnnxFunction``: called on arrays it evaluates the
ONNX graph node by node with NumPy operations (``irc.onnx.converters``), so
calling it on NumPy arrays runs the model eagerly, and capturing it
(``irc.compile(f, *f.specs)``, ``f.compile()``) gives graph IR through the
same NumPy surface that captures user code. Its inputs are the graph's
inputs, then the initializers that are arguments (``f.weights`` holds their
values, in order); ``dim_param``s are irc symbols.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

# The operator families in modules of their own register their converters.
import irc.onnx.attention
import irc.onnx.indexing  # noqa: F401
from irc.api import DEFAULT_PIPELINE, Compiled
from irc.capture import Captured, TensorSpec, capture
from irc.capture.names import identifier, unique
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError
from irc.onnx import require_onnx
from irc.onnx.converters import CONVERTERS, STATIC_OPERANDS, Node, UnsupportedOnnxOp
from irc.onnx.shape_values import ShapeValue, materialize
from irc.shapes import ShapeError, SymExpr, parse_expr

#: What ``load`` does with initializers: arguments of the function (their
#: values in ``weights``), or constants baked into the IR.
InitializerMode = Literal["arguments", "constants"]


@dataclass(frozen=True)
class _Input:
    name: str
    parameter: str
    spec: TensorSpec


class OnnxFunction:
    """An ONNX graph as a Python function of its inputs (see the module doc).

    Integer and bool initializers, and those read where an operator needs a
    value known at compile time (a reshape target, slice bounds, axes), are
    always constants: they describe shapes and indices, not weights.
    """

    def __init__(
        self,
        model: Any,
        initializers: InitializerMode = "arguments",
        constants: Mapping[str, np.ndarray] | None = None,
    ):
        if initializers not in ("arguments", "constants"):
            raise IrcError(
                f"initializers={initializers!r}: expected 'arguments' or 'constants'"
            )
        onnx = require_onnx()
        self.model = model
        graph = model.graph
        self.opset = _default_opset(model)
        self.__name__ = identifier(graph.name or "onnx_model", "model")
        # An operator irc lacks is the first thing to say, before its types.
        for index, node in enumerate(graph.node):
            if node.op_type not in CONVERTERS or node.domain not in ("", "ai.onnx"):
                raise UnsupportedOnnxOp(_unsupported(node, index))
        values = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
        values.update(_bound_inputs(graph, constants or {}))
        static = _static_operand_names(graph)
        as_arguments = [
            name
            for name, value in values.items()
            if initializers == "arguments"
            and value.dtype.kind == "f"
            and value.ndim > 0  # a scalar is an exporter's constant, not a weight
            and name not in static
        ]
        self.constants = {n: v for n, v in values.items() if n not in as_arguments}
        taken: set[str] = set()
        expressions: list[tuple[str, SymExpr]] = []
        self._inputs = [
            _graph_input(value_info, taken, expressions)
            for value_info in graph.input
            if value_info.name not in values
        ] + [_weight_input(name, values[name], taken) for name in as_arguments]
        self.facts = _expression_facts(self._inputs, expressions)
        self.weights = tuple(values[name] for name in as_arguments)
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(i.parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for i in self._inputs
            ]
        )

    @property
    def specs(self) -> list[TensorSpec]:
        """The shape and dtype of each input, in order (weights last)."""
        return [i.spec for i in self._inputs]

    @property
    def input_names(self) -> list[str]:
        """The ONNX names of the inputs, in order."""
        return [i.name for i in self._inputs]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.__signature__.bind(*args, **kwargs)
        env: dict[str, Any] = dict(self.constants)
        for item, parameter in zip(self._inputs, self.__signature__.parameters):
            env[item.name] = bound.arguments[parameter]
        for index, proto in enumerate(self.model.graph.node):
            node = Node(proto, index, self.opset)
            operands = [env[name] if name else None for name in proto.input]
            try:
                results = CONVERTERS[proto.op_type](node, operands)
            except IrcError as err:
                raise type(err)(f"{node.where}: {err}") from None
            env.update(zip(proto.output, results))
        outputs = [_output(env[o.name]) for o in self.model.graph.output]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def capture(self, facts: Iterable[str] = ()) -> Captured:
        """The graph captured with the inputs' specs, under the facts that
        relate expression dims to their symbols and ``facts``."""
        extra = [facts] if isinstance(facts, str) else list(facts)
        return capture(self, self.specs, {}, [*self.facts, *extra])

    @property
    def module(self) -> ModuleOp:
        """The graph-level IR."""
        return self.capture().module

    def compile(
        self,
        pipeline: str | Sequence[ModulePass] = DEFAULT_PIPELINE,
        facts: Iterable[str] = (),
    ) -> Compiled:
        """``irc.compile`` of the graph; call the result with the inputs and
        then ``*self.weights``."""
        return Compiled(self.capture(facts), pipeline)


def load(
    model_or_path: Any,
    *,
    initializers: InitializerMode = "arguments",
    constants: Mapping[str, np.ndarray] | None = None,
) -> OnnxFunction:
    """Read an ONNX model (a ``ModelProto``, its bytes, or a file path).

    ``constants`` binds graph inputs to values known at compile time (they
    leave the function's parameters), as an operator that needs a known
    value (a reshape target, axes) requires when the model reads it from an
    input.
    """
    onnx = require_onnx()
    if isinstance(model_or_path, onnx.ModelProto):
        model = model_or_path
    elif isinstance(model_or_path, str | os.PathLike | bytes):
        model = _read(onnx, model_or_path)
    else:
        raise IrcError(
            f"irc.onnx.load takes an onnx.ModelProto, bytes or a path, got "
            f"{type(model_or_path).__name__}"
        )
    return OnnxFunction(model, initializers, constants)


def _bound_inputs(graph: Any, constants: Mapping[str, np.ndarray]) -> dict[str, Any]:
    names = {value_info.name for value_info in graph.input}
    unknown = sorted(set(constants) - names)
    if unknown:
        raise IrcError(
            f"constants name {', '.join(map(repr, unknown))}, not inputs of the "
            f"graph; its inputs: {', '.join(sorted(names))}"
        )
    return {name: np.asarray(value) for name, value in constants.items()}


def _read(onnx: Any, source: str | os.PathLike[str] | bytes) -> Any:
    from google.protobuf.message import DecodeError

    what = "bytes" if isinstance(source, bytes) else os.fspath(source)
    try:
        if isinstance(source, bytes):
            return onnx.load_from_string(source)
        return onnx.load(os.fspath(source))
    except OSError as err:
        raise IrcError(f"cannot read the ONNX model {what}: {err}") from None
    except DecodeError as err:
        raise IrcError(
            f"the ONNX model {what} does not parse ({err}); is it an .onnx file?"
        ) from None


def _default_opset(model: Any) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 1


def _static_operand_names(graph: Any) -> set[str]:
    """Names read where an operator needs a compile-time value."""
    names = set()
    for node in graph.node:
        for position in STATIC_OPERANDS.get(node.op_type, ()):
            if position < len(node.input) and node.input[position]:
                names.add(node.input[position])
    return names


def _unsupported(node: Any, index: int) -> str:
    domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
    supported = ", ".join(sorted(CONVERTERS))
    return (
        f"node {index} {node.name!r}: the ONNX operator {domain}{node.op_type} is "
        f"not supported by irc; supported operators: {supported}"
    )


def _graph_input(
    value_info: Any, taken: set[str], expressions: list[tuple[str, SymExpr]]
) -> _Input:
    onnx = require_onnx()
    tensor = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type"):
        raise UnsupportedOnnxOp(
            f"graph input {value_info.name!r} is not a tensor; irc imports tensor "
            "inputs only"
        )
    parameter = unique(identifier(value_info.name, "input"), taken)
    if not tensor.HasField("shape"):
        raise IrcError(
            f"graph input {value_info.name!r} has no shape (not even its rank); "
            "give the model input shapes (onnx.tools.update_model_dims)"
        )
    dims: list[int | str] = []
    for axis, dim in enumerate(tensor.shape.dim):
        if dim.HasField("dim_value"):
            dims.append(int(dim.dim_value))
        elif dim.dim_param and (expr := _expression(dim.dim_param)) is not None:
            # An expression (``2*N``, as irc exports one): a symbol of its
            # own, equal to the expression where its symbols are bound.
            dims.append(f"{parameter}_{axis}")
            expressions.append((f"{parameter}_{axis}", expr))
        elif dim.dim_param:
            dims.append(identifier(dim.dim_param, "dim"))
        else:  # unnamed dynamic dim: a symbol of its own
            dims.append(f"{parameter}_{axis}")
    return _Input(value_info.name, parameter, TensorSpec(dims, _dtype(onnx, tensor)))


def _expression(dim_param: str) -> SymExpr | None:
    """A dim_param that reads as a symbolic expression other than a symbol."""
    try:
        expr = parse_expr(dim_param)
    except ShapeError:
        return None
    return None if expr.symbol_name is not None or expr.is_constant else expr


def _expression_facts(
    inputs: list[_Input], expressions: list[tuple[str, SymExpr]]
) -> list[str]:
    """``symbol == expression`` for the expression dims whose symbols some
    input has as a dim of its own (others would be unbound at a call)."""
    bound = {d for i in inputs for d in i.spec.shape if isinstance(d, str)}
    return [
        f"{symbol} == {expr}" for symbol, expr in expressions if expr.symbols <= bound
    ]


def _dtype(onnx: Any, tensor: Any) -> Any:
    try:
        numpy_dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        return irc_dtype(numpy_dtype)
    except (KeyError, IrcError, TypeError):
        name = onnx.TensorProto.DataType.Name(tensor.elem_type)
        raise UnsupportedOnnxOp(
            f"element type {name} is not supported by irc (bool, int32, int64, "
            "float16, bfloat16, float32, float64)"
        ) from None


def _weight_input(name: str, value: np.ndarray, taken: set[str]) -> _Input:
    parameter = unique(identifier(name, "weight"), taken)
    return _Input(name, parameter, TensorSpec(value.shape, value.dtype))


def _output(value: Any) -> Any:
    return materialize(value) if isinstance(value, ShapeValue) else value
