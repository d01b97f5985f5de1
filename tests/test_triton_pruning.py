"""The copy of the prelude into emitted modules (``irc.backend.triton.pruning``).

An emitted module holds the text of exactly the prelude definitions it uses
and of what those use, transitively, in the prelude's order; nothing else
of the prelude, and no import of irc. The prelude's definitions are read
from its file, so none of this needs torch or triton.
"""

from __future__ import annotations

import ast
import re
from importlib import resources

import pytest

import irc
from irc.backend.triton.pruning import (
    prelude_closure,
    prelude_definitions,
    used_prelude,
)

#: A prelude name in a string of the printers.
HELPER_NAME = re.compile(r"\b(?:_irc_|_IRC_|_Irc)[A-Za-z]\w*")


def names_of(definitions) -> list[str]:
    return [name for d in definitions for name in d.names]


def text_of(*names: str) -> str:
    by_name = {n: d for d in prelude_definitions() for n in d.names}
    return "\n\n\n".join(by_name[n].text for n in names)


def defines(statement: ast.stmt) -> list[str]:
    """The names a top-level statement defines."""
    if isinstance(statement, ast.FunctionDef | ast.ClassDef):
        return [statement.name]
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    return []


def defined_at_top(source: str) -> list[str]:
    """The names the top-level statements of ``source`` define, in order."""
    return [name for s in ast.parse(source).body for name in defines(s)]


def test_the_definitions_are_the_whole_prelude_in_file_order() -> None:
    """Nothing of the file is lost by copying: after its docstring, imports
    and ``fmt: off``, the file is its definitions' texts, two blank lines
    apart (so every comment in it belongs to a definition)."""
    source = (
        resources.files("irc.backend.triton").joinpath("prelude.py").read_text("utf-8")
    )
    _, separator, rest = source.partition("# fmt: off\n\n\n")
    assert separator
    texts = [d.text for d in prelude_definitions()]
    assert rest == "\n\n\n".join(texts) + "\n"
    assert names_of(prelude_definitions()) == defined_at_top(source)
    assert texts[1].startswith("# Special float values are built from their bits")


@pytest.mark.parametrize(
    ("names", "closure"),
    [
        (["_irc_pow_f"], ["_irc_nan", "_irc_inf", "_irc_pow_f"]),
        (["_irc_floordiv_f"], ["_irc_div", "_irc_floordiv_f"]),
        (["_irc_max_f", "_irc_min_f"], ["_irc_nan", "_irc_max_f", "_irc_min_f"]),
        (
            ["_irc_view", "_irc_allocate"],
            ["_irc_view", "AllocationFailed", "_irc_allocate"],
        ),
        (["_irc_device"], ["_irc_device", "_IRC_INTERPRETED"]),
        (["_irc_tensor", "_irc_count"], ["LaunchError", "_irc_tensor", "_irc_count"]),
        (["_irc_mul", "torch", "not_a_helper"], ["_irc_mul"]),
        ([], []),
    ],
)
def test_the_closure_is_what_the_names_use_transitively(
    names: list[str], closure: list[str]
) -> None:
    assert names_of(prelude_closure(names)) == closure


def test_only_names_in_code_count_not_strings_or_comments() -> None:
    code = "# _irc_tanh(x)\nx = '_irc_div'\ny = _irc_pow_f(a, b)  # _irc_rem_i\n"
    assert used_prelude(code) == text_of("_irc_nan", "_irc_inf", "_irc_pow_f")
    assert used_prelude("x = 1\n") == ""


def test_an_emitted_module_holds_the_closure_of_what_it_uses_and_no_irc() -> None:
    """A float32 power: of the kernel helpers, only ``_irc_pow_f`` and what
    it uses; the launcher's own helpers; nothing else of the prelude."""
    spec = irc.TensorSpec(("N",), "float32")
    source = irc.compile(lambda x, y: x**y, spec, spec).triton_source
    prelude = set(names_of(prelude_definitions()))
    tree = ast.parse(source)
    copied = [n for n in defined_at_top(source) if n in prelude]
    rest = [
        s
        for s in tree.body
        if not set(defines(s)) & prelude and not isinstance(s, ast.Import)
    ]
    used = {n.id for s in rest for n in ast.walk(s) if isinstance(n, ast.Name)}
    assert copied == names_of(prelude_closure(used))
    assert "_irc_pow_f" in used and "_irc_nan" in copied and "_irc_inf" in copied
    assert not {"_irc_tanh", "_irc_div", "_irc_floordiv_i", "_irc_to_bf16"} & set(
        copied
    )
    imports = [s for s in tree.body if isinstance(s, ast.Import | ast.ImportFrom)]
    assert [ast.unparse(s) for s in imports] == [
        "import torch",
        "import triton",
        "import triton.language as tl",
    ]


def test_every_helper_an_emitter_may_call_is_defined_in_the_prelude() -> None:
    """The ``_irc_*`` names in the printers' strings and the primitives'
    Triton spellings all exist in the prelude (``_IRC_CONSTANTS`` and the
    tuner's ``_IRC_TUNING``, ``_IRC_TUNER`` and ``_IRC_CHOSEN`` are the
    emitted module's own)."""
    prelude = set(names_of(prelude_definitions()))
    spelled: set[str] = set()
    for package, module in (
        ("irc.backend.triton", "elementwise.py"),
        ("irc.backend.triton", "kernel.py"),
        ("irc.backend.triton", "launcher.py"),
        ("irc.backend.triton", "expressions.py"),
        ("irc.backend.triton", "emit.py"),
        ("irc.primitives", "builtin.py"),
        ("irc.primitives", "spelling.py"),
    ):
        source = resources.files(package).joinpath(module).read_text("utf-8")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                spelled |= set(HELPER_NAME.findall(node.value))
    own = {"_IRC_CONSTANTS", "_IRC_TUNING", "_IRC_TUNER", "_IRC_CHOSEN"}
    assert spelled - own <= prelude
    assert {"_irc_bucket", "_IrcTuner"} <= spelled
    assert {"_irc_pow_f", "_irc_tensor", "_irc_view", "_irc_rem_i"} <= spelled
