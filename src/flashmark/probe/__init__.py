"""`flashmark probe`: which device a target lives on, what it claims, what surrounds it.

from flashmark.probe.target import probe_target
report = probe_target("/media/card", SystemRoots.from_environment())
codec.encode(report)       # JSON-ready, "schema": "flashmark.probe/1"
device_summary(device)     # one line naming a device
flashmark.bench.grading (conditions.py, claims.py) judges a report:
    judge_probe(report).warnings, claim_findings(report, grades)
"""
