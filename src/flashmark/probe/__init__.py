"""`flashmark probe`: which device a target lives on, what it claims, what surrounds it.

from flashmark.probe import probe_target, ProbeReport, claim_findings
report = probe_target("/media/card", SystemRoots.from_environment())
report.to_dict()           # JSON-ready, "schema": "flashmark.probe/1"
report.warnings            # conditions that distort a benchmark
claim_findings(report, grades)
"""

from flashmark.probe.findings import claim_findings, device_summary
from flashmark.probe.model import SCHEMA, ProbeReport
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
    "claim_findings",
    "device_summary",
    "probe_target",
]
