"""Cases of the category "hung device" (pure data; hung.py runs them).

An emulated card (tests.emulation.flash) stops answering in the middle of an operation: its
requests are held, never failed, as a card that hangs holds them. Every operation that waits
on the device must then end with exit 5 and one line (saying the device stopped answering and
how the bound was chosen) within the bound plus the few seconds it gives fio or its I/O process
to end, keep what was measured (saved, marked incomplete), and leave nothing running once the
device answers again; what it could not remove from a folder on the silent device, `flashmark
clean` removes then.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HUNG = "hung device"
STALL_TIMEOUT_S = 3  # --stall-timeout of every case: the bound's floor
# After the bound: 3 s to see whether fio or the I/O process ends when killed, and slack for a
# loaded machine (Python's start-up of the I/O process, the save).
GRACE_S = 7.0


@dataclass(frozen=True)
class HungCase:
    name: str
    command: str  # run | surface
    on: str  # "device" or "folder" (ext4 on the emulated card)
    argv: tuple[str, ...]  # after the command and the target
    when: str  # "fio-N+S": S s into the N-th fio job; "scan+S": S s into the surface scan's I/O
    # (its I/O process started); "after-S": S s after start
    kept: bool  # tests were measured before the hang: the result is saved, incomplete
    category: str = field(default=HUNG, init=False)

    @property
    def id(self) -> str:
        return f"hung-{self.name}"

    @property
    def expected_s(self) -> float:
        return 20.0

    def run_in(self, lab: Any, marker: str, outcome: Any) -> None:
        from tests.cli.faults import hung

        hung.run_hung_case(lab, self, marker, outcome)


_RUN = ("--runtime", "2", "--ramp", "0", "--stall-timeout", str(STALL_TIMEOUT_S))
_SURFACE = ("--stall-timeout", str(STALL_TIMEOUT_S))


def hung_cases() -> list[HungCase]:
    return [
        # a timed test: read tests of a device (the first fio job is the first test)
        HungCase("run-device-timed-test", "run", "device", ("--size", "16M", *_RUN),
                 "fio-2+0.7", kept=True),
        # a timed test in a folder: the test file is left for `flashmark clean`
        HungCase("run-folder-timed-test", "run", "folder",
                 ("--profile", "a1", "--size", "8M", *_RUN), "fio-4+0.7", kept=True),
        # the preparation (a1: seq-write, then the preparation writes the rest)
        HungCase("run-folder-preparation", "run", "folder",
                 ("--profile", "a1", "--size", "48M", *_RUN), "fio-2+0.7", kept=True),
        HungCase("run-device-preparation", "run", "device",
                 ("--profile", "a1", "--size", "48M", "--destructive", "--yes", *_RUN),
                 "fio-2+0.7", kept=True),
        # sustained-write: size-bound, the only test of its profile (nothing measured before)
        HungCase("run-device-sustained-write", "run", "device",
                 ("--profile", "sustained", "--size", "96M", "--destructive", "--yes",
                  "--stall-timeout", str(STALL_TIMEOUT_S)), "fio-1+1.5", kept=False),
        # surface: its own I/O process
        HungCase("surface-device-read", "surface", "device", _SURFACE, "scan+1.5", kept=True),
        HungCase("surface-device-write", "surface", "device",
                 ("--destructive", "--yes", *_SURFACE), "scan+1.5", kept=True),
        HungCase("surface-folder", "surface", "folder", ("--size", "96M", *_SURFACE),
                 "scan+1.5", kept=True),
    ]  # fmt: skip
