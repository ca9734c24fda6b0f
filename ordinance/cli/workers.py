"""`ordinance serve --workers N`: N server processes on one listening socket.

The parent binds the socket, then starts N copies of the same `serve`
command, each given the socket's file descriptor (`--worker INDEX:FD`) and
nothing else new: each worker is a whole server with its own store
connection and warm model, and the kernel spreads connections among them.
They share the store as any two servers do: a write through one counts on
the other's next decision (the store's revision), and a decision is logged
only against the facts it was decided on (the append's compare-and-set).
Only the first worker keeps the state file and the gate's snapshot. The
parent waits: a signal to it stops them all, and if one worker ends, the
others are stopped and the parent exits with its code.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from typing import Any, Mapping, Sequence

import click

from ..diagnostics import OrdinanceError

__all__ = ["listen", "run_workers", "worker_socket", "FIRST_ONLY"]

FIRST_ONLY = frozenset({"state_out", "state_audience", "state_cap"})  # what one process keeps for all
_NOT_PASSED = frozenset({"workers", "worker", "host", "port", "uds"})  # the socket says where


def listen(host: str, port: int, uds: str | None) -> socket.socket:
    """The listening socket the workers share (error[port_in_use] if taken)."""
    import os

    if uds:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if os.path.exists(uds):
                os.unlink(uds)  # as uvicorn does with --uds
            sock.bind(uds)
        except OSError as exc:
            sock.close()
            raise OrdinanceError(
                f"cannot listen on `{uds}`: {(exc.strerror or str(exc)).lower()}", code="port_in_use"
            ) from None
    else:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            sock.close()
            raise OrdinanceError(
                f"cannot listen on {host}:{port}: {(exc.strerror or str(exc)).lower()}", code="port_in_use"
            ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def worker_socket(spec: str) -> tuple[int, socket.socket]:
    """The (index, listening socket) of a worker's `--worker INDEX:FD`."""
    index, _, fd = spec.partition(":")
    if not index.isdigit() or not fd.isdigit():
        raise click.UsageError(f"--worker takes INDEX:FD, not `{spec}`")
    return int(index), socket.socket(fileno=int(fd))


def _argv(command: click.Command, params: Mapping[str, Any], first: bool) -> list[str]:
    """The command line of one worker: every option given to the parent,
    as the parent read it, but the socket's and the first worker's own."""
    argv: list[str] = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.name is None or param.name in _NOT_PASSED:
            continue
        value = params.get(param.name)
        if value is None or param.name in FIRST_ONLY and not first:
            continue
        argv += [param.opts[0], str(value)]
    return argv


def run_workers(count: int, sock: socket.socket, command: click.Command, params: Mapping[str, Any]) -> int:
    """Start `count` workers of `command` on `sock`; wait for them; their exit code."""
    fd = sock.fileno()
    procs: list[subprocess.Popen[bytes]] = []

    def stop(*_: Any) -> None:
        for p in procs:
            if p.poll() is None:
                p.terminate()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        for index in range(1, count + 1):
            argv: Sequence[str] = [
                sys.executable,
                "-c",
                "from ordinance.cli import main; main()",
                "serve",
                *_argv(command, params, first=index == 1),
                "--worker",
                f"{index}:{fd}",
            ]
            procs.append(subprocess.Popen(argv, pass_fds=(fd,)))
        code = 0
        while procs:
            done = _wait_any(procs)
            procs.remove(done)
            if procs:  # one ended: the rest are stopped, so no worker serves alone unseen
                code = code or (done.returncode or 0)
                stop()
            else:
                code = code or (done.returncode or 0)
        return code if code >= 0 else 0  # a worker ended by our signal stopped as asked
    finally:
        stop()
        for s, handler in previous.items():
            signal.signal(s, handler)
        sock.close()


def _wait_any(procs: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    import os

    while True:
        for p in procs:
            if p.poll() is not None:
                return p
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return procs[0]
        for p in procs:
            if p.pid == pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                return p
