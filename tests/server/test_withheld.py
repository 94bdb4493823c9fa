"""A value an upload leaves out reads as withheld on the service's pages, not as if the result
itself had not been uploaded: one placeholder, explained where it is pointed at."""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from typing import Any

import pytest

from flashmark.server.identifiers import Known
from flashmark.server.outgoing import outgoing
from flashmark.server.views import with_withheld_marked
from flashmark.upload_rules import WITHHELD, WITHHELD_BEFORE, WITHHELD_TIP
from tests.server.conftest import Service, recorded, variant

MARKED = f'<abbr class="withheld" title="{WITHHELD_TIP}">{WITHHELD}</abbr>'


def _page(service: Service, document: dict[str, Any]) -> str:
    answer = service.upload(document)
    assert answer.status_code == 201, answer.text
    page = service.client.get(f"/results/{answer.json()['id']}", headers={"Accept": "text/html"})
    assert page.status_code == 200
    return str(page.text)


def test_an_uploads_withheld_values_read_as_withheld_with_a_tip(service: Service) -> None:
    sent = outgoing(recorded("quick-a1-card"), Known())
    assert sent["host"]["hostname"] == WITHHELD == "(withheld)"
    page = _page(service, sent)
    assert WITHHELD_BEFORE not in page
    assert MARKED in page
    # the target line, and the page's title, where no element can go
    assert f"a test file in {MARKED}" in page
    title = re.findall(r"<title>(.*?)</title>", page)[0]  # the page's; SVG charts have theirs
    assert WITHHELD in title and "<abbr" not in title


def test_an_upload_of_an_earlier_flashmark_reads_the_same(service: Service) -> None:
    sent = json.dumps(outgoing(variant(recorded("quick-a1-card"), 3), Known()))
    earlier = json.loads(sent.replace(json.dumps(WITHHELD), json.dumps(WITHHELD_BEFORE)))
    assert earlier["host"]["hostname"] == WITHHELD_BEFORE  # as stored
    page = _page(service, earlier)
    assert WITHHELD_BEFORE not in page and MARKED in page


def test_only_text_is_marked_never_a_tag_an_svg_or_the_script() -> None:
    page = (
        f"<html><head><title>#1 {WITHHELD_BEFORE}</title></head>"
        f'<body><p title="{WITHHELD}">in {WITHHELD_BEFORE} (ext4)</p>'
        f"<svg><text>{WITHHELD}</text></svg><p>{WITHHELD}</p>"
        f"<script>if (a<b) x = '{WITHHELD}';</script></body></html>"
    )
    assert with_withheld_marked(page) == (
        f"<html><head><title>#1 {WITHHELD}</title></head>"
        f'<body><p title="{WITHHELD}">in {MARKED} (ext4)</p>'
        f"<svg><text>{WITHHELD}</text></svg><p>{MARKED}</p>"
        f"<script>if (a<b) x = '{WITHHELD}';</script></body></html>"
    )


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)  # the row is rewritten in SQLite
def test_an_upload_this_service_cannot_read_is_answered_not_failed(service: Service) -> None:
    """An upload kept before every key of its schema was required, lacking one now: its pages
    answer 409 with the missing key, never a server error."""
    sent = outgoing(recorded("quick-a1-card"), Known())
    result_id = service.upload(sent).json()["id"]
    del sent["tests"][0]["discarded_s"]  # as an earlier flashmark sent it
    with sqlite3.connect(service.database) as connection:
        connection.execute(
            "UPDATE results SET document = ? WHERE id = ?",
            (zlib.compress(json.dumps(sent).encode()), result_id),
        )
    connection.close()
    page = service.client.get(f"/results/{result_id}", headers={"Accept": "text/html"})
    assert page.status_code == 409 and "discarded_s" in page.text
    assert service.client.get(f"/api/v1/results/{result_id}").status_code == 200  # still kept
