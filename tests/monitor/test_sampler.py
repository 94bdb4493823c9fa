"""The sampler thread against a procfs root that tests move and rewrite (sysroot layer)."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from flashmark.codec import decode, encode
from flashmark.monitor.sampler import DiskMonitor
from flashmark.monitor.series import MonitorSeries
from flashmark.system.diskstats import MonitorDeviceNotFound, device_for_path, normalise_device_name
from flashmark.system.sysroot import SystemRoots
from tests.monitor.conftest import DISKSTATS, install


def wait_for_samples(monitor: DiskMonitor, count: int) -> None:
    """Until the sampler thread has taken `count` samples: how soon it does is the host's
    scheduling (a thread of a loaded host wakes late), not the monitor's."""
    deadline = time.monotonic() + 30
    while len(monitor.series().samples) < count:
        assert time.monotonic() < deadline, f"fewer than {count} samples in 30 s"
        time.sleep(0.01)


def test_class4_card_interval_recorded_by_the_thread_matches_the_counters(procfs: Path) -> None:
    roots = SystemRoots(procfs=procfs)
    with DiskMonitor("/dev/mmcblk0", roots, interval_s=0.05) as monitor:
        wait_for_samples(monitor, 3)
        monitor.mark("install")
        install(procfs, "kernel-4.19-18-fields.t1")
        wait_for_samples(monitor, 6)
    series = monitor.series()
    assert series.device == "mmcblk0" and series.diskstats_fields == 18
    summary = series.summary()
    assert (summary.write_ios, summary.read_ios) == (521, 0)
    assert summary.write_bytes == 19952 * 512
    # Every completed request lands in exactly one sample.
    assert sum(s.write_ios for s in series.samples) == 521
    assert len(series.samples) >= 6
    # The samples tile the recording, each over the time since the one before, on a drift-free
    # schedule: none before its slot (k x 0.05 s from the start), none two to a slot; a slot
    # the thread woke too late for is skipped, not squeezed in (sampler.py).
    ends = [s.t_s for s in series.samples]
    assert [s.interval_s for s in series.samples] == pytest.approx(
        [b - a for a, b in zip([0.0, *ends], ends, strict=False)]
    )
    slots = [math.floor((t + 0.001) / 0.05) for t in ends[:-1]]
    assert all(slot >= number for number, slot in enumerate(slots, start=1)), ends
    assert slots == sorted(set(slots)), ends
    install_phase = next(p for p in series.phases if p.name == "install")
    assert install_phase.summary.write_ios == 521
    document = encode(series)
    assert document["summary"]["write_ios"] == 521
    assert {"read_iops", "write_iops"} <= set(document["samples"][0])


def test_a_recording_read_back_from_its_document_gives_the_same_document(procfs: Path) -> None:
    # Results keep the series as JSON (history, `show`); reading it back must lose nothing.
    roots = SystemRoots(procfs=procfs)
    with DiskMonitor("mmcblk0", roots, interval_s=0.05, random_write_iops=33) as monitor:
        time.sleep(0.12)
        monitor.mark("install")
        install(procfs, "kernel-4.19-18-fields.t1")
        time.sleep(0.12)
    document = json.loads(json.dumps(encode(monitor.series())))
    again = decode(MonitorSeries, document)
    assert encode(again) == document
    assert again.summary().write_ios == 521 and again.random_write_iops == 33
    assert [p.name for p in again.phases] == [p.name for p in monitor.series().phases]


def test_a_missing_device_fails_at_once_naming_the_devices_there(procfs: Path) -> None:
    with pytest.raises(MonitorDeviceNotFound, match=r"'sdz'.*mmcblk0, mmcblk0p1, mmcblk1"):
        DiskMonitor("sdz", SystemRoots(procfs=procfs)).start()


def test_a_device_that_disappears_keeps_what_was_recorded(procfs: Path) -> None:
    roots = SystemRoots(procfs=procfs)
    with DiskMonitor("mmcblk0", roots, interval_s=0.05) as monitor:
        before = len(monitor.series().samples)
        install(procfs, "kernel-4.19-18-fields.t1")
        wait_for_samples(monitor, before + 2)  # one begun before the change may read the old
        (procfs / "diskstats").write_text((DISKSTATS / "kernel-4.14-14-fields.t0").read_text())
        deadline = time.monotonic() + 30
        while not monitor.series().warnings:  # the thread's next reading finds it gone
            assert time.monotonic() < deadline
            time.sleep(0.01)
    series = monitor.series()
    assert series.summary().write_ios == 521
    assert any("monitoring stopped" in w and "mmcblk0" in w for w in series.warnings)


def test_a_temporary_folder_resolves_to_the_live_device_that_holds_it(tmp_path: Path) -> None:
    roots = SystemRoots()
    st_dev = os.stat(tmp_path).st_dev
    name = device_for_path(tmp_path, roots)
    if os.major(st_dev) == 0:
        assert name is None  # tmpfs or overlay: nothing to monitor
        return
    assert name is not None
    stats = (roots.procfs / "diskstats").read_text().split()
    assert name in stats


def test_device_nodes_and_names_are_the_same_device() -> None:
    assert normalise_device_name("mmcblk0") == "mmcblk0"
    assert normalise_device_name("/dev/null") == "null"


def test_interval_must_be_positive(procfs: Path) -> None:
    with pytest.raises(ValueError, match="positive"):
        DiskMonitor("mmcblk0", SystemRoots(procfs=procfs), interval_s=0)
