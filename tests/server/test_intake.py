"""What an upload must be (no server): the facts searched by, the content hash, the order of
an upload's additions, and a seeded fuzz: whatever the intake accepts, the report can draw.
Numbers, texts and JSON the intake refuses: hostile/cases.py, through the application."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from flashmark.bench.document import document_to_run
from flashmark.report.html import render_html_report
from flashmark.server.intake import UploadRejected, accept, model_key
from tests.server.conftest import recorded, variant


def test_facts_of_a_recorded_sd_card_result():
    facts = accept(recorded("quick-a1-card")).facts
    assert (facts.maker, facts.product, facts.medium, facts.profile) == (
        "Kingston",
        "SD64G",
        "sd",
        "quick",
    )
    assert facts.capacity_bytes == 62277025792
    # CID manufacturer 0x9f, OEM "TI" (0x5449), product SD64G, revision 6.1: not the serial
    assert facts.model_key == "sd-9f-0x5449-sd64g-6.1"
    assert facts.board == "Raspberry Pi 5 Model B Rev 1.0"
    assert facts.headlines["rand_read_4k_iops"] == pytest.approx(1500.0)


def test_model_key_without_a_device_or_cid():
    assert model_key(None) == "unknown"
    facts = accept(recorded("standard-fast-card")).facts
    assert facts.model_key == "virtio-0x1af4-275gb"


def test_the_hash_ignores_the_local_id_and_key_order():
    document = recorded("quick-a1-card")
    shuffled = dict(reversed(list({**document, "id": 77}.items())))
    assert accept(document).content_hash == accept(shuffled).content_hash
    assert accept(document).content_hash != accept(variant(document, 1)).content_hash


def _mutations(document: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))
        else:
            paths.append(path)

    walk(document, ())
    copied = copy.deepcopy(document)
    for _ in range(4):
        path = rng.choice(paths)
        where: Any = copied
        try:
            for key in path[:-1]:
                where = where[key]
            old = where[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(old, bool):
            new: Any = rng.choice([None, not old, 1])
        elif isinstance(old, int | float):
            new = rng.choice([0, -1, -1e18, 1e18, None, 2**62, 1e-300, "1"])
        elif isinstance(old, str):
            new = rng.choice(["", "x" * 5000, "2026-13-45", "-1", 5])
        else:
            new = rng.choice([0, "x", -5, 1e18, [], {}])
        where[path[-1]] = new
    return copied


@pytest.mark.parametrize("name", ["quick-a1-card", "standard-fast-card"])
def test_whatever_is_accepted_can_be_drawn(name):
    """Seeded mutations of recorded results (types, signs, extremes, empty texts): each is
    refused by the intake or drawn by the report, never a crash on a page later."""
    base = recorded(name)
    rng = random.Random(12)
    drawn = refused = 0
    for _ in range(40):
        document = _mutations(base, rng)
        try:
            accept(json.loads(json.dumps(document)))
        except UploadRejected:
            refused += 1
            continue
        render_html_report([document_to_run(document)])
        drawn += 1
    assert drawn and refused  # both paths were taken


def test_an_uploads_additions_are_kept_in_the_order_it_sent_them():
    # The stored document (GET /api/v1/results/ID) holds them after its own keys as they were
    # sent, whatever the hash seed; the content hash does not depend on their order.
    additions = {"card_link": "0" * 32, "campaign": "fleet-1", "board_label": "board-07"}
    hashes = set()
    for order in (list(additions), list(reversed(additions))):
        accepted = accept({**recorded("quick-a1-card"), **{key: additions[key] for key in order}})
        assert list(accepted.document)[-3:] == order
        hashes.add(accepted.content_hash)
    assert len(hashes) == 1
