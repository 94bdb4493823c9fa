"""Run -> CSV for spreadsheets: one row per test, read and write figures side by side, so
every row of every run has the same columns (docs/reports.md). Units are in the column names;
numbers are plain. RFC 4180 quoting and CRLF come from the csv module; text that could start a
formula is guarded (flashmark.spreadsheet): a result may come from another machine.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from flashmark.bench.model import DirectionResult, TestResult
from flashmark.bench.render.cells import device_text, disturbance_text, plain_number, target_place
from flashmark.bench.run_result import Run
from flashmark.spreadsheet import text_cell
from flashmark.units import MB

_RUN_COLUMNS = (
    "run_id",
    "started_at",
    "target",
    "block_device",
    "filesystem",
    "device",
    "profile",
    "direct_io",
    "fio_version",
)
_TEST_COLUMNS = (
    "kind",
    "test",
    "pattern",
    "block_size_bytes",
    "iodepth",
    "rwmix_read_pct",
    "status",
    "disturbance",
)
_DIRECTION_FIELDS = (
    "bw_MBps",
    "iops",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p90_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_max_us",
    "bw_min_MBps",
    "bw_max_MBps",
    "io_bytes",
    "runtime_ms",
)
COLUMNS: tuple[str, ...] = (
    *_RUN_COLUMNS,
    *_TEST_COLUMNS,
    *(f"{direction}_{name}" for direction in ("read", "write") for name in _DIRECTION_FIELDS),
    "workload_s",
)


def _direction(direction: DirectionResult | None) -> list[str]:
    if direction is None:
        return [""] * len(_DIRECTION_FIELDS)
    lat = direction.lat_ns
    series = direction.bw_per_second

    def mbps(bps: float) -> str:
        return plain_number(bps / MB, 6)  # 6 decimals: one byte per second

    def us(ns: float) -> str:
        return plain_number(ns / 1000, 3)  # 3 decimals: one nanosecond

    return [
        mbps(direction.bw_bytes),
        plain_number(direction.iops, 3),
        *(us(v) for v in (lat.mean, lat.p50, lat.p90, lat.p99, lat.p99_9, lat.max)),
        mbps(series.min_bps) if series else "",
        mbps(series.max_bps) if series else "",
        str(direction.io_bytes),
        str(direction.runtime_ms),
    ]


def _test_row(result: TestResult) -> list[str]:
    spec = result.spec
    rwmix = "" if spec.rwmix_read_pct is None else str(spec.rwmix_read_pct)
    return [
        "fio", text_cell(spec.name), text_cell(spec.pattern.value), str(spec.block_size_bytes),
        str(spec.iodepth), rwmix, "measured", text_cell(disturbance_text(result)),
        *_direction(result.read),
        *_direction(result.write), "",
    ]  # fmt: skip


def _rows(run: Run) -> list[list[str]]:
    identity = [
        "" if run.id is None else str(run.id),
        *(
            text_cell(text)
            for text in (
                run.started_at,
                target_place(run),
                run.target.block_device or "",
                run.target.filesystem or "",
                device_text(run) or "",
                run.settings.profile,
            )
        ),
        "yes" if run.settings.direct else "no",
        text_cell(run.fio.version),
    ]
    blank = [""] * (2 * len(_DIRECTION_FIELDS))
    rows = [[*identity, *_test_row(result)] for result in run.tests]
    rows += [
        [*identity, "fio", text_cell(name), "", "", "", "", "skipped", "", *blank, ""]
        for name in run.tests_skipped
    ]
    for workload in run.workloads:
        status, seconds = "measured", workload.seconds
        if workload.skipped is not None or seconds is None:
            status, seconds = f"skipped: {workload.skipped}", None
        time_text = "" if seconds is None else plain_number(seconds, 3)
        name = text_cell(workload.name)
        rows.append(
            [*identity, "workload", name, "", "", "", "", text_cell(status), "", *blank, time_text]
        )
    return rows


def runs_to_csv(runs: Sequence[Run]) -> str:
    """One header, then the rows of every run in the order given."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # excel dialect: RFC 4180 quoting, CRLF line ends
    writer.writerow(COLUMNS)
    for run in runs:
        writer.writerows(_rows(run))
    return buffer.getvalue()
