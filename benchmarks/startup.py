"""``irc-opt``'s start-up: the wall time of fresh processes, each command
run ``--repeat`` times in turn.

A command-line tool runs once per file in a FileCheck suite or a shell loop,
so the time to import what it needs is paid every time. ``irc-opt`` imports
its modules lazily (``irc``'s names on first use, the dialects when the
input names them, ``ml_dtypes`` when an array of bfloat16 is made): the
rows show what each kind of run costs, next to the Python interpreter alone
and xDSL's own ``xdsl-opt --version`` (the floor: the driver irc-opt builds
on). Each figure is the minimum over the rounds, with the median beside it
(a burst of load from another process spoils a round, not the minimum).

    python benchmarks/startup.py                  # the table
    python benchmarks/startup.py --json out.json  # and the data
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/softmax.mlir"
BIN = Path(sys.executable).parent

#: What is timed: a name and the command, run from the repository root.
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import irc'": [sys.executable, "-c", "import irc"],
    "xdsl-opt --version": [str(BIN / "xdsl-opt"), "--version"],
    "irc-opt --version": [str(BIN / "irc-opt"), "--version"],
    "irc-opt --help": [str(BIN / "irc-opt"), "--help"],
    f"irc-opt {EXAMPLE} -p canonicalize": [
        str(BIN / "irc-opt"),
        EXAMPLE,
        "-p",
        "canonicalize",
    ],
    f"irc-opt {EXAMPLE} -p lower-to-triton -t triton": [
        str(BIN / "irc-opt"),
        EXAMPLE,
        "-p",
        "lower-to-triton",
        "-t",
        "triton",
    ],
}


def run_once(command: list[str]) -> float:
    """One fresh process's wall time, from start to exit."""
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    return time.perf_counter() - start


def measure(repeat: int) -> dict[str, Any]:
    """Every command once per round, so that load from elsewhere spreads
    over the commands rather than landing on one."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeat):
        for name, command in COMMANDS.items():
            times[name].append(run_once(command))
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "commands": {
            name: {"min_s": min(runs), "median_s": statistics.median(runs)}
            for name, runs in times.items()
        },
    }


def table(data: dict[str, Any]) -> str:
    lines = ["| command | min (ms) | median (ms) |", "|---|---:|---:|"]
    for name, figures in data["commands"].items():
        lines.append(
            f"| `{name}` | {figures['min_s'] * 1e3:.0f} | "
            f"{figures['median_s'] * 1e3:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--json", type=Path, help="write the data here too")
    options = parser.parse_args()
    data = measure(options.repeat)
    print(table(data))
    if options.json:
        options.json.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
