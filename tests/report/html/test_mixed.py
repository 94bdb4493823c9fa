"""A report of every kind (conftest's mixed_report): a run and a surface scan of the same card,
measured under the recorded Raspberry Pi 5 with its A2 card, and recorded results of the
other kinds. The page lists them by card, then shows each kind's section; nothing in it links
to nothing."""

from __future__ import annotations

import re

import pytest
from markupsafe import escape

from flashmark.bench.document import document_to_run
from flashmark.bench.kind import RUN
from flashmark.bench.render import charts
from flashmark.history.store import History
from flashmark.surface.kind import SURFACE
from flashmark.units import format_size
from tests.report.html.conftest import MixedReport
from tests.report.html.page import Page


@pytest.fixture(scope="module")
def text(mixed_report: MixedReport) -> str:
    return mixed_report.path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(text: str) -> Page:
    return Page(text)


def _group_of(text: str, anchor: str) -> str:
    """The card group (article of the Cards part) that links to `anchor`."""
    cards = text.split('<section id="cards">', 1)[1].split("</section>", 1)[0]
    (group,) = [g for g in cards.split("<article")[1:] if f'href="#{anchor}"' in g]
    return group


def test_the_run_and_the_scan_of_one_card_are_listed_together(mixed_report, text):
    scan = mixed_report.scan
    cid = scan["target"]["identity"]
    assert re.fullmatch(r"[0-9a-f]{32}", cid)  # the recorded card's CID, read by the scan
    group = _group_of(text, f"run-{mixed_report.run_id}")
    assert f'href="#surface-{mixed_report.scan_id}"' in group
    assert f"CID {cid}" in group
    # each with its answer, the line its command ended with: the run's grades, what the
    # scan read back
    answer = SURFACE.summary(SURFACE.from_document(scan))
    assert str(escape(answer)) in group
    run = RUN.from_document(mixed_report.run_document)
    assert str(escape(RUN.summary(run))) in group
    assert RUN.summary(run).startswith("A1 ")
    # a result of another device is not in the card's group
    assert f'href="#capacity-{mixed_report.other_ids["capacity"]}"' not in group


def test_results_of_no_known_card_are_listed_apart(mixed_report, text):
    group = _group_of(text, f"capacity-{mixed_report.other_ids['capacity']}")
    assert "No card identity recorded" in group
    # the power-cut test followed its emulated card by the loop device's backing file
    powercut = _group_of(text, f"powercut-{mixed_report.other_ids['powercut']}")
    assert "loop device, backed by" in powercut and powercut != group


def test_each_kind_has_its_section_and_every_link_a_target(mixed_report, page):
    sections = [e.attributes["id"] for e in page.all("section")]
    assert sections[0] == "cards"
    for part in ("verdicts", "headline", "surface", "capacity", "monitor", "workload-runs",
                 "powercut", "references"):  # fmt: skip
        assert part in sections
    anchors = {e.attributes["id"] for e in page.elements if "id" in e.attributes}
    links = [e.attributes["href"] for e in page.all("a")]
    assert links and all(link.startswith("#") and link[1:] in anchors for link in links)
    for result_id in (mixed_report.run_id, mixed_report.scan_id):
        assert any(link.endswith(f"-{result_id}") for link in links)


def test_the_page_counts_every_chart_the_scans_included(mixed_report, page):
    surface = [chart for chart in page.charts if "surface-chart" in chart.classes]
    assert len(surface) == 1
    # the cache cliff is named in the legend where the scan found one
    scan = History(mixed_report.path.parent / "history.sqlite3").get(mixed_report.scan_id)
    found = scan.document["cache"]
    cliff = [f"cache full ({format_size(found['bytes'])})"] if found["found"] else []
    assert surface[0].legend == ["write pass", "read pass", *cliff]
    assert page.all("body")[0].attributes["data-charts"] == str(len(page.charts))


def test_the_title_names_every_result(mixed_report, page):
    title = page.all("title")[0]  # the head's; the charts' titles follow
    saved = History(mixed_report.path.parent / "history.sqlite3").get(mixed_report.run_id)
    run = document_to_run(dict(saved.document))
    assert title.text.startswith(f"flashmark report: {charts.run_label(run, 0)}, ")
    # the scan by its folder's name, as a run's legend names it
    assert f"#{mixed_report.scan_id} card, " in title.text
