"""Everything that judges a run: class grades, claimed vs measured findings, and the warnings about
conditions that distort a measurement. Pure functions of measured results and probe reports.

    classes.py     results -> A1/A2 and speed-class grades (value, threshold, margin, source)
    claims.py      probe claims + grades -> "claims A2; measured ...: meets A1, not A2"
    conditions.py  probe -> warnings (governor, throttling, busy device, worn or slow links)
"""

from flashmark.bench.grading.claims import claim_findings
from flashmark.bench.grading.classes import (
    GRADE_NAMES,
    GRADE_RULES,
    CheckRule,
    GradeRule,
    grade_results,
    graded_tests,
    undecided,
    unmet_requirements,
)
from flashmark.bench.grading.conditions import (
    device_warnings,
    environment_warnings,
    judge_probe,
    report_warnings,
)

__all__ = [
    "GRADE_NAMES",
    "GRADE_RULES",
    "CheckRule",
    "GradeRule",
    "claim_findings",
    "device_warnings",
    "environment_warnings",
    "grade_results",
    "graded_tests",
    "judge_probe",
    "report_warnings",
    "undecided",
    "unmet_requirements",
]
