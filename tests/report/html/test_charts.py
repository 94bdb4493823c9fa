"""Each chart function on real runs (fio outputs replayed through `flashmark run`)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from flashmark.bench.model import Pattern
from flashmark.bench.render import charts
from flashmark.units import block_size_label
from flashmark.views.model import Figure as Drawn
from tests.report.html.page import Chart, Page


def only_chart(made: Drawn | None) -> Chart:
    """The chart as the page reads it: the SVG's title and the legend drawn under it."""
    assert made is not None
    parsed = Page(f"<figure>{made.svg}</figure>")
    assert len(parsed.charts) == 1
    chart = parsed.charts[0]
    chart.legend = [key.label for key in made.legend]
    return chart


@pytest.fixture(scope="module")
def runs(saved_runs):
    return saved_runs.runs


def every_chart(runs, references):
    for headline in charts.HEADLINES:
        yield charts.headline_chart(runs, headline, references)
    for test in charts.tests_in(runs):
        yield charts.latency_chart(runs, test)
        yield charts.bandwidth_chart(runs, test)


def test_charts_are_bare_svg_without_scripts_comments_or_urls(runs, references):
    made = [chart.svg for chart in every_chart(runs, references) if chart is not None]
    assert made
    for svg in made:
        assert svg.startswith("<svg ") and svg.endswith("</svg>")
        assert "<script" not in svg and "<!--" not in svg and "<?xml" not in svg
        assert not re.search(r"https?://", svg)
        # sized by its viewBox only, so CSS makes it as wide as its column
        assert "viewBox=" in svg and not re.match(r"<svg[^>]* width=", svg)


def test_headline_bars_hold_runs_then_published_references(runs, references):
    chart = only_chart(charts.headline_chart(runs, charts.HEADLINES[1], references))
    assert chart.legend == [
        *(charts.run_label(run, index) for index, run in enumerate(runs)),
        *(f"published: {reference.name}" for reference in references),
    ]


def test_headline_without_any_figure_is_not_drawn(runs):
    empty = dataclasses.replace(runs[0], tests=())
    assert charts.headline_chart([empty], charts.HEADLINES[0]) is None


def test_reference_values_are_the_published_ones(references):
    sandisk = references[0]
    for figure in charts.HEADLINE_IOPS:
        found = sandisk.value_for(figure.test, figure.metric)
        value = charts.reference_value(sandisk, figure)
        assert value == (found.value if found else None)
    read = charts.HEADLINE_BANDWIDTH[0]
    found = sandisk.value_for(read.test, read.metric)
    assert found is not None
    assert charts.reference_value(sandisk, read) == pytest.approx(found.value / 1e6)


def test_latency_curves_follow_the_runs_colours(runs):
    # A run's colour is its place in the report, the same in every chart and card: here the
    # second of two runs is drawn in the second colour, and no third colour appears.
    chart = charts.latency_chart([runs[0], runs[2]], "rand-write-4k-q32")
    assert chart is not None
    assert charts.run_colour(1) in chart.svg and charts.run_colour(2) not in chart.svg
    assert [key.colour for key in chart.legend] == [charts.run_colour(0), charts.run_colour(1)]


def test_a_test_no_run_has_draws_nothing(runs):
    assert charts.latency_chart(runs, "rand-read-16M") is None
    assert charts.bandwidth_chart(runs, "rand-read-16M") is None


def test_bandwidth_series_has_a_point_per_second(runs):
    run = runs[0]
    result = run.test("seq-read")
    assert result is not None and result.read is not None and result.read.bw_per_second
    samples = result.read.bw_per_second.samples_bps
    chart = charts.bandwidth_chart([run], "seq-read")
    assert chart is not None
    assert chart.svg.count('class="dot reactive tooltip-trigger"') == len(samples)


def test_no_sweep_without_the_full_profile(runs, references):
    for run in runs:
        assert len(charts.sweep_points(run, Pattern.RAND_READ)) < charts.SWEEP_MIN_POINTS
    assert charts.sweep_chart(runs, "read", references) is None
    assert charts.sweep_chart(runs, "write", references) is None


def test_replayed_runs_have_no_device_activity_to_draw(runs):
    # fio was replayed: the device was watched for no time, so no interval was sampled
    for test in charts.tests_in(runs):
        monitors = charts.monitors_during_test(runs, test)
        assert all(len(monitor.samples) < 2 for _, _, monitor in monitors)
        assert charts.monitor_chart(monitors, test) is None


def test_an_unsaved_run_is_named_by_its_position(runs):
    unsaved = dataclasses.replace(runs[1], id=None)
    assert charts.run_label(unsaved, 1).startswith("run 2 ")
    chart = only_chart(charts.latency_chart([runs[0], unsaved], "seq-read"))
    assert chart.legend == [charts.run_label(runs[0], 0), charts.run_label(unsaved, 1)]


@pytest.mark.parametrize(
    ("rough", "step"), [(0.0, 1.0), (0.3, 0.5), (1.0, 1.0), (1.2, 2.0), (2.2, 2.5), (7.0, 10.0)]
)
def test_axis_steps_are_round(rough, step):
    assert charts._nice_step(rough) == pytest.approx(step)


def test_log_ticks_step_1_2_5_around_the_values():
    # from the step below the smallest value to the one above the largest: the axis holds them
    assert charts._log_ticks([7_000, 120_000]) == pytest.approx(
        [5_000, 10_000, 20_000, 50_000, 100_000, 200_000]
    )
    assert charts._log_ticks([30, 70]) == pytest.approx([20, 50, 100])
    assert charts._log_ticks([110, 170]) == pytest.approx([50, 100, 200, 500])
    # a value just under a tick takes the next one: its dot would sit on the plot's edge
    assert charts._log_ticks([10, 90]) == pytest.approx([5, 10, 20, 50, 100, 200])
    assert charts._log_ticks([None, 0]) == []


def test_log_ticks_over_many_decades_are_powers_of_ten_between_1_2_5_ends():
    # a sweep from 1.5 to 9000 MB/s: thirteen 1-2-5 labels would crowd a phone
    assert charts._log_ticks([1.5, 9000]) == pytest.approx([1, 10, 100, 1000, 10_000])


def test_block_size_labels_that_would_touch_are_thinned():
    sizes = [1024, 2048, 4096, 16384, 131072, 524288, 1 << 20, 16 << 20]
    kept = charts._spaced_log_labels(sizes, block_size_label)
    assert kept[0] == 1024 and kept[-1] == 16 << 20
    assert not {524288.0, float(1 << 20)} <= set(kept)  # "512k1M"


def test_a_long_series_is_drawn_from_the_extremes_of_each_span():
    points = [(float(t), 100.0) for t in range(100_000)]
    points[31_337] = (31_337.0, 0.0)  # a stall
    points[77_000] = (77_000.0, 900.0)  # a burst
    drawn = charts.at_most(points, 800)
    assert len(drawn) <= 800
    assert (31_337.0, 0.0) in drawn and (77_000.0, 900.0) in drawn
    assert [t for t, _ in drawn] == sorted(t for t, _ in drawn)
    assert charts.at_most(points[:500], 800) == points[:500]


def test_an_hour_of_seconds_draws_a_bounded_chart(runs):
    run = runs[0]
    test = run.tests[0]
    direction = test.read or test.write
    assert direction is not None and direction.bw_per_second is not None
    series = dataclasses.replace(
        direction.bw_per_second, samples_bps=tuple(1e7 + i % 7 for i in range(3600))
    )
    side = "read" if test.read else "write"
    longer = dataclasses.replace(
        test, **{side: dataclasses.replace(direction, bw_per_second=series)}
    )
    chart = charts.bandwidth_chart([dataclasses.replace(run, tests=(longer,))], test.spec.name)
    assert chart is not None
    dots = chart.svg.count('class="dot reactive tooltip-trigger"')
    assert charts.MAX_LINE_POINTS // 2 <= dots <= charts.MAX_LINE_POINTS
