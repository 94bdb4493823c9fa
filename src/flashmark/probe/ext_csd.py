"""An eMMC's wear read live: EXT_CSD through CMD8 SEND_EXT_CSD (one 512-byte block), as
mmc-utils' `mmc extcsd read` does, instead of the copy the kernel read at card start (sysfs).

Byte offsets, JEDEC JESD84-B51 (eMMC 5.1) 7.4: PRE_EOL_INFO [267], DEVICE_LIFE_TIME_EST_TYP_A
[268], DEVICE_LIFE_TIME_EST_TYP_B [269]; their encodings are emmc_health's.
"""

from __future__ import annotations

from flashmark.probe.emmc_health import decode_life_time, decode_pre_eol
from flashmark.probe.mmc_ioctl import MmcCommand, MmcIoctl
from flashmark.probe.model import Health

SEND_EXT_CSD = MmcCommand(opcode=8, arg=0)
PRE_EOL_INFO = 267
LIFE_TIME_EST_TYP_A = 268
LIFE_TIME_EST_TYP_B = 269


def decode_ext_csd(block: bytes) -> Health:
    """The wear bytes of an EXT_CSD block; ValueError for a value outside the standard's."""
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
