"""The prelude's definitions an emitted module uses, as source text.

An emitted module carries its own copy of the prelude helpers it calls, so
that it imports nothing of irc, and no helper it does not call. The helpers
are the top-level definitions of ``irc.backend.triton.prelude``, read from
its source file with ``ast`` rather than imported (importing it would
import torch and triton into the compiler, and fix at import whether this
process's Triton interprets kernels):

- ``prelude_definitions()``: every definition, in file order: the names it
  defines, the prelude names its code refers to (``ast.Name`` nodes, so
  names in strings and comments do not count) and its text (the comment
  lines directly above it, its decorators and its body, exactly as the file
  has them);
- ``prelude_closure(names)``: the definitions of ``names`` and of every
  prelude name they refer to, transitively, in file order;
- ``used_prelude(code)``: the text of the closure of the prelude names that
  ``code`` (the emitted module after its prelude) refers to (the names its
  bytecode uses: names in its strings and comments do not count),
  definitions separated by two blank lines as in the file.

A statement of the prelude other than its docstring, its imports and
definitions of names (``def``, ``class``, assignment) is an error of irc,
raised when the prelude is first read.
"""

from __future__ import annotations

import ast
import functools
import types
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

#: The module whose definitions are copied.
PRELUDE_MODULE = "irc.backend.triton.prelude"


@dataclass(frozen=True)
class Definition:
    """One top-level definition of the prelude."""

    #: The names it binds (a function's or class's; an assignment's targets).
    names: tuple[str, ...]
    #: Other prelude names its code refers to.
    uses: frozenset[str]
    #: Its source text, from its leading comment to its last line.
    text: str


def _prelude_source() -> str:
    package, _, module = PRELUDE_MODULE.rpartition(".")
    return resources.files(package).joinpath(f"{module}.py").read_text("utf-8")


def _bound_names(statement: ast.stmt) -> tuple[str, ...]:
    if isinstance(statement, ast.FunctionDef | ast.ClassDef):
        return (statement.name,)
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    if targets and all(isinstance(t, ast.Name) for t in targets):
        return tuple(t.id for t in targets if isinstance(t, ast.Name))
    raise RuntimeError(
        f"{PRELUDE_MODULE} line {statement.lineno}: a top-level "
        f"{type(statement).__name__} is neither an import nor a definition of a "
        "name; the emitter copies only definitions"
    )


def _text(lines: list[str], statement: ast.stmt) -> str:
    """The statement's lines with the comment lines directly above it."""
    decorators = getattr(statement, "decorator_list", [])
    first = min([statement.lineno, *(d.lineno for d in decorators)]) - 1
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    assert statement.end_lineno is not None
    return "\n".join(lines[first : statement.end_lineno])


@functools.cache
def prelude_definitions() -> tuple[Definition, ...]:
    """Every top-level definition of the prelude, in file order."""
    source = _prelude_source()
    tree = ast.parse(source)
    lines = source.splitlines()
    body = tree.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        body = body[1:]  # the docstring
    statements = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
    bound = [_bound_names(s) for s in statements]
    defined = {name for names in bound for name in names}
    return tuple(
        Definition(
            names,
            frozenset(_referenced(statement) & (defined - set(names))),
            _text(lines, statement),
        )
        for statement, names in zip(statements, bound, strict=True)
    )


def _referenced(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def prelude_closure(names: Iterable[str]) -> list[Definition]:
    """The definitions of ``names`` (those the prelude defines; others are
    ignored) and of what they use, transitively, in file order."""
    definitions = prelude_definitions()
    by_name = {name: d for d in definitions for name in d.names}
    pending = [by_name[n] for n in names if n in by_name]
    used: set[Definition] = set()
    while pending:
        definition = pending.pop()
        if definition not in used:
            used.add(definition)
            pending += (by_name[n] for n in definition.uses)
    return [d for d in definitions if d in used]


def used_prelude(code: str) -> str:
    """The text of the prelude definitions ``code`` (Python source) uses,
    directly or through one another, in prelude order: a module carries no
    unused helper."""
    closure = prelude_closure(_code_names(code))
    return "\n\n\n".join(d.text for d in closure)


def _code_names(code: str) -> set[str]:
    """The global and attribute names ``code``'s bytecode refers to, in every
    function and class of it: what it uses of the prelude, and not what its
    strings and comments mention. (Compiling is several times faster than
    walking an ``ast`` of an emitted module, which is most of its text.)"""
    names: set[str] = set()
    pending = [compile(code, "<emitted>", "exec", dont_inherit=True)]
    while pending:
        unit = pending.pop()
        names.update(unit.co_names)
        pending += (c for c in unit.co_consts if isinstance(c, types.CodeType))
    return names
