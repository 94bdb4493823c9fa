"""`flashmark serve --workers N`: N uvicorn processes, each listening on its own socket bound to
the same address with SO_REUSEPORT (socket(7)), so the kernel spreads new connections over
them: with uvicorn's one shared socket, one process takes a whole burst of keep-alive
connections. The parent keeps the address bound (a taken port is found before any process
starts), restarts a process that died, and stops them all on SIGINT, SIGTERM or SIGHUP; each
process gets SIGTERM when its parent dies (prctl(2) PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import socket
import threading
from multiprocessing.process import BaseProcess

import uvicorn

from flashmark.server.protocol import PROTOCOL

# uvicorn's default length of the accept queue (`--backlog`), for each process here
BACKLOG = 2048
STOP_TIMEOUT_S = 30.0
# linux/prctl.h
_PR_SET_PDEATHSIG = 1


def reuse_port_supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


def bound(host: str, port: int, *, reuse_port: bool = True) -> socket.socket:
    """A TCP socket bound to HOST:PORT. SO_REUSEADDR: connections of a stopped service in
    TIME_WAIT do not count. Without `reuse_port`, the kernel refuses it even beside sockets
    that set SO_REUSEPORT (socket(7)): a probe of whether the address is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def end_with_parent(parent: int) -> None:
    """SIGTERM to this process when its parent ends (the thread that started it, here the
    parent's main thread); exits at once when the parent `parent` is gone already. Linux
    (prctl(2)), like the rest of flashmark."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the request above
        os._exit(0)


def _serve_one(app: str, host: str, port: int, log_level: str, parent: int) -> None:
    """One server process (spawned): its own listening socket, the app made by `app`."""
    end_with_parent(parent)
    sock = bound(host, port)
    config = uvicorn.Config(
        app,
        factory=True,
        http=PROTOCOL,
        log_level=log_level,
        backlog=BACKLOG,
        timeout_graceful_shutdown=int(STOP_TIMEOUT_S),
    )
    uvicorn.Server(config).run(sockets=[sock])


def serve_processes(app: str, host: str, port: int, workers: int, log_level: str) -> None:
    """Run `workers` processes serving the app factory `app` ("module:function") until a
    stop signal; OSError if the address cannot be bound."""
    reserved = bound(host, port)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked pool
    stopping = threading.Event()

    def stop(signum: int, frame: object) -> None:
        stopping.set()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)

    def start() -> BaseProcess:
        process = context.Process(target=_serve_one, args=(app, host, port, log_level, os.getpid()))
        process.start()
        return process

    processes = [start() for _ in range(workers)]
    try:
        while not stopping.wait(0.5):
            for index, process in enumerate(processes):
                if not process.is_alive() and not stopping.is_set():
                    process.join()
                    processes[index] = start()
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn finishes the requests under way
        for process in processes:
            process.join(STOP_TIMEOUT_S)
            if process.is_alive():
                process.kill()
                process.join()
        reserved.close()
