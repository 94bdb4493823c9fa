"""The name and version of every document flashmark writes, and the history of each.

A document's "schema" field is NAME/VERSION. Bump VERSION on any change a reader must know
about; additions a reader of the same version may ignore keep it (and are listed here).
Readers refuse a newer version by name (documents.kinds.entry_for).
"""

from __future__ import annotations

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
RESULT = "flashmark.result/1"
# `monitor --json` and the history's monitor recordings (docs/workloads.md).
#   1: first version.
MONITOR = "flashmark.monitor/1"
# `workload --json` and the history's workload results (docs/workloads.md).
#   1: first version.
WORKLOADS = "flashmark.workloads/1"
# `probe --json`, and a run's "probe" (docs/probe.md).
#   1: first version.
PROBE = "flashmark.probe/1"
# `compare --json` (docs/reports.md).
#   1: first version.
COMPARE = "flashmark.compare/1"
# `clean --json` (docs/leftovers.md).
#   1: first version.
CLEAN = "flashmark.clean/1"
# `references --json` (docs/references.md).
#   1: first version.
REFERENCES = "flashmark.references/1"
# The reference data files shipped in flashmark/references/*.json.
#   1: first version.
REFERENCES_DATA = "flashmark.references.data/1"
