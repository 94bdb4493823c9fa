"""Cases of the category "races by another user" (pure data; races.py runs them).

A real unprivileged user (made for the lab with useradd, removed after) attacks a root run of
`run`, `workload` or `surface` in a folder it can write, with one of attacker.py's strategies,
while the run writes there. What must hold: no file outside flashmark's own area is written
or created (a root-owned victim file and folder beside the target stay byte-identical), the
run ends with exit 0, or with a one-line refusal (exit 4) saying a folder was replaced
between flashmark's checks and nothing was written (a swap that lands between a check and
the use of what was checked), that the path goes through the user's symlink (which "link
the target" must get), or, when the user moves the target folder itself, that it is not there;
nothing is left running, and nothing root-owned is left in the
user's folder but empty folders the user moved away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RACES = "races by another user"

# Where the user attacks: the target folder it owns, its parent (to swap the folder itself),
# a sticky world-writable target (root's, like /tmp), or a TMPDIR it owns (fio's work folder).
TARGET, PARENT, STICKY, TMPDIR = "target", "parent", "sticky", "tmpdir"

_STRATEGIES: dict[str, tuple[tuple[str, str], ...]] = {
    "run": (
        ("swap-test-file", TARGET),
        ("swap-private-folder", TARGET),
        ("hard-link", TARGET),
        ("fifo", TARGET),
        ("swap-target-folder", PARENT),
        ("link-target", PARENT),
        ("sticky-symlink", STICKY),
        ("swap-private-folder", TMPDIR),
    ),
    "workload": (
        ("swap-private-folder", TARGET),
        ("swap-subfolders", TARGET),
        ("hard-link", TARGET),
        ("fifo", TARGET),
        ("swap-target-folder", PARENT),
        ("link-target", PARENT),
        ("sticky-symlink", STICKY),
    ),
    "surface": (
        ("swap-test-file", TARGET),
        ("swap-private-folder", TARGET),
        ("hard-link", TARGET),
        ("fifo", TARGET),
        ("swap-target-folder", PARENT),
        ("link-target", PARENT),
        ("sticky-symlink", STICKY),
    ),
}


@dataclass(frozen=True)
class RaceCase:
    command: str  # run | workload | surface
    strategy: str  # attacker.py's
    place: str  # TARGET, PARENT, STICKY or TMPDIR
    category: str = field(default=RACES, init=False)

    @property
    def id(self) -> str:
        where = "" if self.place in (TARGET, PARENT, STICKY) else f"-in-{self.place}"
        return f"race-{self.command}-{self.strategy}{where}"

    @property
    def expected_s(self) -> float:
        return 8.0

    def run_in(self, lab: Any, marker: str, outcome: Any) -> None:
        from tests.cli.faults import races

        races.run_race_case(lab, self, marker, outcome)


def race_cases() -> list[RaceCase]:
    return [
        RaceCase(command, strategy, place)
        for command, strategies in _STRATEGIES.items()
        for strategy, place in strategies
    ]
