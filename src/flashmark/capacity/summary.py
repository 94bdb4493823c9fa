"""A capacity probe's answer in one line: the terminal's `verdict:` line and the document's
"summary" key. "fake: 128 MiB of the claimed 512 MiB hold data, the rest wraps to the start";
"genuine: every probed block of the claimed 512 MiB held its data" (binary units, as fakes'
real sizes are powers of two)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flashmark.units import format_size

if TYPE_CHECKING:
    from flashmark.capacity.result import CapacityResult

# What lies beyond the real size, by the behaviour the probe found (capacity.search).
_BEYOND = {
    "wraps": "the rest wraps to the start",
    "zeros": "the rest reads back as zeros (writes dropped)",
    "erased": "the rest reads back as 0xFF (writes dropped)",
    "drops": "writes to the rest are dropped",
    "corrupts": "the rest reads back as something else than was written",
}


def capacity_summary(result: CapacityResult) -> str:
    """The probe's answer in one line (see the module's docstring)."""
    claimed = format_size(result.claimed_bytes)
    if result.verdict == "genuine":
        return f"genuine: every probed block of the claimed {claimed} held its data"
    beyond = ", ".join(_BEYOND.get(b, b) for b in result.behaviour)
    rest = f", {beyond}" if beyond else ""
    if result.real_bytes is None:
        return f"{result.verdict}: the real size of the claimed {claimed} is unknown{rest}"
    real = format_size(result.real_bytes)
    return f"{result.verdict}: {real} of the claimed {claimed} hold data{rest}"
