"""``annotate-sharding``: put a mesh and argument and result shardings on a
program's entry function, for ``propagate-sharding`` and ``partition``.

The options spell them as text (what ``irc.auto_shard`` writes from its
``irc.Mesh`` and ``PartitionSpec``s, and what a pass author types):

- ``mesh="data=2,model=2"``: the mesh's axes and sizes;
- ``arguments="data,;,model"``: one spec per argument, separated by
  ``;``; per dim, the axes splitting it joined by ``+`` (none: whole),
  separated by ``,``; an argument past the list, or an empty spec, is whole;
- ``results="..."``: the same for the results.

``*spec`` (in either) gives every argument or result ``spec``, cut to its
rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from irc.dialects import graph as g
from irc.dialects.collective import (
    MESH_ATTRIBUTE,
    SHARDING_ATTRIBUTE,
    MeshAttr,
    ShardingAttr,
)


def mesh_text(names: tuple[str, ...], sizes: tuple[int, ...]) -> str:
    return ",".join(f"{n}={s}" for n, s in zip(names, sizes, strict=True))


def specs_text(specs: list[tuple[tuple[str, ...], ...]]) -> str:
    return ";".join(",".join("+".join(axes) for axes in spec) for spec in specs)


def _parse_mesh(text: str) -> MeshAttr:
    try:
        pairs = [item.split("=") for item in text.split(",")]
        return MeshAttr([n.strip() for n, _ in pairs], [int(s) for _, s in pairs])
    except ValueError as err:
        raise PassFailedException(
            f"annotate-sharding: mesh={text!r} is not 'axis=size,...' ({err})"
        ) from err


def _parse_specs(text: str) -> list[tuple[tuple[str, ...], ...]]:
    if not text:
        return []
    return [
        tuple(tuple(a for a in dim.split("+") if a) for dim in spec.split(","))
        if spec
        else ()
        for spec in text.split(";")
    ]


def _attrs(
    text: str, types: tuple[Attribute, ...], what: str
) -> ArrayAttr[DictionaryAttr]:
    every = text.startswith("*")
    specs = _parse_specs(text.removeprefix("*"))
    entries = []
    for index, type_ in enumerate(types):
        spec = (
            specs[0] if every and specs else specs[index] if index < len(specs) else ()
        )
        rank = type_.rank if isinstance(type_, g.TensorType) else 0
        if every:
            spec = spec[:rank]
        if len(spec) > rank:
            raise PassFailedException(
                f"annotate-sharding: {what} {index} has rank {rank}, but its spec "
                f"names {len(spec)} dims"
            )
        dims = [*spec, *[()] * (rank - len(spec))]
        entries.append(DictionaryAttr({SHARDING_ATTRIBUTE: ShardingAttr(dims)}))
    return ArrayAttr(entries)


@dataclass(frozen=True)
class AnnotateShardingPass(ModulePass):
    """``annotate-sharding{mesh=... arguments=... results=...}``: the entry
    function (the first) runs over ``mesh``, its arguments and results laid
    out as the specs say."""

    name = "annotate-sharding"

    mesh: str = ""
    arguments: str = ""
    results: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = next((f for f in op.ops if isinstance(f, func.FuncOp)), None)
        if function is None or not self.mesh:
            raise PassFailedException(
                'annotate-sharding needs a function and a mesh="axis=size,..."'
            )
        function.attributes[MESH_ATTRIBUTE] = _parse_mesh(self.mesh)
        inputs = tuple(function.function_type.inputs.data)
        outputs = tuple(function.function_type.outputs.data)
        function.arg_attrs = _attrs(self.arguments, inputs, "argument")
        function.res_attrs = _attrs(self.results, outputs, "result")
