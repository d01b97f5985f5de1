"""lit configuration for irc's FileCheck tests.

Run them with ``pytest`` (``tests/test_filecheck.py`` drives lit) or
directly with ``lit -v tests/filecheck``. ``irc-opt`` and ``filecheck`` in
RUN lines resolve to the ones installed next to the Python running lit, so
the tests use the virtual environment's tools whether or not it is on PATH.
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

_BIN_DIR = os.path.dirname(sys.executable)

# lit runs tests in a clean environment; PYTHONPATH goes through, so that
# irc-opt imports the same irc as the Python running lit (a checkout that
# shadows an installed copy, say).
if "PYTHONPATH" in os.environ:
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]  # noqa: F821

for _tool in ("irc-opt", "filecheck"):
    # Only the tool name as a word of its own: not inside a path such as
    # tests/filecheck/irc-opt/..., nor in a longer name.
    config.substitutions.append(  # noqa: F821
        (rf"(?<![\w/.-]){_tool}(?![\w/.-])", os.path.join(_BIN_DIR, _tool))
    )
