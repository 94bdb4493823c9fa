"""The report of three replayed runs and two references, as `flashmark report` writes it: which
sections and charts it holds, what they say, and that it is one file that fetches nothing."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from markupsafe import escape

from flashmark.bench.model import Grade
from flashmark.bench.render import cells, charts
from flashmark.probe.summary import device_summary
from flashmark.references.loader import PUBLISHED_LABEL
from flashmark.report.html import render_html_report
from flashmark.units import format_iops, format_rate
from tests.report.html.page import Page

# Attributes through which a page makes the browser fetch something.
FETCHING_ATTRIBUTES = ("src", "href", "xlink:href", "srcset", "action", "poster", "data")


@pytest.fixture(scope="module")
def text(report_path: Path) -> str:
    return report_path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(text: str) -> Page:
    return Page(text)


def expected_titles(runs) -> set[str]:
    """One headline pair, then a latency chart for every test of the runs and a per-second
    bandwidth chart for every test with two or more seconds of fio samples (the recorded
    sustained-write ends after about a second); replayed runs recorded no device activity and
    none is a full profile, so no sweep and no per-test activity charts. The standard run's
    workloads are real: their device activity is charted when the device was sampled twice or
    more (one sample a second), which depends on how fast this host ran them."""
    titles = {
        "Sequential MB/s, 1 MiB blocks (MB = 10^6 B)",
        "4K random IOPS, queue depth 1 and 32",
    }
    for test in charts.tests_in(runs):
        titles.add(f"{test}: latency percentiles")
        if any(
            direction is not None
            and direction.bw_per_second is not None
            and len(direction.bw_per_second.samples_bps) >= 2
            for run in runs
            for result in run.tests
            if result.spec.name == test
            for direction in (result.read, result.write)
        ):
            titles.add(f"{test}: MB/s each second")
    for workload in charts.workloads_in(runs):
        monitors = charts.monitors_during_workload(runs, workload)
        if any(_drawable(monitor) for _, _, monitor in monitors):
            titles.add(f"workload {workload}: device I/O")
    return titles


def _drawable(monitor) -> bool:
    """What charts.monitor_chart draws: two samples or more, with I/O or a busy share."""
    samples = monitor.samples
    return len(samples) >= 2 and any(
        s.read_iops or s.write_iops or s.util_pct is not None for s in samples
    )


def test_every_expected_chart_is_an_inline_svg(page, saved_runs):
    titles = [chart.title for chart in page.charts]
    assert len(titles) == len(set(titles))
    assert set(titles) == expected_titles(saved_runs.runs)
    body = page.all("body")[0]
    assert body.attributes["data-charts"] == str(len(page.charts))


def test_each_chart_has_a_series_per_run_that_ran_the_test(page, saved_runs):
    runs = saved_runs.runs
    by_title = {chart.title: chart for chart in page.charts}
    for test in charts.tests_in(runs):
        holding = [charts.run_label(run, index) for index, run in enumerate(runs) if run.test(test)]
        legend = by_title[f"{test}: latency percentiles"].legend
        mixed = next(run.test(test) for run in runs if run.test(test)).spec.rwmix_read_pct
        if mixed is None:
            assert legend == holding
        else:  # a mix reads and writes: a series per direction
            assert legend == [f"{label} {d}" for label in holding for d in ("read", "write")]


def test_published_figures_are_labelled_as_such(page, text, references):
    assert PUBLISHED_LABEL in text
    headline = next(chart for chart in page.charts if "random IOPS" in chart.title)
    for reference in references:
        assert f"published: {reference.name}" in headline.legend
        assert reference.slug in text  # the References section names the record
    assert page.all("section")[-1].attributes["id"] == "references"


def _shown(grade: Grade) -> str:
    """The badge a grade gets: its verdict, or "n/a" when it was not graded."""
    return "n/a" if grade.verdict is None else grade.verdict.value


def test_verdict_cards_show_each_grade_as_the_run_graded_it(page, saved_runs):
    cards = [e for e in page.elements if e.tag == "article" and "card" in e.attributes["class"]]
    assert len(cards) == len(saved_runs.runs)
    badges = [e.text.strip() for e in page.elements if "badge" in e.attributes.get("class", "")]
    for run in saved_runs.runs:
        for grade in run.grades:
            assert f"{grade.name} {_shown(grade)}" in badges


def test_the_cards_claims_stand_next_to_the_verdicts(page, text, saved_runs):
    probed = saved_runs.runs[0]  # run under the recorded Raspberry Pi 5 with an A2 card
    assert probed.probe and probed.probe.device and probed.probe.device.card
    claims = probed.probe.device.card.claimed.names()
    assert claims and probed.findings
    grades = {grade.name: grade for grade in probed.grades}
    card = text.split('id="run-1"')[1].split("</article>")[0]
    for claim in claims:
        verdict = _shown(grades[claim])
        assert re.search(rf"<th>{claim}</th><td[^>]*><span class=\"badge \w+\">{verdict}<", card)
    for finding in probed.findings:
        assert escape(f"finding: {finding}") in card


def test_headline_table_holds_the_measured_figures(text, saved_runs):
    for run in saved_runs.runs:
        seq_read = run.test("seq-read")
        rand_write = run.test("rand-write-4k")
        assert seq_read and seq_read.read and rand_write and rand_write.write
        assert f">{format_rate(seq_read.read.bw_bytes).removesuffix(' MB/s')}<" in text
        assert f">{format_iops(rand_write.write.iops)}<" in text


def test_each_tests_disturbance_stands_on_its_row_of_all_results(page, text, saved_runs):
    assert "disturbance" in {th.text.strip() for th in page.all("th")}
    for run in saved_runs.runs:
        for result in run.tests:
            assert (
                f'<td data-label="disturbance">{escape(cells.disturbance_text(result))}</td></tr>'
                in text
            )


def test_device_and_environment_come_from_the_runs(text, saved_runs):
    for run in saved_runs.runs:
        assert run.host.kernel in text and run.fio.version in text
        assert run.probe is not None and run.probe.device is not None
        assert escape(device_summary(run.probe.device)) in text
        environment = run.probe.environment
        for value in (environment.board, environment.distribution, environment.cpu_model):
            if value:
                assert escape(value) in text
    assert "Raspberry Pi 5" in text  # the recorded board of the probed run


def test_the_page_is_one_file_that_fetches_nothing(report_path, text, page):
    assert [p.name for p in report_path.parent.iterdir()] == ["report.html"]
    for element in page.elements:
        for name in FETCHING_ATTRIBUTES:
            value = element.attributes.get(name)
            if value is None:
                continue
            assert not re.match(r"\s*(https?|ftp|wss?):", value, re.IGNORECASE), (element, name)
            if name == "href":
                assert value.startswith("#"), element  # links within the page only
    assert not [e for e in page.all("script") if "src" in e.attributes]
    assert not page.all("link")  # no stylesheets, icons or preloads
    assert not [e for e in page.elements if e.tag in ("img", "iframe", "object", "embed")]
    assert "@import" not in text and "url(" not in text
    # Stronger than the above: no URL of any scheme anywhere, not even as text.
    assert not re.search(r"(https?|ftp|wss?)://", text, re.IGNORECASE)
    csp = [e for e in page.all("meta") if e.attributes.get("http-equiv")]
    assert "default-src 'none'" in csp[0].attributes["content"]
    scripts = page.all("script")
    assert len(scripts) == 1 and "data-charts-drawn" in scripts[0].text


def test_one_run_without_references(saved_runs):
    run = saved_runs.runs[0]
    page = render_html_report([run])
    parsed = Page(page)
    assert {chart.title for chart in parsed.charts} == expected_titles([run])
    assert PUBLISHED_LABEL not in page
    assert 'id="references"' not in page and 'id="workloads"' not in page
    # no sweep: no part and no link, a sentence instead
    assert 'id="sweep"' not in page and 'href="#sweep"' not in page
    assert "Block-size sweep: this run has none; the full profile measures it" in page


def test_the_standard_runs_workloads_get_a_table(text, saved_runs):
    standard = next(run for run in saved_runs.runs if run.workloads)
    assert 'id="workloads"' in text
    for workload in standard.workloads:
        assert f"<th>{workload.name}</th>" in text


def test_text_from_the_runs_is_escaped(saved_runs):
    import dataclasses

    run = saved_runs.runs[0]
    hostile = dataclasses.replace(
        run, target=dataclasses.replace(run.target, given="<script>alert(1)</script>")
    )
    page = render_html_report([hostile])
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_no_runs_is_a_programming_error():
    with pytest.raises(ValueError, match="at least one run"):
        render_html_report([])


def _terminal_header(run) -> dict[str, str]:
    """The terminal's header lines of a run as `flashmark show` prints them: label -> text."""
    from rich.console import Console

    from flashmark.bench.render.view import WRITERS

    console = Console(width=1000, record=True, color_system=None)
    console.print(WRITERS.terminal(run))
    header = {}
    for line in console.export_text().splitlines()[1:]:  # under "flashmark run #N  DATE"
        found = re.fullmatch(r"([a-z]+) +(\S.*)", line)  # "profile  quick: area ..."
        if found is None:
            break  # the results table's title
        header[found.group(1)] = found.group(2).rstrip()
    return header


def test_the_method_rows_are_the_terminals_header_word_for_word(text, saved_runs):
    runs = saved_runs.runs
    for label in ("profile", "engine"):
        row = re.search(rf"<tr><th>{label}</th>(.*?)</tr>", text)
        assert row is not None, label
        cells = [html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
        assert cells == [_terminal_header(run)[label] for run in runs], label
    # and each verdict card says how its run measured in the same words
    for run in runs:
        card = text.split(f'id="run-{run.id}"')[1].split("</article>")[0]
        assert str(escape(f"profile {_terminal_header(run)['profile']}")) in card
