"""An FX graph of ATen ops as a function that irc captures.

``FxFunction(gm, example_inputs)`` is the graph AOTAutograd hands a backend
as a Python function of its tensor inputs: called on arrays it evaluates the
graph node by node with the converters of :mod:`irc.torch.aten` (NumPy
operations), so calling it on NumPy arrays runs the graph eagerly, and
capturing it (``f.compile()``) gives graph IR through the same NumPy surface
that captures user code and ONNX models.

Dynamo's symbolic sizes become irc symbols: each is named after the source
Dynamo records for it (``L['x'].size()[0]`` is ``x_dim0``), a size that is
an expression of them (``2*s0``, a backward graph's ``s0*s1``) is a symbol
of its own with the fact ``x_dim0 == 2*batch``, and ShapeEnv's ranges of
the symbols (``s0 >= 2``) are facts too. The integer inputs a dynamic graph
takes for its sizes are not the compiled function's: they are read from the
tensors' shapes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from irc.api import DEFAULT_PIPELINE, Compiled
from irc.capture import TensorSpec, capture, parse_fact
from irc.capture.names import identifier, unique
from irc.dtypes import dtype as irc_dtype
from irc.errors import IrcError
from irc.shapes import SymExpr, as_expr, smax, smin
from irc.torch.aten import (
    CONVERTERS,
    SYMBOLIC,
    AtenCall,
    UnsupportedAtenOp,
    numpy_dtype,
)


@dataclass(frozen=True)
class _TensorInput:
    index: int  # among the graph's placeholders
    parameter: str
    spec: TensorSpec
    #: A size carrier: an empty ``[s, 0]`` tensor made at each call from
    #: the size input ``index``, so that irc binds the symbol ``s`` from a
    #: shape, as it binds every symbol (a backward graph's ``s0`` that no
    #: tensor has as a dim, only inside ``s0*s1``).
    carrier: bool = False


@dataclass(frozen=True)
class _SizeInput:
    """A placeholder that is a size (a SymInt): read from the tensors."""

    index: int
    expr: Any  # a sympy expression over Dynamo's symbols


def op_name(target: Any) -> str | None:
    """``"aten.add"`` for ``torch.ops.aten.add.Tensor``; None for a
    target that is no ATen or prims operator."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return None
    return schema.name.replace("::", ".")


def describe(target: Any) -> str:
    """A target as a user reads it: ``aten.add.Tensor``, ``operator.mul``."""
    name = op_name(target)
    if name is not None:
        return f"{name}.{target._overloadname}"
    module = getattr(target, "__module__", None) or ""
    return f"{module.replace('_operator', 'operator')}.{getattr(target, '__name__', target)}"


def is_supported(node: Any) -> bool:
    """Whether irc converts the FX ``call_function`` node ``node``: an op
    it has a converter for, on tensors of the dtypes it has."""
    name = op_name(node.target)
    if name is None:
        return node.target in SYMBOLIC
    return name in CONVERTERS and not dtypes_irc_lacks(node)


def dtypes_irc_lacks(node: Any) -> list[str]:
    """The dtypes of ``node``'s tensors (its result's and its inputs') that
    irc does not have (``uint8``, ``complex64``...)."""
    lacking: set[str] = set()
    for value in (node, *node.all_input_nodes):
        for tensor in _tensors(value.meta.get("val")):
            try:
                irc_dtype(tensor.dtype)
            except IrcError:
                lacking.add(str(tensor.dtype).removeprefix("torch."))
    return sorted(lacking)


def _tensors(value: Any) -> list[Any]:
    """The tensors of a node's value: a tensor, a tuple of them, or none."""
    if isinstance(value, list | tuple):
        return [tensor for item in value for tensor in _tensors(item)]
    return [value] if _is_tensor(value) else []


class SymbolNames:
    """Readable irc names for Dynamo's symbols (``s0`` is ``x_dim0``)."""

    def __init__(self, shape_env: Any | None, pinned: Mapping[Any, int] | None = None):
        self.shape_env = shape_env
        self.pinned = dict(pinned or {})
        self._names: dict[Any, str] = {}
        self._taken: set[str] = set()

    def __call__(self, symbol: Any) -> str:
        if symbol not in self._names:
            self._names[symbol] = unique(self._readable(symbol), self._taken)
        return self._names[symbol]

    def _readable(self, symbol: Any) -> str:
        sources = []
        if self.shape_env is not None:
            sources = self.shape_env.var_to_sources.get(symbol, [])
        for source in sources:
            name = source_name(source.name)
            if name is not None:
                return name
        return str(symbol)

    def constant(self, symbol: Any) -> int | None:
        """The value of a symbol pinned to one (see :func:`pinned_sizes`),
        or whose range is one value."""
        if symbol in self.pinned:
            return self.pinned[symbol]
        ranges = {} if self.shape_env is None else self.shape_env.var_to_range
        value_range = ranges.get(symbol)
        if value_range is None or not value_range.lower.is_Integer:
            return None
        low = int(value_range.lower)
        return low if value_range.upper == value_range.lower else None

    def facts(self, symbols: Iterable[Any]) -> list[str]:
        """ShapeEnv's range of each of ``symbols``, as irc facts."""
        found = []
        ranges = {} if self.shape_env is None else self.shape_env.var_to_range
        for symbol in symbols:
            value_range = ranges.get(symbol)
            if value_range is None:
                continue
            name = self(symbol)
            low, high = value_range.lower, value_range.upper
            # torch's infinities (``int_oo``) are no sympy Integers
            if low.is_Integer and int(low) > 0:
                found.append(f"{name} >= {int(low)}")
            if high.is_Integer and int(high) < 2**62:
                found.append(f"{name} <= {int(high)}")
        return found


_SOURCE_KEY = re.compile(r"\['([^']+)'\]|\[(\d+)\]|\.(\w+)(?!\()")
_SIZE = re.compile(r"\.(size|stride)\(\)\[(\d+)\]$")
_NOT_NAMES = {"L", "G", "self", "args", "kwargs", "_modules", "_parameters", "_buffers"}


def source_name(source: str) -> str | None:
    """``x_dim0`` for Dynamo's ``L['x'].size()[0]``, ``n`` for an int
    argument ``L['n']``; None for a source that names nothing."""
    size = _SIZE.search(source)
    end = len(source) if size is None else size.start()
    keys = [
        "".join(part)
        for part in _SOURCE_KEY.findall(source[:end])
        if "".join(part) not in _NOT_NAMES
    ]
    if not keys:
        return None
    base = "_".join(keys)
    if size is None:  # an int argument (``L['logits_to_keep']``)
        return _identifier(base)
    suffix = "dim" if size.group(1) == "size" else "stride"
    return _identifier(f"{base}_{suffix}{size.group(2)}")


def _identifier(text: str) -> str:
    return identifier(text.strip("_"), "v")


class FxFunction:
    """An FX graph of ATen ops as a Python function of its tensor inputs
    (see the module doc)."""

    def __init__(
        self,
        gm: Any,
        example_inputs: Sequence[Any],
        shape_env: Any | None = None,
        name: str = "torch_graph",
        pinned: Mapping[Any, int] | None = None,
    ):
        self.gm = gm
        self.__name__ = name
        self.names = SymbolNames(shape_env, pinned)
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(example_inputs):
            raise IrcError(
                f"the graph has {len(placeholders)} inputs but "
                f"{len(example_inputs)} example inputs were given"
            )
        self.placeholders = placeholders
        #: The node whose conversion raised ``UnsupportedAtenOp``, if any.
        self.failed_node: str | None = None
        self.tensor_inputs: list[_TensorInput] = []
        self.size_inputs: list[_SizeInput] = []
        self.constant_inputs: dict[int, Any] = {}
        expressions: list[Any] = []  # the dims that are expressions of symbols
        taken: set[str] = set()
        for index, (node, example) in enumerate(zip(placeholders, example_inputs)):
            if _is_tensor(example):
                parameter = unique(_identifier(node.name), taken)
                spec = self._spec(example, expressions)
                self.tensor_inputs.append(_TensorInput(index, parameter, spec))
            elif _is_symint(example):
                self.size_inputs.append(_SizeInput(index, example.node.expr))
            else:
                self.constant_inputs[index] = example
        self._carry_unbound_sizes(expressions, taken)
        self.facts = self._facts()
        self._bindings = self._binding_places()
        (output,) = [n for n in gm.graph.nodes if n.op == "output"]
        #: The graph's results: a node whose value is a tensor (captured),
        #: or a size (a sympy expression), or a constant (None, an int).
        returned = output.args[0]
        #: Whether the graph returns a tuple (AOTAutograd's graphs and
        #: islands of several results) or one value (an island of one).
        self.returns_tuple = isinstance(returned, list | tuple)
        self.results = [
            _result(v) for v in (returned if self.returns_tuple else [returned])
        ]
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(i.parameter, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                for i in self.tensor_inputs
            ]
        )
        unsupported = unsupported_ops(gm)
        if unsupported:
            raise UnsupportedAtenOp(
                "irc does not convert "
                + ", ".join(f"{op} ({count}x)" for op, count in unsupported.items())
            )

    def _carry_unbound_sizes(self, expressions: list[Any], taken: set[str]) -> None:
        """A size carrier for each symbol the graph needs that no tensor
        input has as a dim of its own."""
        bound = {
            d for i in self.tensor_inputs for d in i.spec.shape if isinstance(d, str)
        }
        needed: set[Any] = set()
        for item in self.size_inputs:
            needed |= item.expr.free_symbols
        for expr in expressions:
            needed |= expr.free_symbols
        given = {item.expr: item.index for item in self.size_inputs}
        for symbol in sorted(needed, key=str):
            name = self.names(symbol)
            if name in bound or self.names.constant(symbol) is not None:
                continue
            if symbol not in given:
                raise UnsupportedAtenOp(
                    f"the size {symbol} is neither an input tensor's dim nor an "
                    "input of the graph, so irc cannot bind it at a call"
                )
            parameter = unique(f"{name}_size", taken)
            spec = TensorSpec((name, 0), "int32")
            self.tensor_inputs.append(
                _TensorInput(given[symbol], parameter, spec, carrier=True)
            )

    @property
    def specs(self) -> list[TensorSpec]:
        return [i.spec for i in self.tensor_inputs]

    def tensor_arguments(self, inputs: Sequence[Any]) -> list[Any]:
        """The compiled function's arguments for a call of the graph's
        ``inputs``: its tensors, then the size carriers."""
        import torch

        tensors = [inputs[i.index] for i in self.tensor_inputs if not i.carrier]
        device = tensors[0].device if tensors else None
        return tensors + [
            torch.empty((int(inputs[i.index]), 0), dtype=torch.int32, device=device)
            for i in self.tensor_inputs
            if i.carrier
        ]

    def _spec(self, example: Any, expressions: list[Any]) -> TensorSpec:
        dims: list[int | str] = []
        for size in example.shape:
            if not _is_symint(size):
                dims.append(int(size))
                continue
            expr = size.node.expr
            if expr.is_Symbol and (value := self.names.constant(expr)) is not None:
                dims.append(value)
            elif expr.is_Symbol:
                dims.append(self.names(expr))
            elif expr.is_Integer:
                dims.append(int(expr))
            elif (simple := self._simple_dim(expr)) is not None:
                dims.append(simple)  # ``s55 + s70`` with ``s55`` pinned to 0
            else:  # ``s0*s1``: checked at a call, once its symbols are bound
                dims.append(str(self._irc_expr(expr)))
                expressions.append(expr)
        return TensorSpec(dims, irc_dtype(example.dtype))

    def _simple_dim(self, expr: Any) -> int | str | None:
        """An expression that is one symbol or an integer once the pinned
        symbols are substituted: that symbol's name or the integer."""
        if not any(self.names.constant(s) is not None for s in expr.free_symbols):
            return None
        try:
            value = self._irc_expr(expr)
        except UnsupportedAtenOp:
            return None
        if isinstance(value, int):
            return value
        names = {self.names(s) for s in expr.free_symbols}
        return str(value) if str(value) in names else None

    def _facts(self) -> list[str]:
        """ShapeEnv's ranges of the symbols and its guards between them."""
        bound = {
            d for i in self.tensor_inputs for d in i.spec.shape if isinstance(d, str)
        }
        symbols = [s for s in self.names._names if self.names(s) in bound]
        return self.names.facts(symbols) + self._guard_facts(bound)

    def _guard_facts(self, bound: set[str]) -> list[str]:
        """ShapeEnv's guards between sizes, as irc facts: two inputs of a
        loss (logits and labels) have sizes of their own symbols that the
        guards equate, ``s3*s88 == s38*s97``."""
        shape_env = self.names.shape_env
        found: list[str] = []
        for guard in [] if shape_env is None else shape_env.guards:
            expr = guard.expr
            operator_ = getattr(expr, "rel_op", None)
            if operator_ not in ("==", "<", "<=", ">", ">="):
                continue
            if not all(
                self.names.constant(s) is not None or self.names(s) in bound
                for s in expr.free_symbols
            ):
                continue
            try:
                lhs, rhs = self._irc_expr(expr.lhs), self._irc_expr(expr.rhs)
            except UnsupportedAtenOp:
                continue
            if not isinstance(lhs, SymExpr) and not isinstance(rhs, SymExpr):
                continue  # between pinned values: nothing to tell irc
            fact = f"{lhs} {operator_} {rhs}"
            try:
                parse_fact(fact)
            except IrcError:
                continue
            found.append(fact)
        return found

    def _irc_expr(self, expr: Any) -> SymExpr:
        def symbol(s: Any) -> Any:
            value = self.names.constant(s)
            return SymExpr.symbol(self.names(s)) if value is None else value

        return to_sym_expr(expr, symbol)

    def _binding_places(self) -> dict[Any, tuple[int, int]]:
        """Where each symbol is a tensor input's dim: (input, axis)."""
        places: dict[Any, tuple[int, int]] = {}
        by_name = {v: k for k, v in self.names._names.items()}
        for position, item in enumerate(self.tensor_inputs):
            for axis, dim in enumerate(item.spec.shape):
                if isinstance(dim, str) and dim in by_name:
                    places.setdefault(by_name[dim], (position, axis))
        return places

    def size_value(self, expr: Any, tensors: Sequence[Any]) -> Any:
        """A size expression's value read from the tensors' shapes (ints, or
        ``SymDim``s while traced)."""

        def symbol(s: Any) -> Any:
            place = self._bindings.get(s)
            if (value := self.names.constant(s)) is not None:
                return value
            if place is None:
                raise UnsupportedAtenOp(
                    f"the size {s} ({self.names(s)}) is no input tensor's dim, so "
                    "irc cannot bind it at a call"
                )
            position, axis = place
            return tensors[position].shape[axis]

        return to_sym_expr(expr, symbol)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.__signature__.bind(*args, **kwargs)
        tensors = [bound.arguments[i.parameter] for i in self.tensor_inputs]
        env: dict[Any, Any] = {}
        for item, value in zip(self.tensor_inputs, tensors):
            if not item.carrier:
                env[self.placeholders[item.index]] = value
        for item in self.size_inputs:
            env[self.placeholders[item.index]] = self.size_value(item.expr, tensors)
        for index, value in self.constant_inputs.items():
            env[self.placeholders[index]] = value
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                break
            env[node] = self._evaluate(node, env)
        return tuple(env[r.node] for r in self.results if r.node is not None)

    def _laid_out(self, tensor: Any, node: Any, arguments: Sequence[Any]) -> Any:
        """``tensor`` with the strides torch traced for ``node``: the graphs
        after it (AOTAutograd's backward, eager code) were traced with them,
        and ops such as ``as_strided`` read memory by them. irc's results
        are contiguous; a permuted one (a transposed weight, attention's
        heads saved for the backward) is copied into its layout."""
        import torch

        example = node.meta.get("val")
        if not isinstance(example, torch.Tensor):
            return tensor
        if not isinstance(tensor, torch.Tensor):  # a graph without tensor inputs
            tensor = torch.as_tensor(tensor, device=example.device)
        strides = [
            int(self.size_value(s.node.expr, arguments)) if _is_symint(s) else int(s)
            for s in example.stride()
        ]
        if list(tensor.stride()) == strides or tensor.numel() <= 1:
            return tensor
        # a broadcast dim (stride 0) holds one element, expanded
        broadcast = [d for d, s in enumerate(strides) if s == 0]
        compact = tensor
        for dim in broadcast:
            compact = compact.narrow(dim, 0, 1)
        laid_out = torch.empty_strided(
            compact.shape, strides, dtype=tensor.dtype, device=tensor.device
        )
        return laid_out.copy_(compact).expand(tensor.shape)

    def assemble(self, inputs: Sequence[Any], tensors: Sequence[Any]) -> list[Any]:
        """All the graph's results of a call of its ``inputs``: the
        compiled function's ``tensors``, and the sizes and constants, which
        are not computed by kernels."""
        arguments = self.tensor_arguments(inputs)
        computed = iter(tensors)
        results: list[Any] = []
        for result in self.results:
            if result.node is not None:
                results.append(self._laid_out(next(computed), result.node, arguments))
            elif result.size is not None:
                results.append(self.size_value(result.size, arguments))
            else:
                results.append(result.constant)
        return results

    def _evaluate(self, node: Any, env: dict[Any, Any]) -> Any:
        if node.op == "get_attr":
            return _constant(_attribute(self.gm, node.target))
        if node.op != "call_function":
            raise UnsupportedAtenOp(f"FX node {node.name} ({node.op}) is not supported")
        args, kwargs = _load(node.args, env), _load(node.kwargs, env)
        name = op_name(node.target)
        if name is None:
            return SYMBOLIC[node.target](*args, **kwargs)
        call = AtenCall(
            name, node.target._overloadname, tuple(args), kwargs, node.meta.get("val")
        )
        try:
            return CONVERTERS[name](call)
        except UnsupportedAtenOp as error:
            self.failed_node = node.name  # capture re-raises errors anew
            raise UnsupportedAtenOp(
                f"{node.name} = {describe(node.target)}: {error}", node=node.name
            ) from None
        except IrcError as error:
            raise type(error)(
                f"{node.name} = {describe(node.target)}: {error}"
            ) from None

    def compile(
        self,
        pipeline: Any = DEFAULT_PIPELINE,
        facts: Iterable[str] = (),
        mixed_precision: str | None = None,
        debug_nans: bool | None = None,
    ) -> Compiled:
        """``irc.compile`` of the graph; call the result with the tensor
        inputs (``tensor_arguments`` of a call's inputs)."""
        from irc.api import compile as irc_compile

        return irc_compile(
            self,
            *self.specs,
            facts=[*self.facts, *facts],
            pipeline=pipeline,
            mixed_precision=mixed_precision,
            debug_nans=debug_nans,
        )

    def capture(self, facts: Iterable[str] = ()) -> Any:
        return capture(self, tuple(self.specs), {}, [*self.facts, *facts])


@dataclass(frozen=True)
class _Result:
    node: Any = None  # a tensor's node
    size: Any = None  # a sympy expression
    constant: Any = None


def _result(value: Any) -> _Result:
    import torch

    if isinstance(value, torch.fx.Node):
        example = value.meta.get("val")
        if _is_symint(example):
            return _Result(size=example.node.expr)
        return _Result(node=value)
    return _Result(constant=value)


def pinned_sizes(example_inputs: Sequence[Any], shape_env: Any | None) -> list[int]:
    """The integer inputs that are no size: their symbol's range admits
    values below 1, which no irc symbol takes (``logits_to_keep <= 0``).
    A compilation pins them to their values at a call (``FxFunction``'s
    ``pinned``), once per value seen."""
    ranges = {} if shape_env is None else shape_env.var_to_range
    pinned = []
    for index, example in enumerate(example_inputs):
        if not _is_symint(example) or not example.node.expr.is_Symbol:
            continue
        value_range = ranges.get(example.node.expr)
        low = None if value_range is None else value_range.lower
        if low is None or not low.is_Integer or int(low) < 1:
            pinned.append(index)
    return pinned


def unsupported_ops(gm: Any, rejected: Iterable[str] = ()) -> dict[str, int]:
    """The graph's operators that irc does not convert, with their counts
    (the nodes named in ``rejected`` counted among them)."""
    found: dict[str, int] = {}
    rejected = set(rejected)
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if not is_supported(node) or node.name in rejected:
            lacking = dtypes_irc_lacks(node)
            label = describe(node.target) + (
                f" on {', '.join(lacking)}" if lacking else ""
            )
            found[label] = found.get(label, 0) + 1
    return found


def to_sym_expr(expr: Any, symbol: Any) -> Any:
    """A sympy size expression (ShapeEnv's) evaluated with ``symbol`` for
    its symbols: irc ``SymExpr``s, ints or ``SymDim``s alike."""
    import sympy

    if expr.is_Symbol:
        return symbol(expr)
    if expr.is_Integer:
        return int(expr)
    parts = [to_sym_expr(a, symbol) for a in expr.args]
    if isinstance(expr, sympy.Add):
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return total
    if isinstance(expr, sympy.Mul):
        product = parts[0]
        for part in parts[1:]:
            product = product * part
        return product
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        product = parts[0]
        for _ in range(int(expr.exp) - 1):
            product = product * parts[0]
        return product
    if type(expr).__name__ in ("Max", "Min") and len(parts) == 2:
        if all(isinstance(p, int) for p in parts):
            return (max if type(expr).__name__ == "Max" else min)(parts)
        if all(isinstance(p, SymExpr | int) for p in parts):
            extremum = smax if type(expr).__name__ == "Max" else smin
            return extremum(*(as_expr(p) for p in parts))
    if type(expr).__name__ == "FloorDiv":
        return parts[0] // parts[1]
    if type(expr).__name__ in ("Mod", "PythonMod"):
        return parts[0] % parts[1]
    raise UnsupportedAtenOp(f"the size expression {expr} is not supported by irc")


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _is_symint(value: Any) -> bool:
    import torch

    return isinstance(value, torch.SymInt)


def _attribute(gm: Any, target: str) -> Any:
    value = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _constant(value: Any) -> Any:
    """A graph constant (a real tensor) as a NumPy array."""
    if not _is_tensor(value):
        return value
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():  # backends run under Dynamo's fake mode
        array = value.detach().cpu()
        dtype = numpy_dtype(array.dtype)
        if array.dtype.is_floating_point and array.element_size() == 2:
            return array.view(__import__("torch").int16).numpy().view(dtype)
        return array.numpy().astype(dtype, copy=False)


def _load(value: Any, env: Mapping[Any, Any]) -> Any:
    """FX arguments with their nodes replaced by values."""
    import torch

    if isinstance(value, torch.fx.Node):
        return env[value]
    if isinstance(value, list | tuple):
        return type(value)(_load(v, env) for v in value)
    if isinstance(value, dict):
        return {k: _load(v, env) for k, v in value.items()}
    if isinstance(value, torch.dtype):
        return numpy_dtype(value)
    return value
