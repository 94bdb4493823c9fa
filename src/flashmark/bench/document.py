"""Run <-> the JSON result document "flashmark.result/1" (documented in docs/result-schema.md).

The document is what `run --json` prints, what the history stores, and what exporters read:
the Run's dataclasses (flashmark.bench.model) in the one codec. Its version history: SCHEMA
below; what documents written before a key existed read it as: EARLIER.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flashmark.bench.model import (
    Check,
    DirectionResult,
    Grade,
    Passport,
    PassportPoint,
    RateIntervals,
    Settings,
    SubUnitRates,
    SustainedWrite,
    TestResult,
)
from flashmark.bench.run_result import Partial, Run
from flashmark.codec import Codec, Defaults
from flashmark.monitor.series import EARLIER as MONITOR_EARLIER
from flashmark.stats import CONFIDENCE, Verdict
from flashmark.workloads.result import EARLIER as WORKLOAD_EARLIER

# `run --json`, the history's benchmarks, every exporter's input (docs/result-schema.md).
#   1: first version. Later additions a 1-reader can ignore: "probe", "findings", "workloads"
#      (run), "workload_scale" (settings), "device_activity" (per test), "fio_runtime_ms"
#      (per direction); "accepted_iops", "accepted_bw_bytes", "fsync_ms", "ci95" (per
#      direction) with exact windows: rates count only the I/O completed in the window, and
#      write headlines became durable rates (the meaning of "iops"/"bw_bytes" is sharper, not
#      different: a 1-reader reads them); "verdict" ("pass" | "fail" | "uncertain" | null)
#      and "verdict_reason" per grade, "verdict" and "interval" per check: a grade whose check's
#      95% interval contains the threshold is "uncertain", never "fail", and its "pass" is false
#      (true only for "pass"). Documents without "verdict" read it from "pass".
#      "passport" (run): the measured SD/eMMC card's passport, or null.
#      "sustained" (per direction): the sustained-write test's {"cache_bytes",
#      "burst_bw_bytes", "sustained_bw_bytes"}, null elsewhere; speed-class checks then read
#      that test's sustained rate (the check's "test" says so). Documents without it read null.
#      Later in "sustained": "written_bytes", "stopped_by" ("steady" | "size limit" |
#      "time limit"), "cache_exceeded" (true | false: no fall-off before a limit, the cache
#      may be larger | null) and "sub_units" (the SD speed-class measurement: slowest and
#      median 4 MiB sub-unit after the cache with the slowest's "min_bw_bounds", longest write
#      busy with its bounds, writes over the 250 ms limit, "method"); speed classes then grade the
#      slowest sub-unit plus a busy check, and a class that would pass on a test that never
#      left the cache is "uncertain". "at_most" per check (true: the value must be at most the
#      threshold, the busy check; margin_pct is then headroom below it); read as false when
#      absent. A 1-reader still reads every check's "pass"/"verdict" right.
#      "decision" (per direction): the anytime-valid interval a test that stopped on its
#      verdict is judged on; null for a test of fixed length. Documents without it read null.
#      "disturbance" (per test): whether another process used the device or the CPUs were
#      saturated during the test (flashmark.bench.disturbance); a disturbed test's checks are
#      "uncertain". Documents without it read null.
#      "summary" (run): the run's answer in one line, the terminal's `verdict:` line
#      (flashmark.bench.run_result); written from the run, never read back, so a document without
#      it reads as before.
SCHEMA = "flashmark.result/1"


def _verdict_of_pass(checked: Mapping[str, Any]) -> Verdict | None:
    """A grade's or check's verdict in a document saved before it existed: its "pass"."""
    passed = checked["pass"]
    return None if passed is None else Verdict.PASS if passed else Verdict.FAIL


# The 95% intervals' method before batch means: documents that lack "method" were written then.
AR1_METHOD = (
    "Student t interval of the mean of rates over about a second each, between burst ends, "
    "sample count reduced for lag-1 autocorrelation (AR(1): n_eff = n(1-r)/(1+r), r >= 0)"
)

# Keys a document may lack, by class, and what they read as (every other key is required).
EARLIER = (
    Defaults(
        {
            Run: {
                "id": None,  # not saved in the history yet
                "tests_skipped": (),
                "findings": (),
                "workloads": (),
                "probe": None,
                "passport": None,
                "partial": None,
            },
            Settings: {
                # Before it existed every timed test ramped ramp_s.
                "follow_ramp_s": lambda settings: settings["ramp_s"],
                "workload_scale": 0.0,
                # Before adaptive lengths every test ran runtime_s.
                "first_window_s": None,
            },
            TestResult: {
                "lengthened": None,  # before adaptive lengths
                "discarded_s": 0.0,  # before 2026-11-24
                "device_activity": None,
                "disturbance": None,  # before the disturbance check (2026-11-28)
            },
            DirectionResult: {
                # flashmark 0.1.0 before the field existed.
                "fio_runtime_ms": lambda direction: direction["runtime_ms"],
                # Before exact windows (all four).
                "accepted_iops": None,
                "accepted_bw_bytes": None,
                "fsync_ms": None,
                "ci95": None,
                "decision": None,  # before tests stopped on their verdicts
                "sustained": None,  # before the sustained-write test existed
            },
            # Documents that lack the method were written when it was this one.
            RateIntervals: {"confidence": CONFIDENCE, "method": AR1_METHOD},
            SustainedWrite: {
                "cache_bytes": None,
                "burst_bw_bytes": None,
                "written_bytes": None,
                "stopped_by": None,
                "cache_exceeded": None,
                "sub_units": None,
            },
            SubUnitRates: {"method": ""},
            Grade: {"verdict": _verdict_of_pass, "verdict_reason": ""},
            Check: {"verdict": _verdict_of_pass, "interval": None, "at_most": False},
            Passport: {"points": (), "seen_before": ()},
            PassportPoint: {"evidence": "", "source": ""},
            Partial: {"not_run": ()},
        }
    )
    | MONITOR_EARLIER
    | WORKLOAD_EARLIER
)

RUN_DOCUMENT = Codec(Run, SCHEMA, "result", EARLIER)


def run_to_document(run: Run) -> dict[str, Any]:
    return RUN_DOCUMENT.write(run)


def document_to_run(document: Mapping[str, Any]) -> Run:
    """A saved document back into a Run; loud about documents this version cannot read."""
    return RUN_DOCUMENT.read(document)
