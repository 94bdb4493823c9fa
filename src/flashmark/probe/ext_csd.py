"""An eMMC's wear read live: EXT_CSD through CMD8 SEND_EXT_CSD (one 512-byte block), as
mmc-utils' `mmc extcsd read` does, instead of the copy the kernel read at card start (sysfs).

Byte offsets, JEDEC JESD84-B51 (eMMC 5.1) 7.4: PRE_EOL_INFO [267], DEVICE_LIFE_TIME_EST_TYP_A
[268], DEVICE_LIFE_TIME_EST_TYP_B [269]; their encodings are emmc_health's. They are defined
from EXT_CSD_REV [192] 7 (eMMC 5.0, JESD84-B50) on: below it the bytes are reserved, and
whatever a card puts there is no wear.
"""

from __future__ import annotations

from flashmark.probe.emmc_health import decode_life_time, decode_pre_eol
from flashmark.probe.mmc_ioctl import MmcCommand, MmcIoctl
from flashmark.probe.model import Health

SEND_EXT_CSD = MmcCommand(opcode=8, arg=0)
PRE_EOL_INFO = 267
LIFE_TIME_EST_TYP_A = 268
LIFE_TIME_EST_TYP_B = 269
EXT_CSD_REV = 192
FIRST_REV_WITH_LIFE = 7  # eMMC 5.0


class NoLifeBytes(ValueError):
    """An EXT_CSD of a revision before the wear bytes were defined."""


def decode_ext_csd(block: bytes) -> Health:
    """The wear bytes of an EXT_CSD block; NoLifeBytes for a revision without them, ValueError
    for a value outside the standard's."""
    revision = block[EXT_CSD_REV]
    if revision < FIRST_REV_WITH_LIFE:
        raise NoLifeBytes(
            f"EXT_CSD_REV {revision}: the life bytes are defined from revision "
            f"{FIRST_REV_WITH_LIFE} (eMMC 5.0) on"
        )
    return Health(
        life_time_a=decode_life_time(f"0x{block[LIFE_TIME_EST_TYP_A]:02x}"),
        life_time_b=decode_life_time(f"0x{block[LIFE_TIME_EST_TYP_B]:02x}"),
        pre_eol=decode_pre_eol(f"0x{block[PRE_EOL_INFO]:02x}"),
        sources=("EXT_CSD read live (CMD8)",),
        wear_read="ext_csd",
    )


def read_ext_csd(device: str, mmc: MmcIoctl) -> Health:
    """Ask /dev/`device` for its EXT_CSD now; MmcCommandFailed or ValueError when it fails."""
    return decode_ext_csd(mmc.send(device, SEND_EXT_CSD))
