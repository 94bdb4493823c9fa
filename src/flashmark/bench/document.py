"""Run <-> the JSON result document "flashmark.result/1" (documented in docs/result-schema.md).

The document is what `run --json` prints, what the history stores, and what exporters read:
the Run's dataclasses (flashmark.bench.model) in the one codec. Its version history: SCHEMA
below; every key it lists is required.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flashmark.bench.run_result import Run
from flashmark.codec import Codec

# `run --json`, the history's benchmarks, every exporter's input (docs/result-schema.md).
#   1: what this version writes, every key required. Added during 1, which a reader of its
#      first form can ignore: "probe", "findings", "workloads"
#      (run), "workload_scale" (settings), "device_activity" (per test), "fio_runtime_ms"
#      (per direction); "accepted_iops", "accepted_bw_bytes", "fsync_ms", "ci95" (per
#      direction) with exact windows: rates count only the I/O completed in the window, and
#      write headlines became durable rates (the meaning of "iops"/"bw_bytes" is sharper, not
#      different: a 1-reader reads them); "verdict" ("pass" | "fail" | "uncertain" | null)
#      and "verdict_reason" per grade, "verdict" and "interval" per check: a grade whose check's
#      95% interval contains the threshold is "uncertain", never "fail", and its "pass" is false
#      (true only for "pass").
#      "passport" (run): the measured SD/eMMC card's passport, or null.
#      "sustained" (per direction): the sustained-write test's {"cache_bytes",
#      "burst_bw_bytes", "sustained_bw_bytes"}, null elsewhere; speed-class checks then read
#      that test's sustained rate (the check's "test" says so).
#      Later in "sustained": "written_bytes", "stopped_by" ("steady" | "size limit" |
#      "time limit"), "cache_exceeded" (true | false: no fall-off before a limit, the cache
#      may be larger | null) and "sub_units" (the SD speed-class measurement: slowest and
#      median 4 MiB sub-unit after the cache with the slowest's "min_bw_bounds", longest write
#      busy with its bounds, writes over the 250 ms limit, "method"); speed classes then grade the
#      slowest sub-unit plus a busy check, and a class that would pass on a test that never
#      left the cache is "uncertain". "at_most" per check (true: the value must be at most the
#      threshold, the busy check; margin_pct is then headroom below it); a 1-reader still
#      reads every check's "pass"/"verdict" right.
#      "decision" (per direction): the anytime-valid interval a test that stopped on its
#      verdict is judged on; null for a test of fixed length.
#      "disturbance" (per test): whether another process used the device or the CPUs were
#      saturated during the test (flashmark.bench.disturbance); a disturbed test's checks are
#      "uncertain".
#      "summary" (run): the run's answer in one line, the terminal's `verdict:` line
#      (flashmark.bench.run_result); written from the run, never read back.
SCHEMA = "flashmark.result/1"


RUN_DOCUMENT = Codec(Run, SCHEMA, "result")


def run_to_document(run: Run) -> dict[str, Any]:
    return RUN_DOCUMENT.write(run)


def document_to_run(document: Mapping[str, Any]) -> Run:
    """A saved document back into a Run; loud about documents this version cannot read."""
    return RUN_DOCUMENT.read(document)
