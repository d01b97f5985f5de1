"""Runs ``irc-opt`` and ``filecheck`` for lit without paying their imports
on every RUN line.

Each ``irc-opt`` process spends seconds importing irc, xDSL, NumPy and
ml_dtypes before it reads a line, and the FileCheck tests start over a
hundred of them. ``serve`` imports the tools once and then, for each
request, forks: the child takes the caller's stdin, stdout and stderr (the
file descriptors themselves, passed over a Unix socket), its arguments,
working directory and environment, runs the tool's console-script
``main`` and reports its exit status. ``connect`` is the caller: a
stdlib-only script that lit runs in place of the tool (``lit.cfg.py``
substitutes it when ``IRC_TOOL_SERVER`` names a socket), so a RUN line sees
what the installed tool would print and return.

Usage: ``python tool_server.py serve SOCKET`` (prints ``ready`` once it
listens) and ``python -S tool_server.py connect SOCKET TOOL ARGS...``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import traceback
from collections.abc import Callable

#: The console scripts served, by name: ``module:function``.
TOOLS = {"irc-opt": "irc.cli.irc_opt:main", "filecheck": "filecheck.main:main"}

_STATUS = struct.Struct("!i")
_LENGTH = struct.Struct("!I")
_STANDARD_FDS = [0, 1, 2]


def _entry_point(spec: str) -> Callable[[], object]:
    module, _, function = spec.partition(":")
    return getattr(__import__(module, fromlist=[function]), function)


def serve(path: str) -> None:
    """Import every tool, then serve requests on the Unix socket ``path``
    until terminated or orphaned."""
    mains = {name: _entry_point(spec) for name, spec in TOOLS.items()}
    _import_passes_and_dialects()
    # The children report to their callers; nobody waits for them here.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    parent = os.getppid()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(64)
        server.settimeout(1.0)
        print("ready", flush=True)
        while True:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                if os.getppid() != parent:  # whoever started it died: stop too
                    return
                continue
            connection.settimeout(None)
            sys.stdout.flush()  # a child must not inherit buffered output
            sys.stderr.flush()
            if os.fork() == 0:
                server.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                status = 1
                try:
                    status = _run_request(connection, mains)
                except BaseException:
                    traceback.print_exc()
                finally:  # a child never returns into the server's loop
                    os._exit(status)
            connection.close()


def _import_passes_and_dialects() -> None:
    """Import what irc-opt imports only when a pipeline or an input names it
    (about a second per RUN line otherwise)."""
    from irc.passes.registry import get_all_dialects, get_all_passes

    for load in (*get_all_passes().values(), *get_all_dialects().values()):
        # Only a head start: a pass that fails to load fails in the run
        # that names it, as it would in a fresh irc-opt.
        with contextlib.suppress(Exception):
            load()


def _run_request(
    connection: socket.socket, mains: dict[str, Callable[[], object]]
) -> int:
    """In a forked child: become the caller's tool process, run the tool,
    send its exit status back."""
    header, fds, _, _ = socket.recv_fds(connection, _LENGTH.size, len(_STANDARD_FDS))
    (length,) = _LENGTH.unpack(header)
    request = json.loads(_receive_exactly(connection, length))
    for fd, standard in zip(fds, _STANDARD_FDS):
        os.dup2(fd, standard)
        os.close(fd)
    _open_standard_streams()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = request["argv"]
    status = _exit_status(mains[request["tool"]])
    connection.sendall(_STATUS.pack(status))
    return status


def _open_standard_streams() -> None:
    """New ``sys.stdin``/``stdout``/``stderr`` on the caller's descriptors,
    as a fresh interpreter opens them: the server's know another file (a
    tool that reconfigures them would seek in it)."""
    # Line-buffered (buffering=1) where an interpreter's are: stderr always,
    # stdout on a terminal. They live until the process exits.
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", 1 if os.isatty(1) else -1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", 1, errors="backslashreplace", closefd=False)  # noqa: SIM115


def _exit_status(main: Callable[[], object]) -> int:
    """What ``sys.exit(main())`` in a fresh interpreter would exit with,
    with the interpreter's report of an uncaught exception."""
    try:
        code = main()
    except SystemExit as exit_:
        code = exit_.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    # os._exit, unlike an interpreter's exit, flushes nothing; the server's
    # streams write to the same descriptors for code that kept them.
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    return 0 if code is None else int(code)


def _receive_exactly(connection: socket.socket, length: int) -> bytes:
    chunks, left = [], length
    while left:
        chunk = connection.recv(left)
        if not chunk:
            raise ConnectionError("the request ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def connect(path: str, tool: str, args: list[str]) -> int:
    """Run ``tool args`` in the server at ``path`` on this process's
    standard streams; return its exit status."""
    request = json.dumps(
        {
            "tool": tool,
            "argv": [tool, *args],
            "cwd": os.getcwd(),
            "env": dict(os.environ),
        }
    ).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        socket.send_fds(connection, [_LENGTH.pack(len(request))], _STANDARD_FDS)
        connection.sendall(request)
        reply = _receive_exactly(connection, _STATUS.size)
    return _STATUS.unpack(reply)[0]


if __name__ == "__main__":
    mode, socket_path, *rest = sys.argv[1:]
    if mode == "serve":
        serve(socket_path)
    else:
        sys.exit(connect(socket_path, rest[0], rest[1:]))
