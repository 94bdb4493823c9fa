"""Saved runs (and published reference figures) -> one self-contained HTML page. Pure.

The page is a single file that makes no request: its styles, its charts (inline SVG from
flashmark.report.charts) and its one small script are inline, it uses the system's fonts, and
a Content-Security-Policy forbids anything else (`default-src 'none'`), so a stray reference
would show up as a console error in the browser test instead of a request. It reads on a
laptop and on a phone (a fluid grid; wide tables scroll sideways) and prints cleanly (print
CSS: no navigation, charts and cards never split across pages).

Contents, in order: a verdict card per run (grades with their checks, the card's claims
against what was measured, warnings), the headline figures next to the chosen references
(labelled as published figures, not measured here), device and environment side by side,
every result in a table, then the charts: latency percentiles, bandwidth each second, the
block-size sweep, and what the device saw during each test and workload.

Text is escaped with html.escape; there is no template engine (string.Template for the
skeleton). The other exporters' signature: `render_html_report(runs, references) -> str`.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from string import Template

from flashmark import __version__
from flashmark.model import DirectionResult, Grade, Run, TargetKind
from flashmark.monitor import MonitorSeries
from flashmark.probe import measured_summary
from flashmark.probe.model import Device, Environment
from flashmark.references import PUBLISHED_LABEL, ReferenceDevice
from flashmark.report import cells, charts
from flashmark.report.terminal import describe_activity
from flashmark.units import (
    format_duration,
    format_iops,
    format_rate,
    format_size,
)

_PASS_TEXT = {True: "pass", False: "fail", None: "n/a"}
_PASS_CLASS = {True: "pass", False: "fail", None: "na"}

# Counts, once the page has loaded, the charts the browser actually laid out with a non-empty
# box and non-empty drawing, into <body data-charts-drawn>. The browser test compares it with
# data-charts (how many the page holds); a reader never sees it.
_SCRIPT = """addEventListener("load", function () {
  var charts = document.querySelectorAll("svg.pygal-chart"), drawn = 0;
  for (var i = 0; i < charts.length; i++) {
    var box = charts[i].getBoundingClientRect(), drawing = charts[i].getBBox();
    if (box.width > 0 && box.height > 0 && drawing.width > 0 && drawing.height > 0) drawn++;
  }
  document.body.setAttribute("data-charts-drawn", String(drawn));
});"""

# Nothing may be fetched: no scripts but the one above (by its hash), no images, fonts,
# frames or connections. Inline styles stay allowed: the SVG charts carry their own.
_CSP = (
    "default-src 'none'; "
    "script-src 'sha256-{hash}'; "
    "style-src 'unsafe-inline'; "
    "base-uri 'none'; form-action 'none'"
)

_CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --card: #f6f8fa;
  --pass: #1a7f37; --fail: #cf222e; --na: #8a6100; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: #fff; font: 16px/1.5 system-ui,
  -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif; }
header, nav, main, footer { max-width: 78rem; margin: 0 auto; padding: 0 1rem; }
header { padding-top: 1.5rem; }
h1 { font-size: 1.7rem; margin: 0 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2.5rem 0 .75rem; padding-bottom: .25rem;
  border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.25rem 0 .5rem; }
p, ul { margin: .4rem 0; }
.muted, figcaption, .note { color: var(--muted); }
.note { font-size: .9rem; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0;
  margin: .75rem 0 0; font-size: .95rem; }
nav a, footer a { color: #0550ae; }
.cards { display: grid; gap: 1rem;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); }
.card { border: 1px solid var(--line); border-top: 6px solid var(--run); border-radius: 8px;
  background: var(--card); padding: .75rem 1rem 1rem; min-width: 0; }
.card h3 { margin-top: 0; }
.badges { display: flex; flex-wrap: wrap; gap: .35rem; margin: .5rem 0; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 4px; color: #fff;
  font-weight: 600; font-size: .9rem; white-space: nowrap; }
.pass { background: var(--pass); } .fail { background: var(--fail); }
.na { background: var(--na); }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .35em;
  border-radius: 2px; background: var(--run); vertical-align: baseline; }
.published { font-style: italic; }
.warning { color: #9a3412; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: .5rem 0; }
table { border-collapse: collapse; font-size: .9rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { padding: .3rem .55rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { border-bottom: 2px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody th { font-weight: 600; white-space: nowrap; }
.charts { display: grid; gap: 1.25rem;
  grid-template-columns: repeat(auto-fill, minmax(min(100%, 26rem), 1fr)); }
figure { margin: 0; min-width: 0; }
figure svg { display: block; width: 100%; height: auto; }
figcaption { font-size: .85rem; margin-top: .25rem; }
footer { margin-top: 3rem; padding-bottom: 2rem; border-top: 1px solid var(--line);
  font-size: .9rem; }
@media (max-width: 40rem) {
  body { font-size: 15px; }
  h1 { font-size: 1.35rem; }
  th, td { padding: .25rem .35rem; }
}
@media print {
  @page { margin: 12mm; }
  body { font-size: 9.5pt; }
  nav { display: none; }
  header, main, footer { max-width: none; padding: 0; }
  h2 { break-after: avoid; margin-top: 1.5rem; }
  h3 { break-after: avoid; }
  figure, .card, tr { break-inside: avoid; }
  .charts { grid-template-columns: repeat(2, 1fr); }
  .table-wrap { overflow: visible; }
  table { width: 100%; }
  th, td { overflow-wrap: anywhere; }  /* long mount options and paths wrap on paper */
  .card, .badge, .swatch { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  a { color: inherit; text-decoration: none; }
}
"""

_PAGE = Template(
    """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="generator" content="flashmark $version">
<title>$title</title>
<style>$css</style>
</head>
<body data-charts="$chart_count">
<header>
<h1>$title</h1>
<p class="muted">$subtitle</p>
</header>
<nav aria-label="Sections"><ul>$nav</ul></nav>
<main>
$sections
</main>
<footer>
$footer
</footer>
<script>$script</script>
</body>
</html>
"""
)


@dataclass(frozen=True)
class _Section:
    anchor: str
    title: str
    body: str


def render_html_report(runs: Sequence[Run], references: Sequence[ReferenceDevice] = ()) -> str:
    """One self-contained HTML page comparing `runs` side by side (one is fine), with the
    headline figures of `references` next to them, labelled as published, not measured here."""
    if not runs:
        raise ValueError("an HTML report needs at least one run")
    counter = _ChartCounter()
    sections = [
        _Section("verdicts", "Verdicts", _verdicts(runs)),
        _Section("headline", "Headline figures", _headline(runs, references, counter)),
        _Section("device", "Device and environment", _device_and_environment(runs)),
        _Section("results", "All results", _results(runs)),
        _Section("latency", "Latency percentiles", _latency(runs, counter)),
        _Section("bandwidth", "Bandwidth each second", _bandwidth(runs, counter)),
        _Section("sweep", "Block-size sweep", _sweep(runs, references, counter)),
        _Section("activity", "What the device saw", _activity(runs, counter)),
    ]
    if any(run.workloads for run in runs):
        sections.append(_Section("workloads", "Workloads", _workloads(runs)))
    if references:
        sections.append(_Section("references", "References", _references(references)))
    labels = ", ".join(
        f"{charts.run_label(run, index)} {_device_name(run)}" for index, run in enumerate(runs)
    )
    title = f"flashmark report: {labels}"
    return _PAGE.substitute(
        csp=_e(_CSP.format(hash=_script_hash(_SCRIPT))),
        version=_e(__version__),
        title=_e(title),
        css=_CSS,
        chart_count=counter.count,
        subtitle=_e(_subtitle(runs, references)),
        nav="".join(f'<li><a href="#{s.anchor}">{_e(s.title)}</a></li>' for s in sections),
        sections="\n".join(
            f'<section id="{s.anchor}">\n<h2>{_e(s.title)}</h2>\n{s.body}\n</section>'
            for s in sections
        ),
        footer=_footer(runs),
        script=_SCRIPT,
    )


class _ChartCounter:
    """Wraps each chart in a <figure> and counts them (the page says how many it holds)."""

    def __init__(self) -> None:
        self.count = 0

    def figure(self, svg: str, caption: str = "") -> str:
        self.count += 1
        text = f"<figcaption>{_e(caption)}</figcaption>" if caption else ""
        return f"<figure>{svg}{text}</figure>"


# -- verdicts ---------------------------------------------------------------------------------


def _verdicts(runs: Sequence[Run]) -> str:
    cards = "\n".join(_verdict_card(run, index) for index, run in enumerate(runs))
    return (
        '<p class="note">SD Association classes graded from this run\'s figures: value, '
        "threshold and margin for each check (MB = 10^6 bytes).</p>\n"
        f'<div class="cards">\n{cards}\n</div>'
    )


def _verdict_card(run: Run, index: int) -> str:
    settings = run.settings
    mode = "direct I/O" if settings.direct else "BUFFERED I/O: the page cache is included"
    lines = [
        f'<article class="card" id="run-{_e(_anchor(run, index))}" '
        f'style="--run: {charts.run_colour(index)}">',
        f'<h3><span class="swatch"></span>{_e(charts.run_label(run, index))}: '
        f"{_e(_device_name(run))}</h3>",
        f"<p>{_e(_device_line(run))}</p>",
        f'<p class="note">{_e(_where(run))}; profile {_e(settings.profile)}, '
        f"area {_e(format_size(settings.size_bytes))}, {settings.runtime_s} s per test after "
        f"{settings.ramp_s} s ramp, {_e(mode)}; {_e(cells.started_text(run))}</p>",
        '<div class="badges">'
        + "".join(
            f'<span class="badge {_PASS_CLASS[grade.passed]}">{_e(grade.name)} '
            f"{_PASS_TEXT[grade.passed]}</span>"
            for grade in run.grades
        )
        + "</div>",
        _grades_table(run.grades),
        _claims(run),
    ]
    if not settings.direct:
        lines.append(
            '<p class="warning">Buffered I/O: these figures include the page cache; they are '
            "not the device's own speed.</p>"
        )
    if run.warnings:
        lines.append(_list(run.warnings, css="warning", prefix="warning: "))
    lines.append("</article>")
    return "\n".join(lines)


def _grades_table(grades: Sequence[Grade]) -> str:
    rows = []
    for grade in grades:
        checks = "<br>".join(_e(cells.check_text(check)) for check in grade.checks)
        note = f'<br><span class="note">{_e(grade.note)}</span>' if grade.note else ""
        rows.append(
            f'<tr><th title="{_e(grade.title)}">{_e(grade.name)}</th>'
            f'<td><span class="badge {_PASS_CLASS[grade.passed]}">'
            f"{_PASS_TEXT[grade.passed]}</span></td><td>{checks}{note}</td></tr>"
        )
    return _table(
        "<tr><th>class</th><th>verdict</th><th>measured (required, margin)</th></tr>",
        rows,
    )


def _claims(run: Run) -> str:
    """What the card says it is (its SSR register) next to this run's verdict for each."""
    device = run.probe.device if run.probe else None
    card = device.card if device else None
    grades = {grade.name: grade for grade in run.grades}
    parts = ["<h4>Claimed and measured</h4>"]
    if run.probe is None:
        parts.append('<p class="note">The device was not probed: its claims are unknown.</p>')
    elif card is None or not card.claimed.names():
        parts.append(
            '<p class="note">No speed or application class claimed: the device has no SD '
            "status register, or it could not be read.</p>"
        )
    else:
        rows = []
        for name in card.claimed.names():
            grade = grades.get(name)
            verdict = (
                f'<span class="badge {_PASS_CLASS[grade.passed]}">{_PASS_TEXT[grade.passed]}</span>'
                if grade
                else '<span class="note">not graded by flashmark</span>'
            )
            rows.append(f"<tr><th>{_e(name)}</th><td>{verdict}</td></tr>")
        parts.append(
            _table("<tr><th>claims</th><th>this run</th></tr>", rows, caption="SD status register")
        )
    if run.findings:
        parts.append(_list(run.findings, prefix="finding: "))
    return "\n".join(parts)


# -- headline ---------------------------------------------------------------------------------


def _headline(
    runs: Sequence[Run], references: Sequence[ReferenceDevice], counter: _ChartCounter
) -> str:
    published = f" Pale dashed bars: {PUBLISHED_LABEL}." if references else ""
    figures = []
    for svg, caption in (
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
        if svg is not None:
            figures.append(counter.figure(svg, caption + published))
    parts = []
    if references:
        parts.append(
            f'<p class="note published">Pale dashed bars and columns marked "published" are '
            f"{_e(PUBLISHED_LABEL)}: other tools, hosts and methods (see References).</p>"
        )
    parts.append(f'<div class="charts">{"".join(figures)}</div>')
    parts.append(_headline_table(runs, references))
    return "\n".join(parts)


def _headline_table(runs: Sequence[Run], references: Sequence[ReferenceDevice]) -> str:
    head = "<tr><th>test</th>" + "".join(
        f'<th class="num">{_e(charts.run_label(run, i))}</th>' for i, run in enumerate(runs)
    )
    head += "".join(
        f'<th class="num published" title="{_e(reference.name)}">published: '
        f"{_e(_short(reference.name))}</th>"
        for reference in references
    )
    head += "</tr>"
    notes: list[str] = []
    rows = []
    for figure in (*charts.HEADLINE_BANDWIDTH, *charts.HEADLINE_IOPS):
        unit = "MB/s" if figure.metric.endswith("bw_bytes") else "IOPS"
        cells = [f"<th>{_e(figure.test)} {figure.direction} {unit}</th>"]
        for run in runs:
            value = figure.measured(run)
            cells.append(f'<td class="num">{_figure_text(value, unit)}</td>')
        for reference in references:
            cell = _published_cell(reference, figure, notes)
            cells.append(f'<td class="num published">{cell}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    caption = "Measured here" + (f", and {PUBLISHED_LABEL}" if references else "")
    table = _table(head, rows, caption=caption)
    if notes:
        table += '<ol class="note">' + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ol>"
    return table


def _published_cell(
    reference: ReferenceDevice, figure: charts.HeadlineFigure, notes: list[str]
) -> str:
    """The published value as a table cell's content, numbered to its note (as printed, how
    close a comparison it is, the source's caveat)."""
    found = reference.value_for(figure.test, figure.metric)
    if found is None:
        return "&ndash;"
    value = charts.reference_value(reference, figure)
    unit = "MB/s" if figure.metric.endswith("bw_bytes") else "IOPS"
    published = found.measurement.published
    text = _figure_text(value, unit)
    marks = []
    if found.loose:
        marks.append("loose comparison")
    if found.derived:
        marks.append("derived")
    if found.suspect:
        marks.append("suspect figure")
    source_text = f'published as "{published.text}" {published.unit}'
    notes.append(
        f"{reference.name}, {figure.test}: {source_text}"
        + (f"; {', '.join(marks)}" if marks else "")
        + (f"; {found.note}" if found.note else "")
    )
    return f"{text}<sup>{len(notes)}</sup>"


def _figure_text(value: float | None, unit: str) -> str:
    if value is None:
        return "&ndash;"
    return _e(
        format_rate(value * 1e6).removesuffix(" MB/s") if unit == "MB/s" else format_iops(value)
    )


# -- device and environment -------------------------------------------------------------------

_Row = tuple[str, Callable[[Run], str | None]]


def _device_and_environment(runs: Sequence[Run]) -> str:
    groups: list[tuple[str, list[_Row]]] = [
        ("Target", _TARGET_ROWS),
        ("Device", _DEVICE_ROWS),
        ("Host and environment", _ENVIRONMENT_ROWS),
        ("Method", _METHOD_ROWS),
    ]
    head = (
        "<tr><th></th>"
        + "".join(
            f'<th><span class="swatch" style="--run: {charts.run_colour(i)}"></span>'
            f"{_e(charts.run_label(run, i))}</th>"
            for i, run in enumerate(runs)
        )
        + "</tr>"
    )
    rows = []
    for group, fields in groups:
        rows.append(f'<tr><th colspan="{len(runs) + 1}"><h3>{_e(group)}</h3></th></tr>')
        for label, read in fields:
            values = [read(run) for run in runs]
            if all(value is None for value in values):
                continue
            cells = "".join(
                f"<td>{_e(value) if value is not None else '&ndash;'}</td>" for value in values
            )
            rows.append(f"<tr><th>{_e(label)}</th>{cells}</tr>")
    notes = [
        f"{charts.run_label(run, i)}: {note}"
        for i, run in enumerate(runs)
        if run.probe
        for note in (*run.probe.warnings, *run.probe.notes)
    ]
    text = _table(head, rows)
    if notes:
        text += '<p class="note">What the probe could not read or found worth a warning:</p>'
        text += _list(notes)
    return text


def _device(run: Run) -> Device | None:
    return run.probe.device if run.probe else None


def _environment(run: Run) -> Environment | None:
    return run.probe.environment if run.probe else None


def _join(values: Iterable[object]) -> str | None:
    text = ", ".join(str(value) for value in values if value is not None and value != "")
    return text or None


def _bus(run: Run) -> str | None:
    device = _device(run)
    if device is None:
        return None
    parts = []
    if device.mmc_bus:
        bus = device.mmc_bus
        hz = bus.actual_clock_hz or bus.clock_hz
        parts.append(
            _join(
                (
                    bus.timing,
                    f"{hz / 1e6:.0f} MHz" if hz else None,
                    f"{bus.bus_width_bits}-bit" if bus.bus_width_bits else None,
                    bus.controller,
                    {True: "command queueing on", False: "no command queueing", None: None}[
                        bus.command_queue
                    ],
                )
            )
        )
    if device.pcie:
        link = device.pcie
        parts.append(
            f"PCIe {link.current_speed or '?'} x{link.current_width or '?'} "
            f"(device max {link.max_speed or '?'} x{link.max_width or '?'})"
        )
    if device.usb:
        usb = device.usb
        parts.append(
            _join(
                (
                    f"USB {usb.speed_mbps} Mb/s" if usb.speed_mbps else "USB",
                    f"USB {usb.usb_version}" if usb.usb_version else None,
                    usb.driver,
                )
            )
        )
    return _join(parts)


def _health(run: Run) -> str | None:
    device = _device(run)
    health = device.health if device else None
    if health is None:
        return None
    return _join(
        (
            f"life used A {health.life_time_a}" if health.life_time_a else None,
            f"life used B {health.life_time_b}" if health.life_time_b else None,
            f"pre-EOL {health.pre_eol}" if health.pre_eol else None,
            f"{health.percentage_used}% used" if health.percentage_used is not None else None,
            f"{health.media_errors} media errors" if health.media_errors is not None else None,
            f"{health.temperature_c:.0f} °C" if health.temperature_c is not None else None,
        )
    )


def _card_identity(run: Run) -> str | None:
    device = _device(run)
    card = device.card if device else None
    if card is None:
        return None
    cid = card.cid
    return _join(
        (
            card.type,
            card.manufacturer or (f"manufacturer id {cid.manufacturer_id:#04x}" if cid else None),
            f'"{cid.product_name}" rev {cid.revision}' if cid else None,
            f"made {cid.manufactured}" if cid and cid.manufactured else None,
            f"claims {' '.join(card.claimed.names())}" if card.claimed.names() else None,
            *(f"suspect: {flag}" for flag in card.counterfeit_flags),
        )
    )


def _temperatures(run: Run) -> str | None:
    environment = _environment(run)
    if environment is None:
        return None
    return _join(f"{t.type or t.zone} {t.celsius:.1f} °C" for t in environment.temperatures)


def _throttling(run: Run) -> str | None:
    environment = _environment(run)
    throttling = environment.throttling if environment else None
    if throttling is None:
        return None
    now = ", ".join(throttling.now) or "none now"
    since = ", ".join(throttling.since_boot) or "none since boot"
    return f"{throttling.raw}: {now}; {since}"


def _load(run: Run) -> str | None:
    environment = _environment(run)
    if environment is None or environment.load_1m is None:
        return None
    text = f"{environment.load_1m:.2f} / {environment.load_5m or 0:.2f} / "
    text += f"{environment.load_15m or 0:.2f}"
    if environment.iowait_pct is not None:
        text += f"; iowait {environment.iowait_pct:.1f}%"
    if environment.device_busy_pct is not None:
        text += f"; device busy {environment.device_busy_pct:.0f}% before the run"
    return text


def _space(run: Run) -> str | None:
    size = run.target.capacity_bytes
    if not size:
        return None
    return format_size(size) + (" device" if run.target.kind is TargetKind.DEVICE else " free")


def _optional(value: object) -> str | None:
    return None if value is None or value == "" else str(value)


_TARGET_ROWS: list[_Row] = [
    ("given", lambda r: r.target.given),
    ("measured", lambda r: _where(r)),
    ("block device", lambda r: r.target.block_device),
    ("filesystem", lambda r: r.target.filesystem),
    ("mount point", lambda r: r.target.mount_point),
    ("mount options", lambda r: r.target.mount_options),
    ("space", _space),
]

_DEVICE_ROWS: list[_Row] = [
    ("device", lambda r: _device_line(r)),
    ("kind", lambda r: _optional(d.kind) if (d := _device(r)) else None),
    ("vendor, model", lambda r: _join((d.vendor, d.model)) if (d := _device(r)) else None),
    ("firmware", lambda r: _optional(d.firmware) if (d := _device(r)) else None),
    (
        "capacity",
        lambda r: (
            f"{d.capacity_bytes / 1e9:.1f} GB" if (d := _device(r)) and d.capacity_bytes else None
        ),
    ),
    ("card identity", _card_identity),
    ("bus", _bus),
    ("I/O scheduler", lambda r: _optional(d.scheduler) if (d := _device(r)) else None),
    ("write cache", lambda r: _optional(d.write_cache) if (d := _device(r)) else None),
    ("health", _health),
]

_ENVIRONMENT_ROWS: list[_Row] = [
    ("board", lambda r: _optional(e.board) if (e := _environment(r)) else None),
    (
        "CPU",
        lambda r: (
            _join((e.cpu_model, f"{e.cpu_count} cores" if e.cpu_count else None))
            if (e := _environment(r))
            else None
        ),
    ),
    ("CPU governor", lambda r: _join(e.cpu_governors) if (e := _environment(r)) else None),
    (
        "CPU clock",
        lambda r: (
            _join(
                (
                    f"{min(e.cpu_mhz)}-{max(e.cpu_mhz)} MHz" if e.cpu_mhz else None,
                    f"max {e.cpu_max_mhz} MHz" if e.cpu_max_mhz else None,
                )
            )
            if (e := _environment(r))
            else None
        ),
    ),
    ("temperature", _temperatures),
    ("throttling", _throttling),
    ("load 1/5/15 min", _load),
    ("kernel", lambda r: r.host.kernel),
    ("distribution", lambda r: _optional(e.distribution) if (e := _environment(r)) else None),
    ("machine", lambda r: r.host.machine),
    ("hostname", lambda r: r.host.hostname),
]

_METHOD_ROWS: list[_Row] = [
    ("profile", lambda r: r.settings.profile),
    ("test area", lambda r: format_size(r.settings.size_bytes)),
    ("time per test", lambda r: f"{r.settings.ramp_s} s ramp + {r.settings.runtime_s} s"),
    ("I/O", lambda r: "direct (O_DIRECT)" if r.settings.direct else "BUFFERED (page cache)"),
    ("writes on a device", lambda r: "allowed" if r.settings.destructive else None),
    ("engine", lambda r: f"{r.fio.version}, {r.settings.ioengine}"),
    (
        "workloads",
        lambda r: f"scale {r.settings.workload_scale:g}" if r.settings.workload_scale else None,
    ),
    ("tests skipped", lambda r: _join(r.tests_skipped)),
    ("started, finished", lambda r: f"{r.started_at} - {r.finished_at}"),
    ("flashmark", lambda r: r.host.flashmark_version),
]


# -- all results ------------------------------------------------------------------------------


def _results(runs: Sequence[Run]) -> str:
    parts = [
        '<p class="note">MB/s with MB = 10^6 bytes; IOPS = I/Os completed per second of the '
        "measuring window; latency is fio's completion latency (submission included).</p>"
    ]
    head = (
        "<tr><th>test</th>"
        + "".join(
            f'<th class="num">{d} {column}</th>'
            for d in ("read", "write")
            for column in ("MB/s", "IOPS", "p50", "p99")
        )
        + "</tr>"
    )
    for index, run in enumerate(runs):
        rows = [
            f"<tr><th>{_e(result.spec.name)}</th>"
            f"{_direction_cells(result.read)}{_direction_cells(result.write)}</tr>"
            for result in run.tests
        ]
        rows += [
            f'<tr><th class="muted">{_e(name)}</th><td colspan="8" class="muted">skipped</td></tr>'
            for name in run.tests_skipped
        ]
        buffered = " (buffered I/O)" if not run.settings.direct else ""
        caption = f"{charts.run_label(run, index)}: {_device_name(run)}{buffered}"
        parts.append(_table(head, rows, caption=caption))
    return "\n".join(parts)


def _direction_cells(direction: DirectionResult | None) -> str:
    return "".join(f'<td class="num">{_e(text)}</td>' for text in cells.direction_cells(direction))


# -- charts per test --------------------------------------------------------------------------


def _latency(runs: Sequence[Run], counter: _ChartCounter) -> str:
    figures = [
        counter.figure(svg)
        for test in charts.tests_in(runs)
        if (svg := charts.latency_chart(runs, test)) is not None
    ]
    intro = (
        '<p class="note">fio\'s completion latency at the 50th to 99.99th percentile, on a '
        "logarithmic scale: the tail (p99 and beyond) is where a card stalls. A test that reads "
        "and writes has a solid read and a dashed write curve.</p>"
    )
    return intro + _grid(figures, "No test measured latency.")


def _bandwidth(runs: Sequence[Run], counter: _ChartCounter) -> str:
    figures = []
    missing = []
    for test in charts.tests_in(runs):
        svg = charts.bandwidth_chart(runs, test)
        if svg is None:
            missing.append(test)
        else:
            figures.append(counter.figure(svg))
    intro = (
        '<p class="note">fio\'s bandwidth log averaged over each second of the measuring window '
        "(ramp excluded). A card whose write cache fills shows a cliff; a stall, a drop towards "
        "zero.</p>"
    )
    text = intro + _grid(figures, "No test has two or more seconds of samples.")
    if missing and figures:
        text += f'<p class="note">Not drawn, fewer than two samples: {_e(", ".join(missing))}.</p>'
    return text


def _sweep(
    runs: Sequence[Run], references: Sequence[ReferenceDevice], counter: _ChartCounter
) -> str:
    figures = [
        counter.figure(svg)
        for direction in ("read", "write")
        if (svg := charts.sweep_chart(runs, direction, references)) is not None
    ]
    if not figures:
        return (
            '<p class="note">None of these runs has a block-size sweep: the full profile '
            "measures one (<code>flashmark run DIR --profile full</code>).</p>"
        )
    intro = (
        '<p class="note">Throughput at each block size, depth 1, both axes logarithmic: random '
        "solid, sequential dashed"
        + (f"; dotted grey points are {_e(PUBLISHED_LABEL)}" if references else "")
        + ". Small blocks show the IOPS limit, large ones the bus or the flash.</p>"
    )
    return intro + f'<div class="charts">{"".join(figures)}</div>'


def _activity(runs: Sequence[Run], counter: _ChartCounter) -> str:
    figures = []
    for test in charts.tests_in(runs):
        monitors = charts.monitors_during_test(runs, test)
        title = f"{test}: device I/O each {_interval(monitors)}"
        svg = charts.monitor_chart(monitors, title)
        if svg is not None:
            figures.append(counter.figure(svg))
    for workload in charts.workloads_in(runs):
        monitors = charts.monitors_during_workload(runs, workload)
        svg = charts.monitor_chart(monitors, f"workload {workload}: device I/O")
        if svg is not None:
            figures.append(counter.figure(svg))
    intro = (
        '<p class="note">Sampled from /proc/diskstats during each test and workload, like '
        "<code>iostat -x 1</code>: read and write IOPS the device completed (left axis) and "
        "%util, the share of each interval it was busy (right axis). Ramp and final flush are "
        "included, unlike fio's figures.</p>"
    )
    return intro + _grid(
        figures,
        "No device activity with two or more samples: the target was on no block device, or "
        "the tests were too short (replayed runs record none).",
    )


def _interval(monitors: Sequence[tuple[str, int, MonitorSeries]]) -> str:
    intervals = {monitor.interval_s for _, _, monitor in monitors}
    return f"{intervals.pop():g} s" if len(intervals) == 1 else "interval"


# -- workloads --------------------------------------------------------------------------------


def _workloads(runs: Sequence[Run]) -> str:
    parts = [
        '<p class="note">Real-world workloads after the fio tests (docs/workloads.md): wall '
        "time, the operations issued, and what the device saw meanwhile.</p>"
    ]
    head = '<tr><th>workload</th><th class="num">time</th><th>operations</th>'
    head += "<th>device saw</th></tr>"
    for index, run in enumerate(runs):
        if not run.workloads:
            continue
        rows = []
        for result in run.workloads:
            if result.skipped is not None:
                rows.append(
                    f"<tr><th>{_e(result.name)}</th><td>skipped</td>"
                    f'<td colspan="2">{_e(result.skipped)}</td></tr>'
                )
                continue
            counts = result.counts
            operations = (
                f"{counts.packages} packages, {counts.files_written} files written, "
                f"{counts.files_removed} removed, {counts.files_read} read, {counts.fsyncs} "
                f"fsyncs; {format_size(counts.bytes_written)} written, "
                f"{format_size(counts.bytes_read)} read"
            )
            seen = (
                describe_activity(result.monitor.device, result.monitor.summary())
                if result.monitor is not None
                else "no block device"
            )
            rows.append(
                f"<tr><th>{_e(result.name)}</th>"
                f'<td class="num">{_e(format_duration(result.seconds or 0.0))} '
                f"({result.seconds or 0.0:.2f} s)</td>"
                f"<td>{_e(operations)}</td><td>{_e(seen)}</td></tr>"
            )
        caption = (
            f"{charts.run_label(run, index)}: {_device_name(run)}, "
            f"scale {run.settings.workload_scale:g}"
        )
        parts.append(_table(head, rows, caption=caption))
    return "\n".join(parts)


# -- references -------------------------------------------------------------------------------


def _references(references: Sequence[ReferenceDevice]) -> str:
    parts = [
        f'<p class="note published">Everything in this section is {_e(PUBLISHED_LABEL)}: '
        "figures from the documents the project started from, with the text and unit they "
        "were printed in (see docs/references.md).</p>"
    ]
    for reference in references:
        source, setup = reference.source, reference.setup
        facts = _join(
            (
                reference.media_kind.value,
                reference.type_as_published,
                reference.capacity,
                reference.rating,
                f"made {reference.production_date}" if reference.production_date else None,
                f"through {reference.interface}" if reference.interface else None,
            )
        )
        direct = {True: "direct I/O", False: "buffered I/O", None: "direct I/O not stated"}
        method = _join(
            (
                f"{setup.tool} {setup.tool_version or ''}".strip(),
                direct[setup.direct_io],
                f"blocks {setup.block_sizes}",
                f"depth {setup.queue_depth}",
                f"test size {setup.test_size}" if setup.test_size else None,
            )
        )
        origin = _join(
            (
                f"seed {source.seed}",
                f'"{source.title}"' if source.title else None,
                f"by {source.author}" if source.author else None,
                source.date,
            )
        )
        rows = [
            f"<tr><th>{_e(m.tests[0] if m.tests else '-')}</th><td>{_e(m.metric)}</td>"
            f'<td class="num">{_e(m.published.text)} {_e(m.published.unit)}</td>'
            f"<td>{_e(_measurement_marks(m.loose, m.suspect, m.note))}</td></tr>"
            for m in reference.measurements
        ]
        parts.append(
            f'<h3 class="published">{_e(reference.name)} <span class="muted">'
            f"({_e(reference.slug)})</span></h3>"
            f"<p>{_e(facts or '')}</p>"
            f"<p><strong>Source:</strong> {_e(origin or '')}. {_e(source.summary)}</p>"
            f"<p><strong>Host:</strong> {_e(setup.host_board)}"
            f"{'; ' + _e(setup.host_details) if setup.host_details else ''}. "
            f"<strong>Method:</strong> {_e(method or '')}.</p>"
        )
        if source.differs_because:
            parts.append("<p>Why its figures may differ from a flashmark run:</p>")
            parts.append(_list(source.differs_because))
        parts.append(
            _table(
                '<tr><th>comparable test</th><th>metric</th><th class="num">as published'
                "</th><th>notes</th></tr>",
                rows,
                caption=f"{reference.name}: {PUBLISHED_LABEL}",
            )
        )
    return "\n".join(parts)


def _measurement_marks(loose: bool, suspect: bool, note: str) -> str:
    marks = [text for flag, text in ((loose, "loose comparison"), (suspect, "suspect")) if flag]
    return "; ".join([*marks, note] if note else marks)


# -- small pieces -----------------------------------------------------------------------------


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(head: str, rows: Sequence[str], caption: str = "") -> str:
    caption_html = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (
        f'<div class="table-wrap"><table>{caption_html}<thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _list(items: Iterable[str], css: str = "", prefix: str = "") -> str:
    attribute = f' class="{css}"' if css else ""
    return f"<ul{attribute}>" + "".join(f"<li>{_e(prefix + item)}</li>" for item in items) + "</ul>"


def _grid(figures: Sequence[str], empty: str) -> str:
    if not figures:
        return f'<p class="note">{_e(empty)}</p>'
    return f'<div class="charts">{"".join(figures)}</div>'


def _script_hash(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


def _short(text: str, limit: int = 28) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _anchor(run: Run, index: int) -> str:
    return str(run.id) if run.id is not None else f"n{index + 1}"


def _device_name(run: Run) -> str:
    """A short name for the measured device: its model or card name, else the kernel name."""
    device = _device(run)
    if device is None:
        return run.target.block_device or run.target.given
    card = device.card
    product = card.cid.product_name if card and card.cid else device.model
    if not product:  # a vendor id alone ("0x1af4") names nothing
        return f"{device.name} ({device.kind})"
    maker = (card.manufacturer if card else None) or device.vendor
    return " ".join(part for part in (maker, product) if part)


def _device_line(run: Run) -> str:
    measured = measured_summary(run.probe) if run.probe is not None else None
    if measured is not None:
        return measured
    return f"{run.target.block_device or 'unknown device'} (not identified by the probe)"


def _where(run: Run) -> str:
    target = run.target
    if target.kind is TargetKind.FILE:
        fs = f" ({target.filesystem})" if target.filesystem else ""
        return f"a test file in {target.folder or target.path}{fs}"
    return f"block device {target.path}"


def _subtitle(runs: Sequence[Run], references: Sequence[ReferenceDevice]) -> str:
    dates = sorted(run.started_at[:10] for run in runs)
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    text = f"{len(runs)} run{'s' if len(runs) != 1 else ''} measured {span}"
    if references:
        text += f"; {len(references)} reference device{'s' if len(references) != 1 else ''}"
        text += f" ({PUBLISHED_LABEL})"
    return text


def _footer(runs: Sequence[Run]) -> str:
    ids = ", ".join(charts.run_label(run, i) for i, run in enumerate(runs))
    return (
        f"<p>Made by flashmark {_e(__version__)} from the saved runs {_e(ids)}. Measured with "
        "fio: direct I/O unless marked buffered, incompressible data, a prepared test area, "
        "rates per second of the measuring window after a ramp. MB = 10^6 bytes; KiB = 1024 "
        "bytes. Grades follow the SD Association's thresholds (docs/result-schema.md).</p>"
    )
