"""`flashmark run` and `flashmark profiles`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from flashmark.bench.benchmark import (
    BenchmarkRequest,
    BenchmarkStopped,
    open_benchmark,
    with_card_passport,
)
from flashmark.bench.grading.classes import unmet_requirements
from flashmark.bench.jobs import PREPARE_JOB_NAME
from flashmark.bench.kind import RUN
from flashmark.bench.lengths import MIN_TRANSFERS, TARGET_HALF_WIDTH_PCT
from flashmark.bench.model import TargetKind
from flashmark.bench.plan import Plan
from flashmark.bench.profiles import PROFILES
from flashmark.bench.render.profiles import profiles_document, profiles_table
from flashmark.cli import debug_option, destructive_option, json_option
from flashmark.cli.clean import say_cleaned_at_start
from flashmark.cli.confirm import confirm_overwrite
from flashmark.cli.output import (
    print_json,
    saving_options,
    say_line,
    stderr_console,
    stdout_console,
    styled,
)
from flashmark.cli.params import (
    GRADES,
    RAMP,
    RUNTIME,
    SIZE,
    WORKLOAD_SCALE,
    Choice,
    stall_timeout_option,
)
from flashmark.cli.progress import progress_display
from flashmark.cli.tail import SaveOutcome, finish, history_to_save, stopped_error
from flashmark.errors import FlashmarkError, RequirementNotMet, printable
from flashmark.probe.summary import measured_summary
from flashmark.system.signals import signals_raise
from flashmark.units import format_size

# Shorter windows quantise the throttle-verified accuracy (see profiles.py); allowed, but said.
_SHORT_RUNTIME_S = 8


@click.command("run")
@click.argument("target", default=".", metavar="[TARGET]")
@click.option(
    "--profile",
    default="quick",
    show_default=True,
    type=Choice(list(PROFILES)),
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
    help="Measure every timed test exactly this long, judged on its 95% interval (also the "
    "way to get full precision from quick and a1). Without it, each test measures 3 s, and "
    "only when its 95% interval is wider than +-1% or it holds fewer than 20 transfers is it "
    "extended by further 3 s windows (pooled) or measured again, up to the profile's length "
    "(quick 8); in quick and a1 a test a class grades stops instead once every threshold it "
    "serves is decided. Under 3 s, every figure is at least +-10% uncertain.",
)
@click.option(
    "--ramp",
    "ramp_s",
    type=RAMP,
    metavar="SECONDS",
    help="Warm-up seconds before each timed test: fio runs the test but counts nothing, so a "
    "device waking from power saving or a first burst into its write cache does not decide "
    "the figure (default per profile: quick 2, standard 3; 1 for a test that directly follows "
    "another timed test, the device already busy, and 0 after the same I/O at another queue "
    "depth). Given, it is every timed test's warm-up. "
    "Raise it if a device's per-second rates still change over a test's first seconds; 0 "
    "measures from the first I/O (quicker, start-up included). The sustained-write test has "
    "none: its start is the cache.",
)
@json_option("Print the result document (flashmark.result/1) on stdout; progress on stderr.")
@saving_options("Do not save this run to the history.")
@click.option(
    "--buffered",
    is_flag=True,
    help="Allow the page cache (no O_DIRECT). Results are labelled buffered: they "
    "are not the device's own speed. Needed on filesystems without direct I/O.",
)
@click.option(
    "--show-fio",
    is_flag=True,
    help="Print the exact fio job files (on stdout) and exit without running them; each "
    "can be run with `fio FILE` (a folder's jobs from inside the folder).",
)
@click.option(
    "--job-hash",
    "job_hash_only",
    is_flag=True,
    help="Print this run's job hash and what it is made of (flashmark and fio versions, "
    "target kind, settings) as JSON on stdout, and exit without measuring: boards whose "
    "hashes agree run the same benchmark, and only such results join one campaign "
    "(`flashmark upload --campaign`).",
)
@destructive_option(
    "Block devices only: also run the write tests, overwriting the test area at "
    "the start of the device. Refused on mounted or system devices; asks to confirm."
)
@click.option(
    "--workload-scale",
    type=WORKLOAD_SCALE,
    metavar="SCALE",
    help="Size of the real-world workloads of the standard and full profiles (package "
    "install, removal, reinstall, cold read), as a share of the desktop install measured in "
    '"Performance impact of MMC storage used on SBC" (2018) '
    "(default: standard 0.05, full 0.1). 0 skips them.",
)
@click.option(
    "--require",
    "required",
    type=GRADES,
    metavar="GRADES",
    default=(),
    help="Comma-separated grades this device must pass, e.g. A1,U3: after the result is "
    "saved and printed, exit 8 if any of them failed, is uncertain (its 95% interval "
    "contains the threshold) or was not graded in this run.",
)
@stall_timeout_option
@debug_option
def run_command(
    as_json: bool,
    db_path: Path | None,
    no_save: bool,
    show_fio: bool,
    job_hash_only: bool,
    yes: bool,
    required: tuple[str, ...],
    **settings: Any,  # BenchmarkRequest's fields, named as it names them
) -> None:
    """Benchmark TARGET: a folder (default: the current one), a file's folder, or a block device.

    \b
    In a folder, a uniquely named test file is created, measured with direct I/O and
    removed afterwards, also on errors, Ctrl-C and SIGTERM. A block device gets read
    tests only, unless --destructive is given. In a folder, a line says first where
    it writes and how much; max(5%, 1 GiB) of the filesystem is always left free (a
    --size that would eat into it is refused), and a disk filled by something else
    meanwhile stops the run before the next test, the tests measured so far saved.

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
    the run exits 7: `flashmark import FILE` adds it later. With --require, a named grade
    that is not "pass" exits 8 after the result is saved. A device that stops answering
    (no request completed for --stall-timeout, longer for big or slow requests) or fails
    mid-run exits 5; the tests measured before it are saved, marked partial.
    Exit codes: README.md.
    """
    request = BenchmarkRequest(**settings)
    console = stderr_console()
    planning_only = show_fio or job_hash_only
    if not planning_only:
        # First: a killed run's test file may hold the space needed.
        say_cleaned_at_start(request.target)
    stopped: BenchmarkStopped | None = None
    with (
        signals_raise(),
        open_benchmark(
            request, probe=not planning_only, check_room_for_output=not planning_only
        ) as benchmark,
    ):
        plan = benchmark.plan
        if job_hash_only:
            print_json(benchmark.job_hash_document())
            return
        if plan.area_note:
            console.print(f"note: {plan.area_note}")
        if show_fio:
            _print_jobs(plan, benchmark.runner.log_folder)
            return
        # Before any test (and before asking to confirm): a result that could not be saved
        # would otherwise be measured for nothing.
        history = history_to_save(db_path, no_save)
        if request.destructive:
            _confirm_destruction(plan, yes)
        _describe_plan(plan)
        with progress_display(plan) as progress:
            try:
                result = benchmark.run(progress)
            except BenchmarkStopped as stop:  # a later step failed: keep the tests measured
                stopped, result = stop, stop.partial

    # The measured card's passport, from the history as it was before this run (read-only).
    result = with_card_passport(
        result,
        lambda warning: console.print(styled(warning, "yellow")),
        history=history,
        db_path=db_path,
    )
    finished = finish(RUN, result, history, as_json=as_json)
    if stopped is not None:
        raise _stopped_error(stopped, finished.outcome, as_json)
    finished.raise_problem()
    unmet = unmet_requirements(result.grades, required)
    if unmet:  # after saving: the measurement is kept whatever the verdict
        for line in unmet:
            click.echo(printable(f"flashmark: required grade {line}"), err=True)
        names = ", ".join(line.partition(":")[0] for line in unmet)
        raise RequirementNotMet(f"required grades not passed: {names}")


def _stopped_error(
    stopped: BenchmarkStopped, outcome: SaveOutcome | None, as_json: bool
) -> FlashmarkError:
    """The failure of the step that stopped the run, in one line that says where the tests
    measured before it are (its exit status and what its cleanup did are kept)."""
    cause, run = stopped.cause, stopped.partial
    count = f"the {len(run.tests)} test(s) measured before it"
    if outcome is None:
        kept = f"{count} are printed on stdout{' as JSON' if as_json else ''} (--no-save)"
    elif outcome.id is not None:
        shown = f"`flashmark show {outcome.id}`"
        kept = f"{count} are saved as result {outcome.id}, marked partial ({shown})"
    elif outcome.problem is not None:
        kept = f"{count} could not be saved: {outcome.problem}"
    else:
        kept = f"{count} were kept"
    return stopped_error(cause, kept)


def _describe_plan(plan: Plan) -> None:
    """What is about to run, on stderr: the tests, the device and what may distort them."""
    console = stderr_console()
    settings, target = plan.settings, plan.target
    console.print(
        f"flashmark: {plan.profile.name} profile on {printable(target.folder or target.path)}: "
        f"{plan.describe()}",
        soft_wrap=True,
    )
    if plan.sustained_note is not None:
        console.print(f"flashmark: {plan.sustained_note}")
    if plan.space is not None:
        say_line(plan.space.line())
    if plan.probe_problem is not None:
        console.print(
            f"[yellow]warning:[/yellow] could not identify the device: {plan.probe_problem}"
        )
    if plan.probe is not None:
        measured = measured_summary(plan.probe)
        if measured is not None:
            console.print(f"device: {measured}")
        for warning in plan.probe.warnings:
            console.print(f"[yellow]warning:[/yellow] {warning}")
    if settings.runtime_s < _SHORT_RUNTIME_S:
        console.print(
            f"[yellow]warning:[/yellow] --runtime below {_SHORT_RUNTIME_S} s gives "
            "noisier figures, especially for sequential tests"
        )


def _confirm_destruction(plan: Plan, yes: bool) -> None:
    target, settings = plan.target, plan.settings
    if target.kind is not TargetKind.DEVICE:
        return
    confirm_overwrite(
        target.path,
        target.given,
        f"This overwrites the first {format_size(settings.size_bytes)} of {target.path}; "
        "any data there is lost.",
        yes=yes,
    )


def _print_jobs(plan: Plan, log_folder: str) -> None:
    """The jobs as a run would run them, on stdout (`> jobs.fio`); nothing is run. A folder's
    jobs name the test file relative to the folder (fio runs inside it), so each header says
    where to run them. A run writes fio's per-I/O logs to its own work folder, which is gone
    once it ends: the printed jobs write them beside the test file, in the folder fio runs
    in, so that `fio FILE` works as printed."""
    target = plan.target
    where = ""
    if target.kind is TargetKind.FILE and target.folder is not None:
        where = f"  (run it inside the folder: cd {_shell_quoted(target.folder)})"
    out = sys.stdout
    for job in plan.all_jobs:
        print(
            f"# ---- {job.name}.fio{'  (run with --readonly)' if job.readonly else ''}{where}",
            file=out,
        )
        if job.window_s is not None and job.window_s < plan.settings.runtime_s:
            print(
                f"# a first window: when its 95% interval is wider than "
                f"+-{TARGET_HALF_WIDTH_PCT:g}% or it holds fewer than {MIN_TRANSFERS} "
                f"transfers, flashmark extends it by {job.name}-more1, ... (its windows "
                f"pooled, up to {plan.settings.runtime_s} s in all) or runs it again with "
                f"runtime={plan.settings.runtime_s} (or longer for {MIN_TRANSFERS} transfers)",
                file=out,
            )
        if plan.rest is not None and job is plan.jobs[plan.rest.before]:
            print(
                f"# flashmark runs it after a {plan.rest.seconds} s rest {plan.rest.why}",
                file=out,
            )
        if job.name == PREPARE_JOB_NAME and plan.prepare_after:
            print(
                "# flashmark writes only what the tests before it did not (offset=, size=)",
                file=out,
            )
        # "write_iops_log=/tmp/flashmark-fio-.../seq-write" -> "write_iops_log=seq-write"
        print(job.text.replace(f"={log_folder}/", "="), file=out)


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
@json_option("As JSON.")
def profiles_command(as_json: bool) -> None:
    """List the test profiles, their tests and defaults."""
    if as_json:
        print_json(profiles_document())
        return
    stdout_console().print(profiles_table())
