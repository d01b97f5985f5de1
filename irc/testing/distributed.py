"""Running a function on every rank of a local ``torch.distributed`` job:
what the tests of sharded programs use to check the real path (the emitted
launchers' ``torch.distributed`` calls) on one machine.

``run_ranks(fn, world_size)`` starts ``world_size`` processes (``spawn``),
joins them into a gloo job on 127.0.0.1, calls ``fn(rank, *args)`` in each
and returns their results in rank order. It is bounded in time: a rank
that fails or hangs fails the run with its traceback, never a hang.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import socket
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from irc.errors import ExecutionError

__all__ = ["free_port", "run_ranks"]

#: How long a job may run before it is declared stuck.
DEFAULT_TIMEOUT_S = 240.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rank_main(
    rank: int,
    world_size: int,
    port: int,
    fn: Callable[..., Any],
    args: Sequence[Any],
    results: Any,
) -> None:
    import torch.distributed as dist

    os.environ.setdefault("TRITON_INTERPRET", "1")
    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=world_size,
        )
        try:
            results.put((rank, True, fn(rank, *args)))
        finally:
            dist.destroy_process_group()
    except BaseException:
        results.put((rank, False, traceback.format_exc()))


def run_ranks(
    fn: Callable[..., Any],
    world_size: int,
    *args: Any,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[Any]:
    """``fn(rank, *args)`` on each rank of a ``world_size``-process gloo job
    (``fn`` and ``args`` picklable: ``fn`` defined at a module's top
    level); the results in rank order."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    port = free_port()
    processes = [
        context.Process(
            target=_rank_main,
            args=(rank, world_size, port, fn, args, results),
            name=f"irc-rank-{rank}",
        )
        for rank in range(world_size)
    ]
    for process in processes:
        process.start()
    found: dict[int, Any] = {}
    try:
        while len(found) < world_size:
            try:
                rank, ok, value = results.get(timeout=timeout_s)
            except queue.Empty:
                raise ExecutionError(
                    f"a {world_size}-rank job did not finish in {timeout_s:.0f} s "
                    f"(ranks {sorted(set(range(world_size)) - found.keys())} never "
                    "reported)"
                ) from None
            if not ok:
                raise ExecutionError(f"rank {rank} failed:\n{value}")
            found[rank] = value
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
    return [found[rank] for rank in range(world_size)]
