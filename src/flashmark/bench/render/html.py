"""Saved runs (and published reference figures) -> their section of the HTML report. Pure.

The parts (result_kind.HtmlSection), each only when it has something to show: a verdict card
per run, headline figures beside chosen references, device and environment, every result in
a table, the charts; what has no data is said in a sentence (`not_shown`). This module computes
the values; templates/runs.html.j2 lays them out (Jinja2, autoescaped: only the charts' SVG is
marked safe). docs/reports.md, "Contents".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from flashmark.bench.model import Passport, TargetKind
from flashmark.bench.render import cells, charts, describe
from flashmark.bench.render.view import results_table
from flashmark.bench.run_result import Run
from flashmark.monitor.view import describe_activity
from flashmark.probe.model import Device, Environment
from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.references.records import ReferenceDevice
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection, legend_html
from flashmark.stats import Verdict
from flashmark.units import format_duration, format_iops, format_rate, format_size
from flashmark.views.charts import Chart
from flashmark.views.html import page_templates
from flashmark.views.model import Table as ViewTable
from flashmark.workloads.view import operations_text

if TYPE_CHECKING:  # a type only: the monitor module also holds the sampler thread
    from flashmark.monitor.series import MonitorSeries

VERDICT_TEXT = cells.VERDICTS
VERDICT_CLASS: dict[Verdict | None, str] = {
    Verdict.PASS: "pass",
    Verdict.FAIL: "fail",
    Verdict.UNCERTAIN: "uncertain",
    None: "na",
}

_PYGAL_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_FULL_PROFILE = "flashmark run DIR --profile full"


@dataclass(frozen=True)
class RunView:
    """A run as the page names it: full label (id, target, device), short id, colour."""

    run: Run
    label: str
    short: str
    colour: str
    anchor: str


@dataclass(frozen=True)
class Figure:
    svg: Markup
    legend: Markup
    caption: str = ""


@dataclass(frozen=True)
class Card:
    run: RunView
    device_line: str
    method: str
    grades: tuple[Any, ...]  # flashmark.bench.model.Grade
    claims: tuple[tuple[str, Any], ...] | None  # (class, its Grade or None); None: no claims
    no_claims: str
    findings: tuple[str, ...]
    warnings: tuple[str, ...]
    buffered: bool
    passport: PassportView | None = None
    # The sustained-write test's cache and which rate the speed classes graded (cells).
    sustained: str | None = None


@dataclass(frozen=True)
class PassportView:
    """The measured card's passport in a verdict card: the verdict and each point's evidence."""

    title: str
    verdict: str
    verdict_class: str  # the badge's CSS class: pass, fail or na
    points: tuple[PassportPointView, ...]
    seen_before: str


@dataclass(frozen=True)
class PassportPointView:
    topic: str
    status: str
    status_class: str  # the badge's CSS class
    text: str
    evidence: str
    source: str


# A passport's verdict and its points' statuses as the grades' badge colours.
_PASSPORT_CLASS = {"no sign of a fake": "pass", "ok": "pass", "fake": "fail", "suspicious": "fail"}


def runs_section(runs: Sequence[Run], references: Sequence[ReferenceDevice] = ()) -> HtmlSection:
    """The runs' parts of the HTML report, compared side by side (one run is fine), with the
    headline figures of `references` next to them, labelled as published, not measured here."""
    if not runs:
        raise ValueError("an HTML report needs at least one run")
    views = tuple(
        RunView(
            run,
            describe.run_label(run, index),
            describe.run_id_label(run, index),
            charts.run_colour(index),
            str(run.id) if run.id is not None else f"n{index + 1}",
        )
        for index, run in enumerate(runs)
    )
    counter = _ChartCounter()
    # The order the charts are numbered in is the order they appear in the page.
    headline = _headline(runs, references, counter)
    latency = [
        counter.figure(chart)
        for test in charts.tests_in(runs)
        if (chart := charts.latency_chart(runs, test)) is not None
    ]
    bandwidth = _bandwidth(runs, counter)
    sweep = [
        counter.figure(chart)
        for direction in ("read", "write")
        if (chart := charts.sweep_chart(runs, direction, references)) is not None
    ]
    activity = _activity(runs, counter)
    workloads = [_workloads(view) for view in views if view.run.workloads]
    results = [_results(view) for view in views]
    page = {
        "runs": views,
        "cards": [_card(view) for view in views],
        "headline": headline,
        "device": _device_and_environment(views),
        "results": results,
        "latency": latency,
        "bandwidth": bandwidth,
        "sweep": sweep,
        "activity": activity,
        "workloads": workloads,
        "references": [_reference(reference) for reference in references],
    }
    shown = {
        "verdicts": ("Verdicts", True),
        "headline": ("Headline figures", bool(headline.rows)),
        "device": ("Device and environment", True),
        "results": ("All results", any(r.table.rows for r in results)),
        "latency": ("Latency percentiles", bool(latency)),
        "bandwidth": ("Bandwidth each second", bool(bandwidth.figures)),
        "sweep": ("Block-size sweep", bool(sweep)),
        "activity": ("What the device saw", bool(activity)),
        "workloads": ("Workloads", bool(workloads)),
        "references": ("References", bool(references)),
    }
    template = _template()
    parts = tuple(
        HtmlPart(anchor, title, Markup(template.render(page=page, part=anchor)))
        for anchor, (title, present) in shown.items()
        if present
    )
    return HtmlSection(
        parts=parts,
        entries=tuple(
            HtmlEntry(
                view.short,
                charts.run_label(view.run, index),
                f"run-{view.anchor}",
            )
            for index, view in enumerate(views)
        ),
        charts=counter.count,
        not_shown=_not_shown(runs, bandwidth, bool(sweep), bool(activity)),
        subtitle=_subtitle(runs, references),
        footnote=(
            "Runs measured with fio: direct I/O unless marked buffered, incompressible data, a "
            "prepared test area, rates per second of the measuring window after a ramp. "
            "Grades follow the SD Association's thresholds (docs/result-schema.md)."
        ),
    )


def _not_shown(
    runs: Sequence[Run], bandwidth: Bandwidth, sweep: bool, activity: bool
) -> tuple[str, ...]:
    """What the runs hold no data for, in a sentence each (instead of an empty part)."""
    missing = []
    if not bandwidth.figures and bandwidth.missing:
        missing.append("Bandwidth each second: no test has two or more seconds of fio's samples.")
    if not sweep:
        which = "this run has none" if len(runs) == 1 else "none of these runs has one"
        missing.append(
            f"Block-size sweep: {which}; the full profile measures it ({_FULL_PROFILE})."
        )
    if not activity:
        missing.append(
            "What the device saw: no device activity with two or more samples (the target was "
            "on no block device, or the tests were too short; replayed runs record none)."
        )
    return tuple(missing)


@cache
def _environment() -> jinja2.Environment:
    environment = page_templates("flashmark.bench.render")
    environment.globals.update(
        verdict_text=VERDICT_TEXT, verdict_class=VERDICT_CLASS, published_label=PUBLISHED_LABEL
    )
    environment.filters["check_text"] = cells.check_text
    return environment


def _template() -> jinja2.Template:
    return _environment().get_template("runs.html.j2")


class _ChartCounter:
    """Numbers the charts (the page says how many it holds) in the order they appear."""

    def __init__(self) -> None:
        self.count = 0

    def figure(self, chart: Chart, caption: str = "") -> Figure:
        self.count += 1
        # pygal names each chart by a random uuid (its id and its CSS selectors); the chart's
        # number instead makes the page the same each time it is made (a golden test).
        svg = _PYGAL_ID.sub(f"chart-{self.count}", chart.svg)
        # pygal escapes the texts in its SVG
        return Figure(Markup(svg), legend_html(chart.legend), caption)


# -- verdicts ---------------------------------------------------------------------------------


def _card(view: RunView) -> Card:
    run = view.run
    settings = run.settings
    header = dict(cells.header_lines(run))
    device = run.probe.device if run.probe else None
    card = device.card if device else None
    grades = {grade.name: grade for grade in run.grades}
    claims: tuple[tuple[str, Any], ...] | None = None
    if run.probe is None:
        no_claims = "The device was not probed: its claims are unknown."
    elif card is None or not card.claimed.names():
        no_claims = (
            "No speed or application class claimed: the device has no SD status register, "
            "or it could not be read."
        )
    else:
        no_claims = ""
        claims = tuple((name, grades.get(name)) for name in card.claimed.names())
    return Card(
        run=view,
        device_line=_device_line(run),
        method=(
            f"{describe.where_text(run)}; profile {header['profile']}; {cells.started_text(run)}"
        ),
        grades=tuple(run.grades),
        claims=claims,
        no_claims=no_claims,
        findings=tuple(run.findings),
        warnings=tuple(run.warnings),
        buffered=not settings.direct,
        passport=_passport(run.passport) if run.passport is not None else None,
        sustained=cells.sustained_text(run),
    )


def _passport(passport: Passport) -> PassportView:
    cid = f", CID {passport.cid}" if passport.cid else ""
    return PassportView(
        title=f"Card passport ({passport.device}{cid})",
        verdict=passport.verdict,
        verdict_class=_PASSPORT_CLASS.get(passport.verdict, "na"),
        points=tuple(
            PassportPointView(
                topic=point.topic,
                status=point.status,
                status_class=_PASSPORT_CLASS.get(point.status, "na"),
                text=point.text,
                evidence=point.evidence,
                source=point.source,
            )
            for point in passport.points
        ),
        seen_before=describe.seen_before_text(passport),
    )


def _device_line(run: Run) -> str:
    measured = describe.measured_line(run.probe) if run.probe is not None else None
    if measured is not None:
        return measured
    return f"{run.target.block_device or 'unknown device'} (not identified by the probe)"


# -- headline ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadlineRow:
    label: str
    measured: tuple[str, ...]
    published: tuple[Markup | str, ...]


@dataclass(frozen=True)
class ReferenceHead:
    name: str
    short: str


@dataclass(frozen=True)
class Headline:
    figures: tuple[Figure, ...]
    published: bool
    references: tuple[ReferenceHead, ...]
    rows: tuple[HeadlineRow, ...]
    caption: str
    notes: tuple[str, ...]


def _headline(
    runs: Sequence[Run], references: Sequence[ReferenceDevice], counter: _ChartCounter
) -> Headline:
    published = f" Pale dashed bars: {PUBLISHED_LABEL}." if references else ""
    figures = []
    for chart, caption in (
        (
            charts.headline_bandwidth_chart(runs, references),
            "seq-read and seq-write: 1 MiB blocks at queue depth 1; seq-write is the "
            "sustained write the speed classes grade.",
        ),
        (
            charts.headline_iops_chart(runs, references),
            "4K random at queue depth 1 (what A1 grades) and 32 (what A2 grades).",
        ),
    ):
        if chart is not None:
            figures.append(counter.figure(chart, caption + published))
    notes: list[str] = []
    rows = []
    for figure in (*charts.HEADLINE_BANDWIDTH, *charts.HEADLINE_IOPS):
        unit = "MB/s" if figure.metric.endswith("bw_bytes") else "IOPS"
        measured = [figure.measured(run) for run in runs]
        if all(value is None for value in measured) and not any(
            reference.value_for(figure.test, figure.metric) for reference in references
        ):
            continue  # a row of dashes says nothing
        rows.append(
            HeadlineRow(
                f"{figure.test} {figure.direction} {unit}",
                tuple(_figure_text(value, unit) for value in measured),
                tuple(_published_cell(reference, figure, notes) for reference in references),
            )
        )
    return Headline(
        figures=tuple(figures),
        published=bool(references),
        references=tuple(ReferenceHead(r.name, _short(r.name)) for r in references),
        rows=tuple(rows),
        caption="Measured here" + (f", and {PUBLISHED_LABEL}" if references else ""),
        notes=tuple(notes),
    )


def _published_cell(
    reference: ReferenceDevice, figure: charts.HeadlineFigure, notes: list[str]
) -> Markup | str:
    """The published value, numbered to its note (as printed, how close a comparison it is,
    the source's caveat)."""
    found = reference.value_for(figure.test, figure.metric)
    if found is None:
        return "\u2013"
    unit = "MB/s" if figure.metric.endswith("bw_bytes") else "IOPS"
    text = _figure_text(charts.reference_value(reference, figure), unit)
    marks = [
        mark
        for flag, mark in (
            (found.loose, "loose comparison"),
            (found.derived, "derived"),
            (found.suspect, "suspect figure"),
        )
        if flag
    ]
    published = found.measurement.published
    notes.append(
        f'{reference.name}, {figure.test}: published as "{published.text}" {published.unit}'
        + (f"; {', '.join(marks)}" if marks else "")
        + (f"; {found.note}" if found.note else "")
    )
    return Markup("{}<sup>{}</sup>").format(text, len(notes))


def _figure_text(value: float | None, unit: str) -> str:
    if value is None:
        return "\u2013"
    if unit == "MB/s":
        return format_rate(value * 1e6).removesuffix(" MB/s")
    return format_iops(value)


# -- device and environment -------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceTable:
    groups: tuple[tuple[str, tuple[tuple[str, tuple[str | None, ...]], ...]], ...]
    notes: tuple[str, ...]


def _device_and_environment(views: Sequence[RunView]) -> DeviceTable:
    """One row per fact, one column per run; a fact no run knows is left out."""
    runs = [view.run for view in views]

    def device_row(fact: describe.Fact) -> Callable[[Run], str | None]:
        return lambda run: fact.text(d) if (d := _device(run)) else None

    def environment_row(fact: describe.EnvironmentFact) -> Callable[[Run], str | None]:
        return lambda run: fact.text(e) if (e := _probed_environment(run)) else None

    groups: list[tuple[str, list[tuple[str, Callable[[Run], str | None]]]]] = [
        ("Target", _TARGET_ROWS),
        (
            "Device",
            [(f.label, device_row(f)) for f in describe.DEVICE_FACTS if not f.detail],
        ),
        (
            "Host and environment",
            [
                (f.label, environment_row(f))
                for f in describe.ENVIRONMENT_FACTS
                if not f.detail and f.label != "kernel"
            ]
            + _HOST_ROWS,
        ),
        ("Method", _METHOD_ROWS),
    ]
    table = []
    for group, rows in groups:
        known = []
        for label, read in rows:
            values = tuple(read(run) for run in runs)
            if any(value is not None for value in values):
                known.append((label, values))
        table.append((group, tuple(known)))
    notes = tuple(
        f"{view.short}: {note}"
        for view in views
        if view.run.probe
        for note in (*view.run.probe.warnings, *view.run.probe.notes)
    )
    return DeviceTable(tuple(table), notes)


def _device(run: Run) -> Device | None:
    return run.probe.device if run.probe else None


def _probed_environment(run: Run) -> Environment | None:
    return run.probe.environment if run.probe else None


def _space(run: Run) -> str | None:
    size = run.target.capacity_bytes
    if not size:
        return None
    return format_size(size) + (" device" if run.target.kind is TargetKind.DEVICE else " free")


_TARGET_ROWS: list[tuple[str, Callable[[Run], str | None]]] = [
    ("given", lambda r: r.target.given),
    ("measured", describe.where_text),
    ("block device", lambda r: r.target.block_device),
    ("filesystem", lambda r: r.target.filesystem),
    ("mount point", lambda r: r.target.mount_point),
    ("mount options", lambda r: r.target.mount_options),
    ("space", _space),
]

# The host as the run recorded it, probed or not.
_HOST_ROWS: list[tuple[str, Callable[[Run], str | None]]] = [
    ("kernel", lambda r: r.host.kernel),
    ("machine", lambda r: r.host.machine),
    ("hostname", lambda r: r.host.hostname),
]


def _header_line(label: str) -> Callable[[Run], str | None]:
    """A line of the terminal's header (cells.header_lines), word for word."""
    return lambda run: dict(cells.header_lines(run)).get(label)


_METHOD_ROWS: list[tuple[str, Callable[[Run], str | None]]] = [
    ("profile", _header_line("profile")),
    ("engine", _header_line("engine")),
    ("partial", _header_line("partial")),
    ("writes on a device", lambda r: "allowed" if r.settings.destructive else None),
    (
        "workloads",
        lambda r: f"scale {r.settings.workload_scale:g}" if r.settings.workload_scale else None,
    ),
    ("tests skipped", lambda r: describe.join(r.tests_skipped)),
    ("started, finished", lambda r: f"{r.started_at} - {r.finished_at}"),
    ("flashmark", lambda r: r.flashmark_version),
]


# -- all results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultsTable:
    caption: str
    table: ViewTable  # as the documents have it (bench.render.view)


def _results(view: RunView) -> ResultsTable:
    buffered = " (buffered I/O)" if not view.run.settings.direct else ""
    return ResultsTable(f"{view.label}{buffered}", results_table(view.run))


# -- charts per test --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bandwidth:
    figures: tuple[Figure, ...]
    missing: tuple[str, ...]


def _bandwidth(runs: Sequence[Run], counter: _ChartCounter) -> Bandwidth:
    figures = []
    missing = []
    for test in charts.tests_in(runs):
        chart = charts.bandwidth_chart(runs, test)
        if chart is None:
            missing.append(test)
        else:
            figures.append(counter.figure(chart))
    return Bandwidth(tuple(figures), tuple(missing))


def _activity(runs: Sequence[Run], counter: _ChartCounter) -> list[Figure]:
    figures = []
    for test in charts.tests_in(runs):
        monitors = charts.monitors_during_test(runs, test)
        chart = charts.monitor_chart(monitors, f"{test}: device I/O each {_interval(monitors)}")
        if chart is not None:
            figures.append(counter.figure(chart))
    for workload in charts.workloads_in(runs):
        monitors = charts.monitors_during_workload(runs, workload)
        chart = charts.monitor_chart(monitors, f"workload {workload}: device I/O")
        if chart is not None:
            figures.append(counter.figure(chart))
    return figures


def _interval(monitors: Sequence[tuple[str, int, MonitorSeries]]) -> str:
    intervals = {monitor.interval_s for _, _, monitor in monitors}
    return f"{intervals.pop():g} s" if len(intervals) == 1 else "interval"


# -- workloads --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkloadRow:
    name: str
    skipped: str | None
    time: str = ""
    operations: str = ""
    seen: str = ""


@dataclass(frozen=True)
class WorkloadTable:
    caption: str
    rows: tuple[WorkloadRow, ...]


def _workloads(view: RunView) -> WorkloadTable:
    rows = []
    for result in view.run.workloads:
        if result.skipped is not None:
            rows.append(WorkloadRow(result.name, result.skipped))
            continue
        seconds = result.seconds or 0.0
        rows.append(
            WorkloadRow(
                result.name,
                None,
                time=f"{format_duration(seconds)} ({seconds:.2f} s)",
                operations=operations_text(result),
                seen=(
                    describe_activity(result.monitor.device, result.monitor.summary())
                    if result.monitor is not None
                    else "no block device"
                ),
            )
        )
    caption = f"{view.label}, scale {view.run.settings.workload_scale:g}"
    return WorkloadTable(caption, tuple(rows))


# -- references -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceRow:
    test: str
    metric: str
    published: str
    marks: str


@dataclass(frozen=True)
class ReferenceView:
    name: str
    slug: str
    facts: str
    citation: str
    summary: str
    host: str
    method: str
    differs_because: tuple[str, ...]
    rows: tuple[ReferenceRow, ...]


_DIRECT = {True: "direct I/O", False: "buffered I/O", None: "direct I/O not stated"}


def _reference(reference: ReferenceDevice) -> ReferenceView:
    source, setup = reference.source, reference.setup
    facts = describe.join(
        (
            reference.media_kind.value,
            reference.type_as_published,
            reference.capacity,
            reference.rating,
            f"made {reference.production_date}" if reference.production_date else None,
            f"through {reference.interface}" if reference.interface else None,
        )
    )
    method = describe.join(
        (
            f"{setup.tool} {setup.tool_version or ''}".strip(),
            _DIRECT[setup.direct_io],
            f"blocks {setup.block_sizes}",
            f"depth {setup.queue_depth}",
            f"test size {setup.test_size}" if setup.test_size else None,
        )
    )
    return ReferenceView(
        name=reference.name,
        slug=reference.slug,
        facts=facts or "",
        citation=source.citation,
        summary=source.summary,
        host=setup.host_board + (f"; {setup.host_details}" if setup.host_details else ""),
        method=method or "",
        differs_because=tuple(source.differs_because),
        rows=tuple(
            ReferenceRow(
                m.tests[0] if m.tests else "-",
                m.metric,
                f"{m.published.text} {m.published.unit}",
                _measurement_marks(m.loose, m.suspect, m.note),
            )
            for m in reference.measurements
        ),
    )


def _measurement_marks(loose: bool, suspect: bool, note: str) -> str:
    marks = [text for flag, text in ((loose, "loose comparison"), (suspect, "suspect")) if flag]
    return "; ".join([*marks, note] if note else marks)


# -- small pieces -----------------------------------------------------------------------------


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _subtitle(runs: Sequence[Run], references: Sequence[ReferenceDevice]) -> str:
    dates = sorted(run.started_at[:10] for run in runs)
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    text = f"{len(runs)} run{'s' if len(runs) != 1 else ''} measured {span}"
    if references:
        text += f"; {len(references)} reference device{'s' if len(references) != 1 else ''}"
        text += f" ({PUBLISHED_LABEL})"
    return text
