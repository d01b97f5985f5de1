"""lit configuration for irc's FileCheck tests.

Run them with ``pytest`` (``tests/test_filecheck.py`` drives lit) or
directly with ``lit -v tests/filecheck``. ``irc-opt`` and ``filecheck`` in
RUN lines resolve to the ones installed next to the Python running lit, so
the tests use the virtual environment's tools whether or not it is on PATH.
When ``IRC_TOOL_SERVER`` names the socket of ``tool_server.py``, they run
in that server instead.
"""

import os
import sys

import lit.formats

# `config` is injected by lit when it loads this file.
config.name = "irc"  # noqa: F821
config.test_format = lit.formats.ShTest()  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.excludes = ["Inputs", "Output"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
# `lit --param exec_root=DIR` writes the tests' temporary files (%t) under
# DIR instead of beside the sources, so that two runs never share them
# (tests/test_filecheck.py gives each run its own).
_EXEC_ROOT = lit_config.params.get("exec_root")  # noqa: F821
config.test_exec_root = _EXEC_ROOT or config.test_source_root  # noqa: F821

_BIN_DIR = os.path.dirname(sys.executable)

# lit runs tests in a clean environment; PYTHONPATH goes through, so that
# irc-opt imports the same irc as the Python running lit (a checkout that
# shadows an installed copy, say).
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]  # noqa: F821

# Under pytest (tests/test_filecheck.py), a server that has imported the
# tools already runs them (tool_server.py): the same tools on the same
# streams, without a second of imports per RUN line.
_SERVER = os.environ.get("IRC_TOOL_SERVER")


def _command(tool: str) -> str:
    if _SERVER is None:
        return os.path.join(_BIN_DIR, tool)
    client = os.path.join(os.path.dirname(__file__), "tool_server.py")
    return f"{sys.executable} -S {client} connect {_SERVER} {tool}"


for _tool in ("irc-opt", "filecheck"):
    # Only the tool name as a word of its own: not inside a path such as
    # tests/filecheck/irc-opt/..., nor in a longer name.
    config.substitutions.append(  # noqa: F821
        (rf"(?<![\w/.-]){_tool}(?![\w/.-])", _command(_tool))
    )
