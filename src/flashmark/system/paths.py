"""A TARGET argument as a path, and what it names: the one error every command gives for a
missing or forbidden target."""

from __future__ import annotations

import os
from pathlib import Path

from flashmark.errors import (
    TargetNotFound,
    TargetPermissionDenied,
)


def stat_target(given: str, missing: str) -> tuple[Path, os.stat_result]:
    """The path TARGET names and what it is (following links), or the one-line error every
    command gives: "{given}: no such {missing}" or "{given}: permission denied"."""
    path = Path(given).expanduser()
    try:
        return path, path.stat()
    except FileNotFoundError:
        raise TargetNotFound(f"{given}: no such {missing}") from None
    except PermissionError:
        raise TargetPermissionDenied(f"{given}: permission denied") from None
