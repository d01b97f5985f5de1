"""The on-disk compile cache (``irc.cache``): the second process's compile
time against the first's, for every suite program.

A round runs two fresh processes one after the other on one new, empty
cache directory (``IRC_CACHE_DIR``). Each compiles every program of the
test suite (``tests/suite_programs.py``) as far as its emitted module
(``irc.compile(...)`` then ``triton_source``: capture, the pipeline, the
default lowering and the emission; what a first call on a Triton backend
needs), timing each program, and says whether it was restored from the
cache. The first process finds the directory empty and writes an entry per
program; the second should restore every one. Each figure is the minimum
over ``--repeat`` rounds. Loading the source and Triton's own compilation of
the kernels are not included (Triton caches those itself, in
``~/.triton/cache``).

    python benchmarks/compile_cache.py                  # the table
    python benchmarks/compile_cache.py --json out.json  # and the data
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: One process's part: compile every suite program, print the timings.
CHILD = """
import json, sys, time
start = time.perf_counter()
sys.path.insert(0, {tests!r})
import irc
from suite_programs import SUITE
imported = time.perf_counter() - start
report = {{"import_s": imported, "programs": {{}}}}
for name, program in SUITE.items():
    begin = time.perf_counter()
    compiled = program.compile()
    compiled.triton_source
    report["programs"][name] = {{
        "seconds": time.perf_counter() - begin,
        "restored": compiled.restored,
    }}
print(json.dumps(report))
"""


def run_child(cache: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "IRC_CACHE_DIR": str(cache),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
    }
    env.pop("IRC_CACHE", None)
    code = CHILD.format(tests=str(ROOT / "tests"))
    completed = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.splitlines()[-1])


def measure(repeat: int) -> dict[str, Any]:
    """Per program: the minimum time in the first and second process over
    the rounds, and whether the second restored it in every round."""
    rounds = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="irc-cache-bench-") as cache:
            first = run_child(Path(cache))
            second = run_child(Path(cache))
            size = sum(p.stat().st_size for p in Path(cache).glob("*.json"))
        rounds.append((first, second, size))
    names = list(rounds[0][0]["programs"])
    programs = {}
    for name in names:
        firsts = [r[0]["programs"][name] for r in rounds]
        seconds = [r[1]["programs"][name] for r in rounds]
        programs[name] = {
            "first_s": min(p["seconds"] for p in firsts),
            "second_s": min(p["seconds"] for p in seconds),
            "first_restored": any(p["restored"] for p in firsts),
            "second_restored": all(p["restored"] for p in seconds),
        }
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "repeat": repeat,
        "cache_bytes": rounds[0][2],
        "import_s": min(r[0]["import_s"] for r in rounds),
        "programs": programs,
    }


def table(data: dict[str, Any]) -> str:
    lines = [
        "| program | first process (ms) | second process (ms) | speed-up | hit |",
        "|---|---:|---:|---:|---|",
    ]
    total_first = total_second = 0.0
    for name, p in data["programs"].items():
        total_first += p["first_s"]
        total_second += p["second_s"]
        hit = "yes" if p["second_restored"] and not p["first_restored"] else "NO"
        lines.append(
            f"| {name} | {p['first_s'] * 1e3:.0f} | {p['second_s'] * 1e3:.0f} | "
            f"{p['first_s'] / p['second_s']:.1f}x | {hit} |"
        )
    lines.append(
        f"| **all {len(data['programs'])}** | **{total_first * 1e3:.0f}** | "
        f"**{total_second * 1e3:.0f}** | **{total_first / total_second:.1f}x** | |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--json", type=Path, help="write the data here too")
    options = parser.parse_args()
    start = time.perf_counter()
    data = measure(options.repeat)
    print(table(data))
    print(
        f"\nentries: {data['cache_bytes'] / 1e6:.1f} MB for {len(data['programs'])} "
        f"programs; import irc: {data['import_s'] * 1e3:.0f} ms; "
        f"{options.repeat} rounds in {time.perf_counter() - start:.0f} s"
    )
    if options.json:
        options.json.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
