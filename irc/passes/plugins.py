"""Passes from outside irc: installed packages and plugin files.

A package makes its passes known to every irc tool by naming them in the
``irc.passes`` entry-point group, as a pytest plugin names itself in
``pytest11``::

    [project.entry-points."irc.passes"]
    fold-my-ops = "my_package.passes:FoldMyOpsPass"

The entry point's name is the pipeline name (``irc-opt -p fold-my-ops``,
``irc.testing.check_pass("fold-my-ops")``) and must equal the pass's
``name``. Nothing is imported until a tool looks the pass up.

``irc-opt --load-pass-plugin`` loads a plugin for one run: a Python file or
an importable module; every ``ModulePass`` subclass defined in it with a
``name`` is registered, as MLIR's ``--load-pass-plugin`` registers the passes
of a shared library.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from xdsl.passes import ModulePass

from irc.errors import IrcError

ENTRY_POINT_GROUP = "irc.passes"


class PluginError(IrcError):
    """A pass plugin that cannot be loaded or does not define passes."""


def installed_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The passes installed packages declare in ``irc.passes``, by name, as
    factories that import the pass when called."""
    return {
        ep.name: _entry_point_loader(ep) for ep in entry_points(group=ENTRY_POINT_GROUP)
    }


def _entry_point_loader(ep) -> Callable[[], type[ModulePass]]:  # type: ignore[no-untyped-def]
    def load() -> type[ModulePass]:
        where = f"entry point {ep.name!r} = {ep.value!r} of group {ENTRY_POINT_GROUP!r}"
        try:
            loaded = ep.load()
        except Exception as error:
            raise PluginError(f"cannot load the pass of {where}: {error}") from error
        if not (inspect.isclass(loaded) and issubclass(loaded, ModulePass)):
            raise PluginError(f"{where} is not a ModulePass subclass")
        if loaded.name != ep.name:
            raise PluginError(
                f"{where} names pass {loaded.name!r}; an entry point's name must be "
                "the pass's name"
            )
        return loaded

    return load


def load_plugin(spec: str) -> dict[str, type[ModulePass]]:
    """The passes of the plugin ``spec``, a ``.py`` file or a module name,
    by name; a ``PluginError`` if it cannot be imported or defines none."""
    module = _import_plugin(spec)
    passes = {
        cls.name: cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ModulePass)
        and cls.__module__ == module.__name__
        and isinstance(getattr(cls, "name", None), str)
        and not inspect.isabstract(cls)
    }
    if not passes:
        raise PluginError(
            f"pass plugin {spec!r} defines no ModulePass subclass with a name"
        )
    return passes


def _import_plugin(spec: str) -> ModuleType:
    path = Path(spec)
    try:
        if path.suffix == ".py" or path.exists():
            return _import_file(path)
        return importlib.import_module(spec)
    except PluginError:
        raise
    except FileNotFoundError:
        raise PluginError(f"pass plugin {spec!r}: no such file") from None
    except Exception as error:
        raise PluginError(
            f"cannot load pass plugin {spec!r}: {type(error).__name__}: {error}"
        ) from error


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(path)
    name = f"irc_pass_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PluginError(f"pass plugin {str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module
