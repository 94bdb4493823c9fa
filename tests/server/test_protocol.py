"""The HTTP protocol of `flashmark serve` turns Nagle's algorithm off on every connection, also
on a listening socket made the way uvicorn makes it for `--workers N` (its `proto` left 0, so
asyncio does not set TCP_NODELAY itself: uvicorn issue #3149)."""

from __future__ import annotations

import asyncio
import pickle
import socket

import pytest

pytest.importorskip("uvicorn", reason="the server extra is not installed")

from uvicorn.config import Config
from uvicorn.server import ServerState

from flashmark.server.protocol import PROTOCOL


async def _app(scope, receive, send):  # the smallest ASGI app: never called here
    raise AssertionError("no request is sent")


def test_every_connection_has_tcp_nodelay_on_a_socket_bound_like_uvicorns():
    config = Config(_app, http=PROTOCOL, log_level="warning")
    config.load()

    async def accepted_nodelay() -> int:
        loop = asyncio.get_running_loop()
        listener = socket.socket(family=socket.AF_INET)  # as uvicorn's Config.bind_socket
        listener.bind(("127.0.0.1", 0))
        seen: list[int] = []

        def protocol() -> asyncio.Protocol:
            made = config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=ServerState(), app_state={}, _loop=loop
            )
            original = made.connection_made

            def connection_made(transport: asyncio.BaseTransport) -> None:
                original(transport)
                sock = transport.get_extra_info("socket")
                seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

            made.connection_made = connection_made  # type: ignore[method-assign]
            return made

        server = await loop.create_server(protocol, sock=listener)
        try:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            for _ in range(200):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()
        finally:
            server.close()
            await server.wait_closed()
        assert seen, "the connection was not accepted"
        return seen[0]

    assert asyncio.run(accepted_nodelay()) == 1


def test_the_protocol_is_given_as_a_class_that_reaches_worker_processes():
    """uvicorn's `http` setting as an import string is read only by newer uvicorns: 0.30 (the
    floor) and Debian 13's 0.32 look it up among their own protocol names (KeyError at start).
    A class every one takes, and worker processes get it pickled by name."""
    assert isinstance(PROTOCOL, type) and issubclass(PROTOCOL, asyncio.Protocol)
    assert pickle.loads(pickle.dumps(PROTOCOL)) is PROTOCOL
