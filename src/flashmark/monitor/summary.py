"""A monitor recording's answer in one line: the terminal's `verdict:` line and the document's
"summary_line" key (its "summary" is the recording's totals, an object, since version 1).
"loop7 during `dd` (1.5 s, exit status 0): writes 35.8 MB/s at 70.1 IOPS, reads 0.00 MB/s at
0.0 IOPS; not bound by random writes"."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from flashmark.units import format_rate

if TYPE_CHECKING:
    from flashmark.monitor.document import MonitorRecording


def recording_summary(recording: MonitorRecording) -> str:
    """The recording's answer in one line (see the module's docstring)."""
    totals = recording.summary
    seconds = f"{totals.seconds:.1f} s"
    if recording.command:
        ended = (
            "timed out" if recording.timed_out
            else "status unknown" if recording.exit_status is None
            else f"exit status {recording.exit_status}"
        )  # fmt: skip
        program = os.path.basename(recording.command[0])
        when = f"during `{program}` ({seconds}, {ended})"
    else:
        when = f"over {seconds}"
    rates = (
        f"writes {format_rate(totals.write_bps)} at {totals.write_iops:.1f} IOPS, "
        f"reads {format_rate(totals.read_bps)} at {totals.read_iops:.1f} IOPS"
    )
    bound = totals.random_write_bound
    if bound is None:  # no I/O, or no busy-time counter: cannot tell
        return f"{recording.device} {when}: {rates}"
    judged = "bound by random writes" if bound else "not bound by random writes"
    return f"{recording.device} {when}: {rates}; {judged}"
