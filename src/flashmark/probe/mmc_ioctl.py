"""The one way flashmark sends a command to an MMC/SD card: the MMC_IOC_CMD ioctl on
/dev/mmcblkN, as mmc-utils' `mmc extcsd read` and sdmon do (docs/health.md).

Everything else receives an `MmcIoctl`; the live one packs the kernel's struct with `struct`
and calls `fcntl.ioctl` (no compiled code), the recorded one answers from a recorded tree
(tests/data/probe/README.md) and keeps what was sent, so tests can assert what a card was and
was not asked.

The kernel's struct (include/uapi/linux/mmc/ioctl.h, `struct mmc_ioc_cmd`): int write_flag,
int is_acmd, __u32 opcode, __u32 arg, __u32 response[4], unsigned int flags, blksz, blocks,
postsleep_min_us, postsleep_max_us, data_timeout_ns, cmd_timeout_ms, __u32 __pad, __u64
data_ptr. The __pad puts data_ptr at byte 64 on 32-bit and 64-bit machines alike (the header
says so), so the struct is 72 bytes everywhere and MMC_IOC_CMD = _IOWR(MMC_BLOCK_MAJOR 179, 0,
72) = 0xC048B300; data_ptr holds the buffer's address widened to 64 bits
(`mmc_ioc_cmd_set_data`).
"""

from __future__ import annotations

import array
import fcntl
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from flashmark.errors import EnvironmentProblem
from flashmark.system.sysroot import SystemRoots

BLOCK_BYTES = 512
# 16 native 32-bit fields (write_flag .. __pad) then the 64-bit data_ptr: 72 bytes, no padding
# left to the compiler ("=" takes standard sizes in native byte order).
_IOC_CMD = struct.Struct("=2i2I4I8IQ")
assert _IOC_CMD.size == 72
# _IOWR(type, nr, size) = (3 << 30) | (size << 16) | (type << 8) | nr (asm-generic/ioctl.h).
MMC_BLOCK_MAJOR = 179
MMC_IOC_CMD = (3 << 30) | (_IOC_CMD.size << 16) | (MMC_BLOCK_MAJOR << 8) | 0
# Response and command types, include/linux/mmc/core.h (kernel-internal; mmc-utils and sdmon
# carry the same values).
MMC_RSP_PRESENT = 1 << 0
MMC_RSP_CRC = 1 << 2
MMC_RSP_OPCODE = 1 << 4
MMC_CMD_ADTC = 1 << 5
MMC_RSP_SPI_S1 = 1 << 7
MMC_RSP_R1 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE
# A data read: R1 response, addressed data transfer (mmc-utils' read_extcsd, sdmon's read).
READ_FLAGS = MMC_RSP_SPI_S1 | MMC_RSP_R1 | MMC_CMD_ADTC
# sdmon's CMD56 write: R1, addressed data transfer.
WRITE_FLAGS = MMC_RSP_R1 | MMC_CMD_ADTC


class MmcCommandFailed(EnvironmentProblem):
    """The card did not answer (the ioctl failed or timed out, or nothing is recorded)."""


@dataclass(frozen=True)
class MmcCommand:
    """One command with one 512-byte data block: read (the card sends it) or write."""

    opcode: int
    arg: int
    write: bool = False

    def __str__(self) -> str:
        verb = "write" if self.write else "read"
        return f"CMD{self.opcode} {verb} 0x{self.arg:08x}"


class MmcIoctl(Protocol):
    """Sends commands to /dev/`device`; `privileged` says whether it may (the kernel asks
    CAP_SYS_RAWIO: root)."""

    @property
    def privileged(self) -> bool: ...

    def send(self, device: str, command: MmcCommand, data: bytes = b"") -> bytes:
        """Send `command`; a read returns the card's 512-byte block, a write sends `data`
        (zeros when empty) and returns b"". MmcCommandFailed when the card does not answer."""
        ...


class LiveMmcIoctl:
    """The ioctl itself, on this machine's /dev."""

    @property
    def privileged(self) -> bool:
        return os.geteuid() == 0

    def send(self, device: str, command: MmcCommand, data: bytes = b"") -> bytes:
        buffer = array.array("B", data.ljust(BLOCK_BYTES, b"\0")[:BLOCK_BYTES])
        address, _ = buffer.buffer_info()
        packed = bytearray(pack_command(command, address))
        try:
            # Read-only: MMC_IOC_CMD asks CAP_SYS_RAWIO and a whole disk, not write mode, and a
            # descriptor opened for writing makes udev send a change event when it closes.
            descriptor = os.open(f"/dev/{device}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            raise MmcCommandFailed(f"/dev/{device}: {error.strerror}") from error
        try:
            fcntl.ioctl(descriptor, MMC_IOC_CMD, packed)
        except OSError as error:
            raise MmcCommandFailed(f"{command} on /dev/{device}: {error.strerror}") from error
        finally:
            os.close(descriptor)
        return b"" if command.write else buffer.tobytes()


def pack_command(command: MmcCommand, data_address: int) -> bytes:
    """`struct mmc_ioc_cmd` for `command`, one 512-byte block at `data_address`."""
    return _IOC_CMD.pack(
        1 if command.write else 0,  # write_flag
        0,  # is_acmd
        command.opcode,
        command.arg,
        0, 0, 0, 0,  # response[4]
        WRITE_FLAGS if command.write else READ_FLAGS,
        BLOCK_BYTES,  # blksz
        1,  # blocks
        0, 0, 0, 0,  # postsleep min/max, data and command timeouts: the driver's
        0,  # __pad
        data_address,
    )  # fmt: skip


@dataclass(frozen=True)
class SentCommand:
    device: str
    command: MmcCommand


class RecordedMmcIoctl:
    """Answers from `folder`/<device>/cmd<opcode>_<arg, 8 hex digits>.hex (hex text, '#'
    comments): a read without a file is a card that did not answer; a write succeeds when the
    device's folder exists. Every command is kept in `sent`."""

    def __init__(self, folder: Path, privileged: bool = True) -> None:
        self.folder = folder
        self._privileged = privileged
        self.sent: list[SentCommand] = []

    @property
    def privileged(self) -> bool:
        return self._privileged

    def send(self, device: str, command: MmcCommand, data: bytes = b"") -> bytes:
        self.sent.append(SentCommand(device, command))
        if command.write:
            if not (self.folder / device).is_dir():
                raise MmcCommandFailed(f"{command} on /dev/{device}: no answer recorded")
            return b""
        path = self.folder / device / f"cmd{command.opcode}_{command.arg:08x}.hex"
        try:
            return parse_hex_block(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise MmcCommandFailed(
                f"{command} on /dev/{device}: no answer recorded (timed out)"
            ) from error


class NoMmcIoctl:
    """Used when the roots are a recorded tree without recorded answers: the live cards
    belong to another machine."""

    privileged = False

    def send(self, device: str, command: MmcCommand, data: bytes = b"") -> bytes:
        raise MmcCommandFailed(f"{command} not sent: the system roots are a recorded tree")


def parse_hex_block(text: str) -> bytes:
    """A recorded block: hex byte pairs, white space between them free, '#' to the line's end
    a comment; exactly 512 bytes."""
    digits = "".join(line.split("#", 1)[0] for line in text.splitlines()).split()
    data = bytes.fromhex("".join(digits))
    if len(data) != BLOCK_BYTES:
        raise MmcCommandFailed(f"a recorded block holds {len(data)} bytes, not {BLOCK_BYTES}")
    return data


def mmc_ioctl_for(roots: SystemRoots) -> MmcIoctl:
    """This machine's cards, a recorded tree's answers (FLASHMARK_TOOLS_ROOT/ioctl), or none."""
    if roots.tools is not None:
        return RecordedMmcIoctl(roots.tools / "ioctl")
    return LiveMmcIoctl() if roots.is_live else NoMmcIoctl()
