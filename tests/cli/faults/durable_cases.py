"""The fault tier's categories for durability and the environment (cases only: pure data).

  power cut and resume  a destructive surface scan of an emulated card with a volatile write
                        cache, cut off by a power cut of card and host, a SIGKILL or a Ctrl-C
                        at a seeded moment of its write or read pass (once or twice), then
                        `--resume`d until it is complete
  environment faults    stdout closed or full, no usable or a full temporary folder, /tmp
                        filling up mid-run, workloads out of inodes, no home folder, an
                        unwritable state folder for `capacity`, non-UTF-8 locales and file
                        names, paths beyond PATH_MAX
  hostile imports       `import` of a symlink to /dev/zero, a FIFO, a folder, /proc/kcore,
                        oversized, deeply nested, binary or malformed documents

Each case runs itself (`run`, in durable_harness.py, imported when a case runs) and says how
long it takes (`expected_s`); cases.py registers the categories.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.cli.faults.harness import Lab, Outcome

POWER_CUT = "power cut and resume"
ENVIRONMENT = "environment faults"
IMPORTS = "hostile imports"
CATEGORIES = (POWER_CUT, ENVIRONMENT, IMPORTS)


@dataclass(frozen=True)
class PowerCutCase:
    """A scan interrupted `len(stops)` times, each stop (kind, phase, fraction) landing when
    that share of the phase's bytes went through the card, then resumed to its end.

    kind: "cut" (the card's power and the host's: SIGKILL to flashmark, the card loses what it
    had not flushed), "kill" (SIGKILL to flashmark alone), "int" (Ctrl-C)."""

    index: int
    stops: tuple[tuple[str, str, float], ...]
    category: str = field(default=POWER_CUT, init=False)
    expected_s: float = field(default=40.0, init=False)

    @property
    def id(self) -> str:
        parts = "+".join(f"{kind}-{phase}@{fraction:.2f}" for kind, phase, fraction in self.stops)
        return f"{self.index:02d}-{parts}"

    def run(self, lab: Lab, marker: str, outcome: Outcome) -> None:
        from tests.cli.faults import durable_harness

        durable_harness.run_power_cut_case(lab, self, marker, outcome)


@dataclass(frozen=True)
class EnvironmentCase:
    """One environment fault; durable_harness.ENVIRONMENT_FAULTS says what each does."""

    name: str
    category: str = field(default=ENVIRONMENT, init=False)

    @property
    def id(self) -> str:
        return self.name

    @property
    def expected_s(self) -> float:
        return 25.0 if self.name in _MEASURING else 2.0

    def run(self, lab: Lab, marker: str, outcome: Outcome) -> None:
        from tests.cli.faults import durable_harness

        durable_harness.run_environment_case(lab, self, marker, outcome)


@dataclass(frozen=True)
class ImportCase:
    """`flashmark import FILE` of one hostile file; durable_harness.HOSTILE_FILES makes it."""

    name: str
    category: str = field(default=IMPORTS, init=False)
    expected_s: float = field(default=2.0, init=False)

    @property
    def id(self) -> str:
        return self.name

    def run(self, lab: Lab, marker: str, outcome: Outcome) -> None:
        from tests.cli.faults import durable_harness

        durable_harness.run_import_case(lab, self, marker, outcome)


# -- power cut and resume -----------------------------------------------------------------------
def power_cut_cases(seed: int) -> list[PowerCutCase]:
    """Every kind of stop in each pass, a cut before the first flush, and a scan cut twice;
    where in the pass each lands is seeded."""
    rng = random.Random(f"power-cut-{seed}")

    def at() -> float:
        return round(rng.uniform(0.2, 0.9), 2)

    plans: list[tuple[tuple[str, str, float], ...]] = [
        (("cut", "write", at()),),
        (("cut", "write", at()),),
        (("cut", "write", at()),),
        (("cut", "write", 0.05),),  # before the first 2 s flush step: resumed from the start
        (("cut", "read", at()),),
        (("kill", "write", at()),),
        (("kill", "write", at()),),
        (("kill", "read", at()),),
        (("int", "write", at()),),
        (("cut", "write", at()), ("cut", "write", at())),
    ]
    return [PowerCutCase(index, stops) for index, stops in enumerate(plans, 1)]


# -- environment faults -------------------------------------------------------------------------
ENVIRONMENT_NAMES = (
    "stdout-closed",
    "stdout-full-no-save",
    "stdout-full-saved",
    "no-usable-temporary-folder",
    "tmpdir-out-of-inodes",
    "tmpdir-full",
    "tmpdir-fills-mid-run",
    "workloads-run-out-of-inodes",
    "no-home-history",
    "no-home-run-no-save",
    "no-home-run",
    "capacity-state-folder-unwritable",
    "locale-latin1-stdout",
    "locale-posix-non-utf8-name",
    "locale-c-iso-8859-1",
    "path-beyond-path-max",
    "name-beyond-name-max",
    "cwd-beyond-path-max",
)
# the cases that run fio (a1 on the lab's 4 MB/s card, or standard's ten tests)
_MEASURING = frozenset(
    {
        "stdout-full-no-save",
        "stdout-full-saved",
        "tmpdir-fills-mid-run",
        "workloads-run-out-of-inodes",
        "no-home-run-no-save",
        "locale-latin1-stdout",
        "locale-posix-non-utf8-name",
        "locale-c-iso-8859-1",
    }
)


def environment_cases() -> list[EnvironmentCase]:
    return [EnvironmentCase(name) for name in ENVIRONMENT_NAMES]


# -- hostile imports ----------------------------------------------------------------------------
IMPORT_NAMES = (
    "symlink-to-dev-zero",
    "dev-urandom",
    "fifo",
    "folder",
    "proc-kcore",
    "stdin-pipe",
    "over-the-size-limit",
    "nested-100000-deep",
    "nested-900-deep-in-a-result",
    "binary-not-utf8",
    "empty",
    "symlink-loop",
    "a-list-with-a-malformed-document",
    "numbers-out-of-range",
    "a-number-of-5000-digits",
    "wrong-types-in-a-result",
)


def import_cases() -> list[ImportCase]:
    return [ImportCase(name) for name in IMPORT_NAMES]


def all_cases(seed: int) -> dict[str, list[Any]]:
    return {
        POWER_CUT: list(power_cut_cases(seed)),
        ENVIRONMENT: list(environment_cases()),
        IMPORTS: list(import_cases()),
    }
