"""The verdict over cycles, the result document both ways, and the four renderings."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest
from rich.console import Console

from flashmark.errors import ResultFormatError
from flashmark.powercut.kind import POWERCUT
from flashmark.powercut.result import (
    POWERCUT_SCHEMA,
    VANISHED,
    from_document,
    to_document,
)
from flashmark.powercut.verdict import judge
from flashmark.powercut.view import CSV_COLUMNS, powercut_view
from flashmark.views.csv_table import views_to_csv
from flashmark.views.markdown import views_to_markdown
from tests.powercut.results import RECORD, cycle, fsck, lying, result_of


def test_six_clean_cuts_pass_with_the_bound_in_the_summary():
    judgement = judge([cycle(n) for n in range(1, 7)], RECORD)
    assert judgement.verdict == "pass"
    assert judgement.summary == (
        "pass — 6 cycles, nothing acknowledged was lost (loss rate < 39.4% at 95%)"
    )


def test_four_clean_cuts_are_too_few_to_tell():
    judgement = judge([cycle(n) for n in range(1, 5)], RECORD)
    assert judgement.verdict == "uncertain"
    assert "too few cuts to tell" in judgement.summary
    assert "5 cuts after a flush" in judgement.summary


def test_cuts_before_any_flush_test_nothing():
    early = [cycle(n, records_flushed=0, durable=3, lost_unflushed=1) for n in range(1, 4)]
    judgement = judge([*early, *(cycle(n) for n in range(4, 9))], RECORD)
    assert judgement.verdict == "pass"
    assert "3 cut before any flush tested nothing" in judgement.summary
    assert judge(early, RECORD).summary.endswith("no cut came after an acknowledged flush")


def test_one_acknowledged_loss_fails_the_card_and_says_how_much():
    cycles = [cycle(1), lying(2, lost=3), cycle(3)]
    judgement = judge(cycles, RECORD)
    assert judgement.verdict == "fail"
    assert judgement.summary == (
        "fail — the card lost acknowledged writes in 1 of 3 cycles: "
        "3 flushed record(s), 12,288 bytes"
    )


def test_an_out_of_order_loss_is_named():
    judgement = judge([lying(1, reordered=True)], RECORD)
    assert "lost acknowledged writes (out of order)" in judgement.summary


def test_a_device_that_did_not_come_back_fails():
    judgement = judge([cycle(1), cycle(2, device=VANISHED, back_after_s=None)], RECORD)
    assert judgement.verdict == "fail"
    assert judgement.summary.endswith("the device did not come back after cut 2")


def test_a_filesystem_repaired_after_a_cut_fails():
    judgement = judge([cycle(1, fsck=fsck("clean")), cycle(2, fsck=fsck("repaired"))], RECORD)
    assert judgement.verdict == "fail"
    assert "fsck found the filesystem damaged after 1 cut(s) (first after cut 2: repaired)" in (
        judgement.summary
    )


def test_the_document_reads_back_as_the_same_result():
    result = result_of([cycle(1, fsck=fsck("clean")), lying(2)])
    document = json.loads(json.dumps(to_document(result)))
    assert document["schema"] == POWERCUT_SCHEMA
    assert "id" not in document
    assert from_document(document) == result
    saved = result.with_id(12)
    assert from_document(to_document(saved)).id == 12


@pytest.mark.parametrize(
    "change",
    [
        {"schema": "flashmark.surface/1"},
        {"verdict": "probably"},
        {"cycles": [{"number": 1}]},
    ],
)
def test_a_document_of_another_kind_or_malformed_is_refused(change):
    document = to_document(result_of([cycle(1)])) | change
    with pytest.raises(ResultFormatError):
        from_document(document)


def test_the_terminal_shows_the_device_and_a_row_per_cycle_and_the_verdict_line_says_it():
    result = result_of([cycle(1), lying(2)])
    console = Console(width=160, record=True, color_system=None)
    console.print(POWERCUT.terminal(result))
    text = console.export_text()
    assert POWERCUT.summary(result).startswith(
        "fail — the card lost acknowledged writes in 1 of 2 cycles"
    )
    assert "identity usb:0781:5581:4C530001:lun0" in text
    assert "│     2 │ 2.50 s │     800 │     792 │     675 │              120 │" in text


def test_markdown_has_the_verdict_and_one_table_row_per_cycle():
    text = views_to_markdown([powercut_view(result_of([cycle(1), cycle(2)]).with_id(4))])
    lines = text.splitlines()
    assert lines[0] == "### Power-cut test 4: /dev/sdb"
    assert lines[2].startswith("**verdict: uncertain — 2 cycles")
    cells = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in lines
        if line.startswith("|")
    ]
    rows = [row for row in cells if row[0] in ("1", "2")]
    assert rows[1] == ["2", "2.50 s", "800", "792", "795", "0", "6", "0", "0", "back", "1.20 s"]


def test_csv_has_a_row_per_cycle_in_stored_units():
    rows = list(
        csv.DictReader(
            io.StringIO(views_to_csv(CSV_COLUMNS, [powercut_view(result_of([cycle(1), lying(2)]))]))
        )
    )
    assert [row["cycle"] for row in rows] == ["1", "2"]
    assert rows[1]["flushed_bytes_lost"] == str(120 * RECORD)
    assert rows[1]["verdict"] == "fail"
    assert rows[0]["reordered"] == "false"


def test_the_html_section_escapes_what_it_shows():
    result = result_of([cycle(1)], path="/dev/<script>")
    assert POWERCUT.html is not None
    section = POWERCUT.html([result], ())
    (part,) = section.parts
    assert part.anchor == "powercut"
    body = str(part.body)
    assert body.count('<article class="card"') == 1
    assert "<script>" not in body
    assert "/dev/&lt;script&gt;" in body
    cycles = body.split("<thead>", 1)[1].split("</table>", 1)[0]
    assert cycles.count("<tr") == 2  # the head and one cycle


@pytest.mark.parametrize(
    ("identity", "key"),
    [
        # as system.device_identity names a device
        ("usb:0781:5581:4C530001/part@2048", "usb:0781:5581:4C530001"),
        ("usb:0781:5581:4C530001:lun1", "usb:0781:5581:4C530001:lun1"),
        ("serial:Ultra Fit/4C530001", "serial:4C530001"),
        ("cid:035344534333324780dd2a2e8c013700", "cid:035344534333324780dd2a2e8c013700"),
        # as documents saved before it was shared with capacity name one
        ("usb:0781:5581:4C530001:lun0 partition 1", "usb:0781:5581:4C530001"),
        ("serial:Ultra Fit:4C530001", "serial:4C530001"),
        ("serial:4C530001", "serial:4C530001"),
        ("cid:035344534333324780DD2A2E8C013700", "cid:035344534333324780dd2a2e8c013700"),
    ],
)
def test_the_card_is_the_disk_the_identity_names_in_new_and_older_documents(identity, key):
    result = result_of([cycle(1)])
    card_of = POWERCUT.card
    assert card_of is not None
    card = card_of(replace(result, target=replace(result.target, identity=identity)))
    assert card is not None and card.key == key
