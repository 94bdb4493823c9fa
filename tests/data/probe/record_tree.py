"""Copy selected /sys, /proc and debugfs files of this machine into a recorded scenario tree.

Used to build the `virtio_vda` and `loop_file` scenarios. Symlinks met along each path are
recreated as the same (relative) symlinks, so the copy resolves inside the recorded tree the
way /sys resolves on the machine. Only the named files are copied, never whole trees.

    python tests/data/probe/record_tree.py DEST sys/block/vda/size proc/loadavg ...
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REAL_ROOTS = {"sys": Path("/sys"), "proc": Path("/proc"), "debug": Path("/sys/kernel/debug")}


def record(dest_root: Path, relative: str) -> None:
    top, _, rest = relative.partition("/")
    real = REAL_ROOTS[top]
    out = dest_root / top
    parts = [p for p in rest.split("/") if p]
    for index, part in enumerate(parts):
        real_next = real / part
        out_next = out / part
        if real_next.is_symlink() and not os.readlink(real_next).startswith("/"):
            target = os.readlink(real_next)
            out_next.parent.mkdir(parents=True, exist_ok=True)
            if not out_next.is_symlink():
                out_next.symlink_to(target)
            real = real_next.resolve()
            out = out_next.resolve()
            continue
        if real_next.is_symlink():
            # An absolute link (proc/self/root -> /) would make the recorded tree contain the
            # whole machine: follow it on the real side, record plain folders on ours.
            real = real_next.resolve()
            out = out_next
            if index < len(parts) - 1:
                out.mkdir(parents=True, exist_ok=True)
                continue
        if index == len(parts) - 1:
            out_next.parent.mkdir(parents=True, exist_ok=True)
            if real_next.is_dir():
                out_next.mkdir(exist_ok=True)
            else:
                try:
                    data = real_next.read_bytes()
                except OSError as error:
                    print(f"skip {relative}: {error}", file=sys.stderr)
                    return
                out_next.write_bytes(data)
            return
        real, out = real_next, out_next
        out.mkdir(parents=True, exist_ok=True)


def main(argv: list[str]) -> None:
    dest = Path(argv[1])
    for relative in argv[2:]:
        record(dest, relative)


if __name__ == "__main__":
    main(sys.argv)
