"""A doctor's findings as a kind of result (flashmark.kinds)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from flashmark.doctor.result import DOCTOR_DOCUMENT, DOCTOR_SCHEMA, DoctorResult
from flashmark.doctor.view import CSV_COLUMNS, doctor_summary, doctor_view
from flashmark.result_kind import HtmlSection, Listing, ResultKind
from flashmark.views.writers import ViewWriters

if TYPE_CHECKING:
    from flashmark.references.records import ReferenceDevice

_WRITERS = ViewWriters(doctor_view, CSV_COLUMNS)


def _html(results: Sequence[DoctorResult], references: Sequence[ReferenceDevice]) -> HtmlSection:
    from flashmark.views.html import Part, Shown, views_section

    intro = (
        "What in the board holds each device back (the link, the bus, the power, the host), "
        "each with the line that fixes it."
    )
    part = Part("doctor", "Doctor", intro, "diagnosis", "doctor", "diagnosis")
    return views_section(part, [Shown(doctor_view(r), r.id, r.device) for r in results])


DOCTOR: ResultKind[DoctorResult] = ResultKind(
    name="doctor",
    schema=DOCTOR_SCHEMA,
    to_document=DOCTOR_DOCUMENT.write,
    from_document=DOCTOR_DOCUMENT.read,
    listing=lambda result: Listing(result.device, doctor_summary(result)),
    terminal=_WRITERS.terminal,
    summary=doctor_summary,
    markdown=_WRITERS.markdown,
    csv=_WRITERS.csv,
    html=_html,
)
