"""One compilation's record: what the driver (``irc.driver``) made from a
captured function, which the compile cache, saved artefacts, pictures and
logs read.

A record holds the captured function, the pipeline it was compiled with, the
module at every level reached and the emitted module; a record restored from
the compile cache or a saved artefact holds the same as text
(``StoredLevels``), parsed when a level's module is first asked for.
``Listener`` is what the driver tells as it fills a record.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irc.analysis.launches import Launches, count_launches
from irc.capture import Captured
from irc.errors import IrcError
from irc.ir import parse_module, print_module
from irc.lowering.pipeline import LEVEL_NAMES, Pipeline


@dataclass
class StoredLevels:
    """A compilation's IR at every level and its emitted module, as text:
    what a compile cache entry (or a saved artefact) restores. A level's
    module is parsed only when it is first asked for (parsing every level
    costs more than lowering a small program)."""

    #: Per level, highest first: ``(text, text with locations)``.
    texts: dict[str, tuple[str, str]]
    source: str
    launches: Launches

    def __post_init__(self) -> None:
        self._modules: dict[str, ModuleOp] = {}

    def text(self, level: str, *, locations: bool) -> str:
        plain, located = self.texts[level]
        return located if locations else plain

    def module(self, level: str) -> ModuleOp:
        """The module at ``level``, parsed from its text with locations
        (``ir`` prints it back to the same text)."""
        module = self._modules.get(level)
        if module is None:
            module = parse_module(self.texts[level][1], name=f"<{level} IR>")
            self._modules[level] = module
        return module

    @staticmethod
    def of(
        modules: Mapping[str, ModuleOp], source: str, launches: Launches
    ) -> StoredLevels:
        texts = {
            level: (print_module(m), print_module(m, locations=True))
            for level, m in modules.items()
        }
        return StoredLevels(texts, source, launches)

    def to_json(self) -> dict[str, Any]:
        return {
            "levels": [[level, *pair] for level, pair in self.texts.items()],
            "source": self.source,
            "launches": self.launches.to_json(),
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> StoredLevels:
        texts = {level: (plain, located) for level, plain, located in data["levels"]}
        return StoredLevels(
            texts, data["source"], Launches.from_json(data["launches"])
        )


@dataclass(eq=False)
class Compilation:
    """What one compilation made so far. The driver fills ``modules`` level
    by level and ``source`` when it emits; a restored record has them all
    in ``stored``."""

    captured: Captured
    #: The pipeline compiled with; None for a saved artefact, which does
    #: not record it.
    pipeline: Pipeline | None
    #: The module at each level this process lowered to, highest first.
    modules: dict[str, ModuleOp] = field(default_factory=dict)
    #: Every level and the emitted module, when restored.
    stored: StoredLevels | None = None
    #: The emitted module, once emitted (or restored).
    source: str | None = None

    @property
    def function_name(self) -> str:
        return self.captured.function_name

    @property
    def restored(self) -> bool:
        return self.stored is not None

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels reached, highest first."""
        present = self.modules if self.stored is None else self.stored.texts
        return tuple(level for level in LEVEL_NAMES if level in present)

    def module(self, level: str) -> ModuleOp:
        """The module at ``level``; an ``IrcError`` for a level not reached."""
        if level in self.modules:
            return self.modules[level]
        if self.stored is not None and level in self.stored.texts:
            return self.stored.module(level)
        known = ", ".join(repr(k) for k in self.levels)
        raise IrcError(f"no IR at level {level!r}; available levels: {known}")

    def ir(self, level: str, *, locations: bool = False) -> str:
        if self.stored is not None and level in self.stored.texts:
            return self.stored.text(level, locations=locations)
        return print_module(self.module(level), locations=locations)

    @functools.cached_property
    def launches(self) -> Launches:
        """The kernel launches per call, counted from the triton level's
        host schedule (which must be reached)."""
        if self.stored is not None:
            return self.stored.launches
        return count_launches(self.module("triton"), self.function_name)

    @property
    def num_kernels(self) -> int:
        """The kernel launches per call, when every call makes as many
        (``Launches.count``)."""
        return self.launches.count(self.function_name)

    @functools.cached_property
    def input_names(self) -> list[str]:
        """The names of the tensor inputs, in order (static leaves left out)."""
        captured = self.captured
        return [
            name
            for index, name in enumerate(captured.leaf_names)
            if index not in captured.static_leaves
        ]


class Listener:
    """What a driver tells as it fills a record, as xDSL's ``PassPipeline``
    calls its callback between passes; each method does nothing unless a
    listener (the logs, the compile cache) overrides it."""

    def pass_ran(
        self, compilation: Compilation, applied: ModulePass, seconds: float
    ) -> None:
        """``applied`` ran on the compilation's working module."""

    def restored(self, compilation: Compilation) -> None:
        """The record was restored whole (from the compile cache, or from a
        saved artefact when it has no pipeline): no pass runs for it."""

    def levels_reached(self, compilation: Compilation, levels: Sequence[str]) -> None:
        """``compilation.modules`` (or its stored texts) now hold ``levels``,
        also when a lowering failed below them."""

    def source_emitted(self, compilation: Compilation) -> None:
        """``compilation.source`` is set: every level is reached."""
