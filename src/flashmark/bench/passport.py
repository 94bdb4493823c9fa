"""The card passport: one verdict per device from everything flashmark knows about it, each
point with its evidence and the source of the rule behind it.

    passport = card_passport(device, entries)   # entries: the history (StoredResult list)
    passport.verdict    # "fake", "suspicious", "no sign of a fake", "unknown"

A card is recognised by its whole CID register: two cards share it only if one was cloned.
The CID rules are reasons to look closer, not proof; each names its source (mainly SBC_BENCH).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from flashmark.bench.model import Passport, PassportPoint
from flashmark.errors import HistoryError, ResultFormatError
from flashmark.history.cards import document_cids
from flashmark.history.entries import StoredResult
from flashmark.history.store import History
from flashmark.probe.model import Card, Device, ProbeReport

SBC_BENCH = "ThomasKaiser/sbc-bench results/SD-cards-with-low-serial-numbers.md"
PROBE_DOC = "flashmark docs/probe.md (counterfeit flags)"
SD_SPEC_CID = "SD Physical Layer Simplified Specification 6.00, 5.2 (CID: MDT year 2000 + n)"
SDXC_SPEC = "SD Physical Layer Specification 3.00 (2009) defined SDXC: cards over 32 GB"
MAKER_TABLE = "flashmark docs/probe.md (manufacturer table)"
DESIGN_A2 = "SD Association A2 class needs host command queueing and cache (docs/design.md)"

# sbc-bench: "with 0x000027/0x5048 (Phison ...) low serial numbers look OK", "With AData it
# seems similar" (0x00001d/0x4144): their serials are not a suspicious sign.
_LOW_SERIAL_OK = {(0x27, "PH"), (0x1D, "AD")}
LOW_SERIAL = 0x10000  # sbc-bench surveyed serials 0x00000000 .. 0x0000ffff
# sbc-bench: "0x000012/0x3456 which is a known counterfeit combination", 16 cards with
# 0x000012/0x5678, "a bunch of those ASTC named cards identifies as bogus 0x0000fe/0x3456".
_COUNTERFEIT_PAIRS = {(0x12, 0x3456), (0x12, 0x5678), (0xFE, 0x3456)}
# sbc-bench: "Checking for name=ASTC might be another reliable fraud detector (TBC)", "the
# same goes for cards with name 00000", "SMI ... with silly serial 0x00000000".
_COUNTERFEIT_NAMES = {"ASTC", "00000", "SMI"}
_KINGSTON_OID, _KINGSTON_MID = 0x3432, 0x41  # sbc-bench: OEM "42" with another MID is fraud
# Names that state a capacity (sbc-bench: "SD08G is 7.28/7.44 GiB, SD16G is 14.5/14.6 GiB,
# SD32G = 28.8/28.9/29.1 GiB"; fakes: "SD16G claiming 29.5 GiB").
_NAME_CAPACITY = re.compile(r"^(?:SD|SL|SR|SE)?(\d{2,3})G?$")
# Judgement: genuine cards in that table hold 0.93-0.98 of the named GB (1 GB = 10^9).
NAME_CAPACITY_RANGE = (0.85, 1.02)


def card_cid(device: Device) -> str | None:
    card = device.card
    return card.cid.raw.lower() if card and card.cid else None


def results_of_card(entries: Sequence[StoredResult], cid: str) -> list[StoredResult]:
    """History entries that measured the card with this CID, oldest first."""
    found = [entry for entry in entries if cid in document_cids(entry.document)]
    return sorted(found, key=lambda entry: entry.id)


def card_passport(
    device: Device, entries: Sequence[StoredResult] = (), *, today: datetime | None = None
) -> Passport:
    cid = card_cid(device)
    history = results_of_card(entries, cid) if cid else []
    points: list[PassportPoint] = []
    if device.card is not None:
        points += identity_points(device.card, today or datetime.now(UTC))
    points += capacity_points(device, history)
    points += class_points(history)
    points += host_points(device)
    return Passport(
        device=device.name,
        cid=cid,
        verdict=_verdict(points),
        points=tuple(points),
        seen_before=tuple(entry.id for entry in history),
    )


# A card's verdict from its points' statuses: the first of these any point has.
_VERDICTS = (("fake", "fake"), ("suspicious", "suspicious"), ("ok", "no sign of a fake"))


def _verdict(points: Sequence[PassportPoint]) -> str:
    statuses = {point.status for point in points}
    return next((verdict for status, verdict in _VERDICTS if status in statuses), "unknown")


def identity_points(card: Card, today: datetime) -> list[PassportPoint]:
    cid = card.cid
    if cid is None:
        return [PassportPoint("identity", "unknown", "no CID register readable", "", "")]
    mid, oid_text = cid.manufacturer_id, cid.oem_id_text
    oid = int(cid.oem_id, 16)
    pair = f"MID 0x{mid:02x} OID {cid.oem_id} ({oid_text!r})"
    if card.manufacturer:
        status, text, source = "ok", f"maker {card.manufacturer}", card.manufacturer_source or ""
    else:
        status, text, source = "info", "maker not in flashmark's MID+OID table", MAKER_TABLE
    points = [PassportPoint("identity", status, text, pair, source)]
    if card.type != "SD":
        return points + _probe_flags(card)
    if (mid, oid) in _COUNTERFEIT_PAIRS:
        points.append(_suspicious("a MID/OID pair seen on counterfeit cards", pair))
    if oid == _KINGSTON_OID and mid != _KINGSTON_MID:
        points.append(
            _suspicious(
                "Kingston's OEM ID '42' with another manufacturer ID: fraud indication", pair
            )
        )
    name = cid.product_name.strip()
    if name in _COUNTERFEIT_NAMES or (mid == 0x03 and name == "AS"):
        points.append(
            _suspicious(
                f"product name {name!r} is typical of counterfeit cards", f"PNM {name!r}, {pair}"
            )
        )
    if cid.serial == 0:
        points.append(_suspicious("serial number 0x00000000", "PSN 0x00000000"))
    elif cid.serial < LOW_SERIAL and (mid, oid_text) not in _LOW_SERIAL_OK:
        points.append(
            _suspicious(
                "a very low serial number (serials count up from 1 at the maker)",
                f"PSN 0x{cid.serial:08x}, {pair}",
            )
        )
    points += _date_points(cid.manufactured, card, today)
    points += _name_capacity_points(name, card)
    return points + _probe_flags(card)


def _suspicious(reason: str, evidence: str, source: str = SBC_BENCH) -> PassportPoint:
    """A point of the card's identity that makes it suspicious (most are sbc-bench's)."""
    return PassportPoint("identity", "suspicious", reason, evidence, source)


def _probe_flags(card: Card) -> list[PassportPoint]:
    known = ("serial number is 0x00000000", "manufacturing date field")
    return [
        _suspicious(flag, "CID/CSD", PROBE_DOC)
        for flag in card.counterfeit_flags
        if not flag.startswith(known)
    ]


def _date_points(made: str | None, card: Card, today: datetime) -> list[PassportPoint]:
    if made is None:
        return [_suspicious("manufacturing month is not 1-12", "MDT", SD_SPEC_CID)]
    year, month = (int(part) for part in made.split("-"))
    points = []
    if (year, month) > (today.year, today.month):
        points.append(_suspicious("manufactured in the future", f"MDT {made}", SD_SPEC_CID))
    if year == 2000:
        points.append(
            _suspicious(
                "manufacturing year 2000 (year field 0: left unset)",
                f"MDT {made}",
                f"{SD_SPEC_CID}; {SBC_BENCH} lists such a card",
            )
        )
    capacity = card.csd.capacity_bytes if card.csd else None
    if capacity and capacity > 32 * 10**9 and year < 2009:
        points.append(
            _suspicious(
                "an SDXC capacity with a date before SDXC existed",
                f"MDT {made}, CSD {capacity / 1e9:.1f} GB",
                SDXC_SPEC,
            )
        )
    if not points:
        points.append(PassportPoint("identity", "ok", "date in range", f"MDT {made}", SD_SPEC_CID))
    return points


def _name_capacity_points(name: str, card: Card) -> list[PassportPoint]:
    match = _NAME_CAPACITY.match(name)
    capacity = card.csd.capacity_bytes if card.csd else None
    if not match or not capacity:
        return []
    named = int(match.group(1)) * 10**9
    share = capacity / named
    low, high = NAME_CAPACITY_RANGE
    evidence = f"PNM {name!r}, CSD {capacity / 1e9:.2f} GB ({share:.0%} of the name's)"
    if low <= share <= high:
        return [PassportPoint("identity", "ok", "name matches the capacity", evidence, SBC_BENCH)]
    return [
        _suspicious(
            "the capacity in the name does not match the CSD capacity",
            evidence,
            f"{SBC_BENCH}; range {low}-{high} is judgement",
        )
    ]


def capacity_points(device: Device, history: Sequence[StoredResult]) -> list[PassportPoint]:
    points: list[PassportPoint] = []
    claimed = device.capacity_bytes
    csd = device.card.csd.capacity_bytes if device.card and device.card.csd else None
    if claimed and csd:
        status, verb = ("ok", "equals") if claimed == csd else ("suspicious", "differs from")
        points.append(
            PassportPoint(
                "capacity",
                status,
                f"the kernel's size {verb} the CSD capacity",
                f"{claimed} bytes vs CSD {csd} bytes",
                "SD Physical Layer Simplified Specification 5.3 (C_SIZE)",
            )
        )
    probes = [e for e in history if e.kind == "capacity"]
    if probes:
        latest = probes[-1].document
        real, verdict = latest.get("real_bytes"), latest.get("verdict")
        status = {"genuine": "ok", "fake": "fake"}.get(str(verdict), "unknown")
        points.append(
            PassportPoint(
                "capacity",
                status,
                f"`flashmark capacity` found it {verdict}",
                f"result {probes[-1].id}: real {real} of {latest.get('claimed_bytes')} bytes, "
                f"{', '.join(latest.get('behaviour') or ()) or 'every block held'}",
                "flashmark capacity (docs/capacity.md)",
            )
        )
    elif device.card is not None:
        text = "real capacity not probed yet (`sudo flashmark capacity /dev/...`)"
        points.append(PassportPoint("capacity", "unknown", text, "", ""))
    return points


def class_points(history: Sequence[StoredResult]) -> list[PassportPoint]:
    """Claimed classes vs the latest benchmark of this card (its grades)."""
    runs = [e for e in history if e.kind == "benchmark"]
    if not runs:
        return []
    latest = runs[-1]
    # Imported here: document.py pulls in the report model; the passport stays light otherwise.
    from flashmark.bench.document import document_to_run
    from flashmark.bench.grading.claims import claim_findings

    try:
        run = document_to_run(dict(latest.document))
    except ResultFormatError:  # saved by an earlier flashmark: `history` names it
        return []
    points = []
    if run.probe is not None:
        for sentence in claim_findings(run.probe, run.grades):
            status = "ok" if "not" not in sentence else "info"  # "not graded", "not measured"
            if "does not meet" in sentence or ", not " in sentence:
                status = "suspicious"
            points.append(
                PassportPoint(
                    "classes",
                    status,
                    sentence,
                    f"result {latest.id} ({run.settings.profile} profile)",
                    "SD Association classes as graded by flashmark (README Methodology)",
                )
            )
    return points


def host_points(device: Device) -> list[PassportPoint]:
    card, bus = device.card, device.mmc_bus
    if card is None or card.claimed.app_class != "A2":
        return []
    if bus is None or bus.command_queue is None:
        status, evidence = "unknown", ""
        text = "claims A2; whether this host enables SD command queueing is unknown"
    elif not bus.command_queue:
        status, evidence = "info", f"{bus.host}: command queueing off [{bus.command_queue_source}]"
        text = (
            "claims A2, but this host does not enable SD command queueing: it runs the card "
            "at A1-like random speeds"
        )
    else:
        status, evidence = "ok", bus.host
        text = "claims A2 and this host enables command queueing"
    return [PassportPoint("host", status, text, evidence, DESIGN_A2)]


def card_passports(
    report: ProbeReport, history: History, warn: Callable[[str], None]
) -> list[Passport]:
    """A passport for every SD/eMMC card of the probe ([] without cards), "seen before" from
    the history, read through its CID index. A history that cannot be read gives the passports
    without it and a warning (`warn`), never a failed command."""
    cards = [device for device in report.devices if device.card]
    if not cards:
        return []
    cids = sorted({cid for device in cards if (cid := card_cid(device)) is not None})
    entries: list[StoredResult] = []
    try:
        for cid in cids:
            entries += history.of_card(cid)
    except HistoryError as error:  # the passport without history; the command goes on
        warn(f"warning: the history could not be read for the card passport: {error}")
        entries = []
    return [card_passport(device, entries) for device in cards]
