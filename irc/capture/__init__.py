"""Capture: tracing an ordinary NumPy-style Python function into graph IR.

The function is called once with proxy arrays (``Tensor``) in place of its
array arguments; every NumPy operation on them appends a graph op to a
``func.func``. Non-array arguments are static: they are baked into the IR.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    FileLineColLoc,
    IntAttr,
    LocationAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from irc import pytree
from irc.capture import (  # noqa: F401 (registers)
    intercept,
    math_functions,
    numpy_api,
    sorting,
)
from irc.capture.ops import dense_constant
from irc.capture.specs import TensorSpec
from irc.capture.tensor import SymDim, Tensor
from irc.capture.trace import Trace, innermost_user_frame, locate, tracing
from irc.capture.views import written_arguments
from irc.capture.writes import MaskRead
from irc.dialects import graph, sym
from irc.errors import ConstantArrayWarning, IrcError, TracingError
from irc.runtime.arrays import is_torch_tensor
from irc.shapes import Facts, ShapeError, parse_expr

__all__ = ["NO_RESULT", "Captured", "TensorSpec", "capture", "parse_fact"]


#: The ``out_tree`` of a function that returns None and writes into its
#: arguments: its call returns None.
NO_RESULT = pytree.TreeDef("tuple", ("none",))


@dataclass
class Captured:
    """A captured function: its graph module and how to call it.

    ``in_tree`` describes ``(args, kwargs)``; its leaves (named by
    ``leaf_names``: ``x``, ``params.attn.w``) are either tensor inputs (in
    ``specs``, in order) or static values (``static_leaves``, by leaf index).
    ``out_tree`` describes the result. ``written_inputs`` are the tensor
    inputs (positions in ``specs``) the function writes into: the function's
    last outputs are their final values, one each, for the caller's arrays.
    """

    module: ModuleOp
    function_name: str
    in_tree: pytree.TreeDef
    specs: list[TensorSpec]
    leaf_names: list[str]
    static_leaves: dict[int, Any]
    out_tree: pytree.TreeDef
    facts: Facts
    written_inputs: list[int] = field(default_factory=list)
    #: The function's parameter names, in order (for messages).
    parameters: tuple[str, ...] = ()


_COMPARATORS = ("==", "<=", ">=", "<", ">")


def parse_fact(text: str) -> sym.FactAttr:
    """``"N % 16 == 0"`` or ``"N <= 4096"`` as a fact attribute."""
    for spelling in _COMPARATORS:
        lhs, found, rhs = text.partition(spelling)
        if found:
            try:
                return sym.FactAttr(parse_expr(lhs), spelling, parse_expr(rhs))
            except ShapeError as err:
                raise TracingError(f"cannot parse the fact {text!r}: {err}") from None
    raise TracingError(
        f"cannot parse the fact {text!r}: expected a comparison such as "
        "'N % 16 == 0', 'N <= 4096' or 'N >= 2'"
    )


def register_einops_backend() -> None:
    """Let einops work on traced arrays: einops finds its backends among the
    subclasses of its ``AbstractBackend``, which ``einops_backend`` defines
    and which imports einops, no dependency of irc; so it is imported only
    once the user's code has imported einops."""
    if "einops" in sys.modules:
        importlib.import_module("irc.capture.einops_backend")


def capture(
    function: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    facts: Iterable[str] = (),
) -> Captured:
    """Trace ``function`` called with ``args``/``kwargs``, where tensor inputs
    are ``TensorSpec`` leaves and every other leaf is static."""
    signature_check(function, args, kwargs)
    register_einops_backend()
    call_tree = (list(args), dict(kwargs))
    leaves, in_tree = pytree.flatten(call_tree)
    paths = pytree.leaf_paths(call_tree)
    names = _argument_names(function, paths)
    tensor_leaves = [i for i, leaf in enumerate(leaves) if isinstance(leaf, TensorSpec)]
    _check_constant_arrays(leaves, names)
    specs = [leaves[i] for i in tensor_leaves]
    input_names = [names[i] for i in tensor_leaves]

    block = Block(arg_types=[graph.TensorType(s.dims, s.dtype.ir_type) for s in specs])
    for argument, name in zip(block.args, input_names):
        argument.name_hint = _ssa_name(name)
    fact_texts = [facts] if isinstance(facts, str) else list(facts)
    fact_attrs = [parse_fact(f) for f in fact_texts]
    _check_fact_symbols(fact_texts, fact_attrs, specs)
    trace = Trace(block, Facts())
    with tracing(trace), intercept.creation_functions():
        for fact in fact_attrs:
            trace.assume(fact, "declared fact")
        proxies = dict(zip(tensor_leaves, (Tensor(a) for a in block.args)))
        traced_leaves = [proxies.get(i, leaf) for i, leaf in enumerate(leaves)]
        traced_args, traced_kwargs = pytree.unflatten(in_tree, traced_leaves)
        try:
            result = function(*traced_args, **traced_kwargs)
        except IrcError as err:
            # Errors raised by symbolic arithmetic (``x.shape[0] // 0``) or
            # dtype lookups (``astype(np.int8)``) do not know the user's line.
            raise locate(err, innermost_user_frame(err.__traceback__)) from None
        written = written_arguments(list(proxies.values()))
        if result is None and written:  # an update in place: nothing returned
            outputs, out_tree = [], NO_RESULT
        else:
            outputs, out_tree = pytree.flatten(result)
        output_values = [_as_output(o, i).value for i, o in enumerate(outputs)]
        output_values += [value for _, value in written]
        trace.builder.insert(ReturnOp(*output_values)).location = _definition(function)

    name = _function_name(function)
    func = FuncOp(
        name,
        ([a.type for a in block.args], [v.type for v in output_values]),
        Region(block),
    )
    func.location = _definition(function)
    module = ModuleOp([func])
    try:
        module.verify()
    except VerifyException as err:  # a bug in capture, not in user code
        raise IrcError(f"internal error: captured IR does not verify: {err}") from err
    static_leaves = {
        i: leaf for i, leaf in enumerate(leaves) if not isinstance(leaf, TensorSpec)
    }
    return Captured(
        module,
        name,
        in_tree,
        specs,
        names,
        static_leaves,
        out_tree,
        trace.facts,
        [position for position, _ in written],
        _parameter_names(function),
    )


#: The most elements an array argument compiled in as a constant may have:
#: a larger one would bloat the IR, and every call compares it by value.
MAX_CONSTANT_ELEMENTS = 1 << 20


def _check_constant_arrays(leaves: Sequence[Any], names: Sequence[str]) -> None:
    """Say so when an array stands where a ``TensorSpec`` would make an
    input: it becomes a constant (a warning; an error past
    ``MAX_CONSTANT_ELEMENTS``)."""
    for leaf, name in zip(leaves, names):
        if not (isinstance(leaf, np.ndarray) or is_torch_tensor(leaf)):
            continue
        shape, dtype_name = tuple(leaf.shape), str(leaf.dtype).removeprefix("torch.")
        spec = f"irc.TensorSpec({shape}, {dtype_name!r})"
        if int(np.prod(shape)) > MAX_CONSTANT_ELEMENTS:
            raise TracingError(
                f"argument {name!r} is an array of {int(np.prod(shape)):,} elements, "
                f"not an irc.TensorSpec: it would be compiled in as a constant; pass "
                f"{spec} to make it an input (irc.jit does so for every array)"
            )
        warnings.warn(
            f"argument {name!r} is an array, not an irc.TensorSpec: it is compiled "
            f"in as a constant, and every call must pass an equal array; pass {spec} "
            "to make it an input (irc.jit does so for every array)",
            ConstantArrayWarning,
            stacklevel=4,  # the user's irc.compile/irc.trace call
        )


def _check_fact_symbols(
    texts: Sequence[str], facts: Sequence[sym.FactAttr], specs: Sequence[TensorSpec]
) -> None:
    """Refuse a fact about a symbol that no argument's shape has: it could
    never be checked, and is most likely a misspelt dim."""
    bound = {name for spec in specs for dim in spec.dims for name in dim.symbols}
    for text, attr in zip(texts, facts):
        fact = attr.fact
        unbound = (fact.lhs.symbols | fact.rhs.symbols) - bound
        if unbound:
            names = ", ".join(sorted(unbound))
            known = ", ".join(sorted(bound)) or "none: every dim is static"
            raise TracingError(
                f"the fact {text!r} names {names}, which no argument's shape has "
                f"(the symbols are: {known}); name a dim of an argument {names} "
                "or drop the fact"
            )


def signature_check(
    function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> None:
    """Refuse calls that do not fit the function's parameters, before tracing."""
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as err:
        raise TracingError(
            f"the arguments do not fit {_function_name(function)}(): {err}"
        ) from None
    except ValueError:
        pass  # no signature available (builtins): let the call decide


def _parameter_names(function: Callable[..., Any]) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # no signature available (builtins)
        return ()


def _argument_names(function: Callable[..., Any], paths: list[str]) -> list[str]:
    """Leaf paths with positional indices replaced by parameter names."""
    parameters = _parameter_names(function)
    names = []
    for path in paths:
        group, _, rest = path.partition(".")
        position, _, tail = rest.partition(".")
        if group == "0" and position.isdigit() and int(position) < len(parameters):
            head = parameters[int(position)]
        else:
            head = position
        names.append(f"{head}.{tail}" if tail else head)
    return names


def _ssa_name(path: str) -> str:
    """A valid SSA name hint from a leaf path: ``params.attn.w`` -> ``params_attn_w``."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", path)
    return name if name and not name[0].isdigit() else f"arg_{name}"


def _function_name(function: Callable[..., Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", getattr(function, "__name__", "main"))
    return name if name and not name[0].isdigit() else f"f_{name}"


def _definition(function: Callable[..., Any]) -> LocationAttr:
    """Where ``function`` is defined, for the ops that belong to it as a whole."""
    code = getattr(function, "__code__", None)
    if code is None:
        return UnknownLoc()
    return FileLineColLoc(
        StringAttr(code.co_filename), IntAttr(code.co_firstlineno), IntAttr(1)
    )


def _as_output(value: Any, index: int) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray | np.generic | bool | int | float):
        return dense_constant(np.asarray(value))
    if isinstance(value, SymDim):
        return numpy_api.layout.as_tensor(np.add(value, 0))
    if isinstance(value, MaskRead):
        raise value.escaped(f"returned (output {index})")
    raise TracingError(
        f"output {index} of the traced function is a {type(value).__name__}; a "
        "function must return arrays (or nested dicts, lists and tuples of them)"
    )
