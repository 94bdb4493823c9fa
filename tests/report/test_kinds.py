"""Every kind of result as Markdown, CSV and an HTML section, from real results of each kind
(tests/data/report/kinds/, recorded by its record.py on emulated cards): the figures are the
stored ones, odd text cannot break a table, and the goldens (kind-*.md, kind-*.csv) hold the
rest. The benchmark run's own views are in test_golden.py and test_exporters.py."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from typing import Any

import pytest

from flashmark.kinds.registry import KINDS, kind_of
from flashmark.markdown import code
from flashmark.report.exporters import SavedResult, exporter
from flashmark.result_kind import ResultKind
from flashmark.units import format_rate
from tests.report.html.page import Page
from tests.report.recorded import REPORT_DATA
from tests.report.test_golden import check_golden

KIND_DATA = REPORT_DATA / "kinds"
NAMES = ("surface", "capacity", "monitor", "workload", "powercut", "health", "doctor")
# Where each kind's section sits in the page, and its results' cards.
ANCHORS = {**{name: name for name in NAMES}, "workload": "workload-runs"}
ODD = "a|b*c_d`e"


def document(name: str) -> dict[str, Any]:
    loaded = json.loads((KIND_DATA / f"{name}.json").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def decoded(name: str) -> tuple[ResultKind[Any], Any]:
    stored = document(name)
    kind = kind_of(stored)
    return kind, kind.from_document(stored)


def stored_and_markdown(name: str) -> tuple[dict[str, Any], str]:
    """The recorded result of kind `name`, and its Markdown."""
    kind, result = decoded(name)
    assert kind.markdown is not None
    return document(name), kind.markdown([result])


def table_rows(markdown: str) -> list[list[str]]:
    """The cells of every pipe-table line (an escaped pipe stays in its cell)."""
    return [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        for line in markdown.splitlines()
        if line.startswith("|")
    ]


def test_every_kind_writes_markdown_csv_and_html() -> None:
    for kind in KINDS:
        assert kind.formats() == ("json", "md", "csv", "html"), kind.name


@pytest.mark.parametrize("name", NAMES)
def test_markdown_of_each_kind(name: str) -> None:
    kind, result = decoded(name)
    assert kind.markdown is not None
    check_golden(f"kind-{name}.md", kind.markdown([result]))


@pytest.mark.parametrize("name", NAMES)
def test_csv_of_each_kind(name: str) -> None:
    kind, result = decoded(name)
    assert kind.csv is not None
    check_golden(f"kind-{name}.csv", kind.csv([result]))


def _csv_rows(name: str) -> list[dict[str, str]]:
    kind, result = decoded(name)
    assert kind.csv is not None
    return list(csv.DictReader(io.StringIO(kind.csv([result]), newline="")))


def test_a_surface_scan_in_markdown_and_csv_holds_the_measured_rates() -> None:
    stored, text = stored_and_markdown("surface")
    # the emulated card writes at 40 MB/s: the pass's average as the terminal shows it
    assert f"write    {format_rate(stored['write']['bw_bytes'])} average" in text
    rows = _csv_rows("surface")
    assert len(rows) == len(stored["slices"])
    assert (
        sum(int(row["mismatched_bytes"]) for row in rows)
        == (stored["integrity"]["mismatched_bytes"])
    )


def test_a_capacity_probe_in_markdown_and_csv_holds_its_verdict_and_sizes() -> None:
    stored, text = stored_and_markdown("capacity")
    assert text.startswith(f"### flashmark capacity #{stored['id']}: {stored['device']}, ")
    # the fake stores 64 MiB of the 256 MiB it claims
    assert "**fake: stores 0.07 GB of the 0.27 GB it claims (25.0%)" in text
    assert f"- real: {stored['real_bytes']:,} bytes" in text
    (row,) = _csv_rows("capacity")
    assert (row["verdict"], int(row["real_bytes"]), int(row["claimed_bytes"])) == (
        "fake",
        stored["real_bytes"],
        stored["claimed_bytes"],
    )


def test_a_monitor_recording_in_markdown_and_csv_holds_what_the_device_did() -> None:
    stored, text = stored_and_markdown("monitor")
    cells = {row[0]: row[1:] for row in table_rows(text)}
    summary = stored["summary"]
    assert cells["requests"] == [str(summary["read_ios"]), str(summary["write_ios"])]
    rows = _csv_rows("monitor")
    assert [int(row["write_bytes"]) for row in rows] == [
        sample["write_bytes"] for sample in stored["samples"]
    ]
    # dd wrote 16 MiB, and the device saw them
    assert sum(int(row["write_bytes"]) for row in rows) == 16 << 20


def test_a_workload_run_in_markdown_and_csv_holds_each_workloads_time() -> None:
    stored, text = stored_and_markdown("workload")
    for workload in stored["workloads"]:
        row = next(cells for cells in table_rows(text) if cells[0] == workload["name"])
        assert row[1] == f"{workload['seconds']:.1f} s"
    rows = _csv_rows("workload")
    assert [(row["workload"], float(row["seconds"])) for row in rows] == [
        (workload["name"], workload["seconds"]) for workload in stored["workloads"]
    ]


def test_a_power_cut_test_in_markdown_and_csv_holds_its_verdict_and_cycles() -> None:
    stored, text = stored_and_markdown("powercut")
    assert f"**{stored['summary']}**" in text
    rows = _csv_rows("powercut")
    assert [int(row["records_flushed"]) for row in rows] == [
        cycle["records_flushed"] for cycle in stored["cycles"]
    ]


def test_a_health_reading_in_markdown_and_csv_holds_its_wear_rate_and_forecast() -> None:
    stored, text = stored_and_markdown("health")
    assert f"**{stored['summary']}**" in text
    assert f"- wear: {stored['health']['percentage_used']}% of rated endurance used" in text
    (row,) = _csv_rows("health")
    forecast = stored["forecast"]
    assert (float(row["years_left_low"]), float(row["years_left_high"])) == (
        forecast["years_low"],
        forecast["years_high"],
    )
    assert float(row["bytes_per_day"]) == stored["rate"]["bytes_per_day"]


def test_a_diagnosis_in_markdown_and_csv_holds_each_finding_and_its_fix() -> None:
    stored, text = stored_and_markdown("doctor")
    assert f"**{stored['summary']}**" in text
    for finding in stored["findings"]:
        assert f"- fix: {finding['fix']}" in text
    rows = _csv_rows("doctor")
    assert [(row["category"], row["finding"]) for row in rows] == [
        (finding["category"], finding["what"]) for finding in stored["findings"]
    ]


def _odd(name: str, result: Any) -> Any:
    """The result with text from another machine where a table or a heading shows it."""
    if name == "capacity":
        return dataclasses.replace(result, device=ODD)
    if name == "monitor":
        return dataclasses.replace(result, device=ODD, command=(ODD,))
    if name == "workload":
        workload = dataclasses.replace(result.workloads[0], name=ODD)
        return dataclasses.replace(result, target=ODD, workloads=(workload,))
    if name == "health":
        return dataclasses.replace(result, device=ODD, model=ODD)
    if name == "doctor":
        finding = dataclasses.replace(result.findings[0], what=ODD, fix=ODD)
        return dataclasses.replace(result, device=ODD, board=ODD, findings=(finding,))
    # surface and powercut: the target's path
    return dataclasses.replace(result, target=dataclasses.replace(result.target, path=ODD))


@pytest.mark.parametrize("name", NAMES)
def test_odd_text_cannot_break_a_markdown_table(name: str) -> None:
    kind, result = decoded(name)
    assert kind.markdown is not None
    text = kind.markdown([_odd(name, result)])
    for line in text.splitlines():
        if line.startswith("#"):  # a heading: the text escaped, or shown as code
            assert ODD not in line.replace(code(ODD), "")
    widths = {len(cells) for cells in table_rows(text)}
    assert len(widths) <= 1, widths  # every row of a table has the header's cells


@pytest.mark.parametrize("name", NAMES)
def test_each_kind_alone_is_a_page_of_its_own_section(name: str) -> None:
    stored = document(name)
    page_text = exporter("html").render([SavedResult(kind_of(stored).name, stored)], [])
    page = Page(page_text)
    anchor = ANCHORS[name]
    assert [e.attributes["id"] for e in page.all("section")] == [anchor]
    assert [e.attributes["href"] for e in page.all("a")] == [f"#{anchor}"]
    assert f'id="{anchor.removesuffix("-runs")}-{stored["id"]}"' in page_text
    body = page.all("body")[0].attributes
    assert body["data-charts"] == str(len(page.charts))
    assert (name == "surface") == bool(page.charts)  # the scan draws MB/s over the surface
