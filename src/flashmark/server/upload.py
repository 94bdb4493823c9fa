"""The upload client of `flashmark upload` (standard library only: it runs on a core install).

The salt that makes anonymised values recognisable (anonymise.py) is 32 random bytes kept in
$XDG_STATE_HOME/flashmark/upload-salt (default ~/.local/state), private to the user (0600),
made on the first upload. Losing it only means later uploads of the same card get another
replacement.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.errors import ExitStatus, FlashmarkError, UsageError
from flashmark.places import state_home

TOKEN_ENV = "FLASHMARK_TOKEN"
TIMEOUT_S = 30.0
SALT_FILE = Path("flashmark") / "upload-salt"


class UploadFailed(FlashmarkError):
    """The service could not be reached, or refused the result (its message is kept)."""

    exit_status = ExitStatus.FAILURE


@dataclass(frozen=True)
class Uploaded:
    id: int
    url: str
    created: bool


def salt_path(environ: Mapping[str, str] | None = None) -> Path:
    return state_home(environ, needed_for="the upload salt") / SALT_FILE


def load_salt(path: Path) -> bytes:
    """The salt at `path`, made (0600) when missing."""
    try:
        text = path.read_text(encoding="ascii").strip()
        return bytes.fromhex(text)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read the upload salt {path}: {error}") from None
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


def endpoint(server: str) -> str:
    parts = urllib.parse.urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--server must be an http:// or https:// address, not {server!r}")
    return server.rstrip("/") + "/api/v1/results"


def body_of(document: Mapping[str, Any]) -> bytes:
    """Exactly the bytes sent (what --dry-run prints)."""
    return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")


def send(server: str, token: str, body: bytes, timeout_s: float = TIMEOUT_S) -> Uploaded:
    request = urllib.request.Request(
        endpoint(server),
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read())
            return Uploaded(int(answer["id"]), str(answer["url"]), response.status == 201)
    except urllib.error.HTTPError as error:
        raise UploadFailed(f"{server} refused the result: {_problem(error)}") from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise UploadFailed(f"cannot reach {server}: {reason}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise UploadFailed(
            f"{server} gave an answer that is not a flashmark service's: {error}"
        ) from None


def _problem(error: urllib.error.HTTPError) -> str:
    try:
        problem = json.loads(error.read())
        return f"{problem['detail']} (HTTP {error.code} {problem['title']})"
    except (ValueError, KeyError, TypeError, OSError):
        return f"HTTP {error.code} {error.reason}"
