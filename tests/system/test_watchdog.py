"""The watchdog's bound and its judgement of progress, on a clock and counters of the test's."""

from __future__ import annotations

import pytest

from flashmark.fio.runner import _moving
from flashmark.system.diskstats import DiskCounters
from flashmark.system.watchdog import DeviceHung, StallWatch, Watchdog

MiB = 2**20


def counters(completed: int, in_flight: int) -> DiskCounters:
    return DiskCounters(7, 0, "loop0", 17, completed, 0, 0, 0, in_flight=in_flight)


def test_the_bound_is_the_floor_the_request_at_half_a_megabyte_or_ten_slowest_requests():
    watchdog = Watchdog(30.0)
    assert watchdog.bound(4096).seconds == 30.0
    big = watchdog.bound(64 * MiB)  # a 64 MiB surface block on a slow card
    assert big.seconds == pytest.approx(64 * MiB / 500_000)
    assert "64 MiB request at 0.5 MB/s" in big.reason
    watchdog.saw_latency(4.5)  # a garbage collection stall
    assert watchdog.bound(4096).seconds == pytest.approx(45.0)
    assert "10 x 4.5 s, the slowest request seen" in watchdog.bound(4096).reason
    watchdog.saw_latency(0.1)  # faster ones do not lower it
    assert watchdog.bound(4096).seconds == pytest.approx(45.0)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_completion_with_requests_in_flight_for_longer_than_the_bound_is_a_hang():
    clock, state = Clock(), {"line": counters(10, 1)}
    watch = StallWatch(
        Watchdog(3.0).bound(4096), "/dev/sdz (seq-read)", lambda: state["line"], clock
    )
    watch.check()
    clock.now += 2.9
    watch.check()  # within the bound
    state["line"] = counters(11, 1)  # one completed: the clock starts again
    clock.now += 2.9
    watch.check()
    clock.now += 2.9
    watch.check()
    clock.now += 0.6  # the counters are read every 0.5 s at most
    with pytest.raises(DeviceHung, match=r"/dev/sdz \(seq-read\): the device stopped answering"):
        watch.check()


def test_an_idle_device_is_not_hung_and_fio_rates_count_without_diskstats():
    clock, state = Clock(), {"line": counters(10, 0)}
    watch = StallWatch(Watchdog(3.0).bound(4096), "x", lambda: state["line"], clock)
    watch.check()
    clock.now += 60  # nothing in flight: fio busy elsewhere, the device idle
    watch.check()
    blind = StallWatch(Watchdog(3.0).bound(4096), "x", None, clock)  # no diskstats line
    blind.check()
    clock.now += 2
    blind.moved()  # fio's status line showed a rate
    blind.check()
    clock.now += 2.5
    blind.check()
    clock.now += 1
    with pytest.raises(DeviceHung):
        blind.check()


@pytest.mark.parametrize(
    ("status", "moving"),
    [
        ("r=6006KiB/s r=1501 IOPS", True),
        ("w=0KiB/s w=0 IOPS", False),
        ("r=0KiB/s,w=12.0MiB/s r=0,w=12 IOPS", True),
        ("r=15.0k IOPS", True),
        ("", False),
    ],
)
def test_a_status_line_moves_when_it_shows_a_rate(status, moving):
    assert _moving(status) is moving
