"""SD and eMMC card registers: decoders for CID, CSD, SCR and SSR, and the manufacturer table.

Pure functions from the hex text the kernel prints in sysfs (drivers/mmc/core/sd.c, mmc.c) to
dataclasses; text of another shape raises RegisterFormatError quoting it. Bit positions: SD
Physical Layer Simplified Specification 6.00 (CID 5.2, CSD 5.3, SCR 5.6, SD Status 4.10.2) and
JEDEC JESD84-B51 for eMMC (CID 7.2, CSD 7.3); `[hi:lo]` in comments are those bits
(docs/probe.md has each register's fields).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from flashmark.errors import FlashmarkError
from flashmark.probe.model import Card, Cid, Claims, Csd, Scr, Ssr, Unreadable
from flashmark.system.sysroot import SystemRoots

T = TypeVar("T")


class RegisterFormatError(FlashmarkError):
    """A register's sysfs text is not what the kernel prints for it (quoted in the message)."""


def _register(raw: str, name: str, bits: int) -> int:
    text = raw.strip().lower()
    digits = bits // 4
    if len(text) != digits or any(c not in string.hexdigits for c in text):
        raise RegisterFormatError(
            f"{name} is not {digits} hex digits (the kernel prints {bits} bits): {raw!r}"
        )
    return int(text, 16)


def _bits(value: int, high: int, low: int) -> int:
    return (value >> low) & ((1 << (high - low + 1)) - 1)


def _ascii(value: int, length: int) -> str:
    chars = value.to_bytes(length, "big")
    return "".join(chr(c) if 32 <= c < 127 else "?" for c in chars)


# --- CID ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _CidFields:
    """Where a CID holds the fields SD and eMMC place differently, as [hi:lo] bits; the OEM id
    and the product name are ASCII, a character a byte (the manufacturer id is [127:120] in
    both, the date differs in more than its place)."""

    oem_id: tuple[int, int]
    product_name: tuple[int, int]
    revision: tuple[int, int]  # BCD n.m
    serial: tuple[int, int]

    def decode(self, raw: str, value: int, year: int, month: int) -> Cid:
        oid = _bits(value, *self.oem_id)
        oid_chars = (self.oem_id[0] - self.oem_id[1] + 1) // 8
        name_chars = (self.product_name[0] - self.product_name[1] + 1) // 8
        prv = _bits(value, *self.revision)
        return Cid(
            raw=raw.strip(),
            manufacturer_id=_bits(value, 127, 120),
            oem_id=f"0x{oid:0{2 * oid_chars}x}",
            oem_id_text=_ascii(oid, oid_chars),
            product_name=_ascii(_bits(value, *self.product_name), name_chars).rstrip(),
            revision=f"{prv >> 4}.{prv & 0xF}",
            serial=_bits(value, *self.serial),
            manufactured=f"{year:04d}-{month:02d}" if 1 <= month <= 12 else None,
        )


_SD_CID = _CidFields(oem_id=(119, 104), product_name=(103, 64), revision=(63, 56), serial=(55, 24))
_MMC_CID = _CidFields(oem_id=(111, 104), product_name=(103, 56), revision=(55, 48), serial=(47, 16))


def decode_sd_cid(raw: str) -> Cid:
    """SD CID (Simplified Spec 5.2): MID [127:120], OID [119:104], PNM [103:64] (5 chars),
    PRV [63:56] (BCD n.m), PSN [55:24], MDT [19:8] = year-2000 [19:12], month [11:8]."""
    value = _register(raw, "cid", 128)
    year, month = 2000 + _bits(value, 19, 12), _bits(value, 11, 8)
    return _SD_CID.decode(raw, value, year, month)


def decode_mmc_cid(raw: str, ext_csd_rev: int | None = None) -> Cid:
    """eMMC CID (JESD84-B51 7.2): MID [127:120], CBX [113:112], OID [111:104],
    PNM [103:56] (6 chars), PRV [55:48], PSN [47:16], MDT [15:8] = month [15:12],
    year [11:8] counted from 1997; from EXT_CSD_REV 5 (eMMC 4.41) on, years 0-12 count
    from 2013 (the kernel does the same in mmc_decode_cid(), drivers/mmc/core/mmc.c)."""
    value = _register(raw, "cid", 128)
    month, year = _bits(value, 15, 12), 1997 + _bits(value, 11, 8)
    if ext_csd_rev is not None and ext_csd_rev >= 5 and year < 2010:
        year += 16
    return _MMC_CID.decode(raw, value, year, month)


# The card type (the sysfs `type` of an MMC host's card) of each device kind with a CID.
CARD_TYPE_OF_KIND = {"sd": "SD", "emmc": "MMC"}


def decode_cid(card_type: str, raw: str) -> Cid:
    """A CID of `card_type` ("SD", else eMMC's layout)."""
    return decode_sd_cid(raw) if card_type == "SD" else decode_mmc_cid(raw)


# --- CSD ------------------------------------------------------------------------------------


def decode_sd_csd(raw: str) -> Csd:
    """SD CSD (Simplified Spec 5.3). CSD_STRUCTURE [127:126]: 0 = version 1.0 (SDSC),
    1 = 2.0 (SDHC/SDXC), 2 = 3.0 (SDUC).
    v1: capacity = (C_SIZE [73:62] + 1) * 2^(C_SIZE_MULT [49:47] + 2) * 2^READ_BL_LEN [83:80].
    v2: capacity = (C_SIZE [69:48] + 1) * 512 KiB. v3: C_SIZE [75:48], same formula."""
    value = _register(raw, "csd", 128)
    structure = _bits(value, 127, 126)
    if structure == 0:
        c_size, mult, block_len = _bits(value, 73, 62), _bits(value, 49, 47), _bits(value, 83, 80)
        capacity: int | None = (c_size + 1) * (1 << (mult + 2)) * (1 << block_len)
        version = "1.0 (SDSC)"
    elif structure == 1:
        capacity = (_bits(value, 69, 48) + 1) * 512 * 1024
        version = "2.0 (SDHC/SDXC)"
    elif structure == 2:
        capacity = (_bits(value, 75, 48) + 1) * 512 * 1024
        version = "3.0 (SDUC)"
    else:
        raise RegisterFormatError(f"csd has the reserved CSD_STRUCTURE 3: {raw!r}")
    return Csd(raw=raw.strip(), structure=structure, version=version, capacity_bytes=capacity)


def decode_mmc_csd(raw: str) -> Csd:
    """eMMC CSD (JESD84-B51 7.3): CSD_STRUCTURE [127:126], SPEC_VERS [125:122]. Devices over
    2 GB set C_SIZE [73:62] to 0xFFF and give their size in EXT_CSD SEC_COUNT instead."""
    value = _register(raw, "csd", 128)
    structure, spec = _bits(value, 127, 126), _bits(value, 125, 122)
    c_size = _bits(value, 73, 62)
    capacity = None
    if c_size != 0xFFF:
        mult, block_len = _bits(value, 49, 47), _bits(value, 83, 80)
        capacity = (c_size + 1) * (1 << (mult + 2)) * (1 << block_len)
    # CSD_STRUCTURE 0..2 = CSD version 1.0..1.2; 3 = the version is in EXT_CSD_STRUCTURE.
    label = f"CSD 1.{structure}" if structure < 3 else "CSD version in EXT_CSD"
    return Csd(
        raw=raw.strip(),
        structure=structure,
        version=f"{label}, SPEC_VERS {spec}",
        capacity_bytes=capacity,
    )


# --- SCR ------------------------------------------------------------------------------------


def decode_scr(raw: str) -> Scr:
    """SD Configuration Register (Simplified Spec 5.6, Table 5-17 for the version):
    SD_SPEC [59:56], SD_BUS_WIDTHS [51:48] (bit 0 = 1 bit, bit 2 = 4 bit), SD_SPEC3 [47],
    SD_SPEC4 [42], SD_SPECX [41:38]."""
    value = _register(raw, "scr", 64)
    spec, spec3 = _bits(value, 59, 56), _bits(value, 47, 47)
    spec4, specx = _bits(value, 42, 42), _bits(value, 41, 38)
    widths = _bits(value, 51, 48)
    if spec == 0:
        version = "1.0x"
    elif spec == 1:
        version = "1.10"
    elif spec == 2 and not spec3:
        version = "2.00"
    elif spec == 2 and specx:
        # SD_SPECX 1..5 = Physical Layer 5.xx..9.xx (Table 5-17).
        version = f"{specx + 4}.xx"
    elif spec == 2 and spec4:
        version = "4.xx"
    elif spec == 2:
        version = "3.0x"
    else:
        raise RegisterFormatError(f"scr has the reserved SD_SPEC {spec}: {raw!r}")
    bus_widths = tuple(bits for bit, bits in ((0, 1), (2, 4)) if widths & (1 << bit))
    return Scr(raw=raw.strip(), spec_version=version, bus_widths=bus_widths)


# --- SSR (SD Status) ------------------------------------------------------------------------

# SPEED_CLASS [447:440]: Simplified Spec 4.10.2.2, Table 4-43.
_SPEED_CLASS = {0: "C0", 1: "C2", 2: "C4", 3: "C6", 4: "C10"}
# UHS_SPEED_GRADE [399:396]: 4.10.2, Table 4-49 (0 = below 10 MB/s, 1 = U1, 3 = U3).
_UHS_GRADE = {1: "U1", 3: "U3"}
# VIDEO_SPEED_CLASS [391:384]: 4.10.2, Table 4-51 (the value is the class's MB/s).
_VIDEO_CLASS = {6: "V6", 10: "V10", 30: "V30", 60: "V60", 90: "V90"}
# APP_PERF_CLASS [339:336]: 4.10.2 (Physical Layer 5.10+), 1 = A1, 2 = A2.
_APP_CLASS = {1: "A1", 2: "A2"}
# AU_SIZE [431:428]: 4.10.2.4, Table 4-47; the kernel's sd_au_size[] has the same values.
_AU_SIZE_KIB = {
    1: 16, 2: 32, 3: 64, 4: 128, 5: 256, 6: 512, 7: 1024, 8: 2048, 9: 4096,
    10: 8192, 11: 12288, 12: 16384, 13: 24576, 14: 32768, 15: 65536,
}  # fmt: skip


def decode_ssr(raw: str) -> Ssr:
    """SD Status (512 bits). sysfs `ssr` prints it as 128 hex digits, most significant first,
    so digit i holds bits 511-4i..508-4i (drivers/mmc/core/sd.c prints raw_ssr[0..15]).
    PERFORMANCE_ENHANCE [335:328] (Physical Layer 6.00): bits 7:3 = command queue depth - 1
    (0 = no queue), bit 2 = cache supported."""
    value = _register(raw, "ssr", 512)
    enhance = _bits(value, 335, 328)
    queue = enhance >> 3
    au = _bits(value, 431, 428)
    return Ssr(
        raw=raw.strip(),
        speed_class=_SPEED_CLASS.get(_bits(value, 447, 440)),
        uhs_grade=_UHS_GRADE.get(_bits(value, 399, 396)),
        video_class=_VIDEO_CLASS.get(_bits(value, 391, 384)),
        app_class=_APP_CLASS.get(_bits(value, 339, 336)),
        au_size_bytes=_AU_SIZE_KIB[au] * 1024 if au in _AU_SIZE_KIB else None,
        command_queue_depth=queue + 1 if queue else 0,
        cache_supported=bool(enhance & 0b100),
    )


def claims_from_ssr(ssr: Ssr | None) -> Claims:
    if ssr is None:
        return Claims()
    # C0 means "not classed": it is no claim.
    speed = ssr.speed_class if ssr.speed_class != "C0" else None
    return Claims(speed, ssr.uhs_grade, ssr.video_class, ssr.app_class)


# --- Manufacturers --------------------------------------------------------------------------


@dataclass(frozen=True)
class Maker:
    name: str
    source: str


# Sources (full citations in docs/probe.md, "Manufacturer table"):
_KERNEL = "Linux drivers/mmc/core/card.h CID_MANFID_* (v6.12)"
_P2 = "ironsheep/P2-uSD-FS DOCs/CARD-CATALOG.md (cards read with their labels)"
_ARMBIAN = "armbian/build PR #246 (armhwinfo SD card log, 2016)"
_MMC_LIST = "linux-mmc list, 2023-06-16, M. Vasut: Kingston SD64G registers"
_USBSDMUX = "linux-automation/usbsdmux PR #62 (CID decoder test data)"

# SD cards: identified by the (MID, OID) pair, since MIDs alone are shared and contested.
_SD_MAKERS: dict[tuple[int, str], Maker] = {
    (0x03, "SD"): Maker("SanDisk (Western Digital)", f"{_P2}; {_KERNEL}: SANDISK_SD 0x3"),
    (0x1B, "SM"): Maker("Samsung", _P2),
    (0x27, "PH"): Maker(
        "Phison (controller; sold as PNY, Intenso, Verbatim and others)",
        f"{_P2}: MID $27 = PNY/Phison; {_ARMBIAN}; kernel card.h names 0x27 APACER",
    ),
    (0x74, "J`"): Maker("Transcend", _USBSDMUX),
    (0x9F, "TI"): Maker("Kingston", f"{_MMC_LIST}; {_KERNEL}: KINGSTON_SD 0x9F"),
}
# eMMC: JEDEC assigns MIDs; the kernel's card.h names the ones it has quirks for.
_MMC_MAKERS: dict[int, Maker] = {
    0x02: Maker("SanDisk", f"{_KERNEL}: SANDISK 0x2"),
    0x11: Maker("Toshiba/Kioxia", f"{_KERNEL}: TOSHIBA 0x11"),
    0x13: Maker("Micron", f"{_KERNEL}: MICRON 0x13"),
    0x15: Maker("Samsung", f"{_KERNEL}: SAMSUNG 0x15"),
    0x45: Maker("SanDisk", f"{_KERNEL}: SANDISK 0x45 (newer eMMC)"),
    0x70: Maker("Kingston", f"{_KERNEL}: KINGSTON 0x70"),
    0x90: Maker("SK hynix", f"{_KERNEL}: HYNIX 0x90"),
    0xFE: Maker("Micron (Numonyx)", f"{_KERNEL}: NUMONYX 0xFE"),
}


def name_manufacturer(card_type: str, cid: Cid) -> Maker | None:
    if card_type == "MMC":
        return _MMC_MAKERS.get(cid.manufacturer_id)
    return _SD_MAKERS.get((cid.manufacturer_id, cid.oem_id_text))


def counterfeit_flags(card_type: str, cid: Cid, csd: Csd | None) -> tuple[str, ...]:
    """Patterns reported on fake or relabelled cards. They are reasons to look closer, not
    proof: a flag says what was seen and why it is suspicious."""
    flags: list[str] = []
    if cid.serial == 0:
        flags.append("serial number is 0x00000000 (genuine cards carry a unique serial)")
    if card_type == "SD" and cid.manufacturer_id == 0x12:
        flags.append(
            "MID 0x12 is shared by many no-name and relabelled cards (the kernel names it "
            "Gigastone but notes the MID list is not public: card.h, 2024)"
        )
    if card_type == "SD" and cid.manufacturer_id == 0x00:
        flags.append("manufacturer ID is 0x00, which no SD Association member holds")
    if card_type == "SD" and (cid.manufacturer_id, cid.oem_id_text) == (0x03, "SD"):
        pass  # the common genuine SanDisk pair
    elif card_type == "SD" and cid.oem_id_text == "SD" and cid.manufacturer_id != 0x03:
        flags.append(f"OEM ID 'SD' (SanDisk's) with MID 0x{cid.manufacturer_id:02x}")
    if cid.manufactured is None:
        flags.append("manufacturing date field is not a valid month")
    if csd is not None and csd.capacity_bytes is not None and csd.capacity_bytes == 0:
        flags.append("CSD capacity is zero")
    return tuple(flags)


# --- Reading a card from sysfs --------------------------------------------------------------


def read_card(roots: SystemRoots, device_dir: str) -> tuple[Card, tuple[Unreadable, ...]]:
    """Decode the registers under a card's sysfs directory (the block device's `device/`)."""
    unreadable: list[Unreadable] = []
    card_type = (roots.read_sys(f"{device_dir}/type") or "SD").strip()

    def decode(name: str, decoder: Callable[[str], T]) -> T | None:
        text = roots.read_sys(f"{device_dir}/{name}")
        if text is None:
            return None
        try:
            return decoder(text)
        except (RegisterFormatError, ValueError) as error:
            unreadable.append(Unreadable(name, text, str(error)))
            return None

    ext_csd_rev: int | None
    try:
        ext_csd_rev = int(roots.read_sys(f"{device_dir}/rev") or "", 0)
    except ValueError:
        ext_csd_rev = None
    mmc = card_type == "MMC"
    cid = decode("cid", (lambda t: decode_mmc_cid(t, ext_csd_rev)) if mmc else decode_sd_cid)
    csd = decode("csd", decode_mmc_csd if mmc else decode_sd_csd)
    scr = None if mmc else decode("scr", decode_scr)
    ssr = None if mmc else decode("ssr", decode_ssr)
    maker = name_manufacturer(card_type, cid) if cid else None
    card = Card(
        type=card_type,
        cid=cid,
        csd=csd,
        scr=scr,
        ssr=ssr,
        manufacturer=maker.name if maker else None,
        manufacturer_source=maker.source if maker else None,
        counterfeit_flags=counterfeit_flags(card_type, cid, csd) if cid else (),
        claimed=claims_from_ssr(ssr),
    )
    return card, tuple(unreadable)
