"""The result of `flashmark doctor`: frozen dataclasses and their JSON document, in the one
codec (flashmark.codec).

Schema history ("schema" key):
    flashmark.doctor/1   first version.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flashmark.codec import Codec, document, written
from flashmark.doctor.findings import Finding, MeasuredRate

DOCTOR_SCHEMA = "flashmark.doctor/1"


@dataclass(frozen=True, kw_only=True)
class DoctorResult:
    flashmark_version: str = ""
    target: str  # as given
    device: str  # /dev/NAME of the physical device
    device_kind: str  # the probe's: "sd", "emmc", "nvme", "usb", ...
    board: str | None
    kernel: str | None
    findings: tuple[Finding, ...]  # in CATEGORIES order
    not_checked: tuple[str, ...]  # each check that could not run here, and why
    finished_at: str
    # The latest saved run on the same device, whose figure each cap is held against.
    measured: MeasuredRate | None = field(default=None, metadata=document(omit_none=True))
    id: int | None = field(default=None, metadata=document(omit_none=True))

    @property
    @written(before="flashmark_version")
    def summary(self) -> str:
        """The answer in one line (`doctor_summary`, below)."""
        return doctor_summary(self)


DOCTOR_DOCUMENT = Codec(DoctorResult, DOCTOR_SCHEMA, "doctor")


def doctor_summary(result: DoctorResult) -> str:
    """The answer in one line: each finding's reading, or that none was found."""
    if not result.findings:
        return f"nothing found that holds {result.device} back"
    count = len(result.findings)
    listed = "; ".join(finding.what for finding in result.findings)
    return f"{count} finding{'s' * (count != 1)}: {listed}"
