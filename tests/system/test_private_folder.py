"""The private folder: made where another user could swap names, reached only through its
descriptor, removed without following anything that user put there."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from flashmark.system.private_folder import (
    FolderReplaced,
    ForeignLink,
    make_private_folder,
    open_checked_folder,
    private_folder,
    refuse_foreign_links,
    remove_private_folder,
)


@pytest.fixture
def parent(tmp_path: Path):
    folder = tmp_path / "card"
    folder.mkdir()
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    yield folder, descriptor
    os.close(descriptor)


def test_the_private_folder_is_ours_0700_and_reached_through_its_descriptor(parent):
    folder, descriptor = parent
    previous = os.umask(0o777)  # a umask that would leave the folder unusable
    try:
        made = make_private_folder(descriptor, str(folder), ".flashmark-test.d")
    finally:
        os.umask(previous)
    try:
        status = os.stat(folder / ".flashmark-test.d")
        assert stat.S_IMODE(status.st_mode) == 0o700
        assert status.st_uid == os.geteuid()
        assert made.shown == f"{folder}/.flashmark-test.d"
        os.rename(folder / ".flashmark-test.d", folder / "renamed")
        (made.path / "file").write_text("through the descriptor")
        assert (folder / "renamed" / "file").read_text() == "through the descriptor"
    finally:
        os.close(made.fd)


def test_a_name_swapped_for_a_link_before_it_is_opened_is_refused(parent, tmp_path, monkeypatch):
    folder, descriptor = parent
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real_mkdir = os.mkdir

    def mkdir_then_swapped(name, mode=0o777, *, dir_fd=None):
        real_mkdir(name, mode, dir_fd=dir_fd)
        os.rename(name, "moved", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # another user's move
        os.symlink(elsewhere, name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "mkdir", mkdir_then_swapped)
    with pytest.raises(FolderReplaced, match="was replaced"):
        make_private_folder(descriptor, str(folder), ".flashmark-test.d")
    assert list(elsewhere.iterdir()) == []


def test_a_folder_of_someone_else_swapped_in_is_refused(parent, monkeypatch):
    folder, descriptor = parent
    real_mkdir = os.mkdir

    def mkdir_then_replaced(name, mode=0o777, *, dir_fd=None):
        real_mkdir(name, mode, dir_fd=dir_fd)
        os.rename(name, "moved", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        real_mkdir(name, 0o755, dir_fd=dir_fd)  # not empty, not 0700: not the one made
        os.close(os.open(f"{name}/planted", os.O_CREAT | os.O_WRONLY, dir_fd=dir_fd))

    monkeypatch.setattr(os, "mkdir", mkdir_then_replaced)
    with pytest.raises(FolderReplaced):
        make_private_folder(descriptor, str(folder), ".flashmark-test.d")
    assert (folder / ".flashmark-test.d" / "planted").exists()  # theirs, left alone


def test_removal_empties_it_through_the_descriptor_and_follows_no_link(parent, tmp_path):
    folder, descriptor = parent
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("not flashmark's")
    with private_folder(descriptor, str(folder), ".flashmark-test.d") as made:
        (made.path / "tree" / "deep").mkdir(parents=True)
        (made.path / "tree" / "deep" / "file").write_bytes(b"x" * 100)
        os.symlink(outside, made.path / "tree" / "link")
    assert list(folder.iterdir()) == []
    assert (outside / "keep").read_text() == "not flashmark's"


def test_a_renamed_private_folder_is_emptied_and_what_took_its_name_is_left(parent, tmp_path):
    folder, descriptor = parent
    made = make_private_folder(descriptor, str(folder), ".flashmark-test.d")
    (made.path / "test-file").write_bytes(b"y" * 100)
    os.rename(folder / ".flashmark-test.d", folder / "moved")
    (folder / ".flashmark-test.d").mkdir()  # someone else's, under the name
    assert remove_private_folder(descriptor, made) is None
    assert list((folder / "moved").iterdir()) == []  # emptied: it is ours
    assert (folder / ".flashmark-test.d").is_dir()  # not ours: left


def test_a_folder_replaced_after_its_check_is_refused(tmp_path):
    folder = tmp_path / "card"
    folder.mkdir()
    status = folder.stat()
    os.rename(folder, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", folder)
    os.close(open_checked_folder(str(folder), (status.st_dev, status.st_ino)))  # same folder
    folder.unlink()
    folder.mkdir()
    with pytest.raises(FolderReplaced, match="changed after it was checked"):
        open_checked_folder(str(folder), (status.st_dev, status.st_ino))


@pytest.mark.root
def test_a_path_through_another_users_symlink_is_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a symlink owned by another user needs root")
    real = tmp_path / "real"
    (real / "card").mkdir(parents=True)
    mine = tmp_path / "mine"
    mine.symlink_to(real)
    refuse_foreign_links(str(mine / "card"))  # root's own link: followed
    theirs = tmp_path / "theirs"
    theirs.symlink_to("mine/card")  # relative, through root's link
    os.lchown(theirs, 65534, 65534)
    with pytest.raises(ForeignLink, match=r"owned by another user \(uid 65534\)"):
        refuse_foreign_links(str(theirs))
    inner = real / "inner"
    inner.symlink_to("../theirs")  # reached only through a chain of links
    with pytest.raises(ForeignLink):
        refuse_foreign_links(str(inner) + "/")
    refuse_foreign_links(str(tmp_path / "missing" / "x"))  # missing: the caller's stat says so


def _made_as_on(monkeypatch, uid: int, mode: int, symlink_error: int | None) -> None:
    """What a mkdir gives on a filesystem that shows every entry as the mount's uid and mode
    (FAT, exFAT), and whether it takes symlinks."""
    real_fstat, real_symlink = os.fstat, os.symlink
    made: list[int] = []

    def fstat(descriptor):
        status = real_fstat(descriptor)
        if descriptor not in made and stat.S_ISDIR(status.st_mode) and status.st_nlink == 2:
            made.append(descriptor)  # the folder just made (the parent holds the test's)
        if descriptor in made:
            values = list(status)
            values[stat.ST_MODE] = stat.S_IFDIR | mode
            values[stat.ST_UID] = uid
            return os.stat_result(values)
        return status

    def symlink(*args, **kwargs):
        if symlink_error is not None:
            raise OSError(symlink_error, os.strerror(symlink_error))
        real_symlink(*args, **kwargs)

    monkeypatch.setattr(os, "fstat", fstat)
    monkeypatch.setattr(os, "symlink", symlink)
    monkeypatch.setattr(os, "fchmod", lambda descriptor, mode: None)  # ignored, as FAT does


def test_a_filesystem_without_owners_or_links_is_accepted(parent, monkeypatch):
    folder, descriptor = parent
    _made_as_on(monkeypatch, uid=1000, mode=0o755, symlink_error=errno.EPERM)
    made = make_private_folder(descriptor, str(folder), ".flashmark-fat.d")
    os.close(made.fd)
    assert list(os.listdir(folder)) == [".flashmark-fat.d"]  # the probe link is not left


def test_a_folder_of_another_owner_where_links_exist_is_refused(parent, monkeypatch):
    folder, descriptor = parent
    _made_as_on(monkeypatch, uid=1000, mode=0o700, symlink_error=None)
    with pytest.raises(FolderReplaced, match="owned by uid 1000 with mode 0700"):
        make_private_folder(descriptor, str(folder), ".flashmark-swapped.d")
    assert os.listdir(folder / ".flashmark-swapped.d") == []  # the probe link is removed
