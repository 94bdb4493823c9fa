"""Run <-> the JSON result document "flashmark.result/1" (documented in docs/result-schema.md).

The document is what `run --json` prints, what the history stores, and what exporters read.
Its version history: SCHEMA below.
"""

from __future__ import annotations

from typing import Any

from flashmark.bench.model import (
    BandwidthSeries,
    Check,
    DirectionResult,
    FioInfo,
    Grade,
    HostInfo,
    LatencyNs,
    Partial,
    Passport,
    Pattern,
    Run,
    Settings,
    SubUnitRates,
    SustainedWrite,
    Target,
    TargetKind,
    TestResult,
    TestSpec,
)
from flashmark.errors import ResultFormatError
from flashmark.monitor.series import MonitorSeries
from flashmark.probe.model import ProbeReport
from flashmark.stats import CONFIDENCE, METHOD, MeanInterval, Verdict
from flashmark.workloads.result import WorkloadResult

# `run --json`, the history's benchmarks, every exporter's input (docs/result-schema.md).
#   1: first version. Later additions a 1-reader can ignore: "probe", "findings", "workloads"
#      (run), "workload_scale" (settings), "device_activity" (per test), "fio_runtime_ms"
#      (per direction); "accepted_iops", "accepted_bw_bytes", "fsync_ms", "ci95" (per
#      direction) with exact windows: rates count only the I/O completed in the window, and
#      write headlines became durable rates (the meaning of "iops"/"bw_bytes" is sharper, not
#      different: a 1-reader reads them); "verdict" ("pass" | "fail" | "uncertain" | null)
#      and "verdict_reason" per grade, "verdict" and "interval" per check: a grade whose check's
#      95% interval contains the threshold is "uncertain", never "fail", and its "pass" is false
#      (true only for "pass"). Documents without "verdict" read it from "pass".
#      "passport" (run): the measured SD/eMMC card's passport, or null.
#      "sustained" (per direction): the sustained-write test's {"cache_bytes",
#      "burst_bw_bytes", "sustained_bw_bytes"}, null elsewhere; speed-class checks then read
#      that test's sustained rate (the check's "test" says so). Documents without it read null.
#      Later in "sustained": "written_bytes", "stopped_by" ("steady" | "size limit" |
#      "time limit"), "cache_exceeded" (true | false: no fall-off before a limit, the cache
#      may be larger | null) and "sub_units" (the SD speed-class measurement: slowest and
#      median 4 MiB sub-unit after the cache with the slowest's "min_bw_bounds", longest write
#      busy with its bounds, writes over the 250 ms limit, "method"); speed classes then grade the
#      slowest sub-unit plus a busy check, and a class that would pass on a test that never
#      left the cache is "uncertain". "at_most" per check (true: the value must be at most the
#      threshold, the busy check; margin_pct is then headroom below it); read as false when
#      absent. A 1-reader still reads every check's "pass"/"verdict" right.
SCHEMA = "flashmark.result/1"
_LATENCY_KEYS = {"p50": "p50", "p90": "p90", "p99": "p99", "p99_9": "p99.9", "p99_99": "p99.99"}


def run_to_document(run: Run) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "id": run.id,
        "flashmark_version": run.host.flashmark_version,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "target": _target(run.target),
        "settings": _settings(run.settings),
        "host": {
            "hostname": run.host.hostname,
            "kernel": run.host.kernel,
            "machine": run.host.machine,
            "python": run.host.python,
        },
        "fio": {"version": run.fio.version, "command": list(run.fio.command)},
        "tests": [_test(result) for result in run.tests],
        "tests_skipped": list(run.tests_skipped),
        "grades": {grade.name: _grade(grade) for grade in run.grades},
        "warnings": list(run.warnings),
        "findings": list(run.findings),
        "workloads": [workload.to_dict() for workload in run.workloads],
        "probe": run.probe.to_dict() if run.probe else None,
        "passport": run.passport.to_dict() if run.passport else None,
        "partial": None
        if run.partial is None
        else {
            "failed_step": run.partial.failed_step,
            "error": run.partial.error,
            "exit_status": run.partial.exit_status,
            "not_run": list(run.partial.not_run),
        },
    }


def _target(target: Target) -> dict[str, Any]:
    return {
        "given": target.given,
        "kind": target.kind.value,
        "path": target.path,
        "folder": target.folder,
        "block_device": target.block_device,
        "filesystem": target.filesystem,
        "mount_point": target.mount_point,
        "mount_options": target.mount_options,
        "capacity_bytes": target.capacity_bytes,
    }


def _settings(settings: Settings) -> dict[str, Any]:
    return {
        "profile": settings.profile,
        "size_bytes": settings.size_bytes,
        "runtime_s": settings.runtime_s,
        "ramp_s": settings.ramp_s,
        "follow_ramp_s": settings.follow_ramp_s,
        "direct": settings.direct,
        "destructive": settings.destructive,
        "ioengine": settings.ioengine,
        "workload_scale": settings.workload_scale,
        "first_window_s": settings.first_window_s,
    }


def _test(result: TestResult) -> dict[str, Any]:
    spec = result.spec
    return {
        "name": spec.name,
        "description": spec.description,
        "pattern": spec.pattern.value,
        "block_size_bytes": spec.block_size_bytes,
        "iodepth": spec.iodepth,
        "rwmix_read_pct": spec.rwmix_read_pct,
        "elapsed_s": round(result.elapsed_s, 3),
        "discarded_s": round(result.discarded_s, 3),
        "lengthened": result.lengthened,
        "read": _direction(result.read),
        "write": _direction(result.write),
        "job": result.job_file,
        "device_activity": result.monitor.to_dict() if result.monitor else None,
    }


def _direction(direction: DirectionResult | None) -> dict[str, Any] | None:
    if direction is None:
        return None
    lat = direction.lat_ns
    series = direction.bw_per_second
    return {
        "iops": direction.iops,
        "bw_bytes": direction.bw_bytes,
        "io_bytes": direction.io_bytes,
        "total_ios": direction.total_ios,
        "runtime_ms": direction.runtime_ms,
        "fio_runtime_ms": direction.fio_runtime_ms,
        "accepted_iops": direction.accepted_iops,
        "accepted_bw_bytes": direction.accepted_bw_bytes,
        "fsync_ms": direction.fsync_ms,
        "ci95": _intervals(direction),
        "sustained": _sustained(direction.sustained),
        "lat_ns": {
            "min": lat.min,
            "mean": lat.mean,
            "max": lat.max,
            "stddev": lat.stddev,
            **{key: getattr(lat, field) for field, key in _LATENCY_KEYS.items()},
        },
        "bw_per_second": None
        if series is None
        else {
            "interval_ms": series.interval_ms,
            "min": series.min_bps,
            "max": series.max_bps,
            "mean": series.mean_bps,
            "stddev": series.stddev_bps,
            "samples": list(series.samples_bps),
        },
    }


def _sustained(sustained: SustainedWrite | None) -> dict[str, Any] | None:
    if sustained is None:
        return None
    sub_units = sustained.sub_units
    return {
        "cache_bytes": sustained.cache_bytes,
        "burst_bw_bytes": sustained.burst_bw_bytes,
        "sustained_bw_bytes": sustained.sustained_bw_bytes,
        "written_bytes": sustained.written_bytes,
        "stopped_by": sustained.stopped_by,
        "cache_exceeded": sustained.cache_exceeded,
        "sub_units": None
        if sub_units is None
        else {
            "sub_unit_bytes": sub_units.sub_unit_bytes,
            "from_bytes": sub_units.from_bytes,
            "count": sub_units.count,
            "min_bw_bytes": sub_units.min_bw_bytes,
            "min_bw_bounds": list(sub_units.min_bw_bounds),
            "median_bw_bytes": sub_units.median_bw_bytes,
            "max_busy_ms": sub_units.max_busy_ms,
            "max_busy_bounds": list(sub_units.max_busy_bounds),
            "busy_over_limit": sub_units.busy_over_limit,
            "busy_limit_ms": sub_units.busy_limit_ms,
            "method": sub_units.method,
        },
    }


def _read_sustained(d: dict[str, Any] | None) -> SustainedWrite | None:
    if d is None:
        return None
    units = d.get("sub_units")
    return SustainedWrite(
        cache_bytes=d.get("cache_bytes"),
        burst_bw_bytes=d.get("burst_bw_bytes"),
        sustained_bw_bytes=d["sustained_bw_bytes"],
        written_bytes=d.get("written_bytes"),
        stopped_by=d.get("stopped_by"),
        cache_exceeded=d.get("cache_exceeded"),
        sub_units=None
        if units is None
        else SubUnitRates(
            sub_unit_bytes=units["sub_unit_bytes"],
            from_bytes=units["from_bytes"],
            count=units["count"],
            min_bw_bytes=units["min_bw_bytes"],
            min_bw_bounds=(units["min_bw_bounds"][0], units["min_bw_bounds"][1]),
            median_bw_bytes=units["median_bw_bytes"],
            max_busy_ms=units["max_busy_ms"],
            max_busy_bounds=(units["max_busy_bounds"][0], units["max_busy_bounds"][1]),
            busy_over_limit=units["busy_over_limit"],
            busy_limit_ms=units["busy_limit_ms"],
            method=units.get("method", ""),
        ),
    )


def _intervals(direction: DirectionResult) -> dict[str, Any] | None:
    bw, iops = direction.bw_ci95, direction.iops_ci95
    if bw is None or iops is None:
        return None
    return {
        "bw_bytes": [bw.low, bw.high],
        "iops": [iops.low, iops.high],
        "samples": bw.samples,
        "effective_samples": bw.effective_samples,
        "confidence": bw.confidence,
        "method": bw.method,
    }


def _grade(grade: Grade) -> dict[str, Any]:
    return {
        "title": grade.title,
        "pass": grade.passed,
        "verdict": None if grade.verdict is None else grade.verdict.value,
        "verdict_reason": grade.verdict_reason,
        "note": grade.note,
        "source": grade.source,
        "checks": [
            {
                "name": check.name,
                "test": check.test,
                "metric": check.metric,
                "unit": check.unit,
                "threshold": check.threshold,
                "value": check.value,
                "margin_pct": check.margin_pct,
                "pass": check.passed,
                "verdict": None if check.verdict is None else check.verdict.value,
                "interval": None if check.interval is None else list(check.interval),
                "at_most": check.at_most,
            }
            for check in grade.checks
        ],
    }


# -- reading back ---------------------------------------------------------------------------


def document_to_run(document: dict[str, Any]) -> Run:
    """A saved document back into a Run; loud about documents this version cannot read."""
    if document.get("schema") != SCHEMA:
        raise ResultFormatError(
            f"result document has schema {document.get('schema')!r}; this flashmark reads "
            f"{SCHEMA!r} (upgrade flashmark to read newer results)"
        )
    try:
        return _read_run(document)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ResultFormatError(
            f"result document is malformed ({type(error).__name__}: {error})"
        ) from None


def _read_run(d: dict[str, Any]) -> Run:
    t, s, h = d["target"], d["settings"], d["host"]
    return Run(
        id=d.get("id"),
        started_at=d["started_at"],
        finished_at=d["finished_at"],
        target=Target(
            given=t["given"],
            kind=TargetKind(t["kind"]),
            path=t["path"],
            folder=t["folder"],
            block_device=t["block_device"],
            filesystem=t["filesystem"],
            mount_point=t["mount_point"],
            mount_options=t["mount_options"],
            capacity_bytes=t["capacity_bytes"],
        ),
        settings=Settings(
            profile=s["profile"],
            size_bytes=s["size_bytes"],
            runtime_s=s["runtime_s"],
            ramp_s=s["ramp_s"],
            # Absent from results saved before it: every timed test ramped ramp_s.
            follow_ramp_s=s.get("follow_ramp_s", s["ramp_s"]),
            direct=s["direct"],
            destructive=s["destructive"],
            ioengine=s["ioengine"],
            workload_scale=s.get("workload_scale", 0.0),
            # Absent from results saved before adaptive lengths: every test ran runtime_s.
            first_window_s=s.get("first_window_s"),
        ),
        host=HostInfo(
            hostname=h["hostname"],
            kernel=h["kernel"],
            machine=h["machine"],
            python=h["python"],
            flashmark_version=d["flashmark_version"],
        ),
        fio=FioInfo(version=d["fio"]["version"], command=tuple(d["fio"]["command"])),
        tests=tuple(_read_test(test) for test in d["tests"]),
        grades=tuple(_read_grade(name, grade) for name, grade in d["grades"].items()),
        warnings=tuple(d["warnings"]),
        tests_skipped=tuple(d.get("tests_skipped", ())),
        probe=ProbeReport.from_dict(d["probe"]) if d.get("probe") else None,
        findings=tuple(d.get("findings", ())),
        workloads=tuple(WorkloadResult.from_dict(w) for w in d.get("workloads", ())),
        passport=Passport.from_dict(d["passport"]) if d.get("passport") else None,
        partial=_read_partial(d["partial"]) if d.get("partial") else None,
    )


def _read_partial(d: dict[str, Any]) -> Partial:
    return Partial(
        failed_step=str(d["failed_step"]),
        error=str(d["error"]),
        exit_status=int(d["exit_status"]),
        not_run=tuple(str(name) for name in d.get("not_run", ())),
    )


def _read_test(d: dict[str, Any]) -> TestResult:
    spec = TestSpec(
        name=d["name"],
        pattern=Pattern(d["pattern"]),
        block_size_bytes=d["block_size_bytes"],
        iodepth=d["iodepth"],
        rwmix_read_pct=d["rwmix_read_pct"],
        description=d["description"],
    )
    return TestResult(
        spec=spec,
        read=_read_direction(d["read"]),
        write=_read_direction(d["write"]),
        job_file=d["job"],
        elapsed_s=d["elapsed_s"],
        lengthened=d.get("lengthened"),  # absent before adaptive lengths
        discarded_s=d.get("discarded_s", 0.0),  # absent before 2026-11-24
        monitor=MonitorSeries.from_dict(activity)
        if (activity := d.get("device_activity"))
        else None,
    )


def _read_direction(d: dict[str, Any] | None) -> DirectionResult | None:
    if d is None:
        return None
    lat = d["lat_ns"]
    series = d["bw_per_second"]
    return DirectionResult(
        iops=d["iops"],
        bw_bytes=d["bw_bytes"],
        io_bytes=d["io_bytes"],
        total_ios=d["total_ios"],
        runtime_ms=d["runtime_ms"],
        # Absent from results saved by flashmark 0.1.0 before the field existed.
        fio_runtime_ms=d.get("fio_runtime_ms", d["runtime_ms"]),
        lat_ns=LatencyNs(
            min=lat["min"],
            mean=lat["mean"],
            max=lat["max"],
            stddev=lat["stddev"],
            **{field: lat[key] for field, key in _LATENCY_KEYS.items()},
        ),
        bw_per_second=None
        if series is None
        else BandwidthSeries(
            interval_ms=series["interval_ms"],
            samples_bps=tuple(series["samples"]),
            min_bps=series["min"],
            max_bps=series["max"],
            mean_bps=series["mean"],
            stddev_bps=series["stddev"],
        ),
        # Absent from results saved before exact windows (all four).
        accepted_iops=d.get("accepted_iops"),
        accepted_bw_bytes=d.get("accepted_bw_bytes"),
        fsync_ms=d.get("fsync_ms"),
        bw_ci95=_read_interval(d.get("ci95"), "bw_bytes", d["bw_bytes"]),
        iops_ci95=_read_interval(d.get("ci95"), "iops", d["iops"]),
        # Absent from results saved before the sustained-write test existed.
        sustained=_read_sustained(d.get("sustained")),
    )


def _read_interval(ci: dict[str, Any] | None, key: str, mean: float) -> MeanInterval | None:
    if ci is None:
        return None
    low, high = ci[key]
    return MeanInterval(
        mean=mean,
        low=low,
        high=high,
        samples=ci["samples"],
        effective_samples=ci["effective_samples"],
        confidence=ci.get("confidence", CONFIDENCE),
        method=ci.get("method", METHOD),
    )


def _read_grade(name: str, d: dict[str, Any]) -> Grade:
    checks = tuple(
        Check(
            name=c["name"],
            test=c["test"],
            metric=c["metric"],
            unit=c["unit"],
            threshold=c["threshold"],
            value=c["value"],
            margin_pct=c["margin_pct"],
            passed=c["pass"],
            verdict=_read_verdict(c),
            interval=None if c.get("interval") is None else (c["interval"][0], c["interval"][1]),
            at_most=bool(c.get("at_most", False)),
        )
        for c in d["checks"]
    )
    return Grade(
        name=name,
        title=d["title"],
        source=d["source"],
        checks=checks,
        passed=d["pass"],
        note=d["note"],
        verdict=_read_verdict(d),
        verdict_reason=d.get("verdict_reason", ""),
    )


def _read_verdict(d: dict[str, Any]) -> Verdict | None:
    """A grade's or check's "verdict"; documents saved before it existed derive it from
    "pass" (True: pass, False: fail, null: not graded)."""
    if "verdict" in d:
        if d["verdict"] is None:
            return None
        try:
            return Verdict(d["verdict"])
        except ValueError:
            known = ", ".join(verdict.value for verdict in Verdict)
            raise ResultFormatError(
                f"unknown grade verdict {d['verdict']!r} (known: {known}, or null)"
            ) from None
    passed = d["pass"]
    return None if passed is None else Verdict.PASS if passed else Verdict.FAIL
