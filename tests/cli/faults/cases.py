"""Fault-injection cases from a seed, shared by tests/cli/faults/ and benchmarks/faults.py.

Pure data: no process is started and nothing is written here (harness.py runs the cases).
The same seed and count always give the same cases, in the same order, with the same ids, so a
failure seen in CI is replayed with `python benchmarks/faults.py --seed S --count N --only ID`.

Categories:
  signals          INT, TERM, HUP or KILL to flashmark, or KILL to fio, at a random moment of
                   `run`, `workload` or `monitor`: start-up, preparation, a test, saving
  stacked devices  `run DEV --destructive --yes` where DEV sits on, under or beside something
                   mounted or swapped on
  database faults  a garbage, locked, read-only, newer or unreachable history database
  hostile paths    folder names that a job-file parser or a shell would read as syntax
Categories in files of their own (their cases carry `run_in`, which the harness calls):
  races by another user  race_cases.py
  hung device            hung_cases.py
and, in modules of their own (durable_cases.py, whose cases carry `run`): power cut and resume,
environment faults, hostile imports.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field

from tests.cli.faults import durable_cases
from tests.cli.faults.hung_cases import HUNG, HungCase, hung_cases
from tests.cli.faults.race_cases import RACES, RaceCase, race_cases

DEFAULT_SEED = 8
DEFAULT_SIGNAL_COUNT = 110  # at least 100 seeded signal deliveries

SIGNALS = "signals"
STACKS = "stacked devices"
DATABASE = "database faults"
PATHS = "hostile paths"
CATEGORIES = (SIGNALS, STACKS, DATABASE, PATHS, RACES, HUNG, *durable_cases.CATEGORIES)

# The run every signal, database and hostile-path case makes: 4 MiB prepared at the emulated
# device's 4 MB/s (about 1 s), then 5 tests (a1) or 6 (quick) of 1 s each. No ramp (--ramp 0):
# these cases test what happens to processes, files and output, never a figure, and a ramp
# is only more of the same fio run (the window and its I/O start together without one).
RUN_SIZE = "4M"
RUN_RUNTIME_S = 1
RUN_RAMP_S = 0
KILL_RUN_SIZE = "20M"
KILL_RUNTIME_S = 5
TESTS_IN_PROFILE = {"a1": 5, "quick": 6}
TEST_SECONDS = float(RUN_RAMP_S + RUN_RUNTIME_S)  # one timed test
WORKLOAD_SCALE = "0.01"  # pkg-install at 1% of seed 002's desktop: about 3 s on the device
MONITOR_SLEEP_S = 3


@dataclass(frozen=True)
class SignalCase:
    """One signal delivery. `phase` says what the delivery waits for (see harness.py):

    startup     nothing: `delay_s` after the process was started (imports, parsing)
    prepare     the first fio job of `run` (the preparation that writes the test area)
    test-K      the K-th timed test's fio (1-based)
    saving      every fio job has run and none is left: scoring, saving, printing
    running     `workload`: its folder exists; `monitor`: the monitored command runs
    """

    index: int
    command: str  # run | workload | monitor
    signal: str  # INT | TERM | HUP | KILL (to flashmark) | KILL-fio
    phase: str
    delay_s: float
    profile: str = "a1"  # run only
    as_json: bool = False
    fio_victim: str = "all"  # KILL-fio: main (fio's first process) | jobs | all
    category: str = field(default=SIGNALS, init=False)

    @property
    def run_size(self) -> str:
        """Test area of `run`. A KILL during the preparation gets a 5 s one (20 MiB at 4 MB/s),
        so a fio that outlived flashmark would still be writing when it is looked for."""
        return KILL_RUN_SIZE if self.signal == "KILL" and self.phase == "prepare" else RUN_SIZE

    @property
    def runtime_s(self) -> int:
        """Seconds per timed test of `run`: longer when flashmark is killed mid-test, for the same
        reason (fio must not still run 3 s after the kill)."""
        if self.signal == "KILL" and self.phase.startswith("test-"):
            return KILL_RUNTIME_S
        return RUN_RUNTIME_S

    @property
    def id(self) -> str:
        command = f"run-{self.profile}" if self.command == "run" else self.command
        victim = f"-{self.fio_victim}" if self.signal == "KILL-fio" else ""
        return (
            f"{self.index:03d}-{command}-{self.signal}{victim}-{self.phase}"
            f"+{self.delay_s:.2f}s{'-json' if self.as_json else ''}"
        )


@dataclass(frozen=True)
class StackCase:
    """`run /dev/loopB --destructive --yes` on a loop device in a stack built by the harness."""

    name: str
    refused: bool  # the documented answer: exit 4 with one line (or, for a free loop, exit 0)
    category: str = field(default=STACKS, init=False)

    @property
    def id(self) -> str:
        return self.name


@dataclass(frozen=True)
class DatabaseCase:
    """A history database fault; `command` is "run" (must exit 6 before measuring) or a
    read-only command that must create nothing."""

    name: str
    command: str = "run"
    category: str = field(default=DATABASE, init=False)

    @property
    def id(self) -> str:
        return self.name


@dataclass(frozen=True)
class PathCase:
    """`run PARENT/NAME` where NAME is hostile; `decoys` are files created beside it, named
    what a misparsed path would write to (the old bug overwrote PARENT/notes for notes#2024)."""

    label: str
    name: str
    decoys: tuple[str, ...] = ()
    category: str = field(default=PATHS, init=False)

    @property
    def id(self) -> str:
        return self.label


Case = SignalCase | StackCase | DatabaseCase | PathCase | RaceCase | HungCase


# -- signals ------------------------------------------------------------------------------------
def signal_cases(seed: int = DEFAULT_SEED, count: int = DEFAULT_SIGNAL_COUNT) -> list[SignalCase]:
    """`count` deliveries: half to `run` (a1, some quick), a quarter each to `workload` and
    `monitor`. Delays are short enough that most cases end within a few seconds."""
    rng = random.Random(f"signals/{seed}")
    cases = []
    for index in range(count):
        command = rng.choices(("run", "workload", "monitor"), weights=(2, 1, 1))[0]
        as_json = rng.random() < 0.3
        if command == "run":
            cases.append(_run_signal_case(rng, index, as_json))
            continue
        sig = rng.choice(("INT", "TERM", "HUP", "KILL"))
        if rng.random() < 0.3:
            phase, delay = "startup", rng.uniform(0.0, 0.35)
        elif command == "workload":
            phase, delay = "running", rng.uniform(0.0, 3.0)
        else:  # past the end of `sleep` lands in the summary and the saving
            phase, delay = "running", rng.uniform(0.0, MONITOR_SLEEP_S + 0.3)
        cases.append(SignalCase(index, command, sig, phase, round(delay, 2), as_json=as_json))
    return cases


def _run_signal_case(rng: random.Random, index: int, as_json: bool) -> SignalCase:
    profile = "quick" if rng.random() < 0.2 else "a1"
    sig = rng.choice(("INT", "TERM", "HUP", "KILL", "KILL-fio"))
    tests = TESTS_IN_PROFILE[profile]
    phases = ["prepare", "test"] if sig == "KILL-fio" else ["startup", "prepare", "test", "saving"]
    weights = {"startup": 25, "prepare": 25, "test": 40, "saving": 10}
    if profile == "quick":  # the quick profile is longer: only its beginning
        phases = [p for p in phases if p != "saving"]
    phase = rng.choices(phases, weights=[weights[p] for p in phases])[0]
    if phase == "startup":
        delay = rng.uniform(0.0, 0.35)
    elif phase == "prepare":
        delay = rng.uniform(0.0, 1.0)
    elif phase == "saving":
        delay = rng.uniform(0.0, 0.3)
    else:
        # A KILL mid-test keeps fio busy 5 s per test (KILL_RUNTIME_S): only the first three.
        last = 2 if profile == "quick" else (3 if sig == "KILL" else tests)
        number = rng.choices(range(1, last + 1), weights=[4, 3] + [1] * (last - 2))[0]
        phase = f"test-{number}"
        delay = rng.uniform(0.0, TEST_SECONDS)
    victim = rng.choice(("main", "jobs", "all")) if sig == "KILL-fio" else "all"
    return SignalCase(
        index, "run", sig, phase, round(delay, 2), profile=profile, as_json=as_json,
        fio_victim=victim,
    )  # fmt: skip


# -- stacked devices ----------------------------------------------------------------------------
def stack_cases() -> list[StackCase]:
    return [
        StackCase("loop-backed-by-a-mounted-loop", refused=True),
        StackCase("loop-backed-by-a-loop-whose-partition-is-mounted", refused=True),
        StackCase("loop-sharing-its-backing-file-with-a-mounted-loop", refused=True),
        StackCase("loop-backed-by-a-loop-with-swap-on-it", refused=True),
        StackCase("loop-two-levels-above-a-mounted-loop", refused=True),
        StackCase("loop-under-a-mounted-loop", refused=True),
        StackCase("free-loop-is-accepted", refused=False),
    ]


# -- database faults ----------------------------------------------------------------------------
def database_cases() -> list[DatabaseCase]:
    return [
        DatabaseCase("garbage-file"),
        DatabaseCase("locked-by-another-connection"),
        DatabaseCase("read-only-immutable-file"),
        DatabaseCase("read-only-bind-mount"),
        DatabaseCase("newer-schema"),
        DatabaseCase("missing-folder-for-explicit-db"),
        DatabaseCase("history-on-a-missing-db-creates-nothing", command="history"),
        DatabaseCase("show-on-a-missing-db-creates-nothing", command="show"),
        DatabaseCase("history-default-path-missing-creates-nothing", command="history-default"),
    ]


# -- hostile paths ------------------------------------------------------------------------------
FIXED_PATHS = (
    PathCase("hash", "notes#2024", decoys=("notes",)),
    PathCase("semicolon", "semi;colon", decoys=("semi", "colon")),
    PathCase("env-variable", "${X}", decoys=("victim",)),
    PathCase("command-substitution", "$(touch pwned)", decoys=("pwned",)),
    PathCase("colon-and-equals", "disk:a=b", decoys=("disk", "a")),
    PathCase("quotes", 'it\'s "quoted"', decoys=("it",)),
    PathCase("backslash", "back\\slash", decoys=("back",)),
    PathCase("leading-and-trailing-spaces", "  spaced  ", decoys=("spaced",)),
    PathCase("newline", "new\nline", decoys=("new", "line")),
    PathCase("unicode", "ünïcødé 日本 ☃", decoys=()),
)
# What a generated name is drawn from: job-file and shell syntax, whitespace, non-ASCII.
_HOSTILE_ALPHABET = "#;$(){}:=\"'\\ \t\n%*?[]~!&|<>`,@^+" + "éß日☃" + "abcxyz019"


def path_cases(seed: int = DEFAULT_SEED, generated: int = 2) -> list[PathCase]:
    rng = random.Random(f"paths/{seed}")
    cases = list(FIXED_PATHS)
    for number in range(generated):
        length = rng.randint(3, 16)
        name = "".join(rng.choice(_HOSTILE_ALPHABET) for _ in range(length))
        if name in (".", "..") or name.strip() == "":
            name = f"x{name}x"
        cases.append(PathCase(f"generated-{number}", name, decoys=_prefixes(name)))
    return cases


def _prefixes(name: str) -> tuple[str, ...]:
    """Names a parser that stops at a special character would use: each word before one."""
    words: list[str] = []
    current = ""
    for char in name:
        if char.isalnum():
            current += char
        elif current:
            words.append(current)
            current = ""
    return tuple(dict.fromkeys(w for w in [*words, current] if w and w != name))


def expected_seconds(case: Case) -> float:
    """A rough duration, to start the long cases first (a shorter tail when run in parallel)."""
    if hasattr(case, "expected_s"):  # the categories in modules of their own say it
        return float(case.expected_s)
    if isinstance(case, SignalCase):
        if case.command != "run":
            return 0.5 if case.phase == "startup" else 3.5
        test = TEST_SECONDS - RUN_RUNTIME_S + case.runtime_s
        if case.phase == "startup":
            return 0.5
        if case.phase == "prepare":
            return 2.0 if case.run_size == RUN_SIZE else 6.0
        if case.phase == "saving":
            return 2.0 + TESTS_IN_PROFILE[case.profile] * TEST_SECONDS
        return 2.0 + int(case.phase.split("-")[1]) * test
    if isinstance(case, PathCase):
        return 2.0 + TESTS_IN_PROFILE["a1"] * TEST_SECONDS
    if isinstance(case, StackCase):
        return 1.0 if case.refused else 2.0 + TESTS_IN_PROFILE["a1"] * TEST_SECONDS
    return float(getattr(case, "expected_s", 1.0))


# -- all ----------------------------------------------------------------------------------------
def all_cases(seed: int = DEFAULT_SEED, count: int = DEFAULT_SIGNAL_COUNT) -> dict[str, list[Case]]:
    """Every category's cases. `count` signal deliveries; one generated hostile name per 50."""
    return {
        SIGNALS: list(signal_cases(seed, count)),
        STACKS: list(stack_cases()),
        DATABASE: list(database_cases()),
        PATHS: list(path_cases(seed, generated=max(2, count // 50))),
        RACES: list(race_cases()),
        HUNG: list(hung_cases()),
        **durable_cases.all_cases(seed),
    }


def configured_seed() -> int:
    """The seed of the pytest tier: FLASHMARK_FAULTS_SEED, else DEFAULT_SEED."""
    return int(os.environ.get("FLASHMARK_FAULTS_SEED", DEFAULT_SEED))


def configured_count() -> int:
    """Signal deliveries in the pytest tier: FLASHMARK_FAULTS_COUNT, else the default."""
    return int(os.environ.get("FLASHMARK_FAULTS_COUNT", DEFAULT_SIGNAL_COUNT))
