"""`flashmark doctor [TARGET]`: what in this board holds the device under TARGET back, and the
line that fixes each."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.cli import debug_option
from flashmark.cli.output import saving_options
from flashmark.cli.tail import finish, history_to_save
from flashmark.doctor.check import DoctorRequest, diagnose
from flashmark.doctor.kind import DOCTOR
from flashmark.doctor.result import DOCTOR_SCHEMA
from flashmark.system.sysroot import SystemRoots


@click.command("doctor")
@click.argument("target", required=False, default="/", metavar="[TARGET]")
@click.option("--json", "as_json", is_flag=True, help=f'Print a "{DOCTOR_SCHEMA}" document.')
@saving_options("Do not keep this diagnosis in the history.")
@debug_option
def doctor_command(
    target: str, as_json: bool, db_path: Path | None, no_save: bool, debug: bool
) -> None:
    """What in this board holds the device under TARGET back (a folder, partition or device;
    default: the system's, /), each finding with why it matters and the line that fixes it.

    \b
    It checks the USB link and driver (and UAS resets in the kernel log), the SD bus mode
    against what the card and the board can run, the PCIe link of an NVMe drive, and the
    host: under-voltage and throttling, the CPU governor, heat, swap on the device and mount
    options that multiply writes. A check that cannot run on this board says so. It writes
    nothing to the device. Rules and sources: docs/doctor.md.

    \b
    Examples:
        flashmark doctor
        flashmark doctor /media/pi/SSD --json
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT,
    FLASHMARK_TOOLS_ROOT.
    """
    history = history_to_save(db_path, no_save)
    result = diagnose(DoctorRequest(target), SystemRoots.from_environment())
    finish(DOCTOR, result, history, as_json=as_json).raise_problem()
