"""The device's own alarms, from recorded sysfs trees and SMART values."""

from __future__ import annotations

import pytest

from flashmark.health.red_flags import red_flags, worn_out
from flashmark.probe.emmc_health import read_emmc_health
from flashmark.probe.model import Health, VendorHealth
from flashmark.probe.sd_vendor_health import (
    decode_adata,
    decode_longsys,
    decode_phison,
    decode_sandisk,
    decode_swissbit,
    decode_transcend,
)
from flashmark.system.sysroot import SystemRoots
from tests.health.test_card_reads import layout
from tests.probe.recorded import DATA

EMMC_DIR = "devices/platform/sunxi-mmc.2/mmc_host/mmc1/mmc1:0001"


def test_a_fresh_emmc_raises_none() -> None:
    roots = SystemRoots(sysfs=DATA / "emmc_wear" / "sys")
    health, unreadable = read_emmc_health(roots, EMMC_DIR)
    assert unreadable == ()
    assert health.pre_eol == "normal"
    assert red_flags(health) == ()


def test_emmc_end_of_life_and_pre_eol_are_flagged() -> None:
    flags = red_flags(Health(life_time_a="exceeded", life_time_b="90-100%", pre_eol="urgent"))
    assert flags == (
        "pre-EOL urgent: the reserved blocks are running out",
        "life time estimate A exceeded",
    )
    assert red_flags(Health(pre_eol="warning")) == (
        "pre-EOL warning: the reserved blocks are running out",
    )


def test_nvme_spare_and_every_critical_warning_bit_are_flagged() -> None:
    assert red_flags(Health(available_spare=9, available_spare_threshold=10)) == (
        "available spare 9% below its threshold 10%",
    )
    assert red_flags(Health(available_spare=10, available_spare_threshold=10)) == ()
    flags = red_flags(Health(critical_warning=0b100010))
    assert flags == (
        "critical warning: temperature beyond its threshold",
        "critical warning: persistent memory region read-only or unreliable",
    )
    assert red_flags(Health(critical_warning=0x80)) == ("critical warning 0x80",)


def test_only_wear_says_replace_it_and_the_spare_is_said_once() -> None:
    assert worn_out(Health(pre_eol="warning"))
    assert worn_out(Health(critical_warning=0b1000))  # media read-only
    assert not worn_out(Health(critical_warning=0b10))  # temperature
    assert not worn_out(Health(critical_warning=0b10000))  # volatile memory backup
    both = Health(critical_warning=0b1, available_spare=5, available_spare_threshold=10)
    assert red_flags(both) == ("critical warning: available spare below threshold",)
    assert worn_out(both)


def test_a_rated_life_used_up_is_flagged_as_wear_for_nvme_smart_and_sd_vendor_health() -> None:
    assert red_flags(Health(percentage_used=99)) == ()
    assert red_flags(Health(percentage_used=103)) == ("rated life used up: percentage used 103%",)
    assert worn_out(Health(percentage_used=100)) and not worn_out(Health(percentage_used=99))
    used_up = VendorHealth("SanDisk", "CMD56 read 0x00000001", 100.0, 101.0)
    assert red_flags(Health(vendor=used_up)) == (
        "rated life used up: SanDisk reports 100-101% used",
    )
    assert worn_out(Health(vendor=used_up))
    nearly = VendorHealth("SanDisk", "CMD56 read 0x00000001", 98.0, 99.0)
    assert red_flags(Health(vendor=nearly)) == () and not worn_out(Health(vendor=nearly))


# Each layout's life figure at its used-up answer and at the step before it: (decoder, layout,
# offset, its encoding of the used-up value, of the one before).
_LIFE_FIGURES = [
    (decode_sandisk, "sandisk_industrial", 8, bytes([0x65]), bytes([0x64])),  # used, 1% steps
    (decode_adata, "adata_transcend_460t", 70, bytes([0]), bytes([1])),  # remaining %
    (decode_transcend, "transcend_illustrative", 70, bytes([0]), bytes([1])),
    (decode_swissbit, "swissbit_s56u", 80, bytes([0]), bytes([1])),
    (decode_longsys, "longsys_illustrative", 44, bytes(4), (1).to_bytes(4, "little")),
    (decode_phison, "kingston_sdce", 96, (0).to_bytes(2, "big"), (1).to_bytes(2, "big")),  # 0.01%
]


@pytest.mark.parametrize(
    ("decode", "name", "offset", "used_up", "nearly"),
    _LIFE_FIGURES,
    ids=[figure[1] for figure in _LIFE_FIGURES],
)
def test_each_layouts_used_up_answer_is_flagged_and_the_step_before_is_not(
    decode, name, offset, used_up, nearly
) -> None:
    vendor = decode(layout(name, offset, used_up))
    assert vendor is not None
    flags = red_flags(Health(vendor=vendor))
    assert len(flags) == 1 and flags[0].startswith("rated life used up:")
    assert worn_out(Health(vendor=vendor))
    before = decode(layout(name, offset, nearly))
    assert before is not None and before.life_used_low_pct is not None
    assert red_flags(Health(vendor=before)) == () and not worn_out(Health(vendor=before))
