"""`flashmark health` asking the card itself: SD vendor health through CMD56 (each of sdmon's
layouts decoded from answers laid out with published values, tests/data/probe/*/SOURCES.md),
who is and is not asked, and an eMMC's EXT_CSD read live and placed at the bytes counted now."""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from flashmark.health.check import HealthRequest, check_health
from flashmark.health.result import HealthResult
from flashmark.probe.mmc_ioctl import (
    MMC_IOC_CMD,
    LiveMmcIoctl,
    MmcCommand,
    MmcCommandFailed,
    RecordedMmcIoctl,
    pack_command,
    parse_hex_block,
)
from flashmark.probe.model import VendorHealth
from flashmark.probe.sd_vendor_health import (
    decode_adata,
    decode_innodisk,
    decode_longsys,
    decode_micron,
    decode_phison,
    decode_sandisk,
    decode_swissbit,
    decode_transcend,
)
from tests.cli_runner import flashmark
from tests.health.test_health_check import (
    EMMC_DEVICE,
    SimulatedEmmc,
    daily_readings,
    recorded_env,
    write_boot,
    write_counter,
)
from tests.probe.recorded import DATA, copied_tree, tree_roots

RPI4_CARD = "devices/platform/emmc2bus/fe340000.mmc/mmc_host/mmc0/mmc0:aaaa"
DAY = 86_400.0


def layout(name: str, offset: int = 0, value: bytes = b"") -> bytes:
    """A recorded layout (tests/data/probe/cmd56_layouts), `value` set at `offset`."""
    block = bytearray(parse_hex_block((DATA / "cmd56_layouts" / f"{name}.hex").read_text()))
    block[offset : offset + len(value)] = value
    return bytes(block)


def test_the_ioctl_number_is_the_kernels_for_a_72_byte_struct():
    # _IOWR(MMC_BLOCK_MAJOR, 0, struct mmc_ioc_cmd); sdmon prints the same number.
    assert MMC_IOC_CMD == 0xC048B300


@pytest.mark.parametrize("write", [False, True])
def test_the_packed_command_sits_at_the_offsets_of_the_kernels_struct(write):
    """include/uapi/linux/mmc/ioctl.h, struct mmc_ioc_cmd: write_flag @0, opcode @8, arg @12,
    flags @32, blksz @36, blocks @40, data_ptr @64, 72 bytes; flags are MMC_RSP_R1 (PRESENT
    1<<0 | CRC 1<<2 | OPCODE 1<<4) | MMC_CMD_ADTC (1<<5), a read with MMC_RSP_SPI_S1 (1<<7)
    as mmc-utils' read_extcsd."""
    packed = pack_command(MmcCommand(56, 0x110005F1, write=write), 0x1122334455667788)
    assert len(packed) == 72

    def field(offset: int) -> int:
        return int.from_bytes(packed[offset : offset + 4], sys.byteorder)

    assert field(0) == (1 if write else 0)
    assert (field(8), field(12)) == (56, 0x110005F1)
    assert field(32) == (0x35 if write else 0xB5)
    assert (field(36), field(40)) == (512, 1)
    assert int.from_bytes(packed[64:72], sys.byteorder) == 0x1122334455667788


def test_the_live_ioctl_opens_the_card_read_only():
    """A write-mode descriptor fires udev's change event on close. A read-only sysfs file
    stands in for the card: opened for writing it is refused even to root, opened read-only
    it is opened, and the kernel refuses the ioctl itself (ENOTTY)."""
    stand_in = "../sys/devices/system/cpu/online"
    with pytest.raises(MmcCommandFailed, match=f"^CMD8 read 0x00000000 on /dev/{stand_in}: "):
        LiveMmcIoctl().send(stand_in, MmcCommand(8, 0))


def test_the_live_ioctl_reaches_the_kernel_and_a_refusal_is_a_card_that_did_not_answer():
    """/dev/null is no MMC block device: the kernel refuses the packed command (ENOTTY)."""
    with pytest.raises(MmcCommandFailed, match="CMD8 read 0x00000000 on /dev/null"):
        LiveMmcIoctl().send("null", MmcCommand(8, 0))
    with pytest.raises(MmcCommandFailed, match="/dev/no-such-card"):
        LiveMmcIoctl().send("no-such-card", MmcCommand(56, 1))


# -- each layout, decoded from the published figures -------------------------------------------


# (decoder, layout, the fields it reads from the published answer); "illustrative" layouts
# have no published answer: their blocks follow the layout's description.
PUBLISHED_FIGURES = [
    (decode_sandisk, "sandisk_industrial",
     {"vendor": "SanDisk", "life_used_low_pct": 0.0, "life_used_high_pct": 1.0,
      "manufactured": "211122"}),
    (decode_sandisk, "wd_purple",
     {"vendor": "Western Digital", "manufactured": "240403", "power_on_count": 14}),
    (decode_phison, "apacer_industrial",
     {"erase_count_max": 5, "erase_count_total": 1380, "spare_blocks": 46,
      "bad_blocks_factory": 72, "power_on_count": 55}),
    (decode_adata, "adata_transcend_460t",  # a Transcend 460T answers as ADATA; 100% left
     {"life_used_low_pct": 0.0, "life_used_high_pct": 1.0, "bad_blocks_factory": 5,
      "spare_blocks": 198, "power_on_count": 12, "erase_count_max": 2, "erase_count_total": 405,
      "rated_erase_cycles": 30, "firmware": "U1115"}),
    (decode_swissbit, "swissbit_s56u",  # 99% left
     {"life_used_low_pct": 0.0, "life_used_high_pct": 2.0, "rated_erase_cycles": 100_000,
      "erase_count_max": 3, "erase_count_total": 2230, "spare_blocks": 482, "power_on_count": 19,
      "firmware": "W0112"}),
    (decode_micron, "micron_i400",  # its utilization figures are no life used
     {"life_used_low_pct": None}),
    (decode_transcend, "transcend_illustrative",  # 97% left; counts LE, power-ons BE
     {"life_used_low_pct": 2.0, "life_used_high_pct": 4.0, "erase_count_average": 17,
      "power_loss_count": 3, "power_on_count": 230}),
    (decode_innodisk, "innodisk_illustrative",
     {"erase_count_total": 9000, "other": ("spare utilization 2%",)}),
    (decode_longsys, "longsys_illustrative",  # 25.5 cycles; 92% left
     {"erase_count_average": 26, "life_used_low_pct": 7.0, "life_used_high_pct": 9.0}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("decode", "name", "fields"), PUBLISHED_FIGURES, ids=[row[1] for row in PUBLISHED_FIGURES]
)
def test_each_layout_decodes_its_published_figures(decode, name, fields):
    decoded = decode(layout(name))
    assert decoded is not None
    assert {field: getattr(decoded, field) for field in fields} == fields


def test_the_two_step_layout_of_kingston_sdce():
    kingston = decode_phison(layout("kingston_sdce"))
    assert kingston == VendorHealth(
        vendor=kingston.vendor if kingston else "",
        command="",
        life_used_low_pct=0.02,
        life_used_high_pct=0.04,  # 99.97% remaining, to 0.01%
        erase_count_average=1,
        erase_count_max=1,
        erase_count_total=66,
        spare_blocks=12,
        bad_blocks_factory=24,
        bad_blocks_grown=0,
        power_on_count=16,
        power_loss_count=0,
        firmware="19.143",
    )


def test_micron_keeps_its_utilization_figures():
    micron = decode_micron(layout("micron_i400"))
    assert micron is not None and micron.other[0] == "percentage step utilization 1"


def test_each_decoder_takes_only_its_own_signature():
    decoders = (decode_sandisk, decode_longsys, decode_micron, decode_swissbit, decode_adata)
    for name in ("wd_purple", "longsys_illustrative", "micron_i400", "swissbit_s56u"):
        answered = [d for d in (*decoders, decode_transcend, decode_innodisk) if d(layout(name))]
        assert len(answered) == 1, name


# -- who is asked, through the CLI on each recorded tree ---------------------------------------


@pytest.mark.parametrize(
    ("tree", "shown"),
    [
        ("sd_sandisk_industrial", "SanDisk, CMD56 read 0x00000001: 0 power-ons; made 211122"),
        ("sd_wd_purple", "Western Digital, CMD56 read 0x00000001: 14 power-ons; made 240403"),
        ("sd_kingston_sdce", "CMD56 write 0x00000010, then CMD56 read 0x00000021"),
        ("sd_transcend_460t", "ADATA, CMD56 read 0x110005f1"),
        ("sd_transcend", "Transcend, CMD56 read 0x110005f9"),
        ("sd_adata", "ADATA, CMD56 read 0x110005f1"),
    ],
)
def test_health_shows_the_vendor_health_of_each_recorded_card(tmp_path, tree, shown):
    result = flashmark("health", "/", env=recorded_env(tree, tmp_path / "history.db"))
    assert result.returncode == 0, result.stdout + result.stderr
    text = " ".join(result.stdout.split())
    assert shown in text
    assert "life used:" in text and "SD cards report no wear" not in text
    saved = flashmark("show", "1", "--json", env=recorded_env(tree, tmp_path / "history.db"))
    document = json.loads(saved.stdout)
    assert document["health"]["wear_read"] == "cmd56"
    assert document["health"]["vendor"]["command"] in text


def asked(
    tree: Path, target: str = "/", privileged: bool = True, vendor_health: bool = True
) -> tuple[HealthResult, RecordedMmcIoctl]:
    """One reading of `tree`, its card answering from the recorded ioctl answers: the result,
    and the answers, which keep what was sent."""
    mmc = RecordedMmcIoctl(tree / "tools" / "ioctl", privileged=privileged)
    request = HealthRequest(target)
    result = check_health(request, [], tree_roots(tree), 1e9, mmc, vendor_health=vendor_health)
    return result, mmc


def rewrite_answer(answer: Path, bytes_at: dict[int, int]) -> None:
    """A recorded card answer with the bytes at the given offsets changed."""
    block = bytearray(parse_hex_block(answer.read_text()))
    for offset, value in bytes_at.items():
        block[offset] = value
    answer.write_text(block.hex())


def test_a_sandisk_card_is_sent_the_read_form_alone_and_says_it_did_not_answer():
    result, mmc = asked(DATA / "rpi4_sd")
    assert [sent.command for sent in mmc.sent] == [MmcCommand(56, 0x00000001)]
    assert not any(sent.command.write for sent in mmc.sent)
    assert any(
        "the card did not answer its vendor's health command" in note for note in result.skipped
    )


def test_an_answer_of_all_0xff_is_no_answer(tmp_path):
    tree = copied_tree("sd_sandisk_industrial", tmp_path / "tree")
    (tree / "tools/ioctl/mmcblk0/cmd56_00000001.hex").write_text("ff " * 512)
    result, _ = asked(tree)
    assert result.health.vendor is None
    assert any("all 0x00 or 0xFF" in note for note in result.skipped)


def test_a_card_behind_a_usb_reader_is_not_asked(tmp_path):
    tree = copied_tree("usb_stick_usb_storage", tmp_path / "tree")
    answers = tree / "tools" / "ioctl"
    # Even with an answer laid out for it (a SanDisk reader's card), it is not asked.
    (answers / "sde").mkdir(parents=True)
    shutil.copy(DATA / "cmd56_layouts/sandisk_industrial.hex", answers / "sde/cmd56_00000001.hex")
    result, mmc = asked(tree, "/dev/sde")
    assert result.device_kind == "usb"
    assert mmc.sent == []


def test_an_sd_cards_life_used_is_a_reading_placed_at_the_bytes_counted_now(tmp_path):
    """WD Purple's health status 1 (0-1% used) at 100 GB since boot, 3 (2-3%) at 400 GB two
    days later: the 300 GB between bound K on both sides (a step of 1% crossed whole)."""
    tree = copied_tree("sd_wd_purple", tmp_path / "tree")
    roots = tree_roots(tree)
    mmc = RecordedMmcIoctl(tree / "tools" / "ioctl")
    write_boot(tree, "boot-1", 100.0)
    answer = tree / "tools/ioctl/mmcblk0/cmd56_00000001.hex"
    readings: list[HealthResult] = []
    for day, written, status in ((0, 100e9, 1), (2, 400e9, 3)):
        write_counter(tree / "sys" / RPI4_CARD / "block/mmcblk0/stat", written)
        rewrite_answer(answer, {8: status})
        result = check_health(HealthRequest("/"), readings, roots, now=1e9 + day * DAY, mmc=mmc)
        readings.append(result)
    forecast = readings[-1].forecast
    assert readings[-1].health.wear_read == "cmd56"
    k_low, k_high = 300e9 / (0.03 - 0.0), 300e9 / (0.02 - 0.01)
    assert forecast.years_low == pytest.approx((1 - 0.03) * k_low / 150e9 / 365.25, rel=1e-3)
    assert forecast.years_high == pytest.approx((1 - 0.02) * k_high / 150e9 / 365.25, rel=1e-3)


# -- eMMC: EXT_CSD live ------------------------------------------------------------------------


class EmmcWithAnswers:
    """The recorded EXT_CSD tree, copied: its counter and its EXT_CSD answer set by the test,
    its sysfs life estimate left at what the kernel read at card start."""

    def __init__(self, folder: Path) -> None:
        self.tree = copied_tree("emmc_ext_csd", folder)
        self.roots = tree_roots(self.tree)
        write_boot(self.tree, "boot-1", 100.0)

    def publish(self, written_since_boot: float, estimate: int) -> None:
        write_counter(self.tree / "sys" / EMMC_DEVICE / "block/mmcblk1/stat", written_since_boot)
        answer = self.tree / "tools/ioctl/mmcblk1/cmd8_00000000.hex"
        rewrite_answer(answer, {268: estimate, 269: estimate})


def test_the_live_ext_csd_is_read_as_root_and_placed_at_the_bytes_counted_now(tmp_path):
    """Two readings in one boot, 300 GB apart, the second a step higher: read live, they bound
    K from below at 300 GB over the two brackets; read from sysfs, both hold at the boot's
    start and bound nothing."""
    emmc = EmmcWithAnswers(tmp_path / "tree")
    mmc = RecordedMmcIoctl(emmc.tree / "tools" / "ioctl")
    emmc.publish(100e9, 0x01)
    first = check_health(HealthRequest("/"), [], emmc.roots, now=1e9, mmc=mmc)
    assert first.health.wear_read == "ext_csd" and first.health.life_time_a == "0-10%"
    emmc.publish(400e9, 0x02)
    second = check_health(HealthRequest("/"), [first], emmc.roots, now=1e9 + 2 * DAY, mmc=mmc)
    assert second.health.life_time_a == "10-20%"
    # K >= 300 GB / (0.2 - 0.0); left at least (1 - 0.2) K at 150 GB a day.
    k_low = 300e9 / 0.2
    expected = (1 - 0.2) * k_low / 150e9 / 365.25
    assert second.forecast.years_low == pytest.approx(expected, rel=1e-3)

    sysfs = check_health(
        HealthRequest("/"),
        [first],
        emmc.roots,
        now=1e9 + 2 * DAY,
        mmc=RecordedMmcIoctl(emmc.tree / "tools", privileged=False),
    )
    assert sysfs.health.wear_read is None
    assert any("EXT_CSD live needs root" in note for note in sysfs.skipped)


def test_a_failed_ext_csd_read_keeps_the_kernels_copy_and_says_so(tmp_path):
    tree = copied_tree("emmc_ext_csd", tmp_path / "tree")
    (tree / "tools/ioctl/mmcblk1/cmd8_00000000.hex").unlink()
    result, _ = asked(tree)
    assert result.health.wear_read is None and result.health.life_time_a == "0-10%"
    assert any("EXT_CSD not read live" in note for note in result.skipped)


def test_a_recorded_block_of_another_length_is_refused():
    with pytest.raises(MmcCommandFailed):
        parse_hex_block("00 " * 511)


class LiveSimulatedEmmc(SimulatedEmmc):
    """test_health_check's simulated eMMC, its EXT_CSD answering the wear now (as root)."""

    def __init__(self, folder: Path, bytes_per_life: float, worn: float, now: float) -> None:
        super().__init__(folder, bytes_per_life, worn, now)
        shutil.copytree(DATA / "emmc_ext_csd" / "tools", folder / "tools")
        self.roots = tree_roots(folder)
        self.mmc = RecordedMmcIoctl(folder / "tools" / "ioctl")

    def publish(self, now: float) -> None:
        super().publish(now)
        estimate = min(11, int(self.wear * 10) + 1)
        answer = self.folder / "tools/ioctl/mmcblk1/cmd8_00000000.hex"
        rewrite_answer(answer, {268: estimate, 269: estimate})


def test_daily_live_readings_narrow_the_interval_to_3_from_the_second_step(tmp_path):
    """test_health_check's year of readings, read live: every interval holds the true years
    left, and from the second step on (not the third, as from sysfs) it is at most 3 wide."""
    device = LiveSimulatedEmmc(tmp_path / "tree", bytes_per_life=12e12, worn=0.05, now=1.8e9)
    readings = daily_readings(device, steps=2, mmc=device.mmc)
    assert readings[-1].health.wear_read == "ext_csd"
    forecast = readings[-1].forecast
    assert forecast.years_low is not None and forecast.years_high is not None
    assert forecast.years_high / forecast.years_low <= 3


# -- what is never sent ------------------------------------------------------------------------


def test_the_two_step_form_sends_its_write_before_its_read():
    tree = DATA / "sd_kingston_sdce"
    result, mmc = asked(tree)
    assert [sent.command for sent in mmc.sent] == [
        MmcCommand(56, 0x00000010, write=True),
        MmcCommand(56, 0x00000021),
    ]
    assert result.health.vendor is not None and result.health.wear_read == "cmd56"


RPI5_CARD = "devices/platform/axi/1000fff000.mmc/mmc_host/mmc0/mmc0:5048"


def samsung_cid(tree: Path) -> None:
    """Samsung's MID and OEM id (mmc.py's table): no vendor command is known for it."""
    (tree / "sys" / RPI5_CARD / "cid").write_text("1b534d" + "4544363447613698006501" + "3b00\n")


def consumer_kingston_cid(tree: Path) -> None:
    """Only Kingston's High Endurance and Industrial lines answer the two-step form: this CID
    names another product (rpi5_a2's SD64G)."""
    cid = (tree / "sys" / RPI5_CARD / "cid").read_text().strip()
    (tree / "sys" / RPI5_CARD / "cid").write_text(cid[:6] + b"SD64G".hex() + cid[16:] + "\n")


def moved_under_usb(tree: Path) -> None:
    """The card's host moved under a USB card reader's driver, as Realtek's rtsx_usb_sdmmc
    shows one (the kernel still names it mmcblkN); every link to it follows."""
    old = "1000fff000.mmc"
    new = "1000fff000.usb/usb1/1-2/1-2:1.0/rtsx_usb_sdmmc.4"
    axi = tree / "sys/devices/platform/axi"
    (axi / new).parent.mkdir(parents=True)
    (axi / old).rename(axi / new)
    for link in (tree / "sys").rglob("*"):
        if link.is_symlink() and old in str(link.readlink()):
            target = str(link.readlink()).replace(old, new)
            link.unlink()
            link.symlink_to(target)


# (recorded tree, the change made to a copy of it, how it is asked, the note saying why); the
# sd_apacer_industrial and sd_kingston_sdce cards answer the two-step form if sent it.
NOT_ASKED = [
    # MID 0x27 is Apacer's and the Phison controller's, which other makers' cards carry: the
    # two-step write would reach cards of unknown makers.
    ("sd_apacer_industrial", None, {}, "no vendor health command is known"),
    ("sd_kingston_sdce", samsung_cid, {}, "no vendor health command is known"),
    ("sd_kingston_sdce", consumer_kingston_cid, {}, "not to this 'SD64G'"),
    ("sd_kingston_sdce", moved_under_usb, {}, "behind a USB reader is never asked"),
    ("sd_wd_purple", None, {"privileged": False}, "needs root: sudo flashmark health /"),
    # `health --record` (the timer's) asks no vendor health
    ("sd_wd_purple", None, {"vendor_health": False}, "--record does not ask vendor health"),
]


@pytest.mark.parametrize(
    ("tree", "change", "how", "note"), NOT_ASKED, ids=lambda value: getattr(value, "__name__", None)
)
def test_a_card_not_to_be_asked_is_sent_nothing_and_told_why(tmp_path, tree, change, how, note):
    copied = copied_tree(tree, tmp_path / "tree")
    if change is not None:
        change(copied)
    result, mmc = asked(copied, **how)
    assert result.device_kind == "sd" and result.card_cid is not None  # the card was found
    assert mmc.sent == [] and result.health.vendor is None
    assert any(note in skipped for skipped in result.skipped)


def test_an_unattended_reading_still_reads_an_emmcs_ext_csd():
    """EXT_CSD is a standard read: `health --record` still sends it."""
    emmc = DATA / "emmc_ext_csd"
    read, mmc = asked(emmc, vendor_health=False)
    assert [sent.command for sent in mmc.sent] == [MmcCommand(8, 0)]
    assert read.health.wear_read == "ext_csd"


def test_health_record_keeps_a_reading_without_vendor_health(tmp_path):
    env = recorded_env("sd_wd_purple", tmp_path / "history.db")
    result = flashmark("health", "/", "--record", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    saved = json.loads(flashmark("show", "1", "--json", env=env).stdout)
    assert saved["health"].get("vendor") is None and "wear_read" not in saved["health"]
    assert any("--record does not ask vendor health" in note for note in saved["skipped"])


# -- answers refused ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decode", "name", "offset", "over_100", "left"),
    [
        (decode_adata, "adata_transcend_460t", 70, bytes([150]), "150.00%"),
        (decode_transcend, "transcend_illustrative", 70, bytes([150]), "150.00%"),
        (decode_swissbit, "swissbit_s56u", 80, bytes([150]), "150.00%"),
        (decode_longsys, "longsys_illustrative", 44, (300).to_bytes(4, "little"), "300.00%"),
        # the two-step layout's 453.00%, as sdmon issue #2 shows
        (decode_phison, "kingston_sdce", 96, (45300).to_bytes(2, "big"), "453.00%"),
        (decode_phison, "apacer_industrial", 96, (45300).to_bytes(2, "big"), "453.00%"),
    ],
    ids=["adata", "transcend", "swissbit", "longsys", "two-step", "two-step-apacer"],
)
def test_a_figure_of_over_100_percent_left_gives_no_life_used(decode, name, offset, over_100, left):
    decoded = decode(layout(name, offset, over_100))
    assert decoded is not None
    assert (decoded.life_used_low_pct, decoded.life_used_high_pct) == (None, None)
    assert decoded.other == (f"life remaining {left} (over 100)",)


def test_noise_is_not_read_as_the_two_step_layout():
    """The two-step layout has no signature; a card may answer random data (sdmon's Apacer
    report): none of a thousand random blocks passes its fields' checks."""
    rng = random.Random(14)
    for _ in range(1000):
        assert decode_phison(rng.randbytes(512)) is None
    assert decode_phison(b"\xff" * 512) is None  # a card that ignores the command


def test_an_ext_csd_before_emmc_5_keeps_the_kernels_copy_and_says_why(tmp_path):
    """EXT_CSD_REV 6 (eMMC 4.5): bytes 267-269 are reserved, whatever the card puts there."""
    tree = copied_tree("emmc_ext_csd", tmp_path / "tree")
    rewrite_answer(tree / "tools/ioctl/mmcblk1/cmd8_00000000.hex", {192: 6, 268: 5, 269: 5})
    result, _ = asked(tree)
    assert result.health.wear_read is None and result.health.life_time_a == "0-10%"
    assert any("EXT_CSD_REV 6" in note for note in result.skipped)


def test_every_vendor_command_is_of_the_shape_its_upload_rule_sends():
    from flashmark.probe.sd_vendor_health import VENDOR_COMMANDS
    from flashmark.upload_rules import table_of

    rule = table_of(VendorHealth)["command"]
    described = {entry.described(arg) for entry in VENDOR_COMMANDS for arg in entry.reads}
    assert len(described) >= 4 and any(", then CMD56 read" in text for text in described)
    for text in sorted(described):
        assert rule.build(text, "$.command", lambda _text: "an identifier") == text
