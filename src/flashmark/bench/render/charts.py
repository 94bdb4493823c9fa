"""Runs -> charts, each an inline SVG string (pygal), one function per chart. Pure: no I/O.

One series per run, in the run's colour throughout the report; published figures pale and
dashed. A chart is its SVG and its legend (views.model.Figure), which the page draws as text.
None when the runs hold nothing to draw. Drawn in the report's one look (flashmark.views.charts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import pygal

from flashmark.bench.model import DirectionResult, Pattern
from flashmark.bench.render import describe
from flashmark.bench.run_result import Run
from flashmark.references.records import ReferenceDevice
from flashmark.result_kind import LegendKey
from flashmark.units import block_size_label, format_rate, mb_per_s
from flashmark.views.charts import CHAR_EM, PALETTE, SIZE, config, render, style
from flashmark.views.model import Figure

if TYPE_CHECKING:  # a type only: the monitor module also holds the sampler thread
    from flashmark.monitor.series import MonitorSeries

# Published figures: pale and dashed, never to be mistaken for a measurement.
# Greys and browns: none close to a run's colour (a pale purple once read as run #4's).
REFERENCE_COLOURS = ("#8C8C8C", "#9C755F", "#5F5F5F", "#C9A66B", "#BAB0AC")
_REFERENCE_VALUE_STYLE = "fill-opacity:0.35;stroke-dasharray:5 3;stroke-width:2"
_Line = Literal["solid", "dashed", "dotted"]
_STROKES: dict[str, dict[str, Any]] = {
    "solid": {"width": 2},
    "dashed": {"dasharray": "7,4", "width": 2},
    "dotted": {"dasharray": "2,3", "width": 2},
}
# Points of one line of a time series at most, more than the chart's width in pixels: a longer
# series is drawn from the lowest and highest sample of each of MAX_LINE_POINTS / 2 equal spans,
# so nothing visible is lost and a chart's cost stays bounded.
MAX_LINE_POINTS = 800

# A value within this factor of a tick takes the next tick as the axis end: its dot drawn on
# the plot's edge would run into the title or the axis labels.
_LOG_PAD = 1.25
_MAX_LOG_TICKS = 10
_SPARSE = 4.9  # an axis end labelled next to a power of ten only this factor away (5x, not 2x)
_LABEL_GAP = 6.0  # the least room between two axis labels (viewBox units)


@dataclass(frozen=True)
class HeadlineFigure:
    """One bar of the headline charts: a test, the direction read, and how it is measured."""

    test: str
    direction: str  # "read" or "write"
    metric: str  # the references' metric name: read_bw_bytes, write_iops, ...
    label: str

    @property
    def unit(self) -> str:
        """The chart's unit: "MB/s" or "IOPS"."""
        return "MB/s" if self.metric.endswith("bw_bytes") else "IOPS"

    def measured(self, run: Run) -> float | None:
        """The run's value in the chart's unit, or None if not measured."""
        result = run.test(self.test)
        direction = result.direction(self.direction) if result else None
        if direction is None:
            return None
        return mb_per_s(direction.bw_bytes) if self.unit == "MB/s" else direction.iops


HEADLINE_BANDWIDTH = (
    HeadlineFigure("seq-read", "read", "read_bw_bytes", "read"),
    HeadlineFigure("seq-write", "write", "write_bw_bytes", "write"),
)
HEADLINE_IOPS = (
    HeadlineFigure("rand-read-4k", "read", "read_iops", "read q1"),
    HeadlineFigure("rand-write-4k", "write", "write_iops", "write q1"),
    HeadlineFigure("rand-read-4k-q32", "read", "read_iops", "read q32"),
    HeadlineFigure("rand-write-4k-q32", "write", "write_iops", "write q32"),
)

# pygal's bar layout (pygal 3.1 graph/bar.py): each group of bars takes its share of the plot
# width, less a margin of 1/(2 x bars) each side... approximated as 85 % of the group's slot.
_BAR_SHARE = 0.85

# fio's completion-latency percentiles as flashmark keeps them (LatencyNs field, label).
LATENCY_PERCENTILES = (
    ("p50", "p50"),
    ("p90", "p90"),
    ("p99", "p99"),
    ("p99_9", "p99.9"),
    ("p99_99", "p99.99"),
)


# How a run is named in legends: id, target and device, short enough for a legend ("#3 CARD on
# mmcblk0p1"); headings and tables use describe.run_label's full one.
run_label = describe.legend_label


def reference_label(reference: ReferenceDevice) -> str:
    return f"published: {reference.name}"


def run_colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def reference_colour(index: int) -> str:
    return REFERENCE_COLOURS[index % len(REFERENCE_COLOURS)]


# -- headline ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """A headline chart: its bars, its title, how a value on it reads, and the page's caption
    under it."""

    figures: tuple[HeadlineFigure, ...]
    title: str
    formatter: Callable[[float], str]
    caption: str


def headline_chart(
    runs: Sequence[Run], headline: Headline, references: Sequence[ReferenceDevice] = ()
) -> Figure | None:
    """The headline's figures of every run, and the references' published figures for the
    same tests."""
    figures, formatter = headline.figures, headline.formatter
    measured = [[figure.measured(run) for figure in figures] for run in runs]
    published = [
        [reference_value(reference, figure) for figure in figures] for reference in references
    ]
    if all(value is None for row in (*measured, *published) for value in row):
        return None
    colours = [run_colour(i) for i in range(len(runs))]
    colours += [reference_colour(i) for i in range(len(references))]
    texts = [
        formatter(value) for row in (*measured, *published) for value in row if value is not None
    ]
    chart = pygal.Bar(
        **config(
            colours,
            title=headline.title,
            # Figures on the bars only while each fits above its own bar (side by side they
            # would run together, "20002000"); the page's table has them all.
            print_values=_values_fit(texts, groups=len(figures), bars=len(colours)),
            print_values_position="top",
            formatter=lambda value: "" if value is None else formatter(value),
            value_formatter=formatter,
        )
    )
    # Round ticks, about five (pygal's own put one every 200 MB/s, twelve labels on a phone).
    top = _top(value for row in (*measured, *published) for value in row)
    step = _nice_step(top / 5)
    chart.config.y_labels = [step * i for i in range(math.ceil(top / step) + 1)]
    chart.config.range = (0.0, step * math.ceil(top / step))
    chart.x_labels = [figure.label for figure in figures]
    legend: list[LegendKey] = []
    for index, (run, values) in enumerate(zip(runs, measured, strict=True)):
        _add(chart, legend, LegendKey(run_label(run, index), run_colour(index), "bar"), values)
    for index, (reference, values) in enumerate(zip(references, published, strict=True)):
        key = LegendKey(reference_label(reference), reference_colour(index), "published")
        pale = [
            None if v is None else {"value": v, "style": _REFERENCE_VALUE_STYLE} for v in values
        ]
        _add(chart, legend, key, pale)
    return render(chart, legend)


def _add(
    chart: Any, legend: list[LegendKey], key: LegendKey, values: Sequence[Any], **options: Any
) -> None:
    """Add a series under its legend key, a line in the key's stroke."""
    if key.line in _STROKES:
        options["stroke_style"] = _STROKES[key.line]
    chart.add(key.label, list(values), **options)
    legend.append(key)


def _drawn(chart: Any, legend: Sequence[LegendKey], axes: Callable[[Any], None]) -> Figure | None:
    """The chart with its `axes` set, rendered in its legend keys' colours (None: no series)."""
    if not legend:
        return None
    axes(chart)
    chart.config.style = style([key.colour for key in legend])
    return render(chart, legend)


def _values_fit(texts: Sequence[str], *, groups: int, bars: int) -> bool:
    """Whether the widest printed value is narrower than one bar (in viewBox units)."""
    if not texts:
        return False
    width, _ = SIZE
    plot = width - 2 * 12 - 60  # the margins of views.charts.config and the y labels
    bar = plot / groups * _BAR_SHARE / bars
    font: float = style(()).value_font_size
    return max(len(text) for text in texts) * CHAR_EM * font < bar


def reference_value(reference: ReferenceDevice, figure: HeadlineFigure) -> float | None:
    """The reference's published value for a headline figure, in the chart's unit."""
    found = reference.value_for(figure.test, figure.metric)
    if found is None:
        return None
    return mb_per_s(found.value) if figure.unit == "MB/s" else found.value


# -- per test ---------------------------------------------------------------------------------


def tests_in(runs: Sequence[Run]) -> tuple[str, ...]:
    """Every test of the runs, in the order the first run holding it ran it."""
    return tuple(dict.fromkeys(result.spec.name for run in runs for result in run.tests))


def latency_chart(runs: Sequence[Run], test: str) -> Figure | None:
    """Completion latency percentiles (p50 .. p99.99) of one test, a curve per run and
    direction, on a logarithmic axis: the tail of a slow card is orders above its median."""
    chart = pygal.Line(
        **config(
            [],
            title=f"{test}: latency percentiles",
            logarithmic=True,
            value_formatter=_latency,
            dots_size=4,
        )
    )
    chart.x_labels = [label for _, label in LATENCY_PERCENTILES]
    legend = _per_direction(
        runs,
        test,
        chart,
        lambda direction: [getattr(direction.lat_ns, key) for key, _ in LATENCY_PERCENTILES],
    )
    return _drawn(chart, legend, _log_axis)


def at_most(points: Sequence[tuple[float, float]], limit: int) -> list[tuple[float, float]]:
    """`points` (in time order) thinned to at most `limit`: the lowest and the highest of each
    of limit / 2 equal runs of points, in their order, so that peaks and drops stay drawn."""
    if len(points) <= limit:
        return list(points)
    spans = max(limit // 2, 1)
    kept: list[tuple[float, float]] = []
    for span in range(spans):
        chunk = points[span * len(points) // spans : (span + 1) * len(points) // spans]
        if not chunk:
            continue
        low = min(range(len(chunk)), key=lambda i: chunk[i][1])
        high = max(range(len(chunk)), key=lambda i: chunk[i][1])
        kept += [chunk[i] for i in sorted({low, high})]
    return kept


def bandwidth_chart(runs: Sequence[Run], test: str) -> Figure | None:
    """fio's bandwidth per second over the measuring window of one test, a line per run and
    direction: a card whose cache fills shows a cliff, a stall shows as a drop to zero."""

    def points(direction: DirectionResult) -> list[tuple[float, float]] | None:
        series = direction.bw_per_second
        if series is None or len(series.samples_bps) < 2:
            return None
        step_s = series.interval_ms / 1000
        return at_most(
            [((i + 1) * step_s, mb_per_s(bps)) for i, bps in enumerate(series.samples_bps)],
            MAX_LINE_POINTS,
        )

    chart = pygal.XY(
        **config(
            [],
            title=f"{test}: MB/s each second",
            x_title="seconds into the measuring window",
            value_formatter=_mb_s,
            x_value_formatter=_seconds,
            dots_size=2,
        )
    )
    return _drawn(chart, _per_direction(runs, test, chart, points), _linear_axes)


def _per_direction(
    runs: Sequence[Run],
    test: str,
    chart: Any,
    values: Callable[[DirectionResult], Sequence[Any] | None],
) -> list[LegendKey]:
    """Add a series per run and direction of `test`, a run's write dashed beside its read.
    The legend of what was added (empty: nothing to draw)."""
    legend: list[LegendKey] = []
    for index, run in enumerate(runs):
        result = run.test(test)
        if result is None:
            continue
        both = result.read is not None and result.write is not None
        for name in ("read", "write"):
            direction = result.direction(name)
            series = values(direction) if direction is not None else None
            if series is None:
                continue
            label = run_label(run, index) + (f" {name}" if both else "")
            line: _Line = "dashed" if both and name == "write" else "solid"
            _add(chart, legend, LegendKey(label, run_colour(index), line), series)
    return legend


# -- block-size sweep -------------------------------------------------------------------------

# The sweep's curves: depth-1 tests of one pattern at every block size a run measured.
SWEEP_CURVES = (
    ("read", Pattern.RAND_READ, "random"),
    ("read", Pattern.SEQ_READ, "sequential"),
    ("write", Pattern.RAND_WRITE, "random"),
    ("write", Pattern.SEQ_WRITE, "sequential"),
)
# Fewer block sizes than this is not a sweep (the quick profile has 4k random and 1M
# sequential, one point each).
SWEEP_MIN_POINTS = 3


def sweep_points(run: Run, pattern: Pattern) -> list[tuple[int, float, str]]:
    """(block size in bytes, MB/s, test name) of every depth-1 test of `pattern`, by size."""
    points = []
    for result in run.tests:
        spec = result.spec
        if spec.pattern is not pattern or spec.iodepth != 1:
            continue
        direction = result.direction("read" if pattern.reads else "write")
        if direction is not None:
            points.append((spec.block_size_bytes, mb_per_s(direction.bw_bytes), spec.name))
    return sorted(points)


def sweep_chart(
    runs: Sequence[Run], direction: str, references: Sequence[ReferenceDevice] = ()
) -> Figure | None:
    """Throughput against block size (both axes logarithmic) for `direction` ("read" or
    "write"): a random and a sequential curve per run, and the references' published points
    at the same tests (seed 002 measured 1k, 4k and 16k random and 16M sequential)."""
    curves = [(pattern, kind) for name, pattern, kind in SWEEP_CURVES if name == direction]
    found = [
        (index, run, pattern, kind, sweep_points(run, pattern))
        for index, run in enumerate(runs)
        for pattern, kind in curves
    ]
    if not any(len(points) >= SWEEP_MIN_POINTS for *_, points in found):
        return None
    tests = sorted({(size, name) for *_, points in found for size, _, name in points})
    chart = pygal.XY(
        **config(
            [],
            title=f"Sweep, {direction}: MB/s by block size",
            x_title="block size (k = KiB, M = MiB)",
            logarithmic=True,
            value_formatter=_mb_s,
            x_value_formatter=lambda size: block_size_label(int(size)),
            dots_size=4,
        )
    )
    legend: list[LegendKey] = []
    for index, run, _pattern, kind, points in found:
        if len(points) < 2:
            continue
        line: _Line = "solid" if kind == "random" else "dashed"
        key = LegendKey(f"{run_label(run, index)} {kind}", run_colour(index), line)
        _add(chart, legend, key, [(float(size), mb) for size, mb, _ in points])
    metric = f"{direction}_bw_bytes"
    for ref_index, reference in enumerate(references):
        for _pattern, kind in curves:
            xy = []
            for size, name in tests:
                if (kind == "random") != name.startswith("rand-"):
                    continue
                value = reference.value_for(name, metric)
                # Only at the block size the source measured: seed 002's 16M sequential
                # figure also stands for flashmark's 1M seq-read, but not on this axis.
                if value is not None and value.measurement.block_size_bytes == size:
                    xy.append((float(size), mb_per_s(value.value)))
            if xy:
                label = f"published {kind}: {reference.name}"
                _add(chart, legend, LegendKey(label, reference_colour(ref_index), "dotted"), xy)
    chart.x_labels = _spaced_log_labels(sorted({size for size, _ in tests}), block_size_label)
    return _drawn(chart, legend, _log_axis)


# -- device activity --------------------------------------------------------------------------


def monitor_chart(series: Sequence[tuple[str, int, MonitorSeries]], title: str) -> Figure | None:
    """What the device itself did each interval (/proc/diskstats, like `iostat -x 1`): read
    and write IOPS on the left axis, %util (share of the interval the device was busy) on the
    right. `series` holds (label, run index, samples) for each run that has them; ramp and
    final fsync are included, unlike fio's own figures."""
    # pygal numbers the series on the left axis first and those on the right after them
    # (pygal 3.1 graph/base.py setup), whatever order they were added in: colours and the
    # legend follow.
    primary: list[LegendKey] = []
    secondary: list[LegendKey] = []
    chart = pygal.XY(
        **config(
            [],
            title=title,
            x_title="seconds since monitoring started",
            value_formatter=_iops,
            x_value_formatter=_seconds,
            dots_size=2,
        )
    )
    for label, index, monitor in series:
        samples = monitor.samples
        if len(samples) < 2:
            continue
        line: _Line
        for name, line in (("read", "solid"), ("write", "dashed")):
            values = at_most(
                [(s.t_s, getattr(s, f"{name}_iops")) for s in samples], MAX_LINE_POINTS
            )
            if any(value for _, value in values):
                _add(
                    chart,
                    primary,
                    LegendKey(f"{label} {name} IOPS", run_colour(index), line),
                    values,
                )
        utilisation = at_most(
            [(s.t_s, s.util_pct) for s in samples if s.util_pct is not None], MAX_LINE_POINTS
        )
        if utilisation:
            key = LegendKey(f"{label} %util (right)", run_colour(index), "dotted")
            _add(chart, secondary, key, utilisation, secondary=True)
    return _drawn(chart, [*primary, *secondary], partial(_linear_axes, percent_on_secondary=True))


def monitors_during_test(runs: Sequence[Run], test: str) -> list[tuple[str, int, MonitorSeries]]:
    """The device activity recorded during `test` in each run that has it."""
    return [
        (run_label(run, index), index, result.monitor)
        for index, run in enumerate(runs)
        if (result := run.test(test)) is not None and result.monitor is not None
    ]


def monitors_during_workload(
    runs: Sequence[Run], workload: str
) -> list[tuple[str, int, MonitorSeries]]:
    """The device activity recorded during a workload (package install, ...) in each run."""
    return [
        (run_label(run, index), index, result.monitor)
        for index, run in enumerate(runs)
        for result in run.workloads
        if result.name == workload and result.monitor is not None
    ]


def workloads_in(runs: Sequence[Run]) -> tuple[str, ...]:
    """Every workload of the runs, in the order the first run holding it ran it."""
    return tuple(dict.fromkeys(result.name for run in runs for result in run.workloads))


# -- axes -------------------------------------------------------------------------------------


def _linear_axes(chart: Any, *, percent_on_secondary: bool = False) -> None:
    """Round ticks for an XY chart of time series: whole seconds along x, and a y axis from
    zero in four even steps, so that a %util axis on the right (0..100) lines up with it."""
    primary = [point for values, config in chart.raw_series if not config.get("secondary")
               for point in values]  # fmt: skip
    every = [point for values, _ in chart.raw_series for point in values]
    x_top = max((x for x, _ in every), default=1.0)
    x_step = max(1.0, _nice_step(x_top / 6))
    chart.config.x_labels = [x_step * i for i in range(math.ceil(x_top / x_step) + 1)]
    # A little room above the highest point: on the plot's edge its dot would be cut in half.
    y_top = max((y for _, y in primary if y is not None), default=0.0) * 1.04
    y_step = _nice_step(y_top / 4)
    chart.config.range = (0.0, 4 * y_step)
    chart.config.y_labels = [y_step * i for i in range(5)]
    if percent_on_secondary:
        chart.config.secondary_range = (0.0, 100.0)


def _nice_step(rough: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^n that is at least `rough` (1 for nothing)."""
    if rough <= 0:
        return 1.0
    decade = 10.0 ** math.floor(math.log10(rough))
    return next(step * decade for step in (1, 2, 2.5, 5, 10) if step * decade >= rough)


def _ladder(present: Sequence[float], steps: Sequence[int]) -> list[float]:
    """The `steps` x 10^n from the one at or below the smallest value to the one above the
    largest, each by _LOG_PAD (so no point sits on, and is cut by, the plot's edge)."""
    low, high = min(present), max(present)
    every = [
        step * 10.0**decade
        for decade in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 2)
        for step in steps
    ]
    below = max(tick for tick in every if tick <= low / _LOG_PAD)
    above = min(tick for tick in every if tick >= high * _LOG_PAD)
    return [tick for tick in every if below <= tick <= above]


def _log_ticks(values: Iterable[float | None]) -> list[float]:
    """Labels for a logarithmic axis that contains every value: 1-2-5 steps per decade from
    the step at or below the smallest value to the step above the largest (pygal labels only
    powers of ten, or else every 1..9 step, which crowds a small chart). The axis ends on the
    outer ticks, so no point sits on (and is cut by) the plot's edge."""
    present = [value for value in values if value is not None and value > 0]
    if not present:
        return []
    steps_125, powers, steps_19 = (
        _ladder(present, steps) for steps in ((1, 2, 5), (1,), (1, 2, 3, 4, 5, 6, 7, 8, 9))
    )
    # 1-2-5 while it gives 3 to _MAX_LOG_TICKS labels; across many decades powers of ten
    # (a sweep spans four: thirteen labels crowd a phone); over a short span every 1..9 step.
    if len(steps_125) > _MAX_LOG_TICKS:
        # The powers of ten between the 1-2-5 ends (no decade of empty axis beyond the data),
        # and an end only where it is not crowded against its neighbour (200 ms under 100 ms).
        low_end, high_end = steps_125[0], steps_125[-1]
        inner = [tick for tick in powers if low_end < tick < high_end]
        return (
            ([low_end] if inner and inner[0] / low_end >= _SPARSE else [])
            + inner
            + ([high_end] if inner and high_end / inner[-1] >= _SPARSE else [])
        )
    return steps_125 if len(steps_125) >= 3 else steps_19


def _log_ends(values: Iterable[float | None]) -> tuple[float, float] | None:
    """Where a logarithmic axis ends: the 1-2-5 steps beyond the smallest and the largest value
    (by _LOG_PAD), whether or not they carry a label."""
    present = [value for value in values if value is not None and value > 0]
    if not present:
        return None
    ends = _ladder(present, (1, 2, 5))
    return ends[0], ends[-1]


def _spaced_log_labels(values: Sequence[int], label: Callable[[int], str]) -> list[float]:
    """The values of a logarithmic x axis whose labels fit side by side: 512k and 1M lie a
    factor of two apart and would read "512k1M"; the later one of such a pair is left out,
    except the last (the axis's end), which then replaces the one before it."""
    if len(values) < 3:
        return [float(value) for value in values]
    width = SIZE[0] - 2 * 12 - 36 - 90  # less the margins and the y labels' column
    low, high = math.log10(values[0]), math.log10(values[-1])

    def span(value: int) -> tuple[float, float]:
        middle = (math.log10(value) - low) / ((high - low) or 1) * width
        half = len(label(value)) * CHAR_EM * style(()).label_font_size / 2
        return middle - half, middle + half

    kept = [values[0]]
    for value in values[1:]:
        if span(value)[0] >= span(kept[-1])[1] + _LABEL_GAP:
            kept.append(value)
        elif value == values[-1]:
            kept[-1] = value if len(kept) > 1 else kept[-1]
            if len(kept) == 1:
                kept.append(value)
    return [float(value) for value in kept]


def _log_axis(chart: Any) -> None:
    """A logarithmic y axis around every value of the chart's series (a line's values, an XY
    chart's points)."""
    ys = (p[1] if isinstance(p, tuple) else p for values, _ in chart.raw_series for p in values)
    present = [value for value in ys if value is not None and value > 0]
    ticks = _log_ticks(present)
    ends = _log_ends(present)
    if ticks and ends:
        chart.config.y_labels = ticks
        # Ends from the steps beyond the data, the outer ticks included however rounded:
        # pygal leaves out a tick that rounding puts a hair outside its range.
        low, high = min(ends[0], ticks[0]), max(ends[1], ticks[-1])
        chart.config.range = (low / 1.001, high * 1.001)


def _top(values: Iterable[float | None]) -> float:
    """An upper bound for a bar chart's axis with room for the printed values above bars."""
    present = [value for value in values if value is not None]
    peak = max(present, default=1.0)
    return peak * 1.12 if peak > 0 else 1.0


def _mb_s(value: float) -> str:
    """A chart value already in MB/s, printed as everywhere else (units.format_rate)."""
    return format_rate(value * 1e6)


def _number(value: float) -> str:
    """Three significant digits, no unit (the chart's title names it): 90.2, 1500, 5.03."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _iops(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 100 or value == 0 or math.isclose(value, round(value)):
        return f"{value:.0f}"
    return f"{value:.1f}"


def _latency(ns: float) -> str:
    """An axis label: '500 µs', '2 ms', '1.5 s' (format_latency_ns keeps three digits)."""
    for unit, factor in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= factor:
            return f"{ns / factor:.3g} {unit}"
    return f"{ns:.3g} ns"


def _seconds(value: float) -> str:
    return f"{value:g} s"


# Sequential read and write MB/s (1 MiB blocks, depth 1); 4K random read and write IOPS at
# queue depth 1 and 32.
HEADLINES = (
    Headline(
        HEADLINE_BANDWIDTH,
        "Sequential MB/s, 1 MiB blocks (MB = 10^6 B)",
        _number,
        "seq-read and seq-write: 1 MiB blocks at queue depth 1; seq-write is the sustained write "
        "the speed classes grade.",
    ),
    Headline(
        HEADLINE_IOPS,
        "4K random IOPS, queue depth 1 and 32",
        _iops,
        "4K random at queue depth 1 (what A1 grades) and 32 (what A2 grades).",
    ),
)
