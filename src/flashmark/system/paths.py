"""A TARGET argument as a path, and what it names: the one error every command gives for a
missing or forbidden target."""

from __future__ import annotations

import os
from pathlib import Path

from flashmark.errors import (
    TargetNotFound,
    TargetPermissionDenied,
)
from flashmark.system.private_folder import refuse_foreign_links


def stat_target(given: str, missing: str) -> tuple[Path, os.stat_result]:
    """The path TARGET names and what it is (following links), or the one-line error every
    command gives: "{given}: no such {missing}" or "{given}: permission denied"; a path
    through another user's symlink is refused (private_folder.refuse_foreign_links)."""
    path = Path(given).expanduser()
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TargetNotFound(f"{given}: no such {missing}") from None
    except PermissionError:
        raise TargetPermissionDenied(f"{given}: permission denied") from None
    refuse_foreign_links(given)
    return path, status
