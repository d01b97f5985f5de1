"""What a compilation tells on the way: structured logs and IR dumps, in the
spirit of ``TORCH_LOGS``.

``IRC_LOGS`` (or :func:`set_logs`) chooses the topics, comma-separated:

- a level name (``graph``, ``fusion``, ``loop``, ``memory``, ``triton``): that
  level's IR when a compilation reaches it; ``ir`` is all five;
- ``source``: the emitted Triton module;
- ``passes``: each pass as it runs, with its wall time; a compilation
  restored whole (a compile cache hit, ``irc.load``) says so and what it
  skipped;
- ``kernels``: each kernel ``fuse`` formed (or a restored compilation
  holds): its kind, its ops' lines and why;
- ``guards``: the facts declared and the guards capture could not prove;
- ``cache``: ``irc.jit`` compiling for a new signature or reusing one, and
  the on-disk compile cache's hits, misses and writes (``irc.cache``);
- ``torch``: the torch backend's graphs: each one compiled, and the ops
  that fell back to eager torch;
- ``all``: every topic.

``IRC_DUMP_DIR`` names a directory; every compilation then writes its IR at
each level (``graph.mlir`` ... ``triton.mlir``), its emitted module
(``kernels.py``) and the pass timings (``passes.txt``) to a directory of its
own in it, named after the function. With it set, ``irc.compile`` lowers at
once rather than at the first call (``irc.api``), so that the directory is
complete when it returns.

Records go to the standard ``logging`` loggers ``irc.<topic>`` (so that an
application can route them like any other), printed to stderr unless the
application configured handlers of its own. Both variables are read when a
compilation starts, so they can be changed between compilations.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from xdsl.passes import ModulePass

from irc.capture import Captured
from irc.compilation import Compilation, Listener
from irc.errors import IrcError
from irc.lowering.pipeline import LEVEL_AFTER

LEVELS = ("graph", "fusion", "loop", "memory", "triton")
TOPICS = (*LEVELS, "source", "passes", "kernels", "guards", "cache", "torch")
_GROUPS = {"ir": LEVELS, "all": TOPICS}

LOGS_VARIABLE = "IRC_LOGS"
DUMP_VARIABLE = "IRC_DUMP_DIR"

#: Topics set by ``set_logs``; ``None``: ``IRC_LOGS`` decides.
_chosen: frozenset[str] | None = None
_handler: logging.Handler | None = None
_dump_numbers = itertools.count()


def parse_topics(text: str) -> frozenset[str]:
    """The topics ``text`` (``"passes,ir"``) names; an unknown name is an
    ``IrcError`` listing the known ones."""
    topics: set[str] = set()
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        if name in _GROUPS:
            topics.update(_GROUPS[name])
        elif name in TOPICS:
            topics.add(name)
        else:
            known = ", ".join(sorted({*TOPICS, *_GROUPS}))
            raise IrcError(
                f"unknown log topic {name!r} in {LOGS_VARIABLE}={text!r}; "
                f"the topics are: {known}"
            )
    return frozenset(topics)


def set_logs(topics: str | Iterable[str] | None) -> None:
    """Choose the topics from code (``irc.set_logs("passes,fusion")``),
    overriding ``IRC_LOGS``; ``None`` gives the choice back to it."""
    global _chosen
    if topics is None:
        _chosen = None
        return
    _chosen = parse_topics(topics if isinstance(topics, str) else ",".join(topics))


def active_topics() -> frozenset[str]:
    if _chosen is not None:
        return _chosen
    return parse_topics(os.environ.get(LOGS_VARIABLE, ""))


def logger(topic: str) -> logging.Logger:
    return logging.getLogger(f"irc.{topic}")


class Session(Listener):
    """What one compilation logs and dumps, decided when it starts: a
    listener of its driver (``irc.driver``)."""

    def __init__(self, captured: Captured):
        self.topics = active_topics()
        self.dump_dir = _dump_directory(captured.function_name)
        self._pass_times: list[str] = []
        if self.topics:
            ensure_handler()
        if self.wants("guards"):
            self.log("guards", _guards_text(captured))

    def wants(self, topic: str) -> bool:
        return topic in self.topics

    def log(self, topic: str, message: str) -> None:
        if topic in self.topics:
            logger(topic).info("%s", message)

    @property
    def dumps(self) -> bool:
        """Whether this compilation writes its IR to ``IRC_DUMP_DIR``."""
        return self.dump_dir is not None

    def pass_ran(
        self, compilation: Compilation, applied: ModulePass, seconds: float
    ) -> None:
        self._pass_line(f"{applied.name}: {seconds * 1e3:.2f} ms")

    def restored(self, compilation: Compilation) -> None:
        """No pass runs: say so where the passes would be, naming what was
        skipped, so that a warm compile cache does not log nothing."""
        self._pass_line(f"{compilation.function_name}: {_restored_text(compilation)}")

    def _pass_line(self, line: str) -> None:
        self.log("passes", line)
        if self.dump_dir is not None:
            self._pass_times.append(line)
            self.write("passes.txt", "\n".join(self._pass_times) + "\n")

    def levels_reached(self, compilation: Compilation, levels: Sequence[str]) -> None:
        for level in levels:
            if self.wants(level) or self.dump_dir is not None:
                # printing a module costs milliseconds: only when wanted
                self._level_text(level, compilation.ir(level))
        if "fusion" in levels and self.wants("kernels"):
            self.log("kernels", _kernels_text(compilation))

    def _level_text(self, level: str, text: str) -> None:
        self.log(level, f"{level} IR:\n{text}")
        if self.dump_dir is not None:
            self.write(f"{level}.mlir", text)

    def source_emitted(self, compilation: Compilation) -> None:
        source = compilation.source
        assert source is not None
        self.log("source", f"emitted module:\n{source}")
        if self.dump_dir is not None:
            self.write("kernels.py", source)

    def write(self, name: str, text: str) -> None:
        assert self.dump_dir is not None
        (self.dump_dir / name).write_text(text, encoding="utf-8")


def _guards_text(captured: Captured) -> str:
    """The declared facts and the guards capture left for the runtime."""
    from irc.dialects.sym import GuardOp

    facts = ", ".join(str(fact) for fact in captured.facts) or "none"
    lines = [f"{captured.function_name}: facts declared: {facts}"]
    for op in captured.module.walk():
        if isinstance(op, GuardOp):
            reason = f" ({op.reason.data})" if op.reason else ""
            lines.append(f"  guard {op.fact}{reason}, checked at every call")
    if len(lines) == 1:
        lines.append("  no guards: every shape fact was proven at compile time")
    return "\n".join(lines)


def _restored_text(compilation: Compilation) -> str:
    """Where a restored record came from and the passes it did not run:
    the pipeline's, and the default lowering that finishes a pipeline
    stopping above triton (``irc.driver``)."""
    pipeline = compilation.pipeline
    if pipeline is None:
        return "restored from a saved artefact: no pass ran"
    skipped = [p.name for p in pipeline.passes]
    if not any(LEVEL_AFTER.get(name) == "triton" for name in skipped):
        skipped.append("the default lowering")
    return (
        "compile cache hit: restored every level and the emitted module; "
        f"no pass ran (skipped: {', '.join(skipped)})"
    )


def _kernels_text(compilation: Compilation) -> str:
    """Each kernel ``fuse`` formed: its name, kind and reason (read from
    the restored fusion level when ``fuse`` did not run in this process)."""
    from irc.dialects.fusion import KernelOp

    fusion = compilation.module("fusion")
    kernels = [op for op in fusion.walk() if isinstance(op, KernelOp)]
    restored = " (restored: fuse did not run)" if compilation.restored else ""
    lines = [f"{len(kernels)} kernel(s){restored}"]
    lines += [
        f"  @{op.sym_name.data} {op.kind.data}: {op.reason.data}" for op in kernels
    ]
    return "\n".join(lines)


def _dump_directory(function_name: str) -> Path | None:
    """A new directory for one compilation's dumps under ``IRC_DUMP_DIR``
    (``softmax-1234-0``: function, process, count), or None."""
    root = os.environ.get(DUMP_VARIABLE)
    if not root:
        return None
    safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", function_name) or "function"
    path = Path(root) / f"{safe_name}-{os.getpid()}-{next(_dump_numbers)}"
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as err:
        raise IrcError(
            f"cannot create the dump directory {str(path)!r} ({DUMP_VARIABLE}): "
            f"{err.strerror or err}; set {DUMP_VARIABLE} to a writable directory "
            "or unset it"
        ) from None
    return path


def ensure_handler() -> None:
    """Print irc's records to stderr, unless the application routes them
    itself (a handler on the ``irc`` logger or the root logger)."""
    global _handler
    root = logging.getLogger("irc")
    if root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    if _handler is not None or root.handlers or logging.getLogger().handlers:
        return
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
    root.addHandler(_handler)
