"""The card passport: CID rules with their sources, capacity and classes from the history,
the host's support for what the card claims, and the same card recognised again by its CID."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from click.testing import CliRunner

from flashmark.bench.passport import SBC_BENCH, card_passport
from flashmark.capacity.result import CAPACITY_DOCUMENT, CapacityResult, Evidence
from flashmark.cli import main
from flashmark.history.store import History
from flashmark.probe.mmc import claims_from_ssr, counterfeit_flags, decode_sd_cid
from flashmark.probe.model import Card, Csd, Device, MmcBus
from tests.probe.recorded import recorded_machine

KINGSTON_CID = "9f544953443634476136980065013b00"  # the rpi5_a2 scenario's card (SOURCES.md)
TODAY = datetime(2026, 1, 1, tzinfo=UTC)


def sd_cid(mid: int, oid: int, name: str, serial: int, year: int, month: int) -> str:
    """A CID register as the kernel prints it (SD Physical Layer Simplified Spec 5.2)."""
    value = (mid << 120) | (oid << 104) | (int.from_bytes(name.encode().ljust(5), "big") << 64)
    value |= (0x10 << 56) | (serial << 24) | ((year - 2000) << 12) | (month << 8) | 1
    return f"{value:032x}"


def sd_card(cid_hex: str, csd_bytes: int | None, app_class: str | None = None) -> Device:
    cid = decode_sd_cid(cid_hex)
    csd = None if csd_bytes is None else Csd("", 1, "2.0 (SDHC/SDXC)", csd_bytes)
    card = Card(
        type="SD",
        cid=cid,
        csd=csd,
        scr=None,
        ssr=None,
        manufacturer=None,
        manufacturer_source=None,
        counterfeit_flags=counterfeit_flags("SD", cid, csd),
        claimed=claims_from_ssr(None),
    )
    if app_class:
        from dataclasses import replace

        card = replace(card, claimed=replace(card.claimed, app_class=app_class))
    return Device(name="mmcblk0", kind="sd", sysfs_path="x", capacity_bytes=csd_bytes, card=card)


def test_a_counterfeit_identity_is_suspicious_point_by_point_with_sources():
    # sbc-bench's list: 0x12/0x3456 "ASTC" cards with low serials, a name that is not the size
    device = sd_card(sd_cid(0x12, 0x3456, "SD16G", 0x12, 2022, 9), 31_000_000_000)
    passport = card_passport(device, today=TODAY)
    assert passport.verdict == "suspicious"
    texts = {p.text: p for p in passport.points if p.status == "suspicious"}
    assert "a MID/OID pair seen on counterfeit cards" in texts
    assert "a very low serial number (serials count up from 1 at the maker)" in texts
    assert "the capacity in the name does not match the CSD capacity" in texts
    assert all(SBC_BENCH in p.source for p in texts.values() if "MID 0x12" not in p.text)


def test_kingston_oem_with_another_maker_a_bogus_name_and_dates_are_flagged():
    device = sd_card(sd_cid(0x00, 0x3432, "ASTC", 0, 2000, 5), 7_500_000_000)
    texts = [p.text for p in card_passport(device, today=TODAY).points]
    assert "Kingston's OEM ID '42' with another manufacturer ID: fraud indication" in texts
    assert "product name 'ASTC' is typical of counterfeit cards" in texts
    assert "serial number 0x00000000" in texts
    assert "manufacturing year 2000 (year field 0: left unset)" in texts
    future = sd_card(sd_cid(0x27, 0x5048, "SD64G", 0x1234, 2027, 3), 62_000_000_000)
    assert "manufactured in the future" in [
        p.text for p in card_passport(future, today=TODAY).points
    ]


def test_phison_low_serials_are_fine_and_a2_without_queueing_is_said():
    # sbc-bench: "with 0x000027/0x5048 (Phison ...) low serial numbers look OK"
    device = sd_card(sd_cid(0x27, 0x5048, "SD32G", 0x30, 2021, 4), 31_000_000_000, "A2")
    bus = MmcBus("mmc0", None, None, None, None, None, None, None, False, "dmesg", None, None)
    from dataclasses import replace

    passport = card_passport(replace(device, mmc_bus=bus), today=TODAY)
    assert passport.verdict == "no sign of a fake"
    host = [p for p in passport.points if p.topic == "host"]
    assert "does not enable SD command queueing" in host[0].text


def capacity_document(cid: str, verdict: str, real: int) -> dict[str, object]:
    result = CapacityResult(
        device="/dev/mmcblk0",
        claimed_bytes=62277025792,
        real_bytes=real,
        verdict=verdict,
        behaviour=("wraps",) if verdict == "fake" else (),
        granularity_bytes=512,
        block_bytes=4096,
        destructive=False,
        started_at="2026-01-01T00:00:00Z",
        finished_at="2026-01-01T00:00:09Z",
        duration_s=9.0,
        evidence=Evidence(
            layout={}, blocks_written=10, blocks_read=10, anomalies_total=0, anomalies=(), steps=()
        ),
        backup=None,
        card_cid=cid,
    )
    return CAPACITY_DOCUMENT.write(result)


def test_probe_shows_the_passport_and_recognises_the_card_in_the_history(private_history):
    env = recorded_machine("rpi5_a2")
    first = CliRunner().invoke(main, ["probe", "/", "--json"], env=env)
    assert first.exit_code == 0, first.output
    (passport,) = json.loads(first.stdout)["passports"]
    assert (passport["cid"], passport["seen_before"]) == (KINGSTON_CID, [])
    assert passport["verdict"] == "no sign of a fake"

    history = History.locate(private_history)
    other = history.save(kind="capacity", target="/dev/sdz", label="genuine",
                         document=capacity_document("00" * 16, "genuine", 1))  # fmt: skip
    fake = history.save(kind="capacity", target="/dev/mmcblk0", label="fake",
                        document=capacity_document(KINGSTON_CID, "fake", 8 * 2**30))  # fmt: skip
    again = CliRunner().invoke(main, ["probe", "/", "--json"], env=env)
    (passport,) = json.loads(again.stdout)["passports"]
    assert passport["seen_before"] == [fake]
    assert other not in passport["seen_before"]
    assert passport["verdict"] == "fake"
    table = CliRunner().invoke(main, ["probe", "/"], env=env)
    assert f"results {fake}" in table.stdout
    assert "flashmark capacity` found it fake" in table.stdout
