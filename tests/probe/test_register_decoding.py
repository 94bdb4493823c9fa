"""Golden checks of the CID/CSD/SCR/SSR decoders against published registers.

Each expected value is what the source says about that card (its label, the kernel's own
`date`/`serial` attributes printed next to the register, or the publisher's decode);
the sources are listed in tests/data/probe/*/SOURCES.md and docs/probe.md.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flashmark.probe.emmc_health import decode_life_time, decode_pre_eol
from flashmark.probe.mmc import (
    RegisterFormatError,
    counterfeit_flags,
    decode_mmc_cid,
    decode_mmc_csd,
    decode_scr,
    decode_sd_cid,
    decode_sd_csd,
    decode_ssr,
    name_manufacturer,
)

# Kingston SD64G, linux-mmc list 2023-06-16 (M. Vasut), "old 2019 card".
KINGSTON_SSR = (
    "000000000800000004009000011b391e000800000002ff0003000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000"
)


def test_kingston_sd64g_cid_matches_the_kernels_date_and_serial_attributes() -> None:
    cid = decode_sd_cid("9f544953443634476136980065013b00")
    assert cid.manufacturer_id == 0x9F
    assert (cid.oem_id, cid.oem_id_text) == ("0x5449", "TI")
    assert cid.product_name == "SD64G"
    assert cid.revision == "6.1"  # hwrev 0x6, fwrev 0x1 in the same listing
    assert cid.serial == 0x36980065  # serial:0x36980065
    assert cid.manufactured == "2019-11"  # date:11/2019


def test_kingston_sd64g_csd_capacity_is_the_58_gib_the_kernel_logged() -> None:
    csd = decode_sd_csd("400e00325b590001cfff7f800a400000")
    assert csd.structure == 1
    assert csd.capacity_bytes == (0x1CFFF + 1) * 512 * 1024  # C_SIZE 0x1cfff per the thread
    assert round(csd.capacity_bytes / 2**30, 1) == 58.0  # "mmcblk1: mmc1:5048 SD64G 58.0 GiB"


def test_kingston_sd64g_ssr_claims_c10_u3_v30_a2() -> None:
    ssr = decode_ssr(KINGSTON_SSR)
    assert (ssr.speed_class, ssr.uhs_grade, ssr.video_class, ssr.app_class) == (
        "C10",
        "U3",
        "V30",
        "A2",
    )
    # AU_SIZE 9 = 4 MiB, the same as the kernel's preferred_erase_size:4194304 (derived
    # by the kernel from this very field).
    assert ssr.au_size_bytes == 4194304
    assert ssr.command_queue_depth == 32
    assert ssr.cache_supported is True


def test_kingston_sd64g_scr_is_physical_layer_6() -> None:
    scr = decode_scr("0205848701006432")
    assert scr.spec_version == "6.xx"
    assert scr.bus_widths == (1, 4)


def test_sandisk_extreme_a2_sn64g_from_p2_card_catalog() -> None:
    # ironsheep/P2-uSD-FS DOCs/cards/sandisk-sn64g-64gb.md: "SanDisk SN64G ... SD 6.x rev8.6
    # SN:7E650771 2022/11", C_SIZE $1DBD3.
    cid = decode_sd_cid("035344534e363447867e650771016b8d")
    assert (cid.product_name, cid.revision, cid.serial, cid.manufactured) == (
        "SN64G",
        "8.6",
        0x7E650771,
        "2022-11",
    )
    csd = decode_sd_csd("400e0032db790001dbd37f800a4040f9")
    assert csd.capacity_bytes == (0x1DBD3 + 1) * 512 * 1024
    assert decode_scr("0245848700000000").spec_version == "6.xx"
    maker = name_manufacturer("SD", cid)
    assert maker is not None and maker.name.startswith("SanDisk")


def test_samsung_evo_select_gd4qt_scr_is_3_0x() -> None:
    # Same catalog, samsung-gd4qt-128gb.md: "SD 3.x rev3.0 ... 2018/05".
    cid = decode_sd_cid("1b534d474434515430c03055650125e9")
    assert (cid.product_name, cid.revision, cid.manufactured) == ("GD4QT", "3.0", "2018-05")
    assert decode_scr("02c5800300000000").spec_version == "3.0x"
    maker = name_manufacturer("SD", cid)
    assert maker is not None and maker.name == "Samsung"


def test_phison_sd16g_from_armbian_log() -> None:
    # armbian/build PR #246: date 11/2015, serial 0xda89b829, oemid 0x5048, manfid 0x27.
    cid = decode_sd_cid("275048534431364730da89b82900fb61")
    assert (cid.oem_id_text, cid.product_name, cid.serial, cid.manufactured) == (
        "PH",
        "SD16G",
        0xDA89B829,
        "2015-11",
    )
    assert decode_scr("0235800201000000").spec_version == "3.0x"
    assert decode_sd_csd("400e00325b59000073a77f800a4000eb").capacity_bytes == 15523119104
    maker = name_manufacturer("SD", cid)
    assert maker is not None and "Phison" in maker.name


def test_samsung_emmc_m8g1gc_date_uses_the_2013_offset_for_ext_csd_rev_6() -> None:
    # armbian/build PR #246: the 3.4 kernel printed date 05/1997 (before the kernel applied
    # the EXT_CSD_REV >= 5 offset); JESD84-B51 gives 2013 for this year code.
    cid = decode_mmc_cid("1501004d384731474303dc0db061506f", ext_csd_rev=6)
    assert (cid.manufacturer_id, cid.product_name, cid.serial) == (0x15, "M8G1GC", 0xDC0DB061)
    assert cid.manufactured == "2013-05"
    assert decode_mmc_cid("1501004d384731474303dc0db061506f").manufactured == "1997-05"
    csd = decode_mmc_csd("d02701320f5903fff6dbffef8e40400d")
    assert csd.structure == 3 and csd.capacity_bytes is None  # size lives in EXT_CSD
    maker = name_manufacturer("MMC", cid)
    assert maker is not None and maker.name == "Samsung"


@pytest.mark.parametrize(
    ("decoder", "text"),
    [
        (decode_sd_cid, "9f5449534436344761369800"),  # too short
        (decode_sd_csd, "zz0e00325b590001cfff7f800a400000"),  # not hex
        (decode_scr, ""),
        (decode_ssr, KINGSTON_SSR[:-2]),
    ],
)
def test_malformed_register_text_fails_loudly_quoting_it(
    decoder: Callable[[str], object], text: str
) -> None:
    with pytest.raises(RegisterFormatError) as raised:
        decoder(text)
    assert repr(text) in str(raised.value)


def test_counterfeit_patterns_zero_serial_and_mid_0x12() -> None:
    # The Kingston CID with MID set to 0x12 and PSN zeroed: the two patterns the flags cover.
    cid = decode_sd_cid("12544953443634476100000000013b00")
    flags = counterfeit_flags("SD", cid, None)
    assert any("serial number is 0x00000000" in flag for flag in flags)
    assert any("MID 0x12" in flag for flag in flags)
    genuine = decode_sd_cid("035344534e363447867e650771016b8d")
    assert counterfeit_flags("SD", genuine, None) == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0x01", "0-10%"), ("0x02", "10-20%"), ("0x0A", "90-100%"), ("0x0B", "exceeded")],
)
def test_emmc_life_time_encoding_from_jesd84(text: str, expected: str) -> None:
    assert decode_life_time(text) == expected


def test_emmc_pre_eol_encoding_and_out_of_range_values() -> None:
    assert [decode_pre_eol(v) for v in ("0x01", "0x02", "0x03")] == ["normal", "warning", "urgent"]
    with pytest.raises(ValueError, match="0x07"):
        decode_pre_eol("0x07")
