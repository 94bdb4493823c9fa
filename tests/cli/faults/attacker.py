"""Another user's attack on a root run, run as that user (tests/cli/faults/races.py starts it).

    setpriv --reuid U --regid G --clear-groups -- python attacker.py STRATEGY FOLDER_FD \
        PARENT_FD VICTIM VICTIM_DIR LOG_FD

It works through the folder descriptors it inherits (it needs no path into the lab), with the
permissions of the unprivileged user it runs as, until SIGTERM. Every step it takes or is
refused is written to LOG_FD as one JSON line: {"step": ..., "name": ..., "result": ...}.

Strategies (what a user who can write the target folder, or its parent, tries):
  swap-test-file     rename each test file flashmark made (or one it can reach inside
                     flashmark's folders) away and put a symlink to VICTIM in its place, again
                     each time a new one appears
  swap-private-folder  rename each folder flashmark made (.flashmark-*.d, flashmark-workload-*,
                     flashmark-fio-*) away and put a symlink to VICTIM_DIR in its place
  swap-subfolders    reach into flashmark's folders and replace what is inside (the workload's
                     var/lib/dpkg, its status file) with symlinks
  hard-link          put a hard link to VICTIM in place of flashmark's test file or folder
  fifo               put a FIFO in place of flashmark's test file or folder
  swap-target-folder flip the target folder (in PARENT_FD) with a symlink to VICTIM_DIR, over
                     and over, racing flashmark's checks
  link-target        make the target a symlink to VICTIM_DIR before flashmark starts
  sticky-symlink     in a sticky world-writable folder: wait for a name of flashmark's to
                     disappear and put a symlink to VICTIM there at once
"""

from __future__ import annotations

import errno
import functools
import json
import os
import signal
import sys
import time
from collections.abc import Callable

_PREFIXES = (".flashmark-", "flashmark-workload-", "flashmark-fio-")
_PAUSE_S = 0.001


class Attacker:
    def __init__(self, folder_fd: int, parent_fd: int, victim: str, victim_dir: str, log: int):
        self.folder = folder_fd
        self.parent = parent_fd
        self.victim = victim
        self.victim_dir = victim_dir
        self.log_fd = log
        self.done: set[str] = set()
        self.count = 0
        self.logged: set[tuple[str, str, str]] = set()

    def log(self, step: str, name: str, result: str) -> None:
        key = (step, name, result)
        if key in self.logged:  # once per kind of outcome: the loops repeat themselves
            return
        self.logged.add(key)
        line = json.dumps({"step": step, "name": name, "result": result}) + "\n"
        os.write(self.log_fd, line.encode())

    def attempt(self, step: str, name: str, action: Callable[[], object]) -> bool:
        try:
            action()
        except OSError as error:
            self.log(step, name, errno.errorcode.get(error.errno or 0, str(error.errno)))
            return False
        self.log(step, name, "done")
        return True

    def entries(self, fd: int) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(fd) as found:
                return list(found)
        except OSError as error:
            self.log("list", str(fd), errno.errorcode.get(error.errno or 0, "?"))
            return []

    def fresh(self, name: str) -> str:
        self.count += 1
        return f"moved-by-attacker-{self.count}-{name.lstrip('.').replace('/', '-')}"

    def ours(self, entry: os.DirEntry[str]) -> bool:
        return entry.name.startswith(_PREFIXES) and entry.name not in self.done

    def rename(self, name: str, moved: str, fd: int) -> bool:
        return self.attempt(
            "rename", name, lambda: os.rename(name, moved, src_dir_fd=fd, dst_dir_fd=fd)
        )

    def replace(self, name: str, put: Callable[[str], object], fd: int | None = None) -> None:
        """Rename `name` away in the folder `fd`, then `put` something in its place."""
        fd = self.folder if fd is None else fd
        if self.rename(name, self.fresh(name), fd):
            self.attempt("put", name, lambda: put(name))

    def link_to_victim(self, fd: int) -> Callable[[str], object]:
        return lambda name: os.symlink(self.victim, name, dir_fd=fd)

    # -- strategies -------------------------------------------------------------------------
    def swap_test_file(self) -> None:
        for entry in self.entries(self.folder):
            if not entry.name.startswith(_PREFIXES):
                continue
            if entry.is_file(follow_symlinks=False):
                self.replace(entry.name, self.link_to_victim(self.folder))
            elif entry.is_dir(follow_symlinks=False):
                self.reach_inside(entry.name)

    def reach_inside(self, name: str) -> None:
        """Open flashmark's folder and swap the test file inside it."""
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
        try:
            inner = os.open(name, flags, dir_fd=self.folder)
        except OSError as error:
            self.log("open-folder", name, errno.errorcode.get(error.errno or 0, "?"))
            return
        try:
            for entry in self.entries(inner):
                if entry.is_file(follow_symlinks=False):
                    self.replace(entry.name, self.link_to_victim(inner), inner)
        finally:
            os.close(inner)

    def swap_private_folder(self) -> None:
        for entry in self.entries(self.folder):
            if self.ours(entry) and entry.is_dir(follow_symlinks=False):
                self.done.add(entry.name)
                self.replace(
                    entry.name, lambda n: os.symlink(self.victim_dir, n, dir_fd=self.folder)
                )

    def swap_subfolders(self) -> None:
        for entry in self.entries(self.folder):
            if not (self.ours(entry) and entry.is_dir(follow_symlinks=False)):
                continue
            for inner in ("root/var/lib/dpkg/status", "root/var/lib/dpkg", "root", "boot"):
                path = f"{entry.name}/{inner}"
                self.replace(path, lambda p: os.symlink(self.victim_dir, p, dir_fd=self.folder))

    def hard_link(self) -> None:
        for entry in self.entries(self.folder):
            if self.ours(entry):
                self.done.add(entry.name)
                self.replace(
                    entry.name,
                    lambda n: os.link(
                        self.victim, n, dst_dir_fd=self.folder, follow_symlinks=False
                    ),
                )

    def fifo(self) -> None:
        for entry in self.entries(self.folder):
            if self.ours(entry):
                self.done.add(entry.name)
                self.replace(entry.name, lambda n: os.mkfifo(n, 0o666, dir_fd=self.folder))

    def swap_target_folder(self) -> None:
        """Flip PARENT/target with a symlink to VICTIM_DIR, and back."""
        real = "target-real-by-attacker"
        if self.rename("target", real, self.parent):
            self.attempt(
                "put", "target", lambda: os.symlink(self.victim_dir, "target", dir_fd=self.parent)
            )
            time.sleep(0.003)
            self.attempt("unput", "target", lambda: os.unlink("target", dir_fd=self.parent))
            self.rename(real, "target", self.parent)
        time.sleep(0.003)

    def link_target(self) -> None:
        """Make PARENT/target a symlink to VICTIM_DIR once, before flashmark looks at it."""
        if "target" in self.done:
            return
        self.done.add("target")
        if self.rename("target", "target-real-by-attacker", self.parent):
            self.attempt(
                "put", "target", lambda: os.symlink(self.victim_dir, "target", dir_fd=self.parent)
            )

    def sticky_symlink(self) -> None:
        now = [e for e in self.entries(self.folder) if e.name.startswith(_PREFIXES)]
        names = {e.name for e in now}
        for name in self.done - names:  # gone: fio removes its file, then creates it again
            self.attempt("symlink", name, functools.partial(self.link_to_victim(self.folder), name))
        for entry in now:
            if not entry.is_symlink() and entry.name not in self.done:
                self.rename(entry.name, self.fresh(entry.name), self.folder)
        self.done |= {e.name for e in now if not e.is_symlink()}


def main() -> int:
    strategy, folder_fd, parent_fd, victim, victim_dir, log_fd = sys.argv[1:7]
    attacker = Attacker(int(folder_fd), int(parent_fd), victim, victim_dir, int(log_fd))
    step = getattr(attacker, strategy.replace("-", "_"))
    running = [True]
    signal.signal(signal.SIGTERM, lambda *_: running.__setitem__(0, False))
    step()  # before "start": what is done before flashmark starts is done when it starts
    attacker.log("start", strategy, f"uid {os.getuid()}")
    while running[0]:
        step()
        time.sleep(_PAUSE_S)
    attacker.log("stop", strategy, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
