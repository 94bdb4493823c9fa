"""The HTTP protocol `flashmark serve` runs: uvicorn's own, with Nagle's algorithm off on every
connection. A socket uvicorn binds itself keeps `proto` 0, and asyncio sets TCP_NODELAY only
on sockets that say IPPROTO_TCP (uvicorn issue #3149, uvicorn 0.54): an answer's body would
then wait for the client's delayed ACK, 40 ms on every request after a connection's first.
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.auto import AutoHTTPProtocol


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's protocol (httptools when installed, else h11) with TCP_NODELAY set."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


# For uvicorn's `http` setting, the class: every uvicorn from pyproject's floor (0.30) on takes
# one, and it reaches worker processes pickled by name. An import string is read only by newer
# ones (Debian 13's uvicorn 0.32 looked it up among its own protocol names: KeyError).
PROTOCOL = NoDelayHTTPProtocol
