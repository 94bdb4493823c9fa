"""The live progress display driven by a recorded sequence of events (no fio): one unit
(units.format_rate), an ETA from the plan, and a bounded height that keeps the running step."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import pytest
from rich.console import Console

from flashmark.bench.jobs import PREPARE_JOB_NAME
from flashmark.bench.model import Target, TargetKind
from flashmark.bench.plan import REST_STEP_NAME, PlannedStep, default_settings, plan_tests
from flashmark.bench.profiles import get_profile
from flashmark.cli.progress import (
    BarProgress,
    PlainProgress,
    parse_fio_status,
    progress_display,
    steps_of,
)
from flashmark.units import MiB, format_iops, format_rate


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _plan(profile_name: str):
    profile = get_profile(profile_name)
    settings = default_settings(
        profile, size_bytes=None, runtime_s=None, buffered=False, destructive=False
    )
    target = Target(given="/mnt/card", kind=TargetKind.FILE, path="/mnt/card/flashmark.test",
                    folder="/mnt/card", block_device=None, filesystem="ext4",
                    mount_point="/mnt/card", mount_options=None, capacity_bytes=None,
                    test_file=".flashmark-test")  # fmt: skip
    return plan_tests(profile, settings, target, log_folder="/tmp/logs")


def _bars(steps: Sequence[PlannedStep] = (), width: int = 80) -> tuple[BarProgress, Console, Clock]:
    """A live display drawn on demand, on a recorded 20-row console, with its own clock."""
    clock = Clock()
    console = Console(record=True, width=width, height=20, file=io.StringIO(), force_terminal=False)
    return BarProgress(console, steps, clock, live=False), console, clock


def _live_lines(bars: BarProgress, console: Console) -> list[str]:
    lines = console.render_lines(bars.renderable(), console.options, pad=False)
    return ["".join(segment.text for segment in line).rstrip() for line in lines]


def _eta_seconds(lines: list[str]) -> float:
    match = re.search(r"ETA (?:(\d+)m)?(\d+)s", lines[0])
    assert match, lines
    return 60 * int(match.group(1) or 0) + int(match.group(2))


def test_fio_status_is_shown_in_the_results_unit():
    status = parse_fio_status("r=6006KiB/s r=1501 IOPS")
    assert status.rates == {"read": 6006 * 1024}
    assert status.text() == f"read {format_rate(6006 * 1024)} {format_iops(1501)} IOPS"
    assert "KiB" not in status.text() and "MB/s" in status.text()
    mixed = parse_fio_status("r=10.5MiB/s,w=3601KiB/s r=2688,w=900 IOPS")
    assert mixed.rates == {"read": 10.5 * MiB, "write": 3601 * 1024}
    assert mixed.iops == {"read": 2688, "write": 900}
    decimal = parse_fio_status("w=12.3MB/s w=3 IOPS")
    assert decimal.rates == {"write": 12.3e6}
    assert decimal.text() == "write 12.3 MB/s 3.0 IOPS"


def test_recorded_run_shows_mb_per_s_eta_from_the_plan_and_the_running_step():
    plan = _plan("full")
    steps = steps_of(plan)
    # In the order measure() runs them: the rest, the sustained write, seq-write, the
    # preparation of the rest of the area, the other tests, the workloads.
    names = [step.name for step in steps]
    assert names[:5] == [
        REST_STEP_NAME,
        "sustained-write",
        "seq-write",
        PREPARE_JOB_NAME,
        "seq-read",
    ]
    assert names[-1].startswith("workloads") and steps[-1].expected_s is None
    total = len(steps)
    bars, console, clock = _bars(steps, width=100)  # the ETA line in full (80 columns end in …)
    timed_s = sum(s.expected_s or 0.0 for s in steps)
    assert timed_s == pytest.approx(plan.expected_seconds())
    size = plan.settings.size_bytes

    def timed_after(index: int) -> float:
        return sum(s.expected_s or 0.0 for s in steps[index + 1 :])

    for index, step in enumerate(steps):
        number = index + 1
        bars.begin(step.name, number, total, step.expected_s)
        if step.name == REST_STEP_NAME:  # a known length: counted like a test
            clock.now += 10
            bars.update(1 / 3, "idle, 20 s left")
            lines = _live_lines(bars, console)
            assert _eta_seconds(lines) == pytest.approx(timed_after(index) + 20, abs=1)
            # What the ETA cannot count yet is named after it, not guessed.
            assert lines[0].endswith(" + sustained-write + prepare + workloads")
            assert lines[-1].startswith(f"[1/{total}] rest") and "idle, 20 s left" in lines[-1]
            clock.now += 20
            bars.end(step.name, "the device rested 30 s")
        elif step.bytes_to_write is not None:  # size-bound: its bytes at the rate seen
            assert step.bytes_to_write == size and step.expected_s is None
            later = " + prepare + workloads" if step.name != PREPARE_JOB_NAME else " + workloads"
            if step.name == "sustained-write":  # no rate seen yet: the ETA is not guessed
                assert _live_lines(bars, console)[0].endswith("ETA ?" + later)
            else:  # the rate the sustained write ended with, until the preparation shows its own
                lines = _live_lines(bars, console)
                assert _eta_seconds(lines) == pytest.approx(
                    size / (20 * MiB) + timed_after(index), abs=1
                )
            # Half written at 20 MiB/s: the rest takes size/2 / rate, then every timed step.
            bars.update(0.5, "w=20.0MiB/s w=20 IOPS")
            lines = _live_lines(bars, console)
            left = size * 0.5 / (20 * MiB)
            assert _eta_seconds(lines) == pytest.approx(left + timed_after(index), abs=1)
            assert lines[0].endswith(later)
            assert lines[-1].startswith(f"[{number}/{total}] {step.name}")
            assert format_rate(20 * MiB) in lines[-1] and "MiB" not in lines[-1]
            clock.now += 10
            bars.end(step.name, format_rate(20 * MiB))
        elif step.expected_s is not None:
            # fio's early "[eta ...]" is ignored; the ETA is the plan's remaining time.
            clock.now += step.expected_s / 4
            bars.update(0.25, "r=6006KiB/s r=1501 IOPS")
            lines = _live_lines(bars, console)
            assert len(lines) <= 3 < console.height
            running = lines[-1]
            assert running.startswith(f"[{number}/{total}] {step.name}")
            assert format_rate(6006 * 1024) in running and "KiB" not in running
            remaining = timed_after(index) + step.expected_s * 0.75
            assert _eta_seconds(lines) == pytest.approx(remaining, abs=1)
            assert lines[1] == f"{index} done, {total - index - 1} to go"
            clock.now += step.expected_s * 0.75
            bars.end(step.name, f"read {format_rate(6006 * 1024)}")
        else:  # the workloads, last
            assert number == total
            lines = _live_lines(bars, console)
            assert _eta_seconds(lines) == 0 and lines[0].endswith("ETA 0s + workloads")
            assert lines[-1].startswith(f"[{total}/{total}] workloads")
            bars.end(step.name, "pkg-install 1.0 s")
    lines = _live_lines(bars, console)
    assert lines[1] == f"{total} done, 0 to go" and len(lines) == 2
    assert lines[0].endswith("ETA 0s")
    printed = console.export_text()
    assert "KiB" not in printed and "MiB/s" not in printed
    assert printed.count(" MB/s") == total - 2  # every step but the rest and the workloads


def test_the_eta_counts_what_tests_take_beyond_the_plan_and_a_test_run_again():
    # fio's start and the parsing of its log cost each test a little more than its ramp and
    # window; a test whose first window was not enough runs again (flashmark.bench.lengths), and
    # measure() says how long that run is as it starts.
    steps = [s for s in steps_of(_plan("quick")) if s.expected_s is not None]
    assert len(steps) >= 4
    bars, console, clock = _bars(steps)
    total = len(steps)

    def eta() -> float:
        return _eta_seconds(_live_lines(bars, console))

    planned_after = [sum(s.expected_s or 0.0 for s in steps[k + 1 :]) for k in range(total)]
    first = steps[0].expected_s or 0.0
    bars.begin(steps[0].name, 1, total, steps[0].expected_s)
    assert eta() == pytest.approx(planned_after[0] + first, abs=1)  # nothing learnt yet
    clock.now += first + 0.5
    bars.end(steps[0].name, "done")
    # Every test to come costs the same 0.5 s more.
    assert eta() == pytest.approx(planned_after[0] + 0.5 * (total - 1), abs=1)

    second = steps[1].expected_s or 0.0
    bars.begin(steps[1].name, 2, total, second)
    clock.now += second  # its first window: not enough
    bars.update(None, "measuring again for 8 s: read interval +-3.0%", left_s=10.0)
    rest = planned_after[1] + 0.5 * (total - 2)
    assert eta() == pytest.approx(rest + 10.5, abs=1)  # the second run, not the plan's 0 s
    clock.now += 4.0
    bars.update(0.4, "r=6006KiB/s r=1501 IOPS")
    assert eta() == pytest.approx(rest + 6.5, abs=1)
    clock.now += 6.5
    bars.end(steps[1].name, "done")
    # The step run again is not what a test costs beyond its plan: still 0.5 s each.
    assert eta() == pytest.approx(rest, abs=1)

    # A test measured at full length at once says so as it begins: its run's 9 s, not its
    # planned first window, and not both.
    third = steps[2].expected_s or 0.0
    bars.begin(steps[2].name, 3, total, third)
    bars.update(None, "measuring its full length at once for 8 s: ...", left_s=9.0)
    rest = planned_after[2] + 0.5 * (total - 3)
    assert eta() == pytest.approx(rest + 9.5, abs=1)
    clock.now += 9.5
    bars.end(steps[2].name, "done")
    assert eta() == pytest.approx(rest, abs=1)
    # The next step plans from its own length again.
    bars.begin(steps[3].name, 4, total, steps[3].expected_s)
    assert eta() == pytest.approx(
        planned_after[3] + 0.5 * (total - 4) + (steps[3].expected_s or 0) + 0.5, abs=1
    )


def test_running_step_visible_on_a_20_row_terminal_with_the_full_profile():
    """The live region stays at three lines whatever the number of steps."""
    plan = _plan("full")
    steps = steps_of(plan)
    assert len(steps) > 17  # more steps than a 20-row terminal has rows for, one each
    bars, console, _ = _bars(steps)
    last = steps[-1]
    bars.begin(last.name, len(steps), len(steps), last.expected_s)
    lines = _live_lines(bars, console)
    assert len(lines) == 3
    assert lines[-1].startswith(f"[{len(steps)}/{len(steps)}] {last.name}")


def test_live_display_on_a_terminal_and_plain_lines_otherwise(capsys):
    plan = _plan("quick")
    with progress_display(plan) as shown:
        assert isinstance(shown, PlainProgress)  # stderr is captured: not a terminal
    console = Console(file=io.StringIO(), force_terminal=True, width=80, height=20, record=True)
    steps = steps_of(plan)
    with BarProgress(console, steps) as bars:
        first = steps[1]
        bars.begin(first.name, 2, len(steps), first.expected_s)
        bars.update(0.5, "w=3601KiB/s w=900 IOPS")
        bars.end(first.name, "write 3.69 MB/s")
    assert "write 3.69 MB/s" in console.export_text()


def test_a_surface_scan_on_a_terminal_shows_its_bytes_rate_and_eta():
    # `flashmark surface` is no fio step: its own words and time left are shown, and the ETA
    # names the read pass still to come instead of claiming 0 s.
    from flashmark.cli.surface import _PhaseProgress

    bars, console, clock = _bars()
    scan = _PhaseProgress(bars, 2, clock)
    scan("write", 0, 256 * MiB)
    clock.now += 8.0
    scan("write", 64 * MiB, 256 * MiB)  # 8 MiB/s: 24 s left in this pass
    lines = _live_lines(bars, console)
    assert "ETA 24s + read pass" in lines[0]
    assert lines[2].endswith(f"25%  64 MiB of 256 MiB, {format_rate(8 * MiB)}")
    clock.now += 4.0
    assert _eta_seconds(_live_lines(bars, console)) == 20
