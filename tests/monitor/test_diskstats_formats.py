"""Every /proc/diskstats format the kernel has had, read from recorded files (tests/data/diskstats).

Scenario names say which kernel and which moment of seed 002 each recording stands for.
"""

from __future__ import annotations

import pytest

from flashmark.monitor.series import compute_sample, summarise
from flashmark.system.diskstats import DiskCounters, DiskstatsFormatError, parse_diskstats
from tests.monitor.conftest import DISKSTATS


def pair(name: str, device: str) -> tuple[DiskCounters, DiskCounters]:
    before = parse_diskstats((DISKSTATS / f"{name}.t0").read_text())[device]
    after = parse_diskstats((DISKSTATS / f"{name}.t1").read_text())[device]
    return before, after


def test_kernel_2_6_18_partition_line_has_only_four_counters() -> None:
    devices = parse_diskstats((DISKSTATS / "kernel-2.6.18-7-fields.t0").read_text())
    disk, partition = devices["hda"], devices["hda1"]
    assert disk.fields == 14 and disk.reads == 446216 and disk.weighted_io_ms == 23705160
    assert partition.fields == 7
    assert (partition.reads, partition.sectors_read) == (35486, 38030)
    assert (partition.writes, partition.sectors_written) == (38030, 38030)
    assert partition.io_ms is None and partition.reads_merged is None


def test_kernel_2_6_18_partition_interval_has_rates_but_no_utilisation() -> None:
    before, after = pair("kernel-2.6.18-7-fields", "hda1")
    sample = compute_sample(before, after, 10.0, 10.0)
    assert (sample.read_ios, sample.write_ios) == (100, 1000)
    assert sample.read_bytes == 1600 * 512 and sample.write_bytes == 16000 * 512
    assert sample.write_iops == pytest.approx(100.0)
    assert sample.util_pct is None and sample.avg_queue is None and sample.write_await_ms is None


def test_seed_002_emmc_install_row_reads_back_on_a_14_field_kernel() -> None:
    # iostat 20 printed: tps 187.70, kB_read/s 67.40, kB_wrtn/s 7887.80,
    # kB_read 1348, kB_wrtn 157756
    before, after = pair("kernel-4.14-14-fields", "mmcblk1")
    assert before.fields == 14 and before.discards is None and before.flushes is None
    sample = compute_sample(before, after, 20.0, 20.0)
    assert sample.iops == pytest.approx(187.70)
    assert sample.read_bps / 1024 == pytest.approx(67.40)
    assert sample.write_bps / 1024 == pytest.approx(7887.80)
    assert (sample.read_bytes // 1024, sample.write_bytes // 1024) == (1348, 157756)
    assert sample.util_pct == pytest.approx(100 * 17210 / 20000)
    assert sample.write_await_ms == pytest.approx(61220 / 3714)


def test_seed_002_class4_card_install_row_reads_back_on_a_18_field_kernel() -> None:
    # The 'Average' card on 4.19: tps 26.05, kB_wrtn/s 498.80, kB_wrtn 9976, nothing read.
    before, after = pair("kernel-4.19-18-fields", "mmcblk0")
    assert before.fields == 18 and before.discards == 0 and before.flushes is None
    sample = compute_sample(before, after, 20.0, 20.0)
    assert sample.write_iops == pytest.approx(26.05)
    assert sample.read_iops == 0.0
    assert sample.write_bps / 1024 == pytest.approx(498.80)
    assert sample.avg_write_request_bytes == pytest.approx(9976 * 1024 / 521)
    assert sample.util_pct == pytest.approx(99.95)
    assert sample.avg_queue == pytest.approx(399012 / 20000)


def test_seed_002_class4_card_install_is_judged_bound_by_random_writes() -> None:
    before, after = pair("kernel-4.19-18-fields", "mmcblk0")
    summary = summarise(before, after, 20.0, random_write_iops=33)
    assert summary.random_write_bound is True
    assert summary.write_share_ops == 1.0
    assert "79% of its 33 random-write IOPS" in summary.verdict


def test_seed_002_emmc_install_interval_is_also_write_bound() -> None:
    # 86% busy, 42 KiB per write, 99% of requests writes: the eMMC was busy with small writes.
    before, after = pair("kernel-4.14-14-fields", "mmcblk1")
    summary = summarise(before, after, 20.0)
    assert summary.write_share_ops == pytest.approx(3714 / 3754)
    assert summary.random_write_bound is True


def test_kernel_6_18_recording_from_this_project_has_discards_and_flushes() -> None:
    before, after = pair("kernel-6.18-20-fields", "vda")
    assert before.fields == 20 and before.flushes == 4875 and before.flush_ms == 338
    sample = compute_sample(before, after, 1.0, 1.0)
    assert (sample.read_ios, sample.write_ios) == (29, 32)
    assert sample.write_bytes == 32 * 64 * 1024  # dd bs=64k count=32 oflag=direct
    assert sample.discard_ios == 4 and sample.flush_ios == 0
    assert sample.read_merges == after.reads_merged - before.reads_merged  # type: ignore[operator]


def test_counters_that_wrapped_at_32_bits_give_the_true_delta() -> None:
    # iostats.rst: counters are unsigned long, 32 bits on the 32-bit ARM boards.
    text_before = " 179 0 mmcblk0 4294967290 0 4294967000 0 10 0 80 0 0 100 100"
    text_after = " 179 0 mmcblk0 4 0 296 0 20 0 160 0 0 200 200"
    before = parse_diskstats(text_before)["mmcblk0"]
    after = parse_diskstats(text_after)["mmcblk0"]
    sample = compute_sample(before, after, 1.0, 1.0)
    assert sample.read_ios == 10
    assert sample.read_bytes == 592 * 512


def test_a_format_no_kernel_had_is_refused_with_the_line_quoted() -> None:
    text = (DISKSTATS / "unknown-format.txt").read_text()
    with pytest.raises(DiskstatsFormatError, match=r"16 fields.*mmcblk0 18234"):
        parse_diskstats(text)


def test_a_counter_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(DiskstatsFormatError, match="not a whole number"):
        parse_diskstats(" 8 0 sda 1 2 3 x 5 6 7 8 9 10 11")


def test_idle_device_gets_no_verdict() -> None:
    before, _ = pair("kernel-4.19-18-fields", "mmcblk1")
    summary = summarise(before, before, 20.0)
    assert summary.random_write_bound is None
    assert summary.verdict == "no I/O reached the device"
