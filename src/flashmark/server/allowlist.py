"""What `flashmark upload` sends, field by field, for every kind of result the service accepts.

An upload is built from these tables (outgoing.py), never copied from the saved document: a
field is sent only when listed here, as its rule says (fields.py). What may name a person, a
machine or one device (host and user names, paths, serial numbers, addresses, free texts that
may quote them) is not listed, or sent as WITHHELD or null so the document keeps its shape.
The tables follow the documents' own order; a comment says why wherever a field is a judgement.
"""

from __future__ import annotations

from collections.abc import Mapping

from flashmark.bench.document import SCHEMA as RUN_SCHEMA
from flashmark.bench.grading.classes import (
    BUSY_CHECK_NAME,
    GRADE_RULES,
    SUB_UNIT_CHECK_NAME,
    SUSTAINED_CHECK_NAME,
    SUSTAINED_NOTE,
    SUSTAINED_WHOLE_NOTE,
)
from flashmark.bench.model import DisturbanceStatus, Pattern
from flashmark.bench.profiles import PROFILES
from flashmark.health.result import HEALTH_SCHEMA
from flashmark.probe.model import SCHEMA as PROBE_SCHEMA
from flashmark.probe.sd_vendor_health import VENDOR_COMMANDS
from flashmark.server.campaign_names import campaign_problem, label_problem
from flashmark.server.fields import (
    Always,
    Chosen,
    DeviceNode,
    Fields,
    Flag,
    ListOf,
    MapOf,
    MaskedCid,
    Matching,
    MountOptions,
    Number,
    OneOf,
    Rule,
    Text,
    Whole,
    Withheld,
)
from flashmark.stats import Verdict
from flashmark.system.diskstats import FORMAT_FIELDS
from flashmark.workloads.session import WORKLOAD_NAMES

# -- shapes and words used below ----------------------------------------------------------------

# Digits and fixed separators only: nothing else fits, so it needs no screening (a host
# called "22" leaves 2026-11-22T01:35:25Z alone).
TIMESTAMP = Matching(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})", screened=False
)
VERSION = Matching(r"\d{1,4}(?:\.\d{1,6}){1,3}(?:[.+-][0-9A-Za-z.+-]{0,32})?")
# A kernel's name for a block device, a thermal zone, a governor: what the kernel calls it.
KERNEL_NAME = Matching(r"[a-z][a-z0-9_-]{0,31}")
DEVICE_NODE = DeviceNode(KERNEL_NAME)
# probe/block.py classify(): the kinds of device flashmark tells apart.
DEVICE_KIND = OneOf(
    "sd", "emmc", "ufs", "nvme", "usb", "sata", "virtio", "loop", "md", "dm", "zram", "scsi",
    "unknown",
)  # fmt: skip
KERNEL_RELEASE = Matching(r"[0-9][0-9A-Za-z.+~_-]{0,63}")
FILESYSTEM_TYPE = Matching(r"[a-z0-9][a-z0-9._-]{0,31}")
# Model names are what a device or the firmware reports (SD64G, Samsung SSD 980, Raspberry Pi
# 5 Model B Rev 1.0): they say which model, not which unit, and are what results are compared
# by. They are screened like every text (a device may report its serial number as a model).
MODEL_NAME = Text(max_length=100)
# Mount points people share: the standard places (Filesystem Hierarchy Standard 3.0). Others
# (/media/alice/3F2A-1B4C, /mnt/photos-of-bob) may name a user or a volume.
MOUNT_POINT = OneOf(
    "/", "/boot", "/boot/firmware", "/boot/efi", "/home", "/media", "/mnt", "/opt", "/srv",
    "/tmp", "/usr", "/var", "/var/tmp",
).or_withheld()  # fmt: skip
# Options that change how fast a file system reads and writes (mount(8), ext4(5), btrfs(5),
# f2fs, nfs(5), mount.cifs(8)); a network mount's user, address or credentials never are.
MOUNT_OPTIONS = MountOptions(
    frozenset(
        (
            "rw", "ro", "sync", "async", "dirsync", "atime", "noatime", "relatime",
            "strictatime", "diratime", "nodiratime", "lazytime", "nolazytime", "discard",
            "nodiscard", "barrier", "nobarrier", "data", "commit", "journal_checksum",
            "journal_async_commit", "delalloc", "nodelalloc", "inline_data", "dax", "compress",
            "compress-force", "ssd", "nossd", "ssd_spread", "space_cache", "autodefrag",
            "noautodefrag", "flush", "background_gc", "fsync_mode", "mode", "cache", "rsize",
            "wsize", "vers", "nfsvers", "hard", "soft", "actimeo", "noac",
        )
    )
).or_withheld()  # fmt: skip

VERDICT = OneOf(*(verdict.value for verdict in Verdict))
TEST_NAME = OneOf(*{test.name for profile in PROFILES.values() for test in profile.tests})
TEST_DESCRIPTION = OneOf(
    *{test.description for profile in PROFILES.values() for test in profile.tests}
).or_withheld()
GRADE_NAME = OneOf(*(rule.name for rule in GRADE_RULES))
GRADE_TITLE = OneOf(*(rule.title for rule in GRADE_RULES)).or_withheld()
GRADE_SOURCE = OneOf(*(rule.source for rule in GRADE_RULES)).or_withheld()
_NOTES = {rule.note for rule in GRADE_RULES}
GRADE_NOTE = OneOf(
    "",
    *_NOTES,
    SUSTAINED_NOTE,
    SUSTAINED_WHOLE_NOTE,
    *(
        f"{note}; {graded}"
        for note in _NOTES
        if note
        for graded in (SUSTAINED_NOTE, SUSTAINED_WHOLE_NOTE)
    ),
).or_withheld()
CHECK_NAME = OneOf(
    *{check.name for rule in GRADE_RULES for check in rule.checks},
    SUSTAINED_CHECK_NAME,
    SUB_UNIT_CHECK_NAME,
    BUSY_CHECK_NAME,
).or_withheld()
# The steps of a run (bench/measure.py _steps): its tests, the preparation, the workloads.
STEP_NAME = OneOf(
    *{test.name for profile in PROFILES.values() for test in profile.tests},
    "prepare",
    "workloads",
    "the end of the run",
).or_withheld()
# A text flashmark writes from figures and its own words (a verdict's reason, a method): it
# quotes no path or name, and is screened all the same.
MADE_TEXT = Text()


# Figures, by name: "a b c" is three fields of the same rule.
def _numbers(names: str) -> dict[str, Rule]:
    return dict.fromkeys(names.split(), Number())


def _counts(names: str) -> dict[str, Rule]:
    return dict.fromkeys(names.split(), Whole())


def _maybe_numbers(names: str) -> dict[str, Rule]:
    return dict.fromkeys(names.split(), Number().nullable())


def _maybe_counts(names: str) -> dict[str, Rule]:
    return dict.fromkeys(names.split(), Whole().nullable())


# -- what a device did: /proc/diskstats samples (a run's tests, workloads, monitor) ---------------

MONITOR_SUMMARY = Fields(
    {
        "seconds": Number(),
        **_counts("read_ios write_ios read_bytes write_bytes"),
        **_numbers("read_iops write_iops read_bps write_bps"),
        **_maybe_numbers(
            "peak_read_iops peak_write_iops avg_read_request_bytes avg_write_request_bytes "
            "write_share_ops write_share_bytes util_pct avg_queue"
        ),
        "flush_ios": Whole().nullable(),
        "random_write_bound": Flag().nullable(),
        "verdict": MADE_TEXT.or_withheld(),
    }
)
MONITOR_SAMPLE = Fields(
    {
        **_numbers("t_s interval_s read_iops write_iops read_bps write_bps"),
        **_counts("read_ios write_ios read_bytes write_bytes"),
        **_maybe_numbers(
            "avg_request_bytes avg_read_request_bytes avg_write_request_bytes read_await_ms "
            "write_await_ms avg_queue util_pct"
        ),
        **_maybe_counts("in_flight discard_ios flush_ios read_merges write_merges"),
    }
)
DISK_COUNTERS = Fields(
    {
        "major": Whole(),
        "minor": Whole(),
        "name": KERNEL_NAME.or_withheld(),
        "fields": Whole(),
        **_counts("reads sectors_read writes sectors_written"),
        **_maybe_counts(
            "reads_merged read_ms writes_merged write_ms in_flight io_ms weighted_io_ms discards "
            "discards_merged sectors_discarded discard_ms flushes flush_ms"
        ),
    }
)
PHASE_NAME = Matching(r"[a-z][a-z0-9 _-]{0,31}").or_withheld()
MONITOR_SERIES = Fields(
    {
        "device": KERNEL_NAME.or_withheld(),
        "interval_s": Number(),
        "diskstats_fields": Whole(),
        "diskstats_format": OneOf(*FORMAT_FIELDS.values(), "unknown").or_withheld(),
        "seconds": Number(),
        "summary": MONITOR_SUMMARY,
        "phases": ListOf(
            Fields({"name": PHASE_NAME, **_numbers("start_s end_s"), "summary": MONITOR_SUMMARY})
        ),
        "samples": ListOf(MONITOR_SAMPLE),
        "warnings": Always(()),  # may name the device's path or the command
        "random_write_iops": Number().nullable(),
        "first": DISK_COUNTERS,
        "last": DISK_COUNTERS,
    }
)

# -- real-world workloads (a run's, and `flashmark workload`) -----------------------------------

WORKLOAD = Fields(
    {
        "name": OneOf(*WORKLOAD_NAMES),
        "seconds": Number().nullable(),
        "skipped": Withheld(),  # the reason may name the folder or a program's path
        "description": MADE_TEXT.or_withheld(),
        "scale": Number(),
        "seed": Whole(),  # the package set's seed (workloads/packages.py), the same everywhere
        "setup_seconds": Number(),
        "counts": Fields(
            _counts(
                "packages files_written files_removed files_read bytes_written bytes_read fsyncs "
                "renames status_notes checkpoints"
            )
        ),
        "phases": ListOf(Fields({"name": PHASE_NAME, "seconds": Number()})),
        "device": KERNEL_NAME.or_withheld(),
        "monitor": MONITOR_SERIES.nullable(),
    }
)

# -- the probe (`flashmark probe`, a run's "probe") -----------------------------------------------

CID = Fields(
    {
        # Rebuilt by outgoing.py: the register with its serial (PSN) and CRC digits zeroed,
        # the CRC being computed over the serial (SD Physical Layer Simplified Specification
        # 5.2; JESD84-B51 7.2); withheld when it does not decode to the fields below.
        "raw": Withheld(),
        "manufacturer_id": Whole(),  # MID
        "oem_id": Matching(r"0x[0-9a-f]{2,4}").or_withheld(),  # OID
        "oem_id_text": Text(max_length=8).or_withheld(),
        "product_name": MODEL_NAME.or_withheld(),  # PNM
        "revision": Matching(r"\d{1,2}\.\d{1,2}").or_withheld(),  # PRV
        # PSN: the card's serial number. 0 here means "withheld"; a card whose serial is
        # really 0 (a counterfeit sign) says so in counterfeit_flags.
        "serial": Always(0),
        "manufactured": Matching(r"\d{4}-\d{2}").or_null(),  # MDT: a month, shared by a batch
    }
)
CARD = Fields(
    {
        "type": OneOf("SD", "MMC", "SDIO"),
        "cid": CID.nullable(),
        # The other registers' raw dumps hold no serial, but only their decoded fields are
        # needed: the dumps stay here.
        "csd": Fields(
            {
                "raw": Withheld(),
                "structure": Whole(),
                "version": MADE_TEXT.or_withheld(),
                "capacity_bytes": Whole().nullable(),
            }
        ).nullable(),
        "scr": Fields(
            {
                "raw": Withheld(),
                "spec_version": MADE_TEXT.or_withheld(),
                "bus_widths": ListOf(Whole()),
            }
        ).nullable(),
        "ssr": Fields(
            {
                "raw": Withheld(),
                **{
                    name: Matching(r"[ACUV][0-9]{1,2}").or_null()
                    for name in ("speed_class", "uhs_grade", "video_class", "app_class")
                },
                **_maybe_counts("au_size_bytes command_queue_depth"),
                "cache_supported": Flag().nullable(),
            }
        ).nullable(),
        "manufacturer": MODEL_NAME.or_null(),
        "manufacturer_source": MADE_TEXT.or_null(),
        "counterfeit_flags": ListOf(MADE_TEXT, drop=True),
        "claimed": Fields(
            {
                name: Matching(r"[ACUV][0-9]{1,2}").or_null()
                for name in ("speed_class", "uhs_grade", "video_class", "app_class")
            }
        ),
    }
)
# The wear a device reports (probe.model.Health): figures of the model's wear, not of who owns
# it. The drive's lifetime count of data written is sent too: a figure of how it was used.
DEVICE_HEALTH: dict[str, Rule] = {
    "life_time_a": MADE_TEXT.or_null(),
    "life_time_b": MADE_TEXT.or_null(),
    "pre_eol": MADE_TEXT.or_null(),
    **_maybe_counts("percentage_used media_errors critical_warning"),
    "temperature_c": Number().nullable(),
    "sources": ListOf(MADE_TEXT, drop=True),
    **_maybe_counts("available_spare available_spare_threshold data_units_written"),
}
DEVICE = Fields(
    {
        "name": KERNEL_NAME.or_withheld(),
        "kind": DEVICE_KIND,
        # The bus path (devices/platform/.../mmc0:5048/block/mmcblk0) fingerprints this
        # machine's hardware layout and says nothing the fields below do not.
        "sysfs_path": Withheld(),
        "vendor": MODEL_NAME.or_null(),
        "model": MODEL_NAME.or_null(),
        "serial": Always(None),
        "firmware": MODEL_NAME.or_null(),
        **_maybe_counts("capacity_bytes logical_sector_bytes physical_sector_bytes read_ahead_kb"),
        "rotational": Flag().nullable(),
        "removable": Flag().nullable(),
        "scheduler": KERNEL_NAME.or_null(),
        "write_cache": OneOf("write back", "write through").or_null(),
        "card": CARD.nullable(),
        "mmc_bus": Fields(
            {
                "host": Matching(r"mmc[0-9]{1,3}").or_withheld(),
                # A driver's name; a device-tree node (fe340000.mmc) is dropped by the screen.
                "controller": Matching(r"[A-Za-z0-9_.-]{1,48}").or_null(),
                "timing": MADE_TEXT.or_null(),
                **_maybe_counts("clock_hz actual_clock_hz bus_width_bits"),
                "signal_voltage": MADE_TEXT.or_null(),
                "timing_source": MADE_TEXT.or_null(),
                "command_queue": Flag().nullable(),
                "command_queue_source": MADE_TEXT.or_null(),
                "cache_enabled": Flag().nullable(),
                "cache_source": MADE_TEXT.or_null(),
            }
        ).nullable(),
        "pcie": Fields(
            {
                "current_speed": MADE_TEXT.or_null(),
                "current_width": Whole().nullable(),
                "max_speed": MADE_TEXT.or_null(),
                "max_width": Whole().nullable(),
            }
        ).nullable(),
        "usb": Fields(
            {
                # The port (2-1.3) is where it is plugged in, not which device it is.
                "port": Matching(r"[0-9]{1,3}-[0-9.]{1,16}").or_withheld(),
                "vendor_id": Matching(r"[0-9a-f]{4}").or_null(),
                "product_id": Matching(r"[0-9a-f]{4}").or_null(),
                "manufacturer": MODEL_NAME.or_null(),
                "product": MODEL_NAME.or_null(),
                "speed_mbps": Whole().nullable(),
                "usb_version": Matching(r"[0-9]{1,2}\.[0-9]{1,2}").or_null(),
                "best_speed_mbps": Whole().nullable(),
                "driver": KERNEL_NAME.or_null(),
            }
        ).nullable(),
        "health": Fields(DEVICE_HEALTH).nullable(),
        "unreadable": Always(()),  # quotes what a sysfs file held, a serial number's included
    }
)
ENVIRONMENT = Fields(
    {
        "board": MODEL_NAME.or_null(),
        "cpu_model": MODEL_NAME.or_null(),
        "cpu_count": Whole().nullable(),
        "kernel": KERNEL_RELEASE.or_null(),
        "distribution": MODEL_NAME.or_null(),
        "filesystem": FILESYSTEM_TYPE.or_null(),
        "mount_point": MOUNT_POINT,
        # /dev/mmcblk0p2 is sent; user@host:/share, //server/share, UUID=... are not.
        "mount_source": DEVICE_NODE.or_withheld(),
        "mount_options": MOUNT_OPTIONS,
        **_maybe_counts("free_bytes total_bytes"),
        "cpu_governors": ListOf(KERNEL_NAME, drop=True),
        "cpu_mhz": ListOf(Whole()),
        "cpu_max_mhz": Whole().nullable(),
        "temperatures": ListOf(
            Fields(
                {
                    "zone": KERNEL_NAME.or_withheld(),
                    "type": Matching(r"[A-Za-z0-9_.-]{1,32}").or_null(),
                    "celsius": Number(),
                }
            ),
            drop=True,
        ),
        "throttling": Fields(
            {
                "raw": Matching(r"0x[0-9a-fA-F]{1,8}").or_withheld(),
                "now": ListOf(MADE_TEXT, drop=True),
                "since_boot": ListOf(MADE_TEXT, drop=True),
            }
        ).nullable(),
        **_maybe_numbers("load_1m load_5m load_15m iowait_pct sample_window_s device_busy_pct"),
        "device_inflight": Whole().nullable(),
    }
)
PROBE = Fields(
    {
        "schema": OneOf(PROBE_SCHEMA),
        "target": Withheld(),
        "resolved": Withheld(),
        "target_type": OneOf("folder", "file", "block device").or_withheld(),
        # The stack from the target down: a filesystem layer is named by its mount point, a
        # file by its path (both withheld by the kernel-name rule); details quote mount
        # sources and backing files.
        "layers": ListOf(
            Fields(
                {
                    "kind": OneOf(
                        "filesystem", "file", "partition", "loop", "device-mapper", "md", "device"
                    ),
                    "name": KERNEL_NAME.or_withheld(),
                    "detail": Withheld(),
                }
            )
        ),
        "devices": ListOf(DEVICE),
        "environment": ENVIRONMENT,
        "warnings": Always(()),  # may quote device paths and mount points
        "notes": Always(()),  # what could not be read and why, with paths
    }
)

# The card passport of a run (passport.py): the verdict and its points without their
# evidence, which quotes the serial number (PSN 0x...) and this history's result ids.
PASSPORT = Fields(
    {
        "device": KERNEL_NAME.or_withheld(),
        "cid": Always(None),  # the whole CID, serial included: how the card is recognised
        "verdict": OneOf("fake", "suspicious", "no sign of a fake", "unknown"),
        "points": ListOf(
            Fields(
                {
                    "topic": OneOf("identity", "capacity", "classes", "host"),
                    "status": OneOf("ok", "suspicious", "fake", "unknown", "info"),
                    "text": MADE_TEXT,
                    "evidence": Always(""),
                    "source": MADE_TEXT.or_withheld(),
                }
            ),
            drop=True,
        ),
        "seen_before": Always(()),  # ids in this machine's history
    }
)

# -- flashmark.result/1: `flashmark run` --------------------------------------------------------

SUB_UNITS = Fields(
    {
        **_counts("sub_unit_bytes from_bytes count"),
        "min_bw_bytes": Number(),
        "min_bw_bounds": ListOf(Number()),
        "median_bw_bytes": Number(),
        "max_busy_ms": Number(),
        "max_busy_bounds": ListOf(Number()),
        "busy_over_limit": Whole(),
        "busy_limit_ms": Number(),
        "method": MADE_TEXT.or_withheld(),
    }
)
# A direction's "ci95" and "decision" (flashmark.bench.model.RateIntervals).
RATE_INTERVALS = Fields(
    {
        "bw_bytes": ListOf(Number()),
        "iops": ListOf(Number()),
        "samples": Whole(),
        **_numbers("effective_samples confidence"),
        "method": MADE_TEXT.or_withheld(),
    }
)
DIRECTION = Fields(
    {
        **_numbers("iops bw_bytes"),
        **_counts("io_bytes total_ios runtime_ms fio_runtime_ms"),
        **_maybe_numbers("accepted_iops accepted_bw_bytes fsync_ms"),
        "ci95": RATE_INTERVALS.nullable(),
        "decision": RATE_INTERVALS.nullable(),
        "sustained": Fields(
            {
                "cache_bytes": Whole().nullable(),
                "burst_bw_bytes": Number().nullable(),
                "sustained_bw_bytes": Number(),
                "written_bytes": Whole().nullable(),
                "stopped_by": OneOf("steady", "size limit", "time limit").or_null(),
                "cache_exceeded": Flag().nullable(),
                "sub_units": SUB_UNITS.nullable(),
            }
        ).nullable(),
        "lat_ns": Fields(_numbers("min mean max stddev p50 p90 p99 p99.9 p99.99")),
        "bw_per_second": Fields(
            {
                "interval_ms": Whole(),
                **_numbers("min max mean stddev"),
                "samples": ListOf(Number()),
            }
        ).nullable(),
    }
)
TEST = Fields(
    {
        "name": TEST_NAME,
        "description": TEST_DESCRIPTION,
        "pattern": OneOf(*(pattern.value for pattern in Pattern)),
        **_counts("block_size_bytes iodepth"),
        "rwmix_read_pct": Whole().nullable(),
        **_numbers("elapsed_s discarded_s"),
        "lengthened": MADE_TEXT.or_withheld(),
        "read": DIRECTION.nullable(),
        "write": DIRECTION.nullable(),
        # The fio job file names the test file and fio's log folder; the test's name, pattern,
        # block size and depth with the settings and flashmark's version make it again.
        "job": Withheld(),
        "device_activity": MONITOR_SERIES.nullable(),
        # Whether the test had the device to itself: why not is flashmark's own sentence, which
        # names the whole disk (as "path" does for a device) and is screened like every text.
        "disturbance": Fields(
            {
                "status": OneOf(*(status.value for status in DisturbanceStatus)),
                "reason": MADE_TEXT.or_withheld(),
                "device": KERNEL_NAME.or_withheld(),
                **_maybe_numbers(
                    "read_bytes_per_s write_bytes_per_s read_requests_per_s"
                    " write_requests_per_s cpu_some_pct fio_cpu_wait_pct"
                ),
                "retries": Whole(),
            }
        ).nullable(),
    }
)
CHECK = Fields(
    {
        "name": CHECK_NAME,
        "test": TEST_NAME,
        "metric": OneOf("read_iops", "write_iops", "write_bw_bytes", "write_busy_ms"),
        "unit": OneOf("IOPS", "MB/s", "ms"),
        "threshold": Number(),
        **_maybe_numbers("value margin_pct"),
        "pass": Flag().nullable(),
        "verdict": VERDICT.nullable(),
        "interval": ListOf(Number()).nullable(),
        "at_most": Flag(),
    }
)
GRADE = Fields(
    {
        "title": GRADE_TITLE,
        "pass": Flag().nullable(),
        "verdict": VERDICT.nullable(),
        "verdict_reason": MADE_TEXT.or_withheld(),
        "note": GRADE_NOTE,
        "source": GRADE_SOURCE,
        "checks": ListOf(CHECK),
    }
)
RUN = Fields(
    {
        "schema": OneOf(RUN_SCHEMA),
        # "id" (this history's) is not sent
        "flashmark_version": VERSION.or_withheld(),
        # When, not who: the service orders and tells results apart by them.
        "started_at": TIMESTAMP,
        "finished_at": TIMESTAMP,
        "target": Fields(
            {
                "given": Withheld(),  # as typed: a path
                "kind": OneOf("file", "device"),
                "path": DEVICE_NODE.or_withheld(),  # a device's node is sent, a test file's not
                "folder": Withheld(),
                "block_device": DEVICE_NODE.or_withheld(),
                "filesystem": FILESYSTEM_TYPE.or_null(),
                "mount_point": MOUNT_POINT,
                "mount_options": MOUNT_OPTIONS,
                "capacity_bytes": Whole().nullable(),
            }
        ),
        "settings": Fields(
            {
                "profile": OneOf(*PROFILES),
                **_counts("size_bytes runtime_s ramp_s follow_ramp_s"),
                "direct": Flag(),
                "destructive": Flag(),
                "ioengine": KERNEL_NAME.or_withheld(),
                "workload_scale": Number(),
                "first_window_s": Whole().nullable(),
            }
        ),
        "host": Fields(
            {
                "hostname": Withheld(),
                "kernel": KERNEL_RELEASE.or_withheld(),
                "machine": Matching(r"[a-z0-9_]{1,16}").or_withheld(),
                "python": VERSION.or_withheld(),
            }
        ),
        "fio": Fields(
            {
                "version": Matching(r"fio-[0-9][0-9A-Za-z.+~_-]{0,31}").or_withheld(),
                "command": Always(()),  # the job file's and the output's paths
            }
        ),
        "tests": ListOf(TEST),
        "tests_skipped": ListOf(TEST_NAME, drop=True),
        "grades": MapOf(GRADE_NAME, GRADE),
        "warnings": Always(()),  # may quote paths, devices, mount sources
        # Claimed against measured, written from the card's claims and the grades only.
        "findings": ListOf(MADE_TEXT, drop=True),
        "workloads": ListOf(WORKLOAD),
        "probe": PROBE.nullable(),
        "passport": PASSPORT.nullable(),
        # Why a run holds only some of its tests (a board whose card failed mid-run): the step
        # and those not run (flashmark's own words) and the exit status; the error's text may
        # quote a path or a device.
        "partial": Fields(
            {
                "failed_step": STEP_NAME,
                "error": Withheld(),
                "exit_status": Whole(),
                "not_run": ListOf(STEP_NAME, drop=True),
            }
        ).nullable(),
    }
)

# -- flashmark.health/1: `flashmark health` -----------------------------------------------------

# An SD card's answer to its vendor's health command (probe.model.VendorHealth): figures and
# flashmark's names for them; the firmware and date are the card's own texts, screened.
VENDOR_HEALTH = Fields(
    {
        "vendor": MADE_TEXT.or_withheld(),  # whose layout answered: flashmark's name for it
        # The command and its argument, as flashmark sends it to a vendor's cards (a text
        # screen would take the argument, 0x00000001, for a serial number).
        "command": OneOf(
            *(entry.described(arg) for entry in VENDOR_COMMANDS for arg in entry.reads)
        ).or_withheld(),
        **_maybe_numbers("life_used_low_pct life_used_high_pct"),
        **_maybe_counts(
            "erase_count_average erase_count_max erase_count_total rated_erase_cycles "
            "spare_blocks bad_blocks_factory bad_blocks_grown power_on_count power_loss_count"
        ),
        "manufactured": MADE_TEXT.or_null(),
        "firmware": MODEL_NAME.or_null(),
        "other": ListOf(MADE_TEXT, drop=True),  # a layout's figures, named by flashmark
    }
)
HEALTH = Fields(
    {
        "schema": OneOf(HEALTH_SCHEMA),
        # The answer in one line, written from the alarms, forecast and rate below.
        "summary": MADE_TEXT.or_withheld(),
        "flashmark_version": VERSION.or_withheld(),
        "target": Withheld(),  # as typed: a path
        "device": DEVICE_NODE.or_withheld(),
        "device_kind": DEVICE_KIND,
        "model": MODEL_NAME.or_null(),  # which model, as a run's probe sends it
        "capacity_bytes": Whole().nullable(),
        # How this machine's history finds the device again: its CID or its serial number.
        "device_key": Withheld(),
        # Rebuilt by outgoing.py as a run's CID: the register with its serial (PSN) and CRC
        # zeroed; withheld when it does not decode or its name holds an identifier.
        "card_cid": MaskedCid(),
        "health": Fields(
            {
                **DEVICE_HEALTH,
                # Hours powered on and the drive's own verdict: how it was used, not whose.
                "power_on_hours": Whole().nullable(),
                "smart_passed": Flag().nullable(),
                "wear_read": OneOf("ext_csd", "cmd56").or_null(),
                "vendor": VENDOR_HEALTH.nullable(),
            }
        ),
        # The kernel's write counter: the time and the count are figures; the boot id names
        # one boot of one machine, and would link its uploads.
        "counter": Fields(
            {
                "seconds": Number(),
                "boot_id": Withheld(),
                "sectors_written": Whole(),
                "counter_bits": Whole(),
            }
        ).nullable(),
        "readings": Whole(),
        "span_days": Number(),
        # The writes a day and the years that leaves: what a reading is shared for.
        "rate": Fields(
            {
                **_numbers("bytes_per_day over_s"),
                "since_boot": Flag(),
                **_maybe_numbers("low_per_day high_per_day"),
            }
        ).nullable(),
        "forecast": Fields(
            {
                **_maybe_numbers(
                    "years_low years_high remaining_bytes_low remaining_bytes_high wear_low "
                    "wear_high"
                ),
                "steps_seen": Whole(),
                **_maybe_numbers("bytes_per_day full_writes_per_day"),
            }
        ),
        # The device's alarms: flashmark's phrases with the device's figures, screened.
        "red_flags": ListOf(MADE_TEXT, drop=True),
        "skipped": Always(()),  # what was not read and how: quotes the target and commands
        "finished_at": TIMESTAMP,
    }
)

# What the uploader adds to a document of any kind, each by the user's choice for this upload
# and none part of a saved result (flashmark upload --link-card, --campaign, --label).
UPLOAD_CHOICES = Fields(
    {
        # 128 bits of a keyed hash of the card's identity, under a salt that stays on the
        # machine (server/upload.py card_link): links one card's uploads, names no serial.
        "card_link": Matching(r"[0-9a-f]{32}", screened=False),
        # Which batch of runs this is (flashmark fleet run --campaign).
        "campaign": Chosen(campaign_problem),
        # The one name of the board that leaves it, the one the user chose: Ansible's
        # inventory name of the host (or flashmark_label). Screened for the shapes of
        # addresses and serial numbers, not for this machine's names (campaign_names.py).
        "board_label": Chosen(label_problem),
    }
)

# The kinds of document the results service accepts (intake.ACCEPTED_SCHEMAS), by schema:
# only these are uploaded, so no table is kept for a kind no service would take.
ALLOW_LISTS: Mapping[str, Rule] = {RUN_SCHEMA: RUN, HEALTH_SCHEMA: HEALTH}


def field_table() -> list[tuple[str, str]]:
    """Every place an upload may hold, with what is sent there (`flashmark upload --fields`):
    the tables above, read as one list for review."""
    rows = [
        row
        for schema, table in ALLOW_LISTS.items()
        for row in table.rows(schema.partition("/")[0].removeprefix("flashmark."))
    ]
    return [*rows, *UPLOAD_CHOICES.rows("upload")]
