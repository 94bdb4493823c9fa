"""A doctor's findings as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from flashmark.doctor.result import DOCTOR_DOCUMENT, DoctorResult, doctor_summary
from flashmark.doctor.view import CSV_COLUMNS, doctor_view
from flashmark.result_kind import Listing, ResultKind
from flashmark.views.kind import view_kind
from flashmark.views.model import Part

DOCTOR: ResultKind[DoctorResult] = view_kind(
    name="doctor",
    document=DOCTOR_DOCUMENT,
    view=doctor_view,
    csv_columns=CSV_COLUMNS,
    part=Part(
        "doctor",
        "Doctor",
        "What in the board holds each device back (the link, the bus, the power, the host), "
        "each with the line that fixes it.",
        "diagnosis",
        "doctor",
        "diagnosis",
    ),
    target=lambda result: result.device,
    listing=lambda result: Listing(result.device, doctor_summary(result)),
    summary=doctor_summary,
)
