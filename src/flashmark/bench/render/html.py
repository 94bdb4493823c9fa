"""Saved runs (and published reference figures) -> their section of the HTML report. Pure.

The parts (result_kind.HtmlSection), each only when it has something to show: a verdict card
per run, headline figures beside chosen references, device and environment, every result in
a table, the charts; what has no data is said in a sentence (`not_shown`). Each part is view
blocks (flashmark.views.model), written by the HTML macros every kind shares
(flashmark.views.html). docs/reports.md, "Contents".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from markupsafe import Markup

from flashmark.bench.model import Grade, Passport, TargetKind
from flashmark.bench.render import cells, charts, describe
from flashmark.bench.render.view import results_table, verdict_span
from flashmark.bench.run_result import Run
from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.references.records import ReferenceDevice
from flashmark.result_kind import HtmlEntry, HtmlPart, HtmlSection
from flashmark.units import format_duration, format_iops, format_rate, format_size
from flashmark.views.html import Card, blocks_html, cards_html
from flashmark.views.model import (
    Badges,
    Block,
    CellText,
    Column,
    Facts,
    Figure,
    Figures,
    Heading,
    Notes,
    Row,
    Sentence,
    Span,
    Table,
    Tone,
    View,
    rows_of,
)
from flashmark.workloads.result import WorkloadResult
from flashmark.workloads.view import COLUMNS as WORKLOAD_COLUMNS
from flashmark.workloads.view import workload_rows

if TYPE_CHECKING:  # a type only: the monitor module also holds the sampler thread
    from flashmark.monitor.series import MonitorSeries

_PYGAL_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_FULL_PROFILE = "flashmark run DIR --profile full"
_DASH = "\u2013"
# A passport's verdict and its points' statuses in a verdict's tones (its badge's colour).
_PASSPORT_TONES: dict[str, Tone] = {
    "no sign of a fake": "pass",
    "ok": "pass",
    "fake": "fail",
    "suspicious": "fail",
}
_LATENCY_NOTE = (
    "fio's completion latency at the 50th to 99.99th percentile, on a logarithmic scale: the "
    "tail (p99 and beyond) is where a card stalls. A test that reads and writes has a solid "
    "read and a dashed write curve."
)
_BANDWIDTH_NOTE = (
    "fio's bandwidth log averaged over each second of the measuring window (ramp excluded). A "
    "card whose write cache fills shows a cliff; a stall, a drop towards zero."
)
_ACTIVITY_NOTE = (
    "Sampled from /proc/diskstats during each test and workload, like iostat -x 1: read and "
    "write IOPS the device completed (left axis) and %util, the share of each interval it was "
    "busy (right axis). Ramp and final flush are included, unlike fio's figures."
)


def runs_section(runs: Sequence[Run], references: Sequence[ReferenceDevice] = ()) -> HtmlSection:
    """The runs' parts of the HTML report, compared side by side (one run is fine), with the
    headline figures of `references` next to them, labelled as published, not measured here."""
    if not runs:
        raise ValueError("an HTML report needs at least one run")
    tests = charts.tests_in(runs)
    figures: list[Figure] = []  # numbered in the order they appear in the page
    headline = _headline(runs, references, figures)
    latency = _charts(figures, _LATENCY_NOTE, (charts.latency_chart(runs, t) for t in tests))
    drawn = [charts.bandwidth_chart(runs, test) for test in tests]
    missing = [test for test, chart in zip(tests, drawn, strict=True) if chart is None]
    bandwidth = _charts(figures, _BANDWIDTH_NOTE, drawn)
    if bandwidth and missing:
        bandwidth.append(_note(f"Not drawn, fewer than two samples: {', '.join(missing)}."))
    sweep = _charts(
        figures,
        _sweep_note(references),
        (charts.sweep_chart(runs, direction, references) for direction in ("read", "write")),
    )
    activity = _charts(figures, _ACTIVITY_NOTE, _activity(runs))
    parts = {
        "headline": ("Headline figures", headline),
        "device": ("Device and environment", _device_and_environment(runs)),
        "results": ("All results", _results(runs)),
        "latency": ("Latency percentiles", latency),
        "bandwidth": ("Bandwidth each second", bandwidth),
        "sweep": ("Block-size sweep", sweep),
        "activity": ("What the device saw", activity),
        "workloads": ("Workloads", _workloads(runs)),
        "references": ("References", _references(references)),
    }
    intro = "SD Association classes graded from this run's figures: value, threshold and margin "
    intro += "for each check (MB = 10^6 bytes)."  # fmt: skip
    cards = cards_html(intro, [_card(run, index) for index, run in enumerate(runs)])
    shown = [
        HtmlPart(key, title, blocks_html(part)) for key, (title, part) in parts.items() if part
    ]
    return HtmlSection(
        parts=(HtmlPart("verdicts", "Verdicts", cards), *shown),
        entries=tuple(
            HtmlEntry(describe.run_id_label(run, i), charts.run_label(run, i), _anchor(run, i))
            for i, run in enumerate(runs)
        ),
        charts=len(figures),
        not_shown=_not_shown(runs, not bandwidth and bool(missing), bool(sweep), bool(activity)),
        subtitle=_subtitle(runs, references),
        footnote=(
            "Runs measured with fio: direct I/O unless marked buffered, incompressible data, a "
            "prepared test area, rates per second of the measuring window after a ramp. "
            "Grades follow the SD Association's thresholds (docs/result-schema.md)."
        ),
    )


def _note(text: str) -> Sentence:
    """A sentence set back: what a part or a table shows."""
    return Sentence(text, tone="dim")


def _anchor(run: Run, index: int) -> str:
    return f"run-{run.id}" if run.id is not None else f"run-n{index + 1}"


def _not_shown(
    runs: Sequence[Run], bandwidth: bool, sweep: bool, activity: bool
) -> tuple[str, ...]:
    """What the runs hold no data for, in a sentence each (instead of an empty part):
    `bandwidth` is True when no test has its samples, `sweep` and `activity` when drawn."""
    found = []
    if bandwidth:
        found.append("Bandwidth each second: no test has two or more seconds of fio's samples.")
    if not sweep:
        which = "this run has none" if len(runs) == 1 else "none of these runs has one"
        found.append(f"Block-size sweep: {which}; the full profile measures it ({_FULL_PROFILE}).")
    if not activity:
        found.append(
            "What the device saw: no device activity with two or more samples (the target was "
            "on no block device, or the tests were too short; replayed runs record none)."
        )
    return tuple(found)


def _figure(figures: list[Figure], chart: Figure, caption: str = "") -> None:
    """Add the chart to the page's `figures`, numbered in their order."""
    # pygal names each chart by a random uuid (its id and its CSS selectors); the chart's
    # number instead makes the page the same each time it is made (a golden test).
    svg = _PYGAL_ID.sub(f"chart-{len(figures) + 1}", chart.svg)
    figures.append(Figure(svg, chart.legend, caption))


def _charts(figures: list[Figure], note: str, drawn: Iterable[Figure | None]) -> list[Block]:
    """A part of charts: what they show, then the charts (nothing drawn: no part)."""
    start = len(figures)
    for chart in drawn:
        if chart is not None:
            _figure(figures, chart)
    return [_note(note), Figures(tuple(figures[start:]))] if len(figures) > start else []


def _sweep_note(references: Sequence[ReferenceDevice]) -> str:
    published = f"; dotted grey points are {PUBLISHED_LABEL}" if references else ""
    return (
        "Throughput at each block size, depth 1, both axes logarithmic: random solid, "
        f"sequential dashed{published}. Small blocks show the IOPS limit, large ones the bus "
        "or the flash."
    )


# -- verdicts ---------------------------------------------------------------------------------


def _card(run: Run, index: int) -> Card:
    """The run's verdict card: its device, how it measured, its grades, the card's claims
    beside them, its findings, the card's passport and its warnings."""
    header = dict(cells.header_lines(run))
    method = f"{describe.where_text(run)}; profile {header['profile']}; {cells.started_text(run)}"
    device = cells.device_text(run)
    if device is None:
        device = f"{run.target.block_device or 'unknown device'} (not identified by the probe)"
    blocks: list[Block] = [Sentence(device), _note(method)]
    if run.grades:
        verdicts = ((g.name, verdict_span(g)) for g in run.grades)
        blocks.append(Badges(tuple(Span(f"{name} {v.text}", v.tone) for name, v in verdicts)))
        columns = (Column("class"), Column("verdict"), Column("measured (required, margin)"))
        rows = (Row((g.name, (verdict_span(g),), _checks(g))) for g in run.grades)
        blocks.append(Table(columns, tuple(rows), stack=False))
    sustained = cells.sustained_text(run)
    if sustained:
        blocks.append(_note(f"sustained-write: {sustained}"))
    blocks += [Heading("Claimed and measured"), *_claims(run)]
    if run.findings:
        blocks.append(Notes(tuple(f"finding: {finding}" for finding in run.findings), tone=""))
    if run.passport is not None:
        blocks += _passport(run.passport)
    if not run.settings.direct:
        buffered = "Buffered I/O: these figures include the page cache; they are not the " \
            "device's own speed."  # fmt: skip
        blocks.append(Sentence(buffered, tone="fail"))
    if run.warnings:
        blocks.append(Notes(tuple(f"warning: {w}" for w in run.warnings), tone="fail"))
    label = describe.run_label(run, index)
    view = View(title=label, blocks=tuple(blocks))
    return Card(view, _anchor(run, index), Markup.escape(label), colour=charts.run_colour(index))


def _checks(grade: Grade) -> CellText:
    """Each check on a line, then why the verdict is uncertain and the grade's note."""
    spans = [Span("\n".join(cells.check_text(check) for check in grade.checks))]
    if grade.verdict_reason:
        spans += [Span("\n"), Span(f"uncertain: {grade.verdict_reason}", "dim")]
    if grade.note:
        spans += [Span("\n"), Span(grade.note, "dim")]
    return tuple(spans)


def _claims(run: Run) -> list[Block]:
    """The classes the card claims in its SD status register, each as this run graded it."""
    card = run.probe.device.card if run.probe and run.probe.device else None
    if run.probe is None:
        return [_note("The device was not probed: its claims are unknown.")]
    if card is None or not card.claimed.names():
        return [
            _note(
                "No speed or application class claimed: the device has no SD status register, "
                "or it could not be read."
            )
        ]
    grades = {grade.name: grade for grade in run.grades}
    not_graded = Span("not graded by flashmark", "dim")
    rows = (
        Row((name, (verdict_span(grades[name]) if name in grades else not_graded,)))
        for name in card.claimed.names()
    )
    columns = (Column("claims"), Column("this run"))
    return [Table(columns, tuple(rows), caption="SD status register", stack=False)]


def _passport(passport: Passport) -> list[Block]:
    """The measured card's passport: the verdict and each point's evidence."""
    cid = f", CID {passport.cid}" if passport.cid else ""
    rows = []
    for point in passport.points:
        text = [Span(point.text)]
        for label, value in (("evidence", point.evidence), ("source", point.source)):
            if value:
                text += [Span("\n"), Span(f"{label}: {value}", "dim")]
        status = Span(point.status, _PASSPORT_TONES.get(point.status, "dim"))
        rows.append(Row((point.topic, (status,), tuple(text))))
    columns = (Column("topic"), Column("status"), Column("point, evidence and source"))
    return [
        Heading(f"Card passport ({passport.device}{cid})"),
        Badges((Span(passport.verdict, _PASSPORT_TONES.get(passport.verdict, "dim")),)),
        Table(
            columns,
            tuple(rows),
            caption="CID register, capacity, classes and host, as flashmark judged them",
        ),
        _note(f"seen before: {describe.seen_before_text(passport)}"),
    ]


# -- headline ---------------------------------------------------------------------------------


def _headline(
    runs: Sequence[Run], references: Sequence[ReferenceDevice], figures: list[Figure]
) -> list[Block]:
    """The headline charts, then their figures in a table: a column per run and per reference,
    each published figure numbered to its note."""
    published = f" Pale dashed bars: {PUBLISHED_LABEL}." if references else ""
    start = len(figures)
    for headline in charts.HEADLINES:
        if (chart := charts.headline_chart(runs, headline, references)) is not None:
            _figure(figures, chart, headline.caption + published)
    notes: list[str] = []
    rows = []
    for figure in (figure for headline in charts.HEADLINES for figure in headline.figures):
        measured = [figure.measured(run) for run in runs]
        if all(value is None for value in measured) and not any(
            reference.value_for(figure.test, figure.metric) for reference in references
        ):
            continue  # a row of dashes says nothing
        rows.append(
            Row(
                (
                    f"{figure.test} {figure.direction} {figure.unit}",
                    *(_figure_text(value, figure.unit) for value in measured),
                    *(_published_cell(reference, figure, notes) for reference in references),
                )
            )
        )
    if not rows:
        return []
    columns = (
        Column("test"),
        *(
            Column(describe.run_id_label(run, index), numeric=True, colour=charts.run_colour(index))
            for index, run in enumerate(runs)
        ),
        *(Column(f"published: {_short(r.name)}", numeric=True) for r in references),
    )
    blocks: list[Block] = []
    if references:
        note = f'Pale dashed bars and columns marked "published" are {PUBLISHED_LABEL}: other '
        blocks.append(_note(note + "tools, hosts and methods (see References)."))
    if len(figures) > start:
        blocks.append(Figures(tuple(figures[start:])))
    caption = "Measured here" + (f", and {PUBLISHED_LABEL}" if references else "")
    blocks += [Heading(caption), Table(columns, tuple(rows))]
    if notes:
        blocks.append(Notes(tuple(f"{_superscript(n + 1)} {note}" for n, note in enumerate(notes))))
    return blocks


def _published_cell(
    reference: ReferenceDevice, figure: charts.HeadlineFigure, notes: list[str]
) -> str:
    """The published value, numbered to its note (as printed, how close a comparison it is,
    the source's caveat)."""
    found = reference.value_for(figure.test, figure.metric)
    if found is None:
        return _DASH
    text = _figure_text(charts.reference_value(reference, figure), figure.unit)
    flags = {
        "loose comparison": found.loose,
        "derived": found.derived,
        "suspect figure": found.suspect,
    }
    marks = [mark for mark, flag in flags.items() if flag]
    published = found.measurement.published
    notes.append(
        f'{reference.name}, {figure.test}: published as "{published.text}" {published.unit}'
        + (f"; {', '.join(marks)}" if marks else "")
        + (f"; {found.note}" if found.note else "")
    )
    return f"{text}{_superscript(len(notes))}"


def _superscript(number: int) -> str:
    """A note's number as superscript digits (plain text: a cell stays text)."""
    return str(number).translate(
        str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")
    )


def _figure_text(value: float | None, unit: str) -> str:
    if value is None:
        return _DASH
    if unit == "MB/s":
        return format_rate(value * 1e6).removesuffix(" MB/s")
    return format_iops(value)


# -- device and environment -------------------------------------------------------------------


def _device_and_environment(runs: Sequence[Run]) -> list[Block]:
    """One row per fact, one column per run, under the group's name; a fact no run knows is
    left out."""
    devices = [run.probe.device if run.probe else None for run in runs]
    environments = [run.probe.environment if run.probe else None for run in runs]

    def read(
        rows: Sequence[tuple[str, Callable[[Run], str | None]]],
    ) -> list[tuple[str, list[str | None]]]:
        return [(label, [value(run) for run in runs]) for label, value in rows]

    groups = {
        "Target": read(_TARGET_ROWS),
        "Device": [
            (f.label, [f.text(d) if d else None for d in devices])
            for f in describe.DEVICE_FACTS
            if not f.detail
        ],
        "Host and environment": [
            (f.label, [f.text(e) if e else None for e in environments])
            for f in describe.ENVIRONMENT_FACTS
            if not f.detail and f.label != "kernel"
        ]
        + read(_HOST_ROWS),
        "Method": read(_METHOD_ROWS),
    }
    rows = []
    for group, facts in groups.items():
        rows.append(Row((group,), tone="strong"))
        rows += [
            Row((label, *(_DASH if v is None else v for v in values)))
            for label, values in facts
            if any(value is not None for value in values)
        ]
    columns = (
        Column(""),
        *(
            Column(describe.run_label(run, index), colour=charts.run_colour(index))
            for index, run in enumerate(runs)
        ),
    )
    notes = tuple(
        f"{describe.run_id_label(run, index)}: {note}"
        for index, run in enumerate(runs)
        if run.probe
        for note in (*run.probe.warnings, *run.probe.notes)
    )
    # A column per run, scrolled rather than stacked on a narrow screen.
    table = Table(columns, tuple(rows), stack=False)
    if not notes:
        return [table]
    return [
        table,
        _note("What the probe could not read or found worth a warning:"),
        Notes(notes, tone=""),
    ]


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


def _results(runs: Sequence[Run]) -> list[Block]:
    blocks: list[Block] = [
        _note(
            "MB/s with MB = 10^6 bytes; IOPS = I/Os completed per second of the measuring "
            "window; latency is fio's completion latency (submission included)."
        )
    ]
    for index, run in enumerate(runs):
        buffered = " (buffered I/O)" if not run.settings.direct else ""
        blocks += [
            Heading(f"{describe.run_label(run, index)}{buffered}"),
            replace(results_table(run), stack=False),
        ]
    return blocks if any(run.tests or run.tests_skipped for run in runs) else []


# -- charts of what the device saw ------------------------------------------------------------


def _activity(runs: Sequence[Run]) -> Iterator[Figure | None]:
    for test in charts.tests_in(runs):
        monitors = charts.monitors_during_test(runs, test)
        yield charts.monitor_chart(monitors, f"{test}: device I/O each {_interval(monitors)}")
    for workload in charts.workloads_in(runs):
        monitors = charts.monitors_during_workload(runs, workload)
        yield charts.monitor_chart(monitors, f"workload {workload}: device I/O")


def _interval(monitors: Sequence[tuple[str, int, MonitorSeries]]) -> str:
    intervals = {monitor.interval_s for _, _, monitor in monitors}
    return f"{intervals.pop():g} s" if len(intervals) == 1 else "interval"


# -- workloads --------------------------------------------------------------------------------


def _workloads(runs: Sequence[Run]) -> list[Block]:
    """Each run's workloads in the rows a workload run shows (flashmark.workloads.view)."""
    tables: list[Block] = [
        block
        for index, run in enumerate(runs)
        if run.workloads
        for block in (
            Heading(f"{describe.run_label(run, index)}, scale {run.settings.workload_scale:g}"),
            Table(WORKLOAD_COLUMNS, tuple(_workload_rows(run.workloads))),
        )
    ]
    note = "Real-world workloads after the fio tests (docs/workloads.md): wall time, the "
    note += "operations issued, and what the device saw meanwhile."  # fmt: skip
    return [_note(note), *tables] if tables else []


def _workload_rows(results: Sequence[WorkloadResult]) -> Iterator[Row]:
    """A workload run's rows, with the time to the hundredth (a workload may take 0.01 s)."""
    for result, (name, time, operations, seen) in zip(results, workload_rows(results), strict=True):
        if result.skipped is None:
            time = f"{format_duration(result.seconds or 0.0)} ({result.seconds or 0.0:.2f} s)"
        yield Row((name, time, operations, seen))


# -- references -------------------------------------------------------------------------------

_DIRECT = {True: "direct I/O", False: "buffered I/O", None: "direct I/O not stated"}
_REFERENCE_COLUMNS = (
    Column("comparable test"),
    Column("metric"),
    Column("as published", numeric=True),
    Column("notes"),
)


def _references(references: Sequence[ReferenceDevice]) -> list[Block]:
    """Each reference device: what it is, its source, its host and method, why its figures
    may differ, and every figure as published."""
    if not references:
        return []
    blocks: list[Block] = [
        _note(
            f"Everything in this section is {PUBLISHED_LABEL}: figures from the documents the "
            "project started from, with the text and unit they were printed in (see "
            "docs/references.md)."
        )
    ]
    for reference in references:
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
        host = setup.host_board + (f"; {setup.host_details}" if setup.host_details else "")
        blocks += [
            Heading(reference.name, f"({reference.slug})"),
            Sentence(facts or ""),
            Facts.titled(
                "",
                (
                    ("Source", f"{source.citation}. {source.summary}"),
                    ("Host", host),
                    ("Method", method or ""),
                ),
            ),
        ]
        if source.differs_because:
            blocks += [
                Sentence("Why its figures may differ from a flashmark run:"),
                Notes(tuple(source.differs_because), tone=""),
            ]
        rows = rows_of(
            (
                m.tests[0] if m.tests else "-",
                m.metric,
                f"{m.published.text} {m.published.unit}",
                _measurement_marks(m.loose, m.suspect, m.note),
            )
            for m in reference.measurements
        )
        blocks += [Heading(f"{reference.name}: {PUBLISHED_LABEL}"), Table(_REFERENCE_COLUMNS, rows)]
    return blocks


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
