"""The `sustained-write` test's definition, its stop rules, the rest before it and the words
that describe them, shared by the profiles, the plan, the fio job, the parser and the reports (a
module of its own: the profiles import the workloads, which import fio's runner and jobs).
"""

from __future__ import annotations

from flashmark.bench.model import Pattern, TestSpec
from flashmark.units import GiB, KiB, format_size

# The write cliff. Sequential writes in 512 KiB blocks, the recording unit
# the SD speed classes are specified in (SD Physical Layer Simplified Specification, section
# 4.13 "Speed Class Specification": performance is measured over recording units of an
# allocation unit), until the rate has been steady or a size limit is reached (bench/jobs.py
# sustained_job). flashmark.surface.cache.estimate_cache finds the cache in its per-I/O log.
SUSTAINED_WRITE_NAME = "sustained-write"
SUSTAINED_BLOCK_BYTES = 512 * KiB
# The size limit: the test area, but never more than this (a card's SLC cache is at most a few
# GiB; beyond this the write would take too long on a slow card).
SUSTAINED_SIZE_CAP_BYTES = 8 * GiB
# The steady rule (fio's steadystate): the slope of the per-second bandwidth over the last
# SUSTAINED_STEADY_S seconds below SUSTAINED_STEADY_SLOPE_PCT % of its mean, judged only after
# SUSTAINED_STEADY_RAMP_S seconds.
SUSTAINED_STEADY_SLOPE_PCT = 0.5
SUSTAINED_STEADY_S = 30
# Judged only after this long, so that a steady burst into a large cache (at 80 MB/s, 60 s is
# 4.8 GB written, more than most cards' SLC caches) does not end the test before the cliff.
SUSTAINED_STEADY_RAMP_S = 60
SUSTAINED_WRITE = TestSpec(
    name=SUSTAINED_WRITE_NAME,
    pattern=Pattern.SEQ_WRITE,
    block_size_bytes=SUSTAINED_BLOCK_BYTES,
    iodepth=1,
    description="sequential write, 512k blocks, queue depth 1, past the write cache: stops "
    f"when the rate has been steady for {SUSTAINED_STEADY_S} s (bandwidth slope under "
    f"{SUSTAINED_STEADY_SLOPE_PCT}% of its mean, judged after {SUSTAINED_STEADY_RAMP_S} s) or "
    f"when the test area (at most {SUSTAINED_SIZE_CAP_BYTES // GiB} GiB) is written",
)


# On a folder, the card rests this long before sustained-write (bench/plan.py): the test file's
# allocation and whatever the filesystem still held for the card are put on it first
# (flashmark.system.file_space), and a write cache they went into must be empty again when the
# test starts, or the cliff it is there to find comes early or not at all. A card empties its
# cache while idle by moving what it holds into its main flash; no public figure says how fast a
# given card does that, so this is a stated choice, not a measured one: 30 s lets a card that
# moves its cache at 10 MB/s (Class 10's floor) empty 300 MB. A cache filled by a large copy
# just before the run may need longer: docs/sustained-write.md says to let the card rest first.
# A raw device is not rested: nothing is written to it before the test.
SUSTAINED_REST_S = 30


def sustained_length_text(limit_bytes: int) -> str:
    """What the size-bound test runs, for the plan and a run's header: 'sustained-write until
    its rate is steady or 256 MiB are written'."""
    return (
        f"{SUSTAINED_WRITE_NAME} until its rate is steady or {format_size(limit_bytes)} are written"
    )


# Why the card rests before the test, in words for the plan and the progress.
SUSTAINED_REST_WHY = "so that the card's write cache can empty"


def sustained_stop_rule(limit_bytes: int) -> str:
    """Both stop rules in words, for the plan printed before a run."""
    return (
        f"{SUSTAINED_WRITE_NAME} stops when its rate has been steady for {SUSTAINED_STEADY_S} s "
        f"(bandwidth slope under {SUSTAINED_STEADY_SLOPE_PCT}% of its mean, judged after "
        f"{SUSTAINED_STEADY_RAMP_S} s) or after {format_size(limit_bytes)} "
        f"(the test area, at most {SUSTAINED_SIZE_CAP_BYTES // GiB} GiB)"
    )
