"""What looks like an identifier in a text, and the names known to identify this user (pure).

Every text an upload sends is screened here once more: it is refused when it holds the shape
of an identifier (a path, a network or e-mail address, a MAC, a run of 8 or more hex digits
such as a serial or CID, a test file's name, a control character) or a known name (this
machine's host and user names, those the document holds) as a whole word, matched with its
case: a host called "pi" leaves "Raspberry Pi 5" alone.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# (what, pattern): the shapes of identifiers, checked in this order; the first found is named.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # scheme://host... (http, smb, nfs, ssh URLs name a host, often a user)
    ("an address", re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")),
    # user@host, user@host:/share, e-mail
    ("a user or e-mail address", re.compile(r"@")),
    # /home/alice, /dev/disk/by-id/..., //server/share, host:/export, ~/card ("MB/s", "A1/A2"
    # and "GNU/Linux" have a word character before the slash)
    ("a path", re.compile(r"(?<![\w.])/[\w.~$]")),
    ("a Windows path", re.compile(r"\\")),
    ("an IPv4 address", re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])")),
    # Full (8 groups) or compressed (with "::") IPv6 address (RFC 4291 2.2).
    (
        "an IPv6 address",
        re.compile(
            r"(?i)(?<![0-9a-z:])(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){7}"
            r"|(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?)"
            r"(?![0-9a-z:])"
        ),
    ),
    # 6 bytes with ':' or '-' (IEEE 802), or Cisco's three dotted groups.
    (
        "a MAC address",
        re.compile(
            r"(?i)(?<![0-9a-z:-])(?:[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}"
            r"|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})(?![0-9a-z:-])"
        ),
    ),
    # Serial numbers, CIDs, UUIDs, hashes: 8 or more hex digits in a row (an all-zero one, the
    # counterfeit sign "serial number 0x00000000", names no card).
    ("a serial number", re.compile(r"(?i)(?<![0-9a-z])(?:0x)?(?!0+(?![0-9a-z]))[0-9a-f]{8,}")),
    # A FAT/exFAT volume serial, e.g. the 3F2A-1B4C of /media/alice/3F2A-1B4C.
    ("a volume serial", re.compile(r"(?i)(?<![0-9a-z-])[0-9a-f]{4}-[0-9a-f]{4}(?![0-9a-z-])")),
    # flashmark's test files: .flashmark-PID-...tmp (docs/leftovers.md)
    ("a test file name", re.compile(r"\.flashmark-")),
)
# Read in a document's JSON text (which escapes quotes and control characters as \" and \n):
# a folder named after its user, a network source's user and host (user@host:/share,
# host:/export, //host/share).
_USER_FOLDER = re.compile(r"/(?:home|Users|media|run/media|var/home)/([^/\s\"\\]+)")
_NETWORK_SOURCE = re.compile(r":/(?!/)|//")
_BEFORE_SOURCE = re.compile(r"[^\s\"\\'=(,]*\Z")
_HOST = re.compile(r"[^/\s\"\\]*")


@dataclass(frozen=True)
class Known:
    """Names that identify this user or machine, matched as whole words with their case."""

    names: frozenset[str] = frozenset()

    def with_names(self, names: Iterable[str]) -> Known:
        added = {name.strip() for name in names if isinstance(name, str)}
        return Known(self.names | {name for name in added if name})

    def found_in(self, text: str) -> str | None:
        pattern = _words(self.names)
        match = None if pattern is None else pattern.search(text)
        return None if match is None else match.group(0)


@functools.lru_cache(maxsize=64)
def _words(names: frozenset[str]) -> re.Pattern[str] | None:
    """Any of `names` as a whole word (not inside a longer run of letters and digits)."""
    if not names:
        return None
    longest_first = sorted(names, key=len, reverse=True)
    words = "|".join(re.escape(name) for name in longest_first)
    return re.compile(rf"(?<![A-Za-z0-9])(?:{words})(?![A-Za-z0-9])")


def identifier_in(text: str, known: Known) -> str | None:
    """What identifier-like content `text` holds ("a path", "a known name"), or None."""
    for char in text:
        if unicodedata.category(char)[0] == "C":
            return "a control character"
    for what, pattern in _SHAPES:
        if pattern.search(text):
            return what
    if known.found_in(text) is not None:
        return "a host or user name"
    return None


def names_in(document: Mapping[str, Any]) -> set[str]:
    """The identifying names a result document holds, to keep them out of its kept texts too:
    the host name, the devices' serial numbers and the CID's, the card identity of a surface
    scan, a health reading's device key and CID, user names in folders (/home/NAME,
    /media/NAME) and network mount sources."""
    found: set[str] = set()
    host = document.get("host")
    if isinstance(host, Mapping):
        found.add(str(host.get("hostname") or ""))
    target = document.get("target")
    if isinstance(target, Mapping):
        found.add(str(target.get("identity") or ""))
    probe = document.get("probe")
    devices = probe.get("devices") if isinstance(probe, Mapping) else None
    for device in devices if isinstance(devices, list) else ():
        if not isinstance(device, Mapping):
            continue
        found.add(str(device.get("serial") or ""))
        card = device.get("card")
        cid = card.get("cid") if isinstance(card, Mapping) else None
        serial = cid.get("serial") if isinstance(cid, Mapping) else None
        if isinstance(serial, int) and not isinstance(serial, bool) and serial:
            found.update((f"{serial:08x}", f"0x{serial:08x}"))
    # A health reading's: the key its history finds the device by ("serial:MODEL:SERIAL",
    # "cid:HEX") and its card's whole CID.
    key = document.get("device_key")
    if isinstance(key, str) and key.startswith(("serial:", "cid:")):
        found.add(key.rpartition(":")[2])
    found.add(str(document.get("card_cid") or ""))
    found.update(_names_in_paths(json.dumps(document)))
    found.discard("")
    return found


def _names_in_paths(text: str) -> set[str]:
    """User and host names in the paths and network sources of a JSON text."""
    found = {match.group(1) for match in _USER_FOLDER.finditer(text)}
    for match in _NETWORK_SOURCE.finditer(text):
        start = match.start()
        if match.group() == ":/":  # [user@]host:/share
            before = _BEFORE_SOURCE.search(text, max(0, start - 256), start)
            user, _, host = (before.group() if before else "").rpartition("@")
            found.update((user, host))
        elif start > 0 and text[start - 1] in ' "':  # //host/share, at a value's or word's start
            host_match = _HOST.match(text, start + 2)
            found.add(host_match.group() if host_match else "")
    return found
