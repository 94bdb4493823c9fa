"""What leaves the machine with `flashmark upload`: a result without serial numbers, host
names or paths (pure; the salt comes from the caller).

Identifying values are replaced by salted hashes (HMAC-SHA256 with a salt kept on this machine,
`upload.py`): the same card, host or folder gives the same replacement in every upload from
here, so results of one card can still be told apart from those of another card of the same
model, while nobody without the salt can recover or confirm the original (a card serial has
only 2^32 values: an unsalted hash could be reversed by trying them all).

Replaced: the host name; the card's serial number (probe devices' `serial` and the CID's PSN),
and the CID's raw register with its serial and CRC bytes zeroed (the CRC is computed over the
serial); every absolute path outside the system's own trees (/dev, /sys, /proc, /usr, ...),
wherever it occurs, also inside fio job files, commands and messages, with the same
replacement for the same path. Kept: what makes the result useful (the device model, the CID's
maker/OEM/product/revision/date, the board, kernel, file system, mount options, device nodes).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# Paths under these top-level folders name the system, not the user; kept as they are.
_SYSTEM = ("dev", "sys", "proc", "usr", "bin", "sbin", "lib", "lib64", "etc", "opt")
# An absolute path: '/' not preceded by a word character, a dot or another path character
# or ':' (so "MB/s", "flashmark.result/1" and URLs are left alone), up to a space or
# punctuation that does not occur in folder names people use.
_PATH = re.compile(r"(?<![\w.~/:-])/(?:[^\s,;:'\"()\[\]{}<>=]+)")
# CID hex digits (32 = 128 bits; digit i holds bits 127-4i..124-4i): PSN is [55:24] =
# digits 18..25, CRC7 + end bit [7:0] = digits 30..31 (SD Physical Layer Simplified Spec 5.2).
_CID_SERIAL = slice(18, 26)
_REPLACED = re.compile(r"/path-[0-9a-f]{16}")
_CID_CRC = slice(30, 32)


@dataclass(frozen=True)
class Replacement:
    what: str  # "host name", "card serial", "path"
    original: str
    replacement: str


@dataclass(frozen=True)
class Anonymised:
    document: dict[str, Any]
    replacements: tuple[Replacement, ...]


def salted(salt: bytes, kind: str, value: str) -> str:
    digest = hmac.new(salt, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()
    return digest[:16]


def anonymise(document: dict[str, Any], salt: bytes) -> Anonymised:
    """A copy of a result document with identifying values replaced; the input is unchanged."""
    result = copy.deepcopy(document)
    replaced: dict[tuple[str, str], str] = {}

    def replace(what: str, value: str, prefix: str) -> str:
        key = (what, value)
        if key not in replaced:
            replaced[key] = f"{prefix}-{salted(salt, what, value)}"
        return replaced[key]

    host = result.get("host")
    if isinstance(host, dict) and isinstance(host.get("hostname"), str) and host["hostname"]:
        hostname = host["hostname"]
        host["hostname"] = replace("host name", hostname, "host")
    else:
        hostname = None

    probe = result.get("probe")
    for device in probe.get("devices", []) if isinstance(probe, dict) else []:
        if not isinstance(device, dict):
            continue
        if isinstance(device.get("serial"), str) and device["serial"]:
            device["serial"] = replace("card serial", device["serial"], "serial")
        card = device.get("card")
        cid = card.get("cid") if isinstance(card, dict) else None
        if isinstance(cid, dict):
            if isinstance(cid.get("serial"), int) and not isinstance(cid["serial"], bool):
                # The field is a number in the schema: 0 says "removed"; the probe's own
                # `serial` above carries the salted hash that recognises the card.
                replace("card serial", f"{cid['serial']:#010x}", "serial")
                cid["serial"] = 0
            raw = cid.get("raw")
            if isinstance(raw, str) and re.fullmatch(r"[0-9a-fA-F]{32}", raw):
                digits = list(raw)
                digits[_CID_SERIAL] = "0" * 8
                digits[_CID_CRC] = "00"
                cid["raw"] = "".join(digits)

    # Paths the document names in fields, replaced whole first: they may hold spaces, which
    # the pattern below stops at.
    known = sorted(
        {p for p in _named_paths(result) if p.startswith("/") and _path(p, replace) != p},
        key=len,
        reverse=True,
    )

    def text(value: str) -> str:
        if hostname and hostname in value and len(hostname) >= 3:
            value = value.replace(hostname, replace("host name", hostname, "host"))
        for path in known:
            if path in value:
                value = value.replace(path, _path(path, replace))
        return _PATH.sub(lambda match: _path(match.group(0), replace), value)

    result = _walk(result, text)
    return Anonymised(
        document=result,
        replacements=tuple(
            Replacement(what, original, replacement)
            for (what, original), replacement in replaced.items()
        ),
    )


def _path(path: str, replace: Callable[[str, str, str], str]) -> str:
    top = path[1:].split("/", 1)[0]
    if top in _SYSTEM or path == "/" or _REPLACED.fullmatch(path):
        return path
    return "/" + replace("path", path, "path")


def _named_paths(document: dict[str, Any]) -> list[str]:
    found: list[Any] = []
    target = document.get("target")
    if isinstance(target, dict):
        found += [target.get(name) for name in ("given", "path", "folder", "mount_point")]
    probe = document.get("probe")
    if isinstance(probe, dict):
        found += [probe.get("target"), probe.get("resolved")]
        environment = probe.get("environment")
        if isinstance(environment, dict):
            found.append(environment.get("mount_point"))
    return [value for value in found if isinstance(value, str)]


def _walk(value: Any, text: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list):
        return [_walk(item, text) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item, text) for key, item in value.items()}
    return value
