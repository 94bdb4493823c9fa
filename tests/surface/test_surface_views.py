"""A saved surface scan in every view: history, show (terminal, md, csv, json, html), export,
report, and import of its --json document. No root: the scan runs on the virtual-clock engine."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flashmark.cli import main
from flashmark.history.store import History
from flashmark.kinds.registry import entry_for
from flashmark.surface.result import SurfaceSettings, SurfaceTarget, to_document
from flashmark.surface.scan import SurfaceScan
from tests.emulation.flash.model import Backing, BadRange, FlashModel
from tests.report.html.page import Page
from tests.surface.engine_medium import EngineMedium

MiB = 1 << 20
MB = 10**6


@pytest.fixture
def saved_scan(private_history: Path) -> int:
    model = FlashModel(
        claimed_bytes=16 * MiB,
        real_bytes=4 * MiB,
        read_bps=80 * MB,
        write_bps=20 * MB,
        cache_bytes=2 * MiB,
        cache_write_bps=40 * MB,
        bad_ranges=(BadRange(10 * MiB, 1024),),
        backing=Backing.MEMORY,
    )
    medium = EngineMedium(model)
    target = SurfaceTarget(
        "/dev/loop9",
        "/dev/loop9",
        "device",
        medium.size_bytes,
        512,
        device="mmcblk9 (sd): Example EX16G, 16 MiB",
        identity="035344534331364780ffffffff0140e1",
    )
    settings = SurfaceSettings(block_bytes=128 * 1024, slices=256, write=True, verify=True)
    scan = SurfaceScan(medium, target, settings, nonce=7, clock=medium.clock)
    scan.run()
    document = to_document(scan.snapshot())
    entry = entry_for(document)
    assert (entry.kind, entry.target, entry.label) == ("surface", "/dev/loop9", "write+verify")
    return History.locate(private_history).save(
        kind=entry.kind, target=entry.target, label=entry.label, document=document
    )


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_history_lists_it_and_show_draws_it(saved_scan):
    listed = json.loads(invoke("history", "--json"))
    assert listed[0]["kind"] == "surface" and listed[0]["schema"] == "flashmark.surface/1"
    shown = invoke("show", str(saved_scan))
    assert "write MB/s" in shown and "read MB/s" in shown
    assert "^ cache full" in shown
    assert "aliased: holds the data written at 12 MiB" in shown
    assert "unreadable: I/O error down to the block" in shown
    assert "cache    2 MiB at 40.0 MB/s, then 20.0 MB/s sustained" in shown


def test_markdown_and_csv(saved_scan):
    markdown = invoke("show", str(saved_scan), "--format", "md")
    assert "| from | size | write MB/s | read MB/s | mismatched | unreadable |" in markdown
    rows = list(csv.DictReader(io.StringIO(invoke("show", str(saved_scan), "--format", "csv"))))
    assert len(rows) == 256
    # the pass's first request (128 KiB: two slices) is its ramp, not timed
    assert rows[0]["write_bw_bytes"] == rows[1]["write_bw_bytes"] == ""
    assert float(rows[2]["write_bw_bytes"]) == pytest.approx(40e6)
    assert float(rows[-1]["write_bw_bytes"]) == pytest.approx(20e6)
    assert sum(int(r["unreadable_bytes"]) for r in rows) == 1024


def test_html_page_has_the_chart_with_the_cliff(saved_scan, tmp_path):
    page = invoke("show", str(saved_scan), "--format", "html")
    csp = [e for e in Page(page).all("meta") if e.attributes.get("http-equiv")]
    assert "default-src 'none'" in csp[0].attributes["content"]
    (chart,) = [chart for chart in Page(page).charts if "surface-chart" in chart.classes]
    # a line per pass, the cache cliff, and the ranges not read back as written, in that order
    cliff = "cache full (2 MiB)"
    assert chart.legend == ["write pass", "read pass", cliff, "not read back as written"]
    marks = page.split('<g class="series serie-3 color-3">', 1)[1].split("</g>", 1)[0]
    ranges = json.loads(invoke("show", str(saved_scan), "--json"))["integrity"]["ranges"]
    assert len(ranges) > 1 and marks.count("<path") == len(ranges)  # a block under each
    out = tmp_path / "scan.html"
    CliRunner().invoke(main, ["report", str(saved_scan), "-o", str(out)], catch_exceptions=False)
    assert out.read_text() == page
    exported = tmp_path / "scan.csv"
    invoke("export", str(saved_scan), "-o", str(exported))
    assert exported.read_text().startswith("id,target,slice,")


def test_its_json_imports_once(saved_scan, tmp_path):
    document = json.loads(invoke("show", str(saved_scan), "--json"))
    path = tmp_path / "scan.json"
    path.write_text(json.dumps(document))
    output = invoke("import", str(path))
    assert "already" in output


def test_the_scan_says_which_device_it_was(saved_scan):
    # The device's line and identity are in the document, and `show` prints the line.
    document = json.loads(invoke("show", str(saved_scan), "--json"))
    assert document["target"]["device"] == "mmcblk9 (sd): Example EX16G, 16 MiB"
    assert document["target"]["identity"] == "035344534331364780ffffffff0140e1"
    assert "device   mmcblk9 (sd): Example EX16G, 16 MiB" in invoke("show", str(saved_scan))


@pytest.mark.browser
@pytest.mark.parametrize(("width", "mobile"), [(390, True), (1280, False)])
def test_html_page_fits_a_phone_and_a_laptop(saved_scan, tmp_path, width, mobile):
    """In Chromium at a phone's and a laptop's width: the page is as wide as the screen, no
    text leaves its box, and no chart label is cut off at the drawing's edge ("16 MiB" was)."""
    from tests.report.html.devtools import Browser, find_chromium

    page = tmp_path / "scan.html"
    page.write_text(invoke("show", str(saved_scan), "--format", "html"), encoding="utf-8")
    with Browser(find_chromium()) as browser:
        browser.open(page.as_uri(), width, mobile=mobile)
        layout = browser.layout()
        assert (layout.viewport, layout.document_width) == (width, width)
        assert layout.outside == [] and layout.spilling == []
        assert layout.cut == []
        assert browser.console == []
