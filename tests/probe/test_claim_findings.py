"""claim_findings(): claimed classes (SSR) against grades a run measured.

The A2 numbers are seed 002's SanDisk Extreme Pro A2 (4k random 1766 read / 732 write IOPS
on a host without A2 support); the grades are built the way flashmark.bench.grading builds them.
"""

from __future__ import annotations

from flashmark.bench.grading.claims import claim_findings
from flashmark.bench.grading.classes import GRADE_RULES, grade_results
from flashmark.bench.model import Check, DirectionResult, Grade, LatencyNs, TestResult
from flashmark.bench.profiles import SEQ_WRITE
from flashmark.probe.target import probe_target
from flashmark.stats import MeanInterval
from tests.probe.recorded import Scenario


def iops_grade(name: str, read: float, write: float, read_min: float, write_min: float) -> Grade:
    checks = (
        Check("random 4K read", "rand-read-4k", "read_iops", "IOPS", read_min, read,
              (read - read_min) / read_min * 100, read >= read_min),
        Check("random 4K write", "rand-write-4k", "write_iops", "IOPS", write_min, write,
              (write - write_min) / write_min * 100, write >= write_min),
    )  # fmt: skip
    passed = all(c.passed for c in checks)
    return Grade(
        name=name,
        title=f"Application Performance Class {name[1]}",
        source="SD Association",
        checks=checks,
        passed=passed,
    )


def speed_grade(name: str, mb_s: float | None, threshold: float) -> Grade:
    passed = None if mb_s is None else mb_s >= threshold
    margin = None if mb_s is None else (mb_s - threshold) / threshold * 100
    check = Check(
        "sequential write", "seq-write", "write_bw_bytes", "MB/s", threshold, mb_s, margin, passed
    )
    return Grade(name=name, title=name, source="SD Association", checks=(check,), passed=passed)


def seed_002_grades() -> list[Grade]:
    return [
        iops_grade("A1", 1766, 732, 1500, 500),
        iops_grade("A2", 1766, 732, 4000, 2000),
        speed_grade("C10", 50.0, 10),
        speed_grade("U3", 50.0, 30),
        speed_grade("V30", 50.0, 30),
    ]


def test_a2_card_measured_below_a2_on_a_host_without_command_queueing(scenario: Scenario) -> None:
    roots, tools = scenario("rpi5_a2")
    report = probe_target("/", roots, tools)
    findings = claim_findings(report, seed_002_grades())
    assert findings == (
        "claims C10; measured 50.0 MB/s: meets C10",
        "claims U3; measured 50.0 MB/s: meets U3",
        "claims V30; measured 50.0 MB/s: meets V30",
        "claims A2; measured 1766/732 IOPS: meets A1, not A2; this host does not enable "
        "SD command queueing, which A2 needs",
    )


def test_unknown_host_support_is_said_to_be_unknown(scenario: Scenario) -> None:
    roots, _ = scenario("rpi5_a2")
    report = probe_target("/", roots)  # recorded roots: no kernel log
    (a2,) = [f for f in claim_findings(report, seed_002_grades()) if f.startswith("claims A2")]
    assert a2.endswith("whether this host enables SD command queueing (which A2 needs) is unknown")


def test_failed_u3_names_the_lower_grade_met_and_missing_grades(scenario: Scenario) -> None:
    roots, tools = scenario("rpi5_a2")
    report = probe_target("/", roots, tools)
    grades = [
        speed_grade("U1", 18.0, 10),
        speed_grade("U3", 18.0, 30),
        speed_grade("C10", None, 10),
    ]
    findings = claim_findings(report, grades)
    assert "claims U3; measured 18.0 MB/s: meets U1, not U3" in findings
    assert "claims C10; not fully measured (sequential write did not run)" in findings
    assert "claims A2; not graded in this run" in findings


def test_no_claims_without_an_sd_status_register(scenario: Scenario) -> None:
    roots, tools = scenario("rpi4_sd")
    assert claim_findings(probe_target("/", roots, tools), seed_002_grades()) == ()


def test_an_uncertain_claim_is_called_too_close_to_tell_not_a_failure(scenario: Scenario) -> None:
    roots, tools = scenario("rpi5_a2")
    report = probe_target("/", roots, tools)
    grades = grade_results(
        [
            TestResult(
                spec=SEQ_WRITE, read=None, write=_seq_write(30.2e6, 0.5e6), job_file="", elapsed_s=1
            )
        ],
        [rule for rule in GRADE_RULES if rule.name in ("U1", "U3")],
    )
    findings = claim_findings(report, grades)
    assert "claims U3; measured 30.2 MB/s: too close to tell " \
        "(seq-write MB/s 30.20 ± 0.50 straddles 30.00)" in findings  # fmt: skip
    assert not any("not U3" in finding for finding in findings)


def _seq_write(bw: float, half: float) -> DirectionResult:
    return DirectionResult(
        iops=bw / 2**20, bw_bytes=bw, io_bytes=1, total_ios=1, runtime_ms=8000,
        fio_runtime_ms=8000, lat_ns=LatencyNs(1, 2, 3, 1, 2, 2, 3, 3, 3), bw_per_second=None,
        bw_ci95=MeanInterval(mean=bw, low=bw - half, high=bw + half, samples=8,
                             effective_samples=6.0),
    )  # fmt: skip
