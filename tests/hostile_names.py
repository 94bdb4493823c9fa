"""Folder names that fio's job-file parser would reinterpret, for property-based tests.

fio cuts a job line at the first ';' or '#', strips blanks and control characters at both
ends, expands ${VAR} and $pagesize, and splits filename= on ':' (bench/jobs.py). A shell would
also act on $(..), backquotes, quotes and backslashes. Names mix these with ordinary text,
unicode, leading and trailing blanks, newlines, and lengths up to the 255-byte limit of a
name on Linux filesystems (NAME_MAX, limits.h).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Literal

from hypothesis import strategies as st

NAME_MAX_BYTES = 255
FRAGMENTS = (
    "#", ";", "${X}", "${HOME}", "$pagesize", "$(touch pwned)", "`id`", ":", "=", "'", '"',
    "\\", " ", "\n", "\t", "\r", "é", "数据", "[global]", "*", "%s", "-", "..", "~", "notes",
)  # fmt: skip

# Surrogates cannot be file names; '/' and NUL cannot be in one.
_NOT_IN_NAMES: tuple[Literal["Cs"]] = ("Cs",)
_plain_text = st.text(
    alphabet=st.characters(exclude_categories=_NOT_IN_NAMES, exclude_characters="/\x00"),
    min_size=1,
    max_size=8,
)


def _fits(name: str) -> bool:
    return name not in (".", "..") and 0 < len(name.encode()) <= NAME_MAX_BYTES


def _long(fragment: str) -> str:
    """A name of exactly NAME_MAX bytes that starts with the hostile fragment."""
    return fragment + "x" * (NAME_MAX_BYTES - len(fragment.encode()))


folder_names = st.one_of(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), _plain_text), min_size=1, max_size=6).map(
        "".join
    ),
    st.sampled_from(FRAGMENTS).map(lambda fragment: f" {fragment} "),
    st.sampled_from(FRAGMENTS).map(_long),
).filter(_fits)

# One or two nested folders: the parent's name is as much a part of the path as the last one.
folder_paths = st.lists(folder_names, min_size=1, max_size=2)


def old_fio_reading(path: str) -> str:
    """Where the job line `filename=PATH` sent fio before paths became data: the line cut at
    the first ';' or '#', blanks stripped, ${VAR} expanded (to "" when unset)."""
    cut = re.split(r"[;#]", path, maxsplit=1)[0].strip()
    return re.sub(r"\$\{([^}]*)\}", lambda m: os.environ.get(m.group(1), ""), cut)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every entry under `root`: file contents, None for folders (symlinks not followed)."""
    entries: dict[str, bytes | None] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            entries[os.path.relpath(os.path.join(folder, name), root)] = None
        for name in files:
            path = os.path.join(folder, name)
            entries[os.path.relpath(path, root)] = Path(path).read_bytes()
    return entries


def plant_sentinels(root: Path, target: Path) -> None:
    """Files a wrong path would hit: above and beside the target, inside it, and where the
    old job line pointed fio (e.g. the parent's `notes` for `notes#2024`)."""
    (root / "above.txt").write_bytes(os.urandom(64))
    (target.parent / "beside.txt").write_bytes(os.urandom(64))
    (target / "inside.txt").write_bytes(os.urandom(64))
    misread = Path(old_fio_reading(str(target / ".flashmark-1-0.tmp")))
    for candidate in (misread, misread.parent):
        if (
            candidate.is_relative_to(root)
            and candidate.parent.is_dir()
            and not candidate.exists()
            and candidate != target
        ):
            candidate.write_bytes(os.urandom(64))
            break


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
