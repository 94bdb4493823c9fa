"""fio's output of a test read as `flashmark run` reads it (flashmark.bench.results: one run
with `parse_run`, the runs of a test pooled with `pooled_result`), for the tests that start from
recorded or freshly run fio output."""

from __future__ import annotations

from collections.abc import Sequence

from flashmark.bench.model import TestResult, TestSpec
from flashmark.bench.results import parse_run, pooled_result
from flashmark.fio.job import FioJob
from flashmark.fio.runner import FioOutput


def parse_test_output(spec: TestSpec, job: FioJob, output: FioOutput) -> TestResult:
    """The result of one test, or a typed error if fio failed."""
    return pooled_result(spec, [parse_run(spec, job, output)])


def parse_extended_output(
    spec: TestSpec, runs: Sequence[tuple[FioJob, FioOutput]], *, sequential: bool = False
) -> TestResult:
    """The result of one test measured over the windows of one or more runs in a row (a first
    window extended, flashmark.bench.lengths), pooled; or a typed error if fio failed in any."""
    return pooled_result(
        spec, [parse_run(spec, job, output) for job, output in runs], sequential=sequential
    )
