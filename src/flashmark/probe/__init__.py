"""`flashmark probe`: which device a target lives on, what it claims, what surrounds it.

from flashmark.probe import probe_target, ProbeReport
report = probe_target("/media/card", SystemRoots.from_environment())
codec.encode(report)       # JSON-ready, "schema": "flashmark.probe/1"
device_summary(device)     # one line naming a device
flashmark.bench.grading judges a report:
    judge_probe(report).warnings, claim_findings(report, grades)
"""

from flashmark.probe.model import SCHEMA, ProbeReport
from flashmark.probe.summary import device_summary, measured_summary
from flashmark.probe.target import probe_target
from flashmark.probe.tools import (
    NoToolRunner,
    SubprocessToolRunner,
    ToolFailed,
    ToolNotAvailable,
    ToolResult,
    ToolRunner,
)

__all__ = [
    "SCHEMA",
    "NoToolRunner",
    "ProbeReport",
    "SubprocessToolRunner",
    "ToolFailed",
    "ToolNotAvailable",
    "ToolResult",
    "ToolRunner",
    "device_summary",
    "measured_summary",
    "probe_target",
]
