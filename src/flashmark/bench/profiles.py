"""Test suites, declared as data. Each test has a fixed name that results, grades and reports use.

    quick     the six headline tests; under 90 s on a card writing 10 MB/s (default size)
    standard  sustained-write (first) + quick + seed 001's 70/30 random mix at
              depth 4 + sequential at depth 8, then seed 002's workloads (package install,
              removal, reinstall, cold read) at 5%
    full      standard + a block-size sweep over seed 002's iozone record sizes; workloads
              at 10%
    a1        just what the SD Association application performance classes grade
    sustained just `sustained-write`: sequential 512 KiB writes past the device's write cache
              (standard and full run it too); the speed classes grade its sustained rate

Default sizes and times are per profile: quick trades test-area size for time (128 MiB is
written in ~13 s at 10 MB/s, most of it by seq-write); standard and full use 1 GiB so a card's
cache flatters less. `default_runtime_s` is each timed test's full length: without --runtime a
test first measures a 3 s window, extended by further windows or run at its full length only
where that was not enough (flashmark.bench.lengths); in quick and a1 (`stops_on_verdict`) a
test a class grades stops once every threshold it serves is decided. The full length stays
>= 8 s: it is what a test gets at most when 3 s were not enough (a busy host, a device
collecting garbage), and 16 half-second batches give an interval half as wide as
the first window's 6 (t(0.975) 2.13 / sqrt(16) against 2.57 / sqrt(6), and the batches' spread
estimated better).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from flashmark.bench.model import Pattern, TestSpec
from flashmark.bench.sustained import SUSTAINED_WRITE
from flashmark.errors import UsageError
from flashmark.units import GiB, KiB, MiB, block_size_label
from flashmark.workloads.result import WORKLOAD_NAMES


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    tests: tuple[TestSpec, ...]
    default_size_bytes: int
    default_runtime_s: int
    default_ramp_s: int
    # Real-world workloads run after the fio tests (flashmark.workloads), at this scale of
    # seed 002's desktop install; folder targets only.
    workloads: tuple[str, ...] = ()
    default_workload_scale: float = 0.0
    # A profile that exists to grade: without --runtime, each test a class reads stops once
    # every threshold it serves is decided (flashmark.bench.lengths), not at +-1%.
    stops_on_verdict: bool = False

    def test_names(self) -> tuple[str, ...]:
        return tuple(test.name for test in self.tests)


def _test(order: str, direction: str, block_size: int, iodepth: int = 1) -> TestSpec:
    """A `order` ("seq" or "rand") read or write test; a sequential one of 1 MiB blocks leaves
    its block size out of its name."""
    label = block_size_label(block_size)
    named = "" if order == "seq" and block_size == MiB else f"-{label}"
    suffix = f"-q{iodepth}" if iodepth > 1 else ""
    return TestSpec(
        name=f"{order}-{direction}{named}{suffix}",
        pattern=Pattern[f"{order}_{direction}".upper()],
        block_size_bytes=block_size,
        iodepth=iodepth,
        description=f"{'sequential' if order == 'seq' else 'random'} {direction}, {label} "
        f"blocks, queue depth {iodepth}",
    )


SEQ_WRITE = _test("seq", "write", MiB)  # the sustained sequential write the speed classes grade
SEQ_READ = _test("seq", "read", MiB)
RAND_READ_4K = _test("rand", "read", 4 * KiB)
RAND_WRITE_4K = _test("rand", "write", 4 * KiB)
RAND_READ_4K_Q32 = _test("rand", "read", 4 * KiB, 32)
RAND_WRITE_4K_Q32 = _test("rand", "write", 4 * KiB, 32)

# Seed 001's random test: fio randrw, 70 % reads, 4 KiB, iodepth 4.
MIXED_4K_70R_Q4 = TestSpec(
    name="mixed-4k-70r-q4",
    pattern=Pattern.RAND_MIXED,
    block_size_bytes=4 * KiB,
    iodepth=4,
    rwmix_read_pct=70,
    description="random 70 % read / 30 % write, 4k blocks, queue depth 4 (seed 001)",
)

# Seed 002 ran iozone over these record sizes (1k .. 16M).
SWEEP_BLOCK_SIZES = (1 * KiB, 2 * KiB, 4 * KiB, 16 * KiB, 128 * KiB, 512 * KiB, MiB, 16 * MiB)

# Each depth-32 test directly after its depth-1 test: the same I/O at another depth starts
# without a ramp (plan.py DEPTH_CHANGE_RAMP_S), which takes 2 s off quick, standard and a1.
QUICK_TESTS = (
    SEQ_WRITE,
    SEQ_READ,
    RAND_READ_4K,
    RAND_READ_4K_Q32,
    RAND_WRITE_4K,
    RAND_WRITE_4K_Q32,
)
# sustained-write comes first: it is there to find the write cache, so nothing may be written
# before it (seq-write writes for its whole ramp and window, 18 s: at 30 MB/s, 540 MB, and a
# cache smaller than that was full before sustained-write began). seq-write then measures the
# rate past the cache, the sustained sequential write it stands for (docs/methodology.md), where
# it used to run partly in the cache. Both write the area sequentially from its start, which is
# what the preparation would do, so the preparation after them writes only what they did not
# (plan.py; on a 60/30 MB/s card, 25 s of a 1 GiB area). No rest is needed between them:
# seq-write is meant to start on a card whose cache is full.
STANDARD_TESTS = (
    SUSTAINED_WRITE,
    SEQ_WRITE,
    *QUICK_TESTS[1:],
    MIXED_4K_70R_Q4,
    _test("seq", "read", MiB, 8),
    _test("seq", "write", MiB, 8),
)


def _sweep() -> tuple[TestSpec, ...]:
    """Random and sequential read and write at each sweep size, skipping names already run."""
    taken = {test.name for test in STANDARD_TESTS}
    sweep: list[TestSpec] = []
    for block_size in SWEEP_BLOCK_SIZES:
        for order, direction in itertools.product(("rand", "seq"), ("read", "write")):
            spec = _test(order, direction, block_size)
            if spec.name not in taken:
                sweep.append(spec)
                taken.add(spec.name)
    return tuple(sweep)


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(
            name="quick",
            summary="sequential and 4K random read/write at depth 1 and 32 (about a minute)",
            tests=QUICK_TESTS,
            default_size_bytes=128 * MiB,
            default_runtime_s=8,
            default_ramp_s=2,
            stops_on_verdict=True,
        ),
        Profile(
            name="standard",
            summary="quick + 70/30 random mix at depth 4 + sequential at depth 8 + "
            "package install/remove/reinstall and cold-read workloads",
            tests=STANDARD_TESTS,
            default_size_bytes=1 * GiB,
            default_runtime_s=15,
            default_ramp_s=3,
            workloads=WORKLOAD_NAMES,
            # 5% of seed 002's install: ~20 packages, ~1,000 files, ~40 MB; about a minute on
            # its average card (1070 s at full scale), seconds on eMMC.
            default_workload_scale=0.05,
        ),
        Profile(
            name="full",
            summary="standard + block-size sweep 1k..16M, random and sequential; larger workloads",
            tests=(*STANDARD_TESTS, *_sweep()),
            default_size_bytes=1 * GiB,
            default_runtime_s=10,
            default_ramp_s=2,
            workloads=WORKLOAD_NAMES,
            default_workload_scale=0.1,
        ),
        Profile(
            name="a1",
            summary="what the SD application performance classes A1/A2 grade",
            # A1 reads the depth-1 tests; A2 is specified with command queueing, so it reads
            # the depth-32 ones (see grade.py).
            tests=(SEQ_WRITE, *QUICK_TESTS[2:]),
            default_size_bytes=128 * MiB,
            default_runtime_s=8,
            default_ramp_s=2,
            stops_on_verdict=True,
        ),
        Profile(
            name="sustained",
            summary="sequential 512k writes past the write cache: cache size, burst and "
            "sustained rate; the speed classes graded on the sustained rate",
            tests=(SUSTAINED_WRITE,),
            default_size_bytes=1 * GiB,
            default_runtime_s=8,
            default_ramp_s=2,
        ),
    )
}
# The tests' words in a run's document: an upload sends these and no others.
TEST_NAMES = frozenset(test.name for profile in PROFILES.values() for test in profile.tests)
TEST_DESCRIPTIONS = frozenset(
    test.description for profile in PROFILES.values() for test in profile.tests
)


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise UsageError(f"unknown profile {name!r}: choose one of {known}") from None
