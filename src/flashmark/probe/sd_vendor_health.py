"""SD cards' vendor health through CMD56 (GEN_CMD): which command a card is sent, chosen by its
CID, and the layouts its answer is decoded by (docs/health.md has the table).

The SD standard leaves CMD56's data to each vendor. The arguments, the signatures and the byte
layouts are those sdmon reads (github.com/Ognian/sdmon, src/sdmon.c at commit 94cda42b,
2026-03-08); its code is not copied here. sdmon tries every command on every card; flashmark
sends a vendor's command only to a card whose CID names that vendor (MID, and OEM id where
one is published), and the two-step form (a 512-byte CMD56 write, then a read) only to the
product lines reported to answer it. Any CMD56 is a risk to a card that does not expect it:
a consumer Transcend card has been reported to vanish from the bus after sdmon's CMD56 read
and its two-step write (sdmon issue #43: the read came first), and a command left unanswered
stalls the host for about a second (sdmon issue #6). A layout is taken only when its
signature (or, for the two-step layout, which has none, the plausibility of its fields) is
there and the block is not all 0x00 or all 0xFF.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from flashmark.probe.mmc_ioctl import MmcCommand, MmcCommandFailed, MmcIoctl
from flashmark.probe.model import Cid, VendorHealth

GEN_CMD = 56
Decoder = Callable[[bytes], VendorHealth | None]


def _be(block: bytes, offset: int, size: int) -> int:
    return int.from_bytes(block[offset : offset + size], "big")


def _le(block: bytes, offset: int, size: int) -> int:
    return int.from_bytes(block[offset : offset + size], "little")


def _text(block: bytes, offset: int, size: int) -> str | None:
    raw = block[offset : offset + size].split(b"\0", 1)[0]
    text = "".join(chr(c) if 32 <= c < 127 else "?" for c in raw).strip()
    return text or None


class _LifeUsed(TypedDict):
    """VendorHealth's fields of life used, as `_remaining` reads them."""

    life_used_low_pct: float | None
    life_used_high_pct: float | None
    other: tuple[str, ...]  # a figure that gives no life used, said


def _remaining(percent: float, resolution: float) -> _LifeUsed:
    """Life used as a bracket from a figure of life remaining, read to `resolution` (either
    way: the layouts do not say whether they round or cut), to 0.01%. Over 100% left is no
    figure of life used (some cards answer so: sdmon issue #2 shows 453.00%): none, and said."""
    if percent > 100:
        return _LifeUsed(
            life_used_low_pct=None,
            life_used_high_pct=None,
            other=(f"life remaining {percent:.2f}% (over 100)",),
        )
    used = 100.0 - percent
    return _LifeUsed(
        life_used_low_pct=round(max(0.0, used - resolution), 2),
        life_used_high_pct=round(used + resolution, 2),
        other=(),
    )


def _signed(block: bytes, first: int, second: int) -> bool:
    return block[0] == first and block[1] == second


# -- the layouts (offsets as sdmon reads them; BE/LE the byte order of each figure) -----------


def decode_sandisk(block: bytes) -> VendorHealth | None:
    """SanDisk industrial ("DS") and Western Digital Purple ("DW"), arg 0x00000001: [2:8]
    manufactured YYMMDD (ASCII), [8] health status, percent of life used in 1% steps (0x01 =
    0-0.99%, 0x64 = 99-99.99%, may pass 100), [24:27] BE power-on count."""
    if not (_signed(block, 0x44, 0x53) or _signed(block, 0x44, 0x57)):
        return None
    status = block[8]
    return VendorHealth(
        vendor="SanDisk" if block[1] == 0x53 else "Western Digital",
        command="",
        life_used_low_pct=float(status - 1) if status else None,
        life_used_high_pct=float(status) if status else None,
        power_on_count=_be(block, 24, 3),
        manufactured=_text(block, 2, 6),
    )


def decode_longsys(block: bytes) -> VendorHealth | None:
    """Longsys ("pX"), arg 0x00000001, LE: [16] factory bad blocks, [20] grown bad blocks,
    [32] replacement blocks left, [36] wear in thousandths of a cycle, [44] life remaining %,
    [52] rated cycles."""
    if not _signed(block, 0x70, 0x58):
        return None
    life = _remaining(_le(block, 44, 4), 1.0)
    return VendorHealth(
        vendor="Longsys",
        command="",
        **life,
        erase_count_average=round(_le(block, 36, 4) / 1000),
        rated_erase_cycles=_le(block, 52, 4),
        spare_blocks=_le(block, 32, 4),
        bad_blocks_factory=_le(block, 16, 4),
        bad_blocks_grown=_le(block, 20, 4),
    )


def decode_micron(block: bytes) -> VendorHealth | None:
    """Micron ("ME"), arg 0x110005FB: [7] percentage step utilization, [8] TLC and [9] SLC
    area utilization (Micron TN-SD-02); kept as they are, not read as life used."""
    if not _signed(block, 0x4D, 0x45):
        return None
    return VendorHealth(
        vendor="Micron",
        command="",
        other=(
            f"percentage step utilization {block[7]}",
            f"TLC area utilization {block[8]}",
            f"SLC area utilization {block[9]}",
        ),
    )


def decode_swissbit(block: bytes) -> VendorHealth | None:
    """Swissbit ("Sw"), arg 0x53420001, BE: [32:48] firmware, user area [48] rated cycles,
    [52] max, [56] total, [60] average erase count, [80] life remaining %, [88] spare blocks,
    [96] grown bad blocks, [116] power cycles."""
    if not _signed(block, 0x53, 0x77):
        return None
    life = _remaining(block[80], 1.0)
    return VendorHealth(
        vendor="Swissbit",
        command="",
        **life,
        erase_count_average=_be(block, 60, 4),
        erase_count_max=_be(block, 52, 4),
        erase_count_total=_be(block, 56, 4),
        rated_erase_cycles=_be(block, 48, 4),
        spare_blocks=_be(block, 88, 4),
        bad_blocks_grown=_be(block, 96, 4),
        power_on_count=_be(block, 116, 4),
        firmware=_text(block, 32, 16),
    )


def decode_innodisk(block: bytes) -> VendorHealth | None:
    """Innodisk ("LX"), arg 0x110005FD: [24] spare blocks, [25] factory and [26] grown bad
    blocks, [27] spare utilization %, BE [28] power-loss failures, [36] max, [40] total,
    [44] average erase count, [53:69] firmware."""
    if not _signed(block, 0x4C, 0x58):
        return None
    return VendorHealth(
        vendor="Innodisk",
        command="",
        erase_count_average=_be(block, 44, 4),
        erase_count_max=_be(block, 36, 4),
        erase_count_total=_be(block, 40, 4),
        spare_blocks=block[24],
        bad_blocks_factory=block[25],
        bad_blocks_grown=block[26],
        power_loss_count=_be(block, 28, 4),
        firmware=_text(block, 53, 16),
        other=(f"spare utilization {block[27]}%",),
    )


def decode_adata(block: bytes) -> VendorHealth | None:
    """ADATA (0x09 0x41), arg 0x110005F1, BE: [24] factory and [26] grown bad blocks, [30]
    spare blocks, data area [36] max, [40] total, [44] average erase count, [68] rated cycles,
    [70] life remaining %, [76] power cycles, [128:134] firmware."""
    if not _signed(block, 0x09, 0x41):
        return None
    life = _remaining(block[70], 1.0)
    return VendorHealth(
        vendor="ADATA",
        command="",
        **life,
        erase_count_average=_be(block, 44, 4),
        erase_count_max=_be(block, 36, 4),
        erase_count_total=_be(block, 40, 4),
        rated_erase_cycles=_be(block, 68, 2),
        spare_blocks=_be(block, 30, 2),
        bad_blocks_factory=_be(block, 24, 2),
        bad_blocks_grown=block[26],
        power_on_count=_be(block, 76, 4),
        firmware=_text(block, 128, 6),
    )


def decode_transcend(block: bytes) -> VendorHealth | None:
    """Transcend ("Tr"), arg 0x110005F9: [26] grown bad blocks, [27] spare blocks, LE [28]
    abnormal power losses, [36] max and [44] average erase count, [70] life remaining %, BE
    [76] power cycles (2 bytes), [128:134] firmware. (sdmon adds [40:44] up byte by byte as a
    total; it is left out.)"""
    if not _signed(block, 0x54, 0x72):
        return None
    life = _remaining(block[70], 1.0)
    return VendorHealth(
        vendor="Transcend",
        command="",
        **life,
        erase_count_average=_le(block, 44, 4),
        erase_count_max=_le(block, 36, 4),
        spare_blocks=block[27],
        bad_blocks_grown=block[26],
        power_on_count=_be(block, 76, 2),
        power_loss_count=_le(block, 28, 4),
        firmware=_text(block, 128, 6),
    )


def decode_phison(block: bytes) -> VendorHealth | None:
    """The two-step layout (Apacer and Kingston industrial, Kingston High Endurance; their
    controller's): BE [16] spare blocks, [32:64] factory bad blocks per die (summed),
    [64] good block rate in 0.01%, [80] total erase count, [96] life remaining in 0.01%,
    average erase count [104]<<16 | [98], minimum [106]<<16 | [100], maximum [108]<<16 |
    [102] (2 bytes each), [112] power-ups, [128] abnormal power-offs, [176:184] product marker,
    [184:216] grown bad blocks per die (summed), [11] [12] firmware.

    It has no signature, and a card that does not know the command may answer noise (sdmon
    issue #14): the block is taken only when its fields agree with the layout, a good block
    rate from 0.01% to 100.00%, erase counts minimum <= average <= maximum, and a product marker
    of zeros or ASCII text (sdmon's examples: zeros, and "pSLC" on a Kingston SDCIT2)."""
    good_rate = _be(block, 64, 2)
    average = (_be(block, 104, 2) << 16) | _be(block, 98, 2)
    least = (_be(block, 106, 2) << 16) | _be(block, 100, 2)
    most = (_be(block, 108, 2) << 16) | _be(block, 102, 2)
    marker = block[176:184].rstrip(b"\0")
    plausible = (
        0 < good_rate <= 10000
        and least <= average <= most
        and all(32 <= byte < 127 for byte in marker)
    )
    if not plausible:
        return None
    life = _remaining(_be(block, 96, 2) / 100, 0.01)
    return VendorHealth(
        vendor="Phison (Apacer, Kingston)",
        command="",
        **life,
        erase_count_average=average,
        erase_count_max=most,
        erase_count_total=_be(block, 80, 4),
        spare_blocks=_be(block, 16, 2),
        bad_blocks_factory=sum(block[32:64]),
        bad_blocks_grown=sum(block[184:216]),
        power_on_count=_be(block, 112, 4),
        power_loss_count=_be(block, 128, 2),
        firmware=f"{block[11]}.{block[12]}",
    )


# -- who is asked what ------------------------------------------------------------------------


@dataclass(frozen=True)
class VendorCommand:
    """A vendor's CMD56: sent to cards whose CID's MID (and OEM id, when given) match."""

    vendor: str
    mids: frozenset[int]
    oem: str | None  # the CID's OEM id as text; None: any
    reads: tuple[int, ...]  # the reads' arguments, tried in turn until one answers
    decoders: tuple[Decoder, ...]
    prepare_arg: int | None = None  # the two-step form: a CMD56 write of this argument first
    # The product lines asked, as the start of the CID's product name; empty: any of the maker's.
    products: tuple[str, ...] = ()

    def matches(self, cid: Cid) -> bool:
        return cid.manufacturer_id in self.mids and self.oem in (None, cid.oem_id_text)

    def asks(self, cid: Cid) -> bool:
        """Whether this card's product line is one that is sent the command."""
        return not self.products or cid.product_name.startswith(self.products)

    def described(self, arg: int) -> str:
        read = f"CMD56 read 0x{arg:08x}"
        if self.prepare_arg is None:
            return read
        return f"CMD56 write 0x{self.prepare_arg:08x}, then {read}"


# CIDs: SanDisk 0x03 "SD", Linux drivers/mmc/core/card.h CID_MANFID_SANDISK_SD (sdmon issue #41
# shows its `mmc cid read` 'SanDisk' 'SD'); ADATA 0x1D "AD", ThomasKaiser/sbc-bench
# results/SD-cards-with-low-serial-numbers.md; Transcend 0x1C, 0x1E, 0x74, mmc-utils lsmmc.c's
# table (0x74 with linux-automation/usbsdmux PR #62's CID; a Transcend 460T answers ADATA's
# argument in ADATA's layout, sdmon issue #44, so Transcend cards are asked both); Kingston
# 0x9F, card.h CID_MANFID_KINGSTON_SD, and 0x41, lsmmc.c; of Kingston's cards only the High
# Endurance line (SDCE, sdmon issue #30) and the Industrial line (SDCIT and SDCIT2, sdmon issue
# #6, and PR #33: readme.md's SDCIT2/8GB example) are reported to answer the two-step form,
# and its write goes to no other (a consumer card such as an SD64G is asked nothing). Their
# CIDs' product names are not published: the part numbers' stems stand for them. Apacer's
# 0x27 (card.h CID_MANFID_APACER) is the Phison controller's MID, which other brands'
# consumer cards carry too, and no Apacer OEM id is published to tell Apacer's apart: the
# two-step write would reach cards of unknown makers, so 0x27 is asked nothing (its layout is
# Kingston's, decoded the same). Micron, Swissbit and Innodisk cards have no published SD CID:
# their layouts are decoded (a Longsys answer comes to SanDisk's argument) but their commands
# are sent to no card.
KINGSTON_ANSWERING = ("SDCE", "SDCIT")
VENDOR_COMMANDS: tuple[VendorCommand, ...] = (
    VendorCommand(
        "SanDisk / Western Digital", frozenset({0x03}), "SD", (0x00000001,),
        (decode_sandisk, decode_longsys),
    ),
    VendorCommand("ADATA", frozenset({0x1D}), "AD", (0x110005F1,), (decode_adata,)),
    VendorCommand(
        "Transcend", frozenset({0x1C, 0x1E, 0x74}), None, (0x110005F9, 0x110005F1),
        (decode_transcend, decode_adata),
    ),
    VendorCommand(
        "Kingston", frozenset({0x41, 0x9F}), None, (0x00000021,), (decode_phison,),
        prepare_arg=0x00000010, products=KINGSTON_ANSWERING,
    ),
)  # fmt: skip
# Decoded when a card answers so, but sent to none (above).
UNSENT_LAYOUTS: dict[str, tuple[int, Decoder]] = {
    "Micron": (0x110005FB, decode_micron),
    "Swissbit": (0x53420001, decode_swissbit),
    "Innodisk": (0x110005FD, decode_innodisk),
}


def vendor_command(
    cid: Cid, table: Sequence[VendorCommand] = VENDOR_COMMANDS
) -> VendorCommand | None:
    """The command this card's CID names a vendor for; None: it is asked nothing."""
    return next((entry for entry in table if entry.matches(cid)), None)


def _valid(block: bytes) -> bool:
    """Not all 0x00 and not all 0xFF: what a card that ignores the command sends."""
    return block.count(0x00) != len(block) and block.count(0xFF) != len(block)


def read_vendor_health(device: str, entry: VendorCommand, mmc: MmcIoctl) -> VendorHealth:
    """Send `entry`'s command to /dev/`device` and decode the answer; MmcCommandFailed when
    the card does not answer, or answers with no layout of its vendor's."""
    if entry.prepare_arg is not None:
        mmc.send(device, MmcCommand(GEN_CMD, entry.prepare_arg, write=True))
    failures: list[str] = []
    for arg in entry.reads:
        try:
            block = mmc.send(device, MmcCommand(GEN_CMD, arg))
        except MmcCommandFailed as error:
            failures.append(str(error))
            continue
        if not _valid(block):
            failures.append(f"{entry.described(arg)}: an empty block (all 0x00 or 0xFF)")
            continue
        for decode in entry.decoders:
            found = decode(block)
            if found is not None:
                return replace(found, command=entry.described(arg))
        failures.append(
            f"{entry.described(arg)}: an answer in no known layout (it begins "
            f"0x{block[0]:02x} 0x{block[1]:02x})"
        )
    raise MmcCommandFailed("; ".join(failures))
