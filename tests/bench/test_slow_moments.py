"""The card's slow moments seen in a run's earlier writes (flashmark.bench.slow_moments), and the
interval of a later write test that stops on its verdict reaching down by those it did not
meet (flashmark.bench.results pooled_result), on completion streams whose pauses are known."""

import dataclasses
import json

import pytest

from flashmark.bench.jobs import job_for_test
from flashmark.bench.profiles import RAND_WRITE_4K
from flashmark.bench.results import parse_run, pooled_result
from flashmark.bench.slow_moments import Pauses, SlowMoments, pauses_in
from flashmark.fio.runner import FioOutput
from flashmark.fio.window import Completion
from tests.bench import synthetic

MiB = 2**20
SETTINGS = dataclasses.replace(synthetic.SETTINGS, profile="a1", follow_ramp_s=1, destructive=True)


def writes(spacing_ms, size, until_ms, *, pause_at_ms=(), pause_ms=250.0):
    """A device completing a `size` write every `spacing_ms`, pausing `pause_ms` before the
    first write completing after each of `pause_at_ms`."""
    found, t, pauses = [], spacing_ms, list(pause_at_ms)
    while t <= until_ms:
        if pauses and t >= pauses[0]:
            t += pause_ms
            pauses.pop(0)
        found.append(Completion(float(round(t)), size))
        t += spacing_ms
    return found


def test_a_pause_among_sequential_writes_is_found_and_timed():
    # 1 MiB writes at 10 MB/s (105 ms apart), 250 ms pauses at 2 s and 6 s.
    pauses = pauses_in(writes(105, MiB, 8000, pause_at_ms=(2000, 6000)))
    assert pauses.count == 2
    assert pauses.total_ms == pytest.approx(500, abs=4)
    assert pauses.longest_ms == pytest.approx(250, abs=2)


def test_steady_writes_and_a_hosts_hiccup_are_no_pause():
    assert pauses_in(writes(105, MiB, 8000)).count == 0
    # 4 KiB writes every 2 ms, one 20 ms late: scheduling, not the card.
    hiccup = pauses_in(writes(2, 4096, 3000, pause_at_ms=(1000,), pause_ms=20))
    assert hiccup.count == 0


def test_a_window_that_met_fewer_pauses_than_its_bytes_call_for_has_the_difference():
    # The sequential write: 2 pauses of 250 ms in 80 MiB; one more than seen: 750 ms per 80 MiB.
    slow = SlowMoments().seen(Pauses(80 * MiB, count=2, total_ms=500, longest_ms=250))
    assert slow.unmet_s(Pauses(8 * MiB)) == pytest.approx(0.075)
    assert slow.unmet_s(Pauses(8 * MiB, count=1, total_ms=250, longest_ms=250)) == 0
    assert SlowMoments().unmet_s(Pauses(8 * MiB)) == 0


def run_of(completions, window_s=3):
    """fio's output of a rand-write-4k window whose completions are `completions`, parsed."""
    job = job_for_test(
        RAND_WRITE_4K, SETTINGS, "/dev/card", readonly=False, log_folder="/logs",
        window_s=window_s,
    )  # fmt: skip
    log = "".join(f"{int(c.time_ms)}, 1, 1, {c.bytes}, 0, 0\n" for c in completions)
    runtime_ms = int(completions[-1].time_ms) + 2
    percentiles = ("50.000000", "90.000000", "99.000000", "99.900000", "99.990000")
    lat = {"min": 1, "max": 2, "mean": 1, "stddev": 0, "N": len(completions),
           "percentile": {key: 1 for key in percentiles}}  # fmt: skip
    section = {
        "io_bytes": sum(c.bytes for c in completions),
        "total_ios": len(completions),
        "runtime": runtime_ms,
        "lat_ns": lat,
    }
    document = {"jobs": [{"jobname": job.name, "error": 0, "write": section}]}
    logs = {f"{job.name}_iops.1.log": log}
    output = FioOutput(job.name, ("fio",), 0, json.dumps(document), "", logs, runtime_ms / 1000)
    return parse_run(RAND_WRITE_4K, job, output)


def test_a_write_test_that_stops_on_its_verdict_reaches_down_by_the_pauses_it_missed():
    # 500 writes/s for 3 s (6 MiB), no pause met; the card paused 250 ms every 8 MiB before.
    parsed = run_of(writes(2, 4096, 3002))
    slow = SlowMoments().seen(Pauses(80 * MiB, count=10, total_ms=2500, longest_ms=250))
    alone = pooled_result(RAND_WRITE_4K, [parsed], sequential=True).write
    widened = pooled_result(RAND_WRITE_4K, [parsed], sequential=True, slow=slow).write
    assert alone is not None and widened is not None
    assert alone.iops_ci95 is not None and widened.iops_ci95 is not None
    assert alone.iops_decision is not None and widened.iops_decision is not None
    # 11 pauses of 250 ms per 80 MiB: 206 ms in 6 MiB, so 3 s of writes take 3.206 s.
    unmet = 11 * 250 / (80 * MiB) * (3002 // 2 * 4096) / 1000
    reached = widened.iops * 3 / (3 + unmet)
    assert widened.iops_ci95.low == pytest.approx(reached, rel=2e-3)
    assert widened.iops_decision.low == pytest.approx(reached, rel=2e-3)
    assert widened.iops_ci95.high == alone.iops_ci95.high
    assert alone.iops_ci95.low > reached
    # A test measured for its figure keeps its own interval.
    fixed = pooled_result(RAND_WRITE_4K, [parsed], slow=slow).write
    plain = pooled_result(RAND_WRITE_4K, [parsed]).write
    assert fixed is not None and plain is not None
    assert fixed.iops_ci95 == plain.iops_ci95
