"""`flashmark run` and `flashmark profiles`."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from pathlib import Path

import click
from rich.table import Table

from flashmark.cli import db_option, debug_option
from flashmark.cli.clean import clean_at_start
from flashmark.cli.confirm import confirm_overwrite
from flashmark.cli.output import print_json, stderr_console, stdout_console
from flashmark.cli.params import RUNTIME, SIZE, WORKLOAD_SCALE
from flashmark.cli.progress import progress_display
from flashmark.cli.saving import history_to_save, save_result
from flashmark.document import run_to_document
from flashmark.errors import FlashmarkError, printable
from flashmark.fio.jobs import job_for_test, prepare_job
from flashmark.fio.runner import FioProcessRunner, FioRunner, ReplayRunner, fio_work_parent
from flashmark.leftovers import temporary_work_folder
from flashmark.measure import Plan, default_settings, measure, plan_area, plan_tests
from flashmark.model import Run, Settings, Target, TargetKind
from flashmark.probe import ProbeReport, claim_findings, device_summary, probe_target
from flashmark.profiles import PROFILES, get_profile
from flashmark.report.terminal import render_run
from flashmark.signals import signals_raise
from flashmark.sysroot import SystemRoots
from flashmark.target import resolve_target
from flashmark.units import format_duration, format_size

# For tests and bug reports: a folder of recorded fio outputs (see fio/runner.py ReplayRunner)
# replaces fio, so the whole command runs without fio or root. Never set in normal use.
REPLAY_ENV = "FLASHMARK_FIO_REPLAY"
# Shorter windows quantise the throttle-verified accuracy (see profiles.py); allowed, but said.
_SHORT_RUNTIME_S = 8


@click.command("run")
@click.argument("target", default=".", metavar="[TARGET]")
@click.option(
    "--profile",
    "profile_name",
    default="quick",
    show_default=True,
    type=click.Choice(list(PROFILES)),
    help="Which tests to run (`flashmark profiles`).",
)
@click.option(
    "--size",
    "size_bytes",
    type=SIZE,
    metavar="SIZE",
    help="Test area, e.g. 256M or 1G (default per profile: quick 128M, standard 1G); "
    "rounded down to a whole number of the profile's largest block.",
)
@click.option(
    "--runtime",
    "runtime_s",
    type=RUNTIME,
    metavar="SECONDS",
    help="Measured seconds per timed test (default per profile: quick 8).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result document (flashmark.result/1) on stdout; progress on stderr.",
)
@db_option
@click.option("--no-save", is_flag=True, help="Do not save this run to the history.")
@click.option(
    "--buffered",
    is_flag=True,
    help="Allow the page cache (no O_DIRECT). Results are labelled buffered: they "
    "are not the device's own speed. Needed on filesystems without direct I/O.",
)
@click.option(
    "--show-fio",
    is_flag=True,
    help="Print the exact fio job files (on stderr) before running them; each can be "
    "re-run with `fio FILE` (a folder's jobs from inside the folder).",
)
@click.option(
    "--destructive",
    is_flag=True,
    help="Block devices only: also run the write tests, overwriting the test area at "
    "the start of the device. Refused on mounted or system devices; asks to confirm.",
)
@click.option("--yes", is_flag=True, help="Confirm --destructive without the typed prompt.")
@click.option(
    "--workload-scale",
    type=WORKLOAD_SCALE,
    metavar="SCALE",
    help="Size of the real-world workloads of the standard and full profiles (package "
    "install, removal, reinstall, cold read), as a share of seed 002's desktop install "
    "(default: standard 0.05, full 0.1). 0 skips them.",
)
@debug_option
def run_command(
    target: str,
    profile_name: str,
    size_bytes: int | None,
    runtime_s: int | None,
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
    buffered: bool,
    show_fio: bool,
    destructive: bool,
    yes: bool,
    workload_scale: float | None,
    debug: bool,
) -> None:
    """Benchmark TARGET: a folder (default: the current one), a file's folder, or a block device.

    \b
    In a folder, a uniquely named test file is created, measured with direct I/O and
    removed afterwards, also on errors, Ctrl-C and SIGTERM. A block device gets read
    tests only, unless --destructive is given.

    \b
    Examples:
      flashmark run                          quick profile in the current folder
      flashmark run /media/pi/card --json    a mounted card, result as JSON
      flashmark run --profile standard --size 1G /mnt/nvme
      sudo flashmark run /dev/sda            read tests on a whole USB stick
      sudo flashmark run /dev/sda --destructive --profile a1   grade an empty card

    \b
    The history is checked before the first test: a database that cannot take the result
    (not a database, locked, read-only, newer, missing folder) stops the run with exit 6.
    If saving still fails afterwards, the result is printed, kept in a recovery file and
    the run exits 7: `flashmark import FILE` adds it later. Exit codes: README.md.
    """
    roots = SystemRoots.from_environment()
    profile = get_profile(profile_name)
    area = plan_area(profile, size_bytes)
    settings = default_settings(
        profile,
        size_bytes=area.size_bytes,
        runtime_s=runtime_s,
        buffered=buffered,
        destructive=destructive,
        workload_scale=workload_scale,
    )
    if area.note:
        stderr_console().print(f"note: {area.note}", highlight=False)
    clean_at_start(target)  # first: a killed run's test file may hold the space this one needs
    resolved = resolve_target(
        target, size_bytes=settings.size_bytes, destructive=destructive, roots=roots
    )
    # Before any test (and before asking to confirm): a result that could not be saved
    # would otherwise be measured for nothing.
    history = history_to_save(db_path, no_save)
    if destructive:
        _confirm_destruction(resolved, settings, yes)
    console = stderr_console()
    plan = plan_tests(profile, settings, resolved)
    total_s = plan.expected_seconds(settings)
    console.print(
        f"flashmark: {profile.name} profile on {printable(resolved.folder or resolved.path)}: "
        f"{len(plan.tests)} tests x {settings.ramp_s + settings.runtime_s} s"
        f"{' after preparing ' + format_size(settings.size_bytes) if plan.prepare else ''}"
        f" (about {format_duration(total_s)} plus preparation)"
        f"{', then workloads ' + ', '.join(plan.workloads) if plan.workloads else ''}",
        highlight=False,
    )
    report = _probe(resolved, roots)
    if report:
        _describe_device(report)
    if settings.runtime_s < _SHORT_RUNTIME_S:
        console.print(
            f"[yellow]warning:[/yellow] --runtime below {_SHORT_RUNTIME_S} s gives "
            "noisier figures, especially for sequential tests",
            highlight=False,
        )

    with (
        signals_raise(),
        temporary_work_folder("fio", Path(fio_work_parent())) as workdir,
    ):
        replay = os.environ.get(REPLAY_ENV)
        runner: FioRunner = (
            ReplayRunner(Path(replay)) if replay else FioProcessRunner(Path(workdir))
        )
        if show_fio:
            _print_jobs(plan, settings, resolved, runner.log_folder)
        with progress_display() as progress:
            result = measure(resolved, profile, settings, runner, progress, roots)
    result = _with_probe(result, report)

    outcome = None if history is None else save_result(history, run_to_document(result))
    if outcome is not None and outcome.id is not None:
        result = dataclasses.replace(result, id=outcome.id)
    if as_json:
        print_json(run_to_document(result))
    else:
        stdout_console().print(render_run(result))
        if outcome is not None and outcome.problem and outcome.recovery_file is None:
            print_json(run_to_document(result))  # no file could hold it: the only copy
    if outcome is not None and outcome.problem:
        raise outcome.problem


def _probe(target: Target, roots: SystemRoots) -> ProbeReport | None:
    """What the device is and claims, and what would distort the run; read before measuring
    (the probe samples the device's activity, which the benchmark would dominate)."""
    try:
        return probe_target(target.folder or target.path, roots)
    except (FlashmarkError, OSError) as error:  # the probe describes; it must not stop a run
        stderr_console().print(
            f"[yellow]warning:[/yellow] could not identify the device: {error}", highlight=False
        )
        return None


def _describe_device(report: ProbeReport) -> None:
    console = stderr_console()
    device = report.device
    if device is not None:
        console.print(f"device: {device_summary(device)}", highlight=False)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


def _with_probe(result: Run, report: ProbeReport | None) -> Run:
    if report is None:
        return result
    return dataclasses.replace(
        result,
        probe=report,
        findings=claim_findings(report, result.grades),
        warnings=result.warnings + report.warnings,
    )


def _confirm_destruction(target: Target, settings: Settings, yes: bool) -> None:
    if target.kind is not TargetKind.DEVICE:
        return
    confirm_overwrite(
        target.path,
        target.given,
        f"This overwrites the first {format_size(settings.size_bytes)} of {target.path}; "
        "any data there is lost.",
        yes=yes,
    )


def _print_jobs(plan: Plan, settings: Settings, target: Target, log_folder: str) -> None:
    """The jobs exactly as they will run. A folder's jobs name the test file relative to the
    folder (fio runs inside it), so the header line says where to run them."""
    readonly = target.kind is TargetKind.DEVICE and not settings.destructive
    filename = target.test_file if target.kind is TargetKind.FILE else target.path
    assert filename is not None  # resolve_target names a folder target's test file
    jobs = [prepare_job(settings, filename)] if plan.prepare else []
    jobs += [
        job_for_test(spec, settings, filename, readonly=readonly, log_folder=log_folder)
        for spec in plan.tests
    ]
    where = ""
    if target.kind is TargetKind.FILE and target.folder is not None:
        where = f"  (run it inside the folder: cd {_shell_quoted(target.folder)})"
    for job in jobs:
        print(
            f"# ---- {job.name}.fio{'  (run with --readonly)' if job.readonly else ''}{where}",
            file=sys.stderr,
        )
        print(job.text, file=sys.stderr)


def _shell_quoted(path: str) -> str:
    """`path` for a shell command line, on one line: bash's $'...' when it holds control
    characters such as a newline (bash(1), QUOTING), else POSIX single quotes."""
    if path.isprintable():
        return shlex.quote(path)
    return "$'" + "".join(_bash_escape(char) for char in path) + "'"


def _bash_escape(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\U{code:08x}"


@click.command("profiles")
@click.option("--json", "as_json", is_flag=True, help="As JSON.")
def profiles_command(as_json: bool) -> None:
    """List the test profiles, their tests and defaults."""
    if as_json:
        print_json(
            [
                {
                    "name": profile.name,
                    "summary": profile.summary,
                    "default_size_bytes": profile.default_size_bytes,
                    "default_runtime_s": profile.default_runtime_s,
                    "default_ramp_s": profile.default_ramp_s,
                    "tests": [
                        {"name": test.name, "description": test.description}
                        for test in profile.tests
                    ],
                }
                for profile in PROFILES.values()
            ]
        )
        return
    table = Table(header_style="bold")
    table.add_column("profile")
    table.add_column("defaults")
    table.add_column("tests")
    for profile in PROFILES.values():
        table.add_row(
            f"{profile.name}\n[dim]{profile.summary}[/dim]",
            f"--size {format_size(profile.default_size_bytes)}\n"
            f"--runtime {profile.default_runtime_s} s\nramp {profile.default_ramp_s} s",
            ", ".join(profile.test_names()),
        )
    stdout_console().print(table)
