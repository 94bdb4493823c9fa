"""`flashmark doctor [TARGET]`: what in this board holds the device under TARGET back, and the
line that fixes each."""

from __future__ import annotations

from pathlib import Path

import click

from flashmark.bench.kind import RUN
from flashmark.bench.run_result import fastest_sequential
from flashmark.cli import debug_option, json_option
from flashmark.cli.output import saving_options
from flashmark.cli.tail import finish, history_to_save
from flashmark.doctor.check import DoctorRequest, diagnose
from flashmark.doctor.findings import MeasuredRate
from flashmark.doctor.kind import DOCTOR
from flashmark.doctor.result import DOCTOR_SCHEMA
from flashmark.errors import HistoryError, ResultFormatError
from flashmark.health.check import device_key
from flashmark.history.store import History
from flashmark.probe.model import Device
from flashmark.system.sysroot import SystemRoots


@click.command("doctor")
@click.argument("target", required=False, default="/", metavar="[TARGET]")
@json_option(f'Print a "{DOCTOR_SCHEMA}" document.')
@saving_options("Do not keep this diagnosis in the history.")
@debug_option
def doctor_command(target: str, as_json: bool, db_path: Path | None, no_save: bool) -> None:
    """What in this board holds the device under TARGET back (a folder, partition or device;
    default: the system's, /), each finding with why it matters and the line that fixes it.

    \b
    It checks the USB link and driver (and UAS resets in the kernel log), the SD bus mode
    against what the card and the board can run (and a Pi 5's command queueing of an A2
    card), the PCIe link of an NVMe drive (and its resets in the kernel log), and the host:
    under-voltage and throttling, the CPU governor, heat, swap on the device, mount options
    that multiply writes and the I/O scheduler. A check that cannot run on this board says
    so. Where the history holds a run on the device, each cap is held against its fastest
    sequential figure: what the finding costs. It writes nothing to the device. Rules and
    sources: docs/doctor.md.

    \b
    Examples:
        flashmark doctor
        flashmark doctor /media/pi/SSD --json
    Recorded trees: FLASHMARK_SYSFS_ROOT, FLASHMARK_PROCFS_ROOT, FLASHMARK_DEBUGFS_ROOT,
    FLASHMARK_TOOLS_ROOT.
    """
    history = history_to_save(db_path, no_save)
    runs = history or History.locate(db_path)
    result = diagnose(
        DoctorRequest(target),
        SystemRoots.from_environment(),
        lambda device: _latest_rate(runs, device),
    )
    finish(DOCTOR, result, history, as_json=as_json).raise_problem()


def _latest_rate(history: History, device: Device) -> MeasuredRate | None:
    """The fastest sequential figure of the newest saved run on `device` (found by its key, as
    health finds its readings); None without one, or without a history to read."""
    key = device_key(device)
    try:
        stored = history.list(kind=RUN.name)
    except HistoryError:
        return None
    for entry in stored:  # newest first
        try:
            run = RUN.from_document(entry.document)
        except ResultFormatError:
            continue
        probe = run.probe
        if probe is None or probe.device is None or device_key(probe.device) != key:
            continue
        fastest = fastest_sequential(run)
        if fastest is not None:
            return MeasuredRate(entry.id, fastest[1], fastest[0], run.finished_at)
    return None
