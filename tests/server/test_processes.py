"""`flashmark serve --workers 2` on PostgreSQL: both processes take connections (each listens on
its own SO_REUSEPORT socket), and SIGTERM to the parent stops them all."""

from __future__ import annotations

import http.client
import json
import os
import signal
import time
import urllib.parse

import psutil
import pytest

pytestmark = pytest.mark.postgres
CONNECTIONS = 16  # all on one of 2 sockets by chance: 2 * 2^-16


def test_two_processes_share_the_connections_and_stop_together(pg_server, start_server):
    server = start_server(pg_server.create("processes"), "--workers", "2")
    port = urllib.parse.urlsplit(server.url).port
    assert port is not None
    parent = psutil.Process(server.process.pid)
    deadline = time.monotonic() + 60
    while len(_listening(parent, port)) < 2:  # the first one up answered start_server
        assert time.monotonic() < deadline, _listening(parent, port)
        time.sleep(0.05)
    connections = [
        http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(CONNECTIONS)
    ]
    try:
        for connection in connections:  # kept open: each stays with the process that took it
            connection.request("GET", "/api/v1")
            answer = connection.getresponse()
            assert answer.status == 200 and "accepted_schemas" in json.loads(answer.read())
        taken = {
            child.pid: sum(
                1
                for held in child.net_connections(kind="tcp")
                if held.status == psutil.CONN_ESTABLISHED and held.laddr.port == port
            )
            for child in parent.children(recursive=True)
        }
        serving = [count for count in taken.values() if count]
        assert len(serving) == 2 and sum(serving) == CONNECTIONS, taken
    finally:
        for connection in connections:
            connection.close()
    children = parent.children(recursive=True)
    os.kill(server.process.pid, signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0, server.log.read_text()
    _, alive = psutil.wait_procs(children, timeout=30)
    assert not alive


def _listening(parent: psutil.Process, port: int) -> list[int]:
    return [
        child.pid
        for child in parent.children(recursive=True)
        if any(
            held.status == psutil.CONN_LISTEN and held.laddr.port == port
            for held in child.net_connections(kind="tcp")
        )
    ]
