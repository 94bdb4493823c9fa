"""Where a result goes when the history cannot take it (`keep_unsaved`): a recovery file in the
first place that takes it: $XDG_STATE_HOME/flashmark/unsaved/ (XDG Base Directory
Specification), /var/tmp (survives a reboot, FHS 3.0 5.15), the temporary folder, the current
folder; in shared folders with unique private names (mkstemp). `flashmark import` reads it back.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from flashmark.codec import to_text
from flashmark.errors import EnvironmentProblem, HistoryError
from flashmark.system.durable_files import write_new
from flashmark.system.places import state_home

UNSAVED_FOLDER = Path("flashmark") / "unsaved"
# In the temporary folder (shared by every user) the files are named, not foldered: mkstemp
# makes each name unique and private (0600), which a shared fixed folder name would not.
_TEMP_PREFIX = "flashmark-unsaved-"
# /var/tmp survives a reboot, /tmp may not (FHS 3.0, 5.15); $TMPDIR goes between them.
SHARED_FOLDERS = (Path("/var/tmp"), Path("/tmp"))


class RecoveryFileError(HistoryError):
    """Not even a recovery file could be written (every place tried is in the message)."""


def unsaved_folder(environ: Mapping[str, str] | None = None) -> Path:
    return state_home(environ, needed_for="recovery files") / UNSAVED_FOLDER


def keep_unsaved(
    document: Mapping[str, Any], kind: str, environ: Mapping[str, str] | None = None
) -> Path:
    """Write `document` to a new recovery file, durably (it may be the only copy), and return
    its path; RecoveryFileError naming every place tried when none can be written."""
    text = to_text(document)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    problems: list[str] = []
    for folder, prefix in _places(environ, problems):
        try:
            if not prefix:
                folder.mkdir(parents=True, exist_ok=True)
            return write_new(folder, f"{prefix}{kind}-{stamp}-", ".json", text.encode())
        except OSError as error:
            problems.append(f"{folder}: {error.strerror or error}")
    raise RecoveryFileError(f"no recovery file could be written ({'; '.join(problems)})")


def _places(environ: Mapping[str, str] | None, problems: list[str]) -> Iterator[tuple[Path, str]]:
    """(folder, name prefix) in the order tried (module doc); each folder once."""
    seen: set[str] = set()

    def once(folder: Path) -> bool:
        key = os.path.realpath(folder)
        if key in seen:
            return False
        seen.add(key)
        return True

    try:
        yield unsaved_folder(environ), ""
    except EnvironmentProblem as error:  # no home: the state folder is nowhere
        problems.append(str(error))
    env = os.environ if environ is None else environ
    shared = list(SHARED_FOLDERS)
    if env.get("TMPDIR"):
        shared.insert(1, Path(env["TMPDIR"]))
    for folder in shared:
        if once(folder):
            yield folder, _TEMP_PREFIX
    with contextlib.suppress(OSError):  # a current folder that was removed
        current = Path.cwd()
        if once(current):
            yield current, _TEMP_PREFIX
