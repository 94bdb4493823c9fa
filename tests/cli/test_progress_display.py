"""The live progress display driven by a recorded sequence of events (no fio): one unit
(units.format_rate), an ETA from the plan, and a bounded height that keeps the running step."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from flashmark.bench.jobs import PREPARE_JOB_NAME
from flashmark.bench.model import Target, TargetKind
from flashmark.bench.plan import default_settings, plan_tests
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
    target = Target(
        given="/mnt/card",
        kind=TargetKind.FILE,
        path="/mnt/card/flashmark.test",
        folder="/mnt/card",
        block_device=None,
        filesystem="ext4",
        mount_point="/mnt/card",
        mount_options=None,
        capacity_bytes=None,
        test_file=".flashmark-test",
    )
    return plan_tests(profile, settings, target, log_folder="/tmp/logs")


def _console() -> Console:
    return Console(record=True, width=80, height=20, file=io.StringIO(), force_terminal=False)


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
    assert steps[0].name == PREPARE_JOB_NAME
    total = len(steps)
    clock = Clock()
    console = _console()
    bars = BarProgress(console, steps, clock, live=False)
    tests_s = sum(s.expected_s or 0.0 for s in steps)
    assert tests_s == pytest.approx(plan.expected_seconds())

    # Preparation: no write rate seen yet -> the ETA is not guessed.
    bars.begin(PREPARE_JOB_NAME, 1, total, None)
    untimed = " + sustained-write + workloads"  # both stop on what they measure, not a clock
    assert _live_lines(bars, console)[0].endswith("ETA ?" + untimed)
    # Half written at 20 MiB/s: the rest takes size/2 / rate, then every test.
    bars.update(0.5, "w=20.0MiB/s w=20 IOPS")
    lines = _live_lines(bars, console)
    prepare_left = plan.settings.size_bytes * 0.5 / (20 * MiB)
    assert _eta_seconds(lines) == pytest.approx(prepare_left + tests_s, abs=1)
    assert lines[-1].startswith(f"[1/{total}] {PREPARE_JOB_NAME}")
    assert format_rate(20 * MiB) in lines[-1] and "MiB" not in lines[-1]
    clock.now += 10
    bars.end(PREPARE_JOB_NAME, format_rate(20 * MiB))

    # The tests: fio's early "[eta ...]" is ignored; the ETA is the plan's remaining time.
    tests = steps[1:-1]
    assert steps[-1].name.startswith("workloads") and steps[-1].expected_s is None
    assert [s.name for s in tests if s.expected_s is None] == ["sustained-write"]
    for index, step in enumerate(tests):
        number = index + 2
        if step.expected_s is None:  # sustained-write: the ETA leaves it out and names it
            bars.begin(step.name, number, total, None)
            lines = _live_lines(bars, console)
            remaining = sum(s.expected_s or 0.0 for s in tests[index + 1 :])
            assert _eta_seconds(lines) == pytest.approx(remaining, abs=1)
            assert lines[0].endswith(untimed)
            assert lines[-1].startswith(f"[{number}/{total}] sustained-write")
            bars.end(step.name, "write 10.0 MB/s")
            continue
        bars.begin(step.name, number, total, step.expected_s)
        clock.now += step.expected_s / 4
        bars.update(0.25, "r=6006KiB/s r=1501 IOPS")
        lines = _live_lines(bars, console)
        assert len(lines) <= 3 < console.height
        running = lines[-1]
        assert running.startswith(f"[{number}/{total}] {step.name}")
        assert format_rate(6006 * 1024) in running and "KiB" not in running
        remaining = sum(s.expected_s or 0.0 for s in tests[index + 1 :]) + step.expected_s * 0.75
        assert _eta_seconds(lines) == pytest.approx(remaining, abs=1)
        assert lines[1] == f"{index + 1} done, {total - index - 2} to go"
        clock.now += step.expected_s * 0.75
        bars.end(step.name, f"read {format_rate(6006 * 1024)}")
    lines = _live_lines(bars, console)
    assert lines[1] == f"{total - 1} done, 1 to go"
    assert _eta_seconds(lines) == 0  # the plan knows no length for the workloads
    assert lines[0].endswith("ETA 0s + workloads")
    bars.begin(steps[-1].name, total, total, None)
    assert _live_lines(bars, console)[-1].startswith(f"[{total}/{total}] workloads")
    bars.end(steps[-1].name, "pkg-install 1.0 s")
    lines = _live_lines(bars, console)
    assert lines[1] == f"{total} done, 0 to go" and len(lines) == 2
    assert lines[0].endswith("ETA 0s")
    printed = console.export_text()
    assert "KiB" not in printed and "MiB/s" not in printed
    assert printed.count(" MB/s") == total - 1


def test_the_eta_counts_what_tests_take_beyond_the_plan_and_a_test_run_again():
    # fio's start and the parsing of its log cost each test a little more than its ramp and
    # window; a test whose first window was not enough runs again (flashmark.bench.lengths), and
    # measure() says how long that run is as it starts.
    steps = [s for s in steps_of(_plan("quick")) if s.expected_s is not None]
    assert len(steps) >= 4
    clock, console = Clock(), _console()
    bars = BarProgress(console, steps, clock, live=False)
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
    console = _console()
    bars = BarProgress(console, steps, Clock(), live=False)
    last = steps[-1]
    bars.begin(last.name, len(steps), len(steps), last.expected_s)
    lines = _live_lines(bars, console)
    assert len(lines) == 3
    assert lines[-1].startswith(f"[{len(steps)}/{len(steps)}] {last.name}")


def test_live_display_on_a_terminal_and_plain_lines_otherwise(capsys):
    with progress_display(_plan("quick")) as shown:
        assert isinstance(shown, PlainProgress)  # stderr is captured: not a terminal
    console = Console(file=io.StringIO(), force_terminal=True, width=80, height=20, record=True)
    plan = _plan("quick")
    with BarProgress(console, steps_of(plan)) as bars:
        first = steps_of(plan)[1]
        bars.begin(first.name, 2, len(steps_of(plan)), first.expected_s)
        bars.update(0.5, "w=3601KiB/s w=900 IOPS")
        bars.end(first.name, "write 3.69 MB/s")
    assert "write 3.69 MB/s" in console.export_text()


def test_a_surface_scan_on_a_terminal_shows_its_bytes_rate_and_eta():
    # `flashmark surface` is no fio step: its own words and time left are shown, and the ETA
    # names the read pass still to come instead of claiming 0 s.
    from flashmark.cli.surface import _PhaseProgress

    clock, console = Clock(), _console()
    bars = BarProgress(console, clock=clock, live=False)
    scan = _PhaseProgress(bars, 2, clock)
    scan("write", 0, 256 * MiB)
    clock.now += 8.0
    scan("write", 64 * MiB, 256 * MiB)  # 8 MiB/s: 24 s left in this pass
    lines = _live_lines(bars, console)
    assert "ETA 24s + read pass" in lines[0]
    assert lines[2].endswith(f"25%  64 MiB of 256 MiB, {format_rate(8 * MiB)}")
    clock.now += 4.0
    assert _eta_seconds(_live_lines(bars, console)) == 20
