"""Emulated flash rates through real fio: the model's truth within 2% (rates) and 5% (cache).

Every test is a few seconds of fio. The engine paces by its own running clock, so short
scheduling hiccups of a busy host are absorbed rather than lost; the measurements below use
fio's own numbers (its JSON, or its per-I/O completion log), never the engine's counters,
except where the truth itself depends on host timing (how long the device sat idle), which
the engine records by the clock it paces with.
"""

from __future__ import annotations

import itertools
import statistics
import time

import pytest

from tests.emulation.flash.model import FlashModel
from tests.emulation.io_helpers import (
    find_cache_knee,
    fio_io_log,
    fio_json,
    rate_bps,
    time_shift_ms,
)
from tests.emulation.runs import DEVICE_TIMING
from tests.emulation.throttle import DeviceCaps

pytestmark = [pytest.mark.flash, pytest.mark.fio, DEVICE_TIMING]

MB = 1_000_000
KiB = 1 << 10
MiB = 1 << 20


def fio_args(device, rw: str, bs: int, **options: object) -> list[str]:
    args = [f"--name={rw}", f"--filename={device.path}", f"--rw={rw}", f"--bs={bs}"]
    return args + [f"--{key}={value}" for key, value in options.items()]


# A card that reads 40 MB/s and does 2000 random 4K reads/s at depth 1: the fixed cost per
# request (read_latency_ns) is what makes small blocks slow, as on a real card.
READER = FlashModel(
    claimed_bytes=256 * MiB, read_bps=40 * MB, read_latency_ns=500_000 - 102_400, name="reader"
)


def test_read_rate_and_random_4k_iops_match_the_model(emulated_flash, tmp_path):
    device = emulated_flash(READER)
    # 128 KiB reads: no larger than one FUSE request, so each is one request of the model
    sequential = fio_io_log(fio_args(device, "read", 128 * KiB, runtime=1.5, time_based=1),
                            tmp_path)  # fmt: skip
    random_4k = fio_io_log(fio_args(device, "randread", 4 * KiB, runtime=1.5, time_based=1,
                                    randrepeat=0), tmp_path)  # fmt: skip
    assert READER.read_iops_at(4 * KiB) == pytest.approx(2000)
    idle = f"device idle {device.stats().idle_ns / 1e6:.0f} ms"  # host stalls > absorb_ns
    assert rate_bps(sequential) == pytest.approx(READER.read_bps_at(128 * KiB), rel=0.02), idle
    assert rate_bps(random_4k) / (4 * KiB) == pytest.approx(
        READER.read_iops_at(4 * KiB), rel=0.02
    ), idle


# An SD card with an SLC-like cache: 24 MiB at 60 MB/s, then 12 MB/s.
CACHED = FlashModel(
    claimed_bytes=256 * MiB, cache_bytes=24 * MiB, cache_write_bps=60 * MB, write_bps=12 * MB,
    name="cached writer",
)  # fmt: skip


def test_writes_burst_into_the_cache_then_slow_to_the_sustained_rate(emulated_flash, tmp_path):
    device = emulated_flash(CACHED)
    ios = fio_io_log(fio_args(device, "write", 256 * KiB, size=CACHED.cache_bytes + 18 * MB),
                     tmp_path)  # fmt: skip
    knee = find_cache_knee(ios)
    assert knee.cache_bytes == pytest.approx(CACHED.cache_bytes, rel=0.05)
    assert rate_bps(knee.burst) == pytest.approx(CACHED.burst_write_bps_at(256 * KiB), rel=0.02)
    assert rate_bps(knee.sustained) == pytest.approx(
        CACHED.sustained_write_bps_at(256 * KiB), rel=0.02
    )


RECOVERING = FlashModel(
    claimed_bytes=256 * MiB, cache_bytes=8 * MiB, cache_write_bps=80 * MB, write_bps=20 * MB,
    cache_drain_bps=10 * MB, name="recovering cache",
)  # fmt: skip


def test_the_cache_recovers_while_the_device_is_idle(emulated_flash, tmp_path):
    device = emulated_flash(RECOVERING)
    fio_json(fio_args(device, "write", 256 * KiB, size=12 * MiB))  # fills the cache
    # full (less what a host stall past absorb_ns in the last writes drained: idle time too)
    filled = device.stats()
    assert filled.cache_full_ns
    time.sleep(0.5)  # idle: the cache drains at 10 MB/s
    # 256 KiB: 3.3 ms of service at the burst rate, well above what a loaded 2-core host takes
    # per request (at 64 KiB, 0.8 ms, a host at load 10+ fell behind the device for most of the
    # burst, and fio's stamps then say when the host got round to the I/Os, not the device)
    ios = fio_io_log(fio_args(device, "write", 256 * KiB, size=12 * MiB, offset=16 * MiB),
                     tmp_path)  # fmt: skip
    # How long the device sat idle depends on the host (fio's start-up); the engine measured
    # it with the clock it paces by, and the model says what that idle time frees.
    stats = device.stats()
    assert stats.longest_idle_ns >= 0.5e9
    fill = RECOVERING.cache_after_idle(filled.cache_fill_bytes, stats.longest_idle_ns)
    assert stats.cache_fill_after_longest_idle_bytes == pytest.approx(fill, abs=1)
    recovered = RECOVERING.cache_bytes - fill
    # A host stall past absorb_ns is idle time too: one before the cache was full again drained
    # it further, and the burst ran longer, by at most the model's drain over that idle time.
    # The engine counts the burst it served; the model bounds it.
    burst = stats.cached_after_longest_idle_bytes
    more_idle_ns = stats.idle_ns - stats.longest_idle_ns
    more_room = more_idle_ns * RECOVERING.cache_drain_bps / 1e9
    assert recovered - 1 <= burst <= recovered + more_room + 1, (burst, recovered, more_idle_ns)
    knee = find_cache_knee(ios, start_offset=16 * MiB)
    assert knee.cache_bytes == pytest.approx(burst, rel=0.05), (recovered, more_idle_ns)
    assert rate_bps(knee.burst) == pytest.approx(RECOVERING.burst_write_bps_at(256 * KiB), rel=0.02)
    assert rate_bps(knee.sustained) == pytest.approx(
        RECOVERING.sustained_write_bps_at(256 * KiB), rel=0.02
    )


GC_WRITE_BPS = 20 * MB
PAUSING = FlashModel(
    claimed_bytes=256 * MiB, write_bps=GC_WRITE_BPS, gc_pause_ns=40_000_000, gc_every_bytes=4 * MiB,
    name="garbage collector",
)  # fmt: skip


def test_garbage_collection_pauses_come_where_and_as_long_as_the_model_says(
    emulated_flash, tmp_path
):
    device = emulated_flash(PAUSING)
    bs, every = 256 * KiB, PAUSING.gc_every_bytes
    ios = fio_io_log(fio_args(device, "write", bs, size=4 * every + every // 2), tmp_path)
    # the writes completing each 4 MiB are the slowest ones...
    normal_ns = statistics.median(io.clat_ns for io in ios)
    slowest = sorted(ios, key=lambda io: io.clat_ns)[-4:]
    assert sorted(io.offset for io in slowest) == [n * every - bs for n in range(1, 5)], [
        (io.offset, io.clat_ns) for io in slowest
    ]
    # ...between them, writes take what the rate says...
    assert normal_ns == pytest.approx(bs / GC_WRITE_BPS * 1e9, rel=0.02)
    # ...and each pause shifts the rest of the stream by the pause: compare where the runs of
    # writes between pauses sit in time (robust to single late completions of a busy host)
    runs = [[io for io in ios if n * every <= io.offset < (n + 1) * every - bs] for n in range(5)]
    shifts = [time_shift_ms(run, GC_WRITE_BPS / 1000) for run in runs]
    pauses_ms = [after - before for before, after in itertools.pairwise(shifts)]
    assert pauses_ms == pytest.approx([PAUSING.gc_pause_ns / 1e6] * 4, abs=2), pauses_ms


@pytest.mark.root
def test_block_throttle_caps_apply_on_top_of_the_model(emulated_flash):
    caps = DeviceCaps("capped flash", read_iops=800)
    device = emulated_flash(FlashModel(claimed_bytes=64 * MiB, read_bps=100 * MB), caps=caps)
    args = fio_args(device, "randread", 4096, runtime=1.5, time_based=1, randrepeat=0)
    done = fio_json(args, wrap=device.command)
    assert done["jobs"][0]["read"]["iops"] == pytest.approx(800, rel=0.03)
