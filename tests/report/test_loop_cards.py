"""A run on a loop device is filed under its image, not under the disk that holds the image's
file: in the report's cards and on the results service (its model and medium)."""

from __future__ import annotations

import dataclasses
import json

from flashmark.bench.document import document_to_run, run_to_document
from flashmark.bench.kind import RUN
from flashmark.bench.run_result import Run
from flashmark.probe.target import probe_target
from flashmark.report.html import KindResults, render_report
from flashmark.server.identifiers import Known
from flashmark.server.intake import accept, facts_of
from flashmark.server.outgoing import outgoing
from tests.probe.recorded import load_scenario
from tests.report.recorded import REPORT_DATA


def _runs_on_loop_and_card() -> tuple[Run, Run]:
    card = document_to_run(json.loads((REPORT_DATA / "quick-a1-card.json").read_text()))
    roots, tools = load_scenario("loop_file")  # this machine's loop1, its file on vda
    probe = probe_target("/dev/loop1", roots, tools)
    loop = dataclasses.replace(card, id=7, probe=probe)
    return loop, card


def test_a_loop_run_is_its_images_card_not_the_hosts_disk() -> None:
    loop, card = _runs_on_loop_and_card()
    assert loop.probe is not None and loop.probe.device is not None
    assert loop.probe.device.kind == "loop"
    identity = RUN.card(loop)  # type: ignore[misc]
    assert identity is not None
    assert identity.key.startswith("loop:backed by /tmp/flashmark-loop.")
    assert identity.name.startswith("loop1 (loop device, backed by /tmp/flashmark-loop.")
    assert "virtio" not in identity.name
    assert RUN.card(card).key != identity.key  # type: ignore[misc,union-attr]
    page = render_report([KindResults(RUN, (loop, card))], ())
    assert "vda (virtio)" not in page  # no card of the page is the host's disk


def test_the_service_files_a_loop_run_as_a_loop_image() -> None:
    loop, _ = _runs_on_loop_and_card()
    sent = outgoing(run_to_document(loop), Known())
    facts = facts_of(document_to_run(accept(sent).document))
    assert facts.medium == "loop"
    assert facts.model_key.startswith("loop")
    assert "virtio" not in facts.model_key
