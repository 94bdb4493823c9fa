"""Files that a crash or power cut right after writing leaves whole or absent, never in part:
the data is fsync'd before the file takes its name, and the folder after, since syncing a file
does not sync its directory entry (fsync(2)).

- `write_new(folder, prefix, suffix, data)`: a new file with a unique private name (mkstemp,
  mode 0600), for a file nobody else may read or clobber (a recovery file, a capacity backup).
- `replace_file(path, data, mode)`: `data` in place of the file at `path`, written beside it
  and renamed over it, so a reader sees the old file or the new one; with `mode`, else the usual
  mode (0666 less the umask).

Either raises NotCreated when no file can be made in the folder at all, any other OSError when
one could not be written; nothing is left behind then.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

from flashmark.system.file_space import fsync_folder


class NotCreated(OSError):
    """No file could be created in the folder (as against one created but not written)."""


def write_new(folder: Path, prefix: str, suffix: str, data: bytes) -> Path:
    """A new file in `folder` named `prefix`, a unique part and `suffix`, holding `data`."""
    try:
        descriptor, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    except OSError as error:
        raise NotCreated(error.errno, error.strerror, error.filename) from None
    _fill(descriptor, Path(name), data, lambda: _sync_names(folder))
    return Path(name)


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """`data` as the file at `path`, whether or not there was one."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:  # O_EXCL: a name of its own, made with the mode an ordinary file gets (open(2))
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as error:
        raise NotCreated(error.errno, error.strerror, error.filename) from None

    def rename() -> None:
        if mode is not None:
            os.chmod(temporary, mode)  # whatever the umask
        os.replace(temporary, path)
        _sync_names(path.parent)

    _fill(descriptor, temporary, data, rename)


def _sync_names(folder: Path) -> None:
    """The folder's names made durable where the folder can be opened: one the user may write
    into but not list (mode -wx) cannot be, and the file in it is whole either way."""
    with contextlib.suppress(PermissionError):
        fsync_folder(folder)


def _fill(descriptor: int, name: Path, data: bytes, then: Callable[[], None]) -> None:
    """`data` written to the new file open as `descriptor` (named `name`) and fsync'd, then
    `then`; the file removed when any of it fails."""
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        then()
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
