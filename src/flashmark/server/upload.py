"""The upload client of `flashmark upload` (standard library only: it runs on a core install).

outgoing.py builds what is sent; this adds what the machine knows (host and user names kept
out of every text, the service's accepted kinds), the HTTP exchange, and with `--link-card`
the card link: HMAC-SHA256 of the card's identity and the service's address under a salt
private to this user ($XDG_STATE_HOME/flashmark/upload-salt), so a service can tell two uploads
of one card apart from others but never recover a serial (docs/server.md, "The same card").
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import hmac
import json
import os
import secrets
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.codec import to_text
from flashmark.errors import ExitStatus, FlashmarkError, UsageError
from flashmark.history.entries import StoredResult
from flashmark.server.identifiers import Known
from flashmark.server.intake import CARD_LINK_DIGITS
from flashmark.server.outgoing import ALLOW_LISTS, NotUploadable, card_identity, outgoing
from flashmark.system.places import state_home

TOKEN_ENV = "FLASHMARK_TOKEN"
TIMEOUT_S = 30.0
SALT_FILE = Path("flashmark") / "upload-salt"
# Accounts that name no person: their names are not kept out of texts ("root" is a word of
# many a kernel's and a tool's messages).
_SYSTEM_USERS = frozenset({"root", "nobody"})


class UploadFailed(FlashmarkError):
    """The service could not be reached, or refused the result (its message is kept);
    `status` is its HTTP status when it answered one."""

    exit_status = ExitStatus.SERVICE

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Uploaded:
    id: int
    url: str
    created: bool


def machine_names(environ: Mapping[str, str] | None = None) -> set[str]:
    """This machine's host name (and its first label) and the user names running flashmark,
    as the texts of a result might quote them."""
    env = os.environ if environ is None else environ
    host = socket.gethostname()
    names = {host, host.split(".", 1)[0]}
    with contextlib.suppress(KeyError, OSError):  # no user name for this uid (a container)
        names.add(getpass.getuser())
    names.add(env.get("SUDO_USER", ""))  # the user behind `sudo flashmark upload`
    return {name for name in names if name and name not in _SYSTEM_USERS}


def salt_path(environ: Mapping[str, str] | None = None) -> Path:
    return state_home(environ, needed_for="the upload salt") / SALT_FILE


def load_salt(path: Path) -> bytes:
    """The salt at `path`, made (0600) when missing."""
    try:
        text = path.read_text(encoding="ascii").strip()
        salt = bytes.fromhex(text)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read the upload salt {path}: {error}") from None
    else:
        if len(salt) < 16:
            raise UsageError(f"the upload salt {path} is too short: delete it to make a new one")
        return salt
    salt = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another upload made it meanwhile: use that one
        return load_salt(path)
    except OSError as error:
        raise UsageError(f"cannot keep the upload salt in {path}: {error}") from None
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(salt.hex() + "\n")
    return salt


def service_origin(server: str) -> str:
    """scheme://host[:port] of --server, lower case: what a card link is made for."""
    parts = urllib.parse.urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--server must be an http:// or https:// address, not {server!r}")
    return f"{parts.scheme}://{parts.netloc}".lower()


def card_link(salt: bytes, server: str, identity: str) -> str:
    """The opaque link of one card's uploads to one service (see the module's text)."""
    message = "\0".join(("flashmark card link 1", service_origin(server), identity))
    digest = hmac.new(salt, message.encode("utf-8"), hashlib.sha256).hexdigest()
    return digest[:CARD_LINK_DIGITS]


def endpoint(server: str, path: str = "/api/v1/results") -> str:
    service_origin(server)  # refuses what is not an http(s) address
    return server.rstrip("/") + path


@dataclass(frozen=True)
class Skipped:
    """A saved result an upload leaves out, and why. `damaged`: its kind is uploaded, but the
    allow-list refuses a field of this document (a failure, not a choice of kinds)."""

    entry: StoredResult
    why: str
    damaged: bool


@dataclass(frozen=True)
class UploadPlan:
    """What an upload sends (each result with its exact bytes) and what it leaves out."""

    bodies: tuple[tuple[StoredResult, bytes], ...]
    skipped: tuple[Skipped, ...]


def upload_bodies(
    entries: Sequence[StoredResult],
    chosen: Mapping[str, str],
    *,
    link_to: str | None,
    note: Callable[[str], None],
    taken: Sequence[str] | None = None,
) -> UploadPlan:
    """What would be sent of each saved result: its allow-listed document (outgoing.py),
    without this machine's names, with what the user chose to add (`chosen`: campaign and
    board label, campaign_choices) and a card_link for the service `link_to` when given (a
    result that names no card gets none, said through `note`). A result of a kind flashmark
    does not upload, or the service does not take (`taken`: its accepted schemas, when
    known), or whose document cannot be sent, is skipped: the rest still go."""
    known = Known().with_names(machine_names())
    bodies: list[tuple[StoredResult, bytes]] = []
    skipped: list[Skipped] = []
    for entry in entries:
        schema = entry.document.get("schema")
        if schema not in ALLOW_LISTS:
            kinds = ", ".join(
                name.partition("/")[0].removeprefix("flashmark.") for name in ALLOW_LISTS
            )
            why = f"{entry.kind} results are not uploaded (flashmark uploads {kinds})"
            skipped.append(Skipped(entry, why, damaged=False))
            continue
        if taken is not None and schema not in taken:
            why = f"the service takes {', '.join(taken) or 'no results'}, not {schema}"
            skipped.append(Skipped(entry, why, damaged=False))
            continue
        added = dict(chosen)
        if link_to is not None:
            identity = card_identity(entry.document)
            if identity is None:
                note(f"run {entry.id}: no card serial or CID to link: no card_link")
            else:
                added["card_link"] = card_link(load_salt(salt_path()), link_to, identity)
        try:
            document = outgoing(entry.document, known, added)
        except NotUploadable as error:
            skipped.append(Skipped(entry, str(error), damaged=True))
            continue
        bodies.append((entry, body_of(document)))
    return UploadPlan(tuple(bodies), tuple(skipped))


def body_of(document: Mapping[str, Any]) -> bytes:
    """Exactly the bytes sent, and what --dry-run prints: JSON as flashmark writes it."""
    return to_text(document).encode("utf-8")


def accepted_schemas(server: str, timeout_s: float = TIMEOUT_S) -> tuple[str, ...]:
    """The result schemas the service takes (its GET /api/v1)."""
    request = urllib.request.Request(endpoint(server, "/api/v1"), headers=_ACCEPT_JSON)
    answer = _exchange(server, request, timeout_s, "answered")
    schemas = answer.get("accepted_schemas")
    if not isinstance(schemas, list) or not all(isinstance(s, str) for s in schemas):
        raise _not_a_service(server)
    return tuple(schemas)


def campaign_answer(server: str, name: str, timeout_s: float = TIMEOUT_S) -> dict[str, Any] | None:
    """The service's GET /api/v1/campaigns/NAME (flashmark.server.campaign reads it), or None
    when it has no such campaign."""
    path = "/api/v1/campaigns/" + urllib.parse.quote(name, safe="")
    request = urllib.request.Request(endpoint(server, path), headers=_ACCEPT_JSON)
    try:
        return _exchange(server, request, timeout_s, "answered")
    except UploadFailed as error:
        if error.status == 404:
            return None
        raise


def send(server: str, token: str, body: bytes, timeout_s: float = TIMEOUT_S) -> Uploaded:
    request = urllib.request.Request(
        endpoint(server),
        data=body,
        method="POST",
        headers={
            **_ACCEPT_JSON,
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
        },
    )
    answer = _exchange(server, request, timeout_s, "refused the result")
    try:
        return Uploaded(int(answer["id"]), str(answer["url"]), bool(answer["created"]))
    except (ValueError, KeyError, TypeError) as error:
        raise _not_a_service(server, error) from None


_ACCEPT_JSON = {"Accept": "application/json"}


def _exchange(
    server: str, request: urllib.request.Request, timeout_s: float, refusal: str
) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise UploadFailed(f"{server} {refusal}: {_problem(error)}", error.code) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise UploadFailed(f"cannot reach {server}: {reason}") from None
    except ValueError as error:
        raise _not_a_service(server, error) from None
    if not isinstance(answer, dict):
        raise _not_a_service(server)
    return answer


def _not_a_service(server: str, error: Exception | None = None) -> UploadFailed:
    why = "" if error is None else f": {error}"
    return UploadFailed(f"{server} gave an answer that is not a flashmark service's{why}")


def _problem(error: urllib.error.HTTPError) -> str:
    try:
        problem = json.loads(error.read())
        return f"{problem['detail']} (HTTP {error.code} {problem['title']})"
    except (ValueError, KeyError, TypeError, OSError):
        return f"HTTP {error.code} {error.reason}"
