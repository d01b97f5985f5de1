"""The on-disk compile cache: ``irc.compile`` (and ``irc.jit``, through it)
reuses the lowering of an earlier compilation, in this process or another.

Capture always runs (it is what tells two programs apart); what the cache
saves is everything after it: the pipeline's passes, the default lowering
and the emission. An entry is keyed on

- the captured graph IR, printed with locations (so a restored compilation
  reports its ops at the lines that made them, and a function moved in its
  file compiles again),
- the pipeline, as the canonical spec of its passes (``tile{...}`` with its
  options),
- the irc version and a digest of irc's own source files (a changed
  compiler never reads an entry of the old one), and the xDSL and Triton
  versions,

and holds the IR of every level (with and without locations), the emitted
module and its kernel count. Where it lives: ``$IRC_CACHE_DIR`` if set, else
``$XDG_CACHE_HOME/irc``, else ``~/.cache/irc``; ``IRC_CACHE=0`` turns it off.
Both are read at every compilation.

An entry is one JSON file, written to a temporary file in the same
directory and renamed over its place (``os.replace``), so concurrent
processes compiling the same program each write a whole entry and readers
never see half of one. It carries a SHA-256 digest of its content and its
key: an entry that does not parse, whose digest or key does not match, or of
another format, is a miss (logged under the ``cache`` topic), compiled
again and overwritten, never loaded. A pipeline with a pass from outside irc
and xDSL is not cached: irc cannot know when that pass's code changes. Nothing is
ever evicted: delete the directory to empty the cache.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from irc import logs
from irc.compilation import Compilation, Listener, StoredLevels
from irc.ir import print_module
from irc.lowering.pipeline import Pipeline

DIR_VARIABLE = "IRC_CACHE_DIR"
SWITCH_VARIABLE = "IRC_CACHE"
#: The layout of an entry; an entry of another format is a miss.
FORMAT = 2


def cache_directory() -> Path | None:
    """Where entries are read and written now, or None when the cache is
    off (``IRC_CACHE=0``)."""
    if os.environ.get(SWITCH_VARIABLE, "").strip() == "0":
        return None
    chosen = os.environ.get(DIR_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "irc"


@functools.cache
def versions() -> dict[str, str]:
    """What the emitted code depends on besides its input: irc (its version
    and the digest of its source files), xDSL and Triton (read from the
    installed metadata: importing triton would fix its mode)."""
    return {
        "irc": _installed_version("irc"),
        "irc_source": _package_source_digest(),
        "xdsl": _installed_version("xdsl"),
        "triton": _installed_version("triton"),
    }


def _installed_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _package_source_digest() -> str:
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Entry(Listener):
    """One compilation's place in the cache: a listener of its driver
    (``irc.driver``) that writes the entry when the module is emitted."""

    key: str
    path: Path
    function_name: str

    def load(self) -> StoredLevels | None:
        """The stored compilation, or None (a miss) when there is none or it
        is corrupt or stale, saying which under the ``cache`` topic."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._log("compile cache miss: compiling")
            return None
        except OSError as err:
            self._log(f"compile cache entry {self.path} unreadable ({err}): compiling")
            return None
        problem, stored = _parse_entry(text, self.key)
        if stored is None:
            self._log(f"compile cache entry {self.path} {problem}: compiling again")
            return None
        self._log(f"compile cache hit: {self.path}")
        return stored

    def source_emitted(self, compilation: Compilation) -> None:
        assert compilation.source is not None
        modules = {level: compilation.modules[level] for level in compilation.levels}
        self.store(
            StoredLevels.of(modules, compilation.source, compilation.launches)
        )

    def store(self, stored: StoredLevels) -> None:
        """Write the entry atomically; a cache that cannot be written is a
        warning, never a failed compilation."""
        payload = stored.to_json()
        entry = {
            "format": FORMAT,
            "key": self.key,
            "function": self.function_name,
            "versions": versions(),
            "digest": _digest(payload),
            "payload": payload,
        }
        try:
            write_atomically(self.path, json.dumps(entry))
        except OSError as err:
            logs.logger("cache").warning(
                "irc: cannot write the compile cache entry %s (%s); set %s to a "
                "writable directory or %s=0 to turn the cache off",
                self.path,
                err,
                DIR_VARIABLE,
                SWITCH_VARIABLE,
            )
            return
        self._log(f"compile cache entry written: {self.path}")

    def _log(self, message: str) -> None:
        if "cache" in logs.active_topics():
            logs.ensure_handler()
            logs.logger("cache").info("%s: %s", self.function_name, message)


def entry_for(
    captured_module: ModuleOp, function_name: str, pipeline: Pipeline
) -> Entry | None:
    """The entry of compiling ``captured_module`` with ``pipeline``, or None
    when the cache is off or a pass comes from outside irc and xDSL."""
    directory = cache_directory()
    if directory is None:
        return None
    passes = pipeline.passes
    if any(not type(p).__module__.startswith(("irc.", "xdsl.")) for p in passes):
        return None
    key_material = {
        "format": FORMAT,
        "graph": print_module(captured_module, locations=True),
        "pipeline": pipeline.spec(),
        "versions": versions(),
    }
    key = _digest(key_material)
    return Entry(key, directory / f"{key}.json", function_name)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _parse_entry(text: str, key: str) -> tuple[str, StoredLevels | None]:
    """The stored compilation in an entry's text, or why there is none."""
    try:
        entry = json.loads(text)
    except ValueError:
        return "is not valid JSON (corrupt)", None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        return "has another format (stale)", None
    if entry.get("key") != key:
        return "holds another key (stale or corrupt)", None
    payload = entry.get("payload")
    if _digest(payload) != entry.get("digest"):
        return "does not match its digest (corrupt)", None
    try:
        return "", StoredLevels.from_json(payload)
    except (KeyError, TypeError, ValueError):
        return "is malformed (corrupt)", None


#: A temporary file of an entry older than this (seconds) was left by a
#: writer that died mid-write (a write takes milliseconds): removed by the
#: next write of that entry.
ORPHAN_AGE = 600.0


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same
    directory renamed over it: a reader sees the old file or the new one.
    Temporary files of ``path`` that writers killed mid-write left behind
    (older than ``ORPHAN_AGE``) are removed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _remove_orphans(path: Path) -> None:
    """Remove the temporary files of ``path`` older than ``ORPHAN_AGE``; one
    that another process removes or renames meanwhile is left to it."""
    now = time.time()
    for orphan in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if now - orphan.stat().st_mtime > ORPHAN_AGE:
                orphan.unlink()
        except OSError:  # gone already, or not ours to remove
            continue
