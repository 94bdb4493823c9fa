"""What `flashmark upload` sends: no host name, card serial or private path, the same
replacement for the same value under one salt, and still a result the service accepts."""

from __future__ import annotations

import json

from flashmark.server.anonymise import anonymise
from flashmark.server.intake import accept
from tests.server.conftest import recorded

SALT = bytes(range(32))


def test_serials_host_names_and_paths_are_gone():
    document = recorded("quick-a1-card")
    document["host"]["hostname"] = "alices-pi"
    document["warnings"] = ["alices-pi: /home/alice/my card is busy"]
    document["target"]["given"] = "/home/alice/my card"
    document["target"]["folder"] = "/home/alice/my card"
    original_path = document["target"]["path"]
    sent = anonymise(document, SALT)
    text = json.dumps(sent.document)
    for secret in ("alices-pi", "/home/alice", "my card", original_path, "0x36980065", "36980065"):
        assert secret not in text, secret
    cid = sent.document["probe"]["devices"][0]["card"]["cid"]
    assert cid["serial"] == 0
    raw = document["probe"]["devices"][0]["card"]["cid"]["raw"]
    # PSN (hex digits 18..25) and CRC (30..31) zeroed; maker, OEM, name, revision, date kept
    assert cid["raw"] == raw[:18] + "00000000" + raw[26:30] + "00"
    # what makes the result useful stays
    assert cid["product_name"] == "SD64G" and cid["manufacturer_id"] == 159
    assert sent.document["target"]["block_device"] == document["target"]["block_device"]
    assert sent.document["target"]["mount_point"] == "/"
    assert sent.document["schema"] == "flashmark.result/1"
    kinds = {replacement.what for replacement in sent.replacements}
    assert kinds == {"host name", "card serial", "path"}
    # the document the service gets still reads, and its model key is unchanged
    assert accept(sent.document).facts.model_key == accept(document).facts.model_key
    assert document["host"]["hostname"] == "alices-pi"  # the input is left alone


def test_the_same_card_is_recognised_under_one_salt_only():
    document = recorded("quick-a1-card")
    first = anonymise(document, SALT).document
    second = anonymise(document, SALT).document
    other = anonymise(document, bytes(32)).document
    serial = first["probe"]["devices"][0]["serial"]
    assert serial == second["probe"]["devices"][0]["serial"]
    assert serial.startswith("serial-") and serial != other["probe"]["devices"][0]["serial"]
    assert first["host"]["hostname"] == second["host"]["hostname"]
    assert accept(first).facts.card_serial == serial


def test_urls_units_and_system_paths_are_kept():
    document = recorded("quick-a1-card")
    document["warnings"] = [
        "see https://www.sdcard.org/x/y for A1/A2 in MB/s, flashmark.result/1",
        "scheduler of /dev/mmcblk0 and /sys/block/mmcblk0/queue, fio at /usr/bin/fio",
        "leftover in /mnt/card/x.tmp",
    ]
    sent = anonymise(document, SALT).document["warnings"]
    assert sent[0] == document["warnings"][0]
    assert sent[1] == document["warnings"][1]
    assert sent[2].startswith("leftover in /path-") and "/mnt" not in sent[2]
