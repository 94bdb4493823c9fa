"""What `flashmark upload` sends, on real documents of every kind it uploads: no identifier
put anywhere in them reaches the upload (one field at a time, then hypothesis's identifiers in
every field at once), what makes a result worth comparing stays, and the card link links a
card's uploads on one service only."""

from __future__ import annotations

import copy
import functools
import json
import random
import re
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from flashmark.kinds.registry import entry_for
from flashmark.probe.mmc import decode_mmc_cid, decode_sd_cid
from flashmark.server.identifiers import Known
from flashmark.server.intake import ACCEPTED_SCHEMAS, AcceptedReading, accept, accept_upload
from flashmark.server.outgoing import ALLOW_LISTS, NotUploadable, card_identity, outgoing
from flashmark.server.upload import card_link
from flashmark.upload_rules import WITHHELD
from tests.conftest import DATA

UPLOAD_DATA = DATA / "upload"
# Every kind: the recorded documents of tests/data/upload (record.py there) and the benchmark
# runs the report tests read (an SD card on a Raspberry Pi 5, a VM's disk with workloads and
# device activity); those of a kind flashmark uploads, and the others it refuses.
RECORDED_FILES = (
    *sorted(UPLOAD_DATA.glob("*.json")),
    *(DATA / "report" / f"{name}.json" for name in ("quick-a1-card", "standard-fast-card")),
    DATA / "report" / "full-vm-disk.json",
)
Path_ = tuple[str, ...]  # a field's place: keys, "*" for any list item


@functools.cache
def document(file: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return loaded


DOCUMENT_FILES = tuple(file for file in RECORDED_FILES if document(file)["schema"] in ALLOW_LISTS)
NOT_UPLOADED_FILES = tuple(file for file in RECORDED_FILES if file not in DOCUMENT_FILES)


def load(name: str) -> dict[str, Any]:
    return copy.deepcopy(document(next(f for f in RECORDED_FILES if f.stem == name)))


def sent_text(source: dict[str, Any], known: Known | None = None) -> str:
    """What is sent, as compact JSON: the body's text without its indents (faster to make; the
    same strings and escapes). test_upload_cli.py checks the body itself."""
    return json.dumps(outgoing(source, known))


# -- where the strings are ----------------------------------------------------------------------


def string_places(value: Any, place: Path_ = ()) -> Iterator[Path_]:
    """The place of every string of a document, and of every key of its grades (the one object
    whose keys are data: grade names)."""
    if isinstance(value, str):
        yield place
    elif isinstance(value, dict):
        for key, item in value.items():
            if place == ("grades",):
                yield (*place, "{key}")
            yield from string_places(item, (*place, key))
    elif isinstance(value, list):
        for item in value:
            yield from string_places(item, (*place, "*"))


Injector = Callable[[Path_, str], str | None]  # place, value -> new value (None: leave it)


def injected(value: Any, inject: Injector, extra_key: str | None, place: Path_ = ()) -> Any:
    """A copy of `value` with every string replaced as `inject` says, and `extra_key` added to
    every object (a key no table lists)."""
    if isinstance(value, str):
        new = inject(place, value)
        return value if new is None else new
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            name = key
            if place == ("grades",):
                name = inject((*place, "{key}"), key) or key
            result[name] = injected(item, inject, extra_key, (*place, key))
        if extra_key is not None and place != ("grades",):  # grade names: renamed above
            result[extra_key] = extra_key
        return result
    if isinstance(value, list):
        return [injected(item, inject, extra_key, (*place, "*")) for item in value]
    return value


def placed(identifier: str, value: str, how: int) -> str:
    """The identifier as the whole value, after it, before it, or among its words."""
    if how == 0:
        return identifier
    if how == 1:
        return f"{value} {identifier}"
    if how == 2:
        return f"{identifier} {value}"
    words = value.split(" ")
    cut = len(words) // 2
    return " ".join([*words[:cut], identifier, *words[cut:]])


def reached(identifier: str, text: str) -> bool:
    """Whether the identifier is in the body: as a word for short names (which other words
    contain), anywhere and in any case for the others."""
    if len(identifier) <= 3:
        return (
            re.search(rf"(?<![A-Za-z0-9]){re.escape(identifier)}(?![A-Za-z0-9])", text) is not None
        )
    return identifier.lower() in text.lower()


# -- one field at a time ---------------------------------------------------------------------------

# A card serial as a whole value, and a 2-letter host name this machine is known by among a
# value's words: each alone must be refused by every text rule (the shape of a serial; a known
# name as a word), whatever the value was.
ALONE = (("4c530001230607103473", 0), ("zq", 1))
ALONE_KNOWN = Known(frozenset({"zq"}))


@functools.cache
def refusing_places() -> tuple[frozenset[tuple[str, Path_]], tuple[str, ...]]:
    """Each string place of every kind, tried alone in the smallest document that has it: the
    places where an identifier makes the whole upload refused (a word flashmark reads, as a
    test's pattern or a grade's name), and what reached the upload anywhere else."""
    smallest: dict[tuple[str, Path_], Path] = {}
    for file in sorted(DOCUMENT_FILES, key=lambda f: f.stat().st_size):
        source = document(file)
        for place in string_places(source):
            smallest.setdefault((source["schema"], place), file)
    refusing, leaks = set(), []
    for (schema, place), file in smallest.items():
        for identifier, how in ALONE:

            def inject(at: Path_, value: str) -> str | None:
                return placed(identifier, value, how) if at == place else None  # noqa: B023

            try:
                text = sent_text(injected(document(file), inject, None), ALONE_KNOWN)
            except NotUploadable as error:
                # refused because of that field, and saying so
                assert _named(place) in str(error), (place, str(error))
                refusing.add((schema, place))
                continue
            if reached(identifier, text):
                leaks.append(f"{file.name} {'.'.join(place)}: {identifier!r}")
    return frozenset(refusing), tuple(leaks)


def _named(place: Path_) -> str:
    """How a refusal names a place: its last key (an item's index or a grade's name vary)."""
    last = [part for part in place if part not in ("*", "{key}")][-1]
    return "key" if place[-1] == "{key}" else last


def test_an_identifier_in_any_one_field_never_reaches_the_upload():
    refusing, leaks = refusing_places()
    assert leaks == ()
    # Only flashmark's own words refuse an upload (a reader needs them): never a text field.
    refused_fields = {place[-1] for _, place in refusing}
    assert refused_fields <= {
        "schema", "kind", "pattern", "name", "test", "metric", "unit", "verdict", "{key}",
        "profile", "type", "topic", "status", "found", "wrote", "started_at", "finished_at",
        "phase", "stopped_by", "device_kind",
    }, refused_fields  # fmt: skip


# -- everywhere at once: hypothesis ---------------------------------------------------------------

_LOWER = string.ascii_lowercase
_ALNUM = _LOWER + string.digits
_HEX = "0123456789abcdef"
# Made, not filtered: a name starts with a letter and ends with a letter or digit; a serial
# holds at least one digit and one hex letter (a run of digits alone is found in any figure).
_name = st.builds(
    "{}{}{}".format,
    st.sampled_from(_LOWER),
    st.text(_ALNUM + "-", min_size=3, max_size=10),
    st.sampled_from(_ALNUM),
)
_hex_serial = st.builds(
    "{}{}{}".format,
    st.sampled_from(string.digits),
    st.sampled_from("abcdef"),
    st.text(_HEX, min_size=6, max_size=22),
)
serials = st.one_of(_hex_serial, _hex_serial.map("0x{}".format), _hex_serial.map(str.upper))
cids = st.binary(min_size=16, max_size=16).map(bytes.hex)
absolute_paths = st.one_of(
    st.lists(_name, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts)),
    st.tuples(_name, _name).map("/home/{0[0]}/{0[1]}".format),
    st.tuples(_name, _name).map("/media/{0[0]}/{0[1]}".format),
    st.tuples(_name, serials).map("/dev/disk/by-id/usb-{0[0]}_{0[1]}-0:0".format),
    _name.map("/dev/mapper/luks-{}".format),
    _name.map("~/{}".format),
)
mount_sources = st.one_of(
    st.tuples(_name, _name, _name).map("{0[0]}@{0[1]}:/{0[2]}".format),
    st.tuples(_name, _name).map("//{0[0]}/{0[1]}".format),
    st.tuples(_name, _name).map("{0[0]}.local:/export/{0[1]}".format),
)
ipv4 = st.ip_addresses(v=4).map(str)
ipv6 = st.ip_addresses(v=6).map(str)
macs = st.one_of(
    st.binary(min_size=6, max_size=6).map(lambda b: ":".join(f"{x:02x}" for x in b)),
    st.binary(min_size=6, max_size=6).map(lambda b: "-".join(f"{x:02X}" for x in b)),
)
emails = st.tuples(_name, _name).map("{0[0]}@{0[1]}.example".format)
test_files = st.tuples(st.integers(1, 99999), _hex_serial).map(
    ".flashmark-{0[0]}-{0[1]}.tmp".format
)
short_host_names = st.builds(
    "{}{}".format, st.sampled_from(_LOWER), st.text(_ALNUM, min_size=0, max_size=2)
)
user_names = st.text(_LOWER, min_size=4, max_size=10)
identifiers = st.one_of(
    serials, cids, absolute_paths, mount_sources, ipv4, ipv6, macs, emails, test_files, _name
)


def psn_digits(cid: str) -> list[str]:
    """The serial digits of a CID, read as an SD card's and as an eMMC's."""
    return [cid[18:26], cid[20:28]]


# max_examples: every example builds its document twice (with and without the identifiers)
# and puts an identifier into every string field and an extra key into every object of it
# (thousands of fields), so each shape meets each field many times over; 100 examples over the
# 9 documents take 1 to 1.5 s on a shared 2-CPU machine, which keeps the test in every CI run.
# Hypothesis keeps failing examples in its database and tries them first next time.
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    file=st.sampled_from(DOCUMENT_FILES),
    many=st.lists(identifiers, min_size=4, max_size=16),
    host=short_host_names,
    user=user_names,
    chooser=st.randoms(use_true_random=False),
)
def test_identifiers_everywhere_at_once_never_reach_the_upload(
    file: Path, many: list[str], host: str, user: str, chooser: random.Random
):
    refusing, _ = refusing_places()
    source = document(file)
    schema = source["schema"]
    # This machine's names, as `flashmark upload` knows them: its host and user names, and
    # the bare names among the identifiers (nothing but knowing them tells them from words).
    names = {host, user, *(name for name in many if re.fullmatch("[a-z0-9-]+", name))}
    known = Known(frozenset(names))
    every = [host, user, *many]
    psns = [
        digits for cid in many if re.fullmatch("[0-9a-f]{32}", cid) for digits in psn_digits(cid)
    ]
    baseline = sent_text(source, known)
    assume(not any(reached(identifier, baseline) for identifier in [*every, *psns]))

    def inject(place: Path_, value: str) -> str | None:
        if (schema, place) in refusing:
            return None
        identifier = chooser.choice(every)
        # A name alone may be one of flashmark's words (a user called "fake"): names go among
        # the words of a value, the other identifiers also replace it.
        how = chooser.randrange(1 if identifier in names else 0, 4)
        return placed(identifier, value, how)

    sent = sent_text(injected(source, inject, chooser.choice(many)), known)
    assert [identifier for identifier in [*every, *psns] if reached(identifier, sent)] == []


# -- what the issue saw, one by one ---------------------------------------------------------------


def test_a_run_on_an_sd_card_sends_no_serial_in_its_cid_or_passport():
    source = load("sd-card-run")
    card = source["probe"]["devices"][0]["card"]
    assert card["cid"]["serial"] == 0x1234 and "PSN 0x00001234" in json.dumps(source["passport"])
    text = sent_text(source)
    for secret in ("00001234", "0x1234", card["cid"]["raw"], source["passport"]["cid"]):
        assert secret not in text
    sent = json.loads(text)
    cid = sent["probe"]["devices"][0]["card"]["cid"]
    # digits 18..25 (PSN) and 30..31 (CRC) zeroed; maker, OEM, name, revision and date kept
    raw = card["cid"]["raw"]
    assert cid["raw"] == raw[:18] + "0" * 8 + raw[26:30] + "00"
    assert cid["serial"] == 0
    assert (cid["manufacturer_id"], cid["oem_id"], cid["product_name"]) == (0x9F, "0x5449", "SD64G")
    assert (cid["revision"], cid["manufactured"]) == ("6.1", "2019-11")
    passport = sent["passport"]
    assert passport["cid"] is None and passport["verdict"] == "suspicious"
    assert {point["evidence"] for point in passport["points"]} == {""}
    low = [p for p in passport["points"] if p["text"].startswith("a very low serial number")]
    assert low and low[0]["status"] == "suspicious"  # the finding stays, its evidence not


def test_an_emmc_cid_loses_its_own_serial_digits():
    source = load("emmc-run")
    raw = source["probe"]["devices"][0]["card"]["cid"]["raw"]
    sent = json.loads(sent_text(source))["probe"]["devices"][0]["card"]["cid"]
    # eMMC: PSN [47:16] = digits 20..27 (JESD84-B51 7.2), CRC digits 30..31
    assert sent["raw"] == raw[:20] + "0" * 8 + raw[28:30] + "00"
    assert decode_mmc_cid(sent["raw"]).serial == 0
    assert decode_mmc_cid(sent["raw"]).product_name == decode_mmc_cid(raw).product_name


def test_a_cid_that_does_not_decode_to_its_fields_is_not_rebuilt():
    source = load("sd-card-run")
    cid = source["probe"]["devices"][0]["card"]["cid"]
    cid["raw"] = "03" + cid["raw"][2:]  # another maker than the fields say
    sent = json.loads(sent_text(source))["probe"]["devices"][0]["card"]["cid"]
    assert sent["raw"] == WITHHELD
    assert decode_sd_cid(cid["raw"]).manufacturer_id != sent["manufacturer_id"]


def test_mount_sources_device_links_and_short_host_names_stay_here():
    source = load("quick-a1-card")
    source["host"]["hostname"] = "pi"
    environment = source["probe"]["environment"]
    environment["mount_source"] = "alice@192.168.1.20:/srv/photos"
    environment["mount_options"] = "rw,relatime,vers=4.2,addr=192.168.1.20,clientaddr=10.0.0.7"
    source["target"]["block_device"] = "/dev/disk/by-id/usb-SanDisk_Ultra_4C530001230607103473-0:0"
    source["probe"]["layers"][0]["detail"] = "nfs4 on alice@192.168.1.20:/srv/photos"
    source["warnings"] = ["pi: /dev/sda is busy"]
    source["findings"].append("measured on pi")
    text = sent_text(source)
    for secret in ("alice", "192.168.1.20", "10.0.0.7", "4C530001230607103473", "by-id", "is busy"):
        assert secret not in text
    assert not reached("pi", text)
    sent = json.loads(text)
    assert sent["probe"]["environment"]["mount_options"] == "rw,relatime,vers=4.2"
    assert sent["probe"]["environment"]["mount_source"] == WITHHELD
    assert sent["target"]["block_device"] == WITHHELD
    assert sent["findings"] == source["findings"][:-1]  # the one that names the host left out
    # a device's own node says which kind of device, not which one: it stays
    source["probe"]["environment"]["mount_source"] = "/dev/mmcblk0p2"
    assert json.loads(sent_text(source))["probe"]["environment"]["mount_source"] == "/dev/mmcblk0p2"


def test_what_makes_a_result_comparable_stays():
    for name in ("quick-a1-card", "standard-fast-card", "sd-card-run"):
        source = load(name)
        sent = json.loads(sent_text(source))
        # the service finds, groups and ranks it as before
        assert accept(sent).facts.__dict__ | {"card_serial": None} == (
            accept(source).facts.__dict__ | {"card_serial": None}
        )
        assert accept(sent).facts.card_serial is None
        for before, after in zip(source["tests"], sent["tests"], strict=True):
            for key in ("name", "description", "pattern", "block_size_bytes", "iodepth"):
                assert after[key] == before[key]
            for side in ("read", "write"):
                assert after[side] == before[side]  # every figure, interval and sample
        assert sent["grades"] == source["grades"]
        assert sent["settings"] == source["settings"]
        assert sent["findings"] == source["findings"]
        assert sent["workloads"] == [
            {**workload, "monitor": _without_warnings(workload["monitor"])}
            for workload in source["workloads"]
        ]
        for key in ("kernel", "machine", "python"):
            assert sent["host"][key] == source["host"][key]
        for key in ("filesystem", "capacity_bytes", "kind"):
            assert sent["target"][key] == source["target"][key]
        # the options that make a file system faster or slower (resuid=, a user's id, not)
        options = sent["target"]["mount_options"].split(",")
        assert "rw" in options and set(options) <= set(source["target"]["mount_options"].split(","))
        device, kept = source["probe"]["devices"][0], sent["probe"]["devices"][0]
        for key in ("name", "kind", "vendor", "model", "firmware", "capacity_bytes", "scheduler"):
            assert kept[key] == device[key]
        assert kept["card"] == _without_serial(device["card"])


def _without_warnings(monitor: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if monitor is None else {**monitor, "warnings": []}


def _without_serial(card: dict[str, Any] | None) -> dict[str, Any] | None:
    if card is None:
        return None
    raw = card["cid"]["raw"]
    cid = {**card["cid"], "raw": raw[:18] + "0" * 8 + raw[26:30] + "00", "serial": 0}
    registers = {name: {**card[name], "raw": WITHHELD} for name in ("csd", "scr", "ssr")}
    return {**card, "cid": cid, **registers}


@pytest.mark.parametrize("file", DOCUMENT_FILES, ids=lambda file: file.stem)
def test_every_kind_is_sent_as_itself_and_reads_back(file: Path):
    source = document(file)
    sent = json.loads(sent_text(source))
    assert sent["schema"] == source["schema"] and "id" not in sent
    assert entry_for(sent).kind == entry_for(source).kind
    assert sent_text(source) == sent_text(copy.deepcopy(source))  # the same bytes every time


def test_uploads_are_built_for_exactly_the_kinds_the_service_accepts():
    assert tuple(ALLOW_LISTS) == ACCEPTED_SCHEMAS


@pytest.mark.parametrize("file", NOT_UPLOADED_FILES, ids=lambda file: file.stem)
def test_a_saved_kind_the_service_does_not_accept_is_refused(file: Path):
    schema = document(file)["schema"]
    with pytest.raises(NotUploadable, match=rf"'{re.escape(schema)}' is not a kind"):
        outgoing(document(file))


def test_a_kind_flashmark_does_not_upload_and_a_damaged_document_are_refused():
    with pytest.raises(NotUploadable, match=r"'flashmark\.clean/1' is not a kind"):
        outgoing({"schema": "flashmark.clean/1"})
    damaged = load("quick-a1-card")
    damaged["tests"][2]["pattern"] = "sideways"
    with pytest.raises(NotUploadable, match=r"result\.tests\[2\]\.pattern cannot be sent"):
        outgoing(damaged)


# -- the card link --------------------------------------------------------------------------------


def test_the_card_link_links_one_cards_uploads_on_one_service_only():
    run, other_card = load("sd-card-run"), load("quick-a1-card")
    identity = card_identity(run)
    assert identity is not None
    assert identity == run["probe"]["devices"][0]["card"]["cid"]["raw"]  # serial included
    other_identity = card_identity(other_card)
    assert other_identity is not None and other_identity != identity
    salt, other_salt = bytes(range(32)), bytes(32)
    link = card_link(salt, "https://results.example", identity)
    assert re.fullmatch("[0-9a-f]{32}", link)
    assert link == card_link(salt, "HTTPS://Results.Example/api/", identity)  # one service
    assert link != card_link(salt, "https://other.example", identity)
    assert link != card_link(other_salt, "https://results.example", identity)
    assert link != card_link(salt, "https://results.example", other_identity)
    # a run whose probe read no card names none
    assert card_identity({**run, "probe": None}) is None


DISTURBED = {
    "status": "disturbed",
    "reason": "another process wrote 3.10 MB/s to mmcblk0 during rand-write-4k",
    "device": "mmcblk0",
    "read_bytes_per_s": 0.0,
    "write_bytes_per_s": 3_100_000.0,
    "read_requests_per_s": 0.0,
    "write_requests_per_s": 24.5,
    "cpu_some_pct": 1.5,
    "fio_cpu_wait_pct": None,
    "retries": 2,
}


def test_a_disturbed_test_is_sent_with_its_reason_and_read_back_by_the_service():
    source = load("sd-card-run")
    disturbance = dict(DISTURBED)
    source["tests"][0]["disturbance"] = disturbance
    sent = json.loads(sent_text(source))
    assert sent["tests"][0]["disturbance"] == disturbance
    kept = accept(sent).document
    assert kept["tests"][0]["disturbance"] == disturbance


@pytest.mark.parametrize(
    "reason",
    ["another process wrote 3.10 MB/s to /home/alice/card.img", "wrote to usb-Kingston_0x4a3b2c1d"],
)
def test_a_disturbance_reason_that_quotes_an_identifier_is_withheld(reason: str):
    source = load("sd-card-run")
    source["tests"][0]["disturbance"] = DISTURBED | {"reason": reason}
    sent = sent_text(source)
    assert "alice" not in sent and "4a3b2c1d" not in sent.lower()
    assert json.loads(sent)["tests"][0]["disturbance"]["reason"] == WITHHELD


# -- health readings ------------------------------------------------------------------------------

HEALTH_FILES = tuple(file for file in DOCUMENT_FILES if file.stem.startswith("health-"))
_CID_LAYOUTS = {"sd": (decode_sd_cid, slice(18, 26)), "emmc": (decode_mmc_cid, slice(20, 28))}


@pytest.mark.parametrize("file", HEALTH_FILES, ids=lambda file: file.stem)
def test_a_health_reading_is_sent_without_what_names_its_device_or_machine(file: Path):
    source = document(file)
    text = sent_text(source)
    sent = json.loads(text)
    assert sent["device_key"] == sent["target"] == WITHHELD and sent["skipped"] == []
    if source["device_key"].startswith(("serial:", "cid:")):
        assert source["device_key"].rpartition(":")[2] not in text
    if source["counter"] is not None:
        assert sent["counter"]["boot_id"] == WITHHELD
        assert source["counter"]["boot_id"] not in text
    if source["card_cid"] is None:
        assert sent["card_cid"] is None
        return
    decode, serial_digits = _CID_LAYOUTS[source["device_kind"]]
    saved, masked = decode(source["card_cid"]), decode(sent["card_cid"])
    assert saved.serial != 0 and masked.serial == 0 and f"{saved.serial:08x}" not in text
    assert sent["card_cid"][serial_digits] == "0" * 8 and sent["card_cid"][30:] == "00"
    assert (masked.manufacturer_id, masked.oem_id, masked.product_name, masked.revision) == (
        saved.manufacturer_id,
        saved.oem_id,
        saved.product_name,
        saved.revision,
    )
    # What a reading is shared for stays (a source naming the vendor's command, 0x00000001,
    # is left out: the screen takes its argument for a serial; the command itself is sent).
    assert {**sent["health"], "sources": ()} == {**source["health"], "sources": ()}
    assert sent["forecast"] == source["forecast"]
    assert sent["model"] == source["model"] and sent["summary"] == source["summary"]


def test_a_reading_whose_card_name_holds_an_identifier_sends_no_cid():
    source = load("health-emmc")
    serial = f"{decode_mmc_cid(source['card_cid']).serial:08x}"
    # a CID whose product name (PNM, hex digits 6..17 of an eMMC CID) spells a known name
    name = b"zq    ".hex()
    source["card_cid"] = source["card_cid"][:6] + name + source["card_cid"][18:]
    sent = json.loads(sent_text(source, ALONE_KNOWN))
    assert sent["card_cid"] == WITHHELD and serial not in json.dumps(sent)


def test_a_reading_is_found_by_the_model_key_of_its_models_runs():
    reading = accept_upload(outgoing(load("health-emmc")))
    run = accept(outgoing(load("emmc-run")))
    assert isinstance(reading, AcceptedReading)
    assert reading.facts.model_key == run.facts.model_key
    assert reading.facts.medium == run.facts.medium == "emmc"


def test_a_readings_card_link_is_made_from_its_whole_cid():
    source = load("health-emmc")
    assert card_identity(source) == source["card_cid"]
    assert card_identity(load("health-nvme")) is None  # a drive with neither CID nor serial
