"""eMMC wear: `life_time` and `pre_eol_info` from the card's sysfs directory.

The kernel prints EXT_CSD bytes 268/269 (DEVICE_LIFE_TIME_EST_TYP_A/B) as `life_time`
"0x%02x 0x%02x" and byte 267 (PRE_EOL_INFO) as `pre_eol_info` "0x%02x"
(drivers/mmc/core/mmc.c). Encodings, JEDEC JESD84-B51 7.4.52-7.4.54:
life time 0x00 = not defined, 0x01..0x0A = 0-10% .. 90-100% of rated life used,
0x0B = exceeded; pre-EOL 0x00 = not defined, 0x01 normal, 0x02 warning (80% of reserved
blocks consumed), 0x03 urgent.
"""

from __future__ import annotations

from flashmark.probe.model import Health, Unreadable
from flashmark.system.sysroot import SystemRoots

_PRE_EOL = {1: "normal", 2: "warning", 3: "urgent"}


def decode_life_time(text: str) -> str | None:
    value = _byte(text)
    if value == 0:
        return None  # "not defined": the device does not report it
    if 1 <= value <= 10:
        return f"{(value - 1) * 10}-{value * 10}%"
    if value == 11:
        return "exceeded"
    raise ValueError(f"life time estimate {text!r} is outside 0x00..0x0B")


def decode_pre_eol(text: str) -> str | None:
    value = _byte(text)
    if value == 0:
        return None
    if value in _PRE_EOL:
        return _PRE_EOL[value]
    raise ValueError(f"pre-EOL value {text!r} is outside 0x00..0x03")


def _byte(text: str) -> int:
    try:
        return int(text.strip(), 16)
    except ValueError:
        raise ValueError(f"not a hex byte: {text!r}") from None


def read_emmc_health(roots: SystemRoots, device_dir: str) -> tuple[Health, tuple[Unreadable, ...]]:
    unreadable: list[Unreadable] = []
    life_a = life_b = pre_eol = None
    life_text = roots.read_sys(f"{device_dir}/life_time")
    if life_text is not None:
        fields = life_text.split()
        try:
            if len(fields) != 2:
                raise ValueError(f"expected two values 'A B', got {life_text!r}")
            life_a, life_b = decode_life_time(fields[0]), decode_life_time(fields[1])
        except ValueError as error:
            unreadable.append(Unreadable("life_time", life_text, str(error)))
    eol_text = roots.read_sys(f"{device_dir}/pre_eol_info")
    if eol_text is not None:
        try:
            pre_eol = decode_pre_eol(eol_text)
        except ValueError as error:
            unreadable.append(Unreadable("pre_eol_info", eol_text, str(error)))
    read = life_text is not None or eol_text is not None
    health = Health(
        life_time_a=life_a,
        life_time_b=life_b,
        pre_eol=pre_eol,
        sources=("sysfs life_time/pre_eol_info",) if read else (),
    )
    return health, tuple(unreadable)
