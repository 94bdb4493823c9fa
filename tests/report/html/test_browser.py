"""The report in a real browser: headless Chromium (Debian's `chromium`) opens the file offline,
draws every chart, logs nothing to its console, and requests nothing from the network; at a
phone's, a tablet's and a laptop's width the page is as wide as the screen (wide tables scroll
inside their own box), and no chart cuts off its own text.

Artifacts for a person to look at are kept in test-artifacts/ at the repository root
(gitignored): whole-page screenshots report-phone.png (390 px), report-tablet.png (768 px) and
report.png (1280 px), the same of the full-profile page (report-full-*.png), and report.pdf
(print CSS).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flashmark.report.html import render_html_report
from tests.report.html.devtools import QUIET_FLAGS, Browser, find_chromium
from tests.report.html.page import Page
from tests.report.html.test_publishable import publishable_runs

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
TIMEOUT_S = 120
# Chromium quietened (tests/report/html/devtools.QUIET_FLAGS: whatever background traffic
# remains is told apart from the page's requests below, and stays on this machine), with the
# command-line run's own time limits.
BROWSER_FLAGS = (*QUIET_FLAGS, "--timeout=10000", "--virtual-time-budget=5000")


# The column headers of every table that scrolls sideways in its box.
SCROLLING_TABLE_HEADERS = """[...document.querySelectorAll("table")]
  .filter((table) => table.parentElement.scrollWidth > table.parentElement.clientWidth + 1)
  .map((table) => [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim()))"""
# Columns of sentences: verdict checks, the card passport's points, workloads, references.
SENTENCE_COLUMNS = ("measured (required, margin)", "point, evidence and source", "device saw",
                    "notes")  # fmt: skip
# (name, CSS px, a phone: its viewport meta honoured as a phone does)
WIDTHS = (("phone", 390, True), ("tablet", 768, False), ("laptop", 1280, False))


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_chromium()


def browse(
    chromium: str, tmp_path: Path, url: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"  # a fresh user data dir for each run
    shutil.rmtree(profile, ignore_errors=True)
    return subprocess.run(
        [chromium, *BROWSER_FLAGS, f"--user-data-dir={profile}", *flags, url],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )


def console_lines(stderr: str) -> list[str]:
    """Chromium logs what a page writes to its console (errors, CSP refusals) as CONSOLE."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


def page_requests(net_log: Path) -> list[str]:
    """URLs the page asked for, from a --log-net-log file.

    Every request Chromium starts is logged with its initiator: the page's (opaque for a
    file:// page, "null") or "not an origin" for the browser's own background requests, which
    are left out here.
    """
    log = json.loads(net_log.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    return [
        params["url"]
        for event in log["events"]
        if event["type"] == start_job
        and "url" in (params := event.get("params", {}))
        and params.get("initiator") != "not an origin"
    ]


def dumped(chromium: str, tmp_path: Path, page: Path) -> tuple[str, str, list[str]]:
    """`page` loaded with its DOM dumped: the DOM, what the browser logged, the page's
    requests."""
    net_log = tmp_path / "net-log.json"
    logging = ("--dump-dom", f"--log-net-log={net_log}", "--enable-logging=stderr", "--v=0")
    done = browse(chromium, tmp_path, page.as_uri(), *logging)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr, page_requests(net_log)


def test_chromium_draws_every_chart_quietly_and_offline(chromium, report_path, tmp_path):
    dom, logged, requests = dumped(chromium, tmp_path, report_path)
    body = Page(dom).all("body")[0].attributes
    expected = len(Page(report_path.read_text(encoding="utf-8")).charts)
    assert expected > 0 and body["data-charts"] == str(expected)
    # the page's script counted the charts the browser laid out and drew
    assert body.get("data-charts-drawn") == str(expected)
    assert console_lines(logged) == []
    assert not [url for url in requests if re.match(r"(https?|wss?|ftp):", url)], requests


def test_the_checks_see_a_page_that_does_fetch_and_fail(chromium, tmp_path):
    """The same checks on a page with an external image and a script error: they fail, so
    they would have caught a report that did either."""
    page = tmp_path / "control.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>control</title></head><body>'
        '<img src="https://example.invalid/chart.png" alt="">'
        "<script>notDefined();</script></body></html>"
    )
    _, logged, requests = dumped(chromium, tmp_path, page)
    assert "https://example.invalid/chart.png" in requests
    assert any("notDefined" in line for line in console_lines(logged))


@pytest.fixture(scope="module")
def full_report_path(references, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page of test_publishable: two recorded runs and a full-profile run twice (a sweep
    and device activity), with the references."""
    path = tmp_path_factory.mktemp("full-report") / "report.html"
    path.write_text(render_html_report(publishable_runs(), references), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(chromium):
    with Browser(chromium) as opened:
        yield opened


@pytest.mark.parametrize("which", ["report_path", "full_report_path", "wear_report"])
@pytest.mark.parametrize(("device", "width", "mobile"), WIDTHS)
def test_the_page_fits_the_screen_at_every_width(browser, request, which, device, width, mobile):
    """Nothing widens the page past the screen (a phone would scroll it sideways or zoom
    out): wide tables scroll in their box, long names and paths wrap; no chart label is cut
    off at its drawing's edge. The whole page is kept as a screenshot to look at."""
    page = request.getfixturevalue(which)
    browser.console.clear()
    browser.open(page.as_uri(), width, mobile=mobile)
    layout = browser.layout()
    assert layout.viewport == width  # laid out at this width, not headless Chromium's 500 px
    assert layout.document_width == width, layout.outside
    assert layout.outside == []
    assert layout.spilling == []  # no text crosses a card's or a cell's border
    assert layout.cut == []
    assert browser.console == []
    # Tables of sentences read without sideways scrolling, on a phone and in a narrow verdict
    # card alike (only tables of figures, a column per run or metric, scroll in their box).
    scrolling = browser.evaluate(SCROLLING_TABLE_HEADERS)
    assert not [head for head in scrolling if set(head) & set(SENTENCE_COLUMNS)], scrolling
    ARTIFACTS.mkdir(exist_ok=True)
    name = {"report_path": "report", "full_report_path": "report-full"}.get(which, "report-wear")
    target = ARTIFACTS / (f"{name}.png" if device == "laptop" else f"{name}-{device}.png")
    browser.screenshot(target)
    content = target.read_bytes()
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    # the whole page: the PNG's IHDR holds its width and height
    assert int.from_bytes(content[16:20], "big") == width
    assert int.from_bytes(content[20:24], "big") >= layout.height


# Number cells whose text takes a second line: a box of its text starts below the first
# line's bottom (a raised footnote mark does not).
FIGURES_ON_TWO_LINES = """[...document.querySelectorAll("td.num")].filter((cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const boxes = [...range.getClientRects()];
  return boxes.some((box) => box.top >= boxes[0].bottom - 1);
}).map((cell) => cell.textContent)"""
# An A4 page less the print CSS's 12 mm margins, in CSS px (96 to the inch): 186 mm.
A4_PRINTED_WIDTH_PX = round((210 - 2 * 12) / 25.4 * 96)


@pytest.mark.parametrize("which", ["report_path", "full_report_path"])
def test_the_printed_page_fits_the_paper(browser, request, which):
    """With the print CSS at an A4 page's printable width, no table runs past the paper's
    edge (paper does not scroll: a table the screen scrolls must fit, figures unbroken)."""
    page = request.getfixturevalue(which)
    browser.open(page.as_uri(), A4_PRINTED_WIDTH_PX, media="print")
    layout = browser.layout()
    assert layout.document_width == A4_PRINTED_WIDTH_PX, layout.outside
    assert layout.outside == [] and layout.spilling == []
    # a figure is never broken across lines ("150" over "0")
    broken = browser.evaluate(FIGURES_ON_TWO_LINES)
    assert broken == []


def test_the_layout_checks_see_a_page_wider_than_the_screen(browser, tmp_path):
    """The same checks on a page with a table of unbreakable cells outside any scroll box, a
    heading too narrow for its word and a label past its chart's edge: they fail, so they would
    have caught a report with any of them."""
    page = tmp_path / "wide.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>wide</title>'
        "</head><body><table><tr><th>mount options</th>"
        + 2
        * "<td>rw,relatime,discard,resv_strict,resuid=65534,resgid=65534</td>"
        + "</tr></table>"
        '<h4 style="width: 10rem">CID 9f544953443634476136980065013b00</h4>'
        '<svg viewBox="0 0 100 40" width="100" height="40"><text x="90" y="20">16 MiB</text>'
        "</svg></body></html>"
    )
    browser.open(page.as_uri(), 390, mobile=True)
    layout = browser.layout()
    # a phone widens its layout viewport to the widest line and zooms the page out
    assert layout.viewport > 390 and layout.document_width > 390
    assert any("9f5449" in element for element in layout.spilling)
    assert layout.cut == ["16 MiB"]
    browser.open(page.as_uri(), 600)  # a desktop window does not widen: the line sticks out
    layout = browser.layout()
    assert layout.viewport == 600 and layout.document_width > 600
    assert any(element.startswith("table: ") for element in layout.outside)


def test_print_is_kept_as_an_artifact(chromium, report_path, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    pdf = ARTIFACTS / "report.pdf"
    pdf.unlink(missing_ok=True)
    done = browse(
        chromium, tmp_path, report_path.as_uri(), f"--print-to-pdf={pdf}", "--no-pdf-header-footer"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    content = pdf.read_bytes()
    assert content.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page\b", content)) > 1  # several printed pages


# -- as a reader sees it: whole legends, no empty part, at a phone's and a laptop's width -----

# Every legend entry of every chart as drawn: the boxes of its text (a Range over the entry)
# against the entry's own box, its figure's and the screen's, its font size, and the boxes of
# the entries before it (two entries drawn over each other).
LEGEND_FACTS = r"""(() => {
  const inside = (box, outer) => box.left >= outer.left - 0.5 && box.right <= outer.right + 0.5
    && box.top >= outer.top - 0.5 && box.bottom <= outer.bottom + 0.5;
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const entries = [];
  for (const legend of document.querySelectorAll("figure > ul.legend")) {
    const figure = legend.parentElement.getBoundingClientRect();
    const drawn = [];
    for (const item of legend.children) {
      const range = document.createRange();
      range.selectNodeContents(item);
      const boxes = [...range.getClientRects()].filter((box) => box.width > 0);
      const own = item.getBoundingClientRect();
      entries.push({
        text: item.textContent,
        fontPx: parseFloat(getComputedStyle(item).fontSize),
        shown: boxes.length > 0 && getComputedStyle(item).visibility === "visible",
        inEntry: boxes.every((box) => inside(box, own)),
        inFigure: boxes.every((box) => inside(box, figure)),
        onScreen: boxes.every((box) => box.left >= -0.5 && box.right <= innerWidth + 0.5),
        overlaps: boxes.some((box) => drawn.some((other) => overlap(box, other))),
      });
      drawn.push(...boxes);
    }
  }
  return entries;
})()"""
# The parts of the page and its links: a part holds something to read or look at (a table, a
# chart, a card), every link of the page leads to something, no table or list is empty.
PART_FACTS = r"""(() => {
  const seen = (element) => { const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0; };
  const empty = [...document.querySelectorAll("main section")].filter((section) =>
    ![...section.querySelectorAll("table, figure, article")].some(seen)).map((s) => s.id);
  const dangling = [...document.querySelectorAll('a[href^="#"]')].map((a) =>
    a.getAttribute("href")).filter((href) => { const target = document.getElementById(
      href.slice(1)); return !target || !seen(target); });
  const emptyTables = [...document.querySelectorAll("table")].filter((table) =>
    !table.querySelector("tbody tr")).length;
  const emptyLists = [...document.querySelectorAll("ul, ol")].filter((list) =>
    !list.children.length).length;
  return {parts: document.querySelectorAll("main section").length, empty, dangling,
    emptyTables, emptyLists};
})()"""
# A legend at a phone's reading distance: no smaller than a phone's small print.
SMALLEST_LEGEND_PX = 12
READER_WIDTHS = (("phone", 360, True), ("laptop", 1280, False))


def legend_problems(entries: list[dict[str, object]]) -> list[str]:
    """Every legend entry a reader could not read whole, with why."""
    problems = []
    for entry in entries:
        why = [name for name in ("shown", "inEntry", "inFigure", "onScreen") if not entry[name]]
        if entry["overlaps"]:
            why.append("overlaps")
        if "\u2026" in str(entry["text"]):
            why.append("cut short")
        if float(str(entry["fontPx"])) < SMALLEST_LEGEND_PX:
            why.append(f"{entry['fontPx']} px")
        if why:
            problems.append(f"{entry['text']!r}: {', '.join(why)}")
    return problems


@pytest.mark.parametrize(
    "which", ["report_path", "full_report_path", "mixed_report", "wear_report"]
)
@pytest.mark.parametrize(("device", "width", "mobile"), READER_WIDTHS)
def test_legends_are_whole_and_no_part_is_empty(browser, request, which, device, width, mobile):
    """At 360 px (a small phone) and at 1280 px: every legend entry is drawn whole, inside its
    chart's box and the screen, in type a phone shows, never shortened with an ellipsis; every
    part of the page has a table, a chart or a card in it, and every link leads to one. The
    whole page is kept as a screenshot (test-artifacts/readable-*.png)."""
    fixture = request.getfixturevalue(which)
    page = fixture if isinstance(fixture, Path) else fixture.path
    browser.console.clear()
    browser.open(page.as_uri(), width, mobile=mobile)
    layout = browser.layout()
    assert layout.viewport == width and layout.document_width == width, layout.outside
    assert layout.outside == [] and layout.spilling == [] and layout.cut == []
    entries = browser.evaluate(LEGEND_FACTS)
    expected = [entry for chart in Page(page.read_text(encoding="utf-8")).charts
                for entry in chart.legend]  # fmt: skip
    assert [entry["text"] for entry in entries] == expected and expected
    assert legend_problems(entries) == []
    parts = browser.evaluate(PART_FACTS)
    assert parts["parts"] > 0
    assert (parts["empty"], parts["dangling"]) == ([], [])
    assert (parts["emptyTables"], parts["emptyLists"]) == (0, 0)
    assert browser.console == []
    ARTIFACTS.mkdir(exist_ok=True)
    name = which.removesuffix("_path").removesuffix("_report")  # report, full, mixed, wear
    target = ARTIFACTS / f"readable-{name}-{width}.png"
    browser.screenshot(target)
    assert int.from_bytes(target.read_bytes()[16:20], "big") == width


def test_the_reader_checks_see_cut_legends_and_empty_parts(browser, tmp_path):
    """The same checks on a page with the defects they look for: a legend entry clipped by
    its box, one shortened with an ellipsis ("#3 /dev/loo…"), one in tiny type, a part with
    only a sentence in it, and a link to nothing. They fail, so they would have caught them."""
    page = tmp_path / "defects.html"
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" '
        'content="width=device-width, initial-scale=1"><title>defects</title></head><body>'
        '<nav><a href="#sweep">Block-size sweep</a> <a href="#nowhere">Nowhere</a></nav><main>'
        '<section id="chart"><figure><svg viewBox="0 0 10 10"><rect width="10" height="10"/>'
        '</svg><ul class="legend">'
        '<li style="display:block;width:4rem;overflow:hidden;white-space:nowrap">'
        "#1 /media/pi/CARD on mmcblk0p1 read</li>"
        "<li>#3 /dev/loo\u2026</li>"
        '<li style="font-size:8px">#4 /dev/sda</li></ul></figure></section>'
        '<section id="sweep"><h2>Block-size sweep</h2><p>None of these runs has one.</p>'
        "</section></main></body></html>",
        encoding="utf-8",
    )
    browser.open(page.as_uri(), 360, mobile=True)
    problems = legend_problems(browser.evaluate(LEGEND_FACTS))
    assert [problem.split("'")[1] for problem in problems] == [
        "#1 /media/pi/CARD on mmcblk0p1 read", "#3 /dev/loo\u2026", "#4 /dev/sda"
    ]
    assert "inEntry" in problems[0] and "cut short" in problems[1] and "8 px" in problems[2]
    parts = browser.evaluate(PART_FACTS)
    assert parts["empty"] == ["sweep"] and parts["dangling"] == ["#nowhere"]
