"""Plain-text cells describing a Run, shared by the Markdown, CSV and comparison exporters.

They format numbers with flashmark.units exactly as the terminal view does (report/terminal.py),
so a figure pasted from an export reads the same as the one on screen. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from flashmark.bench.jobs import sustained_size_limit
from flashmark.bench.model import (
    Check,
    DirectionResult,
    DisturbanceStatus,
    Grade,
    Settings,
    TargetKind,
    TestResult,
    TestSpec,
)
from flashmark.bench.plan import DEPTH_CHANGE_RAMP_S, follows_at_another_depth, ramp_not_given
from flashmark.bench.run_result import Run
from flashmark.bench.sustained import SUSTAINED_WRITE_NAME, sustained_length_text
from flashmark.errors import printable
from flashmark.probe.summary import measured_summary
from flashmark.stats import Verdict
from flashmark.units import format_iops, format_latency_ns, format_rate, format_size

# A grade's verdict in words; None: not every check could be measured.
VERDICTS: dict[Verdict | None, str] = {
    Verdict.PASS: "pass",
    Verdict.FAIL: "fail",
    Verdict.UNCERTAIN: "uncertain",
    None: "not judged",
}
# A margin this many times the threshold or more reads as such: "+22753.4%" says no more
# than that the device is far beyond the class (a VM's disk, an NVMe drive).
FAR_BEYOND = 10
UNIT_NOTE = "MB = 10^6 bytes"


def direction_cells(direction: DirectionResult | None) -> tuple[str, str, str, str]:
    """MB/s (number only), IOPS, p50 and p99 latency with their unit; blanks without data."""
    if direction is None:
        return ("", "", "", "")
    return (
        format_rate(direction.bw_bytes).removesuffix(" MB/s"),
        format_iops(direction.iops),
        format_latency_ns(direction.lat_ns.p50),
        format_latency_ns(direction.lat_ns.p99),
    )


def disturbance_text(result: TestResult) -> str:
    """Whether the test had the device and the host to itself (flashmark.bench.disturbance):
    'clean', 'disturbed: another process wrote 3.1 MB/s to mmcblk0 during rand-write-4k',
    'not checked (buffered)'; blank for results saved before the check."""
    disturbance = result.disturbance
    if disturbance is None:
        return ""
    if disturbance.status is DisturbanceStatus.DISTURBED:
        again = f" (measured {disturbance.retries + 1} times)" if disturbance.retries else ""
        return f"disturbed: {disturbance.reason}{again}"
    if disturbance.status is DisturbanceStatus.CLEAN:
        again = f", after {disturbance.retries} disturbed" if disturbance.retries else ""
        return f"clean{again}"
    return disturbance.reason


def check_text(check: Check) -> str:
    """'random 4K read 1500 IOPS (>= 1500, +0.0%)': value, threshold and margin of a check
    ('<=' for a limit such as the longest write busy, its margin the headroom). The value has
    the digits it needs to sit on its own side of the threshold: 9.96 MB/s against 10 reads
    "9.96", not "10.0" beside a margin of -0.4%."""
    if check.value is None:
        return f"{check.name}: not measured ({check.test})"
    value = _beside(check.value, check.threshold, 1 if check.unit == "MB/s" else 0)
    margin = f"{check.margin_pct:+.1f}%" if check.margin_pct is not None else ""
    if not check.at_most and check.threshold > 0 and check.value >= FAR_BEYOND * check.threshold:
        margin = f">= {FAR_BEYOND}x"
    sign = "<=" if check.at_most else ">="
    return f"{check.name} {value} {check.unit} ({sign} {check.threshold:g}, {margin})"


def _beside(value: float, threshold: float, decimals: int) -> str:
    """`value` with `decimals` digits, or up to 3 more while rounding would put it on the
    threshold or across it."""
    for places in range(decimals, decimals + 4):
        text = f"{value:.{places}f}"
        shown = float(text)
        if (shown - threshold) * (value - threshold) > 0 or value == threshold:
            return text
    return text


def sustained_text(run: Run) -> str | None:
    """The sustained-write test's cache and which rate the speed classes graded, in one
    sentence; None when the run did not measure it."""
    result = next((r for r in run.tests if r.spec.name == SUSTAINED_WRITE_NAME), None)
    sustained = None if result is None or result.write is None else result.write.sustained
    if sustained is None:
        return None
    if sustained.cache_bytes is not None and sustained.burst_bw_bytes is not None:
        text = (
            f"write cache {format_size(sustained.cache_bytes)}: "
            f"{format_rate(sustained.burst_bw_bytes)} burst, then "
            f"{format_rate(sustained.sustained_bw_bytes)} sustained"
        )
    elif sustained.cache_exceeded is False:
        written = "" if sustained.written_bytes is None else format_size(sustained.written_bytes)
        rate = format_rate(sustained.sustained_bw_bytes)
        text = (
            f"write cache not exceeded: the write speed never dropped, {rate} throughout the "
            f"{written or 'area'} written, so the cache may be larger than that and {rate} "
            "may still be the burst rate, not the speed the card keeps up (a larger --size "
            "writes more)"
        )
    else:
        text = f"no write cache found: {format_rate(sustained.sustained_bw_bytes)} throughout"
    units = sustained.sub_units
    if units is None:
        return f"{text}; speed classes graded on the sustained rate after the cache as a whole"
    over = ""
    if units.busy_over_limit:
        over = f", {units.busy_over_limit} over {units.busy_limit_ms:g} ms"
    return (
        f"{text}; speed classes graded as the SD specification measures them: slowest 4 MiB "
        f"sub-unit of 512 KiB writes after the cache {format_rate(units.min_bw_bytes)} "
        f"(median {format_rate(units.median_bw_bytes)}, {units.count} sub-units from "
        f"{format_size(units.from_bytes)}), longest write busy {units.max_busy_ms:.0f} ms{over}"
    )


def grade_verdict_text(grade: Grade) -> str:
    """'pass', 'fail', 'not judged', or 'uncertain (rand-read-4k IOPS 1,905 ± 40 straddles
    1,500)'."""
    text = VERDICTS[grade.verdict]
    if grade.verdict is Verdict.UNCERTAIN and grade.verdict_reason:
        return f"{text} ({grade.verdict_reason})"
    return text


def grades_passed(run: Run) -> str:
    """'A1, C10, U1', or 'none'."""
    return ", ".join(grade.name for grade in run.grades if grade.passed) or "none"


def started_text(run: Run) -> str:
    """'2026-11-22 01:32 UTC'; the stored text itself when it is not ISO 8601."""
    try:
        started = datetime.fromisoformat(run.started_at)
    except ValueError:
        return run.started_at
    if started.tzinfo is None:  # the schema says UTC; an old document may lack the offset
        started = started.replace(tzinfo=UTC)
    return started.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def target_place(run: Run) -> str:
    """The folder measured in, or the device node for a device run, control characters
    escaped (a newline in a folder's name would split the line, the table row or the cell)."""
    target = run.target
    return printable(
        (target.folder or target.path) if target.kind is TargetKind.FILE else target.path
    )


def target_details(run: Run) -> str:
    """'/dev/mmcblk0p1, ext4', as in the terminal header."""
    device = run.target.block_device or "unknown device"
    return device + (f", {run.target.filesystem}" if run.target.filesystem else "")


def device_text(run: Run) -> str | None:
    """The probed device in one line, or None when the run carries no probe."""
    return measured_summary(run.probe) if run.probe is not None else None


def header_lines(run: Run) -> tuple[tuple[str, str], ...]:
    """Where, on what and how a run measured, as (label, text) lines: the terminal prints them
    as its header, and the HTML report's Method rows and verdict cards are made of the same
    lines, so the two never disagree."""
    lines = [("target", f"{target_place(run)} ({target_details(run)})")]
    device = device_text(run)
    if device:
        lines.append(("device", device))
    lines.append(("profile", settings_text(run)))
    lines.append(("engine", f"{run.fio.version}, {run.settings.ioengine}; {UNIT_NOTE}"))
    if run.partial is not None:
        partial = run.partial
        not_run = f"; not run: {', '.join(partial.not_run)}" if partial.not_run else ""
        lines.append(
            (
                "partial",
                f"{partial.failed_step} failed: {partial.error}{not_run}; the tests below "
                "were measured before it",
            )
        )
    return tuple(lines)


def settings_text(run: Run) -> str:
    """'quick: area 128 MiB, 3 s per test after 2 s ramp ..., direct I/O' (settings_details)."""
    return f"{run.settings.profile}: {settings_details(run)}"


def settings_details(run: Run) -> str:
    """'area 128 MiB, 3 s per test after 2 s ramp ..., direct I/O'; with the size-bound
    sustained write, what it ran instead of a time ('sustained-write until its rate is steady
    or 256 MiB are written'), and the timed tests' lengths only when there were any."""
    settings = run.settings
    mode = "direct I/O" if settings.direct else "BUFFERED I/O (page cache included)"
    area = format_size(settings.size_bytes)
    lengths = [lengths_text(settings, [test.spec for test in run.tests])]
    if run.test(SUSTAINED_WRITE_NAME) is not None:
        sized = sustained_length_text(sustained_size_limit(settings))
        timed = any(test.spec.name != SUSTAINED_WRITE_NAME for test in run.tests)
        lengths = [sized, *lengths] if timed else [sized]
    return f"area {area}, {', '.join(lengths)}, {mode}"


def lengths_text(settings: Settings, tests: Sequence[TestSpec] = ()) -> str:
    """How long each test measured, e.g. "8 s per test after 2 s ramp", or with adaptive
    lengths "3 s per test after 2 s ramp (1 s after a timed test), up to 8 s where 3 s were
    not enough" (flashmark.bench.lengths; each test's `lengthened` says which and why).
    `tests`, in the order they ran, say whether one followed the same I/O at another depth."""
    depth_change = ramp_not_given(settings) and follows_at_another_depth(tests)
    ramp = ramps_text(
        settings.ramp_s, settings.follow_ramp_s, noun=" ramp", depth_change=depth_change
    )
    if settings.first_window_s is None:
        return f"{settings.runtime_s} s per test after {ramp}"
    return (
        f"{settings.first_window_s} s per test after {ramp}, "
        f"up to {settings.runtime_s} s where {settings.first_window_s} s were not enough"
    )


def ramps_text(
    ramp_s: int, follow_ramp_s: int, *, noun: str = "", depth_change: bool = False
) -> str:
    """A ramp and the shorter ones after a timed test, e.g. "2 s (1 s after a timed test)", and
    with `depth_change` "2 s (1 s after a timed test, 0 s after the same I/O at another
    depth)"; one figure when they are the same. `noun` follows the first figure."""
    if follow_ramp_s == ramp_s:
        return f"{ramp_s} s{noun}"
    shorter = f"{follow_ramp_s} s after a timed test"
    if depth_change:
        shorter += f", {DEPTH_CHANGE_RAMP_S} s after the same I/O at another depth"
    return f"{ramp_s} s{noun} ({shorter})"


def seconds_text(seconds: float) -> str:
    """Workload seconds as the terminal's workload table shows them: one decimal."""
    return f"{seconds:.1f}"


def plain_number(value: float, decimals: int) -> str:
    """Fixed point without trailing zeros, for CSV: 6.1435904, 1500, 0.5 (stable in goldens)."""
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
