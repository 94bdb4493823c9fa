"""Exact windows and durable writes, with real fio on throttled loop devices (ext4 on them)
and, at 10 IOPS, an emulated flash card.

Each test runs one test of a profile the way `flashmark run` builds and parses it. Truth is the
device's cap: the kernel throttle's, or the card model's. Before exact windows these read high
by up to one transfer: +2.2% at 5 MB/s, +2.5% at 6 MB/s, +4.9% with a 2 s window, several %
with 16 MiB blocks.

How close can they get? The throttle (blk-throttle) grants budget per 100 ms slice, so the
bytes it lets through by a given instant run ahead of cap x time by up to one slice's budget.
A window whose edges fall at different points of that pattern could read up to 0.1 s / window
off (1.25% in 8 s, 5% in 2 s) even when counted exactly. Measured on this kernel (6.18, cgroup
v1) the throttle's completions are far more regular than that: repeated runs of every case
here stayed within 0.3% (benchmarks/accuracy.py prints them), so 0.5% is asserted. Two cases
the throttle itself does not emulate exactly, so the tests use devices that keep their word:
- 16 MiB transfers at 30 MB/s complete every 564.7 ms on average over whole runs, not 559.2 ms
  (-1%, 5.5 ms per transfer, probably the loop device copying 16 MiB between two grants); the
  window's rate matches the device's own completion spacing there: 10 MB/s and 16 MiB/s (one
  transfer per second) are used.
- 10 IOPS. The throttle's IOPS limit, at one I/O per 100 ms slice, releases each some 8 ms late
  (it waits whole jiffies) and catches up with two at once every second or so: the device runs
  up to one write behind its cap and back: an 8 s window of it read 9.88 to 10.10 IOPS on a
  busy host, outside 0.5% in 3 of 6 suite runs. Its byte limit at 40,960 B/s completes the
  writes two at a time every 200 ms, a burst whose second write fio does not issue once the
  window closes: 9.875 or 10.000 IOPS by where the close falls (flashmark says so: its edges
  take 1.27% of the interval). The emulated flash card (tests.emulation.flash) paces each
  write by its own clock: 100 ms of write latency is 10 IOPS, one write at a time, read 9.9994
  to 10.0006 IOPS under the same load.
Durable rates add the end_fsync's time: the window's rate is what is compared with the cap, and
the durable one is checked to be exactly that rate over the window plus `fsync_ms`.
"""

import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from flashmark.bench.model import DirectionResult, Pattern, Settings, TestResult, TestSpec
from flashmark.bench.results import BATCH_MS
from flashmark.stats import SHORT_MARGIN
from tests.bench.synthetic import spec_named
from tests.emulation.flash.model import FlashModel
from tests.emulation.runs import DEVICE_TIMING, run_test_in_device, run_test_on_device
from tests.emulation.throttle import DeviceCaps, EmulatedDevice

pytestmark = [pytest.mark.root, pytest.mark.fio, DEVICE_TIMING]

MiB = 2**20
TOLERANCE = 0.005  # of truth


def settings(runtime_s: int, size_bytes: int = 32 * MiB) -> Settings:
    return Settings("quick", size_bytes, runtime_s, 2, 2, direct=True, destructive=False)


def measure(
    caps: DeviceCaps, spec: TestSpec, runtime_s: int, tmp_path: Path, truth_bps: float
) -> DirectionResult:
    """The test's direction on a throttled loop device (ext4 on it), from a run in which the
    device held its cap (`held_its_cap`)."""

    def run(folder: Path) -> TestResult:
        with EmulatedDevice(caps, size_bytes=256 * MiB) as device:
            size = max(32 * MiB, 4 * spec.block_size_bytes)
            return run_test_in_device(device, spec, settings(runtime_s, size), folder)

    return held_its_cap(run, spec, tmp_path, truth_bps)


def held_its_cap(
    run: Callable[[Path], TestResult], spec: TestSpec, tmp_path: Path, truth_bps: float
) -> DirectionResult:
    """The test's direction, from a run (`run`, in a folder of its own) in which the device
    held its cap.

    The comparison with the cap presumes the device delivered it. On a busy shared host it
    sometimes does not (fio or the loop device starved of CPU, the host flushing the backing
    file): then the seconds inside the window, away from its edges, fall short of the cap (by
    more than 1% on average). Such a run is measured again, up to 3 times in all; the edges,
    which the counting decides, are never looked at for this."""
    seen = []
    for attempt in range(3):
        folder = tmp_path / str(attempt)
        folder.mkdir()
        result = run(folder)
        direction = result.write if spec.pattern.writes else result.read
        assert direction is not None and direction.bw_per_second is not None
        samples = direction.bw_per_second.samples_bps
        inner = samples[1:-1] or samples  # a 2 s window has no inside
        if abs(statistics.fmean(inner) / truth_bps - 1) <= 0.01:
            return direction
        seen.append(round(statistics.fmean(inner) / truth_bps, 4))
    pytest.skip(
        f"the busy host kept the emulated device from its cap (inner seconds / cap: {seen})"
    )


def assert_exact_window(direction: DirectionResult, truth_per_s: float, unit: str) -> None:
    """The window's rate within 0.5% of truth; for writes the durable one as well."""
    window = direction.accepted_iops if direction.accepted_iops is not None else direction.iops
    if unit == "bytes":
        window = (
            direction.accepted_bw_bytes
            if direction.accepted_bw_bytes is not None
            else direction.bw_bytes
        )
    series = direction.bw_per_second
    seconds = [round(x / 1e6, 3) for x in series.samples_bps] if series else None
    assert window == pytest.approx(truth_per_s, rel=TOLERANCE), f"MB/s per second: {seconds}"
    interval = direction.bw_ci95
    # The interval rests on batch rates of a quarter second or more each between the window's
    # first and last completions (fio/window.py steady_rates): at most one per BATCH_MS of the
    # window, fewer when large transfers need longer batches or leave time at its edges.
    assert interval is not None and 2 <= interval.samples <= direction.runtime_ms // BATCH_MS
    assert interval.low <= direction.bw_bytes <= interval.high
    if direction.fsync_ms is not None:  # a write: durable = the window's bytes + the fsync
        durable = direction.bw_bytes if unit == "bytes" else direction.iops
        window_ms = direction.runtime_ms
        assert durable == pytest.approx(window * window_ms / (window_ms + direction.fsync_ms))
        assert 0 <= direction.fsync_ms < direction.fio_runtime_ms - window_ms + 1


def test_sequential_write_at_5_mb_s_reads_its_cap(tmp_path):
    caps = DeviceCaps("5 MB/s card", write_bps=5_000_000)
    write = measure(caps, spec_named("seq-write"), 8, tmp_path, 5_000_000)
    assert_exact_window(write, 5_000_000, "bytes")
    # fio's own count includes the transfer completing after the window.
    assert write.io_bytes * 1000 / write.runtime_ms > 5_000_000 * 1.01


def test_sequential_read_on_a_6_mb_s_usb_stick_reads_its_cap(tmp_path):
    caps = DeviceCaps("6 MB/s stick", read_bps=6_000_000)
    read = measure(caps, spec_named("seq-read"), 8, tmp_path, 6_000_000)
    assert_exact_window(read, 6_000_000, "bytes")
    assert read.accepted_bw_bytes is None and read.fsync_ms is None


@pytest.mark.flash
def test_random_writes_at_10_iops_read_their_cap(tmp_path, emulated_flash):
    # An emulated flash card, raw: the throttle does not keep a 10 IOPS cap (module doc).
    card = emulated_flash(FlashModel(claimed_bytes=64 * MiB, write_latency_ns=100_000_000))
    spec = spec_named("rand-write-4k")

    def run(folder: Path) -> TestResult:
        return run_test_on_device(card.path, spec, settings(8), folder)

    write = held_its_cap(run, spec, tmp_path, 10 * 4096)
    assert_exact_window(write, 10, "ios")


def test_a_2_second_window_is_as_exact(tmp_path):
    caps = DeviceCaps("10 MB/s card", write_bps=10_000_000)
    write = measure(caps, spec_named("seq-write"), 2, tmp_path, 10_000_000)
    assert_exact_window(write, 10_000_000, "bytes")
    # Shorter than the floor (3 s, 20 transfers): too short to estimate its spread, so its
    # interval is at least +-10% (SHORT_MARGIN), never the zero width of identical batches.
    assert write.bw_ci95 is not None
    assert write.bw_ci95.high - write.bw_ci95.low >= 2 * SHORT_MARGIN * write.bw_bytes * 0.999


@pytest.mark.parametrize(
    ("name", "caps", "truth"),
    [
        ("seq-write-16M", DeviceCaps("10 MB/s card", write_bps=10_000_000), 10_000_000),
        # One transfer per second exactly (16 MiB/s): whole transfers would read 11 in 10 s.
        ("rand-read-16M", DeviceCaps("16 MiB/s card", read_bps=16 * MiB), 16 * MiB),
    ],
)
def test_16_mib_transfers_of_the_full_profile_read_their_cap(tmp_path, name, caps, truth):
    # 0.6 and 1 transfer per second: fio's count includes the one completing after the window.
    spec = spec_named(name)
    assert spec.block_size_bytes == 16 * MiB and spec.pattern in (
        Pattern.SEQ_WRITE,
        Pattern.RAND_READ,
    )
    assert_exact_window(measure(caps, spec, 10, tmp_path, truth), truth, "bytes")
