"""A benchmark run as saved (`Run`, `Partial`) and its answer in one line (`run_summary`): the
terminal's `verdict:` line and the document's "summary" key. The grades first ("A1 pass, A2
fail (random 4K write 594 IOPS < 2000), C10/U1 pass, U3/V30 fail"), grades on the same figure
with the same verdict sharing an entry; then what could not be judged and why, the write cache,
"SD-class equivalents" for a medium that is not SD or eMMC, and what in the board limits the
figures (a `flashmark doctor` finding whose cap they reach). A run stopped by a failed step
says so first. The run and its line share a module: the line is part of the run's document.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flashmark.bench.grading.classes import GRADE_NAMES, disturbed_tests, sustained_rate
from flashmark.bench.model import (
    TEST_NAME,
    Check,
    DirectionResult,
    FioInfo,
    Grade,
    HostInfo,
    Passport,
    Settings,
    SustainedWrite,
    Target,
    TargetKind,
    TestResult,
)
from flashmark.bench.profiles import TEST_NAMES
from flashmark.codec import document, written
from flashmark.doctor.findings import is_the_limit
from flashmark.doctor.rules import probe_findings
from flashmark.probe.model import ProbeReport
from flashmark.stats import Verdict
from flashmark.units import format_iops, format_rate, format_size
from flashmark.upload_rules import (
    MADE_TEXT,
    TIMESTAMP,
    VERSION,
    Always,
    Fields,
    ListOf,
    MapOf,
    OneOf,
    Withheld,
    upload,
    uploaded,
)
from flashmark.workloads.result import WorkloadResult

# The steps of a run (bench/measure.py): its tests, the preparation, the workloads.
_STEP_NAME = OneOf(*TEST_NAMES, "prepare", "workloads", "the end of the run").or_withheld()


@uploaded
@dataclass(frozen=True)
class Partial:
    """Why a run's result holds only some of its tests: a later step failed (the workloads ran
    out of inodes, the device failed), and the tests measured before it are kept."""

    # The step that failed: a test's name, "prepare", "workloads" (flashmark's own words).
    failed_step: str = field(metadata=upload(_STEP_NAME))
    error: str = field(metadata=upload(Withheld()))  # its one line, which may quote a path
    exit_status: int  # what the command exited with (README "Exit codes")
    # the tests and steps that did not run after it
    not_run: tuple[str, ...] = field(default=(), metadata=upload(ListOf(_STEP_NAME, drop=True)))


@uploaded
@dataclass(frozen=True, kw_only=True)
class Run:
    """One benchmark run: the result document, as saved and as exported (`partial` when a
    step failed after some of its tests were measured)."""

    # the run's id in the history, once saved; not in the document before (as every kind's)
    id: int | None = field(default=None, metadata=upload(None, document(omit_none=True)))
    flashmark_version: str = field(metadata=upload(VERSION.or_withheld()))
    # ISO 8601, UTC. When, not who: the service orders and tells results apart by them.
    started_at: str = field(metadata=upload(TIMESTAMP))
    finished_at: str = field(metadata=upload(TIMESTAMP))
    target: Target
    settings: Settings
    host: HostInfo
    fio: FioInfo
    tests: tuple[TestResult, ...]
    tests_skipped: tuple[str, ...] = field(  # names, with the reason in warnings
        default=(), metadata=upload(ListOf(TEST_NAME, drop=True))
    )
    grades: tuple[Grade, ...] = field(  # by name
        metadata=upload(
            MapOf(OneOf(*GRADE_NAMES), Fields(Grade, skip="name")), document(keyed_by="name")
        )
    )
    # may quote paths, devices, mount sources
    warnings: tuple[str, ...] = field(default=(), metadata=upload(Always(())))
    # Claimed against measured, written from the card's claims and the grades only, e.g.
    # "claims A2; measured ...: ...".
    findings: tuple[str, ...] = field(default=(), metadata=upload(ListOf(MADE_TEXT, drop=True)))
    workloads: tuple[WorkloadResult, ...] = ()  # the profile's real-world workloads, after fio
    probe: ProbeReport | None = None  # the device, its claims and the host, read before the run
    passport: Passport | None = None  # the measured card's passport, when it is an SD/eMMC card
    partial: Partial | None = None  # set when a step failed after tests were measured

    def test(self, name: str) -> TestResult | None:
        return next((t for t in self.tests if t.spec.name == name), None)

    def measured(self, name: str, side: str) -> DirectionResult | None:
        """The "read" or "write" `side` of the test `name`; None where it has none."""
        test = self.test(name)
        return None if test is None else test.direction(side)

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The run's answer in one line (run_summary below), the terminal's verdict."""
        return run_summary(self)


# The media the SD Association's classes are written for: SD cards (SD Physical Layer
# Simplified Specification) and eMMC, which hosts grade against the same A1/A2 figures.
SD_MEDIA = frozenset({"sd", "emmc"})
# Layers of a block-device stack that are a device of their own (flashmark.probe).
_VIRTUAL_LAYERS = ("loop", "device-mapper", "md")
# The probe's kinds (flashmark.probe.model.Device.kind) as a sentence says them; others "a KIND".
_MEDIUM_NAMES = {
    "usb": "a USB",
    "nvme": "an NVMe",
    "sata": "a SATA",
    "scsi": "a SCSI",
    "ufs": "a UFS",
    "md": "an md",
}


def medium_note(run: Run) -> str | None:
    """Why the grades are SD-class equivalents, or None when the device is an SD card or
    eMMC: 'a loop device is not an SD card or eMMC'."""
    probe = run.probe
    device = probe.device if probe is not None else None
    if device is not None and device.kind in SD_MEDIA:
        return None
    if device is not None:
        kind = device.kind
    else:  # no physical device under it (a loop device on a file): the lowest layer says
        layers = [] if probe is None else [layer.kind for layer in probe.layers]
        kind = next((k for k in reversed(layers) if k in _VIRTUAL_LAYERS), "")
    if not kind:
        return "the device's kind is unknown"
    return f"{_MEDIUM_NAMES.get(kind, f'a {kind}')} device is not an SD card or eMMC"


def run_summary(run: Run) -> str:
    """The run's answer in one line (see the module's docstring)."""
    parts: list[str] = []
    if run.partial is not None:
        parts.append(f"partial: {run.partial.failed_step} failed")
    judged = [grade for grade in run.grades if grade.verdict is not None]
    if judged:
        graded = _grades_text(judged, disturbed_tests(run.tests))
        note = medium_note(run)
        parts.append(graded if note is None else f"{graded}; as SD-class equivalents: {note}")
    else:  # no grade to answer with: the read figures it has, then why no grade
        figures = _read_figures(run)
        if figures:
            parts.append(figures)
    not_judged = not_judged_text(run)
    if not_judged is not None:
        parts.append(not_judged)
    sustained = sustained_rate(run.tests)
    if sustained is not None:
        parts.append(_cache_text(sustained))
    limit = limit_text(run)
    if limit is not None:
        parts.append(limit)
    return "; ".join(parts) or "no test measured"


def fastest_sequential(run: Run) -> tuple[float, str] | None:
    """The run's fastest sequential figure in bytes/s and its test's name (seq-read or
    seq-write): what a cap of the board holds back first; None without either test."""
    rates = [
        (measured.bw_bytes, name)
        for name, side in (("seq-read", "read"), ("seq-write", "write"))
        if (measured := run.measured(name, side)) is not None
    ]
    return max(rates) if rates else None


def limit_text(run: Run) -> str | None:
    """'limited by USB link at 480 Mb/s, ... (53.2 MB/s at most; seq-read 46.1 MB/s)': the
    `flashmark doctor` finding whose cap the run's fastest sequential figure comes within 20%
    of (doctor.findings.is_the_limit); None when no finding caps it that closely."""
    probe = run.probe
    device = probe.device if probe is not None else None
    sequential = fastest_sequential(run)
    if probe is None or device is None or sequential is None:
        return None
    fastest, name = sequential
    findings, _ = probe_findings(probe, device)
    limits = [finding for finding in findings if is_the_limit(finding, fastest)]
    if not limits:
        return None
    limit = min(limits, key=lambda finding: finding.cap_bytes_per_second or 0.0)
    cap = format_rate(limit.cap_bytes_per_second or 0.0)
    return f"limited by {limit.what} ({cap} at most; {name} {format_rate(fastest)})"


def _grades_text(grades: Sequence[Grade], disturbed: Mapping[str, str]) -> str:
    """'A1 pass, A2 fail (random 4K write 594 IOPS < 2000), C10/U1 pass': neighbours graded
    on the same figures with the same verdict share one entry. A check of a `disturbed` test
    says what disturbed it ('A1 uncertain (another process wrote 3.1 MB/s to mmcblk0 during
    rand-write-4k)')."""
    texts = [(grade.name, _verdict_text(grade, disturbed)) for grade in grades]
    return ", ".join(
        f"{'/'.join(name for name, _ in same)} {text}"
        for text, same in itertools.groupby(texts, key=lambda named: named[1])
    )


def _verdict_text(grade: Grade, disturbed: Mapping[str, str]) -> str:
    if grade.verdict is Verdict.FAIL:
        failing = [check for check in grade.checks if check.verdict is Verdict.FAIL]
        return f"fail ({'; '.join(_shortfall(check) for check in failing)})"
    if grade.verdict is Verdict.UNCERTAIN:
        close = [check for check in grade.checks if check.verdict is Verdict.UNCERTAIN]
        if close:
            reasons = dict.fromkeys(disturbed.get(c.test) or _too_close(c) for c in close)
            return f"uncertain ({'; '.join(reasons)})"
        if grade.verdict_reason:  # the sustained-write test never left the write cache
            return "uncertain (graded on what may still be the burst: see the write cache)"
    return str(grade.verdict)


def _figure(check: Check) -> str:
    """A check's value as the line shows it: IOPS whole, MB/s to three figures (9.97, 29.9)."""
    value = check.value if check.value is not None else 0.0
    if check.unit == "IOPS" or value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def _too_close(check: Check) -> str:
    """'random 4K read 1501 IOPS, not clearly >= 1500': a check whose 95% interval holds its
    threshold (the grade's table gives the interval)."""
    sign = "<=" if check.at_most else ">="
    return f"{check.name} {_figure(check)} {check.unit}, not clearly {sign} {check.threshold:g}"


def _shortfall(check: Check) -> str:
    """'random 4K write 594 IOPS < 2000': the figure that failed a grade, against its
    threshold."""
    if check.value is None:
        return f"{check.name} not measured"
    sign = ">" if check.at_most else "<"
    return f"{check.name} {_figure(check)} {check.unit} {sign} {check.threshold:g}"


def not_judged_text(run: Run) -> str | None:
    """Which grades were not judged and why (the tests they read did not run: a read-only
    device run, a profile without them); None when every grade was judged."""
    names = [grade.name for grade in run.grades if grade.verdict is None]
    if not names:
        return None
    everything = len(names) == len(run.grades)
    missing = sorted(
        {
            check.test
            for grade in run.grades
            if grade.name in names
            for check in grade.checks
            if check.value is None
        }
    )
    read_only = run.target.kind is TargetKind.DEVICE and not run.settings.destructive
    which = "no grade judged" if everything else f"{', '.join(names)} not judged"
    if read_only:
        return f"{which}: read-only, and each needs a write test (--destructive runs them)"
    if not missing:
        return which
    why = (
        "the run stopped before them"
        if run.partial is not None
        else f"not in the {run.settings.profile} profile"
    )
    return f"{which}: {', '.join(missing)} did not run ({why})"


def _cache_text(sustained: SustainedWrite) -> str:
    rate = format_rate(sustained.sustained_bw_bytes)
    if sustained.cache_bytes is not None and sustained.burst_bw_bytes is not None:
        return (
            f"write cache {format_size(sustained.cache_bytes)} at "
            f"{format_rate(sustained.burst_bw_bytes)}, then {rate}"
        )
    if sustained.cache_exceeded is False:
        written = "" if sustained.written_bytes is None else format_size(sustained.written_bytes)
        return (
            f"write speed never dropped in {written or 'what was written'} ({rate} throughout): "
            "the cache may be larger, and that the burst rate"
        )
    return f"no write cache found: {rate} throughout"


def _read_figures(run: Run) -> str:
    """The run's read headlines, for a run that judged no grade: 'reads 50.0 MB/s, random 4K
    reads 5706 IOPS'."""
    parts = []
    if (sequential := run.measured("seq-read", "read")) is not None:
        parts.append(f"reads {format_rate(sequential.bw_bytes)}")
    if (random := run.measured("rand-read-4k", "read")) is not None:
        parts.append(f"random 4K reads {format_iops(random.iops)} IOPS")
    return ", ".join(parts)
