"""A run as people read it (flashmark.views): the view its terminal, Markdown and CSV are written
from. The terminal says the run as `flashmark run` printed it (a header, the results, what the
device saw, the grades in colour); the documents say it for a forum post (facts, the results
with their disturbance in full, the grades with the reason a verdict is uncertain). CSV: one
row per test and workload, read and write figures side by side, so every row of every run has
the same columns (docs/reports.md); units in the column names, numbers plain.
"""

from __future__ import annotations

import dataclasses

from flashmark.bench.model import DirectionResult, DisturbanceStatus, Grade, TestResult
from flashmark.bench.render.cells import (
    UNIT_NOTE,
    VERDICTS,
    check_text,
    device_text,
    direction_cells,
    disturbance_text,
    grade_verdict_text,
    header_lines,
    plain_number,
    seconds_text,
    settings_details,
    started_text,
    sustained_text,
    target_details,
    target_place,
)
from flashmark.bench.render.describe import passport_rows
from flashmark.bench.run_result import Run, medium_note, not_judged_text
from flashmark.stats import Verdict
from flashmark.units import MB, KiB, mb_per_s
from flashmark.views.model import (
    Block,
    Cell,
    CellText,
    Code,
    Column,
    Fact,
    Facts,
    Heading,
    Lines,
    Notes,
    Row,
    Sentence,
    Span,
    Table,
    Tone,
    View,
    rows_of,
)
from flashmark.views.writers import ViewWriters
from flashmark.workloads.result import WorkloadResult
from flashmark.workloads.view import workload_blocks

VERDICT_TONES: dict[Verdict | None, Tone] = {
    Verdict.PASS: "pass",
    Verdict.FAIL: "fail",
    Verdict.UNCERTAIN: "uncertain",
    None: "dim",
}
_GRADE_COLUMNS = (Column("class"), Column("verdict"), Column("checks: measured (required, margin)"))
_ACTIVITY_COLUMNS = (
    Column("test"),
    *(Column(name, numeric=True) for name in ("reads/s", "writes/s", "read MB/s", "write MB/s",
                                              "request KiB", "queue", "busy %")),
)  # fmt: skip


def run_view(run: Run) -> View:
    """The terminal's header, results, disturbances, device activity and grades; the documents'
    facts, results and grades; then for both the sustained write, the workloads (each phase on
    the terminal, their times in the documents), the findings, (on the terminal) the card's
    passport, and the warnings."""
    number = f" #{run.id}" if run.id is not None else ""
    blocks: list[Block] = [_header(run), _facts(run), *_results(run), *_grades(run)]
    sustained = sustained_text(run)
    if sustained is not None:
        blocks.append(Sentence(f"sustained-write: {sustained}"))
    blocks += [
        dataclasses.replace(block, shown="terminal")
        for block in (workload_blocks(run.workloads) if run.workloads else ())
        if block.shown != "documents"
    ]
    if run.findings:
        note = "(what the card claims against what was measured)"
        blocks.append(Heading("Findings", note, shown="documents"))
        blocks.append(Notes(run.findings, label="finding", tone="strong"))
    if run.passport is not None:
        cid = f", CID {run.passport.cid}" if run.passport.cid else ""
        facts = tuple(Fact(label, text) for label, text in passport_rows(run.passport))
        blocks.append(
            Facts(facts, title=f"Card passport ({run.passport.device}{cid})", shown="terminal")
        )
    if run.warnings:
        blocks.append(Heading("Warnings", shown="documents"))
        blocks.append(Notes(run.warnings, label="warning", tone="uncertain"))
    if run.workloads:
        blocks.append(Heading("Workloads", "(wall time of the timed part)", shown="documents"))
        times = (
            (w.name, f"skipped: {w.skipped}" if seconds is None else seconds_text(seconds))
            for w in run.workloads
            for seconds in (_seconds(w),)
        )
        columns = (Column("workload"), Column("seconds", numeric=True))
        blocks.append(Table(columns, rows_of(times), shown="documents"))
    return View(
        title=f"flashmark run{number}: {run.settings.profile}, {started_text(run)}",
        blocks=tuple(blocks),
        records=_records(run),
    )


def _header(run: Run) -> Lines:
    first = f"flashmark run{f' #{run.id}' if run.id else ''}  {run.started_at}"
    lines = [f"{label:<8} {text}" for label, text in header_lines(run)]
    return Lines((first, *lines), shown="terminal")


def _facts(run: Run) -> Facts:
    device = device_text(run)
    return Facts(
        (
            *([Fact("device", device)] if device is not None else []),
            Fact("target", (Code(target_place(run)), f" ({target_details(run)})"), literal=True),
            Fact(f"profile {run.settings.profile}", settings_details(run), literal=True),
            Fact(
                "engine",
                f"{run.fio.version}, {run.settings.ioengine}; {UNIT_NOTE}; "
                "p50/p99: latency percentiles of single I/Os",
                literal=True,
            ),
        ),
        shown="documents",
    )


def results_table(run: Run, *, terminal: bool = False) -> Table:
    """Each test's figures and its disturbance, a skipped test set back: on the terminal under
    short latency headers with the disturbance's status alone (its reasons follow the table),
    in the documents and the HTML report with the disturbance in full."""
    figures = (
        (f"{direction} MB/s", f"{direction} IOPS",
         *(latency if terminal else f"{direction} {latency}" for latency in ("p50", "p99")))
        for direction in ("read", "write")
    )  # fmt: skip
    columns = (
        Column("test"),
        *(Column(name, numeric=True) for names in figures for name in names),
        Column("disturbance"),
    )
    rows = tuple(
        Row(
            (
                result.spec.name,
                *direction_cells(result.read),
                *direction_cells(result.write),
                _disturbance_status(result) if terminal else disturbance_text(result),
            )
        )
        for result in run.tests
    )
    skipped = tuple(Row((name, "skipped", *[""] * 8), tone="dim") for name in run.tests_skipped)
    buffered = "" if run.settings.direct else " (buffered)"
    if terminal:
        return Table(columns, rows + skipped, title=f"Results{buffered}", shown="terminal")
    return Table(columns, rows + skipped, shown="documents")


def _results(run: Run) -> list[Block]:
    """The results, the disturbances' reasons and what the device saw."""
    blocks: list[Block] = [results_table(run, terminal=True), results_table(run)]
    disturbed = [
        f"{result.spec.name} {text}"
        for result in run.tests
        if (text := disturbance_text(result)).startswith("disturbed")
    ]
    if disturbed:
        blocks.append(Sentence("\n".join(disturbed), tone="uncertain", shown="terminal"))
    unchecked = dict.fromkeys(
        f"disturbance {result.disturbance.reason}"
        for result in run.tests
        if result.disturbance is not None
        and result.disturbance.status is DisturbanceStatus.NOT_CHECKED
    )
    if unchecked:
        blocks.append(Sentence("\n".join(unchecked), tone="dim", shown="terminal"))
    activity = _activity(run)
    if activity is not None:
        blocks.append(activity)
    return blocks


def _disturbance_status(result: TestResult) -> CellText:
    if result.disturbance is None:
        return ""
    status = result.disturbance.status
    return (Span(str(status), "uncertain" if status is DisturbanceStatus.DISTURBED else ""),)


def _activity(run: Run) -> Table | None:
    """What the device itself saw during each test (/proc/diskstats), like `iostat -x`, in the
    results' units (MB = 10^6 bytes). Its window is the whole fio run, ramp and final flush
    included, where the results count only the timed window: the caption says so, since the
    two differ by what the ramp and the flush did (and the kernel may merge or split
    requests)."""
    monitored = [(t.spec.name, t.monitor) for t in run.tests if t.monitor is not None]
    if not monitored:
        return None
    rows = []
    for name, series in monitored:
        s = series.summary()
        request = (s.read_bytes + s.write_bytes) / max(1, s.read_ios + s.write_ios)
        rows.append((
            name, f"{s.read_iops:.1f}", f"{s.write_iops:.1f}", f"{mb_per_s(s.read_bps):.1f}",
            f"{mb_per_s(s.write_bps):.1f}", f"{request / KiB:.1f}",
            "-" if s.avg_queue is None else f"{s.avg_queue:.2f}",
            "-" if s.util_pct is None else f"{s.util_pct:.0f}",
        ))  # fmt: skip
    return Table(
        _ACTIVITY_COLUMNS,
        rows_of(rows),
        title=f"What {monitored[0][1].device} saw during each test (/proc/diskstats)",
        caption="over the whole test, ramp and final flush included: the results above count "
        "only its timed window",
        shown="terminal",
    )


def _grades(run: Run) -> list[Block]:
    """The grades, titled on the terminal by what they mean for this device: SD Association
    classes for an SD card or eMMC, SD-class equivalents (a yardstick) for other media."""
    note = medium_note(run)
    title = (
        "Grades (SD Association classes)"
        if note is None
        else f"Grades as SD-class equivalents ({note}: the SD Association's thresholds as a "
        "yardstick)"
    )
    return [
        Table(
            _GRADE_COLUMNS,
            tuple(Row((g.name, (verdict_span(g),), _checks(g))) for g in run.grades),
            title=title,
            caption=not_judged_text(run) or "",
            shown="terminal",
        ),
        Heading("Grades", "(SD Association classes)", shown="documents"),
        Table(
            _GRADE_COLUMNS,
            rows_of(
                (grade.name, grade_verdict_text(grade), _checks_text(grade)) for grade in run.grades
            ),
            shown="documents",
        ),
    ]


def verdict_span(grade: Grade) -> Span:
    """The grade's verdict in a word, in its tone (a badge in HTML, a colour on a terminal)."""
    return Span(VERDICTS[grade.verdict], VERDICT_TONES[grade.verdict])


def _checks_text(grade: Grade) -> str:
    return "; ".join(check_text(check) for check in grade.checks)


def _checks(grade: Grade) -> CellText:
    """The checks, and on a line of its own why the verdict is uncertain."""
    if grade.verdict is Verdict.UNCERTAIN and grade.verdict_reason:
        uncertain = Span(f"\nuncertain: {grade.verdict_reason}", "uncertain")
        return (Span(_checks_text(grade)), uncertain)
    return _checks_text(grade)


# -- CSV ---------------------------------------------------------------------------------------

_RUN_COLUMNS = ("run_id", "started_at", "target", "block_device", "filesystem", "device",
                "profile", "direct_io", "fio_version")  # fmt: skip
_TEST_COLUMNS = ("kind", "test", "pattern", "block_size_bytes", "iodepth", "rwmix_read_pct",
                 "status", "disturbance")  # fmt: skip
_DIRECTION_FIELDS = ("bw_MBps", "iops", "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us",
                     "lat_p99_9_us", "lat_max_us", "bw_min_MBps", "bw_max_MBps", "io_bytes",
                     "runtime_ms")  # fmt: skip
CSV_COLUMNS: tuple[str, ...] = (
    *_RUN_COLUMNS,
    *_TEST_COLUMNS,
    *(f"{direction}_{name}" for direction in ("read", "write") for name in _DIRECTION_FIELDS),
    "workload_s",
)


def _direction(direction: DirectionResult | None) -> list[Cell]:
    if direction is None:
        return [None] * len(_DIRECTION_FIELDS)
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
        mbps(series.min_bps) if series else None,
        mbps(series.max_bps) if series else None,
        direction.io_bytes,
        direction.runtime_ms,
    ]


def _seconds(workload: WorkloadResult) -> float | None:
    """The workload's timed seconds; None when it was skipped."""
    return None if workload.skipped is not None else workload.seconds


def _records(run: Run) -> tuple[tuple[Cell, ...], ...]:
    """A row per test, skipped test and workload, each after the run's own columns."""
    identity: list[Cell] = [
        run.id, run.started_at, target_place(run), run.target.block_device,
        run.target.filesystem, device_text(run), run.settings.profile,
        "yes" if run.settings.direct else "no", run.fio.version,
    ]  # fmt: skip
    blank: list[Cell] = [None] * (2 * len(_DIRECTION_FIELDS))
    records = [
        [*identity, "fio", result.spec.name, result.spec.pattern.value,
         result.spec.block_size_bytes, result.spec.iodepth, result.spec.rwmix_read_pct,
         "measured", disturbance_text(result) or None,
         *_direction(result.read), *_direction(result.write), None]
        for result in run.tests
    ]  # fmt: skip
    records += [
        [*identity, "fio", name, None, None, None, None, "skipped", None, *blank, None]
        for name in run.tests_skipped
    ]
    for workload in run.workloads:
        seconds = _seconds(workload)
        status = "measured" if seconds is not None else f"skipped: {workload.skipped}"
        time_text = None if seconds is None else plain_number(seconds, 3)
        records.append(
            [*identity, "workload", workload.name, None, None, None, None, status, None,
             *blank, time_text]
        )  # fmt: skip
    return tuple(tuple(record) for record in records)


# The run's terminal, Markdown and CSV: what its kind (bench/kind.py) hands `ResultKind`.
WRITERS = ViewWriters(run_view, CSV_COLUMNS)
