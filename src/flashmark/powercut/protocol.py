"""The wire protocol between a board under test and its flush recorder (`powercut listen`):
TCP, one JSON object a line (at most MAX_LINE bytes), HMAC-SHA256 (RFC 2104) with a shared
token that never crosses it: no forgery, replay or reordering; not encrypted (nothing secret).

    recorder -> board   {"hello": "flashmark-powercut/1", "challenge": <32 random bytes, hex>}
    board -> recorder   {"nonce": <32 random bytes, hex>, "proof": HMAC(token, "board" + c + n)}
    recorder -> board   {"proof": HMAC(token, "recorder" + c + n)}, or {"refused": ...}
    then {"n": count, "body": {...}, "mac": HMAC(HMAC(token, "session" + c + n), role + n + body)}
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flashmark.errors import UsageError
from flashmark.powercut.recorder import RecorderFailed

PROTOCOL = "flashmark-powercut/1"
TOKEN_ENV = "FLASHMARK_POWERCUT_TOKEN"
MIN_TOKEN_CHARS = 16
MAX_LINE = 64 << 20  # a fetched run's entries come as one line
DEFAULT_PORT = 7468


class ProtocolError(RecorderFailed):
    """The other end does not speak this protocol, or does not know the token
    (`authentication`: trying again will not help)."""

    def __init__(self, message: str, *, authentication: bool = False) -> None:
        super().__init__(message)
        self.authentication = authentication


def read_token(path: Path | None, environ: Mapping[str, str] | None = None) -> bytes:
    """The shared token: the file's first line, else FLASHMARK_POWERCUT_TOKEN.

    A token file others can read is refused, as ssh refuses such a key file."""
    env = os.environ if environ is None else environ
    if path is not None:
        try:
            mode = path.stat().st_mode
            text = path.read_text().strip().splitlines()
        except OSError as error:
            raise UsageError(f"cannot read the token file {path}: {error.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(
                f"the token file {path} can be read by others: `chmod 600 {path}` first"
            )
        token = text[0].strip() if text else ""
    else:
        token = env.get(TOKEN_ENV, "").strip()
        if not token:
            raise UsageError(
                f"the recorder needs the shared token: --token-file FILE, or {TOKEN_ENV}"
            )
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(f"the token must have at least {MIN_TOKEN_CHARS} characters")
    return token.encode()


def parse_address(text: str, default_host: str | None = None) -> tuple[str, int]:
    """HOST:PORT ([v6]:PORT for IPv6); a bare PORT takes `default_host`."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = "", text
    host = host.strip("[]")
    if not host:
        if default_host is None:
            raise UsageError(f"{text!r} needs a host: HOST:PORT")
        host = default_host
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"{text!r}: the port must be a number from 1 to 65535")
    return host, int(port)


class Channel:
    """An authenticated connection: send and receive numbered, MAC'd messages."""

    def __init__(self, sock: socket.socket, reader: Any, key: bytes, role: str, peer: str) -> None:
        self.sock = sock
        self._reader = reader
        self._key = key
        self._role = role
        self._peer = peer
        self._sent = 0
        self._received = 0

    def send(self, body: Mapping[str, Any]) -> None:
        payload = _canonical(body)
        mac = _mac(self._key, f"{self._role}:{self._sent}:".encode() + payload)
        line = json.dumps({"n": self._sent, "body": body, "mac": mac}) + "\n"
        self.sock.sendall(line.encode())
        self._sent += 1

    def receive(self) -> dict[str, Any]:
        message = _read_line(self._reader)
        try:
            number, body, mac = message["n"], message["body"], message["mac"]
        except (KeyError, TypeError):
            raise ProtocolError("a message without its number, body or MAC") from None
        expected = _mac(self._key, f"{self._peer}:{number}:".encode() + _canonical(body))
        if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
            raise ProtocolError(
                "a message whose MAC does not hold (another token, or forged)", authentication=True
            )
        if number != self._received:
            raise ProtocolError(f"message {number} where {self._received} was due (a replay?)")
        if not isinstance(body, dict):
            raise ProtocolError("a message body that is not an object")
        self._received += 1
        return body

    def close(self) -> None:
        self._reader.close()
        self.sock.close()


BOARD, RECORDER = "board", "recorder"


def board_handshake(sock: socket.socket, token: bytes) -> Channel:
    reader = sock.makefile("rb")
    try:
        hello = _read_line(reader)
        if not isinstance(hello, dict) or hello.get("hello") != PROTOCOL:
            raise ProtocolError(f"the other end is not a flashmark recorder ({PROTOCOL})")
        challenge = _hex(hello.get("challenge"))
        nonce = secrets.token_bytes(32)
        proof = _mac(token, BOARD.encode() + challenge + nonce)
        sock.sendall((json.dumps({"nonce": nonce.hex(), "proof": proof}) + "\n").encode())
        answer = _read_line(reader)
        if isinstance(answer, dict) and "refused" in answer:
            raise ProtocolError(
                "the recorder refused this board's token (check --token-file)",
                authentication=True,
            )
        expected = _mac(token, RECORDER.encode() + challenge + nonce)
        if not isinstance(answer, dict) or not hmac.compare_digest(
            str(answer.get("proof", "")), expected
        ):
            raise ProtocolError(
                "the recorder does not know the token (check --token-file)", authentication=True
            )
    except BaseException:
        reader.close()
        raise
    return Channel(sock, reader, _session_key(token, challenge, nonce), BOARD, RECORDER)


def recorder_handshake(sock: socket.socket, token: bytes) -> Channel:
    reader = sock.makefile("rb")
    try:
        challenge = secrets.token_bytes(32)
        hello = {"hello": PROTOCOL, "challenge": challenge.hex()}
        sock.sendall((json.dumps(hello) + "\n").encode())
        reply = _read_line(reader)
        if not isinstance(reply, dict):
            raise ProtocolError("the board's answer is not an object")
        nonce = _hex(reply.get("nonce"))
        expected = _mac(token, BOARD.encode() + challenge + nonce)
        if not hmac.compare_digest(str(reply.get("proof", "")), expected):
            # Said, so that the board stops at once instead of trying again and again.
            sock.sendall((json.dumps({"refused": "another token"}) + "\n").encode())
            raise ProtocolError("the board does not know the token", authentication=True)
        proof = _mac(token, RECORDER.encode() + challenge + nonce)
        sock.sendall((json.dumps({"proof": proof}) + "\n").encode())
    except BaseException:
        reader.close()
        raise
    return Channel(sock, reader, _session_key(token, challenge, nonce), RECORDER, BOARD)


def _session_key(token: bytes, challenge: bytes, nonce: bytes) -> bytes:
    return hmac.new(token, b"session" + challenge + nonce, hashlib.sha256).digest()


def _mac(key: bytes, data: bytes) -> str:
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def _canonical(body: Any) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def _hex(value: Any) -> bytes:
    try:
        data = bytes.fromhex(str(value))
    except ValueError:
        raise ProtocolError("a handshake value that is not hex") from None
    if len(data) != 32:
        raise ProtocolError("a handshake value of the wrong length")
    return data


def _read_line(reader: Any) -> Any:
    line = reader.readline(MAX_LINE + 1)
    if not line:
        raise ProtocolError("the connection closed")
    if len(line) > MAX_LINE or not line.endswith(b"\n"):
        raise ProtocolError("a message too long, or cut short")
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProtocolError("a message that is not JSON") from None
