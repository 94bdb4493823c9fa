"""Backups of killed capacity probes that were not put back, and the devices they belong to.

Until `flashmark capacity --restore FILE` puts a killed probe's blocks back, nothing else may
write to that device, or the original content would be lost: every command that writes a
device asks `refuse_if_pending` (through device_safety.claim_for_writing). Backups and pointer
files to backups elsewhere (`NAME.pending`) live in $XDG_STATE_HOME/flashmark/capacity-backups;
a backup matches a device of the stack by its recorded identity (device_identity), else by
device number and size. docs/capacity.md, "Never losing data".
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import struct
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flashmark.errors import EnvironmentProblem, UnsafeDevice
from flashmark.system.device_identity import device_identity
from flashmark.system.device_stack import DeviceStack
from flashmark.system.durable_files import replace_file
from flashmark.system.places import state_home
from flashmark.system.sysroot import SystemRoots

POINTER_SUFFIX = ".pending"


@dataclass(frozen=True)
class PendingBackup:
    path: Path
    header: dict[str, Any]

    @property
    def restore_line(self) -> str:
        return f"flashmark capacity --restore {shlex.quote(str(self.path))}"

    def belongs_to(self, identity: str | None, majmin: str | None, size: int | None) -> bool:
        """Whether this backup was taken from the device with this identity (else number and
        size, when either side has no identity)."""
        recorded = self.header.get("identity")
        if recorded and identity:
            return bool(recorded == identity)
        return (
            majmin is not None
            and self.header.get("majmin") == majmin
            and (size is None or self.header.get("size_bytes") == size)
        )


def pending_backups(extra_folders: Iterable[Path] = ()) -> list[PendingBackup]:
    """Every backup that holds blocks not put back: in the default folder, those its pointers
    name, and those in `extra_folders`. A file without records is not pending (the probe had
    not written anything yet)."""
    found: dict[Path, PendingBackup] = {}
    for path in _candidates(extra_folders):
        with contextlib.suppress(OSError):
            resolved = path.resolve()
            if resolved in found:
                continue
            header = pending_header(path)
            if header is not None:
                found[resolved] = PendingBackup(path, header)
    return sorted(found.values(), key=lambda backup: str(backup.path))


def _candidates(extra_folders: Iterable[Path]) -> Iterator[Path]:
    try:
        default = backup_folder()
    except EnvironmentProblem:  # no home: no probe of this user could have left one there
        default = None
    folders = [f for f in (default, *extra_folders) if f is not None]
    for folder in folders:
        with contextlib.suppress(OSError):
            yield from sorted(folder.glob("*.backup"))
    if default is not None:
        yield from (backup for _pointer, backup in _pointers(default))


def _pointers(folder: Path) -> Iterator[tuple[Path, Path]]:
    """The pointer files in `folder`, each with the backup it names; unreadable ones left out."""
    with contextlib.suppress(OSError):
        for pointer in sorted(folder.glob(f"*{POINTER_SUFFIX}")):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                yield pointer, Path(json.loads(pointer.read_text())["backup"])


def register(backup: Path) -> Path | None:
    """Make a backup outside the default folder findable: a pointer file there naming it,
    fsync'd with its folder entry. None when the backup is in the default folder itself."""
    folder = backup_folder()
    if folder.exists() and backup.parent.resolve() == folder.resolve():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    pointer = folder / f"{backup.stem}{POINTER_SUFFIX}"
    replace_file(pointer, (json.dumps({"backup": str(backup.resolve())}) + "\n").encode())
    return pointer


def forget(backup: Path) -> None:
    """Remove the pointers naming `backup` (it was put back or never written under)."""
    with contextlib.suppress(EnvironmentProblem, OSError):
        target = backup.resolve()
        for pointer, named in _pointers(backup_folder()):
            with contextlib.suppress(OSError):
                if named.resolve() == target:
                    pointer.unlink()


def refuse_if_pending(
    node: str,
    stack: DeviceStack,
    roots: SystemRoots,
    *,
    allowed: Path | None = None,
    extra_folders: Iterable[Path] = (),
) -> None:
    """UnsafeDevice naming the `--restore` line when a pending backup belongs to a device
    in `stack` (the target, what it is built on, what is built on it): writing any of them
    would write over the probe's blocks. `allowed` is the backup being restored."""
    backups = [
        b
        for b in pending_backups(extra_folders)
        if allowed is None or b.path.resolve() != allowed.resolve()
    ]
    if not backups:
        return
    for member in stack.devices():
        identity = device_identity(member.name, roots)
        size = roots.size_bytes(member.name)
        for backup in backups:
            if backup.belongs_to(identity, member.majmin, size):
                what = node if member.name == stack.target.name else f"{member.node}, under {node}"
                raise UnsafeDevice(
                    f"refusing to write to {what}: a capacity probe of it was killed and left "
                    f"its blocks' backup; `{backup.restore_line}` puts them back first"
                )


MAGIC = b"FLASHMARK-CAPACITY-BACKUP/1\n"


RECORD = struct.Struct(">cQIB")


BACKUP_FOLDER = Path("flashmark") / "capacity-backups"


def backup_folder(environ: Mapping[str, str] | None = None) -> Path:
    """$XDG_STATE_HOME/flashmark/capacity-backups (XDG_STATE_HOME defaults to ~/.local/state)."""
    return state_home(environ, needed_for="capacity backups") / BACKUP_FOLDER


def pending_header(path: Path) -> dict[str, Any] | None:
    """The header of a backup file that holds at least one whole record (blocks the probe
    overwrote), read without reading the records; None for anything else."""
    try:
        with path.open("rb") as stream:
            if stream.readline() != MAGIC:
                return None
            header = json.loads(stream.readline())
            head = stream.read(RECORD.size)
            if not isinstance(header, dict) or len(head) < RECORD.size:
                return None
            tag, _, length, _ = RECORD.unpack(head)
            start = stream.tell()
            whole = stream.seek(0, os.SEEK_END) - start >= length
            return header if tag == b"R" and whole else None
    except (OSError, ValueError):
        return None
